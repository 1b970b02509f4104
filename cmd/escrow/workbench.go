package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/escrowkit/escrow-go/escrowtest"
)

// The emulator's workbench from the command line: a transaction driven to a state, an
// event delivered again, the request log, and the whole state exported and imported.

// idAnd checks for a transaction id and one more argument, named what, and stores both.
func idAnd(what string, id *int64, arg *string) func([]string) error {
	return func(positional []string) (err error) {
		if err = want("a transaction id", what)(positional); err == nil {
			*id, err = parseID("transaction id", positional[0])
			*arg = positional[1]
		}
		return err
	}
}

// oneFile checks for one argument, a file, and stores it.
func oneFile(file *string) func([]string) error {
	return func(positional []string) error {
		err := want("a file")(positional)
		if err == nil {
			*file = positional[0]
		}
		return err
	}
}

// runEmulatorReach is "escrow emulator reach ID STATE".
func runEmulatorReach(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	const name = "escrow emulator reach"
	var id int64
	var state string
	return controlCommand(ctx, name, name+" ID STATE\n\nSTATE is one of "+strings.Join(escrowtest.ReachableStates, ", "), args, stdout, stderr, nil,
		idAnd("a state", &id, &state),
		func(ctx context.Context, c *escrowtest.ControlClient) (any, func(io.Writer), error) {
			p, err := c.Reach(ctx, id, state)
			return p, func(w io.Writer) {
				fmt.Fprintf(w, "transaction %d reached %s\n", id, state)
				printProgress(w, p)
			}, err
		})
}

// runEmulatorTrigger is "escrow emulator trigger ID EVENT".
func runEmulatorTrigger(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	const name = "escrow emulator trigger"
	var id int64
	var event string
	return controlCommand(ctx, name, name+" ID EVENT\n\nEVENT is one the transaction had (its timeline lists them): it goes again to its parties' webhooks", args, stdout, stderr, nil,
		idAnd("an event", &id, &event),
		func(ctx context.Context, c *escrowtest.ControlClient) (any, func(io.Writer), error) {
			err := c.Trigger(ctx, id, event)
			return okAnswer, func(w io.Writer) {
				fmt.Fprintf(w, "%s of transaction %d queued again for its parties' webhooks; 'escrow emulator deliveries --flush' shows the calls\n", event, id)
			}, err
		})
}

// followEvery is how often requests --follow asks for new requests.
const followEvery = 500 * time.Millisecond

// runEmulatorRequests is "escrow emulator requests [--follow]": the request log.
func runEmulatorRequests(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	const name = "escrow emulator requests"
	var q escrowtest.RequestQuery
	var follow, bodies bool
	fs := newFlagSet(name, withFlags(name+" [--account a] [--path p] [--status 404|4xx|dropped] [--limit n] [--bodies] [--follow]", "[--base-url URL] [--ca-cert file] [--json]"), stderr)
	var cf controlFlags
	cf.register(fs)
	fs.StringVar(&q.Account, "account", "", "only the calls of a caller whose address (or As-Customer) holds `text`")
	fs.StringVar(&q.Path, "path", "", "only the calls whose path holds `text`")
	fs.StringVar(&q.Status, "status", "", "only the calls answered `status`: 404, a class such as 4xx, or dropped")
	fs.IntVar(&q.Limit, "limit", 0, "the newest `n` calls (default 100)")
	fs.BoolVar(&bodies, "bodies", false, "print the request and response bodies (credentials removed)")
	fs.BoolVar(&follow, "follow", false, "keep printing calls as they arrive, until interrupted")
	if code, ok := parseNone(fs, name, args, stderr); !ok {
		return code
	}
	c, release, err := cf.connect()
	if err != nil {
		return exitCode(stderr, name, err)
	}
	defer release()
	print := func(rs []escrowtest.Request) error {
		if cf.json {
			for _, r := range rs {
				if err := writeJSON(stdout, r); err != nil {
					return err
				}
			}
			return nil
		}
		printRequests(stdout, rs, bodies)
		return nil
	}
	for {
		rs, err := c.Requests(ctx, q)
		if err == nil {
			err = print(rs)
		}
		if err != nil || !follow {
			return exitCode(stderr, name, err)
		}
		if len(rs) > 0 {
			q.After, q.Limit = rs[len(rs)-1].Seq, 0
		}
		select {
		case <-ctx.Done():
			return 0 // interrupting is how --follow ends
		case <-time.After(followEvery):
		}
	}
}

// printRequests prints one line per request, and its bodies with bodies.
func printRequests(w io.Writer, rs []escrowtest.Request, bodies bool) {
	for _, r := range rs {
		status := strconv.Itoa(r.Status)
		if r.Status == 0 {
			status = "dropped"
		}
		who := orDash(r.Account)
		if r.AsCustomer != "" {
			who += " as " + r.AsCustomer
		}
		line := fmt.Sprintf("%d  %s  %s %s  %s  %s  %d ms", r.Seq, r.Time.UTC().Format("2006-01-02 15:04:05"), r.Method, r.Path, status, who, r.LatencyMS)
		if r.Fault != "" {
			line += "  fault: " + r.Fault
		}
		fmt.Fprintln(w, line)
		if bodies {
			for _, b := range [][2]string{{">", r.RequestBody}, {"<", r.ResponseBody}} {
				if b[1] != "" {
					fmt.Fprintf(w, "    %s %s\n", b[0], strings.TrimSpace(b[1]))
				}
			}
		}
	}
}

// runEmulatorExport is "escrow emulator export FILE": the whole state, to a file only its
// owner reads (it holds key hashes and webhook secrets).
func runEmulatorExport(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	const name = "escrow emulator export"
	var file string
	return controlCommand(ctx, name, name+" FILE", args, stdout, stderr, nil, oneFile(&file),
		func(ctx context.Context, c *escrowtest.ControlClient) (any, func(io.Writer), error) {
			err := writeFileAtomic(file, func(w io.Writer) error { return c.Export(ctx, w) })
			return okAnswer, func(w io.Writer) {
				fmt.Fprintf(w, "the emulator's state is in %s (readable by you only: it holds key hashes and webhook secrets)\n", file)
			}, err
		})
}

// runEmulatorImport is "escrow emulator import FILE": the state a file holds replaces the
// emulator's.
func runEmulatorImport(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	const name = "escrow emulator import"
	var file string
	return controlCommand(ctx, name, name+" FILE", args, stdout, stderr, nil, oneFile(&file),
		func(ctx context.Context, c *escrowtest.ControlClient) (any, func(io.Writer), error) {
			f, err := os.Open(file)
			if err != nil {
				return nil, nil, err
			}
			defer f.Close()
			err = c.Import(ctx, f)
			return okAnswer, func(w io.Writer) { fmt.Fprintf(w, "the emulator's state is now %s's\n", file) }, err
		})
}

// loadState restores the emulator from file when it exists; a missing file is a first
// start. A file that is there but refused stops the start, so that the state it holds is
// not overwritten on the way out.
func loadState(emu *escrowtest.Emulator, file string) (loaded bool, err error) {
	f, err := os.Open(file)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("--state: %w", err)
	}
	defer f.Close()
	if err := emu.Restore(f); err != nil {
		return false, fmt.Errorf("--state %s: %w (move the file away to start afresh)", file, err)
	}
	return true, nil
}

// writeFileAtomic writes a file whole under another name in the same directory, then
// renames it: a kill mid-write leaves the last good file, a reader never finds half of
// it, and the new file is the owner's only (0600, from CreateTemp), whatever an older one
// was and whatever the umask.
func writeFileAtomic(file string, write func(w io.Writer) error) error {
	tmp, err := os.CreateTemp(filepath.Dir(file), "."+filepath.Base(file)+"-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // a no-op once renamed
	if err := write(tmp); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), file)
}

// runEmulatorFaults is "escrow emulator faults [--remove ID]": the faults standing, or one
// removed.
func runEmulatorFaults(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	const name = "escrow emulator faults"
	var remove int64
	return controlCommand(ctx, name, name+" [--remove ID]", args, stdout, stderr,
		func(fs *flag.FlagSet) {
			fs.Int64Var(&remove, "remove", 0, "remove the fault with this `id` (the list shows them)")
		},
		want(),
		func(ctx context.Context, c *escrowtest.ControlClient) (any, func(io.Writer), error) {
			if remove != 0 {
				err := c.RemoveFault(ctx, remove)
				return okAnswer, func(w io.Writer) { fmt.Fprintf(w, "fault %d removed\n", remove) }, err
			}
			faults, err := c.Faults(ctx)
			return map[string][]escrowtest.ActiveFault{"faults": faults}, func(w io.Writer) {
				tw := newTable(w)
				fmt.Fprintln(tw, "ID\tENDPOINT\tEFFECT\tPROBABILITY")
				for _, f := range faults {
					p := "always"
					if f.Probability != 0 {
						p = strconv.FormatFloat(f.Probability, 'g', -1, 64)
					}
					fmt.Fprintf(tw, "%d\t%s\t%s\t%s\n", f.ID, f.Endpoint, escrowtest.FaultEffect(f.Fault), p)
				}
				tw.Flush()
				fmt.Fprintln(w, plural(len(faults), "fault", "faults"))
			}, err
		})
}

// runEmulatorAccounts is "escrow emulator accounts": who has an account, partners, keys by
// their last four characters and webhooks masked.
func runEmulatorAccounts(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	const name = "escrow emulator accounts"
	var limit int
	return controlCommand(ctx, name, name+" [--limit n]", args, stdout, stderr,
		func(fs *flag.FlagSet) {
			fs.IntVar(&limit, "limit", 0, "the newest `n` accounts (default 200)")
		},
		want(),
		func(ctx context.Context, c *escrowtest.ControlClient) (any, func(io.Writer), error) {
			accounts, total, err := c.Accounts(ctx, limit)
			return map[string]any{"total": total, "accounts": accounts}, func(w io.Writer) {
				tw := newTable(w)
				fmt.Fprintln(tw, "ID\tE-MAIL\tPARTNER\tKEYS\tWEBHOOKS")
				for _, a := range accounts {
					var keys, hooks []string
					for _, k := range a.Keys {
						if k.Active {
							keys = append(keys, "…"+k.LastFour)
						}
					}
					for _, h := range a.Webhooks {
						hooks = append(hooks, h.URL)
					}
					fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\n", a.ID, a.Email, yesNo(a.Partner), orDash(strings.Join(keys, " ")), orDash(strings.Join(hooks, " ")))
				}
				tw.Flush()
				fmt.Fprintf(w, "%d of %s\n", len(accounts), plural(total, "account", "accounts"))
			}, err
		})
}

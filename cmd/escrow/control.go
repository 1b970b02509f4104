package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	escrow "github.com/escrowkit/escrow-go"
	"github.com/escrowkit/escrow-go/escrowtest"
)

// The control subcommands of "escrow emulator" drive an emulator that "escrow emulator"
// serves, through its control API below /_emulator/ (escrowtest's package documentation
// lists the endpoints). They find it as the API commands do, with --base-url or
// ESCROW_BASE_URL, and need no credentials: the control API answers loopback clients
// without authentication.

// controlFlags are the flags of every control subcommand: which emulator, and how to print.
type controlFlags struct {
	baseURL string
	caCert  string
	json    bool
}

// register adds the flags to fs.
func (f *controlFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.baseURL, "base-url", "", "the emulator's API base `URL`, as 'escrow emulator' prints it (default $"+envBaseURL+")")
	fs.StringVar(&f.caCert, "ca-cert", "", "trust the emulator's certificate in `file` (default $"+envCACert+")")
	fs.BoolVar(&f.json, "json", false, "print the control API's answer as JSON")
}

// connect returns a client for the emulator the flags or the environment name. release
// closes its idle connections.
func (f *controlFlags) connect() (c *escrowtest.ControlClient, release func(), err error) {
	base, caCert := orEnv(f.baseURL, envBaseURL), orEnv(f.caCert, envCACert)
	if base == "" {
		return nil, nil, usagef("which emulator? pass --base-url or set %s to the URL 'escrow emulator' prints", envBaseURL)
	}
	u, err := url.Parse(base)
	if err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") {
		return nil, nil, usagef("--base-url %q is not an http or https URL: pass the URL 'escrow emulator' prints, such as https://127.0.0.1:8443/2017-09-01/", base)
	}
	transport, err := newTransport(caCert)
	if err != nil {
		return nil, nil, err
	}
	c, err = escrowtest.NewControlClient(base, &http.Client{Transport: transport, Timeout: time.Minute})
	if err != nil {
		return nil, nil, err
	}
	return c, transport.CloseIdleConnections, nil
}

// okAnswer is what --json prints for the control endpoints that report nothing but
// success: their answer, {"ok": true}.
var okAnswer = map[string]bool{"ok": true}

// controlCommand runs a control subcommand: it parses the flags, checks the positional
// arguments with check, connects, and runs do, whose answer is printed as JSON with
// --json and by human otherwise.
func controlCommand(ctx context.Context, name, synopsis string, args []string, stdout, stderr io.Writer,
	flags func(fs *flag.FlagSet), check func(positional []string) error,
	do func(ctx context.Context, c *escrowtest.ControlClient) (answer any, human func(w io.Writer), err error)) int {
	fs := newFlagSet(name, withFlags(synopsis, "[--base-url URL] [--ca-cert file] [--json]"), stderr)
	var cf controlFlags
	cf.register(fs)
	if flags != nil {
		flags(fs)
	}
	_, code, ok := parseChecked(fs, name, args, check, stderr)
	if !ok {
		return code
	}
	c, release, err := cf.connect()
	if err != nil {
		return exitCode(stderr, name, err)
	}
	defer release()
	answer, human, err := do(ctx, c)
	if err != nil {
		return exitCode(stderr, name, err)
	}
	if cf.json {
		return exitCode(stderr, name, writeJSON(stdout, answer))
	}
	human(stdout)
	return 0
}

// want checks that there are exactly n positional arguments, named by what.
func want(what ...string) func([]string) error {
	return func(positional []string) error {
		if len(what) == 0 && len(positional) > 0 {
			return usagef("unexpected argument %q", positional[0])
		}
		if len(positional) != len(what) {
			return usagef("want %s, got %s", strings.Join(what, " and "), plural(len(positional), "argument", "arguments"))
		}
		return nil
	}
}

// runEmulatorApprove is "escrow emulator approve ID": the buyer's funds arrive.
func runEmulatorApprove(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return runEmulatorPayment(ctx, "approve", (*escrowtest.ControlClient).ApprovePayment, "the payment arrived: transaction %d is funded\n", args, stdout, stderr)
}

// runEmulatorRejectPayment is "escrow emulator reject-payment ID": the payment fails and
// the buyer must choose a method again.
func runEmulatorRejectPayment(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return runEmulatorPayment(ctx, "reject-payment", (*escrowtest.ControlClient).RejectPayment, "the payment was rejected: transaction %d awaits a payment again\n", args, stdout, stderr)
}

// runEmulatorPayment approves or rejects a transaction's payment.
func runEmulatorPayment(ctx context.Context, sub string, call func(*escrowtest.ControlClient, context.Context, int64) error, done string, args []string, stdout, stderr io.Writer) int {
	name := "escrow emulator " + sub
	var id int64
	return controlCommand(ctx, name, name+" ID", args, stdout, stderr, nil,
		func(positional []string) (err error) {
			if err = want("a transaction id")(positional); err == nil {
				id, err = parseID("transaction id", positional[0])
			}
			return err
		},
		func(ctx context.Context, c *escrowtest.ControlClient) (any, func(io.Writer), error) {
			err := call(c, ctx, id)
			return okAnswer, func(w io.Writer) { fmt.Fprintf(w, done, id) }, err
		})
}

// runEmulatorLedger is "escrow emulator ledger ID": the transaction's money as the
// emulator counts it, to check a balance by hand.
func runEmulatorLedger(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	const name = "escrow emulator ledger"
	var id int64
	return controlCommand(ctx, name, name+" ID", args, stdout, stderr, nil,
		func(positional []string) (err error) {
			if err = want("a transaction id")(positional); err == nil {
				id, err = parseID("transaction id", positional[0])
			}
			return err
		},
		func(ctx context.Context, c *escrowtest.ControlClient) (any, func(io.Writer), error) {
			var answer struct {
				escrowtest.Ledger
				Progress escrowtest.Progress `json:"next_steps"`
			}
			var err error
			answer.Ledger, err = c.Ledger(ctx, id)
			if err == nil {
				answer.Progress, err = c.NextSteps(ctx, id)
			}
			return answer, func(w io.Writer) {
				l := answer.Ledger
				tw := newTable(w)
				fmt.Fprintf(tw, "In\t%s\tpaid in by the buyer\n", l.In)
				fmt.Fprintf(tw, "Out\t%s\tpaid out and refunded\n", l.Out)
				fmt.Fprintf(tw, "Fees\t%s\tescrow fees earned\n", l.Fees)
				fmt.Fprintf(tw, "Held\t%s\tstill in escrow\n", l.Held)
				tw.Flush()
				printProgress(w, answer.Progress)
			}, err
		})
}

// printProgress says what a transaction waits for, as the emulator knows it: who must act
// next, and each payout owed and not made with its reason.
func printProgress(w io.Writer, p escrowtest.Progress) {
	fmt.Fprintf(w, "\ntransaction %d: %s, paid out %s\n", p.TransactionID, progressState(p), p.Disbursed)
	printSteps(w, p)
	printUnpaid(w, p)
	if len(p.Steps) == 0 && len(p.Unpaid) == 0 && p.Waiting != "" {
		fmt.Fprintf(w, "  %s\n", p.Waiting)
	}
}

// progressState is the transaction's state, with each item's when the goods have one.
func progressState(p escrowtest.Progress) string {
	if len(p.Goods) == 0 {
		return p.State
	}
	var goods []string
	for _, g := range p.Goods {
		goods = append(goods, fmt.Sprintf("item %d %s", g.ItemID, g.State))
	}
	return p.State + " (" + strings.Join(goods, ", ") + ")"
}

// printSteps prints who must act next, with the command that pays on the emulator.
func printSteps(w io.Writer, p escrowtest.Progress) {
	for _, s := range p.Steps {
		fmt.Fprintf(w, "  next: %s\n", s)
		if s.Action == string(escrow.NextPay) {
			fmt.Fprintf(w, "    'escrow emulator approve %d' brings the buyer's funds in\n", p.TransactionID)
		}
	}
}

// printUnpaid prints each payout owed and not made, with the command that unblocks one
// waiting for a disbursement method.
func printUnpaid(w io.Writer, p escrowtest.Progress) {
	for _, u := range p.Unpaid {
		fmt.Fprintf(w, "  not paid out: %s owed to %s (%s) for item %d: %s\n", u.Amount, u.Customer, u.Role, u.ItemID, u.Reason)
		if u.Reason == escrowtest.ReasonNoDisbursementMethod {
			fmt.Fprintf(w, "    %s selects one with 'escrow transactions disbursement add %d --as %s …'\n", u.Customer, p.TransactionID, u.Customer)
		}
	}
}

// runEmulatorAdvance is "escrow emulator advance DURATION": time passes for the emulator,
// so that inspection periods and rate-limit windows end.
func runEmulatorAdvance(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	const name = "escrow emulator advance"
	var d time.Duration
	return controlCommand(ctx, name, name+" DURATION (such as 3d, 36h or 90m)", args, stdout, stderr, nil,
		func(positional []string) (err error) {
			if err = want("a duration")(positional); err == nil {
				d, err = parseDays(positional[0])
			}
			return err
		},
		func(ctx context.Context, c *escrowtest.ControlClient) (any, func(io.Writer), error) {
			clock, err := c.Advance(ctx, d)
			return clock, func(w io.Writer) {
				fmt.Fprintf(w, "the emulator's clock moved %s: it is now %s\n", showDuration(d), clock.Now)
				for _, p := range clock.Transactions {
					printProgress(w, p)
				}
			}, err
		})
}

// parseDays reads a duration as time.ParseDuration does, plus whole days ("3d", "1d12h"),
// since inspection periods are counted in days. It must be whole seconds and positive.
func parseDays(s string) (time.Duration, error) {
	var days time.Duration
	if i := strings.IndexByte(s, 'd'); i > 0 {
		n, err := strconv.Atoi(s[:i])
		if err != nil || n < 0 {
			return 0, usagef("duration %q: want a count of days before \"d\", such as 3d", s)
		}
		days, s = time.Duration(n)*24*time.Hour, s[i+1:]
	}
	var rest time.Duration
	if s != "" {
		var err error
		if rest, err = time.ParseDuration(s); err != nil {
			return 0, usagef("duration: %v (such as 3d, 36h or 90m)", err)
		}
	}
	d := days + rest
	if d <= 0 || d%time.Second != 0 {
		return 0, usagef("the duration must be positive, in whole seconds")
	}
	return d, nil
}

// showDuration shows a duration in days when it is whole days, as it was likely given.
func showDuration(d time.Duration) string {
	if d%(24*time.Hour) == 0 {
		return plural(int(d/(24*time.Hour)), "day", "days")
	}
	return d.String()
}

// runEmulatorFault is "escrow emulator fault ENDPOINT [flags]" and "escrow emulator fault
// clear".
func runEmulatorFault(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	const name = "escrow emulator fault"
	var endpoint string
	var f faultFlags
	return controlCommand(ctx, name, name+` (ENDPOINT [--status n] [--drop before|after] [--latency d] [--latency-after d] [--probability p] | clear)

ENDPOINT is a route template ("GET /transaction/{id}"), "POST *", "*", or "WEBHOOK *" for
the emulator's own webhook calls; clear removes every fault`, args, stdout, stderr,
		func(fs *flag.FlagSet) {
			fs.IntVar(&f.status, "status", 0, "answer this HTTP `status` (400 to 599) instead of handling the request")
			fs.StringVar(&f.drop, "drop", "", "drop the connection `when`: before handling the request (nothing changes) or after it (the change is made, the answer lost)")
			fs.DurationVar(&f.latency, "latency", 0, "wait this `duration` (such as 2s) before handling the request")
			fs.DurationVar(&f.latencyAfter, "latency-after", 0, "wait this `duration` after handling the request, before answering")
			fs.Float64Var(&f.probability, "probability", 0, "fire with this `chance`, from 0 to 1 (default: always)")
		},
		func(positional []string) error {
			if err := want("an endpoint or clear")(positional); err != nil {
				return err
			}
			endpoint = positional[0]
			if endpoint == "clear" && f != (faultFlags{}) {
				return usagef("clear removes every fault and takes no flag but --json: leave out --status, --drop, --latency, --latency-after and --probability")
			}
			return nil
		},
		func(ctx context.Context, c *escrowtest.ControlClient) (any, func(io.Writer), error) {
			if endpoint == "clear" {
				err := c.ClearFaults(ctx)
				return okAnswer, func(w io.Writer) { fmt.Fprintln(w, "every fault cleared") }, err
			}
			err := c.InjectFault(ctx, f.fault(endpoint))
			return okAnswer, func(w io.Writer) { fmt.Fprintf(w, "fault injected on %s\n", endpoint) }, err
		})
}

// faultFlags are the flags of "escrow emulator fault" that describe the fault.
type faultFlags struct {
	status                int
	drop                  string
	latency, latencyAfter time.Duration
	probability           float64
}

// fault is the fault the flags describe, on the endpoint.
func (f faultFlags) fault(endpoint string) escrowtest.Fault {
	return escrowtest.Fault{Endpoint: endpoint, Status: f.status, Drop: parseDrop(f.drop), Latency: f.latency, LatencyAfter: f.latencyAfter, Probability: f.probability}
}

// parseDrop reads --drop. A value other than before or after is passed on as an unknown
// Drop, which the emulator refuses, naming the values it takes.
func parseDrop(s string) escrowtest.Drop {
	switch s {
	case "":
		return escrowtest.DropNone
	case "before":
		return escrowtest.DropBefore
	case "after":
		return escrowtest.DropAfter
	}
	return -1
}

// runEmulatorRateLimit is "escrow emulator rate-limit N [--window d]".
func runEmulatorRateLimit(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	const name = "escrow emulator rate-limit"
	var limit int64
	var window time.Duration
	return controlCommand(ctx, name, name+" N [--window d] (0 turns limiting off)", args, stdout, stderr,
		func(fs *flag.FlagSet) {
			fs.DurationVar(&window, "window", time.Minute, "the `duration` of a rate-limit window, in whole seconds")
		},
		func(positional []string) (err error) {
			if err = want("a limit")(positional); err != nil {
				return err
			}
			if limit, err = strconv.ParseInt(positional[0], 10, 32); err != nil || limit < 0 {
				return usagef("limit %q is not a count of requests", positional[0])
			}
			if window < time.Second || window%time.Second != 0 {
				return usagef("--window must be whole seconds, at least 1s: the emulator counts windows in seconds; use 1s, 30s or 1m")
			}
			return nil
		},
		func(ctx context.Context, c *escrowtest.ControlClient) (any, func(io.Writer), error) {
			err := c.SetRateLimit(ctx, int(limit), window)
			return okAnswer, func(w io.Writer) {
				if limit == 0 {
					fmt.Fprintln(w, "rate limiting is off")
					return
				}
				fmt.Fprintf(w, "%s per account and endpoint every %s\n", plural(int(limit), "request", "requests"), window)
			}, err
		})
}

// runEmulatorDeliveries is "escrow emulator deliveries": the webhook calls made so far.
func runEmulatorDeliveries(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	const name = "escrow emulator deliveries"
	var flush bool
	return controlCommand(ctx, name, name+" [--flush]", args, stdout, stderr,
		func(fs *flag.FlagSet) {
			fs.BoolVar(&flush, "flush", false, "first wait until the queued calls are made")
		},
		want(),
		func(ctx context.Context, c *escrowtest.ControlClient) (any, func(io.Writer), error) {
			deliveries, err := c.Deliveries(ctx, flush)
			answer := map[string][]escrowtest.Delivery{"deliveries": deliveries}
			return answer, func(w io.Writer) {
				tw := newTable(w)
				fmt.Fprintln(tw, "EVENT\tTRANSACTION\tURL\tSTATUS\tERROR")
				for _, d := range deliveries {
					status := "-"
					if d.StatusCode != 0 {
						status = strconv.Itoa(d.StatusCode)
					}
					fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\n", d.Event, d.TransactionID, d.URL, status, orDash(d.Error))
				}
				tw.Flush()
				fmt.Fprintf(w, "%s\n", plural(len(deliveries), "delivery", "deliveries"))
			}, err
		})
}

// runEmulatorReset is "escrow emulator reset".
func runEmulatorReset(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	const name = "escrow emulator reset"
	return controlCommand(ctx, name, name, args, stdout, stderr, nil, want(),
		func(ctx context.Context, c *escrowtest.ControlClient) (any, func(io.Writer), error) {
			err := c.Reset(ctx)
			return okAnswer, func(w io.Writer) {
				fmt.Fprintln(w, "the emulator is as new: every account, transaction, fault and delivery is gone, and the clock is back.")
				fmt.Fprintln(w, "Credentials made before no longer work: 'escrow emulator customer EMAIL --partner' makes an account.")
			}, err
		})
}

// runEmulatorCustomer is "escrow emulator customer EMAIL [--partner]": it makes the account
// (or gives an existing one a new API key) and prints its credentials, which is what it is
// for: the one API command besides 'escrow emulator --env' that prints a secret.
func runEmulatorCustomer(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	const name = "escrow emulator customer"
	var partner bool
	var email string
	return controlCommand(ctx, name, name+" EMAIL [--partner]", args, stdout, stderr,
		func(fs *flag.FlagSet) {
			fs.BoolVar(&partner, "partner", false, "make the account an approved partner, which may act As-Customer")
		},
		func(positional []string) error {
			err := want("an e-mail address")(positional)
			if err == nil {
				email = positional[0]
			}
			return err
		},
		func(ctx context.Context, c *escrowtest.ControlClient) (any, func(io.Writer), error) {
			a, err := c.AddCustomer(ctx, email, partner)
			return a, func(w io.Writer) {
				tw := newTable(w)
				fmt.Fprintf(tw, "ID\t%d\n", a.ID)
				fmt.Fprintf(tw, "E-mail\t%s\n", a.Email)
				fmt.Fprintf(tw, "API key\t%s\n", a.APIKey)
				if a.Password != "" {
					fmt.Fprintf(tw, "Password\t%s\n", a.Password)
				}
				if partner {
					// Only then is it known: the answer does not say whether an account
					// that existed before was a partner already.
					fmt.Fprintf(tw, "Partner\tyes\n")
				}
				tw.Flush()
				fmt.Fprintf(w, "\nTo act as this account:\n  export %s=%s %s=%s\n", envEmail, shellQuote(a.Email), envAPIKey, shellQuote(a.APIKey))
				fmt.Fprintf(w, "or add --as %s to any API command against this emulator: no key to copy.\n", a.Email)
			}, err
		})
}

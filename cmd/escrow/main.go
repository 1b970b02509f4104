// Command escrow works with the escrow API from the shell.
//
// Usage:
//
//	escrow <command> [flags]
//
// Commands:
//
//	demo                    a whole lifecycle on an embedded emulator (--milestone, --domain, --sandbox)
//	emulator                serve the emulator over HTTPS for other programs
//	transactions list       every transaction of the account, page after page
//	transactions get        one transaction, by id or --reference
//	transactions act        agree, ship, receive, accept, reject, the return steps, cancel
//	customers me            the account the credentials belong to
//	webhooks list|add|rm    the account's webhooks
//	webhooks listen         receive webhooks and print the events once confirmed
//
// Run "escrow <command> -h" for a command's flags.
//
// The API commands talk to production, to the sandbox with --sandbox, or to any server
// with --base-url (--ca-cert trusts a self-signed certificate such as the emulator's).
// Credentials come from the environment, never from flags, so that they stay out of shell
// history and process listings: ESCROW_EMAIL and ESCROW_API_KEY, or ESCROW_SANDBOX_EMAIL and
// ESCROW_SANDBOX_API_KEY with --sandbox. --json prints the API's answer as JSON.
//
// Exit codes: 0 success, 1 the API or the network refused, 2 a command line that cannot
// be run (unknown command, bad flag, missing credentials).
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"syscall"
)

// exitUsage is the exit code of a command line that cannot be run.
const exitUsage = 2

// command is one subcommand. run receives the arguments after the command's name, and a
// context cancelled on SIGINT or SIGTERM; it returns the exit code.
type command struct {
	summary string
	run     func(ctx context.Context, args []string, stdout, stderr io.Writer) int
}

// commands is the dispatch table: a new subcommand is one more entry.
var commands = map[string]command{
	"customers":    {summary: "show the account: customers me", run: runCustomers},
	"demo":         {summary: "run a whole escrow lifecycle on an embedded emulator (or the sandbox)", run: runDemo},
	"emulator":     {summary: "serve a local emulator of the escrow API over HTTPS", run: runEmulator},
	"transactions": {summary: "list, show and act on transactions", run: runTransactions},
	"webhooks":     {summary: "list, add and remove webhooks; listen for their events", run: runWebhooks},
}

// main runs the command line with a context that SIGINT and SIGTERM cancel, so that every
// command stops cleanly rather than dying mid-request.
func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run dispatches a command line and returns the exit code.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		usage(stderr)
		return exitUsage
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		usage(stdout)
		return 0
	}
	cmd, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "escrow: unknown command %q\n\n", args[0])
		usage(stderr)
		return exitUsage
	}
	return cmd.run(ctx, args[1:], stdout, stderr)
}

// usage lists the commands, in order, with their summaries.
func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: escrow <command> [flags]\n\ncommands:")
	names := make([]string, 0, len(commands))
	for name := range commands {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		fmt.Fprintf(w, "  %-13s %s\n", name, commands[name].summary)
	}
}

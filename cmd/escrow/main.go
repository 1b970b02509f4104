// Command escrow works with the escrow API from the shell: it creates, pays for and acts on
// transactions, calls any endpoint, receives webhooks, and serves and drives a local
// emulator of the API.
//
// Run "escrow -h" for the commands, the environment variables and the exit codes, and
// "escrow <command> -h" for a command's flags: the command table below is the one list of
// commands, so that help and dispatch cannot disagree.
//
// The API commands talk to production, to the sandbox with --sandbox, or to any server
// with --base-url or ESCROW_BASE_URL (--ca-cert or ESCROW_CA_CERT trusts a self-signed
// certificate such as the emulator's). Credentials come from the environment, never from
// flags, so that they stay out of shell history and process listings.
package main

import (
	"context"
	"fmt"
	"io"
	"maps"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"syscall"

	escrow "github.com/escrowkit/escrow-go"
)

// exitUsage is the exit code of a command line that cannot be run.
const exitUsage = 2

// exitCodes describes, for -h, what the process's exit status means.
var exitCodes = []struct {
	code    int
	meaning string
}{
	{0, "success"},
	{exitAPI, "the API, the network or the emulator refused, or the command was interrupted"},
	{exitUsage, "a command line that cannot be run: unknown command, bad flag, missing credentials"},
}

// command is one subcommand. run receives the arguments after the command's name, and a
// context cancelled on SIGINT or SIGTERM; it returns the exit code.
type command struct {
	args    string // the positional arguments, for -h: "ID ACTION"
	summary string
	run     func(ctx context.Context, args []string, stdout, stderr io.Writer) int
	// subs are the subcommands, for -h; run dispatches to them.
	subs map[string]command
	// dispatchOnly marks a group that does nothing without a subcommand: -h lists its
	// subcommands in its place.
	dispatchOnly bool
}

// group is a command made of subcommands ("escrow transactions list").
func group(name, summary string, subs map[string]command) command {
	return command{summary: summary, subs: subs, dispatchOnly: true, run: func(ctx context.Context, args []string, stdout, stderr io.Writer) int {
		return runGroup(ctx, name, subs, args, stdout, stderr)
	}}
}

// commands is the command table: dispatch and -h both read it, so a new subcommand is one
// more entry.
var commands = map[string]command{
	"api":         {args: "METHOD PATH", summary: "call any endpoint through the SDK's pipeline; --data JSON|@FILE", run: runAPI},
	"conformance": {summary: "measure a server against the SDK's expectations: built-in scenarios, or --cassettes DIR replayed", run: runConformance},
	"customers":   group("escrow customers", "show the account", map[string]command{"me": {summary: "show the account the credentials belong to", run: runCustomersMe}}),
	"demo":        {summary: "run a whole escrow lifecycle on an embedded emulator (or the sandbox)", run: runDemo},
	"emulator": emulatorCommand(map[string]command{
		"approve":        {args: "ID", summary: "the buyer's payment arrives", run: runEmulatorApprove},
		"reject-payment": {args: "ID", summary: "the buyer's payment fails", run: runEmulatorRejectPayment},
		"ledger":         {args: "ID", summary: "the transaction's money: paid in, paid out, fees, held", run: runEmulatorLedger},
		"advance":        {args: "DURATION", summary: "move the emulator's clock (3d, 36h): inspection periods end", run: runEmulatorAdvance},
		"fault":          {args: "ENDPOINT|clear", summary: "inject a fault (--status, --drop, --latency), or clear them all", run: runEmulatorFault},
		"rate-limit":     {args: "N", summary: "allow N requests per account and endpoint per window (0: no limit)", run: runEmulatorRateLimit},
		"deliveries":     {summary: "list the webhook calls the emulator made", run: runEmulatorDeliveries},
		"reset":          {summary: "forget every account, transaction, fault and delivery", run: runEmulatorReset},
		"customer":       {args: "EMAIL", summary: "make an account (--partner: a partner) and print its credentials", run: runEmulatorCustomer},
		"wait":           {args: "FILE", summary: "wait until an emulator started with --env FILE has written it and answers", run: runEmulatorWait},
		"reach":          {args: "ID STATE", summary: "drive a transaction forward to a state (in_inspection, complete, …) as its parties would", run: runEmulatorReach},
		"trigger":        {args: "ID EVENT", summary: "deliver an event of a transaction again to its parties' webhooks", run: runEmulatorTrigger},
		"requests":       {summary: "the latest API requests, credentials removed (--follow, --status 4xx, --bodies)", run: runEmulatorRequests},
		"export":         {args: "FILE", summary: "save the emulator's whole state to FILE (0600)", run: runEmulatorExport},
		"import":         {args: "FILE", summary: "replace the emulator's whole state with FILE's", run: runEmulatorImport},
		"faults":         {summary: "list the faults standing, with their ids (--remove ID: remove one)", run: runEmulatorFaults},
		"accounts":       {summary: "list the accounts: partners, keys by their last four characters, webhooks masked", run: runEmulatorAccounts},
	}),
	"transactions": group("escrow transactions", "create, list, show, pay for and act on transactions", map[string]command{
		"list":   {summary: "list the account's transactions", run: runTransactionsList},
		"get":    {args: "ID", summary: "show one transaction, by id or --reference", run: runTransactionsGet},
		"create": {summary: "create a transaction from flags or a JSON file (--file)", run: runTransactionsCreate},
		"act":    {args: "ID ACTION", summary: "agree, ship, receive, accept, reject, cancel, …", run: runTransactionsAct},
		"pay": group("escrow transactions pay", "the buyer's payment", map[string]command{
			"list":      {args: "ID", summary: "the payment methods, with their totals and fees", run: runPayList},
			"choose":    {args: "ID METHOD", summary: "pay by card, PayPal or POLi: prints the page to pay on", run: runPayChoose},
			"wire":      {args: "ID", summary: "where to wire the funds (the buyer's own key)", run: runPayWire},
			"wire-sent": {args: "ID", summary: "report the wire sent at the bank", run: runPayWireSent},
		}),
		"disbursement": group("escrow transactions disbursement", "how the seller or the broker is paid out", map[string]command{
			"list":   {args: "ID", summary: "the disbursement methods, saved and selected", run: runDisbursementList},
			"select": {args: "ID METHOD_ID", summary: "select a saved method", run: runDisbursementSelect},
			"add":    {args: "ID", summary: "add bank details (flags or --file) and select them", run: runDisbursementAdd},
		}),
	}),
	"record":   {summary: "a loopback proxy to the API that keeps each exchange as a cassette, without credentials (--upstream URL --out DIR)", run: runRecord},
	"version":  {summary: "print the version of the CLI and the SDK", run: runVersion},
	"webhooks": group("escrow webhooks", "list, add and remove webhooks; listen for their events", webhooksCommands),
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
	return runGroup(ctx, "escrow", commands, args, stdout, stderr)
}

// runGroup dispatches to one of subs, by the first argument.
func runGroup(ctx context.Context, name string, subs map[string]command, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		groupUsage(stderr, name, subs)
		return exitUsage
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		groupUsage(stdout, name, subs)
		return 0
	}
	sub, ok := subs[args[0]]
	if !ok {
		return exitCode(stderr, name, usagef("unknown command %q", args[0]))
	}
	return sub.run(ctx, args[1:], stdout, stderr)
}

// groupUsage lists a group's commands, and their subcommands, with their summaries; the
// top level adds the environment variables and the exit codes.
func groupUsage(w io.Writer, name string, subs map[string]command) {
	type line struct{ words, summary string }
	var lines []line
	var walk func(prefix string, subs map[string]command)
	walk = func(prefix string, subs map[string]command) {
		for _, n := range slices.Sorted(maps.Keys(subs)) {
			c := subs[n]
			if !c.dispatchOnly {
				lines = append(lines, line{strings.TrimSpace(prefix + n + " " + c.args), c.summary})
			}
			walk(prefix+n+" ", c.subs)
		}
	}
	walk("", subs)
	width := 0
	for _, l := range lines {
		width = max(width, len(l.words))
	}
	fmt.Fprintf(w, "usage: %s <command> [flags]\n\ncommands:\n", name)
	for _, l := range lines {
		fmt.Fprintf(w, "  %-*s  %s\n", width, l.words, l.summary)
	}
	if name == "escrow" {
		fmt.Fprintln(w, "\nenvironment:")
		for _, v := range environmentVariables {
			fmt.Fprintf(w, "  %s\n      %s\n", v.names, v.meaning)
		}
		fmt.Fprintln(w, "\nexit codes:")
		for _, c := range exitCodes {
			fmt.Fprintf(w, "  %d  %s\n", c.code, c.meaning)
		}
	}
	fmt.Fprintf(w, "\nRun '%s <command> -h' for a command's flags.\n", name)
}

// runVersion is "escrow version": the SDK's version, and the module's when the binary was
// built from a published version (go install …@v1.2.3).
func runVersion(_ context.Context, args []string, stdout, stderr io.Writer) int {
	const name = "escrow version"
	fs := newFlagSet(name, "escrow version", stderr)
	if code, ok := parseNone(fs, name, args, stderr); !ok {
		return code
	}
	module := "(devel)"
	if info, ok := debug.ReadBuildInfo(); ok && info.Main.Version != "" {
		module = info.Main.Version
	}
	fmt.Fprintf(stdout, "escrow %s (module %s, API %s, %s %s/%s)\n", escrow.Version, module, escrow.APIVersion, runtime.Version(), runtime.GOOS, runtime.GOARCH)
	return 0
}

package main

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"

	escrow "github.com/escrowkit/escrow-go"
	"go.uber.org/goleak"
)

// runMainEnv, set in a child's environment, makes the test binary run the command line
// (main, with its signal handling) instead of the tests: how a test runs the CLI as a
// process of its own, to send it a real signal.
const runMainEnv = "ESCROW_TEST_RUN_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(runMainEnv) == "1" {
		main()
		return
	}
	goleak.VerifyTestMain(m)
}

func TestUsageErrors(t *testing.T) {
	tests := []struct {
		args []string
		code int
		out  string // in stdout or stderr
	}{
		{nil, exitUsage, "usage: escrow <command>"},
		{[]string{"frobnicate"}, exitUsage, `unknown command "frobnicate"`},
		{[]string{"help"}, 0, "emulator"},
		{[]string{"emulator", "--bogus"}, exitUsage, "no flag --bogus here"},
		{[]string{"emulator", "extra"}, exitUsage, `escrow emulator: unknown command "extra"`},
		{[]string{"emulator", "--addr", "127.0.0.1:0", "extra"}, exitUsage, `unexpected argument "extra"`},
		{[]string{"emulator", "-h"}, 0, "reject-payment"},
		{[]string{"version", "now"}, exitUsage, `unexpected argument "now"`},
		{[]string{"emulator", "-h"}, 0, "--cert-out"},
		{[]string{"emulator", "--addr", "256.0.0.1:1"}, 1, "escrow emulator:"},
	}
	for _, tc := range tests {
		var stdout, stderr bytes.Buffer
		code := run(context.Background(), tc.args, &stdout, &stderr)
		if code != tc.code || !strings.Contains(stdout.String()+stderr.String(), tc.out) {
			t.Errorf("%v: exit %d, want %d; output:\n%s%s", tc.args, code, tc.code, stdout.String(), stderr.String())
		}
	}
}

// TestHelp: "escrow -h" lists every command of the table, down to subcommands, the
// environment variables and the exit codes.
func TestHelp(t *testing.T) {
	code, out, _ := cli(t, "-h")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	var walk func(prefix string, subs map[string]command)
	walk = func(prefix string, subs map[string]command) {
		for name, c := range subs {
			if !c.dispatchOnly && !strings.Contains(out, "\n  "+prefix+name+" ") {
				t.Errorf("%q is not listed in\n%s", prefix+name, out)
			}
			walk(prefix+name+" ", c.subs)
		}
	}
	walk("", commands)
	for _, want := range []string{"transactions pay wire-sent", "emulator customer", "ESCROW_BASE_URL", "ESCROW_CA_CERT", "ESCROW_SANDBOX_API_KEY",
		"exit codes:\n  0  success\n  1  the API", "\n  2  a command line that cannot be run"} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in\n%s", want, out)
		}
	}
	if _, _, group := cli(t, "transactions"); !strings.Contains(group, "  pay choose ID METHOD  ") || strings.Contains(group, "ESCROW_") {
		t.Errorf("group usage:\n%s", group)
	}
}

// TestUnknownFlag: one error and a pointer to -h, not the usage between two copies of it.
func TestUnknownFlag(t *testing.T) {
	for _, args := range [][]string{{"transactions", "list", "--bogus"}, {"emulator", "--bogus"}, {"emulator", "approve", "1", "--bogus"}, {"demo", "--bogus"}, {"frobnicate"}} {
		code, out, errOut := cli(t, args...)
		lines := strings.Split(strings.TrimSpace(errOut), "\n")
		if code != exitUsage || out != "" || len(lines) != 2 || !strings.HasPrefix(lines[1], "Run '") || !strings.HasSuffix(lines[1], " -h' for usage.") {
			t.Errorf("%v: exit %d\n%s%s", args, code, out, errOut)
		}
	}
	// -h still prints the flags.
	code, _, errOut := cli(t, "transactions", "list", "-h")
	if code != 0 || !strings.Contains(errOut, "usage: escrow transactions list") || !strings.Contains(errOut, "-per-page n") {
		t.Errorf("exit %d\n%s", code, errOut)
	}
}

func TestVersion(t *testing.T) {
	code, out, _ := cli(t, "version")
	if code != 0 || !strings.HasPrefix(out, "escrow "+escrow.Version+" (module ") || !strings.Contains(out, "API "+escrow.APIVersion) {
		t.Errorf("exit %d: %q", code, out)
	}
}

func TestPlural(t *testing.T) {
	for n, want := range map[int]string{0: "0 transactions", 1: "1 transaction", 2: "2 transactions"} {
		if got := plural(n, "transaction", "transactions"); got != want {
			t.Errorf("%d: %q", n, got)
		}
	}
}

// TestBaseURLFromEnvironment: ESCROW_BASE_URL and ESCROW_CA_CERT stand in for the flags, the
// flags win, and a base URL without the version segment gets a hint.
func TestBaseURLFromEnvironment(t *testing.T) {
	e := newEmulator(t)
	t.Setenv(envBaseURL, e.srv.URL)
	t.Setenv(envCACert, e.certFile)
	code, out, errOut := cli(t, "customers", "me")
	if code != 0 || !strings.Contains(out, "API                      "+e.srv.URL) || errOut != "" {
		t.Errorf("exit %d\n%s%s", code, out, errOut)
	}
	// --sandbox wins over the variable, and reads the sandbox's credentials.
	code, _, errOut = cli(t, "customers", "me", "--sandbox")
	if code != exitUsage || !strings.Contains(errOut, "credentials for the sandbox are missing") {
		t.Errorf("exit %d: %s", code, errOut)
	}

	origin := strings.TrimSuffix(e.srv.URL, escrow.APIVersion+"/")
	for _, base := range []string{origin, strings.TrimSuffix(origin, "/")} {
		t.Setenv(envBaseURL, base)
		code, _, errOut = cli(t, "customers", "me")
		want := "did you mean " + origin + escrow.APIVersion + "/?"
		if code != exitAPI || !strings.Contains(errOut, want) || !strings.Contains(errOut, "404") {
			t.Errorf("%s: exit %d, want %q in\n%s", base, code, want, errOut)
		}
	}
	if hint := versionHint(e.srv.URL); hint != "" {
		t.Errorf("a hint for a good URL: %s", hint)
	}
}

// TestChangelogHasTheVersion: the version 'escrow version' prints has its section in
// CHANGELOG.md, so that a user can read what it holds.
func TestChangelogHasTheVersion(t *testing.T) {
	data, err := os.ReadFile("../../CHANGELOG.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), "\n## "+escrow.Version+" ") && !strings.Contains(string(data), "\n## "+escrow.Version+"\n") {
		t.Errorf("CHANGELOG.md has no section \"## %s\"", escrow.Version)
	}
}

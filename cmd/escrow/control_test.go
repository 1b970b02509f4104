package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	escrow "github.com/escrowkit/escrow-go"
	"github.com/escrowkit/escrow-go/escrowtest"
)

// TestEmulatorControl drives an emulator through every control subcommand, as a shell
// would, and checks the effect through the SDK.
func TestEmulatorControl(t *testing.T) {
	e := newEmulator(t, escrowtest.WithClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)))
	ctl := func(args ...string) (int, string, string) {
		t.Helper()
		return e.api(t, 2, append([]string{"emulator"}, args...)...)
	}

	code, out, errOut := ctl("customer", "shop@example.com", "--partner")
	if code != 0 || !strings.Contains(out, "E-mail    shop@example.com") || !strings.Contains(out, "Partner   yes") ||
		!strings.Contains(out, "export ESCROW_EMAIL='shop@example.com' ESCROW_API_KEY='") {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	// An account that was a partner already is not said to be none.
	if code, out, _ := ctl("customer", "shop@example.com"); code != 0 || strings.Contains(out, "Partner") {
		t.Errorf("exit %d\n%s", code, out)
	}
	code, out, _ = ctl("customer", "buyer@example.com", "--json")
	var acct escrowtest.Account
	if err := json.Unmarshal([]byte(out), &acct); code != 0 || err != nil || acct.APIKey == "" {
		t.Fatalf("exit %d, %v: %q", code, err, out)
	}
	// The printed credentials work.
	if _, err := e.clientFor(t, escrowtest.Account{Email: acct.Email, APIKey: acct.APIKey}).Customers.Get(t.Context(), escrow.Me); err != nil {
		t.Errorf("the printed key: %v", err)
	}

	tx := e.agreed(t)
	id := fmt.Sprint(tx.ID)
	if _, err := e.client.Transactions.MarkWireSent(t.Context(), tx.ID, escrow.AsCustomer("buyer@example.com")); err != nil {
		t.Fatal(err)
	}
	code, out, errOut = ctl("reject-payment", id)
	if code != 0 || !strings.Contains(out, "the payment was rejected") {
		t.Errorf("exit %d\n%s%s", code, out, errOut)
	}
	code, out, errOut = ctl("approve", id)
	if got, _ := e.client.Transactions.Get(t.Context(), tx.ID); code != 0 || got.State() != escrow.StateFunded {
		t.Errorf("exit %d, state %s\n%s%s", code, got.State(), out, errOut)
	}
	// Approving twice is refused by the emulator: exit 1 with its code and message.
	code, _, errOut = ctl("approve", id)
	if code != exitAPI || !strings.Contains(errOut, "POST /_emulator/transactions/"+id+"/approve_payment: 400: invalid_state: ") {
		t.Errorf("exit %d: %s", code, errOut)
	}
	code, _, errOut = ctl("approve", "999")
	if code != exitAPI || !strings.Contains(errOut, "404: not_found: no transaction 999") {
		t.Errorf("exit %d: %s", code, errOut)
	}

	code, out, errOut = ctl("ledger", id)
	if code != 0 || !strings.Contains(out, "In    258.13  paid in by the buyer") || !strings.Contains(out, "Held  258.13") {
		t.Errorf("exit %d\n%s%s", code, out, errOut)
	}
	code, out, _ = ctl("ledger", id, "--json")
	var l escrowtest.Ledger
	if err := json.Unmarshal([]byte(out), &l); code != 0 || err != nil || l.In != "258.13" || l.Out != "0.00" {
		t.Errorf("exit %d, %v: %s", code, err, out)
	}

	code, out, errOut = ctl("advance", "1d12h")
	if code != 0 || out != "the emulator's clock moved 36h0m0s: it is now 2026-01-02T12:00:00.000000+00:00\n" {
		t.Errorf("exit %d\n%q%s", code, out, errOut)
	}
	if code, out, _ = ctl("advance", "2d"); !strings.Contains(out, "moved 2 days") {
		t.Errorf("exit %d: %q", code, out)
	}

	code, out, errOut = ctl("fault", "GET /customer/{id}", "--status", "418")
	if code != 0 || out != "fault injected on GET /customer/{id}\n" {
		t.Errorf("exit %d\n%s%s", code, out, errOut)
	}
	if _, err := e.client.Customers.Get(t.Context(), escrow.Me); err == nil || !strings.Contains(err.Error(), "418") {
		t.Errorf("the fault did not fire: %v", err)
	}
	code, _, errOut = ctl("fault", "GET /customer/{id}", "--drop", "sideways")
	if code != exitAPI || !strings.Contains(errOut, "422: drop: must be one of before, after") {
		t.Errorf("exit %d: %s", code, errOut)
	}
	if code, out, _ = ctl("fault", "clear"); code != 0 || out != "every fault cleared\n" {
		t.Errorf("exit %d: %q", code, out)
	}
	if _, err := e.client.Customers.Get(t.Context(), escrow.Me); err != nil {
		t.Errorf("the fault stayed: %v", err)
	}

	if code, out, _ = ctl("rate-limit", "1", "--window", "1m"); code != 0 || out != "1 request per account and endpoint every 1m0s\n" {
		t.Errorf("exit %d: %q", code, out)
	}
	limited, err := escrow.NewClient(e.partner.Email, e.partner.APIKey, escrow.WithBaseURL(e.srv.URL), escrow.WithHTTPClient(e.srv.Client()), escrow.WithMaxRetries(0))
	if err != nil {
		t.Fatal(err)
	}
	_, err1 := limited.Customers.Get(t.Context(), escrow.Me)
	_, err2 := limited.Customers.Get(t.Context(), escrow.Me)
	if err1 != nil || !errors.Is(err2, escrow.ErrRateLimited) {
		t.Errorf("limit 1: %v, then %v", err1, err2)
	}
	if code, out, _ = ctl("rate-limit", "0"); code != 0 || out != "rate limiting is off\n" {
		t.Errorf("exit %d: %q", code, out)
	}

	// A webhook of the buyer's gets the events of a new sale.
	receiver := newWebhookSink(t)
	buyer := e.clientFor(t, escrowtest.Account{Email: acct.Email, APIKey: acct.APIKey})
	if _, err := buyer.Webhooks.Create(t.Context(), escrow.Me, receiver); err != nil {
		t.Fatal(err)
	}
	e.sale(t, "")
	code, out, errOut = ctl("deliveries", "--flush")
	if code != 0 || !strings.Contains(out, "create  "+fmt.Sprint(tx.ID+1)) || !strings.Contains(out, receiver) || !strings.HasSuffix(out, "1 delivery\n") {
		t.Errorf("exit %d\n%s%s", code, out, errOut)
	}
	code, out, _ = ctl("deliveries", "--json")
	var deliveries struct{ Deliveries []escrowtest.Delivery }
	if err := json.Unmarshal([]byte(out), &deliveries); code != 0 || err != nil || len(deliveries.Deliveries) != 1 || deliveries.Deliveries[0].StatusCode != 204 {
		t.Errorf("exit %d, %v: %s", code, err, out)
	}

	code, out, errOut = ctl("reset")
	if code != 0 || !strings.Contains(out, "as new") {
		t.Errorf("exit %d\n%s%s", code, out, errOut)
	}
	if _, err := e.client.Customers.Get(t.Context(), escrow.Me); err == nil {
		t.Error("the partner's key still works after reset")
	}
}

// newWebhookSink starts a receiver that answers 204 to everything and returns its URL.
func newWebhookSink(t *testing.T) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) }))
	t.Cleanup(srv.Close)
	return srv.URL + "/hook"
}

func TestEmulatorControlUsage(t *testing.T) {
	e := newEmulator(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"approve"}, "want a transaction id, got 0 arguments"},
		{[]string{"approve", "1", "2"}, "want a transaction id, got 2 arguments"},
		{[]string{"approve", "x"}, `transaction id "x" is not a positive integer`},
		{[]string{"advance", "soon"}, `duration: time: invalid duration "soon"`},
		{[]string{"advance", "xd"}, `want a count of days before "d"`},
		{[]string{"advance", "0s"}, "the duration must be positive"},
		{[]string{"advance", "1.5s"}, "whole seconds"},
		{[]string{"fault"}, "want an endpoint or clear, got 0 arguments"},
		{[]string{"fault", "clear", "--status", "500"}, "clear removes every fault and takes no flag"},
		{[]string{"rate-limit", "many"}, `limit "many" is not a count of requests`},
		{[]string{"rate-limit", "5", "--window", "500ms"}, "--window must be whole seconds"},
		{[]string{"deliveries", "now"}, `unexpected argument "now"`},
		{[]string{"customer"}, "want an e-mail address, got 0 arguments"},
		{[]string{"reset", "--bogus"}, "no flag --bogus here"},
		{[]string{"teleport"}, `unknown command "teleport"`},
		{[]string{"approve", "1", "--base-url", "::"}, `--base-url "::" is not an http or https URL`},
		{[]string{"approve", "1", "--ca-cert", "/nonexistent.pem"}, "--ca-cert: open /nonexistent.pem"},
	} {
		code, out, errOut := e.api(t, 2, append([]string{"emulator"}, tc.args...)...)
		if code != exitUsage || !strings.Contains(errOut, tc.want) || out != "" {
			t.Errorf("%v: exit %d, want 2 with %q:\n%s%s", tc.args, code, tc.want, out, errOut)
		}
	}

	// Without a base URL there is no emulator to talk to; ESCROW_BASE_URL names one.
	t.Setenv(envBaseURL, "")
	code, _, errOut := cli(t, "emulator", "reset")
	if code != exitUsage || !strings.Contains(errOut, "which emulator? pass --base-url or set ESCROW_BASE_URL") {
		t.Errorf("exit %d: %s", code, errOut)
	}
	t.Setenv(envBaseURL, e.srv.URL)
	t.Setenv(envCACert, e.certFile)
	if code, out, errOut := cli(t, "emulator", "customer", "x@example.com"); code != 0 {
		t.Errorf("from the environment: exit %d\n%s%s", code, out, errOut)
	}
	// Without the certificate, the error says what to do.
	t.Setenv(envCACert, "")
	code, _, errOut = cli(t, "emulator", "reset")
	if code != exitAPI || !strings.Contains(errOut, "--ca-cert") {
		t.Errorf("exit %d: %s", code, errOut)
	}
}

func TestParseDays(t *testing.T) {
	for in, want := range map[string]time.Duration{"3d": 72 * time.Hour, "1d12h": 36 * time.Hour, "90m": 90 * time.Minute, "0d1s": time.Second} {
		if got, err := parseDays(in); err != nil || got != want {
			t.Errorf("%q: %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "0d", "d", "-1d", "1d-2d", "3x", "1ms"} {
		if got, err := parseDays(in); err == nil {
			t.Errorf("%q: %v, want an error", in, got)
		}
	}
}

// TestEmulatorEnv starts "escrow emulator --env FILE", loads FILE as a shell would, and
// runs API and control commands with no flag at all.
func TestEmulatorEnv(t *testing.T) {
	dir := t.TempDir()
	envFile := filepath.Join(dir, "emulator.env")
	// An older file readable by others must not stay so.
	if err := os.WriteFile(envFile, []byte("stale"), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	stdoutR, stdoutW := io.Pipe()
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"emulator", "--addr", "127.0.0.1:0", "--env", envFile, "--partner", "shop@example.com"}, stdoutW, io.Discard)
		stdoutW.Close()
	}()
	defer func() {
		stop()
		if code := <-done; code != 0 {
			t.Errorf("emulator: exit %d", code)
		}
	}()
	line, err := bufio.NewReader(stdoutR).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	go io.Copy(io.Discard, stdoutR)
	base := strings.TrimSpace(line)

	fi, err := os.Stat(envFile)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("%v, mode %v", err, fi.Mode())
	}
	data, _ := os.ReadFile(envFile)
	vars := map[string]string{}
	for l := range strings.Lines(string(data)) {
		if k, v, ok := strings.Cut(strings.TrimPrefix(strings.TrimSpace(l), "export "), "="); ok && !strings.HasPrefix(l, "#") {
			vars[k] = strings.Trim(v, "'")
		}
	}
	if vars[envBaseURL] != base || vars[envCACert] != filepath.Join(dir, "emulator.pem") || vars[envEmail] != "shop@example.com" || vars[envAPIKey] == "" {
		t.Fatalf("%s", data)
	}
	for k, v := range vars {
		t.Setenv(k, v)
	}
	// A shell reads the file to the same values.
	if sh, err := exec.LookPath("sh"); err == nil {
		got, err := exec.Command(sh, "-c", `. "$1" && printf '%s|%s|%s|%s' "$ESCROW_BASE_URL" "$ESCROW_CA_CERT" "$ESCROW_EMAIL" "$ESCROW_API_KEY"`, "sh", envFile).Output()
		want := strings.Join([]string{vars[envBaseURL], vars[envCACert], vars[envEmail], vars[envAPIKey]}, "|")
		if err != nil || string(got) != want {
			t.Errorf("sh: %v: %q, want %q", err, got, want)
		}
	}

	code, out, errOut := cli(t, "customers", "me")
	if code != 0 || !strings.Contains(out, "shop@example.com") || !strings.Contains(out, base) {
		t.Errorf("customers me: exit %d\n%s%s", code, out, errOut)
	}
	code, out, errOut = cli(t, "transactions", "create", "--buyer", "b@example.com", "--seller", "s@example.com", "--amount", "100", "--title", "Pen", "--json")
	var tx escrow.Transaction
	if err := json.Unmarshal([]byte(out), &tx); code != 0 || err != nil {
		t.Fatalf("create: exit %d, %v\n%s%s", code, err, out, errOut)
	}
	// The partner acts for the buyer: it is an approved partner.
	code, _, errOut = cli(t, "transactions", "act", fmt.Sprint(tx.ID), "agree", "--as-customer", "b@example.com")
	if code != 0 {
		t.Errorf("agree As-Customer: exit %d: %s", code, errOut)
	}
	if code, out, errOut := cli(t, "emulator", "advance", "1h"); code != 0 {
		t.Errorf("advance: exit %d\n%s%s", code, out, errOut)
	}
}

func TestEmulatorEnvUsage(t *testing.T) {
	code, _, errOut := cli(t, "emulator", "--partner", "x@example.com")
	if code != exitUsage || !strings.Contains(errOut, "--partner goes with --env") {
		t.Errorf("exit %d: %s", code, errOut)
	}
	code, _, errOut = cli(t, "emulator", "--addr", "127.0.0.1:0", "--env", filepath.Join(t.TempDir(), "no", "such", "dir.env"))
	if code != exitAPI || !strings.Contains(errOut, "no such file or directory") {
		t.Errorf("exit %d: %s", code, errOut)
	}
}

func TestShellQuote(t *testing.T) {
	for in, want := range map[string]string{"plain": "'plain'", "it's": `'it'\''s'`, "": "''", "$HOME `x`": "'$HOME `x`'"} {
		if got := shellQuote(in); got != want {
			t.Errorf("%q: %s, want %s", in, got, want)
		}
	}
}

// TestEmulatorControlCoverage: every endpoint of the control API has a subcommand, so that
// an endpoint added to escrowtest without one fails here. The index, the page and what the
// page reads are for browsing, not driving.
func TestEmulatorControlCoverage(t *testing.T) {
	bySubcommand := map[string]string{
		"POST /_emulator/customers":                         "customer",
		"POST /_emulator/transactions/{id}/approve_payment": "approve",
		"POST /_emulator/transactions/{id}/reject_payment":  "reject-payment",
		"GET /_emulator/transactions/{id}/ledger":           "ledger",
		"GET /_emulator/transactions/{id}/next_steps":       "ledger",
		"POST /_emulator/clock/advance":                     "advance",
		"POST /_emulator/rate_limit":                        "rate-limit",
		"POST /_emulator/faults":                            "fault",
		"DELETE /_emulator/faults":                          "fault",
		"GET /_emulator/webhook_deliveries":                 "deliveries",
		"POST /_emulator/reset":                             "reset",
		"POST /_emulator/transactions/{id}/reach":           "reach",
		"POST /_emulator/transactions/{id}/trigger":         "trigger",
		"GET /_emulator/requests":                           "requests",
		"GET /_emulator/state":                              "export",
		"PUT /_emulator/state":                              "import",
		"GET /_emulator/faults":                             "faults",
		"DELETE /_emulator/faults/{id}":                     "faults",
		"GET /_emulator/accounts":                           "accounts",
		"GET /_emulator/":                                   "",
		// The page's: it reads these and the event stream; transactions get shows what
		// a party sees, and ledger what only the emulator knows.
		"GET /_emulator/transactions":      "",
		"GET /_emulator/transactions/{id}": "",
		"GET /_emulator/events":            "",
		"GET /_emulator/ui/":               "",
	}
	subs := commands["emulator"].subs
	for _, ep := range escrowtest.ControlEndpoints() {
		sub, ok := bySubcommand[ep.Method+" "+ep.Path]
		if !ok {
			t.Errorf("no escrow emulator subcommand calls %s %s", ep.Method, ep.Path)
			continue
		}
		if _, listed := subs[sub]; sub != "" && !listed {
			t.Errorf("%s %s: subcommand %q is not in the command table", ep.Method, ep.Path, sub)
		}
	}
}

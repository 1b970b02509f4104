package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	escrow "github.com/escrowkit/escrow-go"
	"github.com/escrowkit/escrow-go/escrowtest"
)

// startEmulatorProcess runs 'escrow emulator' as a process of its own (the test binary
// running main) and returns it with the API's base URL it printed.
func startEmulatorProcess(t *testing.T, args ...string) (*exec.Cmd, string, *strings.Builder) {
	t.Helper()
	cmd := exec.Command(os.Args[0], append([]string{"emulator", "--addr", "127.0.0.1:0"}, args...)...)
	cmd.Env = append(os.Environ(), runMainEnv+"=1")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("the emulator printed no base URL: %v\n%s", err, stderr.String())
	}
	return cmd, strings.TrimSpace(line), &stderr
}

// stopWith sends sig to the process and waits for it to exit 0.
func stopWith(t *testing.T, cmd *exec.Cmd, sig os.Signal, stderr *strings.Builder) {
	t.Helper()
	if err := cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("the emulator exited with %v:\n%s", err, stderr.String())
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("the emulator did not stop on %v", sig)
	}
}

// TestEmulatorStateSurvivesARestart: with --state FILE, a transaction made before SIGTERM
// is there after a restart, with the same key working and the next id new; the file is
// its owner's only. A file the emulator cannot read stops it before it overwrites it.
func TestEmulatorStateSurvivesARestart(t *testing.T) {
	dir := t.TempDir()
	state, cert := filepath.Join(dir, "state.json"), filepath.Join(dir, "cert.pem")
	cmd, base, stderr := startEmulatorProcess(t, "--state", state, "--cert-out", cert)
	cc, release, err := (&controlFlags{baseURL: base, caCert: cert}).connect()
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	partner, err := cc.AddCustomer(t.Context(), "market@example.com", true)
	if err != nil {
		t.Fatal(err)
	}
	client := func(base string) *escrow.Client {
		transport, err := newTransport(cert)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(transport.CloseIdleConnections)
		c, err := escrow.NewClient(partner.Email, partner.APIKey, escrow.WithBaseURL(base), escrow.WithHTTPClient(&http.Client{Transport: transport}))
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	tx, err := client(base).Transactions.Create(t.Context(), &escrow.CreateTransactionRequest{
		Currency: escrow.USD, Description: "Kept across a restart",
		Parties: []escrow.PartyInput{{Role: escrow.RoleBuyer, Customer: "buyer@example.com"}, {Role: escrow.RoleSeller, Customer: "seller@example.com"}},
		Items: []escrow.ItemInput{{Title: "Lamp", Type: escrow.ItemGeneralMerchandise, InspectionPeriod: escrow.Days(1),
			Schedule: []escrow.ScheduleInput{{Amount: escrow.MustAmount("250.00"), PayerCustomer: "buyer@example.com", BeneficiaryCustomer: "seller@example.com"}}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	stopWith(t, cmd, syscall.SIGTERM, stderr)
	info, err := os.Stat(state)
	if err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("the state file: %v, %v; want it 0600", info, err)
	}

	cmd, base, stderr = startEmulatorProcess(t, "--state", state, "--cert-out", cert)
	c := client(base)
	got, err := c.Transactions.Get(t.Context(), tx.ID)
	if err != nil || got.Description != "Kept across a restart" {
		t.Fatalf("after the restart: %+v, %v", got, err)
	}
	list, err := c.Transactions.List(t.Context(), nil)
	if err != nil || len(list.Transactions) != 1 {
		t.Fatalf("after the restart the partner lists %+v, %v", list, err)
	}
	stopWith(t, cmd, os.Interrupt, stderr)

	// A file it cannot read: the emulator does not start, and the file is left alone.
	os.WriteFile(state, []byte(`{"version": 99}`), 0o600)
	var out, errOut strings.Builder
	if code := run(t.Context(), []string{"emulator", "--addr", "127.0.0.1:0", "--state", state}, &out, &errOut); code != exitAPI ||
		!strings.Contains(errOut.String(), "version: 99") || !strings.Contains(errOut.String(), "move the file away") {
		t.Errorf("exit %d: %s", code, errOut.String())
	}
	if data, _ := os.ReadFile(state); string(data) != `{"version": 99}` {
		t.Errorf("the refused file was overwritten: %s", data)
	}
}

// TestEmulatorWorkbenchCommands: reach, trigger, requests, export and import drive an
// emulator as their control endpoints do.
func TestEmulatorWorkbenchCommands(t *testing.T) {
	e := newEmulator(t, escrowtest.WithClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)))
	ctl := func(args ...string) (int, string, string) {
		t.Helper()
		return e.api(t, 2, append([]string{"emulator"}, args...)...)
	}
	sink := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) }))
	defer sink.Close()
	if _, err := e.client.Webhooks.Create(t.Context(), escrow.Me, sink.URL); err != nil {
		t.Fatal(err)
	}
	tx := e.sale(t, "")
	id := fmt.Sprint(tx.ID)

	code, out, errOut := ctl("reach", id, "in_inspection")
	if got, _ := e.client.Transactions.Get(t.Context(), tx.ID); code != 0 || got.State() != escrow.StateInInspection || !strings.Contains(out, "reached in_inspection") {
		t.Errorf("reach: exit %d, state %s\n%s%s", code, got.State(), out, errOut)
	}
	if code, _, errOut := ctl("reach", id, "funded"); code != exitAPI || !strings.Contains(errOut, "cannot reach funded") {
		t.Errorf("reach backwards: exit %d: %s", code, errOut)
	}
	if code, _, errOut := ctl("reach", id); code != exitUsage {
		t.Errorf("reach without a state: exit %d: %s", code, errOut)
	}

	e.srv.FlushWebhooks(t.Context())
	before := len(e.srv.Deliveries())
	if code, out, errOut := ctl("trigger", id, "receive"); code != 0 || !strings.Contains(out, "queued again") {
		t.Errorf("trigger: exit %d\n%s%s", code, out, errOut)
	}
	e.srv.FlushWebhooks(t.Context())
	if ds := e.srv.Deliveries(); len(ds) != before+1 || !ds[len(ds)-1].Replay || ds[len(ds)-1].Event != "receive" || ds[len(ds)-1].StatusCode != http.StatusNoContent {
		t.Errorf("trigger delivered %+v", ds[before:])
	}
	if code, _, errOut := ctl("trigger", id, "complete"); code != exitAPI || !strings.Contains(errOut, `no "complete" event`) {
		t.Errorf("trigger of an event it never had: exit %d: %s", code, errOut)
	}

	code, out, errOut = ctl("requests", "--status", "2xx", "--bodies")
	if code != 0 || !strings.Contains(out, "POST /2017-09-01/transaction  201  market@example.com") || !strings.Contains(out, `"description":"A bicycle"`) || strings.Contains(out, e.partner.APIKey) {
		t.Errorf("requests: exit %d\n%s%s", code, out, errOut)
	}
	code, out, _ = ctl("requests", "--json", "--path", "/webhook")
	var r escrowtest.Request
	if err := json.Unmarshal([]byte(out), &r); code != 0 || err != nil || r.Endpoint != "POST /customer/{customer_id}/webhook" {
		t.Errorf("requests --json: exit %d, %v\n%s", code, err, out)
	}

	if err := e.srv.InjectFault(escrowtest.Fault{Endpoint: "GET *", Status: 503, Probability: 0.5}); err != nil {
		t.Fatal(err)
	}
	if code, out, errOut := ctl("faults"); code != 0 || !strings.Contains(out, "1   GET *     status 503  0.5") {
		t.Errorf("faults: exit %d\n%s%s", code, out, errOut)
	}
	if code, out, errOut := ctl("faults", "--remove", "1"); code != 0 || len(e.srv.Faults()) != 0 {
		t.Errorf("faults --remove: exit %d\n%s%s", code, out, errOut)
	}
	if code, out, errOut := ctl("accounts"); code != 0 || !strings.Contains(out, "market@example.com  yes") || !strings.Contains(out, "…"+e.partner.APIKey[len(e.partner.APIKey)-4:]) || strings.Contains(out, e.partner.APIKey) {
		t.Errorf("accounts: exit %d\n%s%s", code, out, errOut)
	}

	file := filepath.Join(t.TempDir(), "state.json")
	if code, out, errOut := ctl("export", file); code != 0 || !strings.Contains(out, file) {
		t.Errorf("export: exit %d\n%s%s", code, out, errOut)
	}
	if info, err := os.Stat(file); err != nil || info.Mode().Perm() != 0o600 {
		t.Errorf("the exported file: %v, %v; want it 0600", info, err)
	}
	e.srv.Reset()
	if code, out, errOut := ctl("import", file); code != 0 {
		t.Errorf("import: exit %d\n%s%s", code, out, errOut)
	}
	if got, err := e.client.Transactions.Get(t.Context(), tx.ID); err != nil || got.State() != escrow.StateInInspection {
		t.Errorf("after import: %v, %v", got, err)
	}
	os.WriteFile(file, []byte("garbage"), 0o600)
	if code, _, errOut := ctl("import", file); code != exitAPI || !strings.Contains(errOut, "422: invalid_snapshot") {
		t.Errorf("import of garbage: exit %d: %s", code, errOut)
	}
}

// TestServedHostsNameTheListener: the emulator answers the host --addr names and the
// address it listens on; listening on every address, each of the machine's.
func TestServedHostsNameTheListener(t *testing.T) {
	if got := servedHosts("emulator.test:8443", &net.TCPAddr{IP: net.ParseIP("192.0.2.7")}); !slices.Equal(got, []string{"emulator.test", "192.0.2.7"}) {
		t.Errorf("a named host: %v", got)
	}
	if got := servedHosts(":8443", &net.TCPAddr{IP: net.IPv4zero}); !slices.Contains(got, "127.0.0.1") {
		t.Errorf("every address: %v, want the machine's, loopback included", got)
	}
}

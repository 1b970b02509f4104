package main

import (
	"bytes"
	"encoding/pem"
	"os"
	"path/filepath"
	"strings"
	"testing"

	escrow "github.com/escrowkit/escrow-go"
	"github.com/escrowkit/escrow-go/escrowtest"
)

// cli runs a command line and returns its exit code and outputs.
func cli(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = run(t.Context(), args, &out, &errOut)
	return code, out.String(), errOut.String()
}

// emulator is an escrowtest server with a partner whose credentials are in the
// environment, and the file holding the server's certificate for --ca-cert.
type emulator struct {
	srv      *escrowtest.Server
	partner  escrowtest.Account
	client   *escrow.Client // the partner's
	certFile string
}

// newEmulator starts an emulator and points ESCROW_EMAIL / ESCROW_API_KEY at its partner.
// It clears the sandbox variables so that no real credentials leak into a test.
func newEmulator(t *testing.T, opts ...escrowtest.Option) *emulator {
	t.Helper()
	srv := escrowtest.NewServer(opts...)
	t.Cleanup(srv.Close)
	e := &emulator{srv: srv, partner: srv.AddPartner("market@example.com"), certFile: writeCert(t, srv)}
	e.client = e.clientFor(t, e.partner)
	t.Setenv(envEmail, e.partner.Email)
	t.Setenv(envAPIKey, e.partner.APIKey)
	t.Setenv(envSandboxEmail, "")
	t.Setenv(envSandboxAPIKey, "")
	t.Setenv(envWebhookSecret, "")
	return e
}

// clientFor returns an SDK client for an account of the emulator.
func (e *emulator) clientFor(t *testing.T, a escrowtest.Account) *escrow.Client {
	t.Helper()
	c, err := escrow.NewClient(a.Email, a.APIKey, escrow.WithBaseURL(e.srv.URL), escrow.WithHTTPClient(e.srv.Client()))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// api runs a command against the emulator: --base-url and --ca-cert are added after the
// command's words (the first arguments that do not start with "-"), as a user would type.
func (e *emulator) api(t *testing.T, words int, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	line := append([]string{}, args[:words]...)
	line = append(line, "--base-url", e.srv.URL, "--ca-cert", e.certFile)
	return cli(t, append(line, args[words:]...)...)
}

// sale creates a transaction between a buyer and a seller as the partner.
func (e *emulator) sale(t *testing.T, ref string) *escrow.Transaction {
	t.Helper()
	tx, err := e.client.Transactions.Create(t.Context(), &escrow.CreateTransactionRequest{
		Currency: escrow.USD, Description: "A bicycle", Reference: ref,
		Parties: []escrow.PartyInput{{Role: escrow.RoleBuyer, Customer: "buyer@example.com"}, {Role: escrow.RoleSeller, Customer: "seller@example.com"}},
		Items: []escrow.ItemInput{{
			Title: "Bicycle", Type: escrow.ItemGeneralMerchandise, InspectionPeriod: escrow.Days(1),
			Schedule: []escrow.ScheduleInput{{Amount: escrow.MustAmount("250.00"), PayerCustomer: "buyer@example.com", BeneficiaryCustomer: "seller@example.com"}},
		}},
	})
	if err != nil {
		t.Fatal(err)
	}
	return tx
}

// writeCert saves the server's certificate, PEM-encoded, for --ca-cert.
func writeCert(t *testing.T, srv *escrowtest.Server) string {
	t.Helper()
	file := filepath.Join(t.TempDir(), "emulator.pem")
	if err := os.WriteFile(file, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	return file
}

// linesWith returns the lines of s that start with prefix, without it.
func linesWith(s, prefix string) []string {
	var out []string
	for line := range strings.Lines(s) {
		if rest, ok := strings.CutPrefix(strings.TrimRight(line, "\n"), prefix); ok {
			out = append(out, rest)
		}
	}
	return out
}

// withStdin makes text the process's standard input until the test ends.
func withStdin(t *testing.T, text string) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	stdin := os.Stdin
	os.Stdin = r
	t.Cleanup(func() { os.Stdin = stdin; r.Close() })
	go func() {
		w.WriteString(text)
		w.Close()
	}()
}

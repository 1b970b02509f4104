package main

import (
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/escrowkit/escrow-go/escrowtest"
)

// total reads the closing line "N passed, M failed[, K skipped]".
var total = regexp.MustCompile(`(?m)^(\d+) passed, (\d+) failed(?:, (\d+) skipped)?\n\z`)

func totals(t *testing.T, out string) (passed, failed int) {
	t.Helper()
	m := total.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no closing total in:\n%s", out)
	}
	passed, _ = strconv.Atoi(m[1])
	failed, _ = strconv.Atoi(m[2])
	return passed, failed
}

func TestConformanceAgainstAFreshEmulatorPassesEveryCheck(t *testing.T) {
	e := newEmulator(t)
	// No credentials: the suite makes its own accounts through the control API.
	t.Setenv(envEmail, "")
	t.Setenv(envAPIKey, "")
	code, out, errOut := cli(t, "conformance", "--against", e.srv.URL, "--ca-cert", e.certFile)
	passed, failed := totals(t, out)
	if code != 0 || failed != 0 || passed < 20 || strings.Contains(out, "SKIP") {
		t.Fatalf("exit %d, %d passed, %d failed; want 0, ≥ 20, 0, none skipped:\n%s%s", code, passed, failed, out, errOut)
	}
	if lines := strings.Count(out, "\n"); lines != passed+1 {
		t.Errorf("%d lines for %d checks: one line per check, then the total", lines, passed)
	}
}

func TestConformanceReportsAnEmulatorThatFailsToReadATransaction(t *testing.T) {
	e := newEmulator(t)
	if err := e.srv.InjectFault(escrowtest.Fault{Endpoint: "GET /transaction/{id}", Status: 500}); err != nil {
		t.Fatal(err)
	}
	code, out, _ := cli(t, "conformance", "--against", e.srv.URL, "--ca-cert", e.certFile)
	_, failed := totals(t, out)
	if code != exitAPI || failed == 0 || !strings.Contains(out, "FAIL sale: create") {
		t.Errorf("exit %d, %d failed; want %d and failures, the first at the sale's creation read back:\n%s", code, failed, exitAPI, out)
	}
}

func TestConformanceTakesThePartnerFromAnEnvFile(t *testing.T) {
	e := newEmulator(t)
	env := filepath.Join(t.TempDir(), "escrow.env")
	filed := e.srv.AddPartner("filed@example.com")
	if err := writeEnvFile(env, e.srv.URL, e.certFile, filed); err != nil {
		t.Fatal(err)
	}
	t.Setenv(envEmail, "")
	t.Setenv(envAPIKey, "")
	code, out, errOut := cli(t, "conformance", "--env", env)
	if _, failed := totals(t, out); code != 0 || failed != 0 {
		t.Fatalf("exit %d:\n%s%s", code, out, errOut)
	}
	list, err := e.clientFor(t, filed).Transactions.List(t.Context(), nil)
	if err != nil || len(list.Transactions) == 0 {
		t.Errorf("the --env file's partner has %v transactions (%v): the suite did not act as it", list, err)
	}
}

func TestConformanceWithoutAnEmulatorNamesTheAccountsItNeeds(t *testing.T) {
	sandboxLike := httptest.NewTLSServer(http.NotFoundHandler())
	defer sandboxLike.Close()
	t.Setenv(envEmail, "market@example.com")
	t.Setenv(envAPIKey, "1_abcdefghijklmnopqrstuvwxyz")
	for _, v := range []string{envBuyerEmail, envBuyerAPIKey, envSellerEmail, envSellerAPIKey} {
		t.Setenv(v, "")
	}
	cert := filepath.Join(t.TempDir(), "cert.pem")
	os.WriteFile(cert, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: sandboxLike.Certificate().Raw}), 0o600)
	code, _, errOut := cli(t, "conformance", "--against", sandboxLike.URL+"/2017-09-01/", "--ca-cert", cert)
	if code != exitUsage || !strings.Contains(errOut, "--buyer-env") || !strings.Contains(errOut, "--seller-env") || strings.Contains(errOut, "the partner (") {
		t.Errorf("exit %d: %s", code, errOut)
	}
}

func TestConformanceOnTheSandboxNeedsItsOwnCredentialsAndABuyerAndASeller(t *testing.T) {
	t.Setenv(envSandboxEmail, "")
	t.Setenv(envSandboxAPIKey, "")
	t.Setenv(envEmail, "production@example.com")
	t.Setenv(envAPIKey, "1_abcdefghijklmnopqrstuvwxyz")
	for _, v := range []string{envBuyerEmail, envBuyerAPIKey, envSellerEmail, envSellerAPIKey} {
		t.Setenv(v, "")
	}
	// The production credentials are not taken for the sandbox's, and the sandbox is not
	// asked for an emulator's control API.
	code, _, errOut := cli(t, "conformance", "--sandbox")
	if code != exitUsage || !strings.Contains(errOut, "the partner (") || !strings.Contains(errOut, "--buyer-env") {
		t.Errorf("exit %d: %s", code, errOut)
	}
	if code, _, errOut := cli(t, "conformance", "--sandbox", "--against", "https://127.0.0.1:1/2017-09-01/"); code != exitUsage || !strings.Contains(errOut, "cannot be used together") {
		t.Errorf("--sandbox --against: exit %d: %s", code, errOut)
	}
}

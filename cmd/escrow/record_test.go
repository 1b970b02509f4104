package main

import (
	"bufio"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/escrowkit/escrow-go/escrowtest"
)

// startRecorder runs "escrow record" in front of upstream, writing to dir, and returns
// the base URL it prints first and what stops it as SIGTERM would, returning its exit code.
func startRecorder(t *testing.T, upstream, certFile, dir string) (base string, stop func() (int, string)) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	stdoutR, stdoutW := io.Pipe()
	stderr := &lockedBuffer{}
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"record", "--upstream", upstream, "--out", dir, "--ca-cert", certFile}, stdoutW, stderr)
		stdoutW.Close()
	}()
	line, err := bufio.NewReader(stdoutR).ReadString('\n')
	if err != nil {
		cancel()
		t.Fatalf("no address: %v; stderr: %s", err, stderr)
	}
	go io.Copy(io.Discard, stdoutR)
	stopped := false
	stop = func() (int, string) {
		if stopped {
			return 0, ""
		}
		stopped = true
		cancel()
		return <-done, stderr.String()
	}
	t.Cleanup(func() { stop() })
	return strings.TrimSpace(line), stop
}

// keyShaped matches the emulator's API keys ("<key id>_<26 alphanumeric characters>").
var keyShaped = regexp.MustCompile(`\b[0-9]+_[A-Za-z0-9]{26}\b`)

func TestRecordKeepsASaleWithoutCredentialsAndItReplaysOnAFreshEmulator(t *testing.T) {
	e := newEmulator(t)
	dir := filepath.Join(t.TempDir(), "cassettes")
	base, stop := startRecorder(t, e.srv.URL, e.certFile, dir)
	if !strings.HasPrefix(base, "http://127.0.0.1:") || !strings.HasSuffix(base, "/2017-09-01/") {
		t.Fatalf("first line %q: want the recorder's base URL with the version segment", base)
	}
	t.Setenv(envBaseURL, base)
	t.Setenv(envCACert, "")
	const secret = "Zq7Kd2Lm9Xw4Rt6Yp1Nb3Vc8"
	id := saleThrough(t, secret)

	code, stderr := stop()
	if code != 0 || !strings.Contains(stderr, "0 refused") {
		t.Fatalf("stopping: exit %d, stderr:\n%s", code, stderr)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	if len(files) < 10 {
		t.Fatalf("%d cassettes for a whole sale", len(files))
	}
	token := base64.StdEncoding.EncodeToString([]byte(e.partner.Email + ":" + e.partner.APIKey))
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		text := string(data)
		for what, s := range map[string]string{"the partner's key": e.partner.APIKey, "its Basic token": token, "an Authorization value": "Basic ", "the delivery secret": secret} {
			if strings.Contains(text, s) {
				t.Errorf("%s holds %s", filepath.Base(f), what)
			}
		}
		if k := keyShaped.FindString(text); k != "" {
			t.Errorf("%s holds an API key (%s…)", filepath.Base(f), k[:4])
		}
		if fi, _ := os.Stat(f); fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: mode %v, want 0600", filepath.Base(f), fi.Mode().Perm())
		}
	}

	// The recording replays on a fresh emulator, whose first transaction is not the
	// recorded one's id...
	fresh := escrowtest.NewServer()
	t.Cleanup(fresh.Close)
	fresh.AddPartner("someone@example.com")
	freshCert := writeCert(t, fresh)
	code, out, errOut := cli(t, "conformance", "--cassettes", dir, "--against", fresh.URL, "--ca-cert", freshCert)
	accounts, _ := filepath.Glob(filepath.Join(dir, "*-account.json"))
	exchanges := len(files) - len(accounts)
	if code != 0 || !strings.HasSuffix(out, fmt.Sprintf("\n%d exchanges replayed, 0 differences\n", exchanges)) || strings.Count(out, "\nok   #") != exchanges-1 {
		t.Fatalf("replay on a fresh emulator of transaction %s (%d exchanges): exit %d\n%s%s", id, exchanges, code, out, errOut)
	}
	// ... and differs from one that fails to read a transaction.
	faulty := escrowtest.NewServer()
	t.Cleanup(faulty.Close)
	if err := faulty.InjectFault(escrowtest.Fault{Endpoint: "GET /transaction/{id}", Status: 500}); err != nil {
		t.Fatal(err)
	}
	code, out, _ = cli(t, "conformance", "--cassettes", dir, "--against", faulty.URL, "--ca-cert", writeCert(t, faulty))
	if code != exitAPI || !strings.Contains(out, "DIFF #") || !strings.Contains(out, "status: recorded 200, replayed 500") {
		t.Errorf("replay on a faulty emulator: exit %d\n%s", code, out)
	}
}

// saleThrough runs a sale to completion with the CLI (through the recorder that
// ESCROW_BASE_URL names), with the control API and --as on the way, and registers a
// webhook whose URL carries secret. It returns the transaction's id.
func saleThrough(t *testing.T, secret string) string {
	t.Helper()
	code, out, errOut := cli(t, "transactions", "create", "--buyer", "buyer@example.com", "--seller", "seller@example.com", "--amount", "1500", "--title", "Road bike", "--quiet")
	if code != 0 {
		t.Fatalf("create: %d %s", code, errOut)
	}
	id := strings.TrimSpace(out)
	for _, line := range [][]string{
		{"transactions", "act", id, "agree", "--as-customer", "buyer@example.com"},
		{"transactions", "act", id, "agree", "--as-customer", "seller@example.com"},
		{"emulator", "approve", id},
		{"transactions", "disbursement", "add", id, "--as", "seller@example.com", "--type", "ach", "--account-name", "Sam Seller",
			"--account-type", "checking", "--routing-number", "121000248", "--account-number", "000123456789", "--bank-name", "First Bank"},
		{"transactions", "act", id, "ship", "--carrier", "UPS", "--tracking", "1Z999", "--as-customer", "seller@example.com"},
		{"transactions", "act", id, "receive", "--as-customer", "buyer@example.com"},
		{"transactions", "act", id, "accept", "--as", "buyer@example.com"},
		{"transactions", "get", id},
		{"webhooks", "add", "https://shop.example/escrow/webhook/" + secret},
	} {
		if code, _, errOut := cli(t, line...); code != 0 {
			t.Fatalf("%s: exit %d: %s", strings.Join(line, " "), code, errOut)
		}
	}
	return id
}

func TestRecordGuardRedactsCredentialsAndRefusesAFileStillHoldingOne(t *testing.T) {
	var g credentialGuard
	g.learn("market@example.com", "12_abcdefghijklmnopqrstuvwxyz")
	data, err := g.encode(&escrowtest.Cassette{Seq: 1, Kind: escrowtest.CassetteExchange, Method: "GET", Path: "customer/me", Status: 401,
		ResponseText: "bad key 12_abcdefghijklmnopqrstuvwxyz for market@example.com"})
	if err != nil || strings.Contains(string(data), "abcdefghijkl") || !strings.Contains(string(data), "market@example.com") {
		t.Errorf("a key in a body: %v\n%s", err, data)
	}
	// A delivery secret has no redactor: only the last check stands between it and a file.
	scrubbed := g.scrubBody("market@example.com", []byte(`{"url":"https://shop.example/hook/Zq7Kd2Lm9Xw4Rt6Yp1Nb3Vc8"}`))
	if strings.Contains(string(scrubbed), "Zq7Kd2") {
		t.Errorf("a webhook URL kept its secret: %s", scrubbed)
	}
	_, err = g.encode(&escrowtest.Cassette{Seq: 2, Kind: escrowtest.CassetteExchange, Method: "GET", Path: "x", Status: 200,
		ResponseText: "echo: Zq7Kd2Lm9Xw4Rt6Yp1Nb3Vc8"})
	if !errors.Is(err, errHoldsCredential) {
		t.Errorf("a cassette holding a delivery secret: %v, want errHoldsCredential", err)
	}
}

func TestRecordRefusesToServeOrForwardInTheClear(t *testing.T) {
	dir := t.TempDir()
	for _, args := range [][]string{
		{"record", "--upstream", "https://api.escrow-sandbox.com/2017-09-01/", "--out", dir, "--addr", "0.0.0.0:0"},
		{"record", "--upstream", "http://api.escrow-sandbox.com/2017-09-01/", "--out", dir},
		{"record", "--upstream", "https://api.escrow-sandbox.com/2017-09-01/"},
	} {
		if code, _, errOut := cli(t, args...); code != exitUsage {
			t.Errorf("%q: exit %d, want %d: %s", args, code, exitUsage, errOut)
		}
	}
}

func TestRecordRefusesAForeignHostAndADirectoryHoldingCassettes(t *testing.T) {
	e := newEmulator(t)
	dir := t.TempDir()
	base, _ := startRecorder(t, e.srv.URL, e.certFile, dir)
	req, _ := http.NewRequest(http.MethodPost, strings.Replace(base, "/2017-09-01/", "/_emulator/customers", 1), strings.NewReader(`{"email":"evil@example.com"}`))
	req.Host = "rebound.example:80"
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMisdirectedRequest {
		t.Errorf("Host rebound.example: %d, want 421", resp.StatusCode)
	}
	// Had the request reached the emulator, the account would have a password already.
	if a := e.srv.AddCustomer("evil@example.com"); a.Password == "" {
		t.Error("the request for a foreign host reached the emulator")
	}
	for host, want := range map[string]string{"localhost": "localhost", "127.0.0.1:8080": "127.0.0.1", "[::1]:80": "::1", "[::1]": "::1"} {
		if got := hostOnly(host); got != want || !isLoopback(got) {
			t.Errorf("Host %s: %q, want %q, a loopback host", host, got, want)
		}
	}

	os.WriteFile(filepath.Join(dir, "00001-account.json"), []byte("{}"), 0o600)
	if code, _, errOut := cli(t, "record", "--upstream", e.srv.URL, "--out", dir); code != exitUsage || !strings.Contains(errOut, "already holds 1 cassettes") {
		t.Errorf("a directory holding a cassette: exit %d: %s", code, errOut)
	}
}

func TestRecordKeepsNumbersAsWritten(t *testing.T) {
	var g credentialGuard
	got := string(g.scrubBody("", []byte(`{"amount":1000.0,"id":9007199254740993,"api_key":"1_x"}`)))
	if !strings.Contains(got, `"amount":1000.0`) || !strings.Contains(got, `"id":9007199254740993`) || strings.Contains(got, "1_x") {
		t.Errorf("%s", got)
	}
}

func TestRecordKeepsACredentialPutInAPathOutOfFileNamesAndFiles(t *testing.T) {
	e := newEmulator(t)
	dir := t.TempDir()
	base, stop := startRecorder(t, e.srv.URL, e.certFile, dir)
	t.Setenv(envBaseURL, base)
	t.Setenv(envCACert, "")
	// A caller's slip: the key as a reference.
	cli(t, "transactions", "get", "--reference", e.partner.APIKey)
	if code, stderr := stop(); code != 0 || strings.Contains(stderr, e.partner.APIKey) {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*"))
	if len(files) != 1 {
		t.Fatalf("%d files, want the one exchange", len(files))
	}
	data, _ := os.ReadFile(files[0])
	if strings.Contains(files[0], e.partner.APIKey[:8]) || strings.Contains(string(data), e.partner.APIKey[:8]) {
		t.Errorf("the key reached %s:\n%s", files[0], data)
	}
}

func TestRecordGuardStopsWritingOnceItCannotKeepEveryCredential(t *testing.T) {
	var g credentialGuard
	for i := range maxGuarded {
		g.learn("market@example.com", fmt.Sprintf("%d_abcdefghijklmnopqrstuvwxyz", i))
	}
	if _, err := g.encode(&escrowtest.Cassette{Seq: 1, Kind: escrowtest.CassetteExchange, Method: "GET", Path: "customer/me", Status: 200}); !errors.Is(err, errTooManyCredentials) {
		t.Errorf("encode with a full guard: %v", err)
	}
	if len(g.seen) > maxGuarded {
		t.Errorf("%d kept, more than %d", len(g.seen), maxGuarded)
	}
}

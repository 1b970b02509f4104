package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/escrowkit/escrow-go/escrowtest"
)

// lockedBuffer is a buffer that a command writes while a test reads it.
type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestEmulatorCommand starts "escrow emulator" on a free port, uses the API, the control
// API and the page over HTTPS with the certificate it wrote, and stops it as a signal
// would, with the page's event stream open.
func TestEmulatorCommand(t *testing.T) {
	ctx, stop := context.WithCancel(context.Background())
	certFile := filepath.Join(t.TempDir(), "cert.pem")
	stdoutR, stdoutW := io.Pipe()
	stderr := &lockedBuffer{}
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"emulator", "--addr", "127.0.0.1:0", "--cert-out", certFile}, stdoutW, stderr)
		stdoutW.Close()
	}()
	line, err := bufio.NewReader(stdoutR).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	go io.Copy(io.Discard, stdoutR)
	base := strings.TrimSpace(line)
	if !strings.HasPrefix(base, "https://127.0.0.1:") || !strings.HasSuffix(base, "/2017-09-01/") {
		t.Fatalf("base URL %q", base)
	}

	pemBytes, err := os.ReadFile(certFile)
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(pemBytes) {
		t.Fatal("the certificate file holds no certificate")
	}
	transport := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots}}
	defer transport.CloseIdleConnections()
	client := &http.Client{Transport: transport, Timeout: 5 * time.Second}

	root := strings.TrimSuffix(base, "2017-09-01/")
	resp, err := client.Post(root+"_emulator/customers", "application/json", strings.NewReader(`{"email": "buyer@example.com"}`))
	if err != nil {
		t.Fatal(err)
	}
	var acct struct {
		Email  string `json:"email"`
		APIKey string `json:"api_key"`
	}
	json.NewDecoder(resp.Body).Decode(&acct)
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated || acct.APIKey == "" {
		t.Fatalf("control API: %d %+v", resp.StatusCode, acct)
	}
	req, _ := http.NewRequest(http.MethodGet, base+"customer/me", nil)
	req.SetBasicAuth(acct.Email, acct.APIKey)
	resp, err = client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Header.Get("RateLimit-Remaining") == "" {
		t.Errorf("API: %d %v", resp.StatusCode, resp.Header)
	}
	// A dropped-connection fault works on this server too.
	resp, err = client.Post(root+"_emulator/faults", "application/json", strings.NewReader(`{"endpoint": "GET /customer/{id}", "drop": "after"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if _, err := client.Do(req); err == nil {
		t.Error("the connection was not dropped")
	}

	// The page: its address is printed on start, and it is served.
	page := root + "_emulator/ui/"
	if !strings.Contains(stderr.String(), "watch it at "+page) {
		t.Errorf("the page's address is not printed: %s", stderr)
	}
	resp, err = client.Get(page)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") {
		t.Errorf("page: %d %v", resp.StatusCode, resp.Header)
	}
	events, err := client.Get(root + "_emulator/events")
	if err != nil {
		t.Fatal(err)
	}
	defer events.Body.Close()

	stop()
	select {
	case code := <-done:
		if code != 0 {
			t.Errorf("exit %d", code)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the emulator did not stop")
	}
}

// TestEmulatorHelpListsControlEndpoints: `escrow emulator -h` prints the control API's
// endpoints, from the list the emulator dispatches on.
func TestEmulatorHelpListsControlEndpoints(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), []string{"emulator", "-h"}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	for _, ep := range escrowtest.ControlEndpoints() {
		if !strings.Contains(stderr.String(), ep.Method) || !strings.Contains(stderr.String(), ep.Path+" ") {
			t.Errorf("-h does not list %s %s:\n%s", ep.Method, ep.Path, stderr.String())
		}
	}
}

// TestEmulatorWaitEndsTheRace: 'escrow emulator wait FILE', run at once after an emulator
// is started in the background, returns only once that emulator's file is written and it
// answers; a stale file from an earlier emulator is removed first, never loaded.
func TestEmulatorWaitEndsTheRace(t *testing.T) {
	envFile := filepath.Join(t.TempDir(), "escrow.env")
	stale := "export ESCROW_BASE_URL='https://127.0.0.1:1/2017-09-01/'\nexport ESCROW_CA_CERT='/nonexistent.pem'\n"
	if err := os.WriteFile(envFile, []byte(stale), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"emulator", "--addr", "127.0.0.1:0", "--env", envFile}, io.Discard, io.Discard)
	}()
	defer func() {
		stop()
		if code := <-done; code != 0 {
			t.Errorf("emulator: exit %d", code)
		}
	}()
	code, out, errOut := cli(t, "emulator", "wait", envFile, "--timeout", "20s")
	if code != 0 || !strings.HasPrefix(out, "https://127.0.0.1:") || strings.Contains(out, "127.0.0.1:1/") {
		t.Fatalf("wait: exit %d: %s%s", code, out, errOut)
	}
	base, cert, ok := readEnvFile(envFile)
	if !ok || base != strings.TrimSpace(out) || cert == "/nonexistent.pem" {
		t.Errorf("the file holds %q, %q; wait printed %q", base, cert, out)
	}

	// No emulator: wait gives up, and says what to check.
	start := time.Now()
	code, _, errOut = cli(t, "emulator", "wait", filepath.Join(t.TempDir(), "none.env"), "--timeout", "200ms")
	if code != exitAPI || !strings.Contains(errOut, "is 'escrow emulator --env") || time.Since(start) > 10*time.Second {
		t.Errorf("wait without an emulator: exit %d: %s", code, errOut)
	}
}

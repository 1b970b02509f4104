package main

import (
	"bufio"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	escrow "github.com/escrowkit/escrow-go"
)

// slowBody opens a connection to addr, sends a delivery's headers announcing a body of
// size bytes, then one byte of it every gap, and returns how long after the headers the
// server closed the connection and how many body bytes it had been sent by then. It fails
// the test if the whole body could be sent.
func slowBody(t *testing.T, addr, path string, size int, gap time.Duration) (closedAfter time.Duration, sent int) {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", path, addr, size)
	start := time.Now()
	closed := make(chan time.Duration, 1)
	go func() {
		io.Copy(io.Discard, conn) // until the server closes it
		closed <- time.Since(start)
	}()
	tick := time.NewTicker(gap)
	defer tick.Stop()
	for sent < size {
		select {
		case d := <-closed:
			return d, sent
		case <-tick.C:
			if _, err := conn.Write([]byte{' '}); err != nil {
				return <-closed, sent
			}
			sent++
		}
	}
	t.Fatalf("the server took a %d-byte body sent one byte every %s", size, gap)
	return 0, sent
}

// serve runs newServer(h, lim) on a loopback port behind a limitListener and returns its
// address; the server is closed at the end of the test.
func serve(t *testing.T, h http.Handler, lim serverLimits) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := newServer(h, lim, slog.New(slog.DiscardHandler))
	done := make(chan struct{})
	go func() {
		defer close(done)
		hs.Serve(newLimitListener(ln, lim.conns))
	}()
	t.Cleanup(func() {
		hs.Close()
		<-done
	})
	return ln.Addr().String()
}

// readsBody is a handler that reads the whole body, as webhook.Handler does.
var readsBody = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	if _, err := io.ReadAll(r.Body); err != nil {
		http.Error(w, "body", http.StatusBadRequest)
	}
})

// TestSlowBodyIsCut: a body that has not arrived when the request time is up is cut off
// and its connection closed, whatever the pace of its bytes.
func TestSlowBodyIsCut(t *testing.T) {
	lim := serverLimits{header: time.Second, request: 600 * time.Millisecond, write: time.Second, idle: time.Second, conns: 8}
	addr := serve(t, readsBody, lim)
	closedAfter, sent := slowBody(t, addr, "/", 100, 50*time.Millisecond)
	if closedAfter > 5*time.Second || sent >= 100 {
		t.Errorf("closed after %s and %d bytes, want about %s", closedAfter, sent, lim.request)
	}
}

// TestIdleConnectionIsClosed: a kept-alive connection that sends no next request is closed.
func TestIdleConnectionIsClosed(t *testing.T) {
	lim := serverLimits{header: time.Second, request: time.Second, write: time.Second, idle: 300 * time.Millisecond, conns: 8}
	addr := serve(t, readsBody, lim)
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}")
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, nil)
	if err != nil || resp.StatusCode != http.StatusOK || resp.Close {
		t.Fatalf("first request: %v %v", resp, err)
	}
	resp.Body.Close()
	start := time.Now()
	conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := br.ReadByte(); err != io.EOF {
		t.Fatalf("idle connection: %v, want the server to close it", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("closed after %s idle", d)
	}
}

// TestConnectionsAreCapped: beyond the cap, a connection waits until one closes.
func TestConnectionsAreCapped(t *testing.T) {
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln := newLimitListener(inner, 2)
	accepted := make(chan net.Conn, 3)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted <- c
		}
	}()
	for range 3 {
		c, err := net.Dial("tcp", inner.Addr().String()) // the kernel's backlog takes all three
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
	}
	first, second := <-accepted, <-accepted
	select {
	case c := <-accepted:
		c.Close()
		t.Fatal("a third connection was accepted beyond the cap of 2")
	case <-time.After(200 * time.Millisecond):
	}
	first.Close()
	first.Close() // a second Close gives nothing back twice
	select {
	case third := <-accepted:
		third.Close()
	case <-time.After(5 * time.Second):
		t.Fatal("the third connection was not accepted once one closed")
	}
	second.Close()
	ln.Close()
	<-done
	if len(ln.slots) != 0 {
		t.Errorf("%d slots still held after every connection closed", len(ln.slots))
	}
}

// TestListenDefaultsToLoopback: without --addr the listener is reachable from this
// machine only; every interface takes an explicit --addr :8080.
func TestListenDefaultsToLoopback(t *testing.T) {
	fs, _, lf := listenFlagSet("escrow webhooks listen", io.Discard)
	if err := fs.Parse(nil); err != nil {
		t.Fatal(err)
	}
	host, _, err := net.SplitHostPort(lf.addr)
	if err != nil || !net.ParseIP(host).IsLoopback() {
		t.Errorf("default --addr %q is not loopback", lf.addr)
	}
	if lf.limits != defaultLimits || lf.limits.request != 15*time.Second || lf.limits.conns < 1 {
		t.Errorf("limits %+v", lf.limits)
	}
	code, _, errOut := cli(t, "webhooks", "listen", "-h")
	if code != 0 || !strings.Contains(errOut, "127.0.0.1:8080") || !strings.Contains(errOut, "every interface") {
		t.Errorf("-h: exit %d\n%s", code, errOut)
	}
	if code, _, errOut := cli(t, "webhooks", "listen", "--max-conns", "0"); code != exitUsage {
		t.Errorf("--max-conns 0: exit %d: %s", code, errOut)
	}
}

// postDelivery posts a create delivery of id to url and returns the status.
func postDelivery(t *testing.T, url string, id int64) int {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(fmt.Sprintf(`{"event": "create", "event_type": "transaction", "transaction_id": %d}`, id)))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// TestListenRegistersASecretURL: --register keeps a secret in the store and registers
// the URL that carries it; deliveries without it are refused with 404 and never printed;
// a restart over the same store registers the same URL; the secret is never printed.
func TestListenRegistersASecretURL(t *testing.T) {
	e := newEmulator(t)
	store := "sqlite:" + filepath.Join(t.TempDir(), "hooks.db")
	args := []string{"--json", "--register", "--store", store, "--reconcile", "1h"}
	l := startListener(t, e, args...)
	hooks, err := e.client.Webhooks.List(t.Context(), escrow.Me)
	if err != nil || len(hooks.Webhooks) != 1 {
		t.Fatalf("--register: %+v %v", hooks, err)
	}
	registered := hooks.Webhooks[0].URL
	secret := strings.TrimPrefix(registered, l.url)
	if secret == registered || len(secret) < 22 || strings.Contains(secret, "/") {
		t.Fatalf("registered %s for a listener at %s", registered, l.url)
	}
	tx := e.sale(t, "")
	var out []string
	awaitJSON(t, l, &out, tx.ID, "create")
	for _, forged := range []string{l.url, l.url + otherFirstChar(secret), l.url + "escrow"} {
		if code := postDelivery(t, forged, tx.ID); code != http.StatusNotFound {
			t.Errorf("a delivery to %s: %d, want 404", forged, code)
		}
	}
	code, rest := l.stop()
	if code != 0 || len(rest) != 0 {
		t.Errorf("exit %d; printed after the real event: %q", code, rest)
	}
	if strings.Contains(strings.Join(l.stderr, "\n"), secret) || !strings.Contains(strings.Join(l.stderr, "\n"), "SECRET") {
		t.Errorf("stderr shows the secret, or not where it goes:\n%s", strings.Join(l.stderr, "\n"))
	}

	l = startListener(t, e, args...)
	hooks, err = e.client.Webhooks.List(t.Context(), escrow.Me)
	if err != nil || len(hooks.Webhooks) != 1 || strings.TrimPrefix(hooks.Webhooks[0].URL, l.url) != secret {
		t.Errorf("after a restart: %+v %v, want the same secret", hooks, err)
	}
	l.stop()
}

// TestListenTakesSecretsFromTheEnvironment: ESCROW_WEBHOOK_SECRET "new,old" registers the
// new one and accepts both, the old one while the rotation lasts; an unusable value is a
// usage error that does not quote it.
func TestListenTakesSecretsFromTheEnvironment(t *testing.T) {
	e := newEmulator(t)
	newS, oldS := strings.Repeat("N", 30), strings.Repeat("o", 30)
	t.Setenv(envWebhookSecret, newS+","+oldS)
	l := startListener(t, e, "--register", "--json", "--reconcile", "1h")
	hooks, err := e.client.Webhooks.List(t.Context(), escrow.Me)
	if err != nil || len(hooks.Webhooks) != 1 || hooks.Webhooks[0].URL != l.url+newS {
		t.Fatalf("registered %+v %v, want %s", hooks, err, l.url+newS)
	}
	tx := e.sale(t, "")
	var out []string
	awaitJSON(t, l, &out, tx.ID, "create")
	if code := postDelivery(t, l.url+oldS, tx.ID); code != http.StatusOK {
		t.Errorf("the old secret: %d", code)
	}
	if code := postDelivery(t, l.url+strings.Repeat("x", 30), tx.ID); code != http.StatusNotFound {
		t.Errorf("a wrong secret: %d", code)
	}
	l.stop()

	t.Setenv(envWebhookSecret, "tooshort-hunter2")
	code, _, errOut := e.api(t, 2, "webhooks", "listen", "--addr", "127.0.0.1:0")
	if code != exitUsage || !strings.Contains(errOut, envWebhookSecret) || strings.Contains(errOut, "hunter2") {
		t.Errorf("an unusable secret: exit %d: %s", code, errOut)
	}
}

// TestListenCutsSlowBodies: the listener as it runs, with its own limits: a delivery
// whose body comes one byte every 2 s is cut off once 15 s have passed, not before the
// 10 s a real sender may take.
func TestListenCutsSlowBodies(t *testing.T) {
	e := newEmulator(t)
	l := startListener(t, e, "--reconcile", "1h")
	defer l.stop()
	addr := strings.TrimSuffix(strings.TrimPrefix(l.url, "http://"), "/")
	closedAfter, sent := slowBody(t, addr, "/", 1000, 2*time.Second)
	if closedAfter < 10*time.Second || closedAfter > 20*time.Second {
		t.Errorf("closed after %s and %d bytes, want after 15 s", closedAfter, sent)
	}
}

// otherFirstChar is secret with its first character changed: a forgery one character
// away from the real secret, whatever that character is.
func otherFirstChar(secret string) string {
	first := "x"
	if secret[0] == 'x' {
		first = "y"
	}
	return first + secret[1:]
}

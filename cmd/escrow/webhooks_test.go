package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	escrow "github.com/escrowkit/escrow-go"
	"github.com/escrowkit/escrow-go/escrowtest"
	"github.com/escrowkit/escrow-go/internal/pgtest"
	"github.com/escrowkit/escrow-go/webhook"
)

func TestWebhooksAddListRemove(t *testing.T) {
	e := newEmulator(t)
	code, out, errOut := e.api(t, 2, "webhooks", "add", "https://market.example.com/escrow", "--json")
	var h escrow.Webhook
	if err := json.Unmarshal([]byte(out), &h); code != 0 || err != nil || h.ID == 0 || h.URL != "https://market.example.com/escrow" {
		t.Fatalf("add: exit %d, %v: %+v\n%s", code, err, h, errOut)
	}
	code, out, _ = e.api(t, 2, "webhooks", "add", "https://market.example.com/other")
	if code != 0 || !strings.HasPrefix(out, "Added webhook ") {
		t.Errorf("add: exit %d: %s", code, out)
	}

	code, out, _ = e.api(t, 2, "webhooks", "list")
	if code != 0 || !strings.Contains(out, fmt.Sprintf("%d  https://market.example.com/escrow\n", h.ID)) || !strings.Contains(out, "/other") {
		t.Errorf("list: exit %d:\n%s", code, out)
	}

	code, out, _ = e.api(t, 2, "webhooks", "rm", fmt.Sprint(h.ID))
	if code != 0 || out != fmt.Sprintf("Removed webhook %d.\n", h.ID) {
		t.Errorf("rm: exit %d: %q", code, out)
	}
	code, out, _ = e.api(t, 2, "webhooks", "list", "--json")
	var hooks escrow.Webhooks
	if err := json.Unmarshal([]byte(out), &hooks); code != 0 || err != nil || len(hooks.Webhooks) != 1 || hooks.Webhooks[0].ID == h.ID {
		t.Errorf("list --json: exit %d, %v: %s", code, err, out)
	}

	// Removing it again: the API's 404, exit 1.
	code, _, errOut = e.api(t, 2, "webhooks", "rm", fmt.Sprint(h.ID))
	if code != exitAPI || !strings.Contains(errOut, "404") {
		t.Errorf("rm again: exit %d: %s", code, errOut)
	}

	for _, args := range [][]string{
		{"webhooks", "add"}, {"webhooks", "add", "market.example.com/escrow"}, {"webhooks", "add", "ftp://x.example.com/"},
		{"webhooks", "rm"}, {"webhooks", "rm", "one"}, {"webhooks", "list", "--as-customer", "a@example.com"},
		{"webhooks", "listen", "--reconcile", "-1s"}, {"webhooks", "nope"},
	} {
		if code, out, errOut := e.api(t, 2, args...); code != exitUsage {
			t.Errorf("%v: exit %d\n%s%s", args, code, out, errOut)
		}
	}
}

// TestWebhooksListAndAddShowNoSecret: a URL carrying a delivery secret is printed with
// SECRET in its place by add and list, as text and as JSON, so a terminal's scrollback or
// a CI log keeps no credential; --show-secrets prints it whole.
func TestWebhooksListAndAddShowNoSecret(t *testing.T) {
	e := newEmulator(t)
	secret := webhook.NewSecret()
	hookURL := "https://market.example.com/escrow/" + secret
	masked := "https://market.example.com/escrow/SECRET"
	code, out, errOut := e.api(t, 2, "webhooks", "add", hookURL)
	if code != 0 || strings.Contains(out+errOut, secret) || !strings.Contains(out, masked) {
		t.Fatalf("add: exit %d:\n%s%s", code, out, errOut)
	}
	for _, args := range [][]string{{"webhooks", "list"}, {"webhooks", "list", "--json"}, {"webhooks", "add", hookURL + "/", "--json"}} {
		code, out, errOut := e.api(t, 2, args...)
		if code != 0 || strings.Contains(out+errOut, secret) || !strings.Contains(out, masked) {
			t.Errorf("%v: exit %d:\n%s%s", args, code, out, errOut)
		}
	}
	code, out, _ = e.api(t, 2, "webhooks", "list", "--show-secrets")
	if code != 0 || !strings.Contains(out, hookURL+"\n") {
		t.Errorf("list --show-secrets: exit %d:\n%s", code, out)
	}
	code, out, _ = e.api(t, 2, "webhooks", "list", "--show-secrets", "--json")
	var hooks escrow.Webhooks
	if err := json.Unmarshal([]byte(out), &hooks); code != 0 || err != nil || len(hooks.Webhooks) != 2 || hooks.Webhooks[0].URL != hookURL {
		t.Errorf("list --show-secrets --json: exit %d, %v: %s", code, err, out)
	}
}

// lines reads r line by line into a channel until r ends.
func lines(r io.Reader) <-chan string {
	ch := make(chan string, 1000)
	go func() {
		defer close(ch)
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			ch <- sc.Text()
		}
	}()
	return ch
}

// await returns the first line with every one of want, failing after a few seconds.
func await(t *testing.T, ch <-chan string, want ...string) string {
	t.Helper()
	timeout := time.After(5 * time.Second)
	for {
		select {
		case line, ok := <-ch:
			if !ok {
				t.Fatalf("output ended before a line with %q", want)
			}
			matched := true
			for _, w := range want {
				matched = matched && strings.Contains(line, w)
			}
			if matched {
				return line
			}
		case <-timeout:
			t.Fatalf("no line with %q", want)
		}
	}
}

// TestWebhooksListen runs the receiver, has the emulator post to it, loses deliveries
// for the reconciler to find, and stops it as SIGINT would.
func TestWebhooksListen(t *testing.T) {
	e := newEmulator(t)
	ctx, stop := context.WithCancel(t.Context())
	defer stop()
	outR, outW := io.Pipe()
	errR, errW := io.Pipe()
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"webhooks", "listen", "--addr", "127.0.0.1:0", "--reconcile", "10ms",
			"--base-url", e.srv.URL, "--ca-cert", e.certFile}, outW, errW)
		outW.Close()
		errW.Close()
	}()
	stdout, stderr := lines(outR), lines(errR)

	line := await(t, stderr, "listening on http://")
	addr := strings.Fields(strings.SplitAfter(line, "listening on ")[1])[0]
	if _, err := e.client.Webhooks.Create(ctx, escrow.Me, addr); err != nil {
		t.Fatal(err)
	}

	tx := e.sale(t, "")
	await(t, stdout, fmt.Sprintf("transaction %d  create  now awaiting_agreement", tx.ID))
	for _, who := range []string{"buyer@example.com", "seller@example.com"} {
		if _, err := e.client.Transactions.Agree(ctx, tx.ID, escrow.AsCustomer(who)); err != nil {
			t.Fatal(err)
		}
	}
	await(t, stdout, fmt.Sprintf("transaction %d  agree  now awaiting_payment", tx.ID))

	// Every delivery of the next transaction is lost; the reconciler finds it anyway.
	if err := e.srv.InjectFault(escrowtest.Fault{Endpoint: "WEBHOOK *", Drop: escrowtest.DropBefore}); err != nil {
		t.Fatal(err)
	}
	lost := e.sale(t, "")
	await(t, stdout, fmt.Sprintf("transaction %d  create", lost.ID), "from the transaction's state")

	stop()
	select {
	case code := <-done:
		if code != 0 {
			t.Errorf("exit %d", code)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("listen did not stop")
	}
	for range stderr { // drain, so that the reader goroutine ends
	}
	for range stdout {
	}
}

// TestListenJSON: --json prints one object per event in the documented shape.
func TestListenJSON(t *testing.T) {
	var out bytes.Buffer
	p := &eventPrinter{w: &out, json: true}
	tx := &escrow.Transaction{ID: 200001, Parties: []escrow.Party{{Role: escrow.RoleBuyer, Agreed: true}}}
	ev := webhook.ConfirmedEvent{
		Event:       escrow.Event{Name: escrow.EventShip, EventType: escrow.EventTypeTransaction, TransactionID: 200001},
		Transaction: tx, ItemIDs: []int64{300001}, Source: webhook.FromWebhook,
	}
	if err := p.callback(t.Context(), ev); err != nil {
		t.Fatal(err)
	}
	ev.Name, ev.ItemIDs, ev.Source = escrow.EventAgree, nil, webhook.FromReconcile
	if err := p.callback(t.Context(), ev); err != nil {
		t.Fatal(err)
	}
	want := `{"transaction_id":200001,"event":"ship","source":"webhook","item_ids":[300001]}
{"transaction_id":200001,"event":"agree","source":"reconcile","item_ids":[]}
`
	if out.String() != want {
		t.Errorf("got\n%s\nwant\n%s", out.String(), want)
	}
}

// listener runs "escrow webhooks listen" with args until its stop is called, which
// returns the exit code and everything it printed on stdout.
type listener struct {
	stop   func() (code int, stdout []string)
	stdout <-chan string
	url    string
	stderr []string // what it printed on stderr, once stopped
}

func startListener(t *testing.T, e *emulator, args ...string) *listener {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	outR, outW := io.Pipe()
	errR, errW := io.Pipe()
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, append([]string{"webhooks", "listen", "--addr", "127.0.0.1:0", "--base-url", e.srv.URL, "--ca-cert", e.certFile}, args...), outW, errW)
		outW.Close()
		errW.Close()
	}()
	l := &listener{}
	stdout, stderr := lines(outR), lines(errR)
	var seen []string
	tee := make(chan string, 1000)
	go func() {
		defer close(tee)
		for line := range stdout {
			tee <- line
		}
	}()
	l.stdout = tee
	var errLines []string
	errDone := make(chan struct{})
	first := make(chan string, 1)
	go func() {
		defer close(errDone)
		for line := range stderr {
			if strings.Contains(line, "listening on ") {
				first <- line
			}
			errLines = append(errLines, line)
		}
	}()
	select {
	case line := <-first:
		l.url = strings.Fields(strings.SplitAfter(line, "listening on ")[1])[0]
	case code := <-done:
		<-errDone
		t.Fatalf("listen ended at once: exit %d: %v", code, errLines)
	case <-time.After(20 * time.Second):
		t.Fatal("listen did not start")
	}
	l.stop = func() (int, []string) {
		cancel()
		var code int
		select {
		case code = <-done:
		case <-time.After(20 * time.Second):
			t.Fatal("listen did not stop")
		}
		for line := range l.stdout {
			seen = append(seen, line)
		}
		<-errDone
		l.stderr = errLines
		if code != 0 {
			t.Logf("stderr: %s", strings.Join(errLines, "\n"))
		}
		return code, seen
	}
	return l
}

// awaitJSON reads --json lines until one is the event wanted, checking that every line
// is an event in the documented shape and nothing else.
func awaitJSON(t *testing.T, l *listener, got *[]string, id int64, event string) {
	t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		select {
		case line, ok := <-l.stdout:
			if !ok {
				t.Fatalf("stdout ended before %d %s", id, event)
			}
			*got = append(*got, line)
			var m map[string]any
			if err := json.Unmarshal([]byte(line), &m); err != nil || len(m) != 4 || m["item_ids"] == nil || m["source"] == nil {
				t.Fatalf("stdout holds %q, not an event line", line)
			}
			if m["transaction_id"] == float64(id) && m["event"] == event {
				return
			}
		case <-timeout:
			t.Fatalf("no %s of %d in %v", event, id, *got)
		}
	}
}

// TestListenAsAReplica: with a SQLite store, --register and --forward-to, a listener
// hands each event over once across a restart, finds what happened while it was down,
// registers itself and removes its webhook on exit.
func TestListenAsAReplica(t *testing.T) {
	e := newEmulator(t)
	var mu sync.Mutex
	var forwarded []listenedEvent
	fwd := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var le listenedEvent
		if err := json.NewDecoder(r.Body).Decode(&le); err != nil || le.Transaction == nil {
			http.Error(w, "bad event", http.StatusBadRequest)
			return
		}
		mu.Lock()
		defer mu.Unlock()
		forwarded = append(forwarded, le)
	}))
	defer fwd.Close()
	store := "sqlite:" + filepath.Join(t.TempDir(), "hooks.db")
	args := []string{"--json", "--register", "--store", store, "--forward-to", fwd.URL}

	// The reconciler runs once at start, marking where history ends, then not for an hour:
	// the create below comes from its delivery.
	l := startListener(t, e, append(args, "--reconcile", "1h")...)
	hooks, err := e.client.Webhooks.List(t.Context(), escrow.Me)
	if err != nil || len(hooks.Webhooks) != 1 || !strings.HasPrefix(hooks.Webhooks[0].URL, l.url) || len(hooks.Webhooks[0].URL) < len(l.url)+22 {
		t.Fatalf("--register: %+v %v, want %s and a secret", hooks, err, l.url)
	}
	var out []string
	first := e.sale(t, "")
	awaitJSON(t, l, &out, first.ID, "create")
	code, rest := l.stop()
	out = append(out, rest...)
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	if hooks, err := e.client.Webhooks.List(t.Context(), escrow.Me); err != nil || len(hooks.Webhooks) != 0 {
		t.Errorf("the webhook outlived the listener: %+v %v", hooks, err)
	}
	if want := fmt.Sprintf(`{"transaction_id":%d,"event":"create","source":"webhook","item_ids":[]}`, first.ID); len(out) != 1 || out[0] != want {
		t.Errorf("stdout %q, want %q", out, want)
	}

	// Down: a transaction is made and agreed; nobody receives its deliveries.
	down := e.sale(t, "")
	for _, who := range []string{"buyer@example.com", "seller@example.com"} {
		if _, err := e.client.Transactions.Agree(t.Context(), down.ID, escrow.AsCustomer(who)); err != nil {
			t.Fatal(err)
		}
	}
	l = startListener(t, e, append(args, "--reconcile", "20ms")...)
	out = nil
	awaitJSON(t, l, &out, down.ID, "agree")
	_, rest = l.stop()
	out = append(out, rest...)
	for _, line := range out {
		if strings.Contains(line, fmt.Sprintf(`"transaction_id":%d,`, first.ID)) {
			t.Errorf("handed over again after the restart: %s", line)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(forwarded) != 3 || forwarded[0].TransactionID != first.ID || forwarded[2].Event != escrow.EventAgree {
		t.Errorf("forwarded %+v", forwarded)
	}
}

// TestListenBadStore: a store that cannot be used is a clear error at start, and a
// database that holds records is left as it was.
func TestListenBadStore(t *testing.T) {
	e := newEmulator(t)
	for _, tt := range []struct {
		store string
		code  int
		want  string
	}{
		{"redis://localhost", exitUsage, "--store wants memory"},
		{"sqlite:", exitAPI, "invalid store DSN"},
		{"postgres://", exitAPI, "invalid store DSN"},
		{"postgres://nobody:hunter2@127.0.0.1:1/x?sslmode=disable", exitAPI, "connecting"},
		{"sqlite:" + filepath.Join(t.TempDir(), "missing", "dir", "x.db"), exitAPI, "--store"},
	} {
		code, out, errOut := e.api(t, 2, "webhooks", "listen", "--addr", "127.0.0.1:0", "--store", tt.store)
		if code != tt.code || !strings.Contains(errOut, tt.want) || out != "" || strings.Contains(errOut, "hunter2") || strings.Contains(errOut, "panic") {
			t.Errorf("--store %s: exit %d, stdout %q, stderr %s", tt.store, code, out, errOut)
		}
	}
	for _, args := range [][]string{{"--forward-to", "localhost:9"}, {"--public-url", "http://x.example/"}} {
		if code, _, errOut := e.api(t, 2, append([]string{"webhooks", "listen"}, args...)...); code != exitUsage {
			t.Errorf("%v: exit %d: %s", args, code, errOut)
		}
	}
}

func TestListenBadAddress(t *testing.T) {
	e := newEmulator(t)
	code, _, errOut := e.api(t, 2, "webhooks", "listen", "--addr", "256.1.1.1:0")
	if code != exitAPI || !strings.Contains(errOut, "escrow webhooks listen:") {
		t.Errorf("exit %d: %s", code, errOut)
	}
}

// TestListenersShareAPostgresStore: two listeners over one PostgreSQL store, each
// registered, so every event is delivered to both: between them they print each event
// once.
func TestListenersShareAPostgresStore(t *testing.T) {
	pg, err := pgtest.Start()
	pg = pgtest.Need(t, pg, err)
	defer func() {
		if err := pg.Stop(); err != nil {
			t.Error(err)
		}
	}()
	e := newEmulator(t)
	args := []string{"--json", "--register", "--store", pg.NewDatabase(t), "--reconcile", "1h"}
	l1 := startListener(t, e, args...)
	l2 := startListener(t, e, args...)
	var ids []int64
	for range 3 {
		tx := e.sale(t, "")
		ids = append(ids, tx.ID)
		for _, who := range []string{"buyer@example.com", "seller@example.com"} {
			if _, err := e.client.Transactions.Agree(t.Context(), tx.ID, escrow.AsCustomer(who)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := e.srv.FlushWebhooks(t.Context()); err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{}
	for _, id := range ids {
		want[fmt.Sprintf("%d create", id)], want[fmt.Sprintf("%d agree", id)] = true, true
	}
	// Both listeners' lines, until every event was printed by one of them.
	seen := map[string]int{}
	merged := make(chan string, 100)
	var readers sync.WaitGroup
	for _, l := range []*listener{l1, l2} {
		readers.Go(func() {
			for line := range l.stdout {
				merged <- line
			}
		})
	}
	timeout := time.After(15 * time.Second)
	for len(seen) < len(want) {
		select {
		case line := <-merged:
			var ev listenedEvent
			if err := json.Unmarshal([]byte(line), &ev); err != nil {
				t.Fatalf("%q: %v", line, err)
			}
			seen[fmt.Sprintf("%d %s", ev.TransactionID, ev.Event)]++
		case <-timeout:
			t.Fatalf("printed %v, want %v", seen, want)
		}
	}
	time.Sleep(100 * time.Millisecond) // a duplicate, if any, would come now
	var rest []string
	for _, l := range []*listener{l1, l2} {
		code, lines := l.stop() // what the readers above did not take
		if code != 0 {
			t.Errorf("exit %d", code)
		}
		rest = append(rest, lines...)
	}
	readers.Wait()
	close(merged)
	for line := range merged {
		rest = append(rest, line)
	}
	for _, line := range rest {
		var ev listenedEvent
		if err := json.Unmarshal([]byte(line), &ev); err == nil {
			seen[fmt.Sprintf("%d %s", ev.TransactionID, ev.Event)]++
		}
	}
	for k, n := range seen {
		if n != 1 || !want[k] {
			t.Errorf("%s printed %d times", k, n)
		}
	}
}

func TestWebhookStoreComesFromTheEnvironmentAndAPasswordInTheFlagIsWarnedOf(t *testing.T) {
	for _, tc := range []struct {
		env  string
		args []string
		want string
		warn bool
	}{
		{"", nil, "memory", false},
		{"sqlite:hooks.db", nil, "sqlite:hooks.db", false},
		{"sqlite:hooks.db", []string{"--store", "memory"}, "memory", false},
		{"", []string{"--store", "postgres://hooks:s3cret@db.example/hooks"}, "postgres://hooks:s3cret@db.example/hooks", true},
		{"", []string{"--store", "postgres://hooks@db.example/hooks"}, "postgres://hooks@db.example/hooks", false},
	} {
		t.Setenv(envWebhookStore, tc.env)
		var stderr bytes.Buffer
		fs, _, lf := listenFlagSet("escrow webhooks listen", &stderr)
		if _, err := parseFlags(fs, tc.args); err != nil {
			t.Fatal(err)
		}
		lf.storeFromEnvironment(fs, &stderr)
		warned := strings.Contains(stderr.String(), "warning: the password in --store is visible")
		if lf.store != tc.want || warned != tc.warn || strings.Contains(stderr.String(), "s3cret") {
			t.Errorf("%s=%q %v: store %q, warned %t (%s); want %q, %t", envWebhookStore, tc.env, tc.args, lf.store, warned, stderr.String(), tc.want, tc.warn)
		}
	}
}

func TestWebhooksAddTakesTheURLFromStandardInputToKeepItsSecretOffTheCommandLine(t *testing.T) {
	e := newEmulator(t)
	secret := webhook.NewSecret()
	withStdin(t, "https://market.example.com/escrow/"+secret+"\n")
	code, out, errOut := e.api(t, 2, "webhooks", "add", "-")
	if code != 0 || strings.Contains(out+errOut, secret) || !strings.Contains(out, "https://market.example.com/escrow/SECRET") || strings.Contains(errOut, "warning") {
		t.Fatalf("add -: exit %d:\n%s%s", code, out, errOut)
	}
	hooks, err := e.client.Webhooks.List(t.Context(), escrow.Me)
	if err != nil || len(hooks.Webhooks) != 1 || hooks.Webhooks[0].URL != "https://market.example.com/escrow/"+secret {
		t.Errorf("registered %+v, %v", hooks, err)
	}
	// On the command line it still works, with a warning.
	_, _, errOut = e.api(t, 2, "webhooks", "add", "https://market.example.com/other/"+secret)
	if !strings.Contains(errOut, "warning: the URL's delivery secret on the command line") || strings.Contains(errOut, secret) {
		t.Errorf("no warning, or the secret shown: %s", errOut)
	}
	withStdin(t, "not a url "+secret)
	if code, _, errOut := e.api(t, 2, "webhooks", "add", "-"); code != exitUsage || strings.Contains(errOut, secret) {
		t.Errorf("a bad URL on standard input: exit %d: %s", code, errOut)
	}
}

package escrowtest

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// The page itself is driven in headless Chromium by the uitest module (see its doc.go);
// these tests pin what the server does for it.

// TestUIIsServedOnRequestOnly: the page answers 404 unless WithUI is given; with it, the
// embedded files are served with headers that keep other sites from framing the page or
// injecting scripts into it.
func TestUIIsServedOnRequestOnly(t *testing.T) {
	off := newServer(t)
	if r := anonymous(t, off).must(http.StatusNotFound, http.MethodGet, UIPath, nil); !strings.Contains(r.str("message"), "WithUI") {
		t.Errorf("page without WithUI: %s", r.raw)
	}

	srv := newServer(t, WithUI())
	ctl := anonymous(t, srv)
	r := ctl.must(http.StatusOK, http.MethodGet, UIPath, nil)
	if !strings.HasPrefix(r.header.Get("Content-Type"), "text/html") || !strings.Contains(string(r.raw), `<script src="app.js" defer></script>`) {
		t.Errorf("page: %s %s", r.header, r.raw)
	}
	if csp := r.header.Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self'") || !strings.Contains(csp, "frame-ancestors 'none'") || r.header.Get("X-Frame-Options") != "DENY" {
		t.Errorf("headers: %v", r.header)
	}
	// The page arrives with its data: the list, and the transaction ?tx= names.
	if !strings.Contains(string(r.raw), `<script type="application/json" id="boot">{"version":`) || strings.Contains(string(r.raw), bootMarker) {
		t.Errorf("the page has no data: %s", r.raw)
	}
	for _, f := range []string{"app.js", "app.css"} {
		if r := ctl.must(http.StatusOK, http.MethodGet, UIPath+f, nil); len(r.raw) < 1000 {
			t.Errorf("%s: %d bytes", f, len(r.raw))
		}
	}
	if !strings.HasSuffix(srv.UIURL(), "/_emulator/ui/") || !strings.HasPrefix(srv.UIURL(), "https://127.0.0.1:") {
		t.Errorf("UIURL %s", srv.UIURL())
	}
	// Without the slash, the page is one redirect away.
	c := srv.Client()
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	resp, err := c.Get(strings.TrimSuffix(srv.UIURL(), "/"))
	must(t, err)
	resp.Body.Close()
	if resp.StatusCode != http.StatusMovedPermanently || resp.Header.Get("Location") != UIPath {
		t.Errorf("/_emulator/ui: %d %s", resp.StatusCode, resp.Header.Get("Location"))
	}
}

// TestUIArrivesWithItsData: the page holds the list and the transaction ?tx= names (the
// newest without it), as ?viewer= sees it, so that it shows them as soon as it has loaded; what a description
// holds cannot end the script element that carries them.
func TestUIArrivesWithItsData(t *testing.T) {
	w := newWorld(t, WithUI())
	id := w.k.create(set(brokered(), "description", `</script><script>alert(1)</script>`))
	page := func(query string) string {
		t.Helper()
		return string(anonymous(t, w.srv).must(http.StatusOK, http.MethodGet, UIPath+query, nil).raw)
	}
	island := func(html string) (boot struct {
		List   controlTransactions
		Detail *controlTransaction
	}) {
		t.Helper()
		_, rest, _ := strings.Cut(html, `<script type="application/json" id="boot">`)
		data, _, ok := strings.Cut(rest, "</script>")
		if !ok {
			t.Fatalf("no data in %s", html)
		}
		must(t, json.Unmarshal([]byte(data), &boot))
		return boot
	}
	if b := island(page("")); b.List.Total != 1 || b.List.Transactions[0].Description != `</script><script>alert(1)</script>` || b.Detail == nil || b.Detail.Transaction.ID != id {
		t.Errorf("without ?tx=, the list and the newest transaction: %+v", b)
	}
	b := island(page(fmt.Sprintf("?tx=%d&viewer=buyer@example.com", id)))
	if b.Detail == nil || b.Detail.Transaction.ID != id || b.Detail.Viewer != "buyer@example.com" || b.Detail.Transaction.Parties[1].Customer != hiddenCustomer {
		t.Errorf("with ?tx= and ?viewer=: %+v", b.Detail)
	}
	if b := island(page("?tx=999")); b.Detail != nil {
		t.Errorf("an unknown transaction: %+v", b.Detail)
	}
}

// TestControlRefusesChangesFromOtherSites: a browser's request from another site may not
// change anything (the page lives on the control API's origin); the emulator's own page,
// programs that send no browser headers, and reads from anywhere local are served.
func TestControlRefusesChangesFromOtherSites(t *testing.T) {
	srv := newServer(t, WithUI())
	origin := strings.TrimSuffix(srv.UIURL(), UIPath)
	send := func(method, path string, header map[string]string) int {
		t.Helper()
		req, err := http.NewRequest(method, origin+path, strings.NewReader(`{"email": "a@example.com"}`))
		must(t, err)
		for k, v := range header {
			req.Header.Set(k, v)
		}
		resp, err := srv.Client().Do(req)
		must(t, err)
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode
	}
	refused := []map[string]string{
		{"Sec-Fetch-Site": "cross-site"},
		{"Sec-Fetch-Site": "same-site"},
		{"Origin": "https://evil.example"},
		{"Origin": "https://127.0.0.1:1"},
	}
	for _, h := range refused {
		if got := send(http.MethodPost, "/_emulator/customers", h); got != http.StatusForbidden {
			t.Errorf("POST with %v: %d, want 403", h, got)
		}
		if got := send(http.MethodPost, "/_emulator/reset", h); got != http.StatusForbidden {
			t.Errorf("reset with %v: %d, want 403", h, got)
		}
	}
	if len(srv.Deliveries()) != 0 || srv.hasAccount("a@example.com") {
		t.Fatal("a refused request changed something")
	}
	for _, h := range []map[string]string{nil, {"Sec-Fetch-Site": "same-origin"}, {"Origin": origin}} {
		if got := send(http.MethodPost, "/_emulator/customers", h); got != http.StatusCreated {
			t.Errorf("POST with %v: %d, want 201", h, got)
		}
	}
	if got := send(http.MethodGet, "/_emulator/transactions", map[string]string{"Sec-Fetch-Site": "cross-site"}); got != http.StatusOK {
		t.Errorf("a read: %d", got)
	}
}

// TestEventsSayWhenSomethingChanged: the event stream sends a change event at once, then
// one after an API request, a control call that changes something and a webhook call.
func TestEventsSayWhenSomethingChanged(t *testing.T) {
	w := newWorld(t, withEventIdle(time.Minute)) // the stream stays open for the whole test
	hook := newReceiver(t, http.StatusOK)
	w.b.must(http.StatusOK, http.MethodPost, "customer/me/webhook", body{"url": hook.URL})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp := openEvents(ctx, t, w.srv)
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("events: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	lines := bufio.NewScanner(resp.Body)
	next := func(what string) string {
		t.Helper()
		for lines.Scan() {
			if data, ok := strings.CutPrefix(lines.Text(), "data: "); ok {
				return data
			}
		}
		t.Fatalf("no change event after %s: %v", what, lines.Err())
		return ""
	}
	seen := map[string]bool{next("connecting"): true}
	for _, change := range []struct {
		what string
		do   func()
	}{
		{"an API request", func() { w.b.create(merchandise()) }},
		{"a control call", func() { anonymous(t, w.srv).must(http.StatusOK, http.MethodDelete, "/_emulator/faults", nil) }},
	} {
		change.do()
		v := next(change.what)
		if seen[v] {
			t.Errorf("after %s the counter is still %s", change.what, v)
		}
		seen[v] = true
	}

	// A webhook call that ends counts as a change of its own.
	before, _ := w.srv.changes.next()
	w.b.create(merchandise())
	must(t, w.srv.FlushWebhooks(ctx))
	if after, _ := w.srv.changes.next(); after != before+2 {
		t.Errorf("a request and its webhook call moved the counter from %d to %d, want 2 changes", before, after)
	}
}

// withEventIdle sets how long an event stream waits for a change before it ends.
func withEventIdle(d time.Duration) Option {
	return func(c *config) { c.eventIdle = d }
}

// openEvents opens the event stream.
func openEvents(ctx context.Context, t *testing.T, srv *Server) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(srv.URL, versionRoot+"/")+"/_emulator/events", nil)
	must(t, err)
	resp, err := srv.Client().Do(req)
	must(t, err)
	return resp
}

// TestEventsEndWhenQuiet: a stream without a change ends, telling the browser when to
// reconnect, so that no request stays open for long (headless Chromium's virtual time
// waits for open requests to end).
func TestEventsEndWhenQuiet(t *testing.T) {
	srv := newServer(t, withEventIdle(20*time.Millisecond))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp := openEvents(ctx, t, srv)
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	must(t, err)
	if got := string(data); got != "retry: 1000\n\nevent: change\ndata: 0\n\n" {
		t.Errorf("a quiet stream: %q", got)
	}
}

// TestChangesWakeEveryWatcher: notify wakes all who wait and moves the counter on.
func TestChangesWakeEveryWatcher(t *testing.T) {
	c := newChanges()
	v0, ch1 := c.next()
	_, ch2 := c.next()
	c.notify()
	for i, ch := range []<-chan struct{}{ch1, ch2} {
		select {
		case <-ch:
		default:
			t.Errorf("watcher %d not woken", i)
		}
	}
	v1, ch3 := c.next()
	if v1 != v0+1 {
		t.Errorf("version %d after %d", v1, v0)
	}
	select {
	case <-ch3:
		t.Error("a new watcher is woken before the next change")
	default:
	}
}

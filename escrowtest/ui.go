package escrowtest

import (
	"context"
	"embed"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// The page at /_emulator/ui/: plain HTML, CSS and JavaScript embedded in the binary, no
// build step and nothing fetched from elsewhere, so it works offline. It reads the control
// API (GET /_emulator/transactions and /_emulator/transactions/{id}) and calls its
// endpoints for its controls, so the page can do nothing the control API cannot.
//
// The page arrives with its data: the list, and the transaction that ?tx= names (without
// it, the newest, which the page then follows as new ones arrive), as a JSON island the
// script renders before the page's load event. So a browser shows the data as soon as the
// page has loaded, and a screenshot taken then (chromium --screenshot) has it.
//
// Live updates are server-sent events, not polling: GET /_emulator/events sends a
// "change" event whenever an API request was served, a control endpoint changed something
// or a webhook call ended, and the page then reads again what it shows. Bursts are
// coalesced (at most one event per eventGap). A stream ends after a second without a
// change and the browser reconnects (retry: eventRetry), so that no request stays open
// for long: a client that waits for the network to go quiet, as headless Chromium's
// virtual time does, sees the page settle. The event's data is a counter, so a page that
// reconnects reads again only if something changed meanwhile.

//go:embed ui
var uiFiles embed.FS

// UIPath is where WithUI serves the page, on the emulator's own host.
const UIPath = controlRoot + "ui/"

// eventGap is the least time between two change events on one stream.
const eventGap = 150 * time.Millisecond

// defaultEventIdle is how long a stream waits for a change before it ends
// (config.eventIdle), and eventRetry how long the browser waits before it opens the next.
const (
	defaultEventIdle = time.Second
	eventRetry       = time.Second
)

// indexHTML is the page, with bootMarker where its data goes.
var indexHTML = func() string {
	data, err := uiFiles.ReadFile("ui/index.html")
	if err != nil || !strings.Contains(string(data), bootMarker) {
		panic("escrowtest: ui/index.html is missing or has no " + bootMarker)
	}
	return string(data)
}()

// uiHandler serves the embedded files below UIPath.
var uiHandler = func() http.Handler {
	sub, err := fs.Sub(uiFiles, "ui")
	if err != nil {
		panic(err) // the embedded tree always has ui/
	}
	return http.StripPrefix(UIPath, http.FileServerFS(sub))
}()

// serveUI serves GET /_emulator/ui/ when WithUI is given, and 404 otherwise.
func (e *Emulator) serveUI(w http.ResponseWriter, r *http.Request) {
	if !e.cfg.ui {
		notFound("the page is off: escrowtest.WithUI() turns it on (escrow emulator serves it)").response().write(w)
		return
	}
	h := w.Header()
	// Nothing but the page's own files, its own origin's JSON, and no framing: the page
	// holds controls, which another site must not be able to overlay.
	h.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'")
	h.Set("X-Frame-Options", "DENY")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", "no-cache")
	if r.URL.Path == UIPath {
		e.serveIndex(w, r)
		return
	}
	uiHandler.ServeHTTP(w, r)
}

// uiBoot is the data the page arrives with: what it would read first.
type uiBoot struct {
	// Version is the change counter the data is at least as new as.
	Version uint64              `json:"version"`
	List    controlTransactions `json:"list"`
	Detail  *controlTransaction `json:"detail,omitempty"`
	// The workbench's panels, so that they are in the page once it has loaded: the
	// standing faults, the newest requests, the accounts, and what Reach takes.
	Faults      controlFaults   `json:"faults"`
	Requests    controlRequests `json:"requests"`
	Accounts    controlAccounts `json:"accounts"`
	ReachStates []string        `json:"reach_states"`
}

// bootMarker is where index.html takes its data.
const bootMarker = "<!-- boot -->"

// serveIndex serves the page with its data: the list, and the transaction ?tx= names (the
// newest without it) as ?viewer= sees it. json.Marshal escapes <, > and &, so the data
// cannot end its script element.
func (e *Emulator) serveIndex(w http.ResponseWriter, r *http.Request) {
	version, _ := e.changes.next()
	boot := uiBoot{Version: version, List: e.listing("", "", defaultListLimit), Faults: e.faultList(),
		Requests: e.requestList(requestFilter{}, defaultRequestLimit), Accounts: e.accountList(defaultListLimit), ReachStates: ReachableStates}
	q := r.URL.Query()
	id, err := strconv.ParseInt(q.Get("tx"), 10, 64)
	if err != nil && len(boot.List.Transactions) > 0 {
		id = boot.List.Transactions[0].ID // without ?tx= the page follows the newest
	}
	if d, err := e.inspect(id, q.Get("viewer")); err == nil {
		boot.Detail = &d
	}
	data, err := json.Marshal(boot)
	if err != nil {
		data = []byte("{}") // wire structs always encode; the page then reads for itself
	}
	page := strings.Replace(indexHTML, bootMarker, `<script type="application/json" id="boot">`+string(data)+`</script>`, 1)
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	io.WriteString(w, page)
}

// serveEvents serves GET /_emulator/events: a server-sent event stream with one "change"
// event (data: a counter) at the start and whenever the emulator may have changed. It ends
// after a quiet second (the browser reconnects), when the client goes away or when the
// emulator closes.
func (e *Emulator) serveEvents(w http.ResponseWriter, r *http.Request) {
	rc := http.NewResponseController(w)
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	fmt.Fprintf(w, "retry: %d\n\n", eventRetry.Milliseconds())
	idle := time.NewTimer(e.cfg.eventIdle)
	defer idle.Stop()
	version, changed := e.changes.next()
	for {
		if _, err := fmt.Fprintf(w, "event: change\ndata: %d\n\n", version); err != nil || rc.Flush() != nil {
			return
		}
		if !e.awaitChange(r.Context(), changed, idle) {
			return
		}
		version, changed = e.changes.next()
	}
}

// awaitChange waits for a change, then a little more so that a burst is reported once; it
// reports false when the stream is to end instead: after a quiet period, when the client
// goes away or when the emulator closes.
func (e *Emulator) awaitChange(ctx context.Context, changed <-chan struct{}, idle *time.Timer) bool {
	idle.Reset(e.cfg.eventIdle)
	select {
	case <-changed:
	case <-idle.C:
		return false
	case <-ctx.Done():
		return false
	case <-e.done:
		return false
	}
	return e.sleep(ctx, eventGap)
}

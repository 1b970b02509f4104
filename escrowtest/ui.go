package escrowtest

import (
	"embed"
	"fmt"
	"io/fs"
	"net/http"
	"time"
)

// The page at /_emulator/ui/: plain HTML, CSS and JavaScript embedded in the binary, no
// build step and nothing fetched from elsewhere, so it works offline. It reads the control
// API (GET /_emulator/transactions and /_emulator/transactions/{id}) and calls its
// endpoints for its controls, so the page can do nothing the control API cannot.
//
// Live updates are server-sent events, not polling: GET /_emulator/events sends a
// "change" event whenever an API request was served, a control endpoint changed something
// or a webhook call ended, and the page then reads again what it shows. Bursts are
// coalesced (at most one event per eventGap), so a test suite hammering the emulator
// costs the page a few reads a second, not one per request.

//go:embed ui
var uiFiles embed.FS

// UIPath is where WithUI serves the page, on the emulator's own host.
const UIPath = controlRoot + "ui/"

// eventGap is the least time between two change events on one stream.
const eventGap = 150 * time.Millisecond

// eventKeepAlive is how often an idle stream sends a comment, so that proxies and the
// browser keep it open.
const eventKeepAlive = 20 * time.Second

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
	uiHandler.ServeHTTP(w, r)
}

// serveEvents serves GET /_emulator/events: a server-sent event stream with one "change"
// event (data: a counter) at the start and whenever the emulator may have changed. It
// ends when the client goes away or the emulator closes.
func (e *Emulator) serveEvents(w http.ResponseWriter, r *http.Request) {
	rc := http.NewResponseController(w)
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	keepAlive := time.NewTicker(eventKeepAlive)
	defer keepAlive.Stop()
	version, changed := e.changes.next()
	for {
		if _, err := fmt.Fprintf(w, "event: change\ndata: %d\n\n", version); err != nil {
			return
		}
		if rc.Flush() != nil {
			return
		}
		if !e.waitChange(r, changed, keepAlive, w) {
			return
		}
		// Coalesce a burst: wait a little, then report the state after it.
		if !e.sleep(r.Context(), eventGap) {
			return
		}
		version, changed = e.changes.next()
	}
}

// waitChange waits until changed is closed, sending keep-alive comments meanwhile; false
// when the stream should end.
func (e *Emulator) waitChange(r *http.Request, changed <-chan struct{}, keepAlive *time.Ticker, w http.ResponseWriter) bool {
	for {
		select {
		case <-changed:
			return true
		case <-r.Context().Done():
			return false
		case <-e.done:
			return false
		case <-keepAlive.C:
			if _, err := fmt.Fprint(w, ": keep-alive\n\n"); err != nil {
				return false
			}
			if http.NewResponseController(w).Flush() != nil {
				return false
			}
		}
	}
}

package escrowtest

import (
	"fmt"
	"net/http"
	"testing"
	"time"
)

func TestRateLimitHeadersOnEveryAnswer(t *testing.T) {
	w := newWorld(t)
	for _, tc := range []struct {
		c                  *client
		method, path, body string
	}{
		{w.b, http.MethodGet, "customer/me", ""},
		{w.b, http.MethodGet, "transaction/1", ""}, // 404
		{w.b, http.MethodPost, "transaction", "{"}, // 400
		{w.b, http.MethodGet, "customer", ""},      // 405
		{w.b, http.MethodPut, "nothing", ""},       // unknown route
		{anonymous(t, w.srv), http.MethodGet, "customer/me", ""},
	} {
		r := tc.c.do(tc.method, tc.path, tc.body)
		if r.header.Get("RateLimit-Remaining") != "999" || r.header.Get("RateLimit-Limit") != "1000" || r.header.Get("RateLimit-Reset") != "60" {
			t.Errorf("%s %s (%d): %v", tc.method, tc.path, r.status, r.header)
		}
	}
}

func TestRateLimitPerAccountAndEndpoint(t *testing.T) {
	w := newWorld(t, WithRateLimit(2, time.Minute))
	id := w.b.create(merchandise())
	get := txPath(id)
	for i, want := range []string{"1", "0"} {
		r := w.b.must(http.StatusOK, http.MethodGet, get, nil)
		if r.header.Get("RateLimit-Remaining") != want {
			t.Errorf("request %d: remaining %s", i, r.header.Get("RateLimit-Remaining"))
		}
	}
	r := w.b.must(http.StatusTooManyRequests, http.MethodGet, get, nil)
	if r.str("error") != "rate_limited" || r.header.Get("Retry-After") != "60" || r.header.Get("RateLimit-Remaining") != "0" {
		t.Errorf("429: %v %s", r.header, r.raw)
	}
	// Another endpoint, another account, another transaction id on the same template.
	w.b.must(http.StatusOK, http.MethodGet, "customer/me", nil)
	w.s.must(http.StatusOK, http.MethodGet, get, nil)
	w.b.must(http.StatusTooManyRequests, http.MethodGet, txPath(w.b.create(merchandise())), nil)
	// The window runs on the emulator's clock.
	w.srv.Advance(30 * time.Second)
	if r := w.b.must(http.StatusTooManyRequests, http.MethodGet, get, nil); r.header.Get("RateLimit-Reset") != "30" {
		t.Errorf("reset after 30 s: %s", r.header.Get("RateLimit-Reset"))
	}
	w.srv.Advance(30 * time.Second)
	w.b.must(http.StatusOK, http.MethodGet, get, nil)
	// A 429 changes nothing.
	w.b.must(http.StatusCreated, http.MethodPost, "transaction", merchandise())
	w.b.must(http.StatusCreated, http.MethodPost, "transaction", merchandise())
	w.b.must(http.StatusTooManyRequests, http.MethodPost, "transaction", merchandise())
	if n := len(w.s.must(http.StatusOK, http.MethodGet, "transaction?per_page=100", nil).list("transactions")); n != 4 {
		t.Errorf("%d transactions", n)
	}
}

func TestSetRateLimit(t *testing.T) {
	w := newWorld(t)
	w.srv.SetRateLimit(1, time.Hour)
	r := w.b.must(http.StatusOK, http.MethodGet, "customer/me", nil)
	if r.header.Get("RateLimit-Limit") != "1" || r.header.Get("RateLimit-Reset") != fmt.Sprint(3600) {
		t.Errorf("headers %v", r.header)
	}
	w.b.must(http.StatusTooManyRequests, http.MethodGet, "customer/me", nil)
	w.srv.SetRateLimit(0, 0)
	for range 3 {
		if r := w.b.must(http.StatusOK, http.MethodGet, "customer/me", nil); r.header.Get("RateLimit-Remaining") != "" {
			t.Errorf("headers with limits off: %v", r.header)
		}
	}
	w.srv.Reset() // back to the configured default
	acct := w.srv.AddCustomer("buyer@example.com")
	if r := as(t, w.srv, acct).must(http.StatusOK, http.MethodGet, "customer/me", nil); r.header.Get("RateLimit-Limit") != "1000" {
		t.Errorf("after Reset: %v", r.header)
	}
}

// TestRateLimiterDoesNotGrowWithMethods: any token is a valid HTTP method, and each used
// to open a rate-limit window of its own; an anonymous client could grow the map
// without bound.
func TestRateLimiterDoesNotGrowWithMethods(t *testing.T) {
	w := newWorld(t)
	for i := range 200 {
		r := anonymous(t, w.srv).do(fmt.Sprintf("M%d", i), "transaction/x", "")
		if r.status != http.StatusNotFound && r.status != http.StatusMethodNotAllowed {
			t.Fatalf("method M%d: %d", i, r.status)
		}
	}
	w.srv.mu.Lock()
	n := len(w.srv.limiter.windows)
	w.srv.mu.Unlock()
	if n > 2 { // the world's setup opens none; "OTHER *" of the anonymous account, at most one more
		t.Errorf("%d rate-limit windows after 200 unknown methods", n)
	}
}

func TestRateLimiterForgetsEndedWindows(t *testing.T) {
	l := newRateLimiter(10, time.Minute)
	start := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range maxWindows {
		l.take(rateKey{account: int64(i), endpoint: "GET /x"}, start)
	}
	l.take(rateKey{account: -1, endpoint: "GET /x"}, start.Add(2*time.Minute))
	if len(l.windows) != 1 {
		t.Errorf("%d windows kept after every other one ended", len(l.windows))
	}
}

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

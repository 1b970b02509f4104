package escrowtest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestControlAPI(t *testing.T) {
	srv := newServer(t)
	ctl := anonymous(t, srv)

	r := ctl.must(http.StatusCreated, http.MethodPost, "/_emulator/customers", body{"email": "buyer@example.com"})
	buyer := Account{ID: r.id("id"), Email: r.str("email"), APIKey: r.str("api_key")}
	if buyer.ID != firstCustomerID || buyer.Email != "buyer@example.com" || buyer.APIKey == "" || r.str("password") == "" {
		t.Errorf("customer: %s", r.raw)
	}
	r = ctl.must(http.StatusCreated, http.MethodPost, "/_emulator/customers", body{"email": "partner@example.com", "partner": true})
	partner := as(t, srv, Account{Email: "partner@example.com", APIKey: r.str("api_key")})
	partner.must(http.StatusOK, http.MethodGet, "partner/transactions", nil)
	ctl.must(http.StatusCreated, http.MethodPost, "/_emulator/customers", body{"email": "seller@example.com"})
	seller := as(t, srv, srv.AddCustomer("seller@example.com"))
	b := as(t, srv, buyer)

	hook := newReceiver(t, http.StatusOK)
	b.must(http.StatusOK, http.MethodPost, "customer/me/webhook", body{"url": hook.URL})
	id := b.create(merchandise())
	path := fmt.Sprintf("/_emulator/transactions/%d/", id)
	if r := ctl.must(http.StatusBadRequest, http.MethodPost, path+"approve_payment", nil); r.str("state") != "awaiting_agreement" {
		t.Errorf("approve before agreement: %s", r.raw)
	}
	seller.act(http.StatusOK, id, 0, action("agree"))
	ctl.must(http.StatusOK, http.MethodPost, path+"reject_payment", nil)
	if r := ctl.must(http.StatusOK, http.MethodPost, path+"approve_payment", nil); r.get("ok") != true {
		t.Errorf("approve: %s", r.raw)
	}
	if r := ctl.must(http.StatusOK, http.MethodGet, path+"ledger", nil); r.str("in") != "1032.50" || r.str("held") != "1032.50" || r.str("out") != "0.00" {
		t.Errorf("ledger: %s", r.raw)
	}
	ctl.must(http.StatusNotFound, http.MethodPost, "/_emulator/transactions/999/approve_payment", nil)
	ctl.must(http.StatusNotFound, http.MethodGet, "/_emulator/transactions/999/ledger", nil)
	ctl.must(http.StatusNotFound, http.MethodPost, "/_emulator/transactions/x/approve_payment", nil)

	seller.act(http.StatusOK, id, 0, action("ship"))
	b.act(http.StatusOK, id, 0, action("receive"))
	if r := ctl.must(http.StatusOK, http.MethodPost, "/_emulator/clock/advance", body{"seconds": 3 * 86400}); r.str("now") != "2024-05-04T12:00:00.000000+00:00" {
		t.Errorf("advance: %s", r.raw)
	}
	if r := b.must(http.StatusOK, http.MethodGet, txPath(id), nil); r.get("items.0.status.accepted") != true {
		t.Errorf("not accepted after the clock moved: %s", r.raw)
	}

	r = ctl.must(http.StatusOK, http.MethodGet, "/_emulator/webhook_deliveries?flush=true", nil)
	var events []string
	for _, d := range r.list("deliveries") {
		m := d.(map[string]any)
		if !slices.Equal(keys(m), []string{"error", "event", "event_type", "latency_ms", "status_code", "transaction_id", "url"}) || m["url"] != hook.URL || m["status_code"] != 200.0 {
			t.Errorf("delivery %v", m)
		}
		events = append(events, m["event"].(string))
	}
	if got := strings.Join(events, " "); got != "create agree payment_rejected payment_received payment_approved ship receive accept" {
		t.Errorf("events: %s", got)
	}

	ctl.must(http.StatusOK, http.MethodPost, "/_emulator/rate_limit", body{"limit": 1, "window_seconds": 10})
	b.must(http.StatusOK, http.MethodGet, "customer/me", nil)
	if r := b.must(http.StatusTooManyRequests, http.MethodGet, "customer/me", nil); r.header.Get("RateLimit-Reset") != "10" {
		t.Errorf("reset: %v", r.header)
	}
	ctl.must(http.StatusOK, http.MethodPost, "/_emulator/rate_limit", body{"limit": 0})
	b.must(http.StatusOK, http.MethodGet, "customer/me", nil)

	ctl.must(http.StatusOK, http.MethodPost, "/_emulator/faults", body{"endpoint": "GET /customer/{customer_id}", "status": 503, "probability": 1})
	b.must(http.StatusServiceUnavailable, http.MethodGet, "customer/me", nil)
	ctl.must(http.StatusOK, http.MethodDelete, "/_emulator/faults", nil)
	ctl.must(http.StatusOK, http.MethodPost, "/_emulator/faults", body{"endpoint": "GET /customer/{customer_id}", "drop": "before", "latency_ms": 1})
	if _, err := rawDo(t, b, http.MethodGet, "customer/me", ""); err == nil {
		t.Error("not dropped")
	}
	ctl.must(http.StatusOK, http.MethodDelete, "/_emulator/faults", nil)
	ctl.must(http.StatusOK, http.MethodPost, "/_emulator/faults", body{"endpoint": "GET /customer/{customer_id}", "drop": "after", "latency_after_ms": 1})
	if _, err := rawDo(t, b, http.MethodGet, "customer/me", ""); err == nil {
		t.Error("not dropped")
	}
	ctl.must(http.StatusOK, http.MethodDelete, "/_emulator/faults", nil)

	ctl.must(http.StatusOK, http.MethodPost, "/_emulator/reset", nil)
	b.must(http.StatusUnauthorized, http.MethodGet, "customer/me", nil)
	if r := ctl.must(http.StatusOK, http.MethodGet, "/_emulator/webhook_deliveries", nil); len(r.list("deliveries")) != 0 {
		t.Errorf("deliveries after reset: %s", r.raw)
	}
	if r := ctl.must(http.StatusCreated, http.MethodPost, "/_emulator/customers", body{"email": "buyer@example.com"}); r.id("id") != firstCustomerID {
		t.Errorf("ids restart after reset: %s", r.raw)
	}
	if got := srv.Now(); !got.Equal(testStart) {
		t.Errorf("clock after reset: %v", got)
	}
}

func TestControlAPIValidation(t *testing.T) {
	srv := newServer(t)
	ctl := anonymous(t, srv)
	tests := []struct {
		method, path, body string
		want               int
		paths              string
	}{
		{http.MethodPost, "/_emulator/customers", `{}`, 422, "email"},
		{http.MethodPost, "/_emulator/customers", `{"email": ""}`, 422, "email"},
		{http.MethodPost, "/_emulator/customers", `{"email": "x", "partner": "yes"}`, 422, "email partner"},
		{http.MethodPost, "/_emulator/customers", `{"email":`, 400, ""},
		{http.MethodPost, "/_emulator/clock/advance", `{}`, 422, "seconds"},
		{http.MethodPost, "/_emulator/clock/advance", `{"seconds": -1}`, 422, "seconds"},
		{http.MethodPost, "/_emulator/clock/advance", `{"seconds": 1e20}`, 422, "seconds"},
		{http.MethodPost, "/_emulator/rate_limit", `{"limit": -1, "window_seconds": 0}`, 422, "limit window_seconds"},
		{http.MethodPost, "/_emulator/faults", `{}`, 422, "endpoint"},
		{http.MethodPost, "/_emulator/faults", `{"endpoint": "*", "status": 200, "probability": 2, "drop": "sideways", "latency_ms": -1, "latency_after_ms": -1}`, 422, "drop latency_after_ms latency_ms probability status"},
		{http.MethodPost, "/_emulator/faults", `{"endpoint": "*", "status": 500, "drop": "after"}`, 422, "all"},
		{http.MethodPost, "/_emulator/faults", `{"endpoint": "*"}`, 422, "all"},
		{http.MethodGet, "/_emulator/webhook_deliveries?flush=maybe", ``, 422, "flush"},
		{http.MethodGet, "/_emulator/nothing", ``, 404, ""},
		{http.MethodGet, "/_emulator/customers", ``, 404, ""},
	}
	for _, tc := range tests {
		r := ctl.must(tc.want, tc.method, tc.path, tc.body)
		if got := strings.Join(r.errorPaths(), " "); got != tc.paths {
			t.Errorf("%s %s: %s", tc.path, tc.body, r.raw)
		}
	}
}

// TestControlAPIIsLoopbackOnly serves the emulator to a request from another address.
func TestControlAPIIsLoopbackOnly(t *testing.T) {
	e := NewEmulator(WithClock(testStart))
	defer e.Close()
	for _, remote := range []string{"192.0.2.1:1234", "[2001:db8::1]:80", "garbage"} {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest(http.MethodPost, "/_emulator/customers", strings.NewReader(`{"email":"a@example.com"}`))
		req.RemoteAddr, req.Host = remote, "localhost"
		e.ServeHTTP(rec, req)
		if rec.Code != http.StatusForbidden {
			t.Errorf("%s: %d %s", remote, rec.Code, rec.Body)
		}
	}
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodPost, "/_emulator/customers", strings.NewReader(`{"email":"a@example.com"}`))
	req.RemoteAddr, req.Host = "[::1]:5000", "localhost"
	e.ServeHTTP(rec, req)
	if rec.Code != http.StatusCreated {
		t.Errorf("::1: %d %s", rec.Code, rec.Body)
	}
}

func TestControlFlushWaitsForDeliveries(t *testing.T) {
	release := make(chan struct{})
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-release
	}))
	defer slow.Close()
	w := newWorld(t)
	w.b.must(http.StatusOK, http.MethodPost, "customer/me/webhook", body{"url": slow.URL})
	w.b.create(merchandise())
	go func() { time.Sleep(5 * time.Millisecond); close(release) }()
	if r := anonymous(t, w.srv).must(http.StatusOK, http.MethodGet, "/_emulator/webhook_deliveries?flush=1", nil); len(r.list("deliveries")) != 1 {
		t.Errorf("after flush: %s", r.raw)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	must(t, w.srv.FlushWebhooks(ctx))
}

// TestControlIndex: GET /_emulator/ lists the control endpoints from the list the control
// API dispatches on; every one is served, and the package comment names each.
func TestControlIndex(t *testing.T) {
	w := newWorld(t)
	ctl := anonymous(t, w.srv)
	r := ctl.must(http.StatusOK, http.MethodGet, "/_emulator/", nil)
	var listed struct{ Endpoints []ControlEndpoint }
	must(t, json.Unmarshal(r.raw, &listed))
	if !slices.Equal(listed.Endpoints, ControlEndpoints()) || len(listed.Endpoints) != len(controlRoutes)+1 {
		t.Errorf("index: %s", r.raw)
	}
	doc, err := os.ReadFile("doc.go")
	must(t, err)
	for _, ep := range ControlEndpoints() {
		if !regexp.MustCompile(`(?m)^//\s+` + ep.Method + `\s+` + regexp.QuoteMeta(ep.Path) + `(\s|$)`).Match(doc) {
			t.Errorf("the package comment does not list %s %s", ep.Method, ep.Path)
		}
		if strings.Contains(ep.Answer, "text/event-stream") {
			continue // the stream never ends: TestEventsSayWhenSomethingChanged reads it
		}
		path := strings.ReplaceAll(ep.Path, "{id}", "999")
		if r := ctl.do(ep.Method, path, "{}"); strings.Contains(string(r.raw), "no control endpoint") {
			t.Errorf("%s %s is listed but not served: %s", ep.Method, ep.Path, r.raw)
		}
	}
	if r := ctl.must(http.StatusNotFound, http.MethodGet, "/_emulator/nothing", nil); !strings.Contains(r.str("message"), "GET /_emulator/ lists them") {
		t.Errorf("unknown: %s", r.raw)
	}
}

package escrowtest

import (
	"bytes"
	"errors"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"
)

// TestControlClientDrivesTheEmulator: every method of the control client reaches its
// endpoint and answers what the emulator's own methods answer.
func TestControlClientDrivesTheEmulator(t *testing.T) {
	w := newWorld(t)
	ctx := t.Context()
	cc, err := NewControlClient(w.srv.URL, w.srv.Client())
	if err != nil {
		t.Fatal(err)
	}
	if eps, err := cc.Endpoints(ctx); err != nil || !reflect.DeepEqual(eps, ControlEndpoints()) {
		t.Fatalf("Endpoints: %v, %v", eps, err)
	}

	a, err := cc.AddCustomer(ctx, "new@example.com", true)
	if err != nil || a.Email != "new@example.com" || a.APIKey == "" || a.ID == 0 {
		t.Fatalf("AddCustomer: %+v, %v", a, err)
	}
	as(t, w.srv, a).must(http.StatusOK, http.MethodGet, "partner/customers", nil) // a partner's endpoint

	id := w.b.create(merchandise())
	w.s.act(http.StatusOK, id, 0, action("agree"))
	if err := cc.ApprovePayment(ctx, id); err != nil {
		t.Fatalf("ApprovePayment: %v", err)
	}
	want, _ := w.srv.Ledger(id)
	if l, err := cc.Ledger(ctx, id); err != nil || l != want || l.Held == "0.00" {
		t.Errorf("Ledger: %+v, %v; want %+v with money held", l, err, want)
	}
	wantSteps, _ := w.srv.NextSteps(id)
	if p, err := cc.NextSteps(ctx, id); err != nil || !reflect.DeepEqual(p, wantSteps) {
		t.Errorf("NextSteps: %+v, %v; want %+v", p, err, wantSteps)
	}

	before := w.srv.Now()
	m, err := cc.Advance(ctx, 48*time.Hour)
	if err != nil || !w.srv.Now().Equal(before.Add(48*time.Hour)) || m.Now != formatTime(w.srv.Now()) {
		t.Errorf("Advance: %+v, %v; the clock went from %v to %v", m, err, before, w.srv.Now())
	}

	if err := cc.InjectFault(ctx, Fault{Endpoint: "GET /customer/{id}", Status: http.StatusServiceUnavailable}); err != nil {
		t.Fatalf("InjectFault: %v", err)
	}
	w.b.must(http.StatusServiceUnavailable, http.MethodGet, "customer/me", nil)
	if err := cc.ClearFaults(ctx); err != nil {
		t.Fatalf("ClearFaults: %v", err)
	}
	w.b.must(http.StatusOK, http.MethodGet, "customer/me", nil)

	if err := cc.SetRateLimit(ctx, 1, time.Minute); err != nil {
		t.Fatalf("SetRateLimit: %v", err)
	}
	w.b.must(http.StatusOK, http.MethodGet, "customer/me", nil)
	w.b.must(http.StatusTooManyRequests, http.MethodGet, "customer/me", nil)
	if err := cc.SetRateLimit(ctx, 0, time.Minute); err != nil {
		t.Fatalf("SetRateLimit off: %v", err)
	}

	if d, err := cc.Deliveries(ctx, true); err != nil || len(d) != len(w.srv.Deliveries()) {
		t.Errorf("Deliveries: %d, %v; the emulator has %d", len(d), err, len(w.srv.Deliveries()))
	}

	if err := cc.Reset(ctx); err != nil {
		t.Fatalf("Reset: %v", err)
	}
	w.b.must(http.StatusUnauthorized, http.MethodGet, "customer/me", nil)
}

// TestControlClientErrors: a refusal is a *ControlError with the status and what the
// emulator said, field by field for a refused fault; a URL that names no emulator is
// ErrControlURL.
func TestControlClientErrors(t *testing.T) {
	srv := newServer(t)
	cc, err := NewControlClient(srv.URL, srv.Client())
	if err != nil {
		t.Fatal(err)
	}
	var ce *ControlError
	if err := cc.ApprovePayment(t.Context(), 424242); !errors.As(err, &ce) || ce.StatusCode != http.StatusNotFound || ce.Code != "not_found" {
		t.Errorf("approving an unknown transaction: %v", err)
	}
	err = cc.InjectFault(t.Context(), Fault{Endpoint: "GET /transaction/{id}", Status: 200})
	if !errors.As(err, &ce) || ce.StatusCode != http.StatusUnprocessableEntity || len(ce.Fields) == 0 || ce.Fields[0] != "status: must be between 400 and 599" {
		t.Errorf("a fault with status 200: %#v", err)
	}
	for _, u := range []string{"", "127.0.0.1:8443", "ftp://127.0.0.1/", "https:///x"} {
		if _, err := NewControlClient(u, srv.Client()); !errors.Is(err, ErrControlURL) {
			t.Errorf("NewControlClient(%q): %v, want ErrControlURL", u, err)
		}
	}
}

// TestControlClientDrivesTheWorkbench: the workbench's methods of the control client
// answer what the emulator's own methods answer.
func TestControlClientDrivesTheWorkbench(t *testing.T) {
	w := newWorld(t)
	ctx := t.Context()
	cc, err := NewControlClient(w.srv.URL, w.srv.Client())
	must(t, err)
	id := w.b.create(merchandise())
	hook := newReceiver(t, http.StatusOK)
	w.b.must(http.StatusOK, http.MethodPost, "customer/me/webhook", body{"url": hook.URL})

	if p, err := cc.Reach(ctx, id, "in_inspection"); err != nil || len(p.Steps) == 0 || p.Steps[0].Action != "accept" {
		t.Errorf("Reach: %+v, %v", p, err)
	}
	if err := cc.Trigger(ctx, id, "receive"); err != nil {
		t.Errorf("Trigger: %v", err)
	}
	var ce *ControlError
	if _, err := cc.Reach(ctx, id, "funded"); !errors.As(err, &ce) || ce.StatusCode != http.StatusBadRequest {
		t.Errorf("Reach backwards: %v", err)
	}
	if rs, err := cc.Requests(ctx, RequestQuery{Account: "buyer", Status: "2xx", Limit: 1}); err != nil || len(rs) != 1 || rs[0].Endpoint != "POST /customer/{customer_id}/webhook" {
		t.Errorf("Requests: %+v, %v", rs, err)
	}
	must(t, cc.InjectFault(ctx, Fault{Endpoint: "WEBHOOK *", Latency: time.Millisecond, Probability: 0.25}))
	fs, err := cc.Faults(ctx)
	if err != nil || !reflect.DeepEqual(fs, w.srv.Faults()) {
		t.Errorf("Faults: %+v, %v; want %+v", fs, err, w.srv.Faults())
	}
	must(t, cc.RemoveFault(ctx, fs[0].ID))
	if len(w.srv.Faults()) != 0 {
		t.Error("RemoveFault left the fault")
	}
	if as, total, err := cc.Accounts(ctx, 2); err != nil || total != 5 || len(as) != 2 || as[0].Email != "stranger@example.com" {
		t.Errorf("Accounts: %+v %d, %v", as, total, err)
	}

	var doc bytes.Buffer
	must(t, cc.Export(ctx, &doc))
	other := newServer(t)
	oc, err := NewControlClient(other.URL, other.Client())
	must(t, err)
	must(t, oc.Import(ctx, bytes.NewReader(doc.Bytes())))
	want, _ := w.srv.NextSteps(id)
	if p, err := other.NextSteps(id); err != nil || !reflect.DeepEqual(p, want) {
		t.Errorf("after Import: %+v, %v; want %+v", p, err, want)
	}
	if err := oc.Import(ctx, strings.NewReader(`{"version": 0}`)); !errors.As(err, &ce) || ce.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(ce.Message, "version") {
		t.Errorf("Import of another version: %v", err)
	}
}

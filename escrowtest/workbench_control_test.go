package escrowtest

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// TestControlStateMovesAnEmulator: GET /_emulator/state from one emulator, PUT into
// another, moves everything; garbage, a document of another version and a broken one are
// refused with a 4xx that says why, and change nothing.
func TestControlStateMovesAnEmulator(t *testing.T) {
	w := newWorld(t)
	id, _ := w.funded(merchandise())
	doc := anonymous(t, w.srv).must(http.StatusOK, http.MethodGet, "/_emulator/state", nil)

	other := newServer(t)
	keep := other.AddCustomer("keep@example.com")
	ctl := anonymous(t, other)
	for body, says := range map[string]string{
		"garbage":        "not a JSON object",
		`{"version": 7}`: "version: 7",
		`[1, 2]`:         "not a JSON object",
		strings.Replace(string(doc.raw), `"currency": "usd"`, `"currency": "zzz"`, 1): `currency "zzz"`,
	} {
		r := ctl.must(http.StatusUnprocessableEntity, http.MethodPut, "/_emulator/state", body)
		if r.str("error") != "invalid_snapshot" || !strings.Contains(r.str("message"), says) {
			t.Errorf("PUT %.30q: %s, want it to say %q", body, r.raw, says)
		}
	}
	as(t, other, keep).must(http.StatusOK, http.MethodGet, "customer/me", nil) // still there

	ctl.must(http.StatusOK, http.MethodPut, "/_emulator/state", string(doc.raw))
	as(t, other, w.buyer).must(http.StatusOK, http.MethodGet, txPath(id), nil)
	as(t, other, keep).must(http.StatusUnauthorized, http.MethodGet, "customer/me", nil)
	if again := ctl.must(http.StatusOK, http.MethodGet, "/_emulator/state", nil); again.str("clock.now") != doc.str("clock.now") || len(again.list("transactions")) != 1 {
		t.Errorf("the state moved is not the state read: %s", again.raw)
	}
}

// TestControlTriggerDeliversAgain: an event the transaction had goes again to the
// parties' receivers, marked replay; one it did not have, or with no receiver, is refused.
func TestControlTriggerDeliversAgain(t *testing.T) {
	w := newWorld(t)
	id := w.b.create(merchandise())
	ctl := anonymous(t, w.srv)
	r := ctl.must(http.StatusBadRequest, http.MethodPost, fmt.Sprintf("/_emulator/transactions/%d/trigger", id), body{"event": "create"})
	if !strings.Contains(r.str("message"), "no party of transaction") {
		t.Errorf("trigger without receivers: %s", r.raw)
	}
	hook := newReceiver(t, http.StatusOK)
	w.s.must(http.StatusOK, http.MethodPost, "customer/me/webhook", body{"url": hook.URL})
	w.s.act(http.StatusOK, id, 0, action("agree"))
	flush(t, w.srv)
	ctl.must(http.StatusOK, http.MethodPost, fmt.Sprintf("/_emulator/transactions/%d/trigger", id), body{"event": "agree"})
	flush(t, w.srv)
	if got := hook.events(); got != "agree agree" {
		t.Errorf("the receiver got %q, want the agree event twice", got)
	}
	if ds := w.srv.Deliveries(); len(ds) != 2 || ds[0].Replay || !ds[1].Replay {
		t.Errorf("deliveries %+v: the second is the replay", ds)
	}
	for event, status := range map[string]int{"ship": http.StatusUnprocessableEntity, "": http.StatusUnprocessableEntity} {
		r := ctl.must(status, http.MethodPost, fmt.Sprintf("/_emulator/transactions/%d/trigger", id), body{"event": event})
		if event != "" && !strings.Contains(string(r.raw), "its timeline holds [create agree]") {
			t.Errorf("trigger %q: %s", event, r.raw)
		}
	}
	ctl.must(http.StatusNotFound, http.MethodPost, "/_emulator/transactions/9/trigger", body{"event": "agree"})
}

// TestControlFaultsOneByOne: the faults standing are listed with ids; one is removed by
// its id, the other keeps firing.
func TestControlFaultsOneByOne(t *testing.T) {
	w := newWorld(t)
	ctl := anonymous(t, w.srv)
	ctl.must(http.StatusOK, http.MethodPost, "/_emulator/faults", body{"endpoint": "GET /customer/{id}", "status": 503})
	ctl.must(http.StatusOK, http.MethodPost, "/_emulator/faults", body{"endpoint": "POST *", "drop": "after", "probability": 0.5})
	r := ctl.must(http.StatusOK, http.MethodGet, "/_emulator/faults", nil)
	if got := string(r.raw); !strings.Contains(got, `{"id":1,"endpoint":"GET /customer/{id}","status":503}`) || !strings.Contains(got, `{"id":2,"endpoint":"POST *","probability":0.5,"drop":"after"}`) {
		t.Errorf("faults: %s", got)
	}
	ctl.must(http.StatusOK, http.MethodDelete, "/_emulator/faults/2", nil)
	ctl.must(http.StatusNotFound, http.MethodDelete, "/_emulator/faults/2", nil)
	ctl.must(http.StatusNotFound, http.MethodDelete, "/_emulator/faults/x", nil)
	if fs := w.srv.Faults(); len(fs) != 1 || fs[0].ID != 1 {
		t.Errorf("after removing fault 2: %+v", fs)
	}
	w.b.must(http.StatusServiceUnavailable, http.MethodGet, "customer/me", nil)
}

// TestControlAccountsShowNoCredential: the accounts are listed with partner approval,
// keys by their last four characters and webhooks masked.
func TestControlAccountsShowNoCredential(t *testing.T) {
	w := newWorld(t)
	secret := "Zq3xT9vLm2Rk8WpB4nYc7HdJ"
	w.p.must(http.StatusOK, http.MethodPost, "customer/me/webhook", body{"url": "https://hooks.example.com/in/" + secret})
	r := anonymous(t, w.srv).must(http.StatusOK, http.MethodGet, "/_emulator/accounts", nil)
	for _, a := range []Account{w.buyer, w.seller, w.broker, w.partner, w.stranger} {
		if strings.Contains(string(r.raw), a.APIKey) || strings.Contains(string(r.raw), a.Password) {
			t.Errorf("the accounts show %s's key or password", a.Email)
		}
	}
	if strings.Contains(string(r.raw), secret) || !strings.Contains(string(r.raw), "https://hooks.example.com/in/") {
		t.Errorf("the webhook is not shown masked: %s", r.raw)
	}
	if r.str("accounts.0.email") != "stranger@example.com" || r.get("accounts.1.partner") != true || r.str("accounts.1.api_keys.0.last_four") != w.partner.APIKey[len(w.partner.APIKey)-4:] {
		t.Errorf("accounts: %s", r.raw)
	}
}

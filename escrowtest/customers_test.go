package escrowtest

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
)

func TestCreateCustomer(t *testing.T) {
	w := newWorld(t)
	r := w.p.must(http.StatusOK, http.MethodPost, "customer", body{
		"email": "new@example.com", "first_name": "Ada", "last_name": "Lovelace", "phone_number": "+44 20 0000",
		"address":                  body{"line1": "1 Street", "city": "London", "country": "gb", "post_code": "N1"},
		"disbursement_methods":     []any{body{"type": "wire_transfer_international", "account_name": "Ada", "bank_name": "B", "bank_swift_code": "S", "bank_iban": "GB1"}},
		"identification_documents": []any{body{"type": "passport", "value": "123", "country": "GB"}},
	})
	if r.str("email") != "new@example.com" || r.str("display_name") != "Ada Lovelace" || r.str("address.country") != "GB" || r.str("disbursement_methods.0.type") != "wire_transfer_international" {
		t.Errorf("created: %s", r.raw)
	}
	// The account has no credentials until someone gives it some.
	ada := as(t, w.srv, w.srv.AddCustomer("new@example.com"))
	if r := ada.must(http.StatusOK, http.MethodGet, "customer/me/identification-documents", nil); r.str("identification_documents.0.type") != "passport" {
		t.Errorf("documents: %s", r.raw)
	}
	if r := w.b.must(http.StatusOK, http.MethodGet, "customer/me/identification-documents", nil); len(r.list("identification_documents")) != 0 {
		t.Errorf("no documents: %s", r.raw)
	}
	w.b.must(http.StatusForbidden, http.MethodGet, fmt.Sprintf("customer/%d/identification-documents", r.id("id")), nil)

	// An e-mail that has an account, in any case: 403.
	for _, email := range []string{"new@example.com", "Seller@Example.com"} {
		if r := w.p.must(http.StatusForbidden, http.MethodPost, "customer", body{"email": email}); !strings.Contains(r.str("message"), "already exists") {
			t.Errorf("%s: %s", email, r.raw)
		}
	}
	for raw, paths := range map[string]string{
		`{}`:                          "email",
		`{"email": "not-an-address"}`: "email",
		`{"email": "x@example.com", "first_name": 1}`:                           "first_name",
		`{"email": "x@example.com", "address": "here"}`:                         "address",
		`{"email": "x@example.com", "address": {"country": "Narnia"}}`:          "address.country",
		`{"email": "x@example.com", "disbursement_methods": [{"type": "ach"}]}`: "disbursement_methods.0.account_name disbursement_methods.0.account_type disbursement_methods.0.bank_aba_routing_number disbursement_methods.0.bank_account_number disbursement_methods.0.bank_name",
		`{"email": "x@example.com", "identification_documents": [3]}`:           "identification_documents.0",
	} {
		if got := strings.Join(w.p.must(http.StatusUnprocessableEntity, http.MethodPost, "customer", raw).errorPaths(), " "); got != paths {
			t.Errorf("%s: %s", raw, got)
		}
	}
	w.p.must(http.StatusOK, http.MethodPost, "customer", body{"email": "x@example.com"}) // nothing was half-created
}

func TestWebhookRegistration(t *testing.T) {
	w := newWorld(t)
	r := w.b.must(http.StatusOK, http.MethodPost, "customer/me/webhook", body{"url": "https://hooks.example.com/a"})
	if r.id("id") != firstWebhookID || r.str("url") != "https://hooks.example.com/a" {
		t.Errorf("created: %s", r.raw)
	}
	w.b.must(http.StatusOK, http.MethodPost, fmt.Sprintf("customer/%d/webhook", w.buyer.ID), body{"url": "http://127.0.0.1:9/b"})
	r = w.b.must(http.StatusOK, http.MethodGet, "customer/me/webhook", nil)
	if len(r.list("webhooks")) != 2 {
		t.Errorf("listed: %s", r.raw)
	}
	if r := w.b.must(http.StatusNoContent, http.MethodDelete, fmt.Sprintf("customer/me/webhook/%d", firstWebhookID), nil); len(r.raw) != 0 {
		t.Errorf("204 with a body: %s", r.raw)
	}
	w.b.must(http.StatusNotFound, http.MethodDelete, fmt.Sprintf("customer/me/webhook/%d", firstWebhookID), nil)
	if r := w.b.must(http.StatusOK, http.MethodGet, fmt.Sprintf("customer/%d/webhook", w.buyer.ID), nil); r.str("webhooks.0.url") != "http://127.0.0.1:9/b" || len(r.list("webhooks")) != 1 {
		t.Errorf("after delete: %s", r.raw)
	}
	for _, raw := range []string{`{}`, `{"url": "hooks.example.com"}`, `{"url": "ftp://x/y"}`, `{"url": 1}`} {
		if got := w.b.must(http.StatusUnprocessableEntity, http.MethodPost, "customer/me/webhook", raw).errorPaths(); len(got) != 1 || got[0] != "url" {
			t.Errorf("%s: %v", raw, got)
		}
	}
	w.s.must(http.StatusForbidden, http.MethodPost, fmt.Sprintf("customer/%d/webhook", w.buyer.ID), body{"url": "https://x.example.com"})
	w.s.must(http.StatusForbidden, http.MethodDelete, fmt.Sprintf("customer/%d/webhook/%d", w.buyer.ID, firstWebhookID+1), nil)
	w.s.must(http.StatusNotFound, http.MethodDelete, fmt.Sprintf("customer/me/webhook/%d", firstWebhookID+1), nil)
	for range maxWebhooks - 1 {
		w.b.must(http.StatusOK, http.MethodPost, "customer/me/webhook", body{"url": "https://hooks.example.com/more"})
	}
	w.b.must(http.StatusUnprocessableEntity, http.MethodPost, "customer/me/webhook", body{"url": "https://hooks.example.com/too-many"})
}

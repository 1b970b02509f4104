package escrowtest

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
)

func TestPaymentMethods(t *testing.T) {
	w := newWorld(t)
	id := w.at("agreed") // 1000.00 and a 32.50 fee, both the buyer's
	r := w.b.must(http.StatusOK, http.MethodGet, txPath(id, "payment_methods"), nil)
	want := map[string]any{
		"available_payment_methods": []any{
			map[string]any{"type": "wire_transfer", "total": 1032.5, "currency": "usd"},
			map[string]any{"type": "credit_card", "total": 1063.48, "currency": "usd"},
			map[string]any{"type": "paypal", "total": 1063.48, "currency": "usd"},
		},
		"conditionally_available_payment_methods": []any{},
		"total_without_payment_fee":               "1032.50",
	}
	if !jsonEqual(r.json, want) {
		t.Errorf("payment methods:\n%s", r.raw)
	}
	if !strings.Contains(string(r.raw), `"total":1032.50`) {
		t.Errorf("totals are not JSON numbers with two decimals: %s", r.raw)
	}
	w.s.must(http.StatusForbidden, http.MethodGet, txPath(id, "payment_methods"), nil)

	// Above 10,000.00 a card needs a verified buyer; aud offers POLi.
	big := w.b.create(set(set(merchandise(), "items.0.schedule.0.amount", 20000), "currency", "aud"))
	r = w.b.must(http.StatusOK, http.MethodGet, txPath(big, "payment_methods"), nil)
	if got := typesOf(r.list("available_payment_methods")); got != "wire_transfer poli" {
		t.Errorf("available: %s", got)
	}
	if r.str("conditionally_available_payment_methods.0.type") != "credit_card" || r.str("conditionally_available_payment_methods.0.conditions.0") != "verification_required" {
		t.Errorf("conditional: %s", r.raw)
	}
	must(t, w.srv.VerifyCustomer("buyer@example.com", false))
	r = w.b.must(http.StatusOK, http.MethodGet, txPath(big, "payment_methods"), nil)
	if got := typesOf(r.list("available_payment_methods")); got != "wire_transfer credit_card poli" {
		t.Errorf("available once verified: %s", got)
	}
}

func typesOf(methods []any) string {
	var ts []string
	for _, m := range methods {
		ts = append(ts, m.(map[string]any)["type"].(string))
	}
	return strings.Join(ts, " ")
}

func TestChoosePaymentMethod(t *testing.T) {
	w := newWorld(t)
	id := w.at("created")
	r := w.b.must(http.StatusBadRequest, http.MethodPost, txPath(id, "payment_methods", "credit_card"), nil)
	if r.str("state") != "awaiting_agreement" {
		t.Errorf("before agreement: %s", r.raw)
	}
	sellerAgrees(w, id)
	r = w.b.must(http.StatusOK, http.MethodPost, txPath(id, "payment_methods", "credit_card"), body{"return_url": "https://shop.example.com/done?o=1"})
	host := strings.TrimSuffix(w.srv.URL, "/2017-09-01/")
	want := fmt.Sprintf("%s/_emulator/pages/checkout/%d/credit_card?return_url=https%%3A%%2F%%2Fshop.example.com%%2Fdone%%3Fo%%3D1", host, id)
	if r.str("landing_page") != want {
		t.Errorf("landing page\n got %s\nwant %s", r.str("landing_page"), want)
	}
	anonymous(t, w.srv).must(http.StatusOK, http.MethodGet, strings.TrimPrefix(r.str("landing_page"), host), nil)
	w.b.must(http.StatusOK, http.MethodPost, txPath(id, "payment_methods", "paypal"), "")
	r = w.b.must(http.StatusBadRequest, http.MethodPost, txPath(id, "payment_methods", "poli"), nil)
	if r.str("error") != "payment_method_unavailable" {
		t.Errorf("poli in usd: %s", r.raw)
	}
	w.b.must(http.StatusNotFound, http.MethodPost, txPath(id, "payment_methods", "cash"), nil)
	r = w.b.must(http.StatusUnprocessableEntity, http.MethodPost, txPath(id, "payment_methods", "paypal"), body{"return_url": "/relative"})
	if r.errorPaths()[0] != "return_url" {
		t.Errorf("return_url: %s", r.raw)
	}
	w.s.must(http.StatusForbidden, http.MethodPost, txPath(id, "payment_methods", "paypal"), nil)
	payment(w, id)
	w.b.must(http.StatusBadRequest, http.MethodPost, txPath(id, "payment_methods", "paypal"), nil)
}

func TestWireTransfer(t *testing.T) {
	w := newWorld(t)
	id := w.at("created")
	other := w.b.create(merchandise())
	r := w.b.must(http.StatusOK, http.MethodGet, txPath(id, "payment_methods", "wire_transfer"), nil)
	for _, k := range []string{"bank_name", "bank_address", "routing_number", "swift_code", "credit_account_name", "credit_account_number", "additional_instructions"} {
		if r.str(k) == "" {
			t.Errorf("%s missing: %s", k, r.raw)
		}
	}
	if r.str("structured_bank_address.country") != "US" {
		t.Errorf("structured address: %s", r.raw)
	}
	if o := w.b.must(http.StatusOK, http.MethodGet, txPath(other, "payment_methods", "wire_transfer"), nil); o.str("credit_account_number") == r.str("credit_account_number") {
		t.Error("the wire details are the same for two transactions")
	}
	w.s.must(http.StatusForbidden, http.MethodGet, txPath(id, "payment_methods", "wire_transfer"), nil)

	w.b.must(http.StatusBadRequest, http.MethodPost, txPath(id, "payment_methods", "wire_transfer"), nil)
	sellerAgrees(w, id)
	r = w.b.must(http.StatusOK, http.MethodPost, txPath(id, "payment_methods", "wire_transfer"), nil)
	if r.id("id") != id {
		t.Errorf("answer: %s", r.raw)
	}
	w.b.must(http.StatusBadRequest, http.MethodPost, txPath(id, "payment_methods", "wire_transfer"), nil)
	must(t, w.srv.RejectPayment(id))
	w.b.must(http.StatusOK, http.MethodPost, txPath(id, "payment_methods", "wire_transfer"), nil)
	payment(w, id)
	if err := w.srv.RejectPayment(id); err == nil {
		t.Error("RejectPayment after funding succeeded")
	}
	if got := eventsOf(t, w.b, id); got != "create agree payment_sent payment_rejected payment_sent payment_received payment_approved" {
		t.Errorf("events: %s", got)
	}
	r = w.b.must(http.StatusOK, http.MethodGet, txPath(id), nil)
	if r.get("items.0.schedule.0.status.secured") != true {
		t.Errorf("not secured: %s", r.raw)
	}
}

func TestDisbursementMethods(t *testing.T) {
	w := newWorld(t)
	id := w.at("funded")
	r := w.s.must(http.StatusOK, http.MethodGet, txPath(id, "disbursement_methods"), nil)
	want := map[string]any{
		"available_disbursement_methods": []any{map[string]any{"type": "ach", "total": 1000.0}, map[string]any{"type": "wire_transfer", "total": 1000.0}},
		"saved_disbursement_methods":     []any{},
		"selected_disbursement_method":   nil,
		"available_currencies":           []any{"usd"},
	}
	if !jsonEqual(r.json, want) {
		t.Errorf("before selection: %s", r.raw)
	}
	w.b.must(http.StatusForbidden, http.MethodGet, txPath(id, "disbursement_methods"), nil)
	w.b.must(http.StatusForbidden, http.MethodPatch, txPath(id, "disbursement_methods"), ach())

	tests := []struct {
		name  string
		body  body
		paths string
	}{
		{"type missing", set(ach(), "type", nil), "type"},
		{"type not available", set(ach(), "type", "wire_transfer_international"), "type"},
		{"ach details missing", body{"type": "ach"}, "account_name account_type bank_aba_routing_number bank_account_number bank_name"},
		{"wire without an account", body{"type": "wire", "account_name": "S", "bank_name": "B", "bank_swift_code": "X"}, "bank_account_number"},
		{"address country", set(ach(), "bank_address", body{"country": "USA"}), "bank_address.country"},
		{"clearing code", set(ach(), "clearing_system_code", "XXX"), "clearing_system_code"},
		{"unknown saved id", body{"id": 9999}, "id"},
		{"saved id not a number", body{"id": "701"}, "id"},
	}
	for _, tc := range tests {
		r := w.s.must(http.StatusUnprocessableEntity, http.MethodPost, txPath(id, "disbursement_methods"), tc.body)
		if got := strings.Join(r.errorPaths(), " "); got != tc.paths {
			t.Errorf("%s: %s", tc.name, got)
		}
	}
	wire := body{"type": "wire", "account_name": "S", "bank_name": "B", "bank_swift_code": "X", "bank_iban": "GB00", "intermediary_bank": body{"bank_name": "I"}}
	r = w.s.must(http.StatusOK, http.MethodPost, txPath(id, "disbursement_methods"), wire)
	if r.str("selected_disbursement_method.type") != "wire_transfer" || r.str("selected_disbursement_method.intermediary_bank.bank_name") != "I" {
		t.Errorf("wire: %s", r.raw)
	}
	saved := r.id("selected_disbursement_method.id")
	w.s.must(http.StatusOK, http.MethodPatch, txPath(id, "disbursement_methods"), ach())
	r = w.s.must(http.StatusOK, http.MethodPatch, txPath(id, "disbursement_methods"), body{"id": saved})
	if r.id("selected_disbursement_method.id") != saved || len(r.list("saved_disbursement_methods")) != 2 {
		t.Errorf("reselect: %s", r.raw)
	}
	if g := w.b.must(http.StatusOK, http.MethodGet, txPath(id), nil); g.get("parties.1.disbursement_method_selected") != true {
		t.Errorf("party flag: %s", g.raw)
	}
	// Saved methods are the customer's, for later transactions too.
	r = w.s.must(http.StatusOK, http.MethodGet, "customer/me/disbursement_methods", nil)
	if len(r.list("saved_disbursement_methods")) != 2 || r.get("selected_disbursement_method") != nil || len(r.list("available_currencies")) != 5 {
		t.Errorf("customer's methods: %s", r.raw)
	}
	w.s.must(http.StatusOK, http.MethodGet, fmt.Sprintf("customer/me/disbursement_methods/%d", saved), nil)
	w.s.must(http.StatusNotFound, http.MethodGet, "customer/me/disbursement_methods/5", nil)
	w.b.must(http.StatusForbidden, http.MethodGet, fmt.Sprintf("customer/%d/disbursement_methods", w.seller.ID), nil)
}

// TestInternationalDisbursement: customers outside the USA are paid by international wire
// only, and their saved US methods do not apply.
func TestInternationalDisbursement(t *testing.T) {
	w := newWorld(t)
	w.p.must(http.StatusOK, http.MethodPost, "customer", body{"email": "uk@example.com", "address": body{"country": "gb", "city": "London"}})
	uk := as(t, w.srv, w.srv.AddCustomer("uk@example.com"))
	tx := w.b.create(withSeller(merchandise(), "uk@example.com"))
	r := uk.must(http.StatusOK, http.MethodGet, txPath(tx, "disbursement_methods"), nil)
	if got := typesOf(r.list("available_disbursement_methods")); got != "wire_transfer_international" {
		t.Errorf("types: %s", got)
	}
	r = uk.must(http.StatusUnprocessableEntity, http.MethodPatch, txPath(tx, "disbursement_methods"), ach())
	if got := r.errorPaths(); len(got) != 1 || got[0] != "type" {
		t.Errorf("ach abroad: %v", got)
	}
	uk.must(http.StatusOK, http.MethodPatch, txPath(tx, "disbursement_methods"), body{"type": "wire_transfer_international", "account_name": "U", "bank_name": "B", "bank_swift_code": "S", "international_routing_code": "R"})
}

// TestDisbursementTotalNetsWhatThePayeePays: a commission the seller pays the broker comes
// out of the seller's proceeds, so the seller is paid out the price less the commission.
func TestDisbursementTotalNetsWhatThePayeePays(t *testing.T) {
	w := newWorld(t)
	b := merchandise()
	b["parties"] = append(b["parties"].([]any), body{"role": "broker", "customer": "broker@example.com"})
	b["items"] = append(b["items"].([]any), body{"type": "broker_fee", "schedule": []any{
		body{"amount": 100, "payer_customer": "seller@example.com", "beneficiary_customer": "broker@example.com"}}})
	id := w.b.create(b)
	r := w.s.must(http.StatusOK, http.MethodGet, txPath(id, "disbursement_methods"), nil)
	if got := r.get("available_disbursement_methods.0.total"); got != 900.0 {
		t.Errorf("seller's total %v, want 900: %s", got, r.raw)
	}
	r = w.k.must(http.StatusOK, http.MethodGet, txPath(id, "disbursement_methods"), nil)
	if got := r.get("available_disbursement_methods.0.total"); got != 100.0 {
		t.Errorf("broker's total %v, want 100: %s", got, r.raw)
	}
}

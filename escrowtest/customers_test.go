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

// TestCustomerDocumentsCarryLiveAPIFields: a live GET /customer/me returns these objects
// even when empty; clients that read them without checking fail on an emulator that
// leaves them out.
func TestCustomerDocumentsCarryLiveAPIFields(t *testing.T) {
	w := newWorld(t)
	r := w.b.must(http.StatusOK, http.MethodGet, "customer/me", nil)
	for path, want := range map[string]any{
		"address":                              map[string]any{},
		"shipping_address":                     map[string]any{},
		"company":                              map[string]any{"address": map[string]any{}, "company_name": ""},
		"electronic_verification":              map[string]any{"available": false, "documents_supported": []any{}},
		"customer_email_verification.verified": true,
		"verification.personal.status":         "not_verified",
		"verification.company.status":          "not_verified",
		"verification.extended.status":         "not_required",
	} {
		if got := r.get(path); !jsonEqual(got, want) {
			t.Errorf("%s = %v, want %v", path, got, want)
		}
	}
	// An account created for a transaction party has not verified its address yet.
	created := w.p.must(http.StatusOK, http.MethodPost, "customer", body{"email": "new@example.com"})
	if created.get("customer_email_verification.verified") != false || created.get("address") == nil {
		t.Errorf("created: %s", created.raw)
	}
}

// TestPatchCustomerLikeProviderDocs: PATCH /customer/me with the spec's "Customer patch
// shape", as the provider's docs show; spec part 4 rule 3 leaves another account's
// information to its owner.
func TestPatchCustomerLikeProviderDocs(t *testing.T) {
	w := newWorld(t)
	patch := body{
		"first_name": "Bea", "middle_name": "Q", "last_name": "Buyer", "phone_number": "+1 415 000",
		"address":                  body{"line1": "1 Main St", "city": "Austin", "state": "TX", "country": "us", "post_code": "73301"},
		"shipping_address":         body{"line1": "2 Dock Rd", "country": "US"},
		"company":                  body{"company_name": "Bea Co", "address": body{"city": "Austin", "country": "US"}},
		"identification_documents": []any{body{"type": "passport", "field": "number", "value": "X1", "country": "us"}},
		"email":                    "BUYER@example.com", // unchanged, in another case
		"date_of_birth":            "1982-03-10T00:00:00",
		"tax_numbers":              []any{body{"type": "ssn", "number": "000-00-0000"}},
	}
	r := w.b.must(http.StatusOK, http.MethodPatch, "customer/me", patch)
	for path, want := range map[string]string{
		"first_name": "Bea", "middle_name": "Q", "last_name": "Buyer", "display_name": "Bea Buyer", "phone_number": "+1 415 000",
		"address.country": "US", "address.post_code": "73301", "shipping_address.line1": "2 Dock Rd",
		"company.company_name": "Bea Co", "company.address.city": "Austin", "email": "buyer@example.com",
		"date_of_birth": "1982-03-10T00:00:00", "tax_numbers.0.number": "000-00-0000",
	} {
		if got := r.str(path); got != want {
			t.Errorf("%s = %q, want %q", path, got, want)
		}
	}
	if r := w.b.must(http.StatusOK, http.MethodGet, "customer/me/identification-documents", nil); r.str("identification_documents.0.country") != "US" {
		t.Errorf("documents: %s", r.raw)
	}
	// Its own id works as "me"; fields not given stay.
	r = w.b.must(http.StatusOK, http.MethodPatch, fmt.Sprintf("customer/%d", w.buyer.ID), body{"phone_number": "+1 512 111"})
	if r.str("first_name") != "Bea" || r.str("phone_number") != "+1 512 111" {
		t.Errorf("second patch: %s", r.raw)
	}
	// Nobody else's: not even the partner that created the account (rule 3).
	made := w.p.must(http.StatusOK, http.MethodPost, "customer", body{"email": "made@example.com", "first_name": "Made"})
	if r := w.p.must(http.StatusForbidden, http.MethodPatch, fmt.Sprintf("customer/%d", made.id("id")), body{"first_name": "Changed"}); !strings.Contains(r.str("message"), "no longer be supplied") {
		t.Errorf("partner's patch: %s", r.raw)
	}
	w.s.must(http.StatusForbidden, http.MethodPatch, fmt.Sprintf("customer/%d", w.buyer.ID), body{"first_name": "Mallory"})
	w.b.must(http.StatusNotFound, http.MethodPatch, "customer/999999", body{})
	anonymous(t, w.srv).must(http.StatusUnauthorized, http.MethodPatch, "customer/me", body{})
	for raw, paths := range map[string]string{
		`{"email": "else@example.com"}`:                           "email",
		`{"id": 7}`:                                               "id",
		`{"address": {"country": "Narnia"}}`:                      "address.country",
		`{"first_name": 3}`:                                       "first_name",
		`{"date_of_birth": "long ago"}`:                           "date_of_birth",
		`{"tax_numbers": [{"type": "ssn"}]}`:                      "tax_numbers.0.number",
		`{"identification_documents": [{"country": "Atlantis"}]}`: "identification_documents.0.country",
	} {
		if got := strings.Join(w.b.must(http.StatusUnprocessableEntity, http.MethodPatch, "customer/me", raw).errorPaths(), " "); got != paths {
			t.Errorf("%s: %s", raw, got)
		}
	}
	if r := w.b.must(http.StatusOK, http.MethodGet, "customer/me", nil); r.str("first_name") != "Bea" {
		t.Errorf("a refused patch changed something: %s", r.raw)
	}
}

// TestPartnerSeesProfilesOnlyThroughItsOwnRelationship: partner P2 used to read a
// profile partner P1 created, name, phone and address, by naming the customer in a
// throwaway transaction.
func TestPartnerSeesProfilesOnlyThroughItsOwnRelationship(t *testing.T) {
	w := newWorld(t)
	p1 := w.p
	victim := p1.must(http.StatusOK, http.MethodPost, "customer", body{
		"email": "victim@example.com", "first_name": "Vic", "last_name": "Tim", "phone_number": "+1 555 0100",
		"address": body{"line1": "9 Secret Ln", "city": "Reno", "country": "US"},
	}).id("id")
	p2Acct := w.srv.AddPartner("p2@example.com")
	p2 := as(t, w.srv, p2Acct)
	throwaway := p2.create(withSeller(partnered(), "victim@example.com"))
	party := p2.must(http.StatusOK, http.MethodGet, txPath(throwaway), nil).id("parties.1.id")

	noProfile := func(name string, r reply) {
		t.Helper()
		if strings.Contains(string(r.raw), "Vic") || strings.Contains(string(r.raw), "555") || strings.Contains(string(r.raw), "Secret") || r.str("email") != "victim@example.com" {
			t.Errorf("%s: %s", name, r.raw)
		}
	}
	noProfile("GET /customer/{id}", p2.must(http.StatusOK, http.MethodGet, fmt.Sprintf("customer/%d", victim), nil))
	noProfile("partner/customer by id", p2.must(http.StatusOK, http.MethodGet, fmt.Sprintf("partner/customer?customer_id=%d", victim), nil))
	noProfile("partner/customer by party", p2.must(http.StatusOK, http.MethodGet, fmt.Sprintf("partner/customer?party_id=%d", party), nil))
	if r := p2.must(http.StatusOK, http.MethodGet, "partner/customers", nil); strings.Contains(string(r.raw), "victim") {
		t.Errorf("listed: %s", r.raw)
	}
	// Agreeing As-Customer for the victim makes no relationship either.
	p2.asCustomer("victim@example.com").act(http.StatusOK, throwaway, 0, action("agree"))
	noProfile("after agreeing for them", p2.must(http.StatusOK, http.MethodGet, fmt.Sprintf("customer/%d", victim), nil))

	// P1, which created the account, sees the profile.
	if r := p1.must(http.StatusOK, http.MethodGet, fmt.Sprintf("customer/%d", victim), nil); r.str("phone_number") != "+1 555 0100" {
		t.Errorf("P1: %s", r.raw)
	}
	// Once the customer agrees to one of P2's transactions itself, it is P2's customer.
	second := p2.create(withSeller(partnered(), "victim@example.com"))
	as(t, w.srv, w.srv.AddCustomer("victim@example.com")).act(http.StatusOK, second, 0, action("agree"))
	if r := p2.must(http.StatusOK, http.MethodGet, fmt.Sprintf("customer/%d", victim), nil); r.str("phone_number") != "+1 555 0100" {
		t.Errorf("after the customer agreed: %s", r.raw)
	}
	// Strangers to every partner transaction: 403 and 404, as before.
	p2.must(http.StatusForbidden, http.MethodGet, fmt.Sprintf("customer/%d", w.stranger.ID), nil)
	p2.must(http.StatusNotFound, http.MethodGet, fmt.Sprintf("partner/customer?customer_id=%d", w.stranger.ID), nil)
}

// TestWebhookOncePerAccount: the creator of a transaction holds two party entries (its role
// and the partner entry), but its webhook hears each event once.
func TestWebhookOncePerAccount(t *testing.T) {
	w := newWorld(t)
	hook := newReceiver(t, http.StatusOK)
	w.b.must(http.StatusOK, http.MethodPost, "customer/me/webhook", body{"url": hook.URL})
	w.at("agreed")
	flush(t, w.srv)
	if got := hook.events(); got != "create agree" {
		t.Errorf("creator's webhook heard %q, want %q", got, "create agree")
	}
}

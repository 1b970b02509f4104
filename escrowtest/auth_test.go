package escrowtest

import (
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"
)

func TestAuthentication(t *testing.T) {
	w := newWorld(t)
	tests := []struct {
		name         string
		user, secret string
		want         int
	}{
		{"API key", w.buyer.Email, w.buyer.APIKey, http.StatusOK},
		{"password", w.buyer.Email, w.buyer.Password, http.StatusOK},
		{"e-mail in another case", "BUYER@example.com", w.buyer.APIKey, http.StatusOK},
		{"no credentials", "", "", http.StatusUnauthorized},
		{"wrong password", w.buyer.Email, "wrong", http.StatusUnauthorized},
		{"another customer's key", w.buyer.Email, w.seller.APIKey, http.StatusUnauthorized},
		{"unknown e-mail", "nobody@example.com", w.buyer.APIKey, http.StatusUnauthorized},
		{"empty password", w.buyer.Email, "", http.StatusUnauthorized},
	}
	for _, tc := range tests {
		c := &client{t: t, srv: w.srv, user: tc.user, secret: tc.secret, header: http.Header{}}
		r := c.do(http.MethodGet, "customer/me", nil)
		if r.status != tc.want {
			t.Errorf("%s: %d, want %d", tc.name, r.status, tc.want)
		}
		if tc.want == http.StatusUnauthorized && (r.str("error") != "unauthorized" || r.header.Get("WWW-Authenticate") == "") {
			t.Errorf("%s: %s %v", tc.name, r.raw, r.header)
		}
	}
	// A malformed Authorization header is no credential.
	c := anonymous(t, w.srv)
	c.header.Set("Authorization", "Basic !!!")
	c.must(http.StatusUnauthorized, http.MethodGet, "customer/me", nil)
	// Accounts created for transaction parties have no credentials.
	w.b.create(withSeller(merchandise(), "fresh@example.com"))
	(&client{t: t, srv: w.srv, user: "fresh@example.com", secret: "", header: http.Header{}}).must(http.StatusUnauthorized, http.MethodGet, "customer/me", nil)
}

func TestAPIKeys(t *testing.T) {
	w := newWorld(t)
	r := w.b.must(http.StatusOK, http.MethodGet, "customer/me/api_key", nil)
	key := r.get("api_keys.0").(map[string]any)
	if key["last_four_characters"] != w.buyer.APIKey[len(w.buyer.APIKey)-4:] || key["key"] != nil || key["is_active"] != true || key["name"] != "escrowtest" || key["date_created"] == "" {
		t.Errorf("listed key: %v", key)
	}
	if !regexp.MustCompile(`^\d+_[A-Z2-7]{26}$`).MatchString(w.buyer.APIKey) {
		t.Errorf("key format: %s", w.buyer.APIKey)
	}
	// Keys and passwords are kept only as hashes.
	w.srv.mu.Lock()
	a := w.srv.st.accountByEmail(w.buyer.Email)
	stored := fmt.Sprintf("%#v %#v", *a, *a.keys[0])
	w.srv.mu.Unlock()
	if strings.Contains(stored, w.buyer.APIKey) || strings.Contains(stored, strings.SplitN(w.buyer.APIKey, "_", 2)[1]) || strings.Contains(stored, w.buyer.Password) {
		t.Error("a secret is stored in the clear")
	}

	// Create (an extension), rename, deactivate, reactivate.
	r = w.b.must(http.StatusOK, http.MethodPost, "customer/me/api_key", body{"name": "ci"})
	second, full := r.id("id"), r.str("key")
	if full == "" || r.str("last_four_characters") != full[len(full)-4:] {
		t.Errorf("created key: %s", r.raw)
	}
	ci := &client{t: t, srv: w.srv, user: w.buyer.Email, secret: full, header: http.Header{}}
	ci.must(http.StatusOK, http.MethodGet, "customer/me", nil)
	path := fmt.Sprintf("customer/me/api_key/%d", second)
	r = w.b.must(http.StatusOK, http.MethodPatch, path, body{"name": "ci-2", "is_active": false})
	if r.str("name") != "ci-2" || r.get("is_active") != false || r.get("key") != nil {
		t.Errorf("patched: %s", r.raw)
	}
	ci.must(http.StatusUnauthorized, http.MethodGet, "customer/me", nil)
	w.b.must(http.StatusOK, http.MethodPatch, fmt.Sprintf("customer/%d/api_key/%d", w.buyer.ID, second), body{"is_active": true})
	ci.must(http.StatusOK, http.MethodGet, "customer/me", nil)

	for raw, paths := range map[string]string{`{"name": ""}`: "name", `{"is_active": "no"}`: "is_active", `{"name": 5}`: "name"} {
		if got := strings.Join(w.b.must(http.StatusUnprocessableEntity, http.MethodPatch, path, raw).errorPaths(), " "); got != paths {
			t.Errorf("%s: %s", raw, got)
		}
	}
	w.b.must(http.StatusUnprocessableEntity, http.MethodPost, "customer/me/api_key", body{})
	w.b.must(http.StatusNotFound, http.MethodPatch, "customer/me/api_key/9", body{"name": "x"})
	w.s.must(http.StatusNotFound, http.MethodPatch, path, body{"name": "x"}) // not the seller's key
	w.s.must(http.StatusForbidden, http.MethodGet, fmt.Sprintf("customer/%d/api_key", w.buyer.ID), nil)
	w.s.must(http.StatusForbidden, http.MethodPatch, fmt.Sprintf("customer/%d/api_key/%d", w.buyer.ID, second), body{"name": "x"})
}

func TestRoutes(t *testing.T) {
	w := newWorld(t)
	r := w.b.must(http.StatusMethodNotAllowed, http.MethodGet, "customer", nil)
	if r.header.Get("Allow") != "POST" || r.str("error") != "method_not_allowed" {
		t.Errorf("GET /customer: %v %s", r.header, r.raw)
	}
	r = w.b.must(http.StatusMethodNotAllowed, http.MethodDelete, "transaction/1", nil)
	if r.header.Get("Allow") != "GET, PATCH" {
		t.Errorf("Allow: %s", r.header.Get("Allow"))
	}
	for _, path := range []string{"nothing", "transaction/1/nothing", "/2016-01-01/transaction", "/", "transaction/", "customer/me/webhook/1/x"} {
		if r := w.b.must(http.StatusNotFound, http.MethodGet, path, nil); r.str("error") != "not_found" {
			t.Errorf("%s: %s", path, r.raw)
		}
	}
	// Routes are found before credentials are checked; credentials before anything else.
	anonymous(t, w.srv).must(http.StatusNotFound, http.MethodGet, "nothing", nil)
	anonymous(t, w.srv).must(http.StatusUnauthorized, http.MethodGet, "transaction/1", nil)
}

func TestCustomerAccess(t *testing.T) {
	w := newWorld(t)
	r := w.b.must(http.StatusOK, http.MethodGet, "customer/me", nil)
	if r.id("id") != w.buyer.ID || r.str("email") != "buyer@example.com" || r.str("username") != "buyer" || r.str("verification.personal.status") != "not_verified" {
		t.Errorf("me: %s", r.raw)
	}
	w.b.must(http.StatusOK, http.MethodGet, fmt.Sprintf("customer/%d", w.buyer.ID), nil)
	w.b.must(http.StatusForbidden, http.MethodGet, fmt.Sprintf("customer/%d", w.seller.ID), nil)
	w.b.must(http.StatusNotFound, http.MethodGet, "customer/99999", nil)
	w.b.must(http.StatusNotFound, http.MethodGet, "customer/someone", nil)
	// A partner reads the customers of its transactions, without their settings.
	w.p.must(http.StatusForbidden, http.MethodGet, fmt.Sprintf("customer/%d", w.seller.ID), nil)
	b := set(merchandise(), "parties.0.customer", "buyer@example.com")
	w.p.create(set(b, "items.0.schedule.0.payer_customer", "buyer@example.com"))
	w.s.must(http.StatusOK, http.MethodPost, "customer/me/webhook", body{"url": "https://hooks.example.com/s"})
	r = w.p.must(http.StatusOK, http.MethodGet, fmt.Sprintf("customer/%d", w.seller.ID), nil)
	if r.str("email") != "seller@example.com" || r.get("webhooks") != nil {
		t.Errorf("partner's view: %s", r.raw)
	}
	if r := w.s.must(http.StatusOK, http.MethodGet, "customer/me", nil); r.str("webhooks.0.url") != "https://hooks.example.com/s" {
		t.Errorf("own view: %s", r.raw)
	}
}

// TestAPIKeysAreBounded: keys are issued by the API (refused past the bound) and by the
// harness and control API, which take no credentials (the oldest key retires).
func TestAPIKeysAreBounded(t *testing.T) {
	w := newWorld(t)
	var last Account
	for range maxAPIKeys + 5 {
		last = w.srv.AddCustomer("buyer@example.com")
	}
	as(t, w.srv, last).must(http.StatusOK, http.MethodGet, "customer/me", nil)
	r := as(t, w.srv, last).must(http.StatusOK, http.MethodGet, "customer/me/api_key", nil)
	if n := len(r.list("api_keys")); n != maxAPIKeys {
		t.Errorf("%d keys", n)
	}
	as(t, w.srv, last).must(http.StatusUnprocessableEntity, http.MethodPost, "customer/me/api_key", body{"name": "one more"})
}

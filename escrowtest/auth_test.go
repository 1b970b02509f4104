package escrowtest

import (
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestAuthentication: an account's key or password is taken, anything else is answered 401,
// saying the credentials were refused when some were sent and required when none were.
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
		// Credentials sent are refused, and the emulator says why a key it issued may be
		// gone; only a request without them hears that they are required.
		msg := r.str("message")
		switch {
		case tc.want != http.StatusUnauthorized:
		case tc.user == "" && (!strings.Contains(msg, "required") || strings.Contains(msg, "refused")):
			t.Errorf("%s: %q, want credentials said to be required", tc.name, msg)
		case tc.user != "" && (!strings.Contains(msg, "refused") || strings.Contains(msg, "required") || !strings.Contains(msg, "reset")):
			t.Errorf("%s: %q, want credentials said to be refused, keys forgotten on reset", tc.name, msg)
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

// partnered is a merchandise body for the partner to create between the buyer and the
// seller.
func partnered() body {
	b := set(merchandise(), "parties.0.customer", "buyer@example.com")
	return set(b, "items.0.schedule.0.payer_customer", "buyer@example.com")
}

// TestAsCustomerMatrix: the partner acting for a party gets 200 on each action the table
// of actions makes delegable and 403 on the others, in a state where the party itself
// could perform it, reached by the actions the table says lead there. The table itself is
// pinned by testdata/actions.golden (TestActionTable).
func TestAsCustomerMatrix(t *testing.T) {
	var delegable []string
	for _, a := range Actions() {
		if a.Delegable {
			delegable = append(delegable, a.Name)
		}
	}
	if got := AsCustomerActions(); !slices.Equal(got, delegable) {
		t.Errorf("AsCustomerActions() = %v, the table's delegable actions %v", got, delegable)
	}
	for _, a := range lifecycle {
		if _, ok := wholeActions[a.name]; ok != a.whole {
			t.Errorf("%s: whole %v, but a function in wholeActions: %v", a.name, a.whole, ok)
		}
	}
	type matrixCase struct {
		before []step
		action string
		as     string
		want   int
	}
	var tests []matrixCase
	for _, a := range lifecycle {
		tc := matrixCase{action: a.name, as: "seller@example.com", want: http.StatusForbidden}
		if a.delegable {
			tc.want = http.StatusOK
		}
		if !a.whole {
			tc.before = append([]step{sellerAgrees, payment}, stepsTo(t, a)...)
			tc.as = a.roles[0] + "@example.com"
		}
		tests = append(tests, tc)
	}
	tests = append(tests,
		// The role rules still apply to the party acted for.
		matrixCase{[]step{sellerAgrees, payment}, "ship", "buyer@example.com", http.StatusForbidden},
		// The partner cancels as itself, as anyone may before both agree and only it may after.
		matrixCase{[]step{sellerAgrees}, "cancel", "buyer@example.com", http.StatusForbidden},
	)
	for _, tc := range tests {
		t.Run(tc.action+" as "+tc.as, func(t *testing.T) {
			w := newWorld(t)
			id := w.p.create(partnered())
			w.b.act(http.StatusOK, id, 0, action("agree"))
			for _, s := range tc.before {
				s(w, id)
			}
			r := w.p.asCustomer(tc.as).act(tc.want, id, 0, action(tc.action))
			if tc.want == http.StatusOK && r.str("parties.2.customer") != "partner@example.com" {
				t.Errorf("the answer is not rendered for the partner: %s", r.raw)
			}
		})
	}
}

// stepsTo returns the shortest run of actions on the goods, each by the first of its
// roles, after which an item of a funded deal allows the action: the path the table's
// requires, sets, excludes and blocks lay out.
func stepsTo(t *testing.T, target actionRule) []step {
	t.Helper()
	type path struct {
		flags itemFlag
		steps []string
	}
	seen := map[itemFlag]bool{0: true}
	queue := []path{{}}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		if target.allows(&item{flags: p.flags}) {
			return stepsOf(p.steps)
		}
		for _, a := range lifecycle {
			next := p.flags | a.sets
			if a.whole || !a.allows(&item{flags: p.flags}) || seen[next] {
				continue
			}
			seen[next] = true
			queue = append(queue, path{next, append(slices.Clone(p.steps), a.name)})
		}
	}
	t.Fatalf("no run of actions leads to an item that allows %s", target.name)
	return nil
}

// stepsOf makes steps of actions, each taken by the party of its first role.
func stepsOf(names []string) []step {
	var steps []step
	for _, name := range names {
		steps = append(steps, func(w *world, id int64) {
			c := map[string]*client{roleBuyer: w.b, roleSeller: w.s}[mustAction(name).roles[0]]
			c.act(http.StatusOK, id, 0, action(name))
		})
	}
	return steps
}

func TestAsCustomerIsForTheTransactionsPartner(t *testing.T) {
	w := newWorld(t)
	id := w.p.create(partnered())
	// Not an approved partner.
	w.b.asCustomer("seller@example.com").act(http.StatusForbidden, id, 0, action("agree"))
	// An approved partner that is a party, but not the partner of this transaction.
	other := w.srv.AddPartner("other-partner@example.com")
	mine := w.b.create(withSeller(merchandise(), other.Email))
	as(t, w.srv, other).asCustomer("buyer@example.com").act(http.StatusForbidden, mine, 0, action("cancel"))
	// A name that is no party.
	w.p.asCustomer("stranger@example.com").act(http.StatusForbidden, id, 0, action("agree"))
	w.p.asCustomer("nobody@example.com").act(http.StatusForbidden, id, 0, action("agree"))
	// Not a party at all: the transaction does not exist for the caller.
	as(t, w.srv, other).asCustomer("buyer@example.com").act(http.StatusNotFound, id, 0, action("agree"))
	// Routes that do not take the header.
	for _, path := range []string{txPath(id), "customer/me", txPath(id, "timeline-entries"), txPath(id, "payment_methods", "wire_transfer"), txPath(id, "disbursement_methods")} {
		w.p.asCustomer("buyer@example.com").must(http.StatusForbidden, http.MethodGet, path, nil)
	}
	w.p.asCustomer("seller@example.com").act(http.StatusOK, id, 0, action("agree"))
}

func TestAsCustomerPayments(t *testing.T) {
	w := newWorld(t)
	id := w.p.create(partnered())
	w.p.asCustomer("buyer@example.com").act(http.StatusOK, id, 0, action("agree"))
	w.p.asCustomer("seller@example.com").act(http.StatusOK, id, 0, action("agree"))
	forBuyer := w.p.asCustomer("buyer@example.com")
	if r := forBuyer.must(http.StatusOK, http.MethodGet, txPath(id, "payment_methods"), nil); r.str("total_without_payment_fee") != "1032.50" {
		t.Errorf("payment methods: %s", r.raw)
	}
	forBuyer.must(http.StatusOK, http.MethodPost, txPath(id, "payment_methods", "credit_card"), nil)
	forBuyer.must(http.StatusOK, http.MethodPost, txPath(id, "payment_methods", "wire_transfer"), nil)
	w.p.asCustomer("seller@example.com").must(http.StatusForbidden, http.MethodGet, txPath(id, "payment_methods"), nil)
	w.p.must(http.StatusForbidden, http.MethodGet, txPath(id, "payment_methods"), nil) // the partner is not the buyer
}

// As-Customer from an account that is not an approved partner: 403 with the live API's
// words, on an action and on a web link alike, before anything else is checked.
func TestAsCustomerFromAnUnapprovedAccount(t *testing.T) {
	w := newWorld(t)
	id := w.b.create(merchandise())
	const want = "Partner account not authorized to perform actions on behalf of customers."
	for _, c := range []struct{ method, path string }{
		{http.MethodPatch, txPath(id)},
		{http.MethodGet, txPath(id, "web_link", "agree")},
		{http.MethodGet, "customer/me"}, // a route that takes no As-Customer at all
	} {
		r := w.b.asCustomer("seller@example.com").do(c.method, c.path, action("agree"))
		if r.status != http.StatusForbidden || r.str("message") != want || r.str("error") != "forbidden" {
			t.Errorf("%s %s As-Customer by a customer: %d %s", c.method, c.path, r.status, r.raw)
		}
	}
	// An approved partner opens the web link for a party of its transaction.
	b := merchandise()
	set(b, "parties.0.customer", "buyer@example.com")
	set(b, "items.0.schedule.0.payer_customer", "buyer@example.com")
	pid := w.p.create(b)
	r := w.p.asCustomer("buyer@example.com").must(http.StatusOK, http.MethodGet, txPath(pid, "web_link", "agree"), nil)
	if !strings.Contains(r.str("landing_page"), "/agree") {
		t.Errorf("web link As-Customer: %s", r.raw)
	}
	w.p.asCustomer("stranger@example.com").must(http.StatusForbidden, http.MethodGet, txPath(pid, "web_link", "agree"), nil)
}

package escrowtest

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
)

// Tests of what the live API answered, as more public clients recorded it in 2026 (the
// API notes, "What the live API answered"). Each is named after the answer.

// A customer who is neither a party nor an approved partner creates a transaction
// between a buyer and a seller, and is made its partner party, as the spec says.
func TestCreatorNeitherPartyNorPartnerBecomesThePartner(t *testing.T) {
	w := newWorld(t)
	b := merchandise()
	set(b, "parties.0.customer", "buyer@example.com")
	set(b, "items.0.schedule.0.payer_customer", "buyer@example.com")
	r := w.x.must(http.StatusCreated, http.MethodPost, "transaction", b)
	parties := r.list("parties")
	last := parties[len(parties)-1]
	if get(last, "role") != "partner" || get(last, "customer") != "stranger@example.com" || get(last, "agreed") != true {
		t.Errorf("the creator is not the partner party: %s", r.raw)
	}
	if r.get("parties.0.agreed") != false || r.get("parties.1.agreed") != false {
		t.Errorf("buyer and seller must agree themselves: %s", r.raw)
	}
	id := r.id("id")
	w.x.must(http.StatusOK, http.MethodGet, txPath(id), nil)
	w.b.act(http.StatusOK, id, 0, action("agree"))
	w.s.act(http.StatusOK, id, 0, action("agree"))
	// Not approved, it has none of a partner's powers: no As-Customer, no partner fee, no
	// partner listings.
	w.x.asCustomer("buyer@example.com").must(http.StatusForbidden, http.MethodGet, txPath(id, "payment_methods"), nil)
	fee := clone(b)
	fee["items"] = append(fee["items"].([]any), body{"type": "partner_fee", "schedule": []any{body{"amount": 10.0, "payer_customer": "buyer@example.com", "beneficiary_customer": "stranger@example.com"}}})
	w.x.must(http.StatusUnprocessableEntity, http.MethodPost, "transaction", fee)
	w.x.must(http.StatusForbidden, http.MethodGet, "partner/transactions", nil)
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

// A sale too small to pay its escrow fee is refused at creation, as the live API refused
// a 15.00 sale; the minimum is 25.00 unless WithMinimumEscrowFee says otherwise.
func TestMinimumEscrowFeeAtCreation(t *testing.T) {
	for _, c := range []struct {
		name    string
		opts    []Option
		amount  float64
		status  int
		minimum string
	}{
		{"the live API's refusal", nil, 15, http.StatusUnprocessableEntity, "25.00"},
		{"a cent short", nil, 24.99, http.StatusUnprocessableEntity, "25.00"},
		{"the minimum", nil, 25, http.StatusCreated, ""},
		{"a small sale", nil, 40, http.StatusCreated, ""},
		{"the client's figure", []Option{WithMinimumEscrowFee("50.00")}, 49.99, http.StatusUnprocessableEntity, "50.00"},
		{"above the client's figure", []Option{WithMinimumEscrowFee("50.00")}, 50, http.StatusCreated, ""},
		// Without a minimum the fee itself still binds: 3.25 % of 0.10 rounds to 0.00.
		{"no minimum", []Option{WithMinimumEscrowFee("0")}, 0.10, http.StatusCreated, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := newWorld(t, c.opts...)
			r := w.b.do(http.MethodPost, "transaction", set(merchandise(), "items.0.schedule.0.amount", c.amount))
			if r.status != c.status {
				t.Fatalf("a %.2f sale: %d, want %d\n%s", c.amount, r.status, c.status, r.raw)
			}
			if c.status != http.StatusUnprocessableEntity {
				return
			}
			msgs, _ := r.get("errors.items.all").([]any)
			want := fmt.Sprintf("The amount paid by the buyer must be at least the amount of the escrow fee: the buyer pays %.2f, the escrow fee is %s", c.amount, c.minimum)
			if len(msgs) != 1 || msgs[0] != want || len(r.errorPaths()) != 1 {
				t.Errorf("got %s, want %q", r.raw, want)
			}
		})
	}
	// What the buyer pays counts, whatever the item: a 20.00 sale with a 10.00 shipping fee
	// is 30.00 paid by the buyer.
	w := newWorld(t)
	b := set(merchandise(), "items.0.schedule.0.amount", 20)
	b["items"] = append(b["items"].([]any), body{"type": "shipping_fee", "schedule": []any{body{"amount": 10.0, "payer_customer": "me", "beneficiary_customer": "seller@example.com"}}})
	w.b.must(http.StatusCreated, http.MethodPost, "transaction", b)
	// A seller's payment does not count: a 20.00 sale with a 10.00 broker fee the seller pays.
	bf := set(merchandise(), "items.0.schedule.0.amount", 20)
	bf["parties"] = append(bf["parties"].([]any), body{"role": "broker", "customer": "broker@example.com"})
	bf["items"] = append(bf["items"].([]any), body{"type": "broker_fee", "schedule": []any{body{"amount": 10.0, "payer_customer": "seller@example.com", "beneficiary_customer": "broker@example.com"}}})
	w.b.must(http.StatusUnprocessableEntity, http.MethodPost, "transaction", bf)
	defer func() {
		if recover() == nil {
			t.Error("WithMinimumEscrowFee(\"ten\") did not panic")
		}
	}()
	WithMinimumEscrowFee("ten")
}

// Categories are checked per item type: business_and_internet, which the docs list, is
// refused on a general_merchandise item with the live API's message, and kept for
// milestones and domain names with content.
func TestCategoriesPerItemType(t *testing.T) {
	w := newWorld(t)
	r := w.b.must(http.StatusUnprocessableEntity, http.MethodPost, "transaction", set(merchandise(), "items.0.category", "business_and_internet"))
	if got, _ := r.get("errors.items.0.category").([]any); !slices.Equal(got, []any{"This is not a valid category for a general_merchandise item"}) {
		t.Errorf("business_and_internet on general merchandise: %s", r.raw)
	}
	ms := milestones()
	set(ms, "items.0.category", "business_and_internet")
	w.b.must(http.StatusCreated, http.MethodPost, "transaction", ms)
	d := set(domain(), "items.0.extra_attributes", body{"with_content": true})
	set(d, "items.0.category", "business_and_internet")
	w.s.must(http.StatusCreated, http.MethodPost, "transaction", d)
	r = w.b.must(http.StatusUnprocessableEntity, http.MethodPost, "transaction", set(merchandise(), "items.0.category", "boats"))
	if got, _ := r.get("errors.items.0.category").([]any); !slices.Equal(got, []any{"This is not a valid category for a general_merchandise item"}) {
		t.Errorf("a motor vehicle category on general merchandise: %s", r.raw)
	}
}

package escrowtest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// TestBrokerVisibility: the seller is hidden from the buyer, and the broker and the
// commission from the seller; the escrow fee is split between buyer and seller.
func TestBrokerVisibility(t *testing.T) {
	w := newWorld(t)
	b := set(brokered(), "items.0.fees", []any{
		body{"type": "escrow", "payer_customer": "buyer@example.com", "split": 0.5},
		body{"type": "escrow", "payer_customer": "seller@example.com", "split": 0.5},
	})
	id := w.k.create(b)
	view := func(c *client) reply { return c.must(http.StatusOK, http.MethodGet, txPath(id), nil) }

	buyer := view(w.b)
	if got := customers(buyer); got != "buyer@example.com hidden broker@example.com broker@example.com" {
		t.Errorf("buyer sees parties %s", got)
	}
	if buyer.str("items.0.schedule.0.beneficiary_customer") != hiddenCustomer || len(buyer.list("items.0.fees")) != 1 || buyer.str("items.0.fees.0.payer_customer") != "buyer@example.com" {
		t.Errorf("buyer sees the seller's details or amounts: %s", buyer.raw)
	}
	if len(buyer.list("items")) != 2 || buyer.get("items.1.visibility") != nil || buyer.get("parties.1.visibility") != nil {
		t.Errorf("buyer's items and visibility: %s", buyer.raw)
	}

	seller := view(w.s)
	if got := customers(seller); got != "buyer@example.com seller@example.com hidden hidden" {
		t.Errorf("seller sees parties %s", got)
	}
	if len(seller.list("items")) != 1 || len(seller.list("items.0.fees")) != 2 {
		t.Errorf("seller sees the commission, or misses a fee: %s", seller.raw)
	}

	broker := view(w.k)
	if got := customers(broker); got != "buyer@example.com seller@example.com broker@example.com broker@example.com" {
		t.Errorf("broker sees parties %s", got)
	}
	if broker.str("parties.1.visibility.hidden_from.0") != "buyer@example.com" || broker.str("items.1.visibility.hidden_from.0") != "seller@example.com" {
		t.Errorf("broker's visibility objects: %s", broker.raw)
	}

	// The timeline conceals actors the same way.
	w.s.act(http.StatusOK, id, 0, action("agree"))
	tl := w.b.must(http.StatusOK, http.MethodGet, txPath(id, "timeline-entries"), nil)
	if tl.str("timeline_entries.0.customer") != "broker@example.com" {
		t.Errorf("timeline: %s", tl.raw)
	}
	if got := w.k.must(http.StatusOK, http.MethodGet, txPath(id, "timeline-entries"), nil).str("timeline_entries.0.customer"); got != "broker@example.com" {
		t.Errorf("broker's timeline names %s", got)
	}
}

// TestPartnerFeeVisibility: a partner fee is shown to the partner and its payer only.
func TestPartnerFeeVisibility(t *testing.T) {
	w := newWorld(t)
	b := partnered()
	b["items"] = append(b["items"].([]any), body{"type": "partner_fee", "schedule": []any{body{"amount": 15, "payer_customer": "seller@example.com", "beneficiary_customer": "me"}}})
	id := w.p.create(b)
	counts := map[*client]int{w.p: 2, w.s: 2, w.b: 1}
	for c, want := range counts {
		r := c.must(http.StatusOK, http.MethodGet, txPath(id), nil)
		if got := len(r.list("items")); got != want {
			t.Errorf("%s sees %d items, want %d", c.user, got, want)
		}
	}
	if r := w.s.must(http.StatusOK, http.MethodGet, txPath(id), nil); r.str("items.1.schedule.0.beneficiary_customer") != "partner@example.com" || r.get("items.1.fees") == nil {
		t.Errorf("seller's view of the partner fee: %s", r.raw)
	}
}

func customers(r reply) string {
	s := ""
	for i, p := range r.list("parties") {
		if i > 0 {
			s += " "
		}
		s += p.(map[string]any)["customer"].(string)
	}
	return s
}

// concealedCommission: the buyer, an approved partner, creates a brokered sale in which
// the seller is hidden from the buyer and pays the broker a 51.37 commission. The buyer
// must read that amount nowhere.
func concealedCommission() body {
	return body{
		"currency": "usd", "description": "Brokered sale", "reference": "conceal-1",
		"parties": []any{
			body{"role": "buyer", "customer": "me"},
			body{"role": "seller", "customer": "seller@example.com", "visibility": body{"hidden_from": []any{"buyer@example.com"}}},
			body{"role": "broker", "customer": "broker@example.com"},
		},
		"items": []any{
			body{"title": "Guitar", "type": "general_merchandise",
				"schedule": []any{body{"amount": 1000, "payer_customer": "me", "beneficiary_customer": "seller@example.com"}}},
			body{"type": "broker_fee",
				"schedule": []any{body{"amount": "51.37", "payer_customer": "seller@example.com", "beneficiary_customer": "broker@example.com"}}},
		},
	}
}

// TestConcealmentCoversAmountsInEveryView walks every view the buyer has of the
// transaction, through its lifecycle, and finds the seller's commission in none. The
// seller and the broker, whose amount it is, still see it.
func TestConcealmentCoversAmountsInEveryView(t *testing.T) {
	w := newWorld(t)
	w.srv.AddPartner("buyer@example.com") // the buyer is also the transaction's partner
	hook := newReceiver(t, http.StatusOK)
	w.b.must(http.StatusOK, http.MethodPost, "customer/me/webhook", body{"url": hook.URL})
	const secret = "51.37"
	var views []string
	look := func(name string, r reply) {
		t.Helper()
		views = append(views, name)
		if strings.Contains(string(r.raw), secret) || strings.Contains(string(r.raw), "1051.37") {
			t.Errorf("%s shows the concealed commission: %s", name, r.raw)
		}
	}
	id := w.b.create(concealedCommission())
	look("GET", w.b.must(http.StatusOK, http.MethodGet, txPath(id), nil))
	w.s.act(http.StatusOK, id, 0, action("agree"))
	w.k.act(http.StatusOK, id, 0, action("agree"))
	look("payment methods", w.b.must(http.StatusOK, http.MethodGet, txPath(id, "payment_methods"), nil))
	look("wire marked sent", w.b.must(http.StatusOK, http.MethodPost, txPath(id, "payment_methods", "wire_transfer"), nil))
	payment(w, id)
	ships(w, id)
	look("receive answer", w.b.act(http.StatusOK, id, 0, action("receive")))
	look("accept answer", w.b.act(http.StatusOK, id, 0, action("accept")))
	w.s.must(http.StatusOK, http.MethodPost, txPath(id, "disbursement_methods"), ach())
	w.k.must(http.StatusOK, http.MethodPost, txPath(id, "disbursement_methods"), ach())

	look("GET after completion", w.b.must(http.StatusOK, http.MethodGet, txPath(id), nil))
	look("list", w.b.must(http.StatusOK, http.MethodGet, "transaction", nil))
	look("by reference", w.b.must(http.StatusOK, http.MethodGet, "transaction/reference/conceal-1", nil))
	look("timeline", w.b.must(http.StatusOK, http.MethodGet, txPath(id, "timeline-entries"), nil))
	look("partner listing", w.b.must(http.StatusOK, http.MethodGet, "partner/transactions", nil))
	// Filters compare with the amount the partner sees (1000.00), so probing them
	// reveals nothing either.
	if r := w.b.must(http.StatusOK, http.MethodGet, "partner/transactions?min_amount=1000.01", nil); len(r.list("transactions")) != 0 {
		t.Errorf("min_amount matched on the concealed commission: %s", r.raw)
	}
	report := w.b.must(http.StatusOK, http.MethodPost, "partner/reports", nil)
	look("report", report)
	look("report download", w.b.must(http.StatusOK, http.MethodGet, "/_emulator/reports/"+report.str("task_id")+".csv", nil))
	look("payments in", w.b.must(http.StatusOK, http.MethodGet, fmt.Sprintf("partner/customer/%d/payments_in", w.seller.ID), nil))
	look("disbursement methods (not the buyer's)", w.b.must(http.StatusForbidden, http.MethodGet, txPath(id, "disbursement_methods"), nil))
	flush(t, w.srv)
	hook.mu.Lock()
	data, _ := json.Marshal(hook.bodies)
	hook.mu.Unlock()
	look("webhooks", reply{raw: data})
	if len(views) != 15 {
		t.Errorf("%d views checked", len(views))
	}

	// Those whose amount it is see it: the seller pays it, the broker receives it.
	for _, c := range []*client{w.s, w.k} {
		if r := c.must(http.StatusOK, http.MethodGet, txPath(id), nil); !strings.Contains(string(r.raw), secret) {
			t.Errorf("%s does not see the commission: %s", c.user, r.raw)
		}
	}
	// The seller's disbursement view nets its own commission: 1000.00 - 51.37.
	if r := w.s.must(http.StatusOK, http.MethodGet, txPath(id, "disbursement_methods"), nil); !strings.Contains(string(r.raw), `"total":948.63`) {
		t.Errorf("seller's disbursement view: %s", r.raw)
	}
}

// TestBrokerFeeCannotBeHiddenFromItsPayer: the spec lets a broker hide broker_fee items
// from parties; hiding one from the party that pays it would take money unseen.
func TestBrokerFeeCannotBeHiddenFromItsPayer(t *testing.T) {
	w := newWorld(t)
	b := set(concealedCommission(), "items.1.visibility", body{"hidden_from": []any{"seller@example.com"}})
	set(b, "parties.2.visibility", body{"hidden_from": []any{"seller@example.com"}})
	set(b, "parties.0.customer", "buyer@example.com")
	set(b, "parties.2.customer", "me")
	set(b, "items.0.schedule.0.payer_customer", "buyer@example.com")
	set(b, "items.1.schedule.0.beneficiary_customer", "me")
	r := w.k.must(http.StatusUnprocessableEntity, http.MethodPost, "transaction", b)
	if strings.Join(r.errorPaths(), ",") != "items.1.visibility" {
		t.Errorf("errors: %s", r.raw)
	}
}

// TestVisibilityRules: a party cannot be hidden from itself, and every broker_fee item
// must carry the same visibility, down to whether it has one at all.
func TestVisibilityRules(t *testing.T) {
	w := newWorld(t)
	self := set(brokered(), "parties.1.visibility.hidden_from", []any{"seller@example.com"})
	if got := w.k.must(http.StatusUnprocessableEntity, http.MethodPost, "transaction", self).errorPaths(); !slices.Equal(got, []string{"parties.1"}) {
		t.Errorf("seller hidden from the seller: errors at %v", got)
	}
	two := brokered()
	second := clone(get(two, "items.1").(map[string]any))
	second["visibility"] = body{"hidden_from": []any{}}
	two["items"] = append(two["items"].([]any), second)
	set(two, "items.1.visibility", nil)
	if got := w.k.must(http.StatusUnprocessableEntity, http.MethodPost, "transaction", two).errorPaths(); !slices.Equal(got, []string{"items.2.visibility"}) {
		t.Errorf("one broker_fee item with an empty visibility, one without: errors at %v", got)
	}
	set(two, "items.1.visibility", body{"hidden_from": []any{}})
	w.k.must(http.StatusCreated, http.MethodPost, "transaction", two)
}

// TestBrokerFeeVisibilityIsASet: broker_fee items agree on their visibility when they hide
// the fee from the same customers, in whatever order each lists them; one that hides it
// from fewer is refused. Each item keeps the order it was given.
func TestBrokerFeeVisibilityIsASet(t *testing.T) {
	w := newWorld(t)
	const broker = "broker@example.com"
	fee := func(hidden ...any) body {
		return body{"type": "broker_fee", "visibility": body{"hidden_from": hidden},
			"schedule": []any{body{"amount": 100, "payer_customer": "buyer@example.com", "beneficiary_customer": broker}}}
	}
	// A partner creates it, as only a partner sees a fee hidden from the broker and its
	// visibility. The broker hidden from the buyer's details lets the fee be hidden from the
	// broker.
	b := set(brokered(), "parties.2.customer", broker)
	set(b, "parties.0.visibility", body{"hidden_from": []any{broker}})
	car := get(b, "items.0")
	b["items"] = []any{car, fee("seller@example.com", broker), fee(broker, "seller@example.com"), fee("seller@example.com", broker)}
	p := w.p.must(http.StatusCreated, http.MethodPost, "transaction", b)
	for i, want := range [][]any{{"seller@example.com", broker}, {broker, "seller@example.com"}} {
		if got := p.get(fmt.Sprintf("items.%d.visibility.hidden_from", i+1)); !reflect.DeepEqual(got, want) {
			t.Errorf("fee %d's visibility reads %v, want it as given: %v", i+1, got, want)
		}
	}
	b["items"] = []any{car, fee("seller@example.com", broker), fee(broker)}
	if got := w.p.must(http.StatusUnprocessableEntity, http.MethodPost, "transaction", b).errorPaths(); !slices.Equal(got, []string{"items.2.visibility"}) {
		t.Errorf("fees hidden from different customers: errors at %v, want items.2.visibility", got)
	}
}

func TestShowsPartiesByEmailAddressLikeProviderExamples(t *testing.T) {
	w := newWorld(t)
	id := w.b.create(merchandise())
	for _, c := range []*client{w.b, w.s} {
		r := c.must(http.StatusOK, http.MethodGet, txPath(id), nil)
		if strings.Contains(string(r.raw), `"me"`) || customers(r) != "buyer@example.com seller@example.com buyer@example.com" ||
			r.str("items.0.schedule.0.payer_customer") != "buyer@example.com" || r.str("items.0.fees.0.payer_customer") != "buyer@example.com" {
			t.Errorf("%s's view: %s", c.user, r.raw)
		}
	}
}

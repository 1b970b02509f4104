package escrowtest

// Policies of the emulator that mutation testing (scripts/mutate) found unpinned: each test
// drives the emulator over HTTP, as a user of the package does, so that it holds whatever
// shape lifecycle.go, validate.go and fees.go take inside.

import (
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

// paidOut reports whether the first schedule entry of item i is disbursed, as c sees it.
func paidOut(t *testing.T, c *client, id int64, i int) bool {
	t.Helper()
	r := c.must(http.StatusOK, http.MethodGet, txPath(id), nil)
	v, ok := r.get(fmt.Sprintf("items.%d.schedule.0.status.disbursed_to_beneficiary", i)).(bool)
	if !ok {
		t.Fatalf("no item %d schedule status in %s", i, r.raw)
	}
	return v
}

// closed reports whether the transaction has a close date.
func closed(t *testing.T, c *client, id int64) bool {
	t.Helper()
	return c.must(http.StatusOK, http.MethodGet, txPath(id), nil).get("close_date") != nil
}

// refundsTo lists the amounts the partner sees paid back to a customer's card.
func refundsTo(t *testing.T, w *world, customer Account) []string {
	t.Helper()
	r := w.p.must(http.StatusOK, http.MethodGet, fmt.Sprintf("partner/customer/%d/payments_out", customer.ID), nil)
	var out []string
	for i := range r.list("payments") {
		out = append(out, r.str(fmt.Sprintf("payments.%d.amount", i)))
	}
	slices.Sort(out)
	return out
}

// byCard has the buyer choose a credit card, so that refunds show in payments_out.
func byCard(w *world, id int64) {
	w.b.must(http.StatusOK, http.MethodPost, txPath(id, "payment_methods", "credit_card"), nil)
}

// withFeeItem adds a fee item (shipping_fee or partner_fee) the buyer pays.
func withFeeItem(b body, typ, beneficiary string, amount float64) body {
	b["items"] = append(b["items"].([]any), body{"type": typ,
		"schedule": []any{body{"amount": amount, "payer_customer": "buyer@example.com", "beneficiary_customer": beneficiary}}})
	return b
}

// TestBrokerFeeWaitsForTheBrokersMethod: once the goods are accepted the commission is due,
// but like the seller's money it is paid only when the broker has a disbursement method, and
// the transaction stays open until then.
func TestBrokerFeeWaitsForTheBrokersMethod(t *testing.T) {
	w := newWorld(t)
	id := w.k.create(brokered())
	w.b.act(http.StatusOK, id, 0, action("agree"))
	w.s.act(http.StatusOK, id, 0, action("agree"))
	must(t, w.srv.ApprovePayment(id))
	w.s.must(http.StatusOK, http.MethodPost, txPath(id, "disbursement_methods"), ach())
	for _, s := range []step{ships, receives} {
		s(w, id)
	}
	if paidOut(t, w.k, id, 1) {
		t.Fatal("commission paid before the goods were accepted")
	}
	accepts(w, id)
	if !paidOut(t, w.k, id, 0) {
		t.Error("the seller, who has a method, was not paid on acceptance")
	}
	if paidOut(t, w.k, id, 1) || closed(t, w.k, id) {
		t.Fatal("commission paid, or transaction closed, before the broker chose a method")
	}
	w.k.must(http.StatusOK, http.MethodPost, txPath(id, "disbursement_methods"), ach())
	if !paidOut(t, w.k, id, 1) || !closed(t, w.k, id) {
		t.Errorf("commission unpaid or transaction open once the broker chose a method: %s",
			w.k.must(http.StatusOK, http.MethodGet, txPath(id), nil).raw)
	}
}

// TestPartnerFeePaidWithTheGoods: the partner needs no disbursement method: its fee is paid
// the moment the goods are accepted, not before.
func TestPartnerFeePaidWithTheGoods(t *testing.T) {
	w := newWorld(t)
	id := w.p.create(withFeeItem(partnered(), "partner_fee", "me", 20))
	w.b.act(http.StatusOK, id, 0, action("agree"))
	sellerAgrees(w, id)
	payment(w, id)
	ships(w, id)
	receives(w, id)
	if paidOut(t, w.p, id, 1) {
		t.Fatal("partner fee paid before the goods were accepted")
	}
	accepts(w, id)
	if !paidOut(t, w.p, id, 1) {
		t.Error("partner fee not paid on acceptance")
	}
	if paidOut(t, w.p, id, 0) || closed(t, w.p, id) {
		t.Error("seller paid, or transaction closed, without the seller's method")
	}
}

// TestFullReturnRefundsFeeItems: when every good comes back, no fee item is due: the
// transaction completes and the buyer's card gets back the goods and each fee item.
func TestFullReturnRefundsFeeItems(t *testing.T) {
	w := newWorld(t)
	b := withFeeItem(partnered(), "shipping_fee", "seller@example.com", 15)
	b = withFeeItem(b, "partner_fee", "me", 20)
	id := w.p.create(b)
	w.b.act(http.StatusOK, id, 0, action("agree"))
	sellerAgrees(w, id)
	byCard(w, id)
	payment(w, id)
	w.s.must(http.StatusOK, http.MethodPost, txPath(id, "disbursement_methods"), ach())
	for _, s := range []step{ships, receives, rejects, shipsBack, receivesBack, acceptsReturn} {
		s(w, id)
	}
	if !closed(t, w.p, id) {
		t.Fatal("a fully returned deal did not complete")
	}
	for i := range 3 {
		if paidOut(t, w.p, id, i) {
			t.Errorf("item %d paid out on a full return", i)
		}
	}
	// Each refund gives back what the buyer paid in for the item, its escrow fee included:
	// 1000.00 + 32.50, 15.00 + 0.49, and the partner fee, which carries none.
	if got := refundsTo(t, w, w.buyer); !slices.Equal(got, []string{"1032.50", "15.49", "20.00"}) {
		t.Errorf("refunds to the buyer: %v, want the goods and both fee items", got)
	}
	if got := eventsOf(t, w.p, id); strings.Contains(got, "payment_disbursed") {
		t.Errorf("events: %s", got)
	}
}

// TestRefundsOnlyMoneyInEscrow: a refund returns what is secured and not yet paid out. A
// milestone already paid to the seller stays paid when a later one comes back, and
// cancelling before any payment refunds nothing.
func TestRefundsOnlyMoneyInEscrow(t *testing.T) {
	t.Run("paid milestone", func(t *testing.T) {
		w := newWorld(t)
		b := set(milestones(), "parties.0.customer", "buyer@example.com")
		for i := range 2 {
			set(b, fmt.Sprintf("items.%d.schedule.0.payer_customer", i), "buyer@example.com")
		}
		id := w.p.create(b)
		w.b.act(http.StatusOK, id, 0, action("agree"))
		sellerAgrees(w, id)
		byCard(w, id)
		payment(w, id)
		tx := w.p.must(http.StatusOK, http.MethodGet, txPath(id), nil)
		first, second := tx.id("items.0.id"), tx.id("items.1.id")
		w.s.must(http.StatusOK, http.MethodPost, txPath(id, "disbursement_methods"), ach())
		w.accepted(id, first)
		w.returned(id, second)
		if !paidOut(t, w.p, id, 0) || paidOut(t, w.p, id, 1) || !closed(t, w.p, id) {
			t.Errorf("after one milestone accepted and one returned: %s", w.p.must(http.StatusOK, http.MethodGet, txPath(id), nil).raw)
		}
		// 200.00 and its escrow fee, 7.15; nothing of the milestone already paid out.
		if got := refundsTo(t, w, w.buyer); !slices.Equal(got, []string{"207.15"}) {
			t.Errorf("refunds to the buyer: %v, want only the returned milestone", got)
		}
	})
	t.Run("cancelled before payment", func(t *testing.T) {
		w := newWorld(t)
		id := w.at("agreed")
		w.b.act(http.StatusOK, id, 0, action("cancel"))
		if got := eventsOf(t, w.b, id); got != "create agree cancel" {
			t.Errorf("events: %q: nothing was paid, so nothing is refunded", got)
		}
	})
}

// TestRejectPaymentOnlyWhileAwaitingPayment: RejectPayment stands for a failed payment, so
// it applies only to an agreed, unfunded, open transaction; elsewhere it errs and leaves the
// timeline alone.
func TestRejectPaymentOnlyWhileAwaitingPayment(t *testing.T) {
	for _, tc := range []struct {
		state string
		ok    bool
	}{
		{"created", false}, // the seller has not agreed
		{"agreed", true},
		{"funded", false},
		{"cancelled", false},
	} {
		t.Run(tc.state, func(t *testing.T) {
			w := newWorld(t)
			id := w.at(tc.state)
			before := eventsOf(t, w.b, id)
			err := w.srv.RejectPayment(id)
			if (err == nil) != tc.ok {
				t.Fatalf("RejectPayment = %v, want ok %v", err, tc.ok)
			}
			want := before
			if tc.ok {
				want += " payment_rejected"
			}
			if got := eventsOf(t, w.b, id); got != want {
				t.Errorf("events %q, want %q", got, want)
			}
		})
	}
}

// TestNoDisbursementAnnouncedWithoutMoneyMoving: accepting goods whose seller has no
// disbursement method pays nothing, so no payment_disbursed event or webhook goes out.
func TestNoDisbursementAnnouncedWithoutMoneyMoving(t *testing.T) {
	w := newWorld(t)
	id := w.at("accepted")
	if got := eventsOf(t, w.b, id); !strings.HasSuffix(got, " accept") {
		t.Errorf("events: %q, want nothing after accept", got)
	}
	w.s.must(http.StatusOK, http.MethodPost, txPath(id, "disbursement_methods"), ach())
	if got := eventsOf(t, w.b, id); strings.Count(got, "payment_disbursed") != 1 {
		t.Errorf("events: %q, want one payment_disbursed", got)
	}
}

// TestAutoAcceptNamesTheItem: the timeline entry of an inspection period ending names the
// item when one milestone was accepted, as a buyer's accept of that item would; for a
// whole-transaction sale it names none.
func TestAutoAcceptNamesTheItem(t *testing.T) {
	last := func(t *testing.T, w *world, id int64) map[string]any {
		t.Helper()
		es := w.b.must(http.StatusOK, http.MethodGet, txPath(id, "timeline-entries"), nil).list("timeline_entries")
		return es[len(es)-1].(map[string]any)
	}
	t.Run("milestone", func(t *testing.T) {
		w := newWorld(t)
		id, tx := w.funded(milestones())
		second := tx.id("items.1.id")
		w.s.act(http.StatusOK, id, second, action("ship"))
		w.b.act(http.StatusOK, id, second, action("receive"))
		w.srv.Advance(24 * time.Hour)
		if e := last(t, w, id); e["event"] != "accept" || e["item_id"] != float64(second) {
			t.Errorf("last entry %v, want accept of item %d", e, second)
		}
	})
	t.Run("merchandise", func(t *testing.T) {
		w := newWorld(t)
		id := w.at("received")
		w.srv.Advance(3 * 24 * time.Hour)
		if e := last(t, w, id); e["event"] != "accept" || e["item_id"] != nil {
			t.Errorf("last entry %v, want accept of no item", e)
		}
	})
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

// TestCreationDefaultsAndLimits pins the validation limits at their edges and the defaults
// the emulator fills in.
func TestCreationDefaultsAndLimits(t *testing.T) {
	w := newWorld(t)
	t.Run("default inspection period", func(t *testing.T) {
		b := withFeeItem(set(merchandise(), "items.0.inspection_period", nil), "shipping_fee", "seller@example.com", 5)
		set(b, "items.1.schedule.0.payer_customer", "me")
		r := w.b.must(http.StatusCreated, http.MethodPost, "transaction", b)
		if got := r.get("items.0.inspection_period"); got != float64(3*day) {
			t.Errorf("goods inspection period %v, want three days", got)
		}
		if got := r.get("items.1.inspection_period"); got != nil && got != 0.0 {
			t.Errorf("a fee item has inspection period %v: nothing to inspect", got)
		}
	})
	t.Run("100 items", func(t *testing.T) {
		b := merchandise()
		for len(b["items"].([]any)) < maxItems {
			b = withFeeItem(b, "shipping_fee", "seller@example.com", 1)
			set(b, fmt.Sprintf("items.%d.schedule.0.payer_customer", len(b["items"].([]any))-1), "me")
		}
		w.b.must(http.StatusCreated, http.MethodPost, "transaction", b)
		b = withFeeItem(b, "shipping_fee", "seller@example.com", 1)
		set(b, fmt.Sprintf("items.%d.schedule.0.payer_customer", maxItems), "me")
		if got := w.b.must(http.StatusUnprocessableEntity, http.MethodPost, "transaction", b).errorPaths(); !slices.Equal(got, []string{"items"}) {
			t.Errorf("101 items: errors at %v", got)
		}
	})
	t.Run("100 schedule entries", func(t *testing.T) {
		b := set(milestones(), "items", []any{milestoneItem("Many", 1)})
		entries := []any{}
		for range maxScheduleEntries {
			entries = append(entries, body{"amount": 1, "payer_customer": "me", "beneficiary_customer": "seller@example.com", "due_date": "2024-06-01T00:00:00Z"})
		}
		set(b, "items.0.schedule", entries)
		w.b.must(http.StatusCreated, http.MethodPost, "transaction", b)
		set(b, "items.0.schedule", append(entries, entries[0]))
		if got := w.b.must(http.StatusUnprocessableEntity, http.MethodPost, "transaction", b).errorPaths(); !slices.Equal(got, []string{"items.0.schedule.all"}) {
			t.Errorf("101 entries: errors at %v", got)
		}
	})
	t.Run("total equal to the maximum", func(t *testing.T) {
		one := set(milestones(), "items", []any{milestoneItem("All", 0)})
		entries := []any{
			body{"amount": "999999999.99", "payer_customer": "me", "beneficiary_customer": "seller@example.com", "due_date": "2024-06-01T00:00:00Z"},
			body{"amount": "0.01", "payer_customer": "me", "beneficiary_customer": "seller@example.com", "due_date": "2024-06-01T00:00:00Z"},
		}
		set(one, "items.0.schedule", entries)
		w.b.must(http.StatusCreated, http.MethodPost, "transaction", one)
		set(one, "items.0.schedule.1.amount", "0.02")
		if got := w.b.must(http.StatusUnprocessableEntity, http.MethodPost, "transaction", one).errorPaths(); !slices.Equal(got, []string{"items.0.schedule.all"}) {
			t.Errorf("a schedule over the maximum: errors at %v", got)
		}
	})
	t.Run("empty fees list", func(t *testing.T) {
		r := w.b.must(http.StatusCreated, http.MethodPost, "transaction", set(merchandise(), "items.0.fees", []any{}))
		want := []any{map[string]any{"type": "escrow", "payer_customer": "buyer@example.com", "split": "1.0", "amount": "32.50", "amount_without_taxes": "32.50"}}
		if got := r.list("items.0.fees"); !jsonEqual(got, want) {
			t.Errorf("fees %v, want the default: the buyer pays the escrow fee", got)
		}
	})
}

// TestFeeItemsCarryNoFees: partner_fee items take no fees list, and neither fee item type is
// charged an escrow fee of its own.
func TestFeeItemsCarryNoFees(t *testing.T) {
	w := newWorld(t)
	b := withFeeItem(partnered(), "partner_fee", "me", 20)
	r := w.p.must(http.StatusCreated, http.MethodPost, "transaction", b)
	if fees := r.list("items.1.fees"); len(fees) != 0 {
		t.Errorf("partner fee item charged fees %v", fees)
	}
	k := w.k.must(http.StatusCreated, http.MethodPost, "transaction", brokered())
	if fees := k.list("items.1.fees"); len(fees) != 0 {
		t.Errorf("broker fee item charged fees %v", fees)
	}
	// The list is refused whole: its entries, wrong as they are, are not judged one by one.
	set(b, "items.1.fees", []any{body{"type": "escrow", "payer_customer": "buyer@example.com", "split": 0.5}, body{"type": "bogus"}})
	if got := w.p.must(http.StatusUnprocessableEntity, http.MethodPost, "transaction", b).errorPaths(); !slices.Equal(got, []string{"items.1.fees"}) {
		t.Errorf("fees on a partner_fee item: errors at %v, want only items.1.fees", got)
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

// TestShipmentDetailsInTheTimeline: the timeline entry of a shipment tells the carrier and
// tracking id when given, and the authorization type of a domain transfer; nothing more.
func TestShipmentDetailsInTheTimeline(t *testing.T) {
	lastMessage := func(t *testing.T, c *client, id int64) string {
		t.Helper()
		es := c.must(http.StatusOK, http.MethodGet, txPath(id, "timeline-entries"), nil).list("timeline_entries")
		return es[len(es)-1].(map[string]any)["message"].(string)
	}
	w := newWorld(t)
	id := w.at("funded")
	w.s.act(http.StatusOK, id, 0, body{"action": "ship", "shipping_information": body{
		"tracking_information": body{"carrier": "UPS", "tracking_id": "1Z999"}}})
	if got, want := lastMessage(t, w.b, id), "The seller marked the goods shipped (UPS, 1Z999)."; got != want {
		t.Errorf("merchandise shipment: %q, want %q", got, want)
	}
	id = w.at("funded")
	ships(w, id)
	if got, want := lastMessage(t, w.b, id), "The seller marked the goods shipped."; got != want {
		t.Errorf("shipment without details: %q, want %q", got, want)
	}
	id = w.s.create(domain())
	w.b.act(http.StatusOK, id, 0, action("agree"))
	must(t, w.srv.ApprovePayment(id))
	w.s.act(http.StatusOK, id, 0, body{"action": "ship", "shipping_information": body{"authorization_type": "push"}})
	if got, want := lastMessage(t, w.b, id), "The seller marked the goods shipped (authorization push)."; got != want {
		t.Errorf("domain transfer: %q, want %q", got, want)
	}
}

// TestItemOrderDoesNotHoldPayouts: the order items are listed in does not matter to who is
// paid: a commission listed first, whose broker has no disbursement method yet, does not
// keep the seller from being paid for accepted goods.
func TestItemOrderDoesNotHoldPayouts(t *testing.T) {
	w := newWorld(t)
	b := brokered()
	items := b["items"].([]any)
	b["items"] = []any{items[1], items[0]}
	id := w.k.create(b)
	w.b.act(http.StatusOK, id, 0, action("agree"))
	w.s.act(http.StatusOK, id, 0, action("agree"))
	must(t, w.srv.ApprovePayment(id))
	w.s.must(http.StatusOK, http.MethodPost, txPath(id, "disbursement_methods"), ach())
	for _, s := range []step{ships, receives, accepts} {
		s(w, id)
	}
	if fee, goods := paidOut(t, w.k, id, 0), paidOut(t, w.k, id, 1); fee || !goods {
		t.Errorf("with the commission listed first: commission paid %v, goods paid %v; want false, true", fee, goods)
	}
}

// TestOnePaymentDisbursedPerPayout: payment_disbursed announces money moving; a milestone
// paid out earlier is not paid, nor announced, again as the next one moves along.
func TestOnePaymentDisbursedPerPayout(t *testing.T) {
	w := newWorld(t)
	id, tx := w.funded(milestones())
	first, second := tx.id("items.0.id"), tx.id("items.1.id")
	w.s.must(http.StatusOK, http.MethodPost, txPath(id, "disbursement_methods"), ach())
	w.accepted(id, first)
	w.s.act(http.StatusOK, id, second, action("ship"))
	w.b.act(http.StatusOK, id, second, action("receive"))
	if got := eventsOf(t, w.b, id); strings.Count(got, "payment_disbursed") != 1 {
		t.Errorf("events %q: want one payment_disbursed, for the first milestone", got)
	}
}

// TestFeeItemWaitsForEveryGood: a fee item is paid once every good is settled, not when the
// first of several is accepted; and each milestone is paid when accepted, whichever order
// they are accepted in (here the second first, while the first is still owed nothing).
func TestFeeItemWaitsForEveryGood(t *testing.T) {
	w := newWorld(t)
	b := set(milestones(), "parties.0.customer", "buyer@example.com")
	for i := range 2 {
		set(b, fmt.Sprintf("items.%d.schedule.0.payer_customer", i), "buyer@example.com")
	}
	id := w.p.create(withFeeItem(b, "partner_fee", "me", 20))
	w.b.act(http.StatusOK, id, 0, action("agree"))
	sellerAgrees(w, id)
	payment(w, id)
	w.s.must(http.StatusOK, http.MethodPost, txPath(id, "disbursement_methods"), ach())
	tx := w.p.must(http.StatusOK, http.MethodGet, txPath(id), nil)
	for n, i := range []int{1, 0} {
		it := tx.id(fmt.Sprintf("items.%d.id", i))
		w.accepted(id, it)
		if !paidOut(t, w.p, id, i) {
			t.Errorf("milestone %d accepted but not paid", i)
		}
		if paid, want := paidOut(t, w.p, id, 2), n == 1; paid != want {
			t.Errorf("after %d of 2 milestones accepted: partner fee paid %v, want %v", n+1, paid, want)
		}
	}
}

// TestReturnedMilestoneRefundedAtOnce: the money of a milestone returned and accepted back
// goes back to the buyer then, not when the rest of the transaction completes.
func TestReturnedMilestoneRefundedAtOnce(t *testing.T) {
	w := newWorld(t)
	b := set(milestones(), "parties.0.customer", "buyer@example.com")
	for i := range 2 {
		set(b, fmt.Sprintf("items.%d.schedule.0.payer_customer", i), "buyer@example.com")
	}
	id := w.p.create(b)
	w.b.act(http.StatusOK, id, 0, action("agree"))
	sellerAgrees(w, id)
	byCard(w, id)
	payment(w, id)
	first := w.p.must(http.StatusOK, http.MethodGet, txPath(id), nil).id("items.0.id")
	w.returned(id, first)
	if got := refundsTo(t, w, w.buyer); len(got) != 1 {
		t.Errorf("refunds to the buyer with the second milestone still open: %v, want the first milestone's", got)
	}
}

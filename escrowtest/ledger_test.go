package escrowtest

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"
)

// sellerPaysCommission is the audit's case: a broker sells a 1000.00 item; the buyer pays
// the 32.50 escrow fee; the seller, hidden from the buyer, pays the broker 51.37, which
// the buyer does not see.
func sellerPaysCommission() body {
	return body{
		"currency": "usd", "description": "Brokered sale",
		"parties": []any{
			body{"role": "buyer", "customer": "buyer@example.com"},
			body{"role": "seller", "customer": "seller@example.com", "visibility": body{"hidden_from": []any{"buyer@example.com"}}},
			body{"role": "broker", "customer": "me"},
		},
		"items": []any{
			body{"title": "Guitar", "type": "general_merchandise",
				"schedule": []any{body{"amount": 1000, "payer_customer": "buyer@example.com", "beneficiary_customer": "seller@example.com"}}},
			body{"type": "broker_fee", "visibility": body{"hidden_from": []any{"buyer@example.com"}},
				"schedule": []any{body{"amount": "51.37", "payer_customer": "seller@example.com", "beneficiary_customer": "me"}}},
		},
	}
}

// balanced checks the invariant in = out + fees + held, and returns the ledger.
func balanced(t *testing.T, srv *Server, id int64, after string) Ledger {
	t.Helper()
	l, err := srv.Ledger(id)
	must(t, err)
	in, out, fees, held := mustCents(t, l.In), mustCents(t, l.Out), mustCents(t, l.Fees), mustCents(t, l.Held)
	if in != out+fees+held || held < 0 {
		t.Errorf("after %s: in %s != out %s + fees %s + held %s", after, l.In, l.Out, l.Fees, l.Held)
	}
	return l
}

func mustCents(t *testing.T, s string) cents {
	t.Helper()
	if s == "0.00" {
		return 0
	}
	c, err := parseCents(s)
	must(t, err)
	return c
}

// brokerWorld creates sellerPaysCommission as the broker, with every party agreed.
func brokerWorld(t *testing.T) (*world, int64) {
	w := newWorld(t)
	id := w.k.create(sellerPaysCommission())
	balanced(t, w.srv, id, "create")
	w.b.act(http.StatusOK, id, 0, action("agree"))
	w.s.act(http.StatusOK, id, 0, action("agree"))
	balanced(t, w.srv, id, "agree")
	return w, id
}

func wantLedger(t *testing.T, got Ledger, want Ledger, after string) {
	t.Helper()
	if got != want {
		t.Errorf("after %s: %+v, want %+v", after, got, want)
	}
}

// TestFundingSecuresOnlyWhatIsPaidIn: the seller's commission is not paid in, so it adds
// nothing to what is held; it is taken from the seller's proceeds, which cover it.
func TestFundingSecuresOnlyWhatIsPaidIn(t *testing.T) {
	w, id := brokerWorld(t)
	payment(w, id)
	wantLedger(t, balanced(t, w.srv, id, "funding"), Ledger{In: "1032.50", Out: "0.00", Fees: "0.00", Held: "1032.50"}, "funding")
	r := w.k.must(http.StatusOK, http.MethodGet, txPath(id), nil)
	if r.get("items.0.schedule.0.status.secured") != true || r.get("items.1.schedule.0.status.secured") != true {
		t.Errorf("secured flags: %s", r.raw)
	}
}

// TestCancelRefundsOnlyWhatWasPaidIn is the audit's case: after a cancel the seller-paid
// commission used to be "refunded" to the seller, 1051.37 out of 1032.50 in.
func TestCancelRefundsOnlyWhatWasPaidIn(t *testing.T) {
	w, id := brokerWorld(t)
	payment(w, id)
	w.k.act(http.StatusOK, id, 0, action("cancel")) // the broker is the partner
	wantLedger(t, balanced(t, w.srv, id, "cancel"), Ledger{In: "1032.50", Out: "1032.50", Fees: "0.00", Held: "0.00"}, "cancel")
	// Cancelled before funding: nothing in, nothing out.
	w2, id2 := brokerWorld(t)
	w2.k.act(http.StatusOK, id2, 0, action("cancel"))
	wantLedger(t, balanced(t, w2.srv, id2, "cancel"), Ledger{In: "0.00", Out: "0.00", Fees: "0.00", Held: "0.00"}, "unfunded cancel")
}

// TestMoneyBalancesThroughAcceptance checks the invariant after every step of a sale and
// that the commission reaches the broker out of the seller's proceeds, whichever of the
// two selects a disbursement method first.
func TestMoneyBalancesThroughAcceptance(t *testing.T) {
	for _, sellerFirst := range []bool{true, false} {
		w, id := brokerWorld(t)
		steps := []struct {
			name string
			do   func()
		}{
			{"funding", func() { payment(w, id) }},
			{"ship", func() { ships(w, id) }},
			{"receive", func() { receives(w, id) }},
			{"accept", func() { accepts(w, id) }},
			{"first method", func() {
				if sellerFirst {
					w.s.must(http.StatusOK, http.MethodPost, txPath(id, "disbursement_methods"), ach())
				} else {
					w.k.must(http.StatusOK, http.MethodPost, txPath(id, "disbursement_methods"), ach())
				}
			}},
			{"second method", func() {
				if sellerFirst {
					w.k.must(http.StatusOK, http.MethodPost, txPath(id, "disbursement_methods"), ach())
				} else {
					w.s.must(http.StatusOK, http.MethodPost, txPath(id, "disbursement_methods"), ach())
				}
			}},
		}
		for _, s := range steps {
			s.do()
			l := balanced(t, w.srv, id, s.name)
			if s.name == "first method" && sellerFirst {
				// The seller is paid 1000.00 less the commission, which is withheld.
				wantLedger(t, l, Ledger{In: "1032.50", Out: "948.63", Fees: "32.50", Held: "51.37"}, "the seller's payout")
			}
		}
		wantLedger(t, balanced(t, w.srv, id, "completion"), Ledger{In: "1032.50", Out: "1000.00", Fees: "32.50", Held: "0.00"}, "completion")
		if r := w.k.must(http.StatusOK, http.MethodGet, txPath(id), nil); r.str("close_date") == "" || r.get("items.1.schedule.0.status.disbursed_to_beneficiary") != true {
			t.Errorf("not complete: %s", r.raw)
		}
	}
}

// TestMoneyBalancesThroughAFullReturn: a full return gives the buyer back what it paid
// in, and nothing the seller owed.
func TestMoneyBalancesThroughAFullReturn(t *testing.T) {
	w, id := brokerWorld(t)
	for _, s := range []struct {
		name string
		do   step
	}{{"funding", payment}, {"ship", ships}, {"receive", receives}, {"reject", rejects}, {"ship_return", shipsBack}, {"receive_return", receivesBack}, {"accept_return", acceptsReturn}} {
		s.do(w, id)
		balanced(t, w.srv, id, s.name)
	}
	wantLedger(t, balanced(t, w.srv, id, "return"), Ledger{In: "1032.50", Out: "1032.50", Fees: "0.00", Held: "0.00"}, "full return")
}

// TestMoneyBalancesPerMilestone: a split fee and a seller-paid commission over two
// milestones, one accepted and one returned, the second by the end of a return
// inspection.
func TestMoneyBalancesPerMilestone(t *testing.T) {
	w := newWorld(t)
	b := sellerPaysCommission()
	b["items"] = []any{
		body{"title": "Design", "type": "milestone", "inspection_period": 86400,
			"fees":     []any{body{"type": "escrow", "payer_customer": "buyer@example.com", "split": 0.5}, body{"type": "escrow", "payer_customer": "seller@example.com", "split": 0.5}},
			"schedule": []any{body{"amount": 300, "payer_customer": "buyer@example.com", "beneficiary_customer": "seller@example.com", "due_date": "2024-06-01T00:00:00Z"}}},
		body{"title": "Build", "type": "milestone", "inspection_period": 86400,
			"fees":     []any{body{"type": "escrow", "payer_customer": "buyer@example.com", "split": 0.5}, body{"type": "escrow", "payer_customer": "seller@example.com", "split": 0.5}},
			"schedule": []any{body{"amount": 200, "payer_customer": "buyer@example.com", "beneficiary_customer": "seller@example.com", "due_date": "2024-07-01T00:00:00Z"}}},
		body{"type": "broker_fee", "schedule": []any{body{"amount": 20, "payer_customer": "seller@example.com", "beneficiary_customer": "me"}}},
	}
	id := w.k.create(b)
	r := w.k.must(http.StatusOK, http.MethodGet, txPath(id), nil)
	first, second := r.id("items.0.id"), r.id("items.1.id")
	w.b.act(http.StatusOK, id, 0, action("agree"))
	w.s.act(http.StatusOK, id, 0, action("agree"))
	w.s.must(http.StatusOK, http.MethodPost, txPath(id, "disbursement_methods"), ach())
	w.k.must(http.StatusOK, http.MethodPost, txPath(id, "disbursement_methods"), ach())
	steps := []struct {
		name string
		do   func()
	}{
		{"funding", func() { payment(w, id) }},
		{"ship 1", func() { w.s.act(http.StatusOK, id, first, action("ship")) }},
		{"receive 1", func() { w.b.act(http.StatusOK, id, first, action("receive")) }},
		{"accept 1", func() { w.b.act(http.StatusOK, id, first, action("accept")) }},
		{"ship 2", func() { w.s.act(http.StatusOK, id, second, action("ship")) }},
		{"receive 2", func() { w.b.act(http.StatusOK, id, second, action("receive")) }},
		{"reject 2", func() { w.b.act(http.StatusOK, id, second, action("reject")) }},
		{"ship_return 2", func() { w.b.act(http.StatusOK, id, second, action("ship_return")) }},
		{"receive_return 2", func() { w.s.act(http.StatusOK, id, second, action("receive_return")) }},
		{"return inspection ends", func() { w.srv.Advance(24 * time.Hour) }},
	}
	for _, s := range steps {
		s.do()
		balanced(t, w.srv, id, s.name)
	}
	// Fees: 300.00 milestone 10.73 (5.37 + 5.36), 200.00 milestone 7.15 (3.58 + 3.57).
	// In: 300 + 200 + 5.37 + 3.58 = 508.95. The first milestone is earned (10.73) and paid
	// to the seller less its fee share and the commission (300 - 5.36 - 20 = 274.64) and
	// to the broker (20); the second goes back to the buyer with its fee share (203.58).
	wantLedger(t, balanced(t, w.srv, id, "completion"), Ledger{In: "508.95", Out: "498.22", Fees: "10.73", Held: "0.00"}, "completion")
}

// TestMoneyBalancesInEveryState walks every station of the merchandise lifecycle, the
// ledger checked after each step, and then lets inspection periods run out.
func TestMoneyBalancesInEveryState(t *testing.T) {
	for name, steps := range states {
		t.Run(name, func(t *testing.T) {
			w := newWorld(t)
			id := w.b.create(merchandise())
			w.s.must(http.StatusOK, http.MethodPost, txPath(id, "disbursement_methods"), ach())
			balanced(t, w.srv, id, "create")
			for i, s := range steps {
				s(w, id)
				balanced(t, w.srv, id, fmt.Sprintf("step %d", i+1))
			}
			w.srv.Advance(30 * 24 * time.Hour)
			l := balanced(t, w.srv, id, "the end of every inspection period")
			if r := w.b.must(http.StatusOK, http.MethodGet, txPath(id), nil); r.str("close_date") != "" && l.Held != "0.00" {
				t.Errorf("closed with %s still held", l.Held)
			}
		})
	}
}

// TestMoneyBalancesWithShippingAndPartnerFees: a split escrow fee that the shipping item
// follows, and a partner fee the seller pays out of its proceeds.
func TestMoneyBalancesWithShippingAndPartnerFees(t *testing.T) {
	w := newWorld(t)
	b := set(partnered(), "items.0.fees", []any{
		body{"type": "escrow", "payer_customer": "buyer@example.com", "split": 0.5},
		body{"type": "escrow", "payer_customer": "seller@example.com", "split": 0.5},
	})
	b["items"] = append(b["items"].([]any),
		body{"type": "shipping_fee", "schedule": []any{body{"amount": 50, "payer_customer": "buyer@example.com", "beneficiary_customer": "seller@example.com"}}},
		body{"type": "partner_fee", "schedule": []any{body{"amount": 15, "payer_customer": "seller@example.com", "beneficiary_customer": "me"}}},
	)
	id := w.p.create(b)
	for i, s := range []step{
		func(w *world, id int64) { w.b.act(http.StatusOK, id, 0, action("agree")) },
		sellerAgrees,
		func(w *world, id int64) {
			w.s.must(http.StatusOK, http.MethodPost, txPath(id, "disbursement_methods"), ach())
		},
		payment, ships, receives, accepts,
	} {
		s(w, id)
		balanced(t, w.srv, id, fmt.Sprintf("step %d", i+1))
	}
	// In: 1000 + 50 + the buyer's fee shares 16.25 + 0.82. Out: the seller 1000 - 16.25 -
	// 15 (withheld for the partner fee) and 50 - 0.81, the partner 15. Fees: 32.50 + 1.63.
	wantLedger(t, balanced(t, w.srv, id, "completion"), Ledger{In: "1067.07", Out: "1032.94", Fees: "34.13", Held: "0.00"}, "completion")
	if r := w.p.must(http.StatusOK, http.MethodGet, txPath(id), nil); r.str("close_date") == "" {
		t.Errorf("not complete: %s", r.raw)
	}
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

// TestAcceptedMilestonePaidInFull: a milestone accepted is paid to the seller in full; the
// milestones still in escrow are the buyer's money, not something the seller owes, and
// nothing is withheld against them.
func TestAcceptedMilestonePaidInFull(t *testing.T) {
	w := newWorld(t)
	id, tx := w.funded(milestones())
	first := tx.id("items.0.id")
	w.s.must(http.StatusOK, http.MethodPost, txPath(id, "disbursement_methods"), ach())
	w.accepted(id, first)
	// In: 300.00 + 200.00 and the buyer's escrow fees, 10.73 + 7.15. Out: the first
	// milestone, whole. Held: the second and its fee.
	wantLedger(t, balanced(t, w.srv, id, "the first milestone"), Ledger{In: "517.88", Out: "300.00", Fees: "10.73", Held: "207.15"}, "the first milestone accepted")
}

// TestSellerPaidFeesAllWithheld: with two commissions the seller pays, the seller's payout
// is the price less both, and each reaches the broker whole.
func TestSellerPaidFeesAllWithheld(t *testing.T) {
	w := newWorld(t)
	b := sellerPaysCommission()
	second := clone(get(b, "items.1").(map[string]any))
	set(second, "schedule.0.amount", "10.00")
	b["items"] = append(b["items"].([]any), second)
	id := w.k.create(b)
	w.b.act(http.StatusOK, id, 0, action("agree"))
	w.s.act(http.StatusOK, id, 0, action("agree"))
	w.s.must(http.StatusOK, http.MethodPost, txPath(id, "disbursement_methods"), ach())
	for _, s := range []step{payment, ships, receives, accepts} {
		s(w, id)
	}
	// The seller gets 1000.00 less 51.37 and 10.00; both are held for the broker.
	wantLedger(t, balanced(t, w.srv, id, "acceptance"), Ledger{In: "1032.50", Out: "938.63", Fees: "32.50", Held: "61.37"}, "the seller's payout")
	w.k.must(http.StatusOK, http.MethodPost, txPath(id, "disbursement_methods"), ach())
	wantLedger(t, balanced(t, w.srv, id, "completion"), Ledger{In: "1032.50", Out: "1000.00", Fees: "32.50", Held: "0.00"}, "the broker's payout")
}

// TestCommissionPaidFromWhatWasWithheldWhateverTheOrder: the commission listed before the
// milestones is paid from what the first milestone's payout withheld, when the last one is
// accepted, and the transaction completes.
func TestCommissionPaidFromWhatWasWithheldWhateverTheOrder(t *testing.T) {
	w, id, first, second := milestoneWorld(t, milestonesWithCommission(300, 200, true))
	for _, it := range []int64{first, second} {
		w.accepted(id, it)
	}
	if !closed(t, w.k, id) || !paidOut(t, w.k, id, 0) {
		t.Errorf("both milestones accepted: commission paid %v, closed %v; want both", paidOut(t, w.k, id, 0), closed(t, w.k, id))
	}
	// In: 500.00 and the buyer's escrow fees, 10.73 + 7.15. Out: the seller 500.00 less
	// the commission, the broker 20.00.
	wantLedger(t, balanced(t, w.srv, id, "completion"), Ledger{In: "517.88", Out: "500.00", Fees: "17.88", Held: "0.00"}, "completion")
}

// TestCommissionCappedAtWhatWasWithheld: when the seller's proceeds are less than the
// commission it pays (a 10.00 milestone accepted, the other returned), the broker gets what
// could be withheld, and the transaction completes rather than waiting for money that will
// never come.
func TestCommissionCappedAtWhatWasWithheld(t *testing.T) {
	w, id, first, second := milestoneWorld(t, milestonesWithCommission(10, 200, false))
	w.accepted(id, first)
	w.returned(id, second)
	if !closed(t, w.k, id) || !paidOut(t, w.k, id, 2) {
		t.Errorf("after one milestone accepted and one returned: commission paid %v, closed %v; want both", paidOut(t, w.k, id, 2), closed(t, w.k, id))
	}
	if l := balanced(t, w.srv, id, "completion"); l.Held != "0.00" {
		t.Errorf("completed with %s held", l.Held)
	}
}

// TestReturnRefundsEveryScheduleEntry: a milestone paid in two instalments and returned
// gives the buyer back both, and its escrow fee.
func TestReturnRefundsEveryScheduleEntry(t *testing.T) {
	w := newWorld(t)
	id, tx := w.funded(instalments())
	it := tx.id("items.0.id")
	w.returned(id, it)
	l := balanced(t, w.srv, id, "the return")
	if l.Out != l.In || l.Held != "0.00" {
		t.Errorf("after the return: %+v, want everything paid in given back", l)
	}
}

// TestSellerPaysItsEscrowFeeBesideOtherFees: the seller's escrow fee is taken from its
// payout even when the item lists another fee the seller pays after it (a wire
// disbursement fee, which costs nothing here).
func TestSellerPaysItsEscrowFeeBesideOtherFees(t *testing.T) {
	w := newWorld(t)
	id, _ := w.funded(set(merchandise(), "items.0.fees", []any{
		body{"type": "escrow", "payer_customer": "seller@example.com"},
		body{"type": "wire_disbursement", "payer_customer": "seller@example.com"},
	}))
	w.s.must(http.StatusOK, http.MethodPost, txPath(id, "disbursement_methods"), ach())
	for _, s := range []step{ships, receives, accepts} {
		s(w, id)
	}
	wantLedger(t, balanced(t, w.srv, id, "acceptance"), Ledger{In: "1000.00", Out: "967.50", Fees: "32.50", Held: "0.00"}, "acceptance")
}

// TestCommissionListedFirstPaidFromLaterPayouts: a seller-paid commission listed before
// milestones, the first of them smaller than it, is paid once the last is accepted, from
// what both payouts withheld, and the deal completes. It used to be paid in item order,
// before the last payout had withheld its share: it waited for a payout already made, and
// the deal stayed open with 20.00 held for ever.
func TestCommissionListedFirstPaidFromLaterPayouts(t *testing.T) {
	w, id, first, second := milestoneWorld(t, milestonesWithCommission(10, 200, true))
	w.accepted(id, first)
	if l := balanced(t, w.srv, id, "the first milestone"); l.Out != "0.00" {
		t.Errorf("after the first milestone: %+v; want its 10.00 withheld toward the commission", l)
	}
	w.accepted(id, second)
	if !paidOut(t, w.k, id, 0) || !closed(t, w.k, id) {
		t.Errorf("both milestones accepted: commission paid %v, closed %v; want both", paidOut(t, w.k, id, 0), closed(t, w.k, id))
	}
	// Out: the seller's 10.00 + 200.00 less the 20.00 commission, and the broker's 20.00.
	if l := balanced(t, w.srv, id, "completion"); l.Out != "210.00" || l.Held != "0.00" {
		t.Errorf("at completion: %+v; want out 210.00 and nothing held", l)
	}
}

// TestSellerWithheldOnlyWhatItOwes: each seller payout withholds what the seller still
// owes less what earlier payouts withheld, not more. With milestones of 10.00, 200.00 and
// 300.00 and a 20.00 commission, the first payout withholds 10.00 and the second the other
// 10.00.
func TestSellerWithheldOnlyWhatItOwes(t *testing.T) {
	b := milestonesWithCommission(10, 200, false)
	items := b["items"].([]any)
	third := set(clone(items[1].(body)), "title", "Ship")
	set(third, "schedule.0.amount", 300)
	b["items"] = []any{items[0], items[1], third, items[2]}
	w, id, first, second := milestoneWorld(t, b)
	w.accepted(id, first)
	w.accepted(id, second)
	if l := balanced(t, w.srv, id, "two milestones"); l.Out != "190.00" {
		t.Errorf("two milestones paid out: %+v; want out 190.00 (210.00 less the 20.00 owed)", l)
	}
}

// TestCommissionWaitsForTheSellersPayout: a seller-paid commission due while the seller
// cannot be paid yet (no disbursement method) waits for the seller's payout to withhold it,
// rather than being paid short out of nothing, and is paid in full once the seller picks a
// method.
func TestCommissionWaitsForTheSellersPayout(t *testing.T) {
	w := newWorld(t)
	id := w.k.create(sellerPaysCommission())
	w.b.act(http.StatusOK, id, 0, action("agree"))
	w.s.act(http.StatusOK, id, 0, action("agree"))
	w.k.must(http.StatusOK, http.MethodPost, txPath(id, "disbursement_methods"), ach())
	payment(w, id)
	w.accepted(id, 0)
	if paidOut(t, w.k, id, 1) {
		t.Error("the commission was paid before the seller's payout withheld it")
	}
	w.s.must(http.StatusOK, http.MethodPost, txPath(id, "disbursement_methods"), ach())
	if !paidOut(t, w.k, id, 1) || !closed(t, w.k, id) {
		t.Errorf("the seller picked a method: commission paid %v, closed %v; want both", paidOut(t, w.k, id, 1), closed(t, w.k, id))
	}
	wantLedger(t, balanced(t, w.srv, id, "completion"), Ledger{In: "1032.50", Out: "1000.00", Fees: "32.50", Held: "0.00"}, "completion")
}

// TestBrokersEscrowFeeShareListedFirst: when the broker takes half the escrow fee and is
// listed before the buyer's half, the buyer's half is earned at the payout (not refunded at
// completion), and the seller is not charged the broker's half.
func TestBrokersEscrowFeeShareListedFirst(t *testing.T) {
	w := newWorld(t)
	id := w.k.create(set(sellerPaysCommission(), "items.0.fees", []any{
		body{"type": "escrow", "payer_customer": "me", "split": 0.5},
		body{"type": "escrow", "payer_customer": "buyer@example.com", "split": 0.5},
	}))
	w.b.act(http.StatusOK, id, 0, action("agree"))
	w.s.act(http.StatusOK, id, 0, action("agree"))
	w.s.must(http.StatusOK, http.MethodPost, txPath(id, "disbursement_methods"), ach())
	w.k.must(http.StatusOK, http.MethodPost, txPath(id, "disbursement_methods"), ach())
	payment(w, id)
	w.accepted(id, 0)
	l := balanced(t, w.srv, id, "completion")
	// In: 1000.00 and the buyer's half of the fee, which is what the fees earned.
	if in := mustCents(t, l.In); l.Out != "1000.00" || mustCents(t, l.Fees) != in-100000 || !closed(t, w.k, id) {
		t.Errorf("at completion: %+v, closed %v; want out 1000.00 (the seller's 948.63 and the broker's 51.37) and the buyer's half earned", l, closed(t, w.k, id))
	}
}

// TestItemPaidInInstalmentsPaidOutInFull: a milestone paid in two instalments and accepted
// pays both to the seller.
func TestItemPaidInInstalmentsPaidOutInFull(t *testing.T) {
	w := newWorld(t)
	id, tx := w.funded(instalments())
	w.s.must(http.StatusOK, http.MethodPost, txPath(id, "disbursement_methods"), ach())
	w.accepted(id, tx.id("items.0.id"))
	if l := balanced(t, w.srv, id, "acceptance"); l.Out != "500.00" {
		t.Errorf("after acceptance: %+v; want both instalments, 500.00, paid out", l)
	}
}

// TestCommissionEqualToTheWithholdingIsPaidAtOnce: goods, then a seller-paid commission,
// then a shipping fee the buyer pays the seller. Paying out the goods withholds exactly the
// commission (20.00), which is then enough to pay it: the broker is paid in the same pass,
// though a seller payout (the shipping fee) is still to come, and the deal completes with
// nothing held. Both methods are given before acceptance, so one pass over the items is all
// there is.
func TestCommissionEqualToTheWithholdingIsPaidAtOnce(t *testing.T) {
	w := newWorld(t)
	b := sellerPaysCommission()
	set(b, "items.1.schedule.0.amount", "20.00")
	b["items"] = append(b["items"].([]any), body{"type": "shipping_fee",
		"schedule": []any{body{"amount": "15.00", "payer_customer": "buyer@example.com", "beneficiary_customer": "seller@example.com"}}})
	id := w.k.create(b)
	w.b.act(http.StatusOK, id, 0, action("agree"))
	w.s.act(http.StatusOK, id, 0, action("agree"))
	w.s.must(http.StatusOK, http.MethodPost, txPath(id, "disbursement_methods"), ach())
	w.k.must(http.StatusOK, http.MethodPost, txPath(id, "disbursement_methods"), ach())
	for _, s := range []step{payment, ships, receives, accepts} {
		s(w, id)
	}
	l := balanced(t, w.srv, id, "acceptance")
	if l.Held != "0.00" {
		t.Errorf("%s still held after acceptance: %+v", l.Held, l)
	}
	// What went out is everything paid in but the escrow fee: the seller's 1000.00 + 15.00
	// less the 20.00 commission, and the broker's 20.00.
	if in, out, fees := mustCents(t, l.In), mustCents(t, l.Out), mustCents(t, l.Fees); out != in-fees {
		t.Errorf("out %s, want in %s less fees %s", l.Out, l.In, l.Fees)
	}
	r := w.k.must(http.StatusOK, http.MethodGet, txPath(id), nil)
	if !paidOut(t, w.k, id, 1) {
		t.Errorf("the broker's commission is not paid: %s", r.raw)
	}
	if !paidOut(t, w.k, id, 2) || !closed(t, w.k, id) {
		t.Errorf("the deal is not complete: %s", r.raw)
	}
}

// TestWireFundedRefundsAreNotCardPayments: the partner's payments_out lists refunds to the
// customer's card, so a refund of a deal the buyer funded by wire is not among them, while
// the same buyer's card-funded refund is. Two deals of different amounts, both returned.
func TestWireFundedRefundsAreNotCardPayments(t *testing.T) {
	w := newWorld(t)
	deal := func(amount string, pay func(id int64)) int64 {
		id := w.p.create(set(partnered(), "items.0.schedule.0.amount", amount))
		w.b.act(http.StatusOK, id, 0, action("agree"))
		sellerAgrees(w, id)
		pay(id)
		payment(w, id)
		w.returned(id, 0)
		return id
	}
	card := deal("1000.00", func(id int64) { byCard(w, id) })
	wire := deal("750.00", func(id int64) {
		w.b.must(http.StatusOK, http.MethodPost, txPath(id, "payment_methods", "wire_transfer"), nil)
	})
	back := map[int64]string{}
	for _, id := range []int64{card, wire} {
		l := balanced(t, w.srv, id, "return")
		if l.Out != l.In || l.Held != "0.00" {
			t.Fatalf("transaction %d not refunded in full: %+v", id, l)
		}
		back[id] = l.Out
	}
	if got := refundsTo(t, w, w.buyer); !slices.Equal(got, []string{back[card]}) {
		t.Errorf("refunds to the buyer's card: %v, want only the card-funded deal's %s (the wire-funded deal refunded %s)", got, back[card], back[wire])
	}
}

// TestSellerPaidInFullOnceItsFeeIsPaid: the seller pays the partner a 20.00 fee, the buyer
// pays the broker a 30.00 commission and the seller a 15.00 shipping fee. The broker has no
// disbursement method yet. Accepting the goods withholds 20.00 from the seller's payout, pays
// the partner's fee from it, and pays the shipping fee in full: with the partner paid the
// seller owes nothing more, so only the broker's 30.00 stays held, not 15.00 of the seller's
// money as well.
func TestSellerPaidInFullOnceItsFeeIsPaid(t *testing.T) {
	w := newWorld(t)
	b := partnered()
	b["parties"] = append(b["parties"].([]any), body{"role": "broker", "customer": "broker@example.com"})
	b["items"] = append(b["items"].([]any),
		body{"type": "partner_fee", "schedule": []any{body{"amount": "20.00", "payer_customer": "seller@example.com", "beneficiary_customer": "me"}}},
		body{"type": "broker_fee", "schedule": []any{body{"amount": "30.00", "payer_customer": "buyer@example.com", "beneficiary_customer": "broker@example.com"}}},
		body{"type": "shipping_fee", "schedule": []any{body{"amount": "15.00", "payer_customer": "buyer@example.com", "beneficiary_customer": "seller@example.com"}}})
	id := w.p.create(b)
	for _, c := range []*client{w.b, w.s, w.k} {
		c.act(http.StatusOK, id, 0, action("agree"))
	}
	w.s.must(http.StatusOK, http.MethodPost, txPath(id, "disbursement_methods"), ach())
	payment(w, id)
	w.accepted(id, 0)
	l := balanced(t, w.srv, id, "acceptance")
	if l.Held != "30.00" || !paidOut(t, w.p, id, 1) || !paidOut(t, w.p, id, 3) {
		t.Errorf("after acceptance: %+v, partner paid %v, shipping paid %v; want 30.00 held (the broker's commission only), both paid",
			l, paidOut(t, w.p, id, 1), paidOut(t, w.p, id, 3))
	}
	w.k.must(http.StatusOK, http.MethodPost, txPath(id, "disbursement_methods"), ach())
	if l := balanced(t, w.srv, id, "the broker's method"); l.Held != "0.00" || !closed(t, w.p, id) {
		t.Errorf("the broker picked a method: %+v, closed %v; want nothing held and the deal closed", l, closed(t, w.p, id))
	}
}

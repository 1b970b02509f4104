package escrowtest

import (
	"fmt"
	"net/http"
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

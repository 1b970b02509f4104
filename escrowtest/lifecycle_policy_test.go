package escrowtest

// Policies of lifecycle.go and ledger.go (the table form) that scripts/mutate found
// unpinned. As in policy_test.go, each test drives the emulator over HTTP, or through the
// Server's own methods, as a user of the package does.

import (
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestEmptyActionRefused: an empty action names no action; it is refused like an unknown
// one, at "action", and the transaction is left as it was.
func TestEmptyActionRefused(t *testing.T) {
	w := newWorld(t)
	id := w.at("funded")
	before := eventsOf(t, w.b, id)
	item := w.b.must(http.StatusOK, http.MethodGet, txPath(id), nil).id("items.0.id")
	for _, path := range []string{txPath(id), txPath(id, "item", strconv.FormatInt(item, 10))} {
		r := w.s.must(http.StatusUnprocessableEntity, http.MethodPatch, path, body{"action": ""})
		if got := r.errorPaths(); !slices.Equal(got, []string{"action"}) {
			t.Errorf("PATCH %s with an empty action: errors at %v, want action", path, got)
		}
	}
	if got := eventsOf(t, w.b, id); got != before {
		t.Errorf("events %q after refused actions, want %q", got, before)
	}
}

// TestNoAgreeingToACancelledTransaction: a party that had not agreed when the transaction
// was cancelled cannot agree to it afterwards: 400, the state "cancelled", and no agree
// event announcing a deal that is off.
func TestNoAgreeingToACancelledTransaction(t *testing.T) {
	w := newWorld(t)
	id := w.at("cancelled") // the buyer created it and cancelled before the seller agreed
	r := w.s.act(http.StatusBadRequest, id, 0, action("agree"))
	if r.str("error") != "invalid_state" || r.str("state") != "cancelled" {
		t.Errorf("the seller agreeing to a cancelled transaction: %s", r.raw)
	}
	if got := eventsOf(t, w.s, id); got != "create cancel" {
		t.Errorf("events %q, want %q", got, "create cancel")
	}
}

// TestCompletionAnnouncedOnce: a transaction completes once. A party choosing a
// disbursement method afterwards (here the seller of a fully returned deal, who was paid
// nothing) does not complete it again: one complete event, and the close date stays.
func TestCompletionAnnouncedOnce(t *testing.T) {
	w := newWorld(t)
	id := w.at("returned")
	closedAt := w.b.must(http.StatusOK, http.MethodGet, txPath(id), nil).str("close_date")
	w.srv.Advance(time.Hour)
	w.s.must(http.StatusOK, http.MethodPost, txPath(id, "disbursement_methods"), ach())
	if got := eventsOf(t, w.b, id); strings.Count(got, "complete") != 1 {
		t.Errorf("events %q, want one complete", got)
	}
	if got := w.b.must(http.StatusOK, http.MethodGet, txPath(id), nil).str("close_date"); got != closedAt {
		t.Errorf("close date %s after a late disbursement method, want %s", got, closedAt)
	}
}

// TestCancelAnnouncesTheRefund: cancelling a funded transaction announces payment_refunded,
// whatever item is listed last: here a commission the seller pays, which was never paid
// in and so gives nothing back itself.
func TestCancelAnnouncesTheRefund(t *testing.T) {
	w, id := brokerWorld(t)
	payment(w, id)
	w.k.act(http.StatusOK, id, 0, action("cancel"))
	if got := eventsOf(t, w.k, id); !strings.HasSuffix(got, " cancel payment_refunded") {
		t.Errorf("events %q, want the cancel and then payment_refunded", got)
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

// instalments is a sale of one milestone, 500.00 paid into escrow in two schedule entries
// (300.00 and 200.00).
func instalments() body {
	b := set(milestones(), "items", []any{milestoneItem("Design", 300)})
	entry := clone(get(b, "items.0.schedule.0").(map[string]any))
	set(entry, "amount", 200)
	return set(b, "items.0.schedule", append(get(b, "items.0.schedule").([]any), entry))
}

// milestonesWithCommission is sellerPaysCommission with two milestones, of the given
// amounts, and the seller-paid commission of 20.00 listed first or last.
func milestonesWithCommission(first, second float64, commissionFirst bool) body {
	b := sellerPaysCommission()
	m := func(title string, amount float64) body {
		return body{"title": title, "type": "milestone", "inspection_period": 86400,
			"schedule": []any{body{"amount": amount, "payer_customer": "buyer@example.com", "beneficiary_customer": "seller@example.com", "due_date": "2024-06-01T00:00:00Z"}}}
	}
	fee := body{"type": "broker_fee", "visibility": body{"hidden_from": []any{"buyer@example.com"}},
		"schedule": []any{body{"amount": 20, "payer_customer": "seller@example.com", "beneficiary_customer": "me"}}}
	b["items"] = []any{m("Design", first), m("Build", second), fee}
	if commissionFirst {
		b["items"] = []any{fee, m("Design", first), m("Build", second)}
	}
	return b
}

// milestoneWorld creates a milestonesWithCommission deal as the broker, every party agreed,
// both payees with a disbursement method, funded; it returns the milestones' ids.
func milestoneWorld(t *testing.T, b body) (w *world, id, first, second int64) {
	w = newWorld(t)
	id = w.k.create(b)
	w.b.act(http.StatusOK, id, 0, action("agree"))
	w.s.act(http.StatusOK, id, 0, action("agree"))
	w.s.must(http.StatusOK, http.MethodPost, txPath(id, "disbursement_methods"), ach())
	w.k.must(http.StatusOK, http.MethodPost, txPath(id, "disbursement_methods"), ach())
	payment(w, id)
	var ms []int64
	for _, it := range w.k.must(http.StatusOK, http.MethodGet, txPath(id), nil).list("items") {
		if it.(map[string]any)["type"] == "milestone" {
			ms = append(ms, int64(it.(map[string]any)["id"].(float64)))
		}
	}
	return w, id, ms[0], ms[1]
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
// 10.00. gremlins' ledger.go 155:37 (two mutants: owed plus withheld, which withheld 30.00
// from the second) lived before this test.
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
// method. Our own ledger.go mutant 123:4 (the wait removed) lived before this test.
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
// completion), and the seller is not charged the broker's half. gremlins' ledger.go 145:26
// (&& made ||: the broker's half taken from the seller) lived before this test.
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
// pays both to the seller. gremlins' ledger.go 119:10 (gross += made =) lived before this
// test.
func TestItemPaidInInstalmentsPaidOutInFull(t *testing.T) {
	w := newWorld(t)
	id, tx := w.funded(instalments())
	w.s.must(http.StatusOK, http.MethodPost, txPath(id, "disbursement_methods"), ach())
	w.accepted(id, tx.id("items.0.id"))
	if l := balanced(t, w.srv, id, "acceptance"); l.Out != "500.00" {
		t.Errorf("after acceptance: %+v; want both instalments, 500.00, paid out", l)
	}
}

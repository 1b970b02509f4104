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
	b := set(milestones(), "items", []any{milestoneItem("Design", 300)})
	entry := clone(get(b, "items.0.schedule.0").(map[string]any))
	set(entry, "amount", 200)
	set(b, "items.0.schedule", append(get(b, "items.0.schedule").([]any), entry))
	id, tx := w.funded(b)
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

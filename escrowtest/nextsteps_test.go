package escrowtest

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"
)

// steps is what a transaction waits on, shortly: "seller:ship", "buyer:accept@300001".
func (w *world) steps(id int64) []string {
	w.t.Helper()
	p, err := w.srv.NextSteps(id)
	if err != nil {
		w.t.Fatal(err)
	}
	out := []string{}
	for _, s := range p.Steps {
		str := s.Role + ":" + s.Action
		if s.ItemID != 0 {
			str += fmt.Sprintf("@%d", s.ItemID)
		}
		out = append(out, str)
	}
	return out
}

func (w *world) wantSteps(id int64, want ...string) {
	w.t.Helper()
	if want == nil {
		want = []string{}
	}
	if got := w.steps(id); !slices.Equal(got, want) {
		p, _ := w.srv.NextSteps(id)
		w.t.Errorf("next steps = %v, want %v\n%s", got, want, p)
	}
}

// TestNextStepsThroughASale: every step of a sale names who acts, and a sale whose seller
// chose no disbursement method says that is why nothing was paid out.
func TestNextStepsThroughASale(t *testing.T) {
	w := newWorld(t)
	id := w.b.create(merchandise())
	w.wantSteps(id, "seller:agree")
	if p, _ := w.srv.NextSteps(id); p.Steps[0].Customer != "seller@example.com" || !strings.Contains(p.Waiting, "before the buyer's funds arrive") {
		t.Errorf("progress = %+v", p)
	}
	w.s.act(http.StatusOK, id, 0, action("agree"))
	w.wantSteps(id, "buyer:pay")
	if err := w.srv.ApprovePayment(id); err != nil {
		t.Fatal(err)
	}
	w.wantSteps(id, "seller:ship")
	w.s.act(http.StatusOK, id, 0, action("ship"))
	w.wantSteps(id, "buyer:receive")
	if p, _ := w.srv.NextSteps(id); !strings.HasSuffix(p.Waiting, "nothing is owed to anyone until the buyer accepts the goods or an inspection period ends") {
		t.Errorf("shipped: waiting = %q", p.Waiting)
	}
	w.b.act(http.StatusOK, id, 0, action("receive"))
	w.wantSteps(id, "buyer:accept", "buyer:reject")
	p, _ := w.srv.NextSteps(id)
	if want := testStart.Add(3 * 24 * time.Hour); !p.Steps[0].AutoAt.Equal(want) || !p.Steps[1].AutoAt.IsZero() {
		t.Errorf("accept is taken by itself at %v, reject at %v; want %v and never", p.Steps[0].AutoAt, p.Steps[1].AutoAt, want)
	}

	w.srv.Advance(3 * 24 * time.Hour) // the inspection period ends: accepted
	w.wantSteps(id, "seller:select_disbursement_method")
	p, _ = w.srv.NextSteps(id)
	if p.Disbursed != "0.00" || len(p.Unpaid) != 1 || p.Unpaid[0].Amount != "1000.00" || p.Unpaid[0].Reason != ReasonNoDisbursementMethod ||
		len(p.Goods) != 1 || p.Goods[0].State != "accepted" {
		t.Errorf("progress = %+v", p)
	}
	want := "next: seller@example.com selects a disbursement method; 1000.00 owed to seller@example.com (seller)"
	if !strings.Contains(p.String(), want) {
		t.Errorf("String() = %q, want it to say %q", p, want)
	}

	w.s.must(http.StatusOK, http.MethodPatch, txPath(id, "disbursement_methods"), ach())
	w.wantSteps(id)
	p, _ = w.srv.NextSteps(id)
	if p.State != "complete" || p.Disbursed != "1000.00" || p.Waiting != "" || len(p.Unpaid) != 0 {
		t.Errorf("complete: %+v", p)
	}
}

// TestNextStepsThroughAReturn: the return path alternates between the buyer and the
// seller, and a returned sale owes no one.
func TestNextStepsThroughAReturn(t *testing.T) {
	w := newWorld(t)
	id, _ := w.funded(merchandise())
	for _, s := range []struct {
		c    *client
		act  string
		want []string
	}{
		{w.s, "ship", []string{"buyer:receive"}},
		{w.b, "receive", []string{"buyer:accept", "buyer:reject"}},
		{w.b, "reject", []string{"buyer:ship_return"}},
		{w.b, "ship_return", []string{"seller:receive_return"}},
		{w.s, "receive_return", []string{"seller:accept_return", "seller:reject_return"}},
		{w.s, "accept_return", nil},
	} {
		s.c.act(http.StatusOK, id, 0, action(s.act))
		w.wantSteps(id, s.want...)
	}
	if p, _ := w.srv.NextSteps(id); p.State != "complete" {
		t.Errorf("a returned sale is %s", p.State)
	}
}

// TestNextStepsInDispute: once the seller rejects the return, no party can act.
func TestNextStepsInDispute(t *testing.T) {
	w := newWorld(t)
	id, _ := w.funded(merchandise())
	for _, s := range []struct {
		c   *client
		act string
	}{{w.s, "ship"}, {w.b, "receive"}, {w.b, "reject"}, {w.b, "ship_return"}, {w.s, "receive_return"}, {w.s, "reject_return"}} {
		s.c.act(http.StatusOK, id, 0, action(s.act))
	}
	w.wantSteps(id)
	if p, _ := w.srv.NextSteps(id); !strings.Contains(p.Waiting, "arbitrates") {
		t.Errorf("waiting = %q", p.Waiting)
	}
}

// TestNextStepsOfMilestones: each milestone is acted on alone, and the payout of the
// first waits on the seller while the second is still to ship.
func TestNextStepsOfMilestones(t *testing.T) {
	w := newWorld(t)
	id, tx := w.funded(milestones())
	first, second := tx.id("items.0.id"), tx.id("items.1.id")
	at := func(s string, item int64) string { return fmt.Sprintf("%s@%d", s, item) }
	w.wantSteps(id, at("seller:ship", first), at("seller:ship", second))
	w.accepted(id, first)
	w.wantSteps(id, at("seller:ship", second), "seller:select_disbursement_method")
	w.s.act(http.StatusOK, id, second, action("ship"))
	w.wantSteps(id, at("buyer:receive", second), "seller:select_disbursement_method")
	w.s.must(http.StatusOK, http.MethodPatch, txPath(id, "disbursement_methods"), ach())
	w.wantSteps(id, at("buyer:receive", second))
	if p, _ := w.srv.NextSteps(id); p.Disbursed != "300.00" {
		t.Errorf("disbursed %s, want the first milestone's 300.00", p.Disbursed)
	}
}

// TestNextStepsOfABrokerFee: the commission waits on the broker's method once the goods
// are accepted, and a cancelled or unknown transaction has nothing to wait for.
func TestNextStepsOfABrokerFee(t *testing.T) {
	w := newWorld(t)
	b := merchandise()
	b["parties"] = append(b["parties"].([]any), body{"role": "broker", "customer": "broker@example.com"})
	b["items"] = append(b["items"].([]any), body{"type": "broker_fee",
		"schedule": []any{body{"amount": 50.0, "payer_customer": "me", "beneficiary_customer": "broker@example.com"}}})
	id := w.b.create(b)
	w.wantSteps(id, "seller:agree", "broker:agree")
	w.s.act(http.StatusOK, id, 0, action("agree"))
	w.k.act(http.StatusOK, id, 0, action("agree"))
	if err := w.srv.ApprovePayment(id); err != nil {
		t.Fatal(err)
	}
	w.s.must(http.StatusOK, http.MethodPatch, txPath(id, "disbursement_methods"), ach())
	w.accepted(id, 0)
	w.wantSteps(id, "broker:select_disbursement_method")
	if p, _ := w.srv.NextSteps(id); p.Disbursed != "1000.00" || len(p.Unpaid) != 1 || p.Unpaid[0].Customer != "broker@example.com" {
		t.Errorf("progress = %+v", p)
	}

	other := w.b.create(merchandise())
	w.b.act(http.StatusOK, other, 0, action("cancel"))
	w.wantSteps(other)
	if _, err := w.srv.NextSteps(1); err == nil {
		t.Error("NextSteps of an unknown transaction: no error")
	}
}

// TestNextStepString says a step as a person would, with its item and when the emulator
// takes it itself.
func TestNextStepString(t *testing.T) {
	at := time.Date(2024, 5, 4, 12, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		step NextStep
		want string
	}{
		{NextStep{Role: "seller", Customer: "s@example.com", Action: "select_disbursement_method"}, "s@example.com selects a disbursement method"},
		{NextStep{Role: "buyer", Customer: "b@example.com", Action: "accept", ItemID: 7, AutoAt: at},
			"b@example.com accepts the goods of item 7 (accepted by itself at 2024-05-04T12:00:00.000000+00:00)"},
		{NextStep{Role: "buyer", Action: "pay"}, "the buyer pays"},
		{NextStep{Role: "buyer", Customer: "b@example.com", Action: "appeal"}, "b@example.com does appeal"},
	} {
		if got := c.step.String(); got != c.want {
			t.Errorf("String() = %q, want %q", got, c.want)
		}
	}
	if got := (Progress{TransactionID: 7, State: "complete"}).String(); got != "transaction 7 is complete" {
		t.Errorf("Progress.String() = %q", got)
	}
}

// TestNextStepsOfACommissionTheSellerPays: the broker chose a method, the seller did not;
// the commission, paid out of the seller's proceeds, waits for them, and says so.
func TestNextStepsOfACommissionTheSellerPays(t *testing.T) {
	w := newWorld(t)
	id := w.brokeredSale(t, "seller@example.com")
	w.k.must(http.StatusOK, http.MethodPatch, txPath(id, "disbursement_methods"), ach())
	w.accepted(id, 0)
	w.wantSteps(id, "seller:select_disbursement_method")
	p, _ := w.srv.NextSteps(id)
	if len(p.Unpaid) != 2 || p.Unpaid[0].Reason != ReasonNoDisbursementMethod || p.Unpaid[1].Reason != ReasonWithheld ||
		p.Unpaid[1].Customer != "broker@example.com" || p.Unpaid[1].Amount != "50.00" {
		t.Errorf("unpaid = %+v", p.Unpaid)
	}
	w.s.must(http.StatusOK, http.MethodPatch, txPath(id, "disbursement_methods"), ach())
	if p, _ := w.srv.NextSteps(id); p.State != "complete" || len(p.Unpaid) != 0 {
		t.Errorf("after the seller chose: %+v", p)
	}
}

// TestNextStepsOfAPartnerFee: a partner fee needs no disbursement method, so while the
// seller's payout waits on the seller's choice the partner is asked for nothing, and its
// fee, which the seller pays, is said to wait for the seller's payouts.
func TestNextStepsOfAPartnerFee(t *testing.T) {
	w := newWorld(t)
	b := partnered()
	b["items"] = append(b["items"].([]any), body{"type": "partner_fee",
		"schedule": []any{body{"amount": "15.00", "payer_customer": "seller@example.com", "beneficiary_customer": "me"}}})
	id := w.p.create(b)
	w.b.act(http.StatusOK, id, 0, action("agree"))
	w.s.act(http.StatusOK, id, 0, action("agree"))
	if err := w.srv.ApprovePayment(id); err != nil {
		t.Fatal(err)
	}
	w.accepted(id, 0)
	w.wantSteps(id, "seller:select_disbursement_method")
	p, _ := w.srv.NextSteps(id)
	if len(p.Unpaid) != 2 || p.Unpaid[1].Role != "partner" || p.Unpaid[1].Customer != "partner@example.com" || p.Unpaid[1].Reason != ReasonWithheld {
		t.Errorf("unpaid = %+v, want the seller's goods (no method) and the partner's 15.00 (withheld)", p.Unpaid)
	}
}

// TestEveryNextStepReadsAsASentence: each step the emulator can ask for (every action of
// its table but cancel, and paying and choosing a disbursement method) has its own phrase,
// never the "does <action>" kept for names it does not know.
func TestEveryNextStepReadsAsASentence(t *testing.T) {
	actions := []string{"pay", "select_disbursement_method"}
	for _, a := range lifecycle {
		if a.name != "cancel" {
			actions = append(actions, a.name)
		}
	}
	seen := map[string]string{}
	for _, a := range actions {
		s := NextStep{Role: "buyer", Customer: "b@example.com", Action: a}.String()
		if strings.Contains(s, " does ") {
			t.Errorf("%s reads %q", a, s)
		}
		if other, ok := seen[s]; ok {
			t.Errorf("%s and %s both read %q", a, other, s)
		}
		seen[s] = a
	}
}

// TestWaitingSaysWhoInTheOrderOfTheParties: Progress.Waiting names the steps in the order
// of the parties, then why nothing is paid out yet (until the buyer has paid, too); once
// funded and shipped, that nothing is owed until acceptance; once accepted, the payout owed
// and why it waits.
func TestWaitingSaysWhoInTheOrderOfTheParties(t *testing.T) {
	w := newWorld(t)
	id := w.p.create(partnered())
	waiting := func() string {
		t.Helper()
		p, err := w.srv.NextSteps(id)
		if err != nil {
			t.Fatal(err)
		}
		return p.Waiting
	}
	const unfunded = "nothing is paid out before the buyer's funds arrive (ApprovePayment, or 'escrow emulator approve')"
	if got, want := waiting(), "next: buyer@example.com agrees to the terms; seller@example.com agrees to the terms; "+unfunded; got != want {
		t.Errorf("before agreement: %q\nwant %q", got, want)
	}
	w.b.act(http.StatusOK, id, 0, action("agree"))
	sellerAgrees(w, id)
	if got, want := waiting(), "next: buyer@example.com pays; "+unfunded; got != want {
		t.Errorf("agreed: %q\nwant %q", got, want)
	}
	must(t, w.srv.ApprovePayment(id))
	ships(w, id)
	if got, want := waiting(), "next: buyer@example.com marks the goods received; nothing is owed to anyone until the buyer accepts the goods or an inspection period ends"; got != want {
		t.Errorf("shipped: %q\nwant %q", got, want)
	}
	receives(w, id)
	accepts(w, id)
	if got := waiting(); !strings.HasPrefix(got, "next: seller@example.com selects a disbursement method; 1000.00 owed to seller@example.com (seller) for item ") ||
		!strings.HasSuffix(got, ": "+ReasonNoDisbursementMethod) {
		t.Errorf("accepted: %q", got)
	}
}

// TestClockAdvanceReportsOnlyTheTransactionsItChanged: two sales in inspection, of one day
// and of three. Moving the clock two days reports the first (accepted by the end of its
// inspection), not the second, which still waits on the buyer; two more days report the
// second alone. `escrow emulator advance` prints this list as what the move did.
func TestClockAdvanceReportsOnlyTheTransactionsItChanged(t *testing.T) {
	w := newWorld(t)
	short, _ := w.funded(set(merchandise(), "items.0.inspection_period", 86400))
	long, _ := w.funded(merchandise())
	for _, id := range []int64{short, long} {
		ships(w, id)
		receives(w, id)
	}
	ctl := anonymous(t, w.srv)
	advance := func() []int64 {
		t.Helper()
		var ids []int64
		for _, p := range ctl.must(http.StatusOK, http.MethodPost, "/_emulator/clock/advance", body{"seconds": 2 * 86400}).list("transactions") {
			ids = append(ids, int64(p.(map[string]any)["transaction_id"].(float64)))
		}
		return ids
	}
	if got := advance(); !slices.Equal(got, []int64{short}) {
		t.Errorf("two days on: reported %v, want only %d, whose inspection ended", got, short)
	}
	if got := advance(); !slices.Equal(got, []int64{long}) {
		t.Errorf("four days on: reported %v, want only %d", got, long)
	}
}

// TestWaitingSaysNothingIsOwedOnlyBeforeAnyPayout: a milestone deal says nothing is owed
// until the buyer accepts while nothing has been paid; once the first milestone is paid
// out, the second's wait no longer claims that nothing is owed to anyone.
func TestWaitingSaysNothingIsOwedOnlyBeforeAnyPayout(t *testing.T) {
	const nothingOwed = "nothing is owed to anyone"
	w := newWorld(t)
	id, tx := w.funded(milestones())
	first, second := tx.id("items.0.id"), tx.id("items.1.id")
	w.s.must(http.StatusOK, http.MethodPatch, txPath(id, "disbursement_methods"), ach())
	w.s.act(http.StatusOK, id, first, action("ship"))
	if p, _ := w.srv.NextSteps(id); !strings.Contains(p.Waiting, nothingOwed) {
		t.Errorf("before any acceptance: %q, want it to say %q", p.Waiting, nothingOwed)
	}
	w.b.act(http.StatusOK, id, first, action("receive"))
	w.b.act(http.StatusOK, id, first, action("accept"))
	w.s.act(http.StatusOK, id, second, action("ship"))
	if p, _ := w.srv.NextSteps(id); p.Disbursed == "0.00" || strings.Contains(p.Waiting, nothingOwed) {
		t.Errorf("after %s paid out: %q, want no claim that nothing is owed", p.Disbursed, p.Waiting)
	}
}

// TestWaitingListsUnpaidPayoutsInItemOrder: goods accepted with neither the seller nor the
// broker able to be paid: Waiting names the seller's 1000.00 before the broker's 50.00, as
// the items are listed.
func TestWaitingListsUnpaidPayoutsInItemOrder(t *testing.T) {
	w := newWorld(t)
	id := w.brokeredSale(t, "me")
	w.accepted(id, 0)
	p, _ := w.srv.NextSteps(id)
	seller, broker := strings.Index(p.Waiting, "1000.00 owed to seller@example.com"), strings.Index(p.Waiting, "50.00 owed to broker@example.com")
	if seller < 0 || broker < 0 || seller > broker {
		t.Errorf("Waiting = %q, want the seller's 1000.00 named, then the broker's 50.00", p.Waiting)
	}
}

// brokeredSale is merchandise with a broker and a 50.00 broker fee that payer pays,
// agreed by both parties and funded.
func (w *world) brokeredSale(t *testing.T, payer string) int64 {
	t.Helper()
	b := merchandise()
	b["parties"] = append(b["parties"].([]any), body{"role": "broker", "customer": "broker@example.com"})
	b["items"] = append(b["items"].([]any), body{"type": "broker_fee",
		"schedule": []any{body{"amount": 50.0, "payer_customer": payer, "beneficiary_customer": "broker@example.com"}}})
	id := w.b.create(b)
	w.s.act(http.StatusOK, id, 0, action("agree"))
	w.k.act(http.StatusOK, id, 0, action("agree"))
	must(t, w.srv.ApprovePayment(id))
	return id
}

// TestNextStepsAskEachPartyOnce: two goods sold together are shipped, received and accepted
// in one action each, so the seller is asked once to ship them, not once per good; and two
// milestones accepted while the seller has no disbursement method ask the seller once to
// select one, though two payouts wait on it. A caller that turns the steps into reminders
// would otherwise send the same one twice.
func TestNextStepsAskEachPartyOnce(t *testing.T) {
	w := newWorld(t)
	b := merchandise()
	b["items"] = append(b["items"].([]any), body{
		"title": "Case", "type": "general_merchandise", "inspection_period": 259200,
		"schedule": []any{body{"amount": 80.0, "payer_customer": "me", "beneficiary_customer": "seller@example.com"}}})
	id, _ := w.funded(b)
	w.wantSteps(id, "seller:ship")
	ships(w, id)
	w.wantSteps(id, "buyer:receive")
	receives(w, id)
	w.wantSteps(id, "buyer:accept", "buyer:reject")

	m, tx := w.funded(milestones())
	for _, it := range []int64{tx.id("items.0.id"), tx.id("items.1.id")} {
		w.accepted(m, it)
	}
	w.wantSteps(m, "seller:select_disbursement_method")
	if p, _ := w.srv.NextSteps(m); len(p.Unpaid) != 2 {
		t.Errorf("unpaid = %+v, want both milestones", p.Unpaid)
	}
}

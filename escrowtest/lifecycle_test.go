package escrowtest

import (
	"cmp"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"text/tabwriter"
	"time"
)

// ach is a valid disbursement method for residents of the USA.
func ach() body {
	return body{"type": "ach", "account_name": "Seller", "account_type": "savings", "bank_aba_routing_number": "121000248", "bank_account_number": "12345678", "bank_name": "First Bank"}
}

// step moves a merchandise transaction one state further.
type step func(w *world, id int64)

var (
	sellerAgrees  step = func(w *world, id int64) { w.s.act(http.StatusOK, id, 0, action("agree")) }
	payment       step = func(w *world, id int64) { must(w.t, w.srv.ApprovePayment(id)) }
	ships         step = func(w *world, id int64) { w.s.act(http.StatusOK, id, 0, action("ship")) }
	receives      step = func(w *world, id int64) { w.b.act(http.StatusOK, id, 0, action("receive")) }
	accepts       step = func(w *world, id int64) { w.b.act(http.StatusOK, id, 0, action("accept")) }
	rejects       step = func(w *world, id int64) { w.b.act(http.StatusOK, id, 0, action("reject")) }
	shipsBack     step = func(w *world, id int64) { w.b.act(http.StatusOK, id, 0, action("ship_return")) }
	receivesBack  step = func(w *world, id int64) { w.s.act(http.StatusOK, id, 0, action("receive_return")) }
	acceptsReturn step = func(w *world, id int64) { w.s.act(http.StatusOK, id, 0, action("accept_return")) }
	rejectsReturn step = func(w *world, id int64) { w.s.act(http.StatusOK, id, 0, action("reject_return")) }
	cancels       step = func(w *world, id int64) { w.b.act(http.StatusOK, id, 0, action("cancel")) }
)

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// stateOrder is the order of states, for tables over them.
var stateOrder = []string{"created", "agreed", "funded", "shipped", "received", "accepted", "rejected",
	"return shipped", "return received", "returned", "disputed", "cancelled"}

// states are the stations of the merchandise lifecycle, as steps from creation.
var states = map[string][]step{
	"created":         nil,
	"agreed":          {sellerAgrees},
	"funded":          {sellerAgrees, payment},
	"shipped":         {sellerAgrees, payment, ships},
	"received":        {sellerAgrees, payment, ships, receives},
	"accepted":        {sellerAgrees, payment, ships, receives, accepts},
	"rejected":        {sellerAgrees, payment, ships, receives, rejects},
	"return shipped":  {sellerAgrees, payment, ships, receives, rejects, shipsBack},
	"return received": {sellerAgrees, payment, ships, receives, rejects, shipsBack, receivesBack},
	"returned":        {sellerAgrees, payment, ships, receives, rejects, shipsBack, receivesBack, acceptsReturn},
	"disputed":        {sellerAgrees, payment, ships, receives, rejects, shipsBack, receivesBack, rejectsReturn},
	"cancelled":       {cancels},
}

// at creates a merchandise transaction and brings it to a state.
func (w *world) at(state string) int64 {
	w.t.Helper()
	id := w.b.create(merchandise())
	for _, s := range states[state] {
		s(w, id)
	}
	return id
}

// TestIllegalTransitions tries every action in every state of the merchandise lifecycle,
// by the party the action belongs to. Those refused answer 400 naming the action and the
// state, and change nothing; which are performed, and which refused to that party (403),
// testdata/transitions.golden pins (go test -run TestIllegalTransitions -update rewrites
// it from what the emulator does; review the diff).
func TestIllegalTransitions(t *testing.T) {
	// The party an action belongs to: the first of its roles; the seller agrees (the
	// buyer created the deal, and agreed), the buyer cancels.
	byRole := func(w *world, act string) *client {
		if roles := mustAction(act).roles; len(roles) > 0 {
			return map[string]*client{roleBuyer: w.b, roleSeller: w.s}[roles[0]]
		}
		return map[string]*client{"agree": w.s, "cancel": w.b}[act]
	}
	// wantState is the "state" of the refusals in each state, per action when it differs.
	wantState := map[string]map[string]string{
		"created":         {"*": "awaiting_agreement"},
		"agreed":          {"*": "awaiting_payment"},
		"funded":          {"*": "awaiting_shipment", "agree": "funded"},
		"shipped":         {"*": "shipped", "agree": "funded"},
		"received":        {"*": "received", "agree": "funded"},
		"accepted":        {"*": "accepted", "agree": "funded"},
		"rejected":        {"*": "rejected", "agree": "funded"},
		"return shipped":  {"*": "shipped_returned", "agree": "funded"},
		"return received": {"*": "received_returned", "agree": "funded"},
		"returned":        {"*": "complete"},
		"disputed":        {"*": "in_dispute", "agree": "funded"},
		"cancelled":       {"*": "cancelled"},
	}
	var matrix strings.Builder
	for _, state := range stateOrder {
		outcomes := map[int][]string{}
		for _, act := range actionNames {
			t.Run(state+"/"+act, func(t *testing.T) {
				w := newWorld(t)
				id := w.at(state)
				before := w.b.must(http.StatusOK, http.MethodGet, txPath(id), nil)
				events := len(w.b.must(http.StatusOK, http.MethodGet, txPath(id, "timeline-entries"), nil).list("timeline_entries"))
				r := byRole(w, act).do(http.MethodPatch, txPath(id), action(act))
				outcomes[r.status] = append(outcomes[r.status], act)
				if r.status != http.StatusBadRequest {
					return
				}
				want := cmpOrString(wantState[state][act], wantState[state]["*"])
				if r.str("error") != "invalid_state" || r.str("action") != act || r.str("state") != want || r.str("message") == "" {
					t.Errorf("body %s, want action %s and state %s", r.raw, act, want)
				}
				after := w.b.must(http.StatusOK, http.MethodGet, txPath(id), nil)
				if string(before.raw) != string(after.raw) {
					t.Errorf("the transaction changed:\n%s\n%s", before.raw, after.raw)
				}
				if n := len(w.b.must(http.StatusOK, http.MethodGet, txPath(id, "timeline-entries"), nil).list("timeline_entries")); n != events {
					t.Errorf("%d events after a refusal, %d before", n, events)
				}
			})
		}
		fmt.Fprintf(&matrix, "%s: performed %s; refused to that party %s\n", state,
			orDash(strings.Join(outcomes[http.StatusOK], " ")), orDash(strings.Join(outcomes[http.StatusForbidden], " ")))
		for status, acts := range outcomes {
			if status != http.StatusOK && status != http.StatusForbidden && status != http.StatusBadRequest {
				t.Errorf("%s: %v answered %d", state, acts, status)
			}
		}
	}
	golden(t, "transitions.golden", matrix.String())
}

func cmpOrString(v, def string) string {
	if v != "" {
		return v
	}
	return def
}

// TestActionsBelongToRoles: an action by a party other than the one it belongs to is 403;
// by a non-party, 404.
func TestActionsBelongToRoles(t *testing.T) {
	tests := []struct {
		state, action, by string
	}{
		{"funded", "ship", "buyer"},
		{"shipped", "receive", "seller"},
		{"received", "accept", "seller"},
		{"received", "reject", "seller"},
		{"rejected", "ship_return", "seller"},
		{"return shipped", "receive_return", "buyer"},
		{"return received", "accept_return", "buyer"},
		{"return received", "reject_return", "buyer"},
	}
	for _, tc := range tests {
		t.Run(tc.action+" by "+tc.by, func(t *testing.T) {
			w := newWorld(t)
			id := w.at(tc.state)
			c := map[string]*client{"buyer": w.b, "seller": w.s}[tc.by]
			if r := c.act(http.StatusForbidden, id, 0, action(tc.action)); r.str("error") != "forbidden" {
				t.Errorf("body %s", r.raw)
			}
			w.x.act(http.StatusNotFound, id, 0, action(tc.action))
		})
	}
}

func TestActionBodies(t *testing.T) {
	w := newWorld(t)
	id := w.at("funded")
	for raw, path := range map[string]string{
		`{}`:                  "action",
		`{"action": "dance"}`: "action",
		`{"action": 3}`:       "action",
		`{"action": "ship", "shipping_information": "UPS"}`:                                    "shipping_information",
		`{"action": "ship", "shipping_information": {"authorization_type": "fax"}}`:            "shipping_information.authorization_type",
		`{"action": "ship", "shipping_information": {"tracking_information": {"carrier": 1}}}`: "shipping_information.tracking_information.carrier",
		`{"action": "cancel", "cancel_information": {"cancellation_reason": false}}`:           "cancel_information.cancellation_reason",
	} {
		r := w.s.must(http.StatusUnprocessableEntity, http.MethodPatch, txPath(id), raw)
		if got := r.errorPaths(); !slices.Equal(got, []string{path}) {
			t.Errorf("%s: %v", raw, got)
		}
	}
	w.s.must(http.StatusBadRequest, http.MethodPatch, txPath(id), `{"action":`)
}

// TestAcceptFlow follows a sale to completion and checks the events, the money and the
// flags at each step.
func TestAcceptFlow(t *testing.T) {
	w := newWorld(t)
	id := w.at("received")
	w.s.must(http.StatusOK, http.MethodPost, txPath(id, "disbursement_methods"), ach())
	r := w.b.act(http.StatusOK, id, 0, action("accept"))
	if r.get("items.0.status.accepted") != true || r.get("items.0.schedule.0.status.disbursed_to_beneficiary") != true || r.str("close_date") == "" {
		t.Errorf("after accept: %s", r.raw)
	}
	if got := eventsOf(t, w.b, id); got != "create agree payment_received payment_approved ship receive accept payment_disbursed complete" {
		t.Errorf("events: %s", got)
	}
	// A complete transaction refuses everything.
	w.s.must(http.StatusBadRequest, http.MethodPatch, txPath(id, "disbursement_methods"), ach())
}

func eventsOf(t *testing.T, c *client, id int64) string {
	t.Helper()
	var events []string
	for _, e := range c.must(http.StatusOK, http.MethodGet, txPath(id, "timeline-entries"), nil).list("timeline_entries") {
		events = append(events, e.(map[string]any)["event"].(string))
	}
	return strings.Join(events, " ")
}

// TestDisbursementWaitsForAMethod: accepted goods are disbursed when the seller selects a
// method, and the method cannot change afterwards.
func TestDisbursementWaitsForAMethod(t *testing.T) {
	w := newWorld(t)
	id := w.at("accepted")
	r := w.b.must(http.StatusOK, http.MethodGet, txPath(id), nil)
	if r.get("items.0.schedule.0.status.disbursed_to_beneficiary") != false || r.get("close_date") != nil {
		t.Fatalf("disbursed without a method: %s", r.raw)
	}
	r = w.s.must(http.StatusOK, http.MethodPatch, txPath(id, "disbursement_methods"), ach())
	if r.id("selected_disbursement_method.id") != firstMethodID || len(r.list("saved_disbursement_methods")) != 1 {
		t.Errorf("selection: %s", r.raw)
	}
	if got := eventsOf(t, w.b, id); !strings.HasSuffix(got, "accept payment_disbursed complete") {
		t.Errorf("events: %s", got)
	}
	r = w.s.must(http.StatusBadRequest, http.MethodPatch, txPath(id, "disbursement_methods"), body{"id": firstMethodID})
	if r.str("action") != "select_disbursement_method" {
		t.Errorf("refusal: %s", r.raw)
	}
}

func TestAutoAcceptWhenInspectionEnds(t *testing.T) {
	w := newWorld(t)
	id := w.at("received") // inspection period: 3 days
	w.srv.Advance(3*24*time.Hour - time.Second)
	if r := w.b.must(http.StatusOK, http.MethodGet, txPath(id), nil); r.get("items.0.status.accepted") != false {
		t.Fatal("accepted before the inspection period ended")
	}
	w.srv.Advance(time.Second)
	r := w.b.must(http.StatusOK, http.MethodGet, txPath(id), nil)
	if r.get("items.0.status.accepted") != true {
		t.Fatalf("not accepted when the inspection period ended: %s", r.raw)
	}
	tl := w.b.must(http.StatusOK, http.MethodGet, txPath(id, "timeline-entries"), nil)
	last := tl.list("timeline_entries")[len(tl.list("timeline_entries"))-1].(map[string]any)
	if last["event"] != "accept" || last["customer"] != nil || last["date"] != "2024-05-04T12:00:00.000000+00:00" {
		t.Errorf("auto-accept entry: %v", last)
	}
	w.b.act(http.StatusBadRequest, id, 0, action("reject"))
}

func TestReturnFlow(t *testing.T) {
	w := newWorld(t)
	id := w.at("return received")
	// The return inspection period ends: the return counts as accepted, funds go back.
	w.srv.Advance(3 * 24 * time.Hour)
	r := w.b.must(http.StatusOK, http.MethodGet, txPath(id), nil)
	want := map[string]any{"shipped": true, "received": true, "accepted": false, "rejected": true, "shipped_returned": true,
		"received_returned": true, "accepted_returned": true, "rejected_returned": false, "canceled": false, "in_dispute": false}
	if !jsonEqual(r.get("items.0.status"), want) {
		t.Errorf("status %v", r.get("items.0.status"))
	}
	if r.get("items.0.schedule.0.status.disbursed_to_beneficiary") != false || r.str("close_date") == "" {
		t.Errorf("after the return: %s", r.raw)
	}
	if got := eventsOf(t, w.b, id); !strings.HasSuffix(got, "receive_return accept_return payment_refunded complete") {
		t.Errorf("events: %s", got)
	}
}

func TestDispute(t *testing.T) {
	w := newWorld(t)
	id := w.at("disputed")
	r := w.b.must(http.StatusOK, http.MethodGet, txPath(id), nil)
	if r.get("items.0.status.in_dispute") != true || r.get("items.0.status.rejected_returned") != true || r.get("close_date") != nil {
		t.Errorf("dispute: %s", r.raw)
	}
	w.srv.Advance(30 * 24 * time.Hour) // a dispute does not resolve itself
	if r := w.b.must(http.StatusOK, http.MethodGet, txPath(id), nil); r.get("close_date") != nil {
		t.Errorf("the dispute closed: %s", r.raw)
	}
}

func TestMilestonesActPerItem(t *testing.T) {
	w := newWorld(t)
	id, tx := w.funded(milestones())
	first, second := tx.id("items.0.id"), tx.id("items.1.id")
	w.s.must(http.StatusOK, http.MethodPost, txPath(id, "disbursement_methods"), ach())
	for _, act := range []string{"ship", "receive", "accept", "reject"} {
		c := map[bool]*client{true: w.s, false: w.b}[act == "ship"]
		if r := c.act(http.StatusBadRequest, id, 0, action(act)); !strings.Contains(r.str("message"), "one item at a time") {
			t.Errorf("%s on the transaction: %s", act, r.raw)
		}
	}
	w.s.act(http.StatusOK, id, first, action("ship"))
	w.b.act(http.StatusOK, id, first, action("receive"))
	r := w.b.act(http.StatusOK, id, first, action("accept"))
	if r.get("items.0.schedule.0.status.disbursed_to_beneficiary") != true || r.get("items.1.status.shipped") != false || r.get("close_date") != nil {
		t.Errorf("after the first milestone: %s", r.raw)
	}
	w.b.act(http.StatusBadRequest, id, second, action("receive"))
	w.s.act(http.StatusOK, id, second, action("ship"))
	w.b.act(http.StatusOK, id, second, action("receive"))
	w.srv.Advance(24 * time.Hour) // the second milestone's inspection ends
	r = w.b.must(http.StatusOK, http.MethodGet, txPath(id), nil)
	if r.get("items.1.status.accepted") != true || r.str("close_date") == "" {
		t.Errorf("after the second milestone: %s", r.raw)
	}
	tl := w.b.must(http.StatusOK, http.MethodGet, txPath(id, "timeline-entries"), nil)
	if tl.id("timeline_entries.4.item_id") != first {
		t.Errorf("per-item events carry the item: %v", tl.get("timeline_entries.4"))
	}
	// agree and cancel are not item actions.
	for _, act := range []string{"agree", "cancel"} {
		r := w.b.act(http.StatusUnprocessableEntity, id, first, action(act))
		if got := r.errorPaths(); !slices.Equal(got, []string{"action"}) {
			t.Errorf("%s on an item: %v", act, got)
		}
	}
	// Fee items are not shipped.
	b := merchandise()
	b["items"] = append(b["items"].([]any), body{"type": "shipping_fee", "schedule": []any{body{"amount": 5, "payer_customer": "me", "beneficiary_customer": "seller@example.com"}}})
	id2, tx2 := w.funded(b)
	w.s.act(http.StatusBadRequest, id2, tx2.id("items.1.id"), action("ship"))
	w.s.act(http.StatusOK, id2, tx2.id("items.0.id"), action("ship")) // the item path works for any goods
}

func TestDomainsNeedAnAuthorizationType(t *testing.T) {
	w := newWorld(t)
	id := w.s.create(domain())
	w.b.act(http.StatusOK, id, 0, action("agree"))
	must(t, w.srv.ApprovePayment(id))
	r := w.s.act(http.StatusUnprocessableEntity, id, 0, action("ship"))
	if got := r.errorPaths(); !slices.Equal(got, []string{"shipping_information.authorization_type"}) {
		t.Errorf("paths %v", got)
	}
	w.s.act(http.StatusOK, id, 0, body{"action": "ship", "shipping_information": body{"authorization_type": "push"}})
	w.b.act(http.StatusOK, id, 0, action("receive"))
	w.b.act(http.StatusOK, id, 0, action("reject"))
	w.b.act(http.StatusUnprocessableEntity, id, 0, action("ship_return"))
	w.b.act(http.StatusOK, id, 0, body{"action": "ship_return", "shipping_information": body{"authorization_type": "authorization_code"}})
}

func TestAgreeEventWhenAllAgree(t *testing.T) {
	w := newWorld(t)
	id := w.k.create(brokered())
	w.b.act(http.StatusOK, id, 0, action("agree"))
	if got := eventsOf(t, w.k, id); got != "create" {
		t.Errorf("events after one of two: %s", got)
	}
	w.b.act(http.StatusBadRequest, id, 0, action("agree"))
	if err := w.srv.ApprovePayment(id); err == nil {
		t.Error("payment approved before every party agreed")
	}
	w.s.act(http.StatusOK, id, 0, action("agree"))
	if got := eventsOf(t, w.k, id); got != "create agree" {
		t.Errorf("events: %s", got)
	}
	must(t, w.srv.ApprovePayment(id))
	if err := w.srv.ApprovePayment(id); err == nil {
		t.Error("a second ApprovePayment succeeded")
	}
	if err := w.srv.ApprovePayment(999); err == nil {
		t.Error("ApprovePayment of an unknown transaction succeeded")
	}
}

func TestCancelRules(t *testing.T) {
	t.Run("any party before both agree", func(t *testing.T) {
		w := newWorld(t)
		id := w.at("created")
		r := w.s.act(http.StatusOK, id, 0, body{"action": "cancel", "cancel_information": body{"cancellation_reason": "changed my mind"}})
		if r.get("is_cancelled") != true || r.get("items.0.status.canceled") != true || r.str("close_date") == "" {
			t.Errorf("cancelled: %s", r.raw)
		}
		tl := w.s.must(http.StatusOK, http.MethodGet, txPath(id, "timeline-entries"), nil)
		if !strings.Contains(tl.str("timeline_entries.1.message"), "changed my mind") {
			t.Errorf("reason not recorded: %s", tl.raw)
		}
	})
	t.Run("only the partner once buyer and seller agree", func(t *testing.T) {
		w := newWorld(t)
		b := set(merchandise(), "parties.0.customer", "buyer@example.com")
		id := w.p.create(set(b, "items.0.schedule.0.payer_customer", "buyer@example.com"))
		w.b.act(http.StatusOK, id, 0, action("agree"))
		w.s.act(http.StatusOK, id, 0, action("agree"))
		w.b.act(http.StatusForbidden, id, 0, action("cancel"))
		w.s.act(http.StatusForbidden, id, 0, action("cancel"))
		must(t, w.srv.ApprovePayment(id))
		w.p.act(http.StatusOK, id, 0, action("cancel"))
		if got := eventsOf(t, w.p, id); got != "create agree payment_received payment_approved cancel payment_refunded" {
			t.Errorf("events: %s", got)
		}
		w.p.act(http.StatusBadRequest, id, 0, action("cancel"))
	})
	t.Run("not once shipped", func(t *testing.T) {
		w := newWorld(t)
		id := w.at("shipped")
		if r := w.b.act(http.StatusBadRequest, id, 0, action("cancel")); r.str("state") != "shipped" {
			t.Errorf("refusal: %s", r.raw)
		}
	})
	t.Run("not once complete", func(t *testing.T) {
		w := newWorld(t)
		id := w.at("returned")
		if r := w.b.act(http.StatusBadRequest, id, 0, action("cancel")); r.str("state") != "complete" {
			t.Errorf("refusal: %s", r.raw)
		}
	})
}

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

// TestShipmentDetailsInTheTimeline: the timeline entry of a shipment tells the carrier and
// tracking id and the carrier's contact when given, and the authorization type of a domain
// transfer; nothing more.
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
	// The carrier's contact too: a buyer chasing a parcel is told whom to call.
	id = w.at("funded")
	w.s.act(http.StatusOK, id, 0, body{"action": "ship", "shipping_information": body{
		"tracking_information": body{"carrier": "DHL", "tracking_id": "JD014", "carrier_contact": "+49 228 28609898"}}})
	if got, want := lastMessage(t, w.b, id), "The seller marked the goods shipped (DHL, JD014, +49 228 28609898)."; got != want {
		t.Errorf("shipment with the carrier's contact: %q, want %q", got, want)
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

func TestEmitsPaymentReceivedForPluginOrderState(t *testing.T) {
	w := newWorld(t)
	id := w.b.create(merchandise())
	w.s.act(http.StatusOK, id, 0, action("agree"))
	w.b.must(http.StatusOK, http.MethodPost, txPath(id, "payment_methods", "wire_transfer"), nil)
	if err := w.srv.ApprovePayment(id); err != nil {
		t.Fatal(err)
	}
	if got := eventsOf(t, w.b, id); got != "create agree payment_sent payment_received payment_approved" {
		t.Errorf("events: %s", got)
	}
}

// TestDomainTransferTakesEveryAuthorizationType: a domain name is handed over by push, by
// an authorization code or by a username and password; the emulator takes each of the
// three on shipment, says which in the timeline, and refuses a type the API does not know.
// A marketplace whose domains move by username and password would see its shipments
// refused with 422.
func TestDomainTransferTakesEveryAuthorizationType(t *testing.T) {
	for _, typ := range []string{"push", "authorization_code", "username_password"} {
		t.Run(typ, func(t *testing.T) {
			w := newWorld(t)
			id := w.s.create(domain())
			w.b.act(http.StatusOK, id, 0, action("agree"))
			must(t, w.srv.ApprovePayment(id))
			w.s.act(http.StatusOK, id, 0, body{"action": "ship", "shipping_information": body{"authorization_type": typ}})
			es := w.b.must(http.StatusOK, http.MethodGet, txPath(id, "timeline-entries"), nil).list("timeline_entries")
			if got, want := es[len(es)-1].(map[string]any)["message"], "The seller marked the goods shipped (authorization "+typ+")."; got != want {
				t.Errorf("timeline: %q, want %q", got, want)
			}
		})
	}
	w := newWorld(t)
	id := w.s.create(domain())
	w.b.act(http.StatusOK, id, 0, action("agree"))
	must(t, w.srv.ApprovePayment(id))
	r := w.s.act(http.StatusUnprocessableEntity, id, 0, body{"action": "ship", "shipping_information": body{"authorization_type": "email"}})
	if got := r.errorPaths(); !slices.Equal(got, []string{"shipping_information.authorization_type"}) {
		t.Errorf("an unknown authorization type: paths %v", got)
	}
}

// TestSellerWhoAgreedFirstMayStillCancel: until both the buyer and the seller have agreed,
// any party may cancel, whichever of the two agreed first: here a broker's deal the seller
// has agreed to and the buyer not yet. A seller refused here could not withdraw an offer
// the buyer never took up.
func TestSellerWhoAgreedFirstMayStillCancel(t *testing.T) {
	w := newWorld(t)
	id := w.k.create(brokered())
	w.s.act(http.StatusOK, id, 0, action("agree"))
	r := w.s.act(http.StatusOK, id, 0, action("cancel"))
	if r.get("is_cancelled") != true {
		t.Errorf("cancelled by the seller before the buyer agreed: %s", r.raw)
	}
}

// TestAutoAcceptOfTwoMilestonesNamesNoItem: when the inspection periods of two milestones
// end together, one accept entry stands for both, so it names neither; naming the first
// would tell a reader of the timeline that only that milestone was accepted.
func TestAutoAcceptOfTwoMilestonesNamesNoItem(t *testing.T) {
	w := newWorld(t)
	id, tx := w.funded(milestones())
	for _, it := range []int64{tx.id("items.0.id"), tx.id("items.1.id")} {
		w.s.act(http.StatusOK, id, it, action("ship"))
		w.b.act(http.StatusOK, id, it, action("receive"))
	}
	w.srv.Advance(24 * time.Hour)
	var accepts []any
	for _, e := range w.b.must(http.StatusOK, http.MethodGet, txPath(id, "timeline-entries"), nil).list("timeline_entries") {
		if e := e.(map[string]any); e["event"] == "accept" {
			accepts = append(accepts, e["item_id"])
		}
	}
	if len(accepts) != 1 || accepts[0] != nil {
		t.Errorf("accept entries name items %v, want one entry naming none", accepts)
	}
}

// TestEveryPayoutAnnounced: each milestone accepted is paid, and announced
// (payment_disbursed), whichever order they are accepted in: here the second first, so that
// when the first is paid the second has been paid already. A marketplace that books payouts
// on payment_disbursed would miss the later one.
func TestEveryPayoutAnnounced(t *testing.T) {
	w := newWorld(t)
	id, tx := w.funded(milestones())
	w.s.must(http.StatusOK, http.MethodPost, txPath(id, "disbursement_methods"), ach())
	w.accepted(id, tx.id("items.1.id"))
	w.accepted(id, tx.id("items.0.id"))
	if got, want := eventsOf(t, w.b, id), "accept payment_disbursed ship receive accept payment_disbursed complete"; !strings.HasSuffix(got, want) {
		t.Errorf("events %q, want them to end %q", got, want)
	}
}

// TestTimelineDescribesEveryEvent: each entry of a transaction's timeline says in a
// sentence what happened, for the events that are not actions too: creation, a wire
// reported sent, a payment rejected, funds received and approved, a payout, completion, and
// (on a second deal, cancelled once funded) a refund. A customer reading the timeline on a
// marketplace's page would otherwise see blank lines, or a bare "(wire_transfer).".
func TestTimelineDescribesEveryEvent(t *testing.T) {
	messages := func(c *client, id int64) []string {
		t.Helper()
		var out []string
		for _, e := range c.must(http.StatusOK, http.MethodGet, txPath(id, "timeline-entries"), nil).list("timeline_entries") {
			e := e.(map[string]any)
			out = append(out, e["event"].(string)+": "+e["message"].(string))
		}
		return out
	}
	w := newWorld(t)
	id := w.p.create(partnered())
	w.b.act(http.StatusOK, id, 0, action("agree"))
	sellerAgrees(w, id)
	wire := func() { w.b.must(http.StatusOK, http.MethodPost, txPath(id, "payment_methods", "wire_transfer"), nil) }
	wire()
	must(t, w.srv.RejectPayment(id))
	wire()
	payment(w, id)
	w.s.must(http.StatusOK, http.MethodPost, txPath(id, "disbursement_methods"), ach())
	w.accepted(id, 0)
	want := []string{
		"create: The transaction was created.",
		"agree: All parties agreed.",
		"payment_sent: The buyer reported a wire transfer sent (wire_transfer).",
		"payment_rejected: Payment rejected.",
		"payment_sent: The buyer reported a wire transfer sent (wire_transfer).",
		"payment_received: The buyer's funds were received (wire_transfer).",
		"payment_approved: Payment approved; the seller may ship (wire_transfer).",
		"ship: The seller marked the goods shipped.",
		"receive: The buyer marked the goods received.",
		"accept: The buyer accepted the goods.",
		"payment_disbursed: Funds were disbursed to the beneficiaries.",
		"complete: All disbursements made; the transaction is complete.",
	}
	if got := messages(w.p, id); !slices.Equal(got, want) {
		t.Errorf("timeline of a sale:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	id = w.p.create(partnered())
	w.b.act(http.StatusOK, id, 0, action("agree"))
	sellerAgrees(w, id)
	payment(w, id)
	w.p.act(http.StatusOK, id, 0, action("cancel"))
	if got := messages(w.p, id); len(got) == 0 || got[len(got)-1] != "payment_refunded: Funds were returned to the buyer." {
		t.Errorf("timeline of a deal cancelled once funded:\n%s\nwant it to end with the refund", strings.Join(got, "\n"))
	}
}

// TestActionTable: Actions() is the emulator's table as a client's contract test reads it:
// each action's roles, As-Customer answer, event, the status flags it requires and sets by
// their API names, what it blocks and its next step's sentence, in lifecycle order. The
// golden file testdata/actions.golden pins it, and a change shows as its diff
// (go test -run TestActionTable -update). A flag or a block missing there lets a client's
// table drift from the emulator's unseen.
func TestActionTable(t *testing.T) {
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "action\troles\tAs-Customer\tevent\trequires\tsets\tblocks\toptional\tnext step")
	for _, a := range Actions() {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", a.Name, orDash(strings.Join(a.Roles, ",")), yesNo(a.Delegable), a.Event,
			orDash(strings.Join(a.Requires, ",")), orDash(strings.Join(a.Sets, ",")), orDash(strings.Join(a.Blocks, ",")), yesNo(a.Optional), orDash(a.Next))
		for _, blocked := range a.Blocks {
			if _, ok := actionNamed(blocked); !ok {
				t.Errorf("%s blocks %q, which is no action", a.Name, blocked)
			}
		}
	}
	tw.Flush()
	golden(t, "actions.golden", b.String())
}

func orDash(s string) string { return cmp.Or(s, "-") }

func yesNo(b bool) string { return map[bool]string{true: "yes", false: "no"}[b] }

// TestDocTableIsTheLifecycle: the package comment's table of actions is rendered from the
// table lifecycle, so that go doc says what the emulator does; go test -run
// TestDocTableIsTheLifecycle -update rewrites it in doc.go.
func TestDocTableIsTheLifecycle(t *testing.T) {
	data, err := os.ReadFile("doc.go")
	must(t, err)
	doc := string(data)
	start := strings.Index(doc, "//\taction ")
	if start < 0 {
		t.Fatal("doc.go has no table of actions (a line starting //\taction)")
	}
	end := start + strings.Index(doc[start:], "\n//\n") + 1
	got, want := doc[start:end], docTable()
	if got == want {
		return
	}
	if *update {
		must(t, os.WriteFile("doc.go", []byte(doc[:start]+want+doc[end:]), 0o644))
		return
	}
	t.Errorf("doc.go's table of actions is not lifecycle's (go test -run %s -update rewrites it):\n%s\nwant:\n%s", t.Name(), got, want)
}

// docTable renders lifecycle as the package comment shows it: who may act, As-Customer,
// what the action needs and what it sets, and what it blocks.
func docTable() string {
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "action\tby\tAs-Customer\tneeds\tsets\tblocks")
	for _, a := range lifecycle {
		needs := a.needs
		if needs == "" {
			var n []string
			if a.funded {
				n = append(n, "funded")
			}
			needs = strings.Join(append(n, flagNames(a.requires)...), ", ")
		}
		sets := strings.Join(flagNames(a.sets), ", ")
		if a.effect != "" {
			sets = strings.TrimSpace(sets + " (" + a.effect + ")")
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", a.name, cmp.Or(strings.Join(a.roles, ","), "party"), yesNo(a.delegable), needs, sets, orDash(strings.Join(a.blocks, ", ")))
	}
	tw.Flush()
	var out strings.Builder
	for line := range strings.Lines(b.String()) {
		out.WriteString("//\t" + strings.TrimRight(line, " \n") + "\n")
	}
	return out.String()
}

// withRow adds a row to the table of actions for one test, with what derives from it.
func withRow(t *testing.T, row actionRule) {
	saved := lifecycle
	lifecycle = append(slices.Clone(lifecycle), row)
	blockedBy, actionNames = blockers(lifecycle), namesOf(lifecycle)
	t.Cleanup(func() { lifecycle = saved; blockedBy, actionNames = blockers(lifecycle), namesOf(lifecycle) })
}

// TestBlockedActionsAreNeitherTakenNorAskedNorAutomatic: once an item carries the flags of
// an action that blocks accept and reject (as a dispute would), the buyer can take neither,
// next steps no longer ask for them, and the end of the inspection period accepts nothing.
// Without the row's blocks, a disputed good would be accepted by itself 3 days later.
func TestBlockedActionsAreNeitherTakenNorAskedNorAutomatic(t *testing.T) {
	withRow(t, actionRule{name: "hold", roles: []string{roleBuyer}, requires: flagReceived, excludes: flagInDispute,
		sets: flagInDispute, blocks: []string{"accept", "reject"}, next: "holds the goods", message: "The buyer held the goods."})
	w := newWorld(t)
	id := w.at("received")
	if got := w.steps(id); !slices.Contains(got, "buyer:accept") {
		t.Fatalf("steps before the hold %v, want the buyer's accept", got)
	}
	w.b.act(http.StatusOK, id, 0, action("hold"))
	w.b.act(http.StatusBadRequest, id, 0, action("accept"))
	w.b.act(http.StatusBadRequest, id, 0, action("reject"))
	for _, s := range w.steps(id) {
		if s == "buyer:accept" || s == "buyer:reject" {
			t.Errorf("next step %q of a held good", s)
		}
	}
	w.srv.Advance(96 * time.Hour)
	if got := eventsOf(t, w.b, id); strings.Contains(got, "accept") {
		t.Errorf("events %q: the held good was accepted by itself", got)
	}
}

// TestGoodsStateNamesTheirLastStep: a good's state, as NextSteps reports it, is where its
// last step put it in escrow.TransactionState's words, and its phase, which refusals name,
// is its last status flag: a milestone the seller accepted back is returned (phase
// accepted_returned, and an action on it is refused saying so) while the other is still
// funded (awaiting shipment); the goods of a cancelled deal are cancelled (canceled). A
// buyer's page that shows where each good stands would otherwise show a returned milestone
// as merely received back, and a cancelled deal's goods as waiting.
func TestGoodsStateNamesTheirLastStep(t *testing.T) {
	w := newWorld(t)
	id, tx := w.funded(milestones())
	first, second := tx.id("items.0.id"), tx.id("items.1.id")
	w.returned(id, first)
	p, err := w.srv.NextSteps(id)
	must(t, err)
	if want := []GoodState{{first, "returned", "accepted_returned"}, {second, "funded", "awaiting_shipment"}}; !slices.Equal(p.Goods, want) {
		t.Errorf("goods %+v, want %+v", p.Goods, want)
	}
	if r := w.s.act(http.StatusBadRequest, id, first, action("ship")); r.str("state") != "accepted_returned" {
		t.Errorf("shipping a returned milestone again: %s, want state accepted_returned", r.raw)
	}

	id = w.at("cancelled")
	p, err = w.srv.NextSteps(id)
	must(t, err)
	if len(p.Goods) != 1 || p.Goods[0].State != "cancelled" || p.Goods[0].Phase != "canceled" {
		t.Errorf("goods of a cancelled deal %+v, want state cancelled, phase canceled", p.Goods)
	}
}

// TestFeeItemOfAClosedDealRefusedWithTheDealsState: a fee item is never shipped; acting on
// one is refused with the state of the deal, and a complete deal's fee item is complete, not
// awaiting shipment as if something were still to send.
func TestFeeItemOfAClosedDealRefusedWithTheDealsState(t *testing.T) {
	w := newWorld(t)
	b := merchandise()
	b["items"] = append(b["items"].([]any), body{"type": "shipping_fee", "schedule": []any{body{"amount": 5, "payer_customer": "me", "beneficiary_customer": "seller@example.com"}}})
	id, tx := w.funded(b)
	fee := tx.id("items.1.id")
	w.s.must(http.StatusOK, http.MethodPost, txPath(id, "disbursement_methods"), ach())
	w.accepted(id, 0)
	if !closed(t, w.b, id) {
		t.Fatal("the sale did not complete")
	}
	if r := w.s.act(http.StatusBadRequest, id, fee, action("ship")); r.str("state") != "complete" {
		t.Errorf("shipping the fee item of a complete deal: %s, want state complete", r.raw)
	}
}

// TestUnknownActionRefusedOnce: an action the API does not know, or one that is not a
// string, is refused at "action" with one message, not the same complaint twice: a form
// that shows the 422's messages under the field would repeat itself.
func TestUnknownActionRefusedOnce(t *testing.T) {
	w := newWorld(t)
	id := w.at("funded")
	for _, a := range []any{"dance", 5} {
		r := w.s.must(http.StatusUnprocessableEntity, http.MethodPatch, txPath(id), body{"action": a})
		if msgs := r.list("errors.action"); len(msgs) != 1 {
			t.Errorf("action %v: errors %s, want one message at action", a, r.raw)
		}
	}
}

// TestNoPaymentStepsOnACancelledDeal: a deal every party agreed to and the partner then
// cancelled takes no payment: ApprovePayment and RejectPayment err, no payment event is
// recorded, and nothing is paid in. A test harness approving payments for every agreed deal
// would otherwise fund a cancelled one and hold the buyer's money in it.
func TestNoPaymentStepsOnACancelledDeal(t *testing.T) {
	w := newWorld(t)
	id := w.p.create(partnered())
	w.b.act(http.StatusOK, id, 0, action("agree"))
	sellerAgrees(w, id)
	w.p.act(http.StatusOK, id, 0, action("cancel"))
	if err := w.srv.ApprovePayment(id); err == nil {
		t.Error("payment approved into a cancelled deal")
	}
	if err := w.srv.RejectPayment(id); err == nil {
		t.Error("payment rejected on a cancelled deal")
	}
	if got := eventsOf(t, w.p, id); got != "create agree cancel" {
		t.Errorf("events %q, want no payment event after the cancel", got)
	}
	wantLedger(t, balanced(t, w.srv, id, "approval"), Ledger{In: "0.00", Out: "0.00", Fees: "0.00", Held: "0.00"}, "an approval of a cancelled deal")
}

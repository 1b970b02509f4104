package webhook

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	escrow "github.com/escrowkit/escrow-go"
)

// saleTx builds a two-party sale of one item with a shipping fee, in the state the flags say.
func saleTx(agreed, secured bool, status escrow.ItemStatus, disbursed bool) *escrow.Transaction {
	sched := escrow.Schedule{Amount: escrow.MustAmount("100"), Status: escrow.ScheduleStatus{Secured: secured, DisbursedToBeneficiary: disbursed}}
	return &escrow.Transaction{
		ID: 5,
		Parties: []escrow.Party{
			{Role: escrow.RoleBuyer, Agreed: true},
			{Role: escrow.RoleSeller, Agreed: agreed},
		},
		Items: []escrow.Item{
			{ID: 10, Type: escrow.ItemGeneralMerchandise, Status: status, Schedule: []escrow.Schedule{sched}},
			{ID: 11, Type: escrow.ItemShippingFee, Status: status, Schedule: []escrow.Schedule{sched}},
		},
	}
}

func keys(fs []fact) []string {
	var out []string
	for _, f := range fs {
		out = append(out, f.key)
	}
	return out
}

func TestFactsFollowTheLifecycle(t *testing.T) {
	tests := []struct {
		tx   *escrow.Transaction
		want []string
	}{
		{saleTx(false, false, escrow.ItemStatus{}, false), []string{"create"}},
		{saleTx(true, false, escrow.ItemStatus{}, false), []string{"create", "agree"}},
		{saleTx(true, true, escrow.ItemStatus{}, false), []string{"create", "agree", "payment_approved"}},
		{saleTx(true, true, escrow.ItemStatus{Shipped: true, Received: true}, false),
			[]string{"create", "agree", "payment_approved", "ship:10", "receive:10"}},
		{saleTx(true, true, escrow.ItemStatus{Shipped: true, Received: true, Accepted: true}, true),
			[]string{"create", "agree", "payment_approved", "ship:10", "receive:10", "accept:10", "payment_disbursed:10", "payment_disbursed:11", "complete"}},
		{saleTx(true, true, escrow.ItemStatus{Shipped: true, Received: true, Rejected: true, ShippedReturned: true, ReceivedReturned: true, RejectedReturned: true}, false),
			[]string{"create", "agree", "payment_approved", "ship:10", "receive:10", "reject:10", "ship_return:10", "receive_return:10", "reject_return:10"}},
	}
	for i, tt := range tests {
		if got := keys(factsOf(tt.tx)); !slices.Equal(got, tt.want) {
			t.Errorf("case %d: facts %v, want %v", i, got, tt.want)
		}
	}
	cancelled := saleTx(true, false, escrow.ItemStatus{}, false)
	cancelled.IsCancelled = true
	cancelled.CloseDate = escrow.Timestamp{Time: time.Now()}
	if got := keys(factsOf(cancelled)); !slices.Equal(got, []string{"create", "agree", "cancel"}) || !terminal(cancelled) {
		t.Errorf("cancelled: %v", got)
	}
}

// TestCompleteMeansClosed: goods paid out while a seller-paid broker fee is not is still
// open, and not terminal; once the fee is paid out and the transaction closes, it is.
func TestCompleteMeansClosed(t *testing.T) {
	tx := saleTx(true, true, escrow.ItemStatus{Shipped: true, Received: true, Accepted: true}, true)
	tx.Items = append(tx.Items, escrow.Item{ID: 12, Type: escrow.ItemBrokerFee, Schedule: []escrow.Schedule{{
		Amount: escrow.MustAmount("20"), Status: escrow.ScheduleStatus{Secured: true}}}})
	if got := keys(factsOf(tx)); slices.Contains(got, "complete") || terminal(tx) {
		t.Errorf("goods paid out, broker fee owed: facts %v, terminal %v", got, terminal(tx))
	}
	tx.Items[2].Schedule[0].Status.DisbursedToBeneficiary = true
	tx.CloseDate = escrow.Timestamp{Time: time.Now()}
	if got := keys(factsOf(tx)); !slices.Contains(got, "complete") || !slices.Contains(got, "payment_disbursed:12") || !terminal(tx) {
		t.Errorf("closed: facts %v, terminal %v", got, terminal(tx))
	}
}

func names(ns ...escrow.EventName) []escrow.EventName { return ns }

func TestPlanHandsOverOnlyWhatIsNewAndShown(t *testing.T) {
	tx := saleTx(true, true, escrow.ItemStatus{Shipped: true}, false)
	earlier := map[string]bool{"create": true, "agree": true, "payment_approved": true}
	plan, unconfirmed := planBatch(5, names(escrow.EventShip), tx, factsOf(tx), earlier)
	if len(unconfirmed) != 0 || len(plan) != 1 || !slices.Equal(plan[0].keys, []string{"ship:10"}) ||
		!slices.Equal(plan[0].ev.ItemIDs, []int64{10}) || plan[0].ev.Transaction != tx || plan[0].ev.Source != FromWebhook {
		t.Fatalf("first delivery: %+v %v", plan, unconfirmed)
	}
	if plan, unconfirmed := planBatch(5, names(escrow.EventShip), tx, factsOf(tx), map[string]bool{"create": true, "agree": true, "payment_approved": true, "ship:10": true}); len(plan) != 0 || len(unconfirmed) != 0 {
		t.Errorf("a duplicate was handed over: %+v %v", plan, unconfirmed)
	}
	if plan, unconfirmed := planBatch(5, names(escrow.EventAccept), tx, factsOf(tx), earlier); !slices.Equal(planned(plan), []string{"ship[10]:reconcile"}) || !slices.Equal(unconfirmed, names(escrow.EventAccept)) {
		t.Errorf("an event the transaction does not show: planned %v, unconfirmed %v; want what it shows, and accept unconfirmed", planned(plan), unconfirmed)
	}
	// Events no state can show are never planned, whatever the store holds: what the
	// state shows is, as the reconciler's.
	for _, ev := range names(escrow.EventPaymentSent, escrow.EventPaymentRefunded, escrow.EventPartyVerificationApproved, "funds_released_to_attacker") {
		if plan, _ := planBatch(5, names(ev), tx, factsOf(tx), earlier); !slices.Equal(planned(plan), []string{"ship[10]:reconcile"}) {
			t.Errorf("%s: planned %v", ev, planned(plan))
		}
	}
}

// planned lists a plan as event[items]:source.
func planned(plan []handover) []string {
	var got []string
	for _, p := range plan {
		got = append(got, fmt.Sprintf("%s%v:%s", p.ev.Name, p.ev.ItemIDs, p.ev.Source))
	}
	return got
}

// TestPlanHandsOverEverythingShownInOrder: a delivery hands over every fact the state
// shows that was not handed over, in order: its predecessors whose deliveries were lost,
// and the facts after it whose deliveries are on their way, both FromReconcile.
func TestPlanHandsOverEverythingShownInOrder(t *testing.T) {
	tx := saleTx(true, true, escrow.ItemStatus{Shipped: true, Received: true, Accepted: true}, false)
	plan, unconfirmed := planBatch(5, names(escrow.EventReceive), tx, factsOf(tx), map[string]bool{"create": true})
	got := planned(plan)
	want := []string{"agree[]:reconcile", "payment_approved[]:reconcile", "ship[10]:reconcile", "receive[10]:webhook", "accept[10]:reconcile"}
	if len(unconfirmed) != 0 || !slices.Equal(got, want) {
		t.Errorf("plan = %v %v, want %v", got, unconfirmed, want)
	}
}

// TestPlanCoalescesDeliveries: one batch of several delivered events plans each as
// FromWebhook, in lifecycle order whatever order they came in.
func TestPlanCoalescesDeliveries(t *testing.T) {
	tx := saleTx(true, true, escrow.ItemStatus{Shipped: true}, false)
	plan, _ := planBatch(5, names(escrow.EventShip, escrow.EventCreate, escrow.EventAgree, escrow.EventShip), tx, factsOf(tx), map[string]bool{})
	var got []string
	for _, p := range plan {
		got = append(got, fmt.Sprintf("%s:%s", p.ev.Name, p.ev.Source))
	}
	want := []string{"create:webhook", "agree:webhook", "payment_approved:reconcile", "ship:webhook"}
	if !slices.Equal(got, want) {
		t.Errorf("plan = %v, want %v", got, want)
	}
}

func TestReconciledStatePlansEverythingMissing(t *testing.T) {
	tx := saleTx(true, true, escrow.ItemStatus{Shipped: true, Received: true, Accepted: true}, true)
	tx.Items = append(tx.Items, escrow.Item{ID: 12, Type: escrow.ItemGeneralMerchandise, Status: escrow.ItemStatus{Shipped: true}})
	tx.CloseDate = escrow.Timestamp{Time: time.Now()}
	plan, _ := planBatch(5, nil, tx, factsOf(tx), map[string]bool{"create": true, "agree": true, "ship:10": true})
	var got []string
	for _, p := range plan {
		got = append(got, fmt.Sprintf("%s%v", p.ev.Name, p.ev.ItemIDs))
		if p.ev.Source != FromReconcile || p.ev.TransactionID != 5 || p.ev.Transaction != tx {
			t.Errorf("event %+v", p.ev)
		}
	}
	want := []string{"payment_approved[]", "ship[12]", "receive[10]", "accept[10]", "payment_disbursed[10 11]", "complete[]"}
	if !slices.Equal(got, want) {
		t.Errorf("missing = %v, want %v", got, want)
	}
}

func TestHintNames(t *testing.T) {
	for name, want := range map[escrow.EventName]bool{
		"payment_sent": true, "party_verification_approved": true, "x1": true,
		"": false, "Payment": false, "1abc": false, "a-b": false, "a b": false, "ä": false,
		escrow.EventName(strings.Repeat("a", 64)): true, escrow.EventName(strings.Repeat("a", 65)): false,
	} {
		if got := validHintName(name); got != want {
			t.Errorf("validHintName(%q) = %v", name, got)
		}
	}
}

// TestReplayedReadsTheItemsRecorded: a delivery of an item event can show nothing new only
// once that event's fact was handed over for every item it can concern (each good for
// ship, receive, accept and their kin; every item for payment_disbursed), as the shape
// recorded with the transaction's first facts counts them; an event of the whole
// transaction, once its fact was handed over. Anything else may be news, and is fetched.
func TestReplayedReadsTheItemsRecorded(t *testing.T) {
	tx := saleTx(true, true, escrow.ItemStatus{Shipped: true}, false)
	tx.Items = append(tx.Items, escrow.Item{ID: 12, Type: escrow.ItemGeneralMerchandise})
	shape := shapeKey(tx)
	if shape != "#items=2/3" {
		t.Fatalf("shapeKey = %q, want two goods of three items", shape)
	}
	handed := func(keys ...string) map[string]bool {
		m := map[string]bool{}
		for _, k := range keys {
			m[k] = true
		}
		return m
	}
	for _, tc := range []struct {
		names  []escrow.EventName
		handed map[string]bool
		want   bool
	}{
		{names(escrow.EventCreate), handed("create"), true},
		{names(escrow.EventCreate, escrow.EventAgree), handed("create"), false},
		{names(escrow.EventComplete), handed(shape, "create"), false},
		{names(escrow.EventShip), handed(shape, "ship:10"), false},                                                  // the other good may ship
		{names(escrow.EventShip), handed(shape, "ship:10", "ship:12"), true},                                        // every good shipped
		{names(escrow.EventShip), handed("ship:10", "ship:12"), false},                                              // items not counted yet
		{names(escrow.EventReceive), handed(shape, "ship:10", "ship:12"), false},                                    // shipped is not received
		{names(escrow.EventPaymentDisbursed), handed(shape, "payment_disbursed:10", "payment_disbursed:12"), false}, // the fee item too
		{names(escrow.EventPaymentDisbursed), handed(shape, "payment_disbursed:10", "payment_disbursed:11", "payment_disbursed:12"), true},
		{names(escrow.EventShip, escrow.EventCreate), handed(shape, "create", "ship:10", "ship:12"), true},
		{names(escrow.EventShip, escrow.EventPaymentSent), handed(shape, "ship:10", "ship:12"), false}, // a hint is fetched for
		{nil, handed(shape, "create"), false},
		{names(escrow.EventShip), handed("#items=0/1"), false}, // no goods: a ship delivery is a forgery, fetched to tell
		{names(escrow.EventPaymentDisbursed), handed("#items=0/0"), false},
	} {
		if got := Replayed(tc.names, tc.handed); got != tc.want {
			t.Errorf("Replayed(%v, %v) = %v, want %v", tc.names, slices.Sorted(maps.Keys(tc.handed)), got, tc.want)
		}
	}
}

package webhook

import (
	"fmt"
	"slices"
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
	if got := keys(factsOf(cancelled)); !slices.Equal(got, []string{"create", "agree", "cancel"}) || !terminal(factsOf(cancelled)) {
		t.Errorf("cancelled: %v", got)
	}
}

func TestConfirmHandsOverOnlyWhatIsNewAndShown(t *testing.T) {
	tx := saleTx(true, true, escrow.ItemStatus{Shipped: true}, false)
	ship := escrow.Event{Name: escrow.EventShip, EventType: escrow.EventTypeTransaction, TransactionID: 5}

	earlier := map[string]bool{"create": true, "agree": true, "payment_approved": true}
	plan, why := confirm(ship, tx, factsOf(tx), earlier)
	if why != "" || len(plan) != 1 || !slices.Equal(plan[0].keys, []string{"ship:10"}) || !slices.Equal(plan[0].ev.ItemIDs, []int64{10}) {
		t.Fatalf("first delivery: %+v %q", plan, why)
	}
	if plan, why := confirm(ship, tx, factsOf(tx), map[string]bool{"create": true, "agree": true, "payment_approved": true, "ship:10": true}); len(plan) != 0 || why != "" {
		t.Errorf("a duplicate was handed over: %+v %q", plan, why)
	}
	accept := escrow.Event{Name: escrow.EventAccept, TransactionID: 5}
	if plan, why := confirm(accept, tx, factsOf(tx), map[string]bool{}); len(plan) != 0 || why == "" {
		t.Errorf("an event the transaction does not show was handed over: %+v", plan)
	}
	sent := escrow.Event{Name: escrow.EventPaymentSent, TransactionID: 5}
	plan, _ = confirm(sent, tx, factsOf(tx), map[string]bool{})
	if len(plan) != 1 {
		t.Fatalf("payment_sent: %+v", plan)
	}
	if again, _ := confirm(sent, tx, factsOf(tx), map[string]bool{plan[0].keys[0]: true}); len(again) != 0 {
		t.Error("payment_sent for the same state was handed over twice")
	}
	moved := saleTx(true, true, escrow.ItemStatus{Shipped: true, Received: true}, false)
	if again, _ := confirm(sent, moved, factsOf(moved), map[string]bool{plan[0].keys[0]: true}); len(again) != 1 {
		t.Error("payment_sent for a new state was not handed over")
	}
}

// TestConfirmCatchesUpLostDeliveries: a delivery whose predecessors were lost hands them
// over first, from the transaction's state, so the callback sees the events in order.
func TestConfirmCatchesUpLostDeliveries(t *testing.T) {
	tx := saleTx(true, true, escrow.ItemStatus{Shipped: true, Received: true}, false)
	receive := escrow.Event{Name: escrow.EventReceive, EventType: escrow.EventTypeTransaction, TransactionID: 5}
	plan, why := confirm(receive, tx, factsOf(tx), map[string]bool{"create": true})
	var got []string
	for _, p := range plan {
		got = append(got, fmt.Sprintf("%s%v:%s", p.ev.Name, p.ev.ItemIDs, p.ev.Source))
	}
	want := []string{"agree[]:reconcile", "payment_approved[]:reconcile", "ship[10]:reconcile", "receive[10]:webhook"}
	if why != "" || !slices.Equal(got, want) {
		t.Errorf("plan = %v %q, want %v", got, why, want)
	}
}

func TestMissingGroupsFactsByEventInOrder(t *testing.T) {
	tx := saleTx(true, true, escrow.ItemStatus{Shipped: true, Received: true, Accepted: true}, true)
	tx.Items = append(tx.Items, escrow.Item{ID: 12, Type: escrow.ItemGeneralMerchandise, Status: escrow.ItemStatus{Shipped: true}})
	plan := missing(escrow.Event{TransactionID: 5}, tx, factsOf(tx), map[string]bool{"create": true, "agree": true, "ship:10": true})
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

func TestMemoryStore(t *testing.T) {
	var s MemoryStore
	ctx := t.Context()
	if h, err := s.Handed(ctx, 1); err != nil || len(h) != 0 {
		t.Fatalf("empty store: %v %v", h, err)
	}
	s.Record(ctx, 1, []string{"create"}, false)
	s.Record(ctx, 2, []string{"create", "cancel"}, true)
	s.Record(ctx, 3, nil, false)
	h, _ := s.Handed(ctx, 1)
	h["mutated"] = true
	if again, _ := s.Handed(ctx, 1); len(again) != 1 || !again["create"] {
		t.Errorf("Handed gave out its own map: %v", again)
	}
	if ids, _ := s.Unfinished(ctx); !slices.Equal(ids, []int64{1, 3}) {
		t.Errorf("Unfinished = %v", ids)
	}
}

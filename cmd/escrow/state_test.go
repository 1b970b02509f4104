package main

import (
	"testing"
	"time"

	escrow "github.com/escrowkit/escrow-go"
)

// txOf builds a transaction with two agreed parties and the given goods; secured says
// whether their schedules are funded, paid whether they are paid out.
func txOf(secured, paid bool, goods ...escrow.ItemStatus) *escrow.Transaction {
	tx := &escrow.Transaction{Parties: []escrow.Party{{Role: escrow.RoleBuyer, Agreed: true}, {Role: escrow.RoleSeller, Agreed: true}}}
	for _, st := range goods {
		tx.Items = append(tx.Items, escrow.Item{
			Type:     escrow.ItemMilestone,
			Status:   st,
			Schedule: []escrow.Schedule{{Amount: escrow.MustAmount("10.00"), Status: escrow.ScheduleStatus{Secured: secured, DisbursedToBeneficiary: paid}}},
		})
	}
	// A fee item never decides the state.
	tx.Items = append(tx.Items, escrow.Item{Type: escrow.ItemBrokerFee, Schedule: []escrow.Schedule{{Amount: escrow.MustAmount("1.00")}}})
	return tx
}

func TestDeriveState(t *testing.T) {
	var (
		none      = escrow.ItemStatus{}
		shipped   = escrow.ItemStatus{Shipped: true}
		received  = escrow.ItemStatus{Shipped: true, Received: true}
		accepted  = escrow.ItemStatus{Shipped: true, Received: true, Accepted: true}
		rejected  = escrow.ItemStatus{Shipped: true, Received: true, Rejected: true}
		shippedR  = escrow.ItemStatus{Shipped: true, Received: true, Rejected: true, ShippedReturned: true}
		receivedR = escrow.ItemStatus{Shipped: true, Received: true, Rejected: true, ShippedReturned: true, ReceivedReturned: true}
		returned  = escrow.ItemStatus{Shipped: true, Received: true, Rejected: true, ShippedReturned: true, ReceivedReturned: true, AcceptedReturned: true}
		disputed  = escrow.ItemStatus{Shipped: true, Received: true, Rejected: true, ShippedReturned: true, ReceivedReturned: true, RejectedReturned: true, InDispute: true}
	)
	unagreed := txOf(false, false, none)
	unagreed.Parties[1].Agreed = false
	closed := txOf(true, true, accepted)
	closed.CloseDate = escrow.Timestamp{Time: time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC)}
	cancelled := txOf(false, false, none)
	cancelled.IsCancelled = true
	itemCancelled := txOf(true, false, escrow.ItemStatus{Canceled: true})
	partlyPaid := txOf(true, false, accepted)
	partlyPaid.Items[0].Schedule = append(partlyPaid.Items[0].Schedule, escrow.Schedule{Status: escrow.ScheduleStatus{Secured: true, DisbursedToBeneficiary: true}})

	tests := []struct {
		name string
		tx   *escrow.Transaction
		want state
	}{
		{"a party has not agreed", unagreed, stateAwaitingAgreement},
		{"agreed, not funded", txOf(false, false, none), stateAwaitingPayment},
		{"funded", txOf(true, false, none), stateAwaitingShipment},
		{"shipped", txOf(true, false, shipped), stateShipped},
		{"received", txOf(true, false, received), stateInspection},
		{"accepted, not paid out", txOf(true, false, accepted), stateAccepted},
		{"accepted, one entry not paid out", partlyPaid, stateAccepted},
		{"accepted and paid out", txOf(true, true, accepted), stateDisbursed},
		{"closed", closed, stateComplete},
		{"cancelled", cancelled, stateCancelled},
		{"an item cancelled", itemCancelled, stateCancelled},
		{"rejected", txOf(true, false, rejected), stateRejected},
		{"shipped back", txOf(true, false, shippedR), stateReturnShipped},
		{"received back", txOf(true, false, receivedR), stateReturnInspection},
		{"returned", txOf(true, false, returned), stateReturned},
		{"in dispute", txOf(true, false, disputed), stateInDispute},
		// Milestones: the state is where the work is.
		{"first milestone shipped", txOf(true, false, shipped, none, none), stateShipped},
		{"first milestone accepted", txOf(true, false, accepted, none), stateAwaitingShipment},
		{"second milestone in inspection", txOf(true, false, accepted, received, none), stateInspection},
		{"one returned, one accepted", txOf(true, true, returned, accepted), stateDisbursed},
		{"a dispute outweighs progress", txOf(true, false, received, disputed), stateInDispute},
		{"no good visible", &escrow.Transaction{Parties: []escrow.Party{{Agreed: true}}}, stateAwaitingPayment},
	}
	for _, tc := range tests {
		if got := deriveState(tc.tx); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, got, tc.want)
		}
	}
}

func TestSumsAreExact(t *testing.T) {
	// 0.1 + 0.2 is not 0.3 in float64; in Amount it is.
	tx := &escrow.Transaction{Items: []escrow.Item{
		{Type: escrow.ItemGeneralMerchandise, Schedule: []escrow.Schedule{
			{Amount: escrow.MustAmount("0.10"), PayerCustomer: "b@x.io", BeneficiaryCustomer: "s@x.io", Status: escrow.ScheduleStatus{Secured: true}},
			{Amount: escrow.MustAmount("0.20"), PayerCustomer: "b@x.io", BeneficiaryCustomer: "s@x.io", Status: escrow.ScheduleStatus{Secured: true, DisbursedToBeneficiary: true}},
		}, Fees: []escrow.Fee{
			{Type: escrow.FeeEscrow, PayerCustomer: "b@x.io", Amount: escrow.MustAmount("0.01")},
			{Type: escrow.FeeEscrow, PayerCustomer: "s@x.io", Amount: escrow.MustAmount("0.01")},
			{Type: escrow.FeeWireDisbursement, PayerCustomer: "s@x.io", Amount: escrow.MustAmount("0.05")},
		}},
		{Type: escrow.ItemBrokerFee, Schedule: []escrow.Schedule{{Amount: escrow.MustAmount("0.03"), PayerCustomer: "s@x.io", BeneficiaryCustomer: "me"}}},
	}}
	a := sumAmounts(tx)
	for _, c := range []struct {
		name string
		got  escrow.Amount
		want string
	}{
		{"items", a.Items, "0.30"}, {"broker fee", a.BrokerFee, "0.03"}, {"escrow fee", a.EscrowFee, "0.02"},
		{"total", a.Total, "0.40"}, {"secured", a.Secured, "0.30"}, {"disbursed", a.Disbursed, "0.20"},
	} {
		if c.got.String() != c.want {
			t.Errorf("%s: %s, want %s", c.name, c.got, c.want)
		}
	}
	buyer, seller, broker := sharesOf(tx, "b@x.io"), sharesOf(tx, "s@x.io"), sharesOf(tx, "me")
	if buyer.Pays.String() != "0.31" || buyer.Receives.String() != "0.00" || buyer.Net().String() != "-0.31" {
		t.Errorf("buyer %+v", buyer)
	}
	if seller.Pays.String() != "0.09" || seller.Receives.String() != "0.30" || seller.Net().String() != "0.21" {
		t.Errorf("seller %+v", seller)
	}
	if broker.Net().String() != "0.03" {
		t.Errorf("broker %+v", broker)
	}
}

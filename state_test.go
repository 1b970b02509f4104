package escrow

import (
	"fmt"
	"slices"
	"testing"
	"time"
)

// brokered is a 1000.00 sale through a broker: the buyer pays the price and the 32.50
// escrow fee, and the seller pays the broker a 100.00 commission out of its proceeds. Each
// step changes a fresh copy.
func brokered(steps ...func(*Transaction)) *Transaction {
	tx := &Transaction{
		ID: 1, Currency: USD,
		Parties: []Party{
			{Role: RoleBuyer, Customer: "buyer@example.com", Agreed: true},
			{Role: RoleSeller, Customer: "seller@example.com", Agreed: true},
			{Role: RoleBroker, Customer: "me", Agreed: true},
			{Role: RolePartner, Customer: "me", Agreed: true},
		},
		Items: []Item{
			{ID: 10, Type: ItemGeneralMerchandise,
				Schedule: []Schedule{{Amount: MustAmount("1000.00"), PayerCustomer: "buyer@example.com", BeneficiaryCustomer: "seller@example.com"}},
				Fees:     []Fee{{Type: FeeEscrow, PayerCustomer: "buyer@example.com", Split: SplitWhole, Amount: MustAmount("32.50")}}},
			{ID: 11, Type: ItemBrokerFee,
				Schedule: []Schedule{{Amount: MustAmount("100.00"), PayerCustomer: "seller@example.com", BeneficiaryCustomer: "me"}}},
		},
	}
	for _, step := range steps {
		step(tx)
	}
	return tx
}

// Steps of the lifecycle, applied in order by the table below.
var (
	unagreed = func(tx *Transaction) { tx.Parties[1].Agreed = false }
	funded   = func(tx *Transaction) {
		for i := range tx.Items {
			for j := range tx.Items[i].Schedule {
				tx.Items[i].Schedule[j].Status.Secured = true
			}
		}
	}
	shipped         = func(tx *Transaction) { tx.Items[0].Status.Shipped = true }
	received        = func(tx *Transaction) { tx.Items[0].Status.Received = true }
	accepted        = func(tx *Transaction) { tx.Items[0].Status.Accepted = true }
	rejected        = func(tx *Transaction) { tx.Items[0].Status.Rejected = true }
	shippedR        = func(tx *Transaction) { tx.Items[0].Status.ShippedReturned = true }
	receivedR       = func(tx *Transaction) { tx.Items[0].Status.ReceivedReturned = true }
	acceptedR       = func(tx *Transaction) { tx.Items[0].Status.AcceptedReturned = true }
	disputed        = func(tx *Transaction) { tx.Items[0].Status.RejectedReturned, tx.Items[0].Status.InDispute = true, true }
	sellerPaid      = func(tx *Transaction) { tx.Items[0].Schedule[0].Status.DisbursedToBeneficiary = true }
	brokerPaid      = func(tx *Transaction) { tx.Items[1].Schedule[0].Status.DisbursedToBeneficiary = true }
	providerDispute = func(tx *Transaction) { tx.Items[0].Status.InDispute = true }
	closed          = func(tx *Transaction) { tx.CloseDate = Timestamp{Time: time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC)} }
	cancelled       = func(tx *Transaction) { tx.IsCancelled = true }
	itemCanceled    = func(tx *Transaction) { tx.Items[0].Status.Canceled = true }
	allCanceled     = func(tx *Transaction) {
		for i := range tx.Items {
			tx.Items[i].Status.Canceled = true
		}
	}
	// milestones makes the goods three milestones of 1000.00 each.
	milestones = func(tx *Transaction) {
		g := tx.Items[0]
		g.Type = ItemMilestone
		tx.Items = []Item{g, g, g, tx.Items[1]}
		for i := range 3 {
			tx.Items[i].ID = int64(20 + i)
			tx.Items[i].Schedule = append([]Schedule(nil), g.Schedule...)
		}
	}
	onMilestone = func(i int, steps ...func(*Transaction)) func(*Transaction) {
		return func(tx *Transaction) {
			tx.Items[0], tx.Items[i] = tx.Items[i], tx.Items[0]
			for _, s := range steps {
				s(tx)
			}
			tx.Items[0], tx.Items[i] = tx.Items[i], tx.Items[0]
		}
	}
)

// TestTransactionState pins the state and the predicates through a brokered sale whose
// seller pays the broker's fee, its return path, its ends and a milestone contract.
func TestTransactionState(t *testing.T) {
	tests := []struct {
		name                                   string
		tx                                     *Transaction
		want                                   TransactionState
		agreed, funded, completed, isCancelled bool
	}{
		{"a party has not agreed", brokered(unagreed), StateAwaitingAgreement, false, false, false, false},
		{"agreed, not funded", brokered(), StateAwaitingPayment, true, false, false, false},
		{"funded", brokered(funded), StateFunded, true, true, false, false},
		{"shipped", brokered(funded, shipped), StateShipped, true, true, false, false},
		{"received", brokered(funded, shipped, received), StateInInspection, true, true, false, false},
		{"accepted, seller not paid", brokered(funded, shipped, received, accepted), StateAccepted, true, true, false, false},
		{"broker paid before the seller", brokered(funded, shipped, received, accepted, brokerPaid), StateAccepted, true, true, false, false},
		// The seller-paid broker fee is owed once the goods are accepted: until the broker
		// is paid out, the transaction is open, though the seller has its money.
		{"seller paid, broker fee owed", brokered(funded, shipped, received, accepted, sellerPaid), StateDisbursed, true, true, false, false},
		{"everyone paid", brokered(funded, shipped, received, accepted, sellerPaid, brokerPaid), StateComplete, true, true, true, false},
		{"everyone paid, then a dispute opened by the provider", brokered(funded, shipped, received, accepted, sellerPaid, brokerPaid, providerDispute), StateInDispute, true, true, false, false},
		{"closed by the API", brokered(funded, shipped, received, accepted, closed), StateComplete, true, true, true, false},
		{"rejected", brokered(funded, shipped, received, rejected), StateReturning, true, true, false, false},
		{"shipped back", brokered(funded, shipped, received, rejected, shippedR), StateReturning, true, true, false, false},
		{"received back", brokered(funded, shipped, received, rejected, shippedR, receivedR), StateReturning, true, true, false, false},
		// Returned goods owe no commission: nothing is left to pay out.
		{"returned", brokered(funded, shipped, received, rejected, shippedR, receivedR, acceptedR), StateComplete, true, true, true, false},
		{"in dispute", brokered(funded, shipped, received, rejected, shippedR, receivedR, disputed), StateInDispute, true, true, false, false},
		{"cancelled", brokered(cancelled, closed), StateCancelled, true, false, false, true},
		{"every item canceled", brokered(allCanceled), StateCancelled, true, false, false, true},
		{"cancelled before agreement", brokered(unagreed, cancelled), StateCancelled, false, false, false, true},
		// Milestones: the state is where the work is.
		{"milestones funded", brokered(milestones, funded), StateFunded, true, true, false, false},
		{"first milestone shipped", brokered(milestones, funded, shipped), StateShipped, true, true, false, false},
		{"first accepted, next awaits shipment", brokered(milestones, funded, shipped, received, accepted), StateFunded, true, true, false, false},
		{"second in inspection", brokered(milestones, funded, shipped, received, accepted, onMilestone(1, shipped, received)), StateInInspection, true, true, false, false},
		{"a dispute outweighs progress", brokered(milestones, funded, shipped, onMilestone(1, shipped, received, rejected, shippedR, receivedR, disputed)), StateInDispute, true, true, false, false},
		{"one returned, two accepted and paid, fee owed", brokered(milestones, funded,
			onMilestone(0, shipped, received, rejected, shippedR, receivedR, acceptedR),
			onMilestone(1, shipped, received, accepted, sellerPaid),
			onMilestone(2, shipped, received, accepted, sellerPaid)), StateDisbursed, true, true, false, false},
		// Any good accepted and not yet paid keeps the deal at accepted, wherever it is listed.
		{"first accepted and not paid, the others paid", brokered(milestones, funded,
			onMilestone(0, shipped, received, accepted),
			onMilestone(1, shipped, received, accepted, sellerPaid),
			onMilestone(2, shipped, received, accepted, sellerPaid)), StateAccepted, true, true, false, false},
		// A good returned is owed nothing: once the others and the fee are paid, it is done.
		{"one returned, two accepted and paid, fee paid", brokered(milestones, funded,
			onMilestone(0, shipped, received, rejected, shippedR, receivedR, acceptedR),
			onMilestone(1, shipped, received, accepted, sellerPaid),
			onMilestone(2, shipped, received, accepted, sellerPaid),
			func(tx *Transaction) { tx.Items[3].Schedule[0].Status.DisbursedToBeneficiary = true }), StateComplete, true, true, true, false},
		{"no good visible", &Transaction{Parties: []Party{{Agreed: true}}, Items: []Item{brokered(funded).Items[1]}}, StateFunded, true, true, false, false},
		{"nothing visible", &Transaction{}, StateAwaitingAgreement, false, false, false, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.tx.State(); got != tc.want {
				t.Errorf("State() = %s, want %s", got, tc.want)
			}
			if got := tc.tx.AllAgreed(); got != tc.agreed {
				t.Errorf("AllAgreed() = %v", got)
			}
			if got := tc.tx.Funded(); got != tc.funded {
				t.Errorf("Funded() = %v", got)
			}
			if got := tc.tx.Completed(); got != tc.completed {
				t.Errorf("Completed() = %v", got)
			}
			if got := tc.tx.Cancelled(); got != tc.isCancelled {
				t.Errorf("Cancelled() = %v", got)
			}
		})
	}
}

func TestItemState(t *testing.T) {
	tests := []struct {
		name string
		tx   *Transaction
		item int
		want TransactionState
	}{
		{"not funded", brokered(), 0, StateAwaitingPayment},
		{"funded", brokered(funded), 0, StateFunded},
		{"shipped", brokered(funded, shipped), 0, StateShipped},
		{"received", brokered(funded, shipped, received), 0, StateInInspection},
		{"accepted", brokered(funded, shipped, received, accepted), 0, StateAccepted},
		{"accepted and paid", brokered(funded, shipped, received, accepted, sellerPaid), 0, StateDisbursed},
		{"rejected", brokered(funded, shipped, received, rejected), 0, StateReturning},
		{"returned", brokered(funded, shipped, received, rejected, shippedR, receivedR, acceptedR), 0, StateReturned},
		{"disputed", brokered(funded, shipped, received, rejected, shippedR, receivedR, disputed), 0, StateInDispute},
		{"canceled", brokered(allCanceled), 0, StateCancelled},
		// The provider may open a dispute after the payout (a chargeback, say).
		{"paid, then disputed by the provider", brokered(funded, shipped, received, accepted, sellerPaid, providerDispute), 0, StateInDispute},
		{"fee item unfunded", brokered(), 1, StateAwaitingPayment},
		{"fee item funded", brokered(funded), 1, StateFunded},
		{"fee item paid", brokered(funded, brokerPaid), 1, StateDisbursed},
	}
	for _, tc := range tests {
		it := &tc.tx.Items[tc.item]
		if got := it.State(); got != tc.want {
			t.Errorf("%s: State() = %s, want %s", tc.name, got, tc.want)
		}
	}
	if tx := brokered(unagreed); tx.ItemState(&tx.Items[0]) != StateAwaitingAgreement {
		t.Errorf("an item of an unagreed transaction: %s, want awaiting_agreement", tx.ItemState(&tx.Items[0]))
	}
	if tx := brokered(); tx.ItemState(&tx.Items[0]) != StateAwaitingPayment {
		t.Errorf("an unfunded item of an agreed transaction: %s, want awaiting_payment", tx.ItemState(&tx.Items[0]))
	}
	if tx := brokered(funded); tx.ItemState(&tx.Items[0]) != StateFunded {
		t.Errorf("ItemState of a funded item: %s", tx.ItemState(&tx.Items[0]))
	}
	it := brokered(funded, allCanceled).Items[0]
	if !it.Funded() || it.Disbursed() || !it.Cancelled() {
		t.Errorf("canceled funded item: Funded %v, Disbursed %v, Cancelled %v", it.Funded(), it.Disbursed(), it.Cancelled())
	}
	if (&Item{}).Funded() || (&Item{}).Disbursed() {
		t.Error("an item without a schedule reads funded or disbursed")
	}
}

// TestTotals: who pays and receives what in the brokered sale, exactly: the seller's
// commission is a fee it pays, the nets and the escrow fee sum to zero.
func TestTotals(t *testing.T) {
	tot := brokered(funded, shipped, received, accepted, sellerPaid).Totals()
	for _, c := range []struct {
		name string
		got  Amount
		want string
	}{
		{"items", tot.Items, "1000.00"}, {"fees", tot.Fees, "132.50"}, {"escrow fee", tot.EscrowFee, "32.50"},
		{"broker fee", tot.BrokerFee, "100.00"}, {"total", tot.Total, "1132.50"},
		{"secured", tot.Secured, "1100.00"}, {"disbursed", tot.Disbursed, "1000.00"},
		{"buyer items", tot.Of("buyer@example.com").Items, "1000.00"},
		{"buyer fees", tot.Of("buyer@example.com").Fees, "32.50"},
		{"buyer pays", tot.Of("buyer@example.com").Pays(), "1032.50"},
		{"buyer net", tot.Of("buyer@example.com").Net(), "-1032.50"},
		{"seller fees", tot.Of("seller@example.com").Fees, "100.00"},
		{"seller receives", tot.Of("seller@example.com").Receives, "1000.00"},
		{"seller net", tot.Of("seller@example.com").Net(), "900.00"},
		{"broker receives", tot.Of("me").Receives, "100.00"},
		{"broker net", tot.Of("me").Net(), "100.00"},
		{"stranger", tot.Of("nobody@example.com").Net(), "0.00"},
	} {
		if c.got.String() != c.want {
			t.Errorf("%s = %s, want %s", c.name, c.got, c.want)
		}
	}
	var nets []Amount
	for _, p := range tot.Customers {
		nets = append(nets, p.Net())
	}
	if sum := SumAmounts(append(nets, tot.EscrowFee)...); !sum.IsZero() {
		t.Errorf("nets and escrow fee sum to %s, want 0", sum)
	}
}

// TestTotalsNameOnlyCustomersShown: a schedule whose payer or beneficiary the reader is
// not shown (the API leaves it empty) counts in the sums but adds no customer: a caller
// ranging over Customers must not meet one named "".
func TestTotalsNameOnlyCustomersShown(t *testing.T) {
	tx := brokered(funded, shipped, received, accepted, sellerPaid)
	for i := range tx.Items {
		for j := range tx.Items[i].Schedule {
			tx.Items[i].Schedule[j].BeneficiaryCustomer = ""
		}
	}
	tot := tx.Totals()
	if _, ok := tot.Customers[""]; ok || tot.Items.String() != "1000.00" {
		t.Errorf("Customers %v, items %s; want no customer named \"\" and items 1000.00", tot.Customers, tot.Items)
	}
}

// TestItemCancelledReadsItsFlag: Item.Cancelled is the item's canceled flag, and nothing
// else: a good still under way is not cancelled.
func TestItemCancelledReadsItsFlag(t *testing.T) {
	for _, canceled := range []bool{false, true} {
		it := Item{Type: ItemGeneralMerchandise, Status: ItemStatus{Shipped: true, Canceled: canceled}}
		if it.Cancelled() != canceled {
			t.Errorf("an item with canceled=%v: Cancelled() = %v", canceled, it.Cancelled())
		}
	}
}

// TestTotalsKeepEachKindOfFeeApart: a shipping fee item and a card deposit fee count in
// Fees and Total, but BrokerFee is the broker_fee items alone and EscrowFee the escrow fee
// entries alone.
func TestTotalsKeepEachKindOfFeeApart(t *testing.T) {
	tx := brokered(func(tx *Transaction) {
		tx.Items[0].Fees = append(tx.Items[0].Fees, Fee{Type: FeeCreditCardDeposit, PayerCustomer: "buyer@example.com", Amount: MustAmount("5.00")})
		tx.Items = append(tx.Items, Item{ID: 12, Type: ItemShippingFee,
			Schedule: []Schedule{{Amount: MustAmount("20.00"), PayerCustomer: "buyer@example.com", BeneficiaryCustomer: "seller@example.com"}}})
	})
	tot := tx.Totals()
	for _, c := range []struct {
		name      string
		got, want Amount
	}{
		{"broker fee", tot.BrokerFee, MustAmount("100.00")},
		{"escrow fee", tot.EscrowFee, MustAmount("32.50")},
		{"fees", tot.Fees, MustAmount("157.50")},
		{"total", tot.Total, MustAmount("1157.50")},
		{"buyer fees", tot.Of("buyer@example.com").Fees, MustAmount("57.50")},
	} {
		if c.got.Cmp(c.want) != 0 {
			t.Errorf("%s = %s, want %s", c.name, c.got, c.want)
		}
	}
}

// TestTotalsAreExact: 0.1 + 0.2 is not 0.3 in float64; in Totals it is.
func TestTotalsAreExact(t *testing.T) {
	tx := &Transaction{Items: []Item{{Type: ItemGeneralMerchandise, Schedule: []Schedule{
		{Amount: MustAmount("0.10"), PayerCustomer: "b", BeneficiaryCustomer: "s"},
		{Amount: MustAmount("0.20"), PayerCustomer: "b", BeneficiaryCustomer: "s"},
	}}}}
	if got := tx.Totals().Items; got.Cmp(MustAmount("0.30")) != 0 {
		t.Errorf("items = %s", got)
	}
}

// TestNextSteps pins who must do what through every state of the brokered sale, its
// return path, its ends and a milestone contract.
func TestNextSteps(t *testing.T) {
	const buyer, seller = "buyer@example.com", "seller@example.com"
	var (
		agreeSeller  = NextStep{Role: RoleSeller, Customer: seller, Action: NextAgree}
		pay          = NextStep{Role: RoleBuyer, Customer: buyer, Action: NextPay}
		ship         = NextStep{Role: RoleSeller, Customer: seller, Action: NextShip}
		receive      = NextStep{Role: RoleBuyer, Customer: buyer, Action: NextReceive}
		accept       = NextStep{Role: RoleBuyer, Customer: buyer, Action: NextAccept}
		reject       = NextStep{Role: RoleBuyer, Customer: buyer, Action: NextReject}
		shipReturn   = NextStep{Role: RoleBuyer, Customer: buyer, Action: NextShipReturn}
		receiveRet   = NextStep{Role: RoleSeller, Customer: seller, Action: NextReceiveReturn}
		acceptRet    = NextStep{Role: RoleSeller, Customer: seller, Action: NextAcceptReturn}
		rejectRet    = NextStep{Role: RoleSeller, Customer: seller, Action: NextRejectReturn}
		sellerMethod = NextStep{Role: RoleSeller, Customer: seller, Action: NextSelectDisbursementMethod}
		brokerMethod = NextStep{Role: RoleBroker, Customer: "me", Action: NextSelectDisbursementMethod}
		onItem       = func(s NextStep, id int64) NextStep { s.ItemID = id; return s }
		chose        = func(role Role) func(*Transaction) {
			return func(tx *Transaction) {
				for i := range tx.Parties {
					if tx.Parties[i].Role == role {
						tx.Parties[i].DisbursementMethodSelected = true
					}
				}
			}
		}
		hideSeller = func(tx *Transaction) { tx.Parties[1].Customer = "hidden" }
		buyerAlone = func(tx *Transaction) { tx.Parties[0].Agreed = false }
		partnerFee = func(tx *Transaction) { tx.Items[1].Type = ItemPartnerFee }
	)
	tests := []struct {
		name string
		tx   *Transaction
		want []NextStep
	}{
		{"a party has not agreed", brokered(unagreed), []NextStep{agreeSeller}},
		{"two parties have not agreed", brokered(unagreed, buyerAlone), []NextStep{{Role: RoleBuyer, Customer: buyer, Action: NextAgree}, agreeSeller}},
		{"agreed, not funded", brokered(), []NextStep{pay}},
		{"funded", brokered(funded), []NextStep{ship}},
		{"shipped", brokered(funded, shipped), []NextStep{receive}},
		{"received", brokered(funded, shipped, received), []NextStep{accept, reject}},
		// Accepted: the goods' payout waits on the seller's method, and the commission,
		// owed now, on the broker's.
		{"accepted, no method chosen", brokered(funded, shipped, received, accepted), []NextStep{sellerMethod, brokerMethod}},
		{"accepted, the seller chose", brokered(funded, shipped, received, accepted, chose(RoleSeller)), []NextStep{brokerMethod}},
		{"accepted, both chose: the provider pays", brokered(funded, shipped, received, accepted, chose(RoleSeller), chose(RoleBroker)), nil},
		{"seller paid, broker fee owed", brokered(funded, shipped, received, accepted, sellerPaid), []NextStep{brokerMethod}},
		{"seller paid, partner fee owed: no method needed", brokered(partnerFee, funded, shipped, received, accepted, sellerPaid), nil},
		{"everyone paid", brokered(funded, shipped, received, accepted, sellerPaid, brokerPaid), nil},
		{"closed by the API", brokered(funded, shipped, received, accepted, closed), nil},
		{"rejected", brokered(funded, shipped, received, rejected), []NextStep{shipReturn}},
		{"shipped back", brokered(funded, shipped, received, rejected, shippedR), []NextStep{receiveRet}},
		{"received back", brokered(funded, shipped, received, rejected, shippedR, receivedR), []NextStep{acceptRet, rejectRet}},
		{"returned", brokered(funded, shipped, received, rejected, shippedR, receivedR, acceptedR), nil},
		{"in dispute: the provider arbitrates", brokered(funded, shipped, received, rejected, shippedR, receivedR, disputed), nil},
		{"a dispute during the inspection: the buyer waits too", brokered(funded, shipped, received, providerDispute), nil},
		{"cancelled", brokered(cancelled, closed), nil},
		{"every item canceled", brokered(funded, allCanceled), nil},
		{"cancelled before agreement", brokered(unagreed, cancelled), nil},
		{"a hidden seller is named as the reader sees it", brokered(hideSeller, funded), []NextStep{{Role: RoleSeller, Customer: "hidden", Action: NextShip}}},
		// Milestones: each takes its own actions, through the item endpoint.
		{"milestones funded", brokered(milestones, funded), []NextStep{onItem(ship, 20), onItem(ship, 21), onItem(ship, 22)}},
		{"first milestone shipped", brokered(milestones, funded, shipped), []NextStep{onItem(receive, 20), onItem(ship, 21), onItem(ship, 22)}},
		{"first accepted, its payout waits", brokered(milestones, funded, shipped, received, accepted), []NextStep{onItem(ship, 21), onItem(ship, 22), sellerMethod}},
		{"second in inspection", brokered(milestones, funded, shipped, received, accepted, chose(RoleSeller), onMilestone(1, shipped, received)),
			[]NextStep{onItem(accept, 21), onItem(reject, 21), onItem(ship, 22)}},
		{"a dispute leaves the others moving", brokered(milestones, funded, shipped, onMilestone(1, shipped, received, rejected, shippedR, receivedR, disputed)),
			[]NextStep{onItem(receive, 20), onItem(ship, 22)}},
		{"one returned, two accepted and paid, fee owed", brokered(milestones, funded,
			onMilestone(0, shipped, received, rejected, shippedR, receivedR, acceptedR),
			onMilestone(1, shipped, received, accepted, sellerPaid),
			onMilestone(2, shipped, received, accepted, sellerPaid)), []NextStep{brokerMethod}},
		// A milestone canceled on its own asks nothing; the others still move.
		{"one milestone canceled", brokered(milestones, funded, onMilestone(0, itemCanceled)), []NextStep{onItem(ship, 21), onItem(ship, 22)}},
		// Two goods accepted and not paid wait on the same choice: the seller is asked once.
		{"two milestones accepted, none paid", brokered(milestones, funded, shipped, received, accepted, onMilestone(1, shipped, received, accepted)),
			[]NextStep{onItem(ship, 22), sellerMethod}},
		{"nothing visible", &Transaction{}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.tx.NextSteps(); !slices.Equal(got, tc.want) {
				t.Errorf("NextSteps() =\n  %v\nwant\n  %v", got, tc.want)
			}
		})
	}
}

func TestNextStepString(t *testing.T) {
	for _, c := range []struct {
		step NextStep
		want string
	}{
		{NextStep{Role: RoleSeller, Customer: "seller@example.com", Action: NextSelectDisbursementMethod}, "seller@example.com selects a disbursement method"},
		{NextStep{Role: RoleBuyer, Customer: "b@example.com", Action: NextAccept, ItemID: 7}, "b@example.com accepts the goods of item 7"},
		{NextStep{Role: RoleBuyer, Action: NextPay}, "the buyer pays"},
		{NextStep{Role: RoleSeller, Customer: "hidden", Action: NextShip}, "the seller ships the goods"},
		{NextStep{Role: RoleBuyer, Customer: "b@example.com", Action: "appeal"}, "b@example.com does appeal"},
	} {
		if got := c.step.String(); got != c.want {
			t.Errorf("String() = %q, want %q", got, c.want)
		}
	}
	for a, want := range map[NextAction]bool{NextShip: true, NextAcceptReturn: true, NextPay: false, NextSelectDisbursementMethod: false} {
		if got, ok := a.Action(); ok != want || (ok && string(got) != string(a)) {
			t.Errorf("%s.Action() = %q, %v", a, got, ok)
		}
	}
}

// TestEveryNextActionReadsAsAPhrase: each next action says what it asks for in words, after
// the customer's address ("ships the goods"), not as the API's action name.
func TestEveryNextActionReadsAsAPhrase(t *testing.T) {
	for a, want := range map[NextAction]string{
		NextAgree: "agrees to the terms", NextPay: "pays", NextShip: "ships the goods",
		NextReceive: "marks the goods received", NextAccept: "accepts the goods", NextReject: "rejects the goods",
		NextShipReturn: "ships the rejected goods back", NextReceiveReturn: "marks the returned goods received",
		NextAcceptReturn: "accepts the returned goods", NextRejectReturn: "rejects the returned goods",
		NextSelectDisbursementMethod: "selects a disbursement method",
	} {
		if got := a.Phrase(); got != want {
			t.Errorf("%s.Phrase() = %q, want %q", a, got, want)
		}
	}
}

// TestNextStepListPrintsEachStep: a list of next steps prints as sentences separated by
// "; ", not run together as fmt prints a slice, and an empty one prints "none".
func TestNextStepListPrintsEachStep(t *testing.T) {
	steps := NextStepList{
		{Role: RoleBuyer, Customer: "buyer@example.com", Action: NextAgree},
		{Role: RoleSeller, Customer: "hidden", Action: NextShip, ItemID: 7},
	}
	if got, want := fmt.Sprint(steps), "buyer@example.com agrees to the terms; the seller ships the goods of item 7"; got != want {
		t.Errorf("fmt.Sprint = %q, want %q", got, want)
	}
	if got := fmt.Sprint((&Transaction{IsCancelled: true}).NextSteps()); got != "none" {
		t.Errorf("no steps print %q, want none", got)
	}
}

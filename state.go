package escrow

// The API names no transaction-level state (spec part 3 shows only item flags, schedule
// flags and the partner filter values), so this file derives one from what every reader
// can see. It is the one place lifecycle facts are derived: the CLI, the webhook package
// and the examples call these methods rather than reading the flags themselves.

// TransactionState is where a transaction, or one of its items, stands. It is an open
// string type like the API's enums, so that states added later can be told apart.
type TransactionState string

// The states, in the order a sale goes through them; the return path and the ends follow.
const (
	// StateAwaitingAgreement: a party has not agreed to the terms.
	StateAwaitingAgreement TransactionState = "awaiting_agreement"
	// StateAwaitingPayment: everyone agreed; the buyer's funds have not all arrived.
	StateAwaitingPayment TransactionState = "awaiting_payment"
	// StateFunded: the funds are in escrow and the goods (or, for a milestone contract,
	// the next milestone) await shipment.
	StateFunded TransactionState = "funded"
	// StateShipped: the seller shipped; the buyer has not received.
	StateShipped TransactionState = "shipped"
	// StateInInspection: the buyer received the goods and the inspection period runs.
	StateInInspection TransactionState = "in_inspection"
	// StateAccepted: every good is accepted (or returned), and money owed to the seller
	// for an accepted good has not all been paid out.
	StateAccepted TransactionState = "accepted"
	// StateReturning: the buyer rejected the goods, and they are on their way back or in
	// the seller's return inspection.
	StateReturning TransactionState = "returning"
	// StateReturned: an item is back with the seller and its funds go back to the buyer.
	// Only items are in this state; a transaction whose goods are all returned is complete.
	StateReturned TransactionState = "returned"
	// StateInDispute: the seller rejected returned goods; the provider arbitrates.
	StateInDispute TransactionState = "in_dispute"
	// StateDisbursed: the seller has been paid for the goods, but a fee item's money (a
	// broker commission, a partner fee) has not all gone out, so the transaction is open.
	StateDisbursed TransactionState = "disbursed"
	// StateComplete: closed, with every payment made.
	StateComplete TransactionState = "complete"
	// StateCancelled: cancelled; funds already secured go back to the buyer.
	StateCancelled TransactionState = "cancelled"
)

// State returns where the transaction stands: cancelled and complete first, then
// agreement, then funding, then the goods. A dispute on any good stands for the whole;
// otherwise the state is that of the good furthest along among those not yet accepted or
// returned (a milestone contract is where its current milestone is); once every good is
// settled, whether the money has gone out.
//
// The answer is as good as what the reader sees: a broker fee hidden from the reader
// cannot keep it from reading complete. Partner reads, which show everything and the
// close date, are exact.
func (t *Transaction) State() TransactionState {
	switch {
	case t.Cancelled():
		return StateCancelled
	case t.Completed():
		return StateComplete
	case !t.AllAgreed():
		return StateAwaitingAgreement
	case !t.Funded():
		return StateAwaitingPayment
	}
	// The states of a good not yet settled, in the order a good goes through them.
	unsettled := [...]TransactionState{StateFunded, StateShipped, StateInInspection, StateReturning}
	current, goodsPaid := -1, true
	for i := range t.Items {
		it := &t.Items[i]
		if !it.Type.Transferable() {
			continue
		}
		s := it.State()
		if s == StateInDispute {
			return StateInDispute
		}
		for rank, u := range unsettled {
			if s == u {
				current = max(current, rank)
			}
		}
		goodsPaid = goodsPaid && (s != StateAccepted)
	}
	switch {
	case current >= 0:
		return unsettled[current]
	case !t.settled():
		return StateFunded // this reader sees no good: nothing to say beyond funding
	case goodsPaid:
		return StateDisbursed
	}
	return StateAccepted
}

// AllAgreed reports whether every party the reader sees has agreed.
func (t *Transaction) AllAgreed() bool {
	for _, p := range t.Parties {
		if !p.Agreed {
			return false
		}
	}
	return len(t.Parties) > 0
}

// Funded reports whether every schedule entry of every item is secured: the buyer's funds
// are in escrow.
func (t *Transaction) Funded() bool {
	n := 0
	for i := range t.Items {
		for _, s := range t.Items[i].Schedule {
			if !s.Status.Secured {
				return false
			}
			n++
		}
	}
	return n > 0
}

// Completed reports whether the transaction is closed with every payment made: it is not
// cancelled, and it has a close date, or every good is accepted or returned and every
// payment then owed (the goods accepted, and the fee items once a good is accepted) has
// been paid out. A fee item not yet paid out (a commission the seller pays the broker, say)
// keeps it open.
func (t *Transaction) Completed() bool {
	if t.Cancelled() {
		return false
	}
	if !t.CloseDate.IsZero() {
		return true
	}
	if !t.settled() {
		return false
	}
	accepted := t.anyAccepted()
	for i := range t.Items {
		it := &t.Items[i]
		owed := it.Status.Accepted || (!it.Type.Transferable() && accepted)
		if owed && !it.Disbursed() {
			return false
		}
	}
	return true
}

// Cancelled reports whether the transaction was cancelled: is_cancelled, or every good
// marked canceled.
func (t *Transaction) Cancelled() bool {
	if t.IsCancelled {
		return true
	}
	goods := 0
	for i := range t.Items {
		if it := &t.Items[i]; it.Type.Transferable() {
			if !it.Status.Canceled {
				return false
			}
			goods++
		}
	}
	return goods > 0
}

// settled reports whether the reader sees at least one good and every good is accepted or
// returned: nothing is left to ship, inspect or dispute.
func (t *Transaction) settled() bool {
	goods := 0
	for i := range t.Items {
		it := &t.Items[i]
		if !it.Type.Transferable() {
			continue
		}
		if s := it.Status; !(s.Accepted || s.AcceptedReturned) || s.InDispute {
			return false
		}
		goods++
	}
	return goods > 0
}

func (t *Transaction) anyAccepted() bool {
	for i := range t.Items {
		if it := &t.Items[i]; it.Type.Transferable() && it.Status.Accepted {
			return true
		}
	}
	return false
}

// State returns where one item stands, from its latest status flag. An item does not know
// whether the parties agreed: one whose schedule is not all secured is awaiting payment.
// A fee item has no status flags of its own: it is funded, then disbursed.
func (it *Item) State() TransactionState {
	s := it.Status
	switch {
	case s.Canceled:
		return StateCancelled
	case !it.Type.Transferable() && it.Disbursed():
		return StateDisbursed
	case s.InDispute || s.RejectedReturned:
		return StateInDispute
	case s.AcceptedReturned:
		return StateReturned
	case s.Rejected || s.ShippedReturned || s.ReceivedReturned:
		return StateReturning
	case s.Accepted && it.Disbursed():
		return StateDisbursed
	case s.Accepted:
		return StateAccepted
	case s.Received:
		return StateInInspection
	case s.Shipped:
		return StateShipped
	case it.Funded():
		return StateFunded
	}
	return StateAwaitingPayment
}

// Funded reports whether every schedule entry of the item is secured.
func (it *Item) Funded() bool {
	for _, s := range it.Schedule {
		if !s.Status.Secured {
			return false
		}
	}
	return len(it.Schedule) > 0
}

// Disbursed reports whether every schedule entry of the item has been paid out to its
// beneficiary.
func (it *Item) Disbursed() bool {
	for _, s := range it.Schedule {
		if !s.Status.DisbursedToBeneficiary {
			return false
		}
	}
	return len(it.Schedule) > 0
}

// Cancelled reports whether the item is marked canceled.
func (it *Item) Cancelled() bool { return it.Status.Canceled }

// Totals are a transaction's sums of money as the reader sees them, exact.
type Totals struct {
	// Items is the price of the goods: the schedules of the transferable items.
	Items Amount
	// Fees is every fee: the fee entries (escrow, payment and disbursement fees) and the
	// schedules of fee items (broker_fee, partner_fee, shipping_fee).
	Fees Amount
	// EscrowFee is the escrow fee entries, part of Fees.
	EscrowFee Amount
	// BrokerFee is the broker_fee items' schedules, part of Fees.
	BrokerFee Amount
	// Total is Items plus Fees: every schedule and every fee entry.
	Total Amount
	// Secured is what has been funded; Disbursed what has been paid out to beneficiaries.
	Secured, Disbursed Amount
	// Customers holds what each customer pays and receives, keyed as the transaction
	// names them: an e-mail address, "me" for the reader, or "hidden" for parties hidden
	// from the reader (who then share one entry).
	Customers map[string]PartyTotals
}

// Of returns what a customer, named as the transaction names it, pays and receives; zero
// amounts for a customer who does neither.
func (t Totals) Of(customer string) PartyTotals { return t.Customers[customer] }

// PartyTotals are what one customer pays into and receives from a transaction.
type PartyTotals struct {
	// Items is what the customer pays for goods (the buyer's price).
	Items Amount
	// Fees is the fees the customer pays: fee entries and fee items' schedules, such as a
	// seller's broker commission, which comes out of the seller's proceeds.
	Fees Amount
	// Receives is what is paid to the customer: the price of the goods for the seller,
	// a commission for the broker.
	Receives Amount
}

// Pays is everything the customer pays: Items plus Fees.
func (p PartyTotals) Pays() Amount { return p.Items.Add(p.Fees) }

// Net is what the customer gains (negative: spends) once everything is paid out.
func (p PartyTotals) Net() Amount { return p.Receives.Sub(p.Pays()) }

// Totals adds up the transaction's schedules and fees, in total and per customer.
func (t *Transaction) Totals() Totals {
	tot := Totals{Customers: map[string]PartyTotals{}}
	add := func(customer string, f func(*PartyTotals)) {
		if customer == "" {
			return
		}
		p := tot.Customers[customer]
		f(&p)
		tot.Customers[customer] = p
	}
	for i := range t.Items {
		it := &t.Items[i]
		goods := it.Type.Transferable()
		for _, s := range it.Schedule {
			amount := s.Amount
			if goods {
				tot.Items = tot.Items.Add(amount)
				add(s.PayerCustomer, func(p *PartyTotals) { p.Items = p.Items.Add(amount) })
			} else {
				tot.Fees = tot.Fees.Add(amount)
				if it.Type == ItemBrokerFee {
					tot.BrokerFee = tot.BrokerFee.Add(amount)
				}
				add(s.PayerCustomer, func(p *PartyTotals) { p.Fees = p.Fees.Add(amount) })
			}
			add(s.BeneficiaryCustomer, func(p *PartyTotals) { p.Receives = p.Receives.Add(amount) })
			if s.Status.Secured {
				tot.Secured = tot.Secured.Add(amount)
			}
			if s.Status.DisbursedToBeneficiary {
				tot.Disbursed = tot.Disbursed.Add(amount)
			}
		}
		for _, f := range it.Fees {
			amount := f.Amount
			tot.Fees = tot.Fees.Add(amount)
			if f.Type == FeeEscrow {
				tot.EscrowFee = tot.EscrowFee.Add(amount)
			}
			add(f.PayerCustomer, func(p *PartyTotals) { p.Fees = p.Fees.Add(amount) })
		}
	}
	tot.Total = tot.Items.Add(tot.Fees)
	return tot
}

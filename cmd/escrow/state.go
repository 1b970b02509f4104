package main

import (
	"slices"

	escrow "github.com/escrowkit/escrow-go"
	"github.com/shopspring/decimal"
)

// state is where a transaction stands. The API names no transaction-level state (spec part
// 3 shows only item flags, schedule flags and the partner filter values), so the CLI
// derives one from what every reader can see.
type state string

// The derived states, in the order a sale goes through them; the return path and the
// ends follow.
const (
	stateAwaitingAgreement state = "awaiting_agreement"
	stateAwaitingPayment   state = "awaiting_payment"
	stateAwaitingShipment  state = "awaiting_shipment"
	stateShipped           state = "shipped"
	stateInspection        state = "in_inspection"
	stateRejected          state = "rejected"
	stateReturnShipped     state = "return_shipped"
	stateReturnInspection  state = "return_inspection"
	stateAccepted          state = "accepted"  // every good settled, money not all paid out
	stateDisbursed         state = "disbursed" // every good's money paid out, not yet closed
	stateReturned          state = "returned"
	stateInDispute         state = "in_dispute"
	stateComplete          state = "complete"
	stateCancelled         state = "cancelled"
)

// deriveState reads a transaction's state from its flags: cancelled and closed first, then
// agreement, then funding, then the goods. A dispute on any good stands for the whole; else
// the state is that of the good furthest along among those not yet settled (a milestone
// contract is where its current milestone is), and once every good is accepted or
// returned, whether the money has gone out.
func deriveState(tx *escrow.Transaction) state {
	switch {
	case tx.IsCancelled:
		return stateCancelled
	case !tx.CloseDate.IsZero():
		return stateComplete
	}
	for _, p := range tx.Parties {
		if !p.Agreed {
			return stateAwaitingAgreement
		}
	}
	// The states of a good not yet settled, in the order a good goes through them.
	unsettled := []state{stateAwaitingShipment, stateShipped, stateInspection, stateRejected, stateReturnShipped, stateReturnInspection}
	current, goods, accepted, paidOut := -1, 0, false, true
	for _, it := range tx.Items {
		if it.Status.Canceled {
			return stateCancelled
		}
		if !it.Type.Transferable() {
			continue
		}
		goods++
		s := itemState(it.Status)
		for _, sch := range it.Schedule {
			if !sch.Status.Secured {
				return stateAwaitingPayment
			}
			paidOut = paidOut && (sch.Status.DisbursedToBeneficiary || s != stateAccepted)
		}
		if s == stateInDispute {
			return stateInDispute
		}
		accepted = accepted || s == stateAccepted
		current = max(current, slices.Index(unsettled, s))
	}
	switch {
	case goods == 0:
		return stateAwaitingPayment // this reader sees no good: nothing to say beyond agreement
	case current >= 0:
		return unsettled[current]
	case !accepted:
		return stateReturned
	case paidOut:
		return stateDisbursed
	}
	return stateAccepted
}

// itemState is the state of one good, from its latest flag.
func itemState(s escrow.ItemStatus) state {
	switch {
	case s.Canceled:
		return stateCancelled
	case s.InDispute || s.RejectedReturned:
		return stateInDispute
	case s.AcceptedReturned:
		return stateReturned
	case s.ReceivedReturned:
		return stateReturnInspection
	case s.ShippedReturned:
		return stateReturnShipped
	case s.Rejected:
		return stateRejected
	case s.Accepted:
		return stateAccepted
	case s.Received:
		return stateInspection
	case s.Shipped:
		return stateShipped
	}
	return stateAwaitingShipment
}

// amounts are a transaction's sums of money, exact, as the caller sees them.
type amounts struct {
	Items     escrow.Amount // the goods' schedules
	BrokerFee escrow.Amount // broker_fee items' schedules
	EscrowFee escrow.Amount // escrow fee entries
	Total     escrow.Amount // every schedule and every fee: what the buyer and seller move
	Secured   escrow.Amount // schedules funded
	Disbursed escrow.Amount // schedules paid out to their beneficiaries
}

// sumAmounts adds up a transaction's schedules and fees with decimal arithmetic, never
// float64, so the totals match the cents the API shows.
func sumAmounts(tx *escrow.Transaction) amounts {
	var items, broker, fee, total, secured, disbursed decimal.Decimal
	for _, it := range tx.Items {
		for _, s := range it.Schedule {
			total = total.Add(s.Amount.Decimal)
			switch {
			case it.Type.Transferable():
				items = items.Add(s.Amount.Decimal)
			case it.Type == escrow.ItemBrokerFee:
				broker = broker.Add(s.Amount.Decimal)
			}
			if s.Status.Secured {
				secured = secured.Add(s.Amount.Decimal)
			}
			if s.Status.DisbursedToBeneficiary {
				disbursed = disbursed.Add(s.Amount.Decimal)
			}
		}
		for _, f := range it.Fees {
			total = total.Add(f.Amount.Decimal)
			if f.Type == escrow.FeeEscrow {
				fee = fee.Add(f.Amount.Decimal)
			}
		}
	}
	return amounts{
		Items: escrow.AmountOf(items), BrokerFee: escrow.AmountOf(broker), EscrowFee: escrow.AmountOf(fee),
		Total: escrow.AmountOf(total), Secured: escrow.AmountOf(secured), Disbursed: escrow.AmountOf(disbursed),
	}
}

// shares are what one customer pays into and receives from a transaction.
type shares struct {
	Pays     escrow.Amount // the schedules and the fees the customer pays
	Receives escrow.Amount // the schedules paid to the customer
}

// Net is what the customer gains (negative: spends) once everything is paid out.
func (s shares) Net() escrow.Amount {
	return escrow.AmountOf(s.Receives.Sub(s.Pays.Decimal))
}

// sharesOf sums the schedules and fees whose payer or beneficiary is customer, as the
// transaction names it (an e-mail address, or "me" for the reader).
func sharesOf(tx *escrow.Transaction, customer string) shares {
	var pays, gets decimal.Decimal
	for _, it := range tx.Items {
		for _, s := range it.Schedule {
			if s.PayerCustomer == customer {
				pays = pays.Add(s.Amount.Decimal)
			}
			if s.BeneficiaryCustomer == customer {
				gets = gets.Add(s.Amount.Decimal)
			}
		}
		for _, f := range it.Fees {
			if f.PayerCustomer == customer {
				pays = pays.Add(f.Amount.Decimal)
			}
		}
	}
	return shares{Pays: escrow.AmountOf(pays), Receives: escrow.AmountOf(gets)}
}

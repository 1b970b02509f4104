package escrowtest

import "slices"

// The product's words for where a transaction, or one of its items, stands: the values of
// escrow.TransactionState, which the SDK derives from what a reader is shown. The emulator
// derives the same words from its own state (it does not import the SDK); the SDK's
// contract test drives sales, cancels and returns through both and compares them at every
// step, and compares this vocabulary with the SDK's constants, so the two cannot drift.
//
// The API's own coarse words, which its error bodies carry ("cannot ship: transaction …
// is awaiting_payment"), are a transaction's phase and an item's phase: Progress.Phase and
// GoodState.Phase.

// The states, in the order a sale goes through them; the return path and the ends follow.
const (
	stateAwaitingAgreement = "awaiting_agreement"
	stateAwaitingPayment   = "awaiting_payment"
	stateFunded            = "funded"
	stateShipped           = "shipped"
	stateInInspection      = "in_inspection"
	stateAccepted          = "accepted"
	stateReturning         = "returning"
	stateReturned          = "returned"
	stateInDispute         = "in_dispute"
	stateDisbursed         = "disbursed"
	stateComplete          = "complete"
	stateCancelled         = "cancelled"
)

// transactionStates is the vocabulary in lifecycle order: what Progress.State and
// GoodState.State take, and what the control API's ?state= filter offers.
var transactionStates = []string{
	stateAwaitingAgreement, stateAwaitingPayment, stateFunded, stateShipped, stateInInspection,
	stateAccepted, stateReturning, stateReturned, stateInDispute, stateDisbursed,
	stateComplete, stateCancelled,
}

// openGoodsStates are the states of a good not yet settled, in the order a good goes
// through them: a transaction stands where its good furthest along among them stands.
var openGoodsStates = []string{stateFunded, stateShipped, stateInInspection, stateReturning}

// state is where the transaction stands: cancelled and complete first, then agreement,
// then funding, then the goods. A dispute on any good stands for the whole; otherwise the
// state is that of the good furthest along among those not yet settled (a milestone
// contract is where its current milestone is); once every good is accepted or returned,
// accepted while money owed for an accepted good has not all gone out, else disbursed (a
// fee item keeps it open). The lock is held.
func (t *transaction) state() string {
	if p := t.phase(); p != stateFunded {
		return p // the phases before and after the goods are states too
	}
	current, goodsPaid := -1, true
	for _, it := range t.goods() {
		s := it.state(t)
		if s == stateInDispute {
			return stateInDispute
		}
		current = max(current, slices.Index(openGoodsStates, s))
		goodsPaid = goodsPaid && s != stateAccepted
	}
	switch {
	case current >= 0:
		return openGoodsStates[current]
	case !t.settled():
		return stateFunded
	case goodsPaid:
		return stateDisbursed
	}
	return stateAccepted
}

// settled reports whether the transaction has goods and each is accepted or returned,
// none in dispute.
func (t *transaction) settled() bool {
	goods := t.goods()
	return len(goods) > 0 && !slices.ContainsFunc(goods, func(it *item) bool {
		return it.flags&(flagAccepted|flagAcceptedReturned) == 0 || it.flags&flagInDispute != 0
	})
}

// state is where the item stands: cancelled, a fee item paid out, in dispute, or where
// its latest flag put it (itemStates), an accepted good whose money went out being
// disbursed; else funded, or awaiting agreement or payment as its transaction is.
func (it *item) state(t *transaction) string {
	switch {
	case it.flags&flagCanceled != 0:
		return stateCancelled
	case !transferable(it.typ) && it.disbursed():
		return stateDisbursed
	case it.flags&flagInDispute != 0:
		return stateInDispute
	}
	if s, ok := latestFlag(it.flags); ok {
		if s.state == stateAccepted && it.disbursed() {
			return stateDisbursed
		}
		return s.state
	}
	return it.stateBeforeGoods(t)
}

// stateBeforeGoods is the state of an item no flag has moved yet: funded, or awaiting
// agreement or payment as its transaction is.
func (it *item) stateBeforeGoods(t *transaction) string {
	switch {
	case it.secured():
		return stateFunded
	case !t.allAgreed():
		return stateAwaitingAgreement
	}
	return stateAwaitingPayment
}

// latestFlag is the row of itemStates of the latest flag the item shows; ok is false when
// it shows none.
func latestFlag(flags itemFlag) (itemState, bool) {
	for _, s := range slices.Backward(itemStates) {
		if flags&s.flag != 0 {
			return s, true
		}
	}
	return itemState{}, false
}

// secured reports whether every schedule entry of the item is covered by money in escrow.
func (it *item) secured() bool {
	return len(it.schedule) > 0 && !slices.ContainsFunc(it.schedule, func(s *schedule) bool { return !s.secured })
}

// disbursed reports whether every schedule entry of the item has been paid out to its
// beneficiary.
func (it *item) disbursed() bool {
	return len(it.schedule) > 0 && !slices.ContainsFunc(it.schedule, func(s *schedule) bool { return !s.disbursed })
}

// phase is the transaction's state as the API's error bodies name it: awaiting_agreement,
// awaiting_payment, funded, complete or cancelled.
func (t *transaction) phase() string {
	switch {
	case t.cancelled:
		return stateCancelled
	case t.completed:
		return stateComplete
	case !t.allAgreed():
		return stateAwaitingAgreement
	case !t.funded:
		return stateAwaitingPayment
	}
	return stateFunded
}

// phase is the item's state as error bodies name it: its latest flag, or
// "awaiting_shipment" once funded, or its transaction's phase.
func (it *item) phase(t *transaction) string {
	if s, ok := latestFlag(it.flags); ok {
		return s.name
	}
	if t.funded && !t.isClosed() {
		return "awaiting_shipment"
	}
	return t.phase()
}

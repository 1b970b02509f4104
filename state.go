package escrow

import (
	"fmt"
	"slices"
	"strings"
)

// The API names no transaction-level state (spec part 3 shows only item flags, schedule
// flags and the partner filter values), so this file derives one from what every reader
// can see. It is the one place lifecycle facts are derived: the CLI, the webhook package
// and the examples call these methods rather than reading the flags themselves.

// TransactionState is where a transaction, or one of its items, stands. It is an open
// string type like the API's enums, so that states added later can be told apart. Its
// values are the product's one vocabulary: the emulator (escrowtest's Progress.State and
// GoodState.State), its page and control API, and the CLI name states with them; the
// API's coarser words, which its error bodies carry, are the emulator's Progress.Phase.
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
	return t.goodsState()
}

// unsettledStates are the states of a good not yet settled, in the order a good goes
// through them.
var unsettledStates = []TransactionState{StateFunded, StateShipped, StateInInspection, StateReturning}

// goodsState is the state of a funded transaction, read from its goods: in dispute if any
// good is, else the furthest along of the goods not yet settled, else whether the goods
// have been paid for.
func (t *Transaction) goodsState() TransactionState {
	furthest, goodsPaid := -1, true
	for i := range t.Items {
		it := &t.Items[i]
		if !it.Type.Transferable() {
			continue
		}
		s := it.State()
		if s == StateInDispute {
			return StateInDispute
		}
		furthest = max(furthest, slices.Index(unsettledStates, s))
		goodsPaid = goodsPaid && (s != StateAccepted)
	}
	switch {
	case furthest >= 0:
		return unsettledStates[furthest]
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
	switch {
	case t.Cancelled():
		return false
	case !t.CloseDate.IsZero():
		return true
	}
	return t.settled() && t.owedPaidOut()
}

// owedPaidOut reports whether every payment owed has been paid out: the goods accepted,
// and the fee items once a good is accepted.
func (t *Transaction) owedPaidOut() bool {
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

// State returns where one item stands: cancelled, in dispute, or where the latest action
// whose flag it shows put it (the action table, actions.go); else funded or awaiting
// payment. An item does not know
// whether the parties agreed: one whose schedule is not all secured is awaiting payment.
// A fee item has no status flags of its own: it is funded, then disbursed.
func (it *Item) State() TransactionState {
	s := it.Status
	switch {
	case s.Canceled:
		return StateCancelled
	case !it.Type.Transferable() && it.Disbursed():
		return StateDisbursed
	case s.InDispute: // the provider may open a dispute without an action of the parties
		return StateInDispute
	}
	if state, ok := it.actionState(); ok {
		return state
	}
	if it.Funded() {
		return StateFunded
	}
	return StateAwaitingPayment
}

// actionState is where the item's latest action put it (the action table, actions.go),
// except that an accepted item whose money has gone out is disbursed; false when no
// action has been taken on it.
func (it *Item) actionState() (TransactionState, bool) {
	state, ok := latestItemState(it.Status)
	if ok && state == StateAccepted && it.Disbursed() {
		return StateDisbursed, true
	}
	return state, ok
}

// ItemState is the state of one of the transaction's items, knowing what the item alone
// does not: before every party agreed, an item not yet funded awaits agreement, as its
// transaction does, rather than payment.
func (t *Transaction) ItemState(it *Item) TransactionState {
	s := it.State()
	if s == StateAwaitingPayment && !t.AllAgreed() {
		return StateAwaitingAgreement
	}
	return s
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
	for i := range t.Items {
		it := &t.Items[i]
		for _, s := range it.Schedule {
			tot.addSchedule(it.Type, s)
		}
		for _, f := range it.Fees {
			tot.addFee(f)
		}
	}
	tot.Total = tot.Items.Add(tot.Fees)
	return tot
}

// addSchedule counts one schedule entry of an item of the given type: the price of goods,
// or a fee for a fee item; paid by its payer to its beneficiary.
func (tot *Totals) addSchedule(typ ItemType, s Schedule) {
	amount := s.Amount
	if typ.Transferable() {
		tot.Items = tot.Items.Add(amount)
		tot.addTo(s.PayerCustomer, func(p *PartyTotals) { p.Items = p.Items.Add(amount) })
	} else {
		tot.Fees = tot.Fees.Add(amount)
		if typ == ItemBrokerFee {
			tot.BrokerFee = tot.BrokerFee.Add(amount)
		}
		tot.addTo(s.PayerCustomer, func(p *PartyTotals) { p.Fees = p.Fees.Add(amount) })
	}
	tot.addTo(s.BeneficiaryCustomer, func(p *PartyTotals) { p.Receives = p.Receives.Add(amount) })
	if s.Status.Secured {
		tot.Secured = tot.Secured.Add(amount)
	}
	if s.Status.DisbursedToBeneficiary {
		tot.Disbursed = tot.Disbursed.Add(amount)
	}
}

// addFee counts one fee entry, paid by its payer.
func (tot *Totals) addFee(f Fee) {
	tot.Fees = tot.Fees.Add(f.Amount)
	if f.Type == FeeEscrow {
		tot.EscrowFee = tot.EscrowFee.Add(f.Amount)
	}
	tot.addTo(f.PayerCustomer, func(p *PartyTotals) { p.Fees = p.Fees.Add(f.Amount) })
}

// addTo changes one customer's totals; an entry that names no customer counts only in
// the transaction's.
func (tot *Totals) addTo(customer string, change func(*PartyTotals)) {
	if customer == "" {
		return
	}
	p := tot.Customers[customer]
	change(&p)
	tot.Customers[customer] = p
}

// NextAction is what a party must do for a transaction to move on: one of the API's
// actions (the names PATCH takes), or NextPay or NextSelectDisbursementMethod, which are
// done through the payment and disbursement endpoints. It is an open string type like
// the API's enums.
type NextAction string

// Next actions, in the order a sale and its return path go through them.
const (
	NextAgree                    NextAction = "agree"
	NextPay                      NextAction = "pay"
	NextShip                     NextAction = "ship"
	NextReceive                  NextAction = "receive"
	NextAccept                   NextAction = "accept"
	NextReject                   NextAction = "reject"
	NextShipReturn               NextAction = "ship_return"
	NextReceiveReturn            NextAction = "receive_return"
	NextAcceptReturn             NextAction = "accept_return"
	NextRejectReturn             NextAction = "reject_return"
	NextSelectDisbursementMethod NextAction = "select_disbursement_method"
)

// nextActionPhrases say what each next action asks for, after the customer's address.
var nextActionPhrases = map[NextAction]string{
	NextAgree:                    "agrees to the terms",
	NextPay:                      "pays",
	NextShip:                     "ships the goods",
	NextReceive:                  "marks the goods received",
	NextAccept:                   "accepts the goods",
	NextReject:                   "rejects the goods",
	NextShipReturn:               "ships the rejected goods back",
	NextReceiveReturn:            "marks the returned goods received",
	NextAcceptReturn:             "accepts the returned goods",
	NextRejectReturn:             "rejects the returned goods",
	NextSelectDisbursementMethod: "selects a disbursement method",
}

// Phrase says what the action asks for, in the third person ("ships the goods").
func (a NextAction) Phrase() string {
	if p, ok := nextActionPhrases[a]; ok {
		return p
	}
	return "does " + string(a)
}

// Action returns the API action to send with PATCH, and false for NextPay and
// NextSelectDisbursementMethod, which have endpoints of their own.
func (a NextAction) Action() (Action, bool) {
	switch a {
	case NextPay, NextSelectDisbursementMethod, "":
		return "", false
	}
	return Action(a), true
}

// NextStep is one thing a party must do for the transaction to move on.
type NextStep struct {
	// Role is the party's role; Customer names it as the transaction does (an e-mail
	// address, "me", or "hidden" when its details are concealed from the reader).
	Role     Role
	Customer string
	Action   NextAction
	// ItemID is the milestone the action is taken on, through the item endpoint (see
	// [TransactionsService.ActOnItem]); 0 when the action is on the whole transaction.
	// A disbursement method is chosen once for the whole transaction, milestones too.
	ItemID int64
}

// String says who must do what: "seller@example.com selects a disbursement method",
// naming the party by its role when the reader is not shown its address ("the seller
// ships the goods").
func (s NextStep) String() string {
	str := s.Customer
	if str == "" || str == "hidden" {
		str = "the " + string(s.Role)
	}
	str += " " + s.Action.Phrase()
	if s.ItemID != 0 {
		str += fmt.Sprintf(" of item %d", s.ItemID)
	}
	return str
}

// NextStepList is a list of next steps. It prints them one after another, separated by
// "; " ("buyer@example.com pays"), and "none" when it is empty.
type NextStepList []NextStep

// String says the steps in order, separated by "; ".
func (l NextStepList) String() string {
	if len(l) == 0 {
		return "none"
	}
	parts := make([]string, len(l))
	for i, s := range l {
		parts[i] = s.String()
	}
	return strings.Join(parts, "; ")
}

// NextSteps returns who must do what for the transaction to move on, in the order the
// transaction's parties and items are listed: every party that has not agreed; once all
// agreed, the buyer's payment; once funded, for each good what its state asks for (the
// seller ships, the buyer marks it received, then accepts or rejects it, and on the return
// path the reverse), per item for milestones; and, for a payout owed and not made, the
// beneficiary's choice of a disbursement method when the transaction shows it not made
// (disbursement_method_selected). A step is listed only once what it waits for has
// happened. A closed transaction, or one in dispute (the provider arbitrates), has none;
// so has a payout whose beneficiary has chosen a method: the provider owes the next move.
//
// Like [Transaction.State], the answer is as good as what the reader sees: a party hidden
// from the reader is named "hidden", and a reader that is not shown
// disbursement_method_selected sees a payout wait on a method already chosen.
func (t *Transaction) NextSteps() NextStepList {
	if t.Cancelled() || t.Completed() {
		return nil
	}
	steps := nextStepList{t: t}
	switch {
	case !t.AllAgreed():
		t.agreementSteps(&steps)
	case !t.Funded():
		steps.add(RoleBuyer, NextPay, 0)
	default:
		t.shipmentSteps(&steps)
		t.payoutSteps(&steps)
	}
	return steps.steps
}

// nextStepList gathers a transaction's next steps, each once, in the order they are found.
type nextStepList struct {
	t     *Transaction
	steps NextStepList
}

// add lists the party in the role doing the action, on the item (0: on the transaction).
func (l *nextStepList) add(role Role, action NextAction, itemID int64) {
	s := NextStep{Role: role, Action: action, ItemID: itemID}
	if p, ok := l.t.Party(role); ok {
		s.Customer = p.Customer
	}
	if !slices.Contains(l.steps, s) {
		l.steps = append(l.steps, s)
	}
}

// agreementSteps adds every party that has not agreed.
func (t *Transaction) agreementSteps(steps *nextStepList) {
	for _, p := range t.Parties {
		if !p.Agreed {
			steps.add(p.Role, NextAgree, 0)
		}
	}
}

// shipmentSteps adds what each good still in the sale asks for, on the item for a
// milestone.
func (t *Transaction) shipmentSteps(steps *nextStepList) {
	for i := range t.Items {
		it := &t.Items[i]
		if !it.Type.Transferable() || it.Status.Canceled {
			continue
		}
		var itemID int64
		if it.Type == ItemMilestone {
			itemID = it.ID
		}
		for _, a := range it.goodsSteps() {
			steps.add(a.role, a.action, itemID)
		}
	}
}

// goodsStep is one next action on a good.
type goodsStep struct {
	role   Role
	action NextAction
}

// goodsSteps are the next actions a funded good's flags ask for: the actions of the action
// table (actions.go) that follow its latest flag, by their roles. A good in dispute waits
// on the provider.
func (it *Item) goodsSteps() []goodsStep {
	if it.Status.InDispute {
		return nil
	}
	var latest string // "" until an action on the goods is done: ship follows funding
	if r, ok := latestRule(it.Status); ok {
		latest = r.flag
	}
	var steps []goodsStep
	for _, r := range actionTable {
		if r.flag == "" || r.optional || r.after != latest {
			continue
		}
		for _, role := range r.roles {
			steps = append(steps, goodsStep{role, NextAction(r.action)})
		}
	}
	return steps
}

// payoutSteps adds the disbursement methods that payouts owed and not made wait on: the
// goods once accepted (to the seller), fee items once every good is settled and one was
// accepted (shipping fees to the seller, broker fees to the broker; partner fees need no
// method).
func (t *Transaction) payoutSteps(steps *nextStepList) {
	for _, it := range t.unpaidPayouts() {
		role, ok := payoutRole(it.Type)
		if !ok {
			continue
		}
		if p, ok := t.Party(role); ok && !p.DisbursementMethodSelected {
			steps.add(role, NextSelectDisbursementMethod, 0)
		}
	}
}

// unpaidPayouts are the items whose payout is owed and not made: the goods once accepted,
// the fee items once every good is settled and one was accepted.
func (t *Transaction) unpaidPayouts() []*Item {
	feesOwed := t.settled() && t.anyAccepted()
	var unpaid []*Item
	for i := range t.Items {
		it := &t.Items[i]
		owed := it.Status.Accepted
		if !it.Type.Transferable() {
			owed = feesOwed
		}
		if owed && !it.Status.Canceled && !it.Disbursed() {
			unpaid = append(unpaid, it)
		}
	}
	return unpaid
}

// payoutRole is the role that receives an item's payout and so chooses its disbursement
// method: the broker for a broker fee, the seller otherwise; false for a partner fee,
// which needs no method.
func payoutRole(typ ItemType) (Role, bool) {
	switch typ {
	case ItemBrokerFee:
		return RoleBroker, true
	case ItemPartnerFee:
		return "", false
	}
	return RoleSeller, true
}

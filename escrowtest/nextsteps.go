package escrowtest

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
)

// Who must do what next, as the emulator knows it. The SDK derives the same from what a
// reader is shown (escrow's Transaction.NextSteps); this is the emulator's own derivation,
// from its state and its table of actions, so that a test can check one against the other,
// and so that a test waiting for a sale to complete can fail with the reason rather than
// a timeout.

// NextStep is one thing a party must do for a transaction to move on.
type NextStep struct {
	// Role is the party's role: buyer, seller, broker or partner.
	Role string `json:"role"`
	// Customer is the party's e-mail address.
	Customer string `json:"customer"`
	// Action is an API action name (agree, ship, receive, accept, reject, ship_return,
	// receive_return, accept_return, reject_return), "pay" (the buyer's funds have not
	// arrived) or "select_disbursement_method" (a payout waits on it).
	Action string `json:"action"`
	// ItemID is the milestone the action is taken on, through the item endpoint; 0 when
	// it is taken on the whole transaction.
	ItemID int64 `json:"item_id,omitempty"`
	// AutoAt is when the emulator takes the step itself if nobody does: the end of an
	// inspection period (accept) or of a return inspection (accept_return); zero
	// otherwise.
	AutoAt time.Time `json:"auto_at,omitzero"`
}

// stepPhrases say what the next steps that are no action ask for, after the customer's
// address; an action's own is in its row of lifecycle (next).
var stepPhrases = map[string]string{
	"pay":                        "pays",
	"select_disbursement_method": "selects a disbursement method",
}

// phrase says what a next step asks for; ok is false for a name it does not know.
func phrase(action string) (string, bool) {
	if a, ok := actionNamed(action); ok && a.next != "" {
		return a.next, true
	}
	p, ok := stepPhrases[action]
	return p, ok
}

// String says who must do what: "seller@example.com selects a disbursement method",
// with the item and the time the emulator takes the step itself, if any.
func (s NextStep) String() string {
	words, ok := phrase(s.Action)
	if !ok {
		words = "does " + s.Action
	}
	who := s.Customer
	if who == "" {
		who = "the " + s.Role
	}
	str := who + " " + words
	if s.ItemID != 0 {
		str += fmt.Sprintf(" of item %d", s.ItemID)
	}
	if !s.AutoAt.IsZero() {
		str += " (accepted by itself at " + formatTime(s.AutoAt) + ")"
	}
	return str
}

// ReasonNoDisbursementMethod is the Reason of a payout that waits on its beneficiary's
// choice of a disbursement method.
const ReasonNoDisbursementMethod = "no disbursement method selected"

// ReasonWithheld is the Reason of a fee the seller pays (a broker's commission) that waits
// for the seller's payouts, out of which it is withheld.
const ReasonWithheld = "it waits for the seller's payouts, out of which it is withheld"

// Unpaid is money owed to a beneficiary and not paid out.
type Unpaid struct {
	ItemID   int64  `json:"item_id"`
	Role     string `json:"role"`
	Customer string `json:"customer"`
	Amount   string `json:"amount"`
	// Reason says why it has not gone out.
	Reason string `json:"reason"`
}

// Progress is where a transaction stands, who must act for it to move on, and why money
// owed has not been paid out. Its JSON is the control API's answer.
type Progress struct {
	TransactionID int64 `json:"transaction_id"`
	// State is where the transaction stands, in escrow.TransactionState's words:
	// awaiting_agreement, awaiting_payment, funded, shipped, in_inspection, accepted,
	// returning, in_dispute, disbursed, complete or cancelled; what the SDK's
	// Transaction.State says of it.
	State string `json:"state"`
	// Phase is the API's coarser word for it, which error bodies carry ("cannot ship:
	// transaction … is awaiting_payment"): awaiting_agreement, awaiting_payment, funded,
	// complete or cancelled.
	Phase string `json:"phase"`
	// Steps are who must do what, in the order of the parties and the items; none when
	// the transaction is closed, or in dispute (the provider arbitrates).
	Steps []NextStep `json:"next_steps"`
	// Goods are the transaction's goods (its transferable items) and where each stands.
	Goods []GoodState `json:"goods"`
	// Disbursed is what has been paid out to beneficiaries so far (refunds not counted).
	Disbursed string `json:"disbursed"`
	// Unpaid is every payout owed and not made, with its reason.
	Unpaid []Unpaid `json:"unpaid"`
	// Waiting says in one sentence what the transaction waits for, and why nothing (or
	// not everything) has been paid out; "" once it is closed.
	Waiting string `json:"waiting"`
}

// GoodState is where one of a transaction's goods stands.
type GoodState struct {
	ItemID int64 `json:"item_id"`
	// State is where the good stands, in escrow.TransactionState's words (what the SDK's
	// Transaction.ItemState says of it): funded, shipped, in_inspection, accepted,
	// returning, returned, in_dispute, disbursed, cancelled, or awaiting agreement or
	// payment as its transaction is.
	State string `json:"state"`
	// Phase is where error bodies say it stands: its latest status flag (shipped,
	// received, accepted, …), awaiting_shipment, or its transaction's phase.
	Phase string `json:"phase"`
}

// String is the transaction's id and state, and what it waits for.
func (p Progress) String() string {
	s := fmt.Sprintf("transaction %d is %s", p.TransactionID, p.State)
	if p.Waiting != "" {
		s += ": " + p.Waiting
	}
	return s
}

// NextSteps returns who must do what for a transaction to move on, and why money owed has
// not gone out. It takes the emulator's lock once and reads nothing but the transaction,
// so it is cheap to call for every transaction of a list.
func (e *Emulator) NextSteps(txID int64) (Progress, error) {
	e.lock()
	defer e.mu.Unlock()
	tx := e.st.txs[txID]
	if tx == nil {
		return Progress{}, notFound("no transaction %d", txID)
	}
	return e.progress(tx), nil
}

// disbursed is what the transaction has paid out.
func disbursed(tx *transaction) cents {
	var sum cents
	for _, it := range tx.items {
		for _, s := range it.schedule {
			if s.disbursed {
				sum += s.amount
			}
		}
	}
	return sum
}

// same reports whether two steps are one: the same role's action on the same item.
func (s NextStep) same(o NextStep) bool {
	return o.Role == s.Role && o.Action == s.Action && o.ItemID == s.ItemID
}

// progress derives a transaction's Progress; the lock is held.
func (e *Emulator) progress(tx *transaction) Progress {
	p := Progress{TransactionID: tx.id, State: tx.state(), Phase: tx.phase(), Steps: []NextStep{}, Unpaid: []Unpaid{}, Goods: []GoodState{}}
	for _, it := range tx.goods() {
		p.Goods = append(p.Goods, GoodState{ItemID: it.id, State: it.state(tx), Phase: it.phase(tx)})
	}
	p.Disbursed = disbursed(tx).String()
	if tx.isClosed() {
		return p
	}
	steps := &stepList{e: e, tx: tx}
	add := steps.add
	switch {
	case !tx.allAgreed():
		for _, pt := range tx.parties {
			if !pt.agreed {
				add(pt.role, "agree", 0, time.Time{})
			}
		}
	case !tx.funded:
		add(roleBuyer, "pay", 0, time.Time{})
	default:
		e.goodsSteps(tx, add)
		p.Unpaid = e.unpaid(tx, add)
	}
	p.Steps = append(p.Steps, steps.steps...)
	p.Waiting = waiting(tx, p)
	return p
}

// stepList gathers a transaction's next steps, each once.
type stepList struct {
	e     *Emulator
	tx    *transaction
	steps []NextStep
}

// add adds the step of a role's action, on an item or the whole transaction (itemID 0),
// done automatically at autoAt when not zero, unless it is there already.
func (l *stepList) add(role, action string, itemID int64, autoAt time.Time) {
	s := NextStep{Role: role, Action: action, ItemID: itemID, AutoAt: autoAt}
	if pt := l.tx.party(role); pt != nil {
		s.Customer = l.e.st.accounts[pt.account].email
	}
	if !slices.ContainsFunc(l.steps, s.same) {
		l.steps = append(l.steps, s)
	}
}

// goodsSteps adds, for each good, the actions of the lifecycle table its flags allow and
// the lifecycle waits on, by the roles the table names; milestones are acted on one item at
// a time.
func (e *Emulator) goodsSteps(tx *transaction, add func(role, action string, itemID int64, autoAt time.Time)) {
	perItem := tx.milestone()
	for _, it := range tx.goods() {
		var itemID int64
		if perItem {
			itemID = it.id
		}
		for _, rule := range lifecycle {
			if rule.whole || rule.optional || !rule.allows(it) {
				continue
			}
			autoAt := autoAcceptEnds(it, rule.name)
			for _, role := range rule.roles {
				add(role, rule.name, itemID, autoAt)
			}
		}
	}
}

// autoAcceptEnds is when the inspection period after which the action happens by itself
// ends for an item; zero for an action that never does.
func autoAcceptEnds(it *item, action string) time.Time {
	var at time.Time
	for _, auto := range autoAccepts {
		if auto.action == action {
			at = auto.ends(it)
		}
	}
	return at
}

// owedOn is what the item's schedule still owes: neither paid out nor refunded.
func owedOn(it *item) cents {
	var owed cents
	for _, s := range it.schedule {
		if !s.disbursed && !s.refunded {
			owed += s.amount
		}
	}
	return owed
}

// unpaid lists the payouts owed and not made, and adds the disbursement methods they
// wait on.
func (e *Emulator) unpaid(tx *transaction, add func(role, action string, itemID int64, autoAt time.Time)) []Unpaid {
	out := []Unpaid{}
	for _, it := range tx.items {
		if !due(tx, it) {
			continue
		}
		owed := owedOn(it)
		if owed == 0 {
			continue
		}
		_, role := scheduleRoles(it.typ)
		u := Unpaid{ItemID: it.id, Role: role, Amount: owed.String()}
		if pt := tx.party(role); pt != nil {
			u.Customer = e.st.accounts[pt.account].email
		}
		// A due entry whose beneficiary can be paid is paid at once (disburse), but for a fee
		// the seller pays, which waits for the seller's payouts to withhold it from.
		if !beneficiaryPayable(tx, it) {
			u.Reason = ReasonNoDisbursementMethod
			add(role, "select_disbursement_method", 0, time.Time{})
		} else {
			u.Reason = ReasonWithheld
		}
		out = append(out, u)
	}
	return out
}

// waiting says in one sentence what an open transaction waits for.
func waiting(tx *transaction, p Progress) string {
	var parts []string
	if len(p.Steps) > 0 {
		var who []string
		for _, s := range p.Steps {
			who = append(who, s.String())
		}
		parts = append(parts, "next: "+strings.Join(who, "; "))
	}
	for _, u := range p.Unpaid {
		parts = append(parts, fmt.Sprintf("%s owed to %s (%s) for item %d is not paid out: %s", u.Amount, u.Customer, u.Role, u.ItemID, u.Reason))
	}
	if why := nothingPaidOut(tx, p); why != "" {
		parts = append(parts, why)
	}
	if len(parts) == 0 {
		return idle(tx)
	}
	return strings.Join(parts, "; ")
}

// nothingPaidOut says why nothing is paid out yet: the buyer's funds have not arrived, or
// no good is accepted; "" otherwise.
func nothingPaidOut(tx *transaction, p Progress) string {
	switch {
	case !tx.allAgreed() || !tx.funded:
		return "nothing is paid out before the buyer's funds arrive (ApprovePayment, or 'escrow emulator approve')"
	case len(p.Unpaid) == 0 && p.Disbursed == "0.00" && len(p.Steps) > 0:
		return "nothing is owed to anyone until the buyer accepts the goods or an inspection period ends"
	}
	return ""
}

// idle says why a transaction no party has a step in waits.
func idle(tx *transaction) string {
	for _, it := range tx.goods() {
		if it.flags&flagInDispute != 0 {
			return "the seller rejected the returned goods: the provider arbitrates, and nothing moves until then"
		}
	}
	return "nothing is left for a party to do"
}

// advanceReporting moves the clock forward by d, as Advance does, and returns the
// progress of every transaction the move changed (an inspection period that ended), in
// id order: what `escrow emulator advance` shows.
func (e *Emulator) advanceReporting(d time.Duration) []Progress {
	e.lock()
	before := map[int64]int{}
	for id, tx := range e.st.inspecting {
		before[id] = len(tx.timeline)
	}
	e.mu.Unlock()
	e.Advance(d)
	e.lock()
	defer e.mu.Unlock()
	out := []Progress{}
	for _, id := range slices.Sorted(maps.Keys(before)) {
		if tx := e.st.txs[id]; tx != nil && len(tx.timeline) != before[id] {
			out = append(out, e.progress(tx))
		}
	}
	return out
}

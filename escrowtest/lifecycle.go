package escrowtest

import (
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"time"
)

// itemFlag is one of an item's status booleans (spec part 3).
type itemFlag uint16

const (
	flagShipped itemFlag = 1 << iota
	flagReceived
	flagAccepted
	flagRejected
	flagShippedReturned
	flagReceivedReturned
	flagAcceptedReturned
	flagRejectedReturned
	flagCanceled
	flagInDispute
)

// itemState is a row of itemStates.
type itemState struct {
	flag itemFlag
	// name is the flag's name in the API (ItemStatus), and the item's phase in error
	// bodies once it is the latest flag.
	name string
	// state is where the flag, once the latest, puts the item in the product's words
	// (states.go).
	state string
}

// itemStates names an item's state after the last flag it gained, in lifecycle order.
var itemStates = []itemState{
	{flagShipped, "shipped", stateShipped},
	{flagReceived, "received", stateInInspection},
	{flagAccepted, "accepted", stateAccepted},
	{flagRejected, "rejected", stateReturning},
	{flagShippedReturned, "shipped_returned", stateReturning},
	{flagReceivedReturned, "received_returned", stateReturning},
	{flagAcceptedReturned, "accepted_returned", stateReturned},
	{flagRejectedReturned, "rejected_returned", stateInDispute},
	{flagInDispute, "in_dispute", stateInDispute},
	{flagCanceled, "canceled", stateCancelled},
}

// actionRule is one action of PATCH /transaction/{id} (and its item form): everything
// the emulator knows about it is in its row of lifecycle, and every list of actions is
// derived from that table (actionNames, the As-Customer check, the item state machine,
// what an action blocks, next steps and their sentences, timeline messages, web links,
// fault endpoints, the package comment's table of actions).
type actionRule struct {
	name string
	// roles may perform it; none means any party (agree, and cancel under its own rules).
	roles []string
	// delegable: an approved partner may perform it As-Customer for the party.
	delegable bool
	// whole: it applies to the whole transaction only (agree, cancel), by its own
	// function (wholeActions); otherwise it acts on the goods and the fields below are
	// its rule.
	whole bool
	// Item flags the action requires, forbids and sets: the item state machine.
	requires, excludes, sets itemFlag
	// funded: the transaction must be funded ("ship follows funding").
	funded bool
	// optional: a party may take it, but the lifecycle does not wait on it, so it is no
	// next step (NextSteps lists the others its flags allow).
	optional bool
	// blocks are the actions that an item carrying this action's flags may no longer take;
	// blocking accept also stops the automatic acceptance at the end of an inspection
	// period, which is an accept (autoAccepts).
	blocks []string
	// next says what the action asks of a party as a next step, after the party's address:
	// "ships the goods" (NextStep.String).
	next string
	// needs and effect are the package comment's words for what the action needs and
	// does beyond its flags: the whole-transaction actions' own rules, the periods that
	// start.
	needs, effect string
	// domainAuthorization: domain items need shipping_information.authorization_type.
	domainAuthorization bool
	// message describes the event of the same name in the timeline.
	message string
}

// lifecycle is the table of actions: the spec's list plus accept, accept_return and
// cancel, which the live API takes too, in lifecycle order.
//
// As-Customer: spec part 5 permits agree, ship, receive, reject, ship_return,
// receive_return and reject_return; the live API refuses accept, accept_return and
// reject_return. The emulator permits what both allow, so that nothing passes against it
// and fails in production: reject_return is refused, and cancel, which neither source
// permits (the partner may cancel as itself whenever anyone may), is refused too.
var lifecycle = []actionRule{
	{name: "agree", delegable: true, whole: true, next: "agrees to the terms", needs: "not closed", effect: "the party agreed",
		message: "All parties agreed."},
	{name: "cancel", whole: true, needs: "see Cancel", effect: "every item canceled",
		message: "The transaction was cancelled."},
	{name: "ship", roles: []string{roleSeller}, delegable: true, excludes: flagShipped, sets: flagShipped, funded: true, domainAuthorization: true,
		next: "ships the goods", message: "The seller marked the goods shipped."},
	{name: "receive", roles: []string{roleBuyer}, delegable: true, requires: flagShipped, excludes: flagReceived, sets: flagReceived,
		next: "marks the goods received", effect: "starts the inspection period", message: "The buyer marked the goods received."},
	{name: "accept", roles: []string{roleBuyer}, requires: flagReceived, excludes: flagAccepted | flagRejected, sets: flagAccepted,
		next: "accepts the goods", message: "The buyer accepted the goods."},
	{name: "reject", roles: []string{roleBuyer}, delegable: true, requires: flagReceived, excludes: flagAccepted | flagRejected, sets: flagRejected,
		next: "rejects the goods", message: "The buyer rejected the goods."},
	{name: "ship_return", roles: []string{roleBuyer}, delegable: true, requires: flagRejected, excludes: flagShippedReturned, sets: flagShippedReturned, domainAuthorization: true,
		next: "ships the rejected goods back", message: "The buyer shipped the rejected goods back."},
	{name: "receive_return", roles: []string{roleSeller}, delegable: true, requires: flagShippedReturned, excludes: flagReceivedReturned, sets: flagReceivedReturned,
		next: "marks the returned goods received", effect: "starts a return inspection", message: "The seller received the returned goods."},
	{name: "accept_return", roles: []string{roleSeller}, requires: flagReceivedReturned, excludes: flagAcceptedReturned | flagRejectedReturned, sets: flagAcceptedReturned,
		next: "accepts the returned goods", effect: "funds back to the buyer", message: "The seller accepted the returned goods."},
	{name: "reject_return", roles: []string{roleSeller}, requires: flagReceivedReturned, excludes: flagAcceptedReturned | flagRejectedReturned, sets: flagRejectedReturned | flagInDispute,
		next: "rejects the returned goods", message: "The seller rejected the returned goods; the transaction is in dispute."},
}

// blockedBy is, for each action, the flags of the actions that block it.
var blockedBy = blockers(lifecycle)

// blockers maps each action a table's rows block to the flags those rows set.
func blockers(table []actionRule) map[string]itemFlag {
	m := map[string]itemFlag{}
	for _, a := range table {
		for _, b := range a.blocks {
			m[b] |= a.sets
		}
	}
	return m
}

// wholeActions perform the actions on the whole transaction, whose preconditions are
// their own (see agree and cancel). A map beside the table, because the functions emit
// events whose messages come from the table.
var wholeActions = map[string]func(e *Emulator, tx *transaction, as actor, in actionInput) error{
	"agree":  (*Emulator).agree,
	"cancel": (*Emulator).cancel,
}

// actionNamed returns the row of an action; ok is false for a name not in the table.
func actionNamed(name string) (actionRule, bool) {
	i := slices.IndexFunc(lifecycle, func(a actionRule) bool { return a.name == name })
	if i < 0 {
		return actionRule{}, false
	}
	return lifecycle[i], true
}

// mustAction is actionNamed for the names the emulator itself uses.
func mustAction(name string) actionRule {
	a, ok := actionNamed(name)
	if !ok {
		panic("escrowtest: no action " + name)
	}
	return a
}

// allows reports whether the item's flags permit the action: it has the flags the action
// requires, none it excludes, and none of an action that blocks it.
func (a actionRule) allows(it *item) bool {
	return it.flags&a.requires == a.requires && it.flags&(a.excludes|flagCanceled|blockedBy[a.name]) == 0
}

// actionNames are the actions PATCH accepts, in lifecycle order.
var actionNames = namesOf(lifecycle)

// namesOf names a table's actions, in its order.
func namesOf(table []actionRule) []string {
	var names []string
	for _, a := range table {
		names = append(names, a.name)
	}
	return names
}

// AsCustomerActions returns the actions an approved partner may perform As-Customer for
// a party of its transactions, from the emulator's table of actions (the package
// comment gives the reasons). Payment steps (listing and choosing payment methods,
// marking a wire sent) may be delegated too; they are not actions.
func AsCustomerActions() []string {
	var names []string
	for _, a := range lifecycle {
		if a.delegable {
			names = append(names, a.name)
		}
	}
	return names
}

// Action is one action of PATCH /transaction/{id} as the emulator performs it: a row of
// its own table of actions, for tests that compare it with a client's (the SDK's contract
// test does).
type Action struct {
	// Name is what the request's "action" says: "ship".
	Name string
	// Roles may perform it; none means any party (agree), or rules of its own (cancel).
	Roles []string
	// Event is the webhook event it emits, and its timeline entry.
	Event string
	// Sets are the item status flags it sets, as the API names them ("shipped"); none for
	// the actions on the whole transaction.
	Sets []string
	// Requires are the item status flags it needs ("ship" needs none, but funding).
	Requires []string
	// Blocks are the actions an item it was taken on may no longer take ("accept" also
	// stops the automatic acceptance).
	Blocks []string
	// Optional: the lifecycle does not wait on it, so it is no next step.
	Optional bool
	// Delegable: an approved partner may perform it As-Customer for a party.
	Delegable bool
	// Next says what it asks of a party as a next step, after the party's address ("ships
	// the goods"); "" for cancel, never a next step.
	Next string
	// State is where the action puts the goods it acts on, in escrow.TransactionState's
	// words ("in_inspection" after receive); "" for the actions on the whole transaction.
	State string
}

// Actions returns the emulator's table of actions, in lifecycle order.
func Actions() []Action {
	out := make([]Action, 0, len(lifecycle))
	for _, a := range lifecycle {
		// perform and the whole-transaction functions emit the action's own name.
		act := Action{Name: a.name, Roles: slices.Clone(a.roles), Event: a.name, Sets: flagNames(a.sets),
			Requires: flagNames(a.requires), Blocks: slices.Clone(a.blocks), Delegable: a.delegable, Optional: a.optional, Next: a.next}
		if s, ok := latestFlag(a.sets); ok {
			act.State = s.state
		}
		out = append(out, act)
	}
	return out
}

// flagNames names the flags of a set, in lifecycle order.
func flagNames(flags itemFlag) []string {
	var names []string
	for _, s := range itemStates {
		if flags&s.flag != 0 {
			names = append(names, s.name)
		}
	}
	return names
}

var authorizationTypes = []string{"push", "authorization_code", "username_password"}

// actionInput is a TransactionAction body.
type actionInput struct {
	action            string
	authorizationType string
	tracking          string // carrier and tracking id, for the timeline
	cancelReason      string
}

func parseAction(o object) actionInput {
	in := actionInput{}
	if o.required("action") {
		in.action = o.oneOf("action", actionNames...) // refuses a blank or unknown name
	}
	if si, ok := o.child("shipping_information"); ok {
		in.authorizationType = si.oneOf("authorization_type", authorizationTypes...)
		if ti, ok := si.child("tracking_information"); ok {
			parts := []string{ti.str("carrier"), ti.str("tracking_id"), ti.str("carrier_contact")}
			in.tracking = strings.Join(slices.DeleteFunc(parts, func(s string) bool { return s == "" }), ", ")
		}
	}
	if ci, ok := o.child("cancel_information"); ok {
		in.cancelReason = ci.str("cancellation_reason")
	}
	return in
}

// actOnTransaction serves PATCH /transaction/{id}.
func (e *Emulator) actOnTransaction(req *request) (response, error) {
	tx, err := e.transactionFor(req)
	if err != nil {
		return response{}, err
	}
	return e.act(req, tx, nil)
}

// actOnItem serves PATCH /transaction/{id}/item/{item_id}.
func (e *Emulator) actOnItem(req *request) (response, error) {
	tx, err := e.transactionFor(req)
	if err != nil {
		return response{}, err
	}
	it, err := tx.itemFor(req)
	if err != nil {
		return response{}, err
	}
	return e.act(req, tx, it)
}

// act performs the action a request's body names on a transaction, or on one of its items
// when it is not nil.
func (e *Emulator) act(req *request, tx *transaction, it *item) (response, error) {
	o, err := decodeObject(req.body)
	if err != nil {
		return response{}, err
	}
	in := parseAction(o)
	if err := o.errs.orNil(); err != nil {
		return response{}, err
	}
	who, err := e.actorFor(req, tx)
	if err != nil {
		return response{}, err
	}
	if rule := mustAction(in.action); who.delegated && !rule.delegable {
		return response{}, forbidden("a partner may not %s for another party", in.action)
	}
	if err := e.perform(tx, it, who, in); err != nil {
		return response{}, err
	}
	return success(e.render(tx, req.caller)), nil
}

// perform is the one place where an action changes a transaction: it checks who acts
// and the state, and changes nothing when it refuses. it is nil for the whole transaction.
func (e *Emulator) perform(tx *transaction, it *item, as actor, in actionInput) error {
	who := as.account
	rule := mustAction(in.action)
	if rule.whole {
		if it != nil {
			return fieldErrors{"action": []string{in.action + " applies to the whole transaction: use PATCH /transaction/{id}"}}
		}
		return wholeActions[in.action](e, tx, as, in)
	}
	targets, err := rule.check(tx, it, who.id, in)
	if err != nil {
		return err
	}
	for _, t := range targets {
		e.apply(tx, t, rule)
	}
	detail := in.tracking
	if in.authorizationType != "" {
		detail = strings.TrimPrefix(detail+", authorization "+in.authorizationType, ", ")
	}
	e.emit(tx, in.action, itemIDOf(it), who.id, detail)
	e.settleMoney(tx, rule.sets&flagAcceptedReturned != 0)
	return nil
}

// check returns the items an action on the goods applies to, once the account may perform
// it (it holds one of the action's roles) and the transaction and those items allow it.
func (a actionRule) check(tx *transaction, it *item, accountID int64, in actionInput) ([]*item, error) {
	if !slices.ContainsFunc(a.roles, func(role string) bool { return tx.hasRole(accountID, role) }) {
		return nil, forbidden("only the %s may %s", strings.Join(a.roles, " or "), in.action)
	}
	targets, err := goodsTargets(tx, it, in.action)
	if err != nil {
		return nil, err
	}
	if err := a.stateRefusal(tx, targets, in.action); err != nil {
		return nil, err
	}
	if a.lacksAuthorization(targets, in) {
		return nil, fieldErrors{"shipping_information": fieldErrors{"authorization_type": []string{"is required for domain names: push, authorization_code or username_password"}}}
	}
	return targets, nil
}

// takenBy reports whether the role may take the action; an action naming no roles is
// anyone's.
func (a actionRule) takenBy(role string) bool {
	return len(a.roles) == 0 || slices.Contains(a.roles, role)
}

// stateRefusal refuses an action the state of the transaction or of one of its target
// items does not allow; nil when they all do.
func (a actionRule) stateRefusal(tx *transaction, targets []*item, action string) error {
	if tx.isClosed() || (a.funded && !tx.funded) {
		return invalidState(action, tx.phase(), 0, "cannot %s: transaction %d is %s", action, tx.id, tx.phase())
	}
	for _, t := range targets {
		if !a.allows(t) {
			return invalidState(action, t.phase(tx), t.id, "cannot %s: item %d is %s", action, t.id, t.phase(tx))
		}
	}
	return nil
}

// lacksAuthorization reports a shipment of domain names without the authorization_type
// that says how they are handed over.
func (a actionRule) lacksAuthorization(targets []*item, in actionInput) bool {
	isDomain := func(it *item) bool { return itemRule(it.typ).domain }
	return a.domainAuthorization && in.authorizationType == "" && slices.ContainsFunc(targets, isDomain)
}

// goodsTargets returns the items an action on the goods applies to: the one item, or
// every transferable item, which milestone transactions refuse.
func goodsTargets(tx *transaction, it *item, action string) ([]*item, error) {
	if it == nil {
		if tx.milestone() {
			return nil, invalidState(action, tx.phase(), 0, "milestone transactions %s one item at a time: use PATCH /transaction/%d/item/{item_id}", action, tx.id)
		}
		return tx.goods(), nil
	}
	if !transferable(it.typ) {
		return nil, invalidState(action, it.phase(tx), it.id, "%s items are not shipped or inspected", it.typ)
	}
	return []*item{it}, nil
}

// apply sets an action's flags on an item, with their side effects.
func (e *Emulator) apply(tx *transaction, it *item, rule actionRule) {
	it.flags |= rule.sets
	period := time.Duration(it.inspectionPeriod) * time.Second
	switch {
	case rule.sets&flagReceived != 0:
		it.inspectionEnds = e.now.Add(period)
		e.st.inspecting[tx.id] = tx
	case rule.sets&flagReceivedReturned != 0:
		it.returnEnds = e.now.Add(period)
		e.st.inspecting[tx.id] = tx
	case rule.sets&flagAcceptedReturned != 0:
		e.refundItem(tx, it)
	}
}

func itemIDOf(it *item) int64 {
	if it == nil {
		return 0
	}
	return it.id
}

// agree records the agreement of every party entry the account holds; the agree event
// fires when the last party agrees.
func (e *Emulator) agree(tx *transaction, as actor, _ actionInput) error {
	who := as.account
	if tx.isClosed() {
		return invalidState("agree", tx.phase(), 0, "cannot agree: transaction %d is %s", tx.id, tx.phase())
	}
	var pending []*party
	for _, p := range tx.partiesOf(who.id) {
		if !p.agreed {
			pending = append(pending, p)
		}
	}
	if len(pending) == 0 {
		return invalidState("agree", tx.phase(), 0, "%s has already agreed to transaction %d", who.email, tx.id)
	}
	for _, p := range pending {
		p.agreed, p.selfAgreed = true, !as.delegated
	}
	if tx.allAgreed() {
		e.emit(tx, "agree", 0, who.id, "")
	}
	return nil
}

// cancel applies the API notes' rules: once the buyer and the seller have both agreed
// only the partner may cancel; a closed transaction cannot be cancelled; and, the
// emulator's choice, nothing can be cancelled once goods have shipped. Funds already
// secured go back to the buyer.
func (e *Emulator) cancel(tx *transaction, as actor, in actionInput) error {
	who, reason := as.account, in.cancelReason
	if err := cancelRefusal(tx, who.id); err != nil {
		return err
	}
	tx.cancelled, tx.closed = true, e.now
	for _, it := range tx.items {
		it.flags |= flagCanceled
	}
	e.emit(tx, "cancel", 0, who.id, reason)
	if e.release(tx) > 0 {
		e.emit(tx, "payment_refunded", 0, 0, "")
	}
	return nil
}

// cancelRefusal refuses a cancel the transaction's state or the account's role does not
// allow; nil when it may go ahead.
func cancelRefusal(tx *transaction, accountID int64) error {
	if tx.isClosed() {
		return invalidState("cancel", tx.phase(), 0, "cannot cancel: transaction %d is %s", tx.id, tx.phase())
	}
	if tx.party(roleBuyer).agreed && tx.party(roleSeller).agreed && !tx.hasRole(accountID, rolePartner) {
		return forbidden("once the buyer and the seller have agreed, only the partner may cancel")
	}
	for _, it := range tx.goods() {
		if it.flags&flagShipped != 0 {
			return invalidState("cancel", it.phase(tx), it.id, "cannot cancel: item %d has shipped", it.id)
		}
	}
	return nil
}

// fund is what ApprovePayment does: the buyer's funds arrive and every schedule is
// secured.
func (e *Emulator) fund(tx *transaction) error {
	switch {
	case tx.isClosed() || !tx.allAgreed():
		return invalidState("approve_payment", tx.phase(), 0, "cannot approve payment: transaction %d is %s", tx.id, tx.phase())
	case tx.funded:
		return invalidState("approve_payment", tx.phase(), 0, "transaction %d is already funded", tx.id)
	}
	tx.funded = true
	paid := e.payIn(tx)
	if tx.paymentMethod == "credit_card" {
		e.st.payments = append(e.st.payments, cardPayment{customer: tx.party(roleBuyer).account, tx: tx.id, amount: paid, created: e.now})
	}
	// payment_received comes between payment_sent and payment_approved, as on the live
	// API; one e-commerce plugin keys its order state on it.
	e.emit(tx, "payment_received", 0, 0, tx.paymentMethod)
	e.emit(tx, "payment_approved", 0, 0, tx.paymentMethod)
	return nil
}

// rejectPayment is what RejectPayment does: the buyer's payment failed, and the buyer may
// choose a payment method again.
func (e *Emulator) rejectPayment(tx *transaction) error {
	if tx.isClosed() || !tx.allAgreed() || tx.funded {
		return invalidState("reject_payment", tx.phase(), 0, "cannot reject payment: transaction %d is %s", tx.id, tx.phase())
	}
	tx.paymentMethod, tx.wireSent = "", false
	e.emit(tx, "payment_rejected", 0, 0, "")
	return nil
}

// autoAccept is an action the end of a period takes on an item.
type autoAccept struct {
	action string
	ends   func(*item) time.Time
}

// autoAccepts are what the end of an inspection period does: an unanswered inspection
// counts as acceptance, and so does an unanswered return inspection for the seller.
var autoAccepts = []autoAccept{
	{"accept", func(it *item) time.Time { return it.inspectionEnds }},
	{"accept_return", func(it *item) time.Time { return it.returnEnds }},
}

// inspecting reports whether an item waits for an inspection period to end.
func inspecting(it *item) bool {
	for _, auto := range autoAccepts {
		if mustAction(auto.action).allows(it) && !auto.ends(it).IsZero() {
			return true
		}
	}
	return false
}

// autoApply applies the automatic action to every item whose period has ended, and
// returns them.
func (e *Emulator) autoApply(tx *transaction, auto autoAccept) []*item {
	rule := mustAction(auto.action)
	var done []*item
	for _, it := range tx.goods() {
		if end := auto.ends(it); rule.allows(it) && !end.IsZero() && !e.now.Before(end) {
			e.apply(tx, it, rule)
			done = append(done, it)
		}
	}
	return done
}

// settle applies what the passing of time does (autoAccepts) to the transactions with an
// inspection running, in id order. It runs before every request and after Advance, so no
// timer is needed.
func (e *Emulator) settle() {
	for _, id := range slices.Sorted(maps.Keys(e.st.inspecting)) {
		tx := e.st.inspecting[id]
		e.endInspections(tx)
		if tx.isClosed() || !slices.ContainsFunc(tx.goods(), inspecting) {
			delete(e.st.inspecting, id)
		}
	}
}

// endInspections applies each automatic acceptance whose inspection period has ended to
// a transaction, until it closes.
func (e *Emulator) endInspections(tx *transaction) {
	for _, auto := range autoAccepts {
		if tx.isClosed() {
			return
		}
		done := e.autoApply(tx, auto)
		if len(done) == 0 {
			continue
		}
		var itemID int64
		if len(done) == 1 && tx.milestone() {
			itemID = done[0].id
		}
		e.emit(tx, auto.action, itemID, 0, "the inspection period ended")
		e.settleMoney(tx, auto.action == "accept_return")
	}
}

// settleMoney follows an accept or a return: announces a refund, disburses what is due
// to beneficiaries with a disbursement method, and completes the transaction when
// everything is settled.
func (e *Emulator) settleMoney(tx *transaction, refunded bool) {
	if refunded {
		e.emit(tx, "payment_refunded", 0, 0, "")
	}
	e.disburse(tx)
	e.complete(tx)
}

// due reports whether an item's money is owed to its beneficiaries: goods once accepted,
// fee items once every good is settled and at least one was accepted.
func due(tx *transaction, it *item) bool {
	if transferable(it.typ) {
		return it.flags&flagAccepted != 0
	}
	accepted := false
	for _, g := range tx.goods() {
		if g.flags&(flagAccepted|flagAcceptedReturned) == 0 {
			return false
		}
		accepted = accepted || g.flags&flagAccepted != 0
	}
	return accepted
}

// disburse pays out every due schedule entry whose beneficiary can be paid: a seller or
// broker once they have selected a disbursement method; the partner always. Goods are paid
// before fee items, whatever order the items are listed in: a fee the seller pays comes
// out of what the goods' payouts withhold, and listed first it would otherwise find less
// withheld than it is owed and wait for payouts already made.
func (e *Emulator) disburse(tx *transaction) {
	paid := false
	for _, it := range goodsFirst(tx.items) {
		if due(tx, it) && beneficiaryPayable(tx, it) {
			paid = e.payOut(tx, it) || paid
		}
	}
	if paid {
		e.emit(tx, "payment_disbursed", 0, 0, "")
	}
}

// goodsFirst orders items for payouts: the goods, then the fee items, each in the order
// they are listed.
func goodsFirst(items []*item) []*item {
	order := slices.Clone(items)
	slices.SortStableFunc(order, func(a, b *item) int {
		return goodsRank(a) - goodsRank(b)
	})
	return order
}

// goodsRank is 0 for goods, 1 for fee items.
func goodsRank(it *item) int {
	if transferable(it.typ) {
		return 0
	}
	return 1
}

// beneficiaryPayable reports whether an item's beneficiary can be paid: the partner
// always, a seller or broker once they have selected a disbursement method.
func beneficiaryPayable(tx *transaction, it *item) bool {
	_, role := scheduleRoles(it.typ)
	if role == rolePartner {
		return true
	}
	p := tx.party(role)
	return p != nil && p.method != 0
}

// complete closes the transaction once every good is accepted or returned and every due
// entry is disbursed; money left in escrow (fee items of a fully returned deal) goes back.
func (e *Emulator) complete(tx *transaction) {
	if tx.isClosed() || !allSettled(tx) {
		return
	}
	e.release(tx)
	tx.completed, tx.closed = true, e.now
	e.emit(tx, "complete", 0, 0, "")
}

// allSettled reports whether every item of a transaction is settled.
func allSettled(tx *transaction) bool {
	for _, it := range tx.items {
		if !itemSettled(tx, it) {
			return false
		}
	}
	return true
}

// itemSettled reports whether an item is done with: a good accepted or returned, and
// every entry of a due item disbursed or refunded.
func itemSettled(tx *transaction, it *item) bool {
	if transferable(it.typ) && it.flags&(flagAccepted|flagAcceptedReturned) == 0 {
		return false
	}
	if !due(tx, it) {
		return true
	}
	for _, s := range it.schedule {
		if !s.disbursed && !s.refunded {
			return false
		}
	}
	return true
}

// otherEvents describe in the timeline the events that are not actions (spec part 6 and
// the API notes); actions describe theirs in lifecycle.
var otherEvents = map[string]string{
	"create":            "The transaction was created.",
	"payment_sent":      "The buyer reported a wire transfer sent.",
	"payment_received":  "The buyer's funds were received.",
	"payment_approved":  "Payment approved; the seller may ship.",
	"payment_rejected":  "Payment rejected.",
	"payment_refunded":  "Funds were returned to the buyer.",
	"payment_disbursed": "Funds were disbursed to the beneficiaries.",
	"complete":          "All disbursements made; the transaction is complete.",
}

// eventMessages describe every event the emulator sends.
var eventMessages = func() map[string]string {
	m := maps.Clone(otherEvents)
	for _, a := range lifecycle {
		m[a.name] = a.message
	}
	return m
}()

// emit records an event in the transaction's timeline and queues a webhook call to every
// webhook of every party's account. It runs under the lock, so calls queue in the order
// events happen; webhooks are looked up now, so one deleted later is still called for
// events already queued.
func (e *Emulator) emit(tx *transaction, event string, itemID, actorID int64, detail string) {
	msg := eventMessages[event]
	if detail != "" {
		msg = fmt.Sprintf("%s (%s).", strings.TrimSuffix(msg, "."), detail)
	}
	tx.timeline = append(tx.timeline, timelineEntry{
		id: next(&e.st.ids.entry), event: event, date: e.now, item: itemID, actor: actorID, detail: msg,
	})
	e.hooks.enqueue(e.hookJobs(tx, event)...)
}

// hookJobs are the calls an event makes: one to every webhook of every party's account,
// once per account. The lock is held.
func (e *Emulator) hookJobs(tx *transaction, event string) []hookJob {
	var jobs []hookJob
	seen := map[int64]bool{}
	for _, p := range tx.parties {
		if seen[p.account] {
			continue
		}
		seen[p.account] = true
		for _, h := range e.st.accounts[p.account].webhooks {
			jobs = append(jobs, hookJob{url: h.url, event: event, tx: tx.id})
		}
	}
	return jobs
}

// itemFor finds the item named by the request's {item_id}.
func (t *transaction) itemFor(req *request) (*item, error) {
	id, err := req.id("item_id")
	if err != nil {
		return nil, err
	}
	for _, it := range t.items {
		if it.id == id {
			return it, nil
		}
	}
	return nil, newError(http.StatusNotFound, "not_found", "transaction %d has no item %d", t.id, id)
}

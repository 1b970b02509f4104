package escrowtest

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
)

// Reach takes a transaction to a state in one call, as its parties' own steps would: what
// getting a sale to "in inspection" for a test took six calls as three parties. Each step
// is the one the API or the harness takes (an agreement, ApprovePayment, an action, a
// disbursement method selected), made by the party whose step it is, with its timeline
// entry and webhook calls; no step needs the clock, which Reach leaves alone (moving it
// would age every other transaction too).

// ReachableStates are the states Reach takes, in the order a sale goes through them; the
// return path and cancellation follow.
var ReachableStates = []string{
	stateAwaitingAgreement, stateAwaitingPayment, stateFunded, stateShipped, stateInInspection, stateAccepted,
	stateDisbursed, stateComplete, stateReturning, stateInDispute, stateCancelled,
}

// reachStep is one step on the way to a state: done says whether the transaction has
// taken it already, take takes it.
type reachStep struct {
	name string
	done func(tx *transaction) bool
	take func(e *Emulator, tx *transaction) error
}

var (
	stepAgree = reachStep{"agree", (*transaction).allAgreed, (*Emulator).agreeAll}
	stepFund  = reachStep{"fund", func(tx *transaction) bool { return tx.funded }, (*Emulator).fund}
	// stepPaySeller and stepPayAll select a disbursement method for the payees that have
	// none: the seller alone, or every party owed money.
	stepPaySeller = reachStep{"select_disbursement_method", func(tx *transaction) bool { return tx.party(roleSeller).method != 0 },
		func(e *Emulator, tx *transaction) error { return e.selectTestMethods(tx, roleSeller) }}
	stepPayAll = reachStep{"select_disbursement_method", func(tx *transaction) bool { return tx.completed },
		func(e *Emulator, tx *transaction) error { return e.selectTestMethods(tx, roleSeller, roleBroker) }}
)

// actionStep is the step of an action on the goods, taken by the party its row names.
func actionStep(name string) reachStep {
	rule := mustAction(name)
	return reachStep{
		name: name,
		done: func(tx *transaction) bool {
			return !slices.ContainsFunc(tx.goods(), func(it *item) bool { return it.flags&rule.sets == 0 })
		},
		take: func(e *Emulator, tx *transaction) error { return e.actOnGoods(tx, rule) },
	}
}

// The paths Reach follows: the sale to its payout, and the return.
var (
	salePath   = []reachStep{stepAgree, stepFund, actionStep("ship"), actionStep("receive"), actionStep("accept"), stepPayAll}
	returnPath = []reachStep{stepAgree, stepFund, actionStep("ship"), actionStep("receive"), actionStep("reject"),
		actionStep("ship_return"), actionStep("receive_return")}
)

// reachPaths are the steps to each state; a state reached by the return path too lists
// it second.
var reachPaths = map[string][][]reachStep{
	stateAwaitingAgreement: {salePath[:0]},
	stateAwaitingPayment:   {salePath[:1]},
	stateFunded:            {salePath[:2]},
	stateShipped:           {salePath[:3]},
	stateInInspection:      {salePath[:4]},
	stateAccepted:          {salePath[:5]},
	stateDisbursed:         {append(slices.Clone(salePath[:5]), stepPaySeller)},
	stateComplete:          {salePath, append(slices.Clone(returnPath), actionStep("accept_return"))},
	stateReturning:         {returnPath[:5]},
	stateInDispute:         {append(slices.Clone(returnPath), actionStep("reject_return"))},
	stateCancelled:         {{{"cancel", func(tx *transaction) bool { return tx.cancelled }, (*Emulator).cancelAsPartyWhoMay}}},
}

// Reach drives transaction txID forward to state, one of escrow.TransactionState's values
// (ReachableStates lists them: in_inspection, accepted, complete, cancelled, …), as its
// parties would: every party agrees, the payment arrives (as ApprovePayment), the seller
// ships, the buyer receives and accepts or rejects, and so on, each step with its
// timeline entry and webhook calls; to pay out, the seller (and a broker owed a
// commission) selects a test bank account when it has none. Steps already taken are
// skipped. A state behind the transaction, off its path (accepted once the goods are
// rejected) or that its terms cannot show (accepted when the seller's method would pay it
// out at once) is refused, before anything changes, with an error that says why.
func (e *Emulator) Reach(txID int64, state string) error {
	paths, ok := reachPaths[state]
	if !ok {
		if state == stateReturned {
			return fieldError{"state", "returned is an item's state only: a transaction whose goods are all returned is complete"}
		}
		return fieldError{"state", fmt.Sprintf("%q is not one of %s", state, strings.Join(ReachableStates, ", "))}
	}
	e.lock()
	defer e.mu.Unlock()
	tx := e.st.txs[txID]
	if tx == nil {
		return notFound("no transaction %d", txID)
	}
	from := tx.state()
	if from == state {
		return nil
	}
	path, err := choosePath(tx, from, state, paths)
	if err != nil {
		return err
	}
	for _, step := range path {
		if step.done(tx) {
			continue
		}
		if err := step.take(e, tx); err != nil {
			return fmt.Errorf("reaching %s, at %s: %w", state, step.name, err)
		}
	}
	if got := tx.state(); got != state {
		return unreachable(tx, state, "its steps left it %s", got)
	}
	return nil
}

// choosePath picks the path to state that the transaction is on, and refuses a state it
// cannot reach from where it stands.
func choosePath(tx *transaction, from, state string, paths [][]reachStep) ([]reachStep, error) {
	if err := reachableFrom(tx, from, state); err != nil {
		return nil, err
	}
	for _, path := range paths {
		if onPath(tx, path) {
			return path, nil
		}
	}
	return nil, unreachable(tx, state, "it is %s, past %s or off the way to it", from, state)
}

// onPath reports whether the steps a transaction has taken are a beginning of path: it
// has taken no step beyond path's, and none on another branch.
func onPath(tx *transaction, path []reachStep) bool {
	for _, branch := range [][]reachStep{salePath, returnPath, reachPaths[stateInDispute][0], reachPaths[stateComplete][1]} {
		for _, step := range branch {
			inPath := slices.ContainsFunc(path, func(s reachStep) bool { return s.name == step.name })
			if !inPath && step.name != stepPayAll.name && step.done(tx) {
				return false
			}
		}
	}
	return true
}

// reachableFrom refuses what no path reaches from where the transaction stands, saying
// why in the terms a person knows.
func reachableFrom(tx *transaction, from, state string) error {
	switch {
	case from == stateComplete || from == stateCancelled:
		return unreachable(tx, state, "it is %s: nothing moves it on", from)
	case from == stateInDispute:
		return unreachable(tx, state, "it is in dispute: the provider arbitrates")
	case state == stateCancelled && slices.ContainsFunc(tx.goods(), func(it *item) bool { return it.flags&flagShipped != 0 }):
		return unreachable(tx, state, "its goods have shipped")
	case state == stateCancelled && tx.party(roleBuyer).agreed && tx.party(roleSeller).agreed && tx.party(rolePartner) == nil:
		return unreachable(tx, state, "once the buyer and the seller have agreed only the partner may cancel, and it has none")
	case state == stateAccepted && tx.party(roleSeller).method != 0:
		return unreachable(tx, state, "the seller has selected a disbursement method, so acceptance pays it out at once: reach %s", stateComplete)
	case state == stateDisbursed && !owesBrokerWithoutMethod(tx):
		return unreachable(tx, state, "once the seller is paid nothing else waits (disbursed needs a commission owed to a broker without a disbursement method)")
	}
	return nil
}

// owesBrokerWithoutMethod reports a fee item paid to a broker who has no method yet.
func owesBrokerWithoutMethod(tx *transaction) bool {
	b := tx.party(roleBroker)
	return b != nil && b.method == 0 && slices.ContainsFunc(tx.items, func(it *item) bool {
		_, role := scheduleRoles(it.typ)
		return !transferable(it.typ) && role == roleBroker
	})
}

func unreachable(tx *transaction, state, format string, args ...any) *apiError {
	return invalidState("reach", tx.state(), 0, "transaction %d cannot reach %s: %s", tx.id, state, fmt.Sprintf(format, args...))
}

// agreeAll has every party that has not agreed agree, as itself.
func (e *Emulator) agreeAll(tx *transaction) error {
	for _, p := range tx.parties {
		if !p.agreed {
			if err := e.agree(tx, actor{account: e.st.accounts[p.account]}, actionInput{action: "agree"}); err != nil {
				return err
			}
		}
	}
	return nil
}

// actOnGoods takes an action on the goods as the party its row names: on the whole
// transaction, or milestone by milestone on those that allow it. Domain names are handed
// over by push.
func (e *Emulator) actOnGoods(tx *transaction, rule actionRule) error {
	as := actor{account: e.st.accounts[tx.party(rule.roles[0]).account]}
	in := actionInput{action: rule.name}
	if rule.domainAuthorization && slices.ContainsFunc(tx.goods(), func(it *item) bool { return itemRule(it.typ).domain }) {
		in.authorizationType = "push"
	}
	if !tx.milestone() {
		return e.perform(tx, nil, as, in)
	}
	for _, it := range tx.goods() {
		if rule.allows(it) {
			if err := e.perform(tx, it, as, in); err != nil {
				return err
			}
		}
	}
	return nil
}

// cancelAsPartyWhoMay cancels as the party the rules let: the partner once the buyer and
// the seller have agreed, else the buyer.
func (e *Emulator) cancelAsPartyWhoMay(tx *transaction) error {
	role := roleBuyer
	if tx.party(roleBuyer).agreed && tx.party(roleSeller).agreed {
		role = rolePartner
	}
	return e.cancel(tx, actor{account: e.st.accounts[tx.party(role).account]}, actionInput{action: "cancel", cancelReason: "escrowtest Reach"})
}

// selectTestMethods has each payee in roles that has no disbursement method select a new
// test bank account, as POST .../disbursement_methods does.
func (e *Emulator) selectTestMethods(tx *transaction, roles ...string) error {
	for _, role := range roles {
		p := tx.party(role)
		if p == nil || p.method != 0 {
			continue
		}
		a := e.st.accounts[p.account]
		m := &wireDisbursementMethod{Type: disbursementTypes(a.country())[0], Currency: tx.currency, AccountName: a.email,
			BankName: "escrowtest Bank", BankAccountNumber: "000123456789"}
		if m.Type == "ach" {
			m.AccountType, m.BankABARoutingNumber = "checking", "121000248"
		} else {
			m.BankSwiftCode = "ESCRTEST"
		}
		if err := e.selectMethod(tx, p, a, m); err != nil {
			return err
		}
	}
	return nil
}

// controlReach serves POST /_emulator/transactions/{id}/reach {"state"}.
func (e *Emulator) controlReach(r *http.Request, body []byte) (response, error) {
	id, state, err := txAndField(r, body, "state")
	if err != nil {
		return response{}, err
	}
	if err := e.Reach(id, state); err != nil {
		return response{}, err
	}
	p, err := e.NextSteps(id)
	if err != nil {
		return response{}, err
	}
	return success(p), nil
}

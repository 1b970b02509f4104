package escrow

import "slices"

// actionRule is one action of PATCH /transaction/{id} (and its item form), a row of the
// client's action table. Everything the SDK knows of an action is in its row: settling an
// ambiguous action (settle.go), the webhook package's facts, Item.State, the CLI's list and
// flags, and the As-Customer docs read it through the methods of [Action]. The escrowtest
// emulator keeps its own table, independent on purpose; the contract test compares them.
type actionRule struct {
	action Action
	// roles may perform it; nil means any party (agree), or rules of its own (cancel).
	roles []Role
	// event is the webhook event the action emits.
	event EventName
	// flag is the item status flag the action sets, as ItemStatus names it in JSON
	// ("shipped"); "" for the actions on the whole transaction (agree, cancel), whose
	// effects are the parties' agreement and is_cancelled.
	flag string
	// state is where the flag puts an item (Item.State).
	state TransactionState
	// delegable: an approved partner may perform it for a party with AsCustomer.
	delegable bool
	// takes is the part of the request body that goes with the action.
	takes actionBody
}

// actionBody is what an ActionRequest carries beside the action.
type actionBody uint8

const (
	takesNothing           actionBody = iota
	takesShipping                     // ShippingInformation
	takesCancelInformation            // CancelInformation
)

// actionTable is the action table, in lifecycle order: the order of the webhook facts, and
// the latest flag of an item decides its state (Item.State). Nothing writes it; callers see
// it through Action's methods, which hand out copies.
var actionTable = [...]actionRule{
	{action: ActionAgree, event: EventAgree, delegable: true},
	{action: ActionShip, roles: []Role{RoleSeller}, event: EventShip, flag: "shipped", state: StateShipped, delegable: true, takes: takesShipping},
	{action: ActionReceive, roles: []Role{RoleBuyer}, event: EventReceive, flag: "received", state: StateInInspection, delegable: true},
	{action: ActionAccept, roles: []Role{RoleBuyer}, event: EventAccept, flag: "accepted", state: StateAccepted},
	{action: ActionReject, roles: []Role{RoleBuyer}, event: EventReject, flag: "rejected", state: StateReturning, delegable: true},
	{action: ActionShipReturn, roles: []Role{RoleBuyer}, event: EventShipReturn, flag: "shipped_returned", state: StateReturning, delegable: true, takes: takesShipping},
	{action: ActionReceiveReturn, roles: []Role{RoleSeller}, event: EventReceiveReturn, flag: "received_returned", state: StateReturning, delegable: true},
	{action: ActionAcceptReturn, roles: []Role{RoleSeller}, event: EventAcceptReturn, flag: "accepted_returned", state: StateReturned},
	{action: ActionRejectReturn, roles: []Role{RoleSeller}, event: EventRejectReturn, flag: "rejected_returned", state: StateInDispute},
	{action: ActionCancel, event: EventCancel, takes: takesCancelInformation},
}

// Actions returns the actions the client knows, in lifecycle order. [TransactionsService.Act]
// sends others too: the API decides.
func Actions() []Action {
	out := make([]Action, len(actionTable))
	for i, r := range actionTable {
		out[i] = r.action
	}
	return out
}

// rule returns the action's row; ok is false for an action the client does not know.
func (a Action) rule() (actionRule, bool) {
	for _, r := range actionTable {
		if r.action == a {
			return r, true
		}
	}
	return actionRule{}, false
}

// Known reports whether the action is one of [Actions].
func (a Action) Known() bool {
	_, ok := a.rule()
	return ok
}

// Roles returns the roles that may perform the action; nil when any party may (agree), or
// the action has rules of its own (cancel: any party before both buyer and seller agreed,
// the partner after), or the action is unknown.
func (a Action) Roles() []Role {
	r, _ := a.rule()
	return slices.Clone(r.roles)
}

// Event returns the webhook event the action emits; "" for an unknown action.
func (a Action) Event() EventName {
	r, _ := a.rule()
	return r.event
}

// ItemFlag returns the item status flag the action sets, as the API names it ("shipped");
// "" for the actions on the whole transaction and unknown ones.
func (a Action) ItemFlag() string {
	r, _ := a.rule()
	return r.flag
}

// Delegable reports whether an approved partner may perform the action for a party with
// [AsCustomer]. The table follows the live API where it and the spec differ: the spec lists
// reject_return, which the live API refuses.
func (a Action) Delegable() bool {
	r, _ := a.rule()
	return r.delegable
}

// TakesShipping reports whether the action carries ShippingInformation.
func (a Action) TakesShipping() bool {
	r, _ := a.rule()
	return r.takes == takesShipping
}

// TakesCancelInformation reports whether the action carries CancelInformation.
func (a Action) TakesCancelInformation() bool {
	r, _ := a.rule()
	return r.takes == takesCancelInformation
}

// latestItemState is the state the item's latest action flag puts it in, by the action
// table; ok is false when no action flag is set.
func latestItemState(s ItemStatus) (TransactionState, bool) {
	for _, r := range slices.Backward(actionTable[:]) {
		if r.flag != "" && s.Flag(r.flag) {
			return r.state, true
		}
	}
	return "", false
}

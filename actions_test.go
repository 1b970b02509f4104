package escrow

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// TestItemFlagsReadTheirFields: ItemStatus.Flag reads every flag by its JSON name, each
// from its own field, and no other name.
func TestItemFlagsReadTheirFields(t *testing.T) {
	st := reflect.TypeFor[ItemStatus]()
	var names []string
	for i := range st.NumField() {
		names = append(names, strings.Split(st.Field(i).Tag.Get("json"), ",")[0])
	}
	for _, name := range names {
		var s ItemStatus
		if err := json.Unmarshal([]byte(`{"`+name+`": true}`), &s); err != nil {
			t.Fatal(err)
		}
		for _, other := range names {
			if got := s.Flag(other); got != (other == name) {
				t.Errorf("with only %s set, Flag(%q) = %v", name, other, got)
			}
		}
	}
	if len(itemFlags) != len(names) {
		t.Errorf("itemFlags reads %d flags, ItemStatus has %d", len(itemFlags), len(names))
	}
	if (ItemStatus{Shipped: true}).Flag("Shipped") {
		t.Error(`Flag("Shipped") = true: only the JSON names are flags`)
	}
}

// TestActionTableRows: every action names an event; an action on the goods names a flag
// ItemStatus has, the state it leads to and who performs it; an action on the whole
// transaction names none of them. Actions lists each once, in the table's order.
func TestActionTableRows(t *testing.T) {
	seen := map[Action]bool{}
	for _, a := range Actions() {
		if seen[a] {
			t.Errorf("%s is listed twice", a)
		}
		seen[a] = true
		r, ok := a.rule()
		switch {
		case !ok || !a.Known():
			t.Errorf("%s is listed but has no row", a)
		case a.Event() == "":
			t.Errorf("%s emits no event", a)
		case r.flag == "" && (r.state != "" || len(r.roles) > 0):
			t.Errorf("%s acts on the whole transaction but names a state or roles", a)
		case r.flag != "" && (r.state == "" || len(r.roles) == 0):
			t.Errorf("%s acts on the goods but names no state or no roles", a)
		case r.flag != "" && itemFlags[r.flag] == nil:
			t.Errorf("%s sets %q, which ItemStatus does not have", a, r.flag)
		}
	}
	if Action("escalate").Known() || Action("escalate").Event() != "" || Action("escalate").Roles() != nil {
		t.Error("an action not in the table reads as known")
	}
	roles := ActionShip.Roles()
	roles[0] = RoleBuyer
	if ActionShip.Roles()[0] != RoleSeller {
		t.Error("Roles hands out the table's own slice: a caller changed the table")
	}
}

// TestActionsThatCarryABody: ship and ship_return carry ShippingInformation (the buyer
// ships rejected goods back with a tracking number, as the seller ships them out), cancel
// carries CancelInformation, and no other action carries either: the CLI refuses
// shipping flags on the others by these answers, and the docs list them.
func TestActionsThatCarryABody(t *testing.T) {
	for _, a := range Actions() {
		if got, want := a.TakesShipping(), a == ActionShip || a == ActionShipReturn; got != want {
			t.Errorf("%s.TakesShipping() = %v, want %v", a, got, want)
		}
		if got, want := a.TakesCancelInformation(), a == ActionCancel; got != want {
			t.Errorf("%s.TakesCancelInformation() = %v, want %v", a, got, want)
		}
	}
}

// TestItemStateFollowsTheLatestAction: an item is where the latest action whose flag it
// shows put it, whatever flags earlier actions left.
func TestItemStateFollowsTheLatestAction(t *testing.T) {
	var s ItemStatus
	for _, a := range Actions() {
		r, _ := a.rule()
		if r.flag == "" {
			continue
		}
		b, _ := json.Marshal(map[string]bool{r.flag: true})
		if err := json.Unmarshal(b, &s); err != nil { // adds the flag to those set before
			t.Fatal(err)
		}
		it := Item{Type: ItemGeneralMerchandise, Status: s}
		if got := it.State(); got != r.state {
			t.Errorf("after %s (flags %+v): State() = %s, want %s", a, s, got, r.state)
		}
	}
}

// TestSettlingAnActionOfSeveralRolesIsUndetermined: when more than one role may perform an
// action, the flag it sets does not say whose it is, so an ambiguous attempt is not taken
// for done; with one role the actor's flag is.
func TestSettlingAnActionOfSeveralRolesIsUndetermined(t *testing.T) {
	i := slices.IndexFunc(actionTable[:], func(r actionRule) bool { return r.action == ActionReceive })
	saved := actionTable[i]
	t.Cleanup(func() { actionTable[i] = saved })

	tx := &Transaction{
		Parties: []Party{{Role: RoleBuyer, Customer: "me"}, {Role: RoleSeller, Customer: "seller@example.com"}},
		Items:   []Item{{ID: 1, Type: ItemGeneralMerchandise, Status: ItemStatus{Shipped: true, Received: true}}},
	}
	who := actor{email: "buyer@example.com"}
	if p, why := actionPresence(tx, who, ActionReceive, 0); p != present {
		t.Errorf("one role: presence %v (%s), want present", p, why)
	}
	actionTable[i].roles = []Role{RoleBuyer, RoleSeller}
	if p, why := actionPresence(tx, who, ActionReceive, 0); p != undetermined || !strings.Contains(why, "buyer or seller") {
		t.Errorf("two roles: presence %v (%s), want undetermined naming both", p, why)
	}
}

package webhook

import (
	"strconv"
	"strings"

	escrow "github.com/escrowkit/escrow-go"
)

// fact is one thing a transaction's state shows to have happened, and the event that
// announces it. Facts are the only things handed over as a ConfirmedEvent: a delivery is
// believed exactly as far as the fetched transaction shows its facts.
type fact struct {
	event  escrow.EventName
	key    string
	itemID int64 // 0 for facts of the whole transaction
}

// lifecycle answers the lifecycle questions of a transaction with the SDK's own
// predicates (docs/design.md, "Facts live in one place"): this package re-derives
// none of them.
type lifecycle struct{ tx *escrow.Transaction }

func (l lifecycle) agreed() bool                   { return l.tx.AllAgreed() }
func (l lifecycle) funded() bool                   { return l.tx.Funded() }
func (l lifecycle) disbursed(it *escrow.Item) bool { return it.Disbursed() }

// completed means closed: a fee still owed (a seller-paid broker fee) keeps the
// transaction open (Transaction.Completed).
func (l lifecycle) completed() bool { return l.tx.Completed() }
func (l lifecycle) cancelled() bool { return l.tx.Cancelled() }

// itemFacts are the actions that set an item flag and emit an event, in lifecycle order:
// the SDK's action table (escrow.Actions) says which, so this package lists none itself.
func itemFacts() []escrow.Action {
	var out []escrow.Action
	for _, a := range escrow.Actions() {
		if a.ItemFlag() != "" && a.Event() != "" {
			out = append(out, a)
		}
	}
	return out
}

// factsOf reads a transaction's state as facts, in the order their events happen.
func factsOf(tx *escrow.Transaction) []fact {
	l := lifecycle{tx}
	out := []fact{{event: escrow.EventCreate, key: string(escrow.EventCreate)}}
	if l.agreed() {
		out = append(out, fact{event: escrow.EventAgree, key: string(escrow.EventAgree)})
	}
	if l.funded() {
		out = append(out, fact{event: escrow.EventPaymentApproved, key: string(escrow.EventPaymentApproved)})
	}
	out = append(out, goodsFacts(tx)...)
	for i := range tx.Items {
		if it := &tx.Items[i]; l.disbursed(it) {
			out = append(out, itemFact(escrow.EventPaymentDisbursed, it.ID))
		}
	}
	if l.completed() {
		out = append(out, fact{event: escrow.EventComplete, key: string(escrow.EventComplete)})
	}
	if l.cancelled() {
		out = append(out, fact{event: escrow.EventCancel, key: string(escrow.EventCancel)})
	}
	return out
}

// goodsFacts are the flags the actions on the goods set, action by action.
func goodsFacts(tx *escrow.Transaction) []fact {
	var out []fact
	for _, a := range itemFacts() {
		for _, it := range tx.Items {
			if it.Type.Transferable() && it.Status.Flag(a.ItemFlag()) {
				out = append(out, itemFact(a.Event(), it.ID))
			}
		}
	}
	return out
}

func itemFact(ev escrow.EventName, itemID int64) fact {
	return fact{event: ev, key: string(ev) + ":" + strconv.FormatInt(itemID, 10), itemID: itemID}
}

// confirmable reports whether an event is one a transaction's state can show, so one
// that can become a ConfirmedEvent. Every other name (payment_sent, payment_refunded, the
// verification events, names added later or invented) can at most be a Hint.
func confirmable(ev escrow.EventName) bool {
	switch ev {
	case escrow.EventCreate, escrow.EventAgree, escrow.EventPaymentApproved, escrow.EventPaymentDisbursed,
		escrow.EventComplete, escrow.EventCancel:
		return true
	}
	for _, a := range itemFacts() {
		if a.Event() == ev {
			return true
		}
	}
	return false
}

// terminal reports whether a fetched state ends the transaction: complete or cancelled.
// Only the fetched state says so, never a delivery.
func terminal(tx *escrow.Transaction) bool {
	l := lifecycle{tx}
	return l.completed() || l.cancelled()
}

// maxHintName bounds the length of an event name passed on as a Hint.
const maxHintName = 64

// validHintName reports whether an unconfirmable event name may be passed on as a Hint:
// 1 to 64 characters, lowercase letters, digits and underscores, starting with a letter.
func validHintName(name escrow.EventName) bool {
	if len(name) == 0 || len(name) > maxHintName || name[0] < 'a' || name[0] > 'z' {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '_' {
			return false
		}
	}
	return true
}

// shapePrefix starts the key that records how many items a transaction has, among its
// facts' keys (which start with an event name, never with '#').
const shapePrefix = "#items="

// shapeKey is the key recording a transaction's items: how many goods (items that are
// shipped, received and accepted) and how many in all (each paid out). A transaction's
// items are fixed when it is created (the API has no call that adds one), so the key is
// true of every state of it, and recorded with the first facts handed over.
func shapeKey(tx *escrow.Transaction) string {
	goods := 0
	for _, it := range tx.Items {
		if it.Type.Transferable() {
			goods++
		}
	}
	return shapePrefix + strconv.Itoa(goods) + "/" + strconv.Itoa(len(tx.Items))
}

// itemCounts reads the shape key among handed keys: the goods and all items; ok is false
// before a state of the transaction was recorded.
func itemCounts(handed map[string]bool) (goods, items int, ok bool) {
	for k := range handed {
		if rest, found := strings.CutPrefix(k, shapePrefix); found {
			g, n, _ := strings.Cut(rest, "/")
			gi, err1 := strconv.Atoi(g)
			ni, err2 := strconv.Atoi(n)
			return gi, ni, err1 == nil && err2 == nil
		}
	}
	return 0, 0, false
}

// Replayed reports whether names (at least one) can only be replays of facts handed over:
// each is an event that happens once per transaction (create, agree, payment_approved,
// complete, cancel) with its fact in handed, or an item event whose fact handed shows
// for every item it can concern, as the recorded item counts say. A fetch for them could
// show nothing new: facts are handed over in order, and an item's flags are set once.
// Every confirmable name is a replay once the transaction is closed (its complete or
// cancel handed over, the last facts of its state): its state changes no more. A
// Store's Acquire applies it (Turn.Replayed), so that a replay costs no lease and no
// fetch; any other name (a hint, a name of the future) makes it false.
func Replayed(names []escrow.EventName, handed map[string]bool) bool {
	if len(names) == 0 {
		return false
	}
	goods, items, shaped := itemCounts(handed)
	for _, n := range names {
		if !replayedName(n, handed, goods, items, shaped) {
			return false
		}
	}
	return true
}

// replayedName is Replayed for one name, with the item counts read.
func replayedName(n escrow.EventName, handed map[string]bool, goods, items int, shaped bool) bool {
	switch {
	case !confirmable(n):
		return false
	case onceOnly(n):
		return handed[string(n)] || closed(handed)
	case closed(handed):
		return true
	case !shaped:
		return false
	case n == escrow.EventPaymentDisbursed:
		return items > 0 && itemFactsHanded(n, handed) >= items
	default: // an event of the goods (itemFacts)
		return goods > 0 && itemFactsHanded(n, handed) >= goods
	}
}

// onceOnly reports whether an event happens once per transaction.
func onceOnly(n escrow.EventName) bool {
	switch n {
	case escrow.EventCreate, escrow.EventAgree, escrow.EventPaymentApproved, escrow.EventComplete, escrow.EventCancel:
		return true
	}
	return false
}

// itemFactsHanded counts the items whose fact of event n was handed over.
func itemFactsHanded(n escrow.EventName, handed map[string]bool) int {
	prefix := string(n) + ":"
	c := 0
	for k := range handed {
		if strings.HasPrefix(k, prefix) {
			c++
		}
	}
	return c
}

// closed reports whether the facts handed over show the transaction closed: completed or
// cancelled, the last facts its state shows, after which no action changes it.
func closed(handed map[string]bool) bool {
	return handed[string(escrow.EventComplete)] || handed[string(escrow.EventCancel)]
}

package webhook

import (
	"slices"

	escrow "github.com/escrowkit/escrow-go"
)

// replayMemo remembers, per transaction, the delivered names this replica has seen to be
// replays: those Replayed says so of the facts recorded (as a turn began, or as the Store
// answered Turn.Replayed) and of those this replica handed over. A fact is never
// unrecorded, so a name once a replay stays one: a later delivery of it is dropped as it
// arrives, with no Store round trip. It holds a few bytes per transaction, the newest
// max of them. Not safe for concurrent use (the Handler's mutex guards it).
type replayMemo struct {
	max   int
	names []escrow.EventName // the confirmable names; bit i of a transaction's set is names[i]
	bits  map[int64]uint32
	order lane // insertion order, for eviction
}

func newReplayMemo(max int) *replayMemo {
	m := &replayMemo{max: max, bits: make(map[int64]uint32)}
	m.names = []escrow.EventName{escrow.EventCreate, escrow.EventAgree, escrow.EventPaymentApproved,
		escrow.EventPaymentDisbursed, escrow.EventComplete, escrow.EventCancel}
	for _, a := range itemFacts() {
		m.names = append(m.names, a.Event())
	}
	return m
}

// learn notes the names that handed, facts recorded of transaction id, makes replays.
func (m *replayMemo) learn(id int64, handed map[string]bool) {
	var bits uint32
	for i, n := range m.names {
		if Replayed([]escrow.EventName{n}, handed) {
			bits |= 1 << i
		}
	}
	m.add(id, bits)
}

// learnNames notes that names are replays for transaction id.
func (m *replayMemo) learnNames(id int64, names []escrow.EventName) {
	var bits uint32
	for i, n := range m.names {
		if slices.Contains(names, n) {
			bits |= 1 << i
		}
	}
	m.add(id, bits)
}

// learnAll notes that every name is a replay: the transaction was pruned.
func (m *replayMemo) learnAll(id int64) { m.add(id, 1<<len(m.names)-1) }

func (m *replayMemo) add(id int64, bits uint32) {
	if bits == 0 {
		return
	}
	old, ok := m.bits[id]
	if !ok {
		m.order.push(id)
	}
	m.bits[id] = old | bits
	for len(m.bits) > m.max {
		oldest, _ := m.order.pop()
		delete(m.bits, oldest)
	}
}

// replay reports whether a delivery of name for transaction id is known to be a replay.
func (m *replayMemo) replay(id int64, name escrow.EventName) bool {
	i := slices.Index(m.names, name)
	return i >= 0 && m.bits[id]&(1<<i) != 0
}

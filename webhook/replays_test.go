package webhook

import (
	"testing"

	escrow "github.com/escrowkit/escrow-go"
)

// TestReplayMemoIsBoundedOldestFirst: the memo keeps the newest transactions up to its
// bound, forgetting the oldest first: a forgotten one's replays go to the Store again,
// never the other way round.
func TestReplayMemoIsBoundedOldestFirst(t *testing.T) {
	m := newReplayMemo(2)
	handed := map[string]bool{"create": true}
	for id := int64(1); id <= 3; id++ {
		m.learn(id, handed)
	}
	if m.replay(1, escrow.EventCreate) {
		t.Error("the oldest of three kept past a bound of two")
	}
	for id := int64(2); id <= 3; id++ {
		if !m.replay(id, escrow.EventCreate) {
			t.Errorf("transaction %d forgotten within the bound", id)
		}
	}
	m.learn(2, map[string]bool{"create": true, "agree": true}) // learning more of one kept adds no entry
	if !m.replay(3, escrow.EventCreate) || !m.replay(2, escrow.EventAgree) {
		t.Error("learning more of a transaction kept forgot another")
	}
}

// TestReplayMemoKnowsOnlyWhatTheFactsShow: a name is a replay once the facts make it one
// (Replayed), and stays one as more is learnt; nothing else is; a pruned transaction's
// every name is.
func TestReplayMemoKnowsOnlyWhatTheFactsShow(t *testing.T) {
	m := newReplayMemo(10)
	m.learn(1, map[string]bool{"create": true, "#items=1/1": true, "ship:10": true})
	for name, want := range map[escrow.EventName]bool{
		escrow.EventCreate: true, escrow.EventShip: true, escrow.EventAgree: false,
		escrow.EventReceive: false, escrow.EventPaymentSent: false, "no_such_event": false,
	} {
		if got := m.replay(1, name); got != want {
			t.Errorf("replay(%s) = %v, want %v", name, got, want)
		}
	}
	m.learn(1, map[string]bool{"agree": true})
	if !m.replay(1, escrow.EventShip) || !m.replay(1, escrow.EventAgree) {
		t.Error("learning more forgot what was known")
	}
	m.learnAll(2)
	for _, name := range m.names {
		if !m.replay(2, name) {
			t.Errorf("a pruned transaction's %s is not a replay", name)
		}
	}
	if m.replay(3, escrow.EventCreate) {
		t.Error("an unknown transaction's create taken for a replay")
	}
	m.learnNames(4, []escrow.EventName{escrow.EventAgree, "no_such_event"}) // names the Store called replays
	if !m.replay(4, escrow.EventAgree) || m.replay(4, escrow.EventCreate) {
		t.Error("names learnt as replays: only they are")
	}
}

// TestReplayMemoKeepsNoEmptyEntries: learning nothing of a transaction (a turn that handed
// nothing a replay could be told from) takes no place in the memo: a replica seeing many
// such transactions must not forget the ones whose replays it knows.
func TestReplayMemoKeepsNoEmptyEntries(t *testing.T) {
	m := newReplayMemo(2)
	m.learn(1, map[string]bool{"create": true})
	for id := int64(2); id <= 5; id++ {
		m.learn(id, map[string]bool{})
		m.learnNames(id, nil)
	}
	if !m.replay(1, escrow.EventCreate) {
		t.Error("transactions nothing was learnt of pushed a known one out")
	}
}

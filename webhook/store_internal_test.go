package webhook

import (
	"testing"
	"time"

	escrow "github.com/escrowkit/escrow-go"
)

// TestMemoryStoreKeepsNoIdleLease: the memory store forgets a lease once it is idle: at the
// end of a turn that leaves nothing (no holder, no names waiting, no pause ahead), and at
// Prune for one a pause kept. A flood of forged ids, each a turn that found nothing, leaves
// no memory behind (a finished transaction's record goes at Prune; a forged id has none).
func TestMemoryStoreKeepsNoIdleLease(t *testing.T) {
	m := new(MemoryStore)
	now := time.Now()
	for id := int64(1); id <= 100; id++ {
		l := Lease{TransactionID: id, Holder: "a", Expires: now.Add(time.Minute)}
		turn, err := m.Acquire(t.Context(), l, []escrow.EventName{escrow.EventCreate}, now)
		if err != nil || !turn.Granted {
			t.Fatalf("Acquire(%d) = %+v, %v", id, turn, err)
		}
		var pace Pace // odd ids: nothing kept; even ids: a pause before the next fetch
		if id%2 == 0 {
			pace = Pace{NotBefore: now.Add(time.Second), Hold: time.Second, Tried: []escrow.EventName{escrow.EventCreate}}
		}
		if _, err := m.Yield(t.Context(), Yield{Lease: l, Marks: turn.Marks, Pace: pace, Now: now}); err != nil {
			t.Fatal(err)
		}
	}
	m.mu.Lock()
	kept := len(m.leases)
	m.mu.Unlock()
	if kept != 50 {
		t.Errorf("%d lease states kept after the turns, want the 50 paused ones", kept)
	}
	if _, err := m.Prune(t.Context(), now.Add(2*time.Second)); err != nil {
		t.Fatal(err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.leases) != 0 || len(m.records) != 0 {
		t.Errorf("%d lease states and %d records kept after Prune past every pause, want none", len(m.leases), len(m.records))
	}
}

// TestMemoryStorePruneTakesABusyLeaseOfAFinishedTransaction: Prune forgets a finished
// transaction's lease with its record even while a turn holds it: the turn's Yield, and a
// later Finish, find the tombstone and keep nothing, so nothing kept then stays for good.
func TestMemoryStorePruneTakesABusyLeaseOfAFinishedTransaction(t *testing.T) {
	m := new(MemoryStore)
	now := time.Now()
	if err := m.Finish(t.Context(), 1); err != nil {
		t.Fatal(err)
	}
	l := Lease{TransactionID: 1, Holder: "a", Expires: now.Add(time.Hour)}
	if turn, err := m.Acquire(t.Context(), l, []escrow.EventName{escrow.EventComplete}, now); err != nil || !turn.Granted {
		t.Fatalf("Acquire = %+v, %v", turn, err)
	}
	if n, err := m.Prune(t.Context(), time.Now().Add(time.Second)); err != nil || n != 1 {
		t.Fatalf("Prune = %d, %v; want 1", n, err)
	}
	if _, err := m.Yield(t.Context(), Yield{Lease: l, Facts: []string{"complete"}, Now: now}); err != nil {
		t.Fatal(err)
	}
	if err := m.Finish(t.Context(), 1); err != nil { // a late reconciliation's
		t.Fatal(err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.leases) != 0 || len(m.records) != 0 || len(m.tombstones) != 1 {
		t.Errorf("%d leases, %d records, %d tombstones after pruning a busy finished transaction; want 0, 0, 1", len(m.leases), len(m.records), len(m.tombstones))
	}
}

package webhook_test

import (
	"testing"
	"testing/synctest"
	"time"

	escrow "github.com/escrowkit/escrow-go"

	"github.com/escrowkit/escrow-go/webhook"
	"github.com/escrowkit/escrow-go/webhook/storetest"
)

func TestMemoryStore(t *testing.T) {
	storetest.Run(t, func(*testing.T) webhook.Store { return new(webhook.MemoryStore) })
}

// TestMemoryStoreOwed: a MemoryStore keeps its ids owed a look as the contract says, within
// webhook.MaxOwedRanges itself.
func TestMemoryStoreOwed(t *testing.T) {
	storetest.RunOwed(t, storetest.OwedStores{
		Fresh:   func(*testing.T) webhook.Store { return new(webhook.MemoryStore) },
		Replica: func(_ *testing.T, s webhook.Store) webhook.Store { return s },
	})
}

func TestMemoryStoreWithReplicas(t *testing.T) {
	storetest.RunReplicas(t, func(*testing.T) webhook.Store { return new(webhook.MemoryStore) })
}

// TestMemoryStorePrunesWhatFinishedBeforeTheCutoff: Prune takes the transactions that
// finished strictly before its cutoff (one that finished at the cutoff stays), leaves a
// tombstone that refuses every lease, and forgets the tombstone only once the transaction
// finished more than TombstoneHorizon (a year) before a later cutoff.
func TestMemoryStorePrunesWhatFinishedBeforeTheCutoff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := t.Context()
		var s webhook.MemoryStore
		if err := s.Finish(ctx, 7); err != nil {
			t.Fatal(err)
		}
		finished := time.Now() // the store's clock, which the bubble holds still
		const year = 365 * 24 * time.Hour
		pruned := func(at time.Time) bool {
			t.Helper()
			turn, err := s.Acquire(ctx, webhook.Lease{TransactionID: 7, Holder: "r", Expires: at.Add(time.Minute)}, nil, at)
			if err != nil {
				t.Fatal(err)
			}
			if turn.Granted {
				if _, err := s.Yield(ctx, webhook.Yield{Lease: webhook.Lease{TransactionID: 7, Holder: "r", Expires: at.Add(time.Minute)}, Now: at, Release: true}); err != nil {
					t.Fatal(err)
				}
			}
			return turn.Pruned
		}
		for _, step := range []struct {
			cutoff     time.Time
			wantPruned int64
			tombstone  bool
		}{
			{finished, 0, false},
			{finished.Add(time.Nanosecond), 1, true},
			{finished.Add(year / 2), 0, true},
			{finished.Add(year), 0, true},
			{finished.Add(year + time.Nanosecond), 0, false},
		} {
			n, err := s.Prune(ctx, step.cutoff)
			if err != nil || n != step.wantPruned {
				t.Errorf("Prune(finished + %v) = %d, %v; want %d", step.cutoff.Sub(finished), n, err, step.wantPruned)
			}
			if got := pruned(step.cutoff); got != step.tombstone {
				t.Errorf("after Prune(finished + %v): a lease refused as pruned: %v, want %v", step.cutoff.Sub(finished), got, step.tombstone)
			}
		}
	})
}

// TestTurnThatGoesOnExtendsItsLease: a turn that goes on because another replica asked for
// more during it holds the lease until the new expiry its Yield gives: another replica must
// not take the transaction over at the old one, while the holder still works on it.
func TestTurnThatGoesOnExtendsItsLease(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	var s webhook.LeaseState
	a := webhook.Lease{TransactionID: 1, Holder: "a", Expires: t0.Add(time.Minute)}
	b := webhook.Lease{TransactionID: 1, Holder: "b", Expires: t0.Add(3 * time.Minute)}
	if !s.Acquire(a, nil, t0) {
		t.Fatal("a free lease was not granted")
	}
	if s.Acquire(b, nil, t0.Add(time.Second)) { // b asks for a look during a's turn
		t.Fatal("a held lease was granted to another")
	}
	goesOn := a
	goesOn.Expires = t0.Add(10 * time.Minute)
	again, _, err := s.Yield(webhook.Yield{Lease: goesOn, Marks: 0, Now: t0.Add(2 * time.Second)},
		func([]escrow.EventName) bool { return false })
	if err != nil || !again {
		t.Fatalf("Yield = %v, %v; want the turn to go on", again, err)
	}
	if s.Acquire(b, nil, t0.Add(2*time.Minute)) {
		t.Error("the lease was taken over at its first expiry while its turn went on")
	}
}

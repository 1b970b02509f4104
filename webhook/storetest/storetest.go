// Package storetest checks that a webhook.Store keeps the promises the Handler relies on:
// a transaction's lease is held by one replica at a time until it yields or the lease
// expires (its holder died); deliveries to other replicas meanwhile are kept for the
// holder, never lost; facts recorded as done stay done; the pace is shared; finished
// transactions, the reconciler's mark and pruning behave as documented; ids owed a look
// are kept as ranges and answered nearest first (RunOwed checks what replicas share of
// them, and their bound). Each implementation's tests run it against a fresh store.
package storetest

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	escrow "github.com/escrowkit/escrow-go"
	"github.com/escrowkit/escrow-go/webhook"
)

// Run checks the Store that fresh returns; fresh returns an empty store each call.
func Run(t *testing.T, fresh func(t *testing.T) webhook.Store) {
	t.Run("LeaseIsExclusiveAndKeepsOthersDeliveries", func(t *testing.T) { leaseIsExclusive(t, fresh(t)) })
	t.Run("InterleavedReplicasRecordEachFactOnce", func(t *testing.T) { interleaved(t, fresh(t)) })
	t.Run("DeadHolderIsTakenOverWhenItsLeaseEnds", func(t *testing.T) { deadHolder(t, fresh(t)) })
	t.Run("ReleaseLeavesNamesToTheNextHolder", func(t *testing.T) { releaseLeavesNames(t, fresh(t)) })
	t.Run("PaceIsShared", func(t *testing.T) { paceIsShared(t, fresh(t)) })
	t.Run("FinishedAndMark", func(t *testing.T) { finishedAndMark(t, fresh(t)) })
	t.Run("PruneKeepsTombstones", func(t *testing.T) { pruneKeepsTombstones(t, fresh(t)) })
	t.Run("ConcurrentAcquiresGrantOnce", func(t *testing.T) { concurrentAcquires(t, fresh(t)) })
	t.Run("ReplaysTakeNoLease", func(t *testing.T) { replaysTakeNoLease(t, fresh(t)) })
	t.Run("IfKnownLeavesUnknownIdsAlone", func(t *testing.T) { ifKnown(t, fresh(t)) })
	t.Run("FinishIsStampedOnce", func(t *testing.T) { finishStampedOnce(t, fresh(t)) })
	t.Run("LeaseKeepsMaxNamesForItsHolder", func(t *testing.T) { leaseKeepsMaxNames(t, fresh(t)) })
	t.Run("TurnOfNoNewsMayFinish", func(t *testing.T) { turnOfNoNewsMayFinish(t, fresh(t)) })
	t.Run("YieldAfterItsLeaseWasPrunedKeepsItsFacts", func(t *testing.T) { yieldAfterItsLeaseWasPruned(t, fresh(t)) })
	t.Run("OwedIdsNearestFirst", func(t *testing.T) { owedNearestFirst(t, fresh(t)) })
	t.Run("SettleSplitsRanges", func(t *testing.T) { settleSplits(t, fresh(t)) })
	t.Run("ReservedLeaseOfANegativeID", func(t *testing.T) { reservedLease(t, fresh(t)) })
}

var t0 = time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)

func lease(id int64, holder string) webhook.Lease {
	return webhook.Lease{TransactionID: id, Holder: holder, Expires: t0.Add(time.Minute)}
}

func names(ns ...string) []escrow.EventName {
	out := make([]escrow.EventName, len(ns))
	for i, n := range ns {
		out[i] = escrow.EventName(n)
	}
	return out
}

func acquire(t *testing.T, s webhook.Store, l webhook.Lease, now time.Time, delivered ...string) webhook.Turn {
	t.Helper()
	turn, err := s.Acquire(t.Context(), l, names(delivered...), now)
	if err != nil {
		t.Fatalf("Acquire(%+v): %v", l, err)
	}
	return turn
}

func mustAcquire(t *testing.T, s webhook.Store, l webhook.Lease, now time.Time, want bool, delivered ...string) webhook.Turn {
	t.Helper()
	turn := acquire(t, s, l, now, delivered...)
	if turn.Granted != want {
		t.Fatalf("Acquire(%d by %s) at %v: granted %v, want %v", l.TransactionID, l.Holder, now.Sub(t0), turn.Granted, want)
	}
	return turn
}

func yield(t *testing.T, s webhook.Store, y webhook.Yield) webhook.Turn {
	t.Helper()
	turn, err := s.Yield(t.Context(), y)
	if err != nil {
		t.Fatalf("Yield(%+v): %v", y, err)
	}
	return turn
}

func handed(t *testing.T, s webhook.Store, id int64) []string {
	t.Helper()
	h, err := s.Handed(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	return slices.Sorted(maps.Keys(h))
}

func sortedNames(ns []escrow.EventName) []string {
	out := make([]string, len(ns))
	for i, n := range ns {
		out[i] = string(n)
	}
	slices.Sort(out)
	return out
}

// leaseIsExclusive: while a holds the lease, b is refused and its names wait for a; a's
// yield then goes on with them (again), and a second yield frees the lease.
func leaseIsExclusive(t *testing.T, s webhook.Store) {
	if got := handed(t, s, 1); len(got) != 0 {
		t.Fatalf("empty store hands %v", got)
	}
	a := mustAcquire(t, s, lease(1, "a"), t0, true, "create")
	if len(a.Handed) != 0 || len(a.Pending) != 0 {
		t.Errorf("first turn: handed %v, pending %v", a.Handed, a.Pending)
	}
	mustAcquire(t, s, lease(1, "b"), t0, false, "agree")
	mustAcquire(t, s, lease(1, "c"), t0.Add(30*time.Second), false, "agree", "payment_approved")
	mustAcquire(t, s, lease(2, "b"), t0, true) // another transaction
	again := yield(t, s, webhook.Yield{Lease: lease(1, "a"), Marks: a.Marks, Facts: []string{"create"}, Now: t0.Add(time.Second)})
	if !again.Granted || !slices.Equal(sortedNames(again.Pending), []string{"agree", "payment_approved"}) {
		t.Fatalf("yield after others' deliveries: again %v, pending %v; want again with agree, payment_approved", again.Granted, again.Pending)
	}
	if got := handed(t, s, 1); !slices.Equal(got, []string{"create"}) {
		t.Errorf("Handed = %v", got)
	}
	mustAcquire(t, s, lease(1, "b"), t0.Add(2*time.Second), false) // a's turn goes on
	again = yield(t, s, webhook.Yield{Lease: lease(1, "a"), Marks: again.Marks, Facts: []string{"agree", "payment_approved"}, Now: t0.Add(3 * time.Second)})
	if !again.Granted { // b asked once more
		t.Fatal("b's request during the second turn was not handed to a")
	}
	end := yield(t, s, webhook.Yield{Lease: lease(1, "a"), Marks: again.Marks, Now: t0.Add(4 * time.Second)})
	if end.Granted || len(end.Pending) != 0 {
		t.Fatalf("yield with nothing asked: again %v, pending %v", end.Granted, end.Pending)
	}
	b := mustAcquire(t, s, lease(1, "b"), t0.Add(5*time.Second), true)
	if got := slices.Sorted(maps.Keys(b.Handed)); !slices.Equal(got, []string{"agree", "create", "payment_approved"}) || len(b.Pending) != 0 {
		t.Errorf("b's turn: handed %v, pending %v", got, b.Pending)
	}
}

// interleaved: two replicas take turns on one transaction as deliveries alternate
// between them; every fact is recorded once, by whoever held the lease. A delivery left
// to the holder is handed back to it when its turn ends, unless the facts the turn
// recorded make it a replay (webhook.Replayed).
func interleaved(t *testing.T, s webhook.Store) {
	facts := []string{"create", "agree", "payment_approved", "ship:1", "receive:1", "accept:1", "payment_disbursed:1", "complete"}
	now := t0
	holders := []string{"a", "b"}
	for i, f := range facts {
		me, other := holders[i%2], holders[(i+1)%2]
		now = now.Add(time.Second)
		turn := mustAcquire(t, s, webhook.Lease{TransactionID: 3, Holder: me, Expires: now.Add(time.Minute)}, now, true, f)
		if turn.Handed[f] {
			t.Fatalf("%s already handed before its turn", f)
		}
		if got := len(turn.Handed); got != i {
			t.Fatalf("turn %d: %d facts handed, want %d", i, got, i)
		}
		mustAcquire(t, s, webhook.Lease{TransactionID: 3, Holder: other, Expires: now.Add(time.Minute)}, now, false, f) // the same delivery, replayed to the other
		again := yield(t, s, webhook.Yield{Lease: webhook.Lease{TransactionID: 3, Holder: me, Expires: now.Add(time.Minute)}, Marks: turn.Marks,
			Facts: []string{f}, Finished: f == "complete", Now: now})
		recorded := make(map[string]bool)
		for _, k := range facts[:i+1] {
			recorded[k] = true
		}
		if webhook.Replayed(names(f), recorded) { // a once-only event's replay: nothing for the holder
			if again.Granted || len(again.Pending) != 0 {
				t.Fatalf("turn %d: again %v pending %v; want the turn ended, %s a replay of what it recorded", i, again.Granted, again.Pending, f)
			}
			continue
		}
		if !again.Granted || !slices.Equal(sortedNames(again.Pending), []string{f}) {
			t.Fatalf("turn %d: again %v pending %v; want the delivery handed to the holder", i, again.Granted, again.Pending)
		}
		yield(t, s, webhook.Yield{Lease: webhook.Lease{TransactionID: 3, Holder: me, Expires: now.Add(time.Minute)}, Marks: again.Marks, Now: now})
	}
	if got := handed(t, s, 3); len(got) != len(facts) {
		t.Errorf("Handed = %v", got)
	}
	if ids, err := s.Unfinished(t.Context()); err != nil || len(ids) != 0 {
		t.Errorf("Unfinished = %v, %v; want none after complete", ids, err)
	}
}

// deadHolder: a dies holding the lease; b is refused until it expires (at Expires
// itself), then granted with the names delivered meanwhile. a's late yield is refused
// as lost, but its facts are recorded (they were handed over).
func deadHolder(t *testing.T, s webhook.Store) {
	a := mustAcquire(t, s, lease(7, "a"), t0, true, "ship")
	mustAcquire(t, s, lease(7, "b"), t0.Add(59*time.Second), false, "receive")
	b := mustAcquire(t, s, webhook.Lease{TransactionID: 7, Holder: "b", Expires: t0.Add(3 * time.Minute)}, t0.Add(time.Minute), true, "accept")
	if !slices.Equal(sortedNames(b.Pending), []string{"receive"}) {
		t.Errorf("taking over: pending %v, want the names delivered while a held it", b.Pending)
	}
	_, err := s.Yield(t.Context(), webhook.Yield{Lease: lease(7, "a"), Marks: a.Marks, Facts: []string{"ship:1"}, Now: t0.Add(2 * time.Minute)})
	if !errors.Is(err, webhook.ErrClaimLost) {
		t.Errorf("Yield after takeover: %v, want ErrClaimLost", err)
	}
	if got := handed(t, s, 7); !slices.Equal(got, []string{"ship:1"}) {
		t.Errorf("a lost turn's facts: Handed = %v, want them recorded", got)
	}
	mustAcquire(t, s, lease(7, "a"), t0.Add(2*time.Minute), false) // b's lease is live
	end := yield(t, s, webhook.Yield{Lease: lease(7, "b"), Marks: b.Marks + 1, Facts: []string{"receive:1"}, Now: t0.Add(2 * time.Minute)})
	if end.Granted {
		t.Error("yield that saw every request went on")
	}
	if got := handed(t, s, 7); !slices.Equal(got, []string{"receive:1", "ship:1"}) {
		t.Errorf("Handed = %v", got)
	}
}

// yieldAfterItsLeaseWasPruned: a holder whose lease ended so long ago that Prune deleted
// it as idle still gets its facts recorded when its turn ends, with ErrClaimLost: what it
// handed over is never handed over again.
func yieldAfterItsLeaseWasPruned(t *testing.T, s webhook.Store) {
	a := mustAcquire(t, s, lease(11, "a"), t0, true, "ship")
	mustPrune(t, s, t0.Add(2*time.Minute), 0) // a's lease ended at t0+1m: idle, deleted
	_, err := s.Yield(t.Context(), webhook.Yield{Lease: lease(11, "a"), Marks: a.Marks, Facts: []string{"ship:1"}, Now: t0.Add(3 * time.Minute)})
	if !errors.Is(err, webhook.ErrClaimLost) {
		t.Errorf("Yield of a pruned lease: %v, want ErrClaimLost", err)
	}
	if got := handed(t, s, 11); !slices.Equal(got, []string{"ship:1"}) {
		t.Errorf("Handed = %v, want the turn's facts recorded", got)
	}
}

// releaseLeavesNames: a holder that gives up releases the lease at once, and the names
// it had and those delivered meanwhile wait for the next holder.
func releaseLeavesNames(t *testing.T, s webhook.Store) {
	a := mustAcquire(t, s, lease(8, "a"), t0, true, "agree")
	mustAcquire(t, s, lease(8, "b"), t0, false, "payment_approved")
	end := yield(t, s, webhook.Yield{Lease: lease(8, "a"), Marks: a.Marks, Now: t0, Release: true, Names: names("agree")})
	if end.Granted {
		t.Fatal("a release went on")
	}
	c := mustAcquire(t, s, lease(8, "c"), t0, true)
	if !slices.Equal(sortedNames(c.Pending), []string{"agree", "payment_approved"}) {
		t.Errorf("after a release: pending %v, want agree and payment_approved", c.Pending)
	}
	// Pending is kept while a holder has it: a holder that dies leaves it to the next.
	d := mustAcquire(t, s, webhook.Lease{TransactionID: 8, Holder: "d", Expires: t0.Add(3 * time.Minute)}, t0.Add(time.Minute), true)
	if !slices.Equal(sortedNames(d.Pending), []string{"agree", "payment_approved"}) {
		t.Errorf("after a holder died: pending %v", d.Pending)
	}
	yield(t, s, webhook.Yield{Lease: webhook.Lease{TransactionID: 8, Holder: "d"}, Marks: d.Marks, Now: t0.Add(time.Minute)})
	if e := mustAcquire(t, s, lease(8, "e"), t0.Add(time.Minute), true); len(e.Pending) != 0 {
		t.Errorf("after a yield: pending %v, want none", e.Pending)
	}
}

// paceIsShared: the pace a holder stores is what the next holder, another replica, sees.
func paceIsShared(t *testing.T, s webhook.Store) {
	a := mustAcquire(t, s, lease(9, "a"), t0, true, "ship")
	if !a.Pace.NotBefore.IsZero() || a.Pace.Hold != 0 || len(a.Pace.Tried) != 0 {
		t.Errorf("fresh pace: %+v", a.Pace)
	}
	p := webhook.Pace{NotBefore: t0.Add(250 * time.Millisecond), Hold: 250 * time.Millisecond, Tried: names("ship", "receive")}
	yield(t, s, webhook.Yield{Lease: lease(9, "a"), Marks: a.Marks, Pace: p, Now: t0})
	b := mustAcquire(t, s, lease(9, "b"), t0.Add(time.Millisecond), true)
	if !b.Pace.NotBefore.Equal(p.NotBefore) || b.Pace.Hold != p.Hold || !slices.Equal(sortedNames(b.Pace.Tried), []string{"receive", "ship"}) {
		t.Errorf("pace seen by b: %+v, want %+v", b.Pace, p)
	}
}

func finishedAndMark(t *testing.T, s webhook.Store) {
	ctx := t.Context()
	if _, ok, err := s.Mark(ctx); err != nil || ok {
		t.Fatalf("fresh store: Mark ok=%v err=%v", ok, err)
	}
	for _, id := range []int64{3, 1, 2} { // handing a fact over makes a transaction known
		turn := mustAcquire(t, s, lease(id, "a"), t0, true)
		yield(t, s, webhook.Yield{Lease: lease(id, "a"), Marks: turn.Marks, Facts: []string{"create"}, Now: t0})
	}
	if err := s.Finish(ctx, 2); err != nil {
		t.Fatal(err)
	}
	if err := s.Finish(ctx, 9); err != nil { // unknown: known as finished from now on
		t.Fatal(err)
	}
	// Track adds unknown transactions as unfinished and leaves finished ones finished.
	many := []int64{9, 2, 5, 5}
	for id := int64(1000); id < 1700; id++ { // more than one INSERT's worth
		many = append(many, id)
	}
	if err := s.Track(ctx, many); err != nil {
		t.Fatal(err)
	}
	if err := s.Track(ctx, nil); err != nil {
		t.Fatal(err)
	}
	for id := int64(1000); id < 1700; id++ {
		if err := s.Finish(ctx, id); err != nil {
			t.Fatal(err)
		}
	}
	// A late fact of a finished transaction leaves it finished.
	turn := mustAcquire(t, s, lease(2, "a"), t0, true)
	yield(t, s, webhook.Yield{Lease: lease(2, "a"), Marks: turn.Marks, Facts: []string{"complete"}, Now: t0})
	ids, err := s.Unfinished(ctx)
	if err != nil || !slices.Equal(ids, []int64{1, 3, 5}) {
		t.Errorf("Unfinished = %v, %v; want [1 3 5]", ids, err)
	}
	markNeverLowered(t, s)
}

// markNeverLowered: the reconciler's mark only goes up.
func markNeverLowered(t *testing.T, s webhook.Store) {
	ctx := t.Context()
	for _, m := range []int64{0, 40, 30} {
		if err := s.AdvanceMark(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	if m, ok, err := s.Mark(ctx); err != nil || !ok || m != 40 {
		t.Errorf("Mark = %d %v %v, want 40 (never lowered)", m, ok, err)
	}
}

// pruneKeepsTombstones: Prune deletes the facts of transactions finished before its
// time and keeps a tombstone that refuses their lease (a late delivery is dropped), until
// the tombstone's horizon; unfinished and later-finished transactions are untouched,
// and idle leases are forgotten.
func pruneKeepsTombstones(t *testing.T, s webhook.Store) {
	for _, id := range []int64{11, 12, 13} {
		turn := mustAcquire(t, s, lease(id, "a"), t0, true)
		yield(t, s, webhook.Yield{Lease: lease(id, "a"), Marks: turn.Marks, Facts: []string{"create", "cancel"}, Finished: id != 13, Now: t0,
			Pace: webhook.Pace{NotBefore: t0.Add(time.Second), Hold: time.Second}})
	}
	mustPrune(t, s, time.Now().Add(-time.Hour), 0) // nothing finished that long ago
	if got := handed(t, s, 11); len(got) != 2 {
		t.Fatalf("pruned too early: Handed = %v", got)
	}
	mustPrune(t, s, time.Now().Add(time.Second), 2)
	if got := handed(t, s, 11); len(got) != 0 {
		t.Errorf("after Prune: Handed = %v, want nothing", got)
	}
	if got := handed(t, s, 13); len(got) != 2 {
		t.Errorf("Prune took an unfinished transaction's facts: %v", got)
	}
	tombstoneHolds(t, s)
	mustPrune(t, s, time.Now().Add(time.Second), 0)
	mustPrune(t, s, time.Now().Add(webhook.TombstoneHorizon+time.Hour), 0)
	if turn := acquire(t, s, lease(11, "b"), t0); turn.Pruned || !turn.Granted {
		t.Errorf("after the tombstone's horizon: %+v, want an ordinary lease", turn)
	}
}

// tombstoneHolds checks that pruned transaction 11 refuses its lease and stays out of
// the unfinished ones when tracked again.
func tombstoneHolds(t *testing.T, s webhook.Store) {
	t.Helper()
	if turn := acquire(t, s, lease(11, "b"), t0, "cancel"); !turn.Pruned || turn.Granted {
		t.Errorf("late delivery for a pruned transaction: %+v, want Pruned and not granted", turn)
	}
	if err := s.Track(t.Context(), []int64{11}); err != nil {
		t.Fatal(err)
	}
	if ids, err := s.Unfinished(t.Context()); err != nil || !slices.Equal(ids, []int64{13}) {
		t.Errorf("Unfinished after tracking a pruned one = %v, %v; want [13]", ids, err)
	}
}

func mustPrune(t *testing.T, s webhook.Store, before time.Time, want int64) {
	t.Helper()
	if n, err := s.Prune(t.Context(), before); err != nil || n != want {
		t.Fatalf("Prune(%v from now) = %d, %v; want %d", time.Until(before).Round(time.Second), n, err, want)
	}
}

// concurrentAcquires: many replicas race for the lease of the same transaction; exactly
// one wins each round, and every other's name reaches it, at its Acquire or its Yield.
func concurrentAcquires(t *testing.T, s webhook.Store) {
	const owners, rounds = 8, 10
	for r := range rounds {
		id := 100 + int64(r)
		var wg sync.WaitGroup
		var mu sync.Mutex
		var winners []string
		var won webhook.Turn
		for o := range owners {
			wg.Go(func() {
				holder := fmt.Sprint("o", o)
				turn, err := s.Acquire(context.WithoutCancel(t.Context()), lease(id, holder), names(fmt.Sprint("n", o)), t0)
				if err != nil {
					t.Error(err)
					return
				}
				if turn.Granted {
					mu.Lock()
					winners, won = append(winners, holder), turn
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		if len(winners) != 1 {
			t.Fatalf("round %d: %d replicas won the same lease", r, len(winners))
		}
		turn := yield(t, s, webhook.Yield{Lease: lease(id, winners[0]), Marks: won.Marks, Now: t0})
		got := map[string]bool{}
		for _, n := range append(won.Pending, turn.Pending...) {
			got[string(n)] = true
		}
		for o := range owners {
			if h := fmt.Sprint("o", o); h != winners[0] && !got[fmt.Sprint("n", o)] {
				t.Errorf("round %d: %s's delivery never reached the holder %s", r, h, winners[0])
			}
		}
	}
}

// replaysTakeNoLease: an Acquire whose names can only be replays of the facts recorded
// (webhook.Replayed) is answered Replayed: it neither takes the lease nor leaves a
// request for its holder, whether the lease is free or held. Names with news, or item
// events before the transaction's items were recorded, still take or wait for the lease.
func replaysTakeNoLease(t *testing.T, s webhook.Store) {
	a := mustAcquire(t, s, lease(1, "a"), t0, true, "ship")
	yield(t, s, webhook.Yield{Lease: lease(1, "a"), Marks: a.Marks, Facts: []string{"create", "ship:10"}, Now: t0})
	if turn := acquire(t, s, lease(1, "b"), t0, "ship"); turn.Replayed || !turn.Granted {
		t.Fatalf("an item event before the items were recorded: %+v, want the lease", turn)
	}
	b := acquire(t, s, lease(1, "b"), t0) // b's own lease goes on
	yield(t, s, webhook.Yield{Lease: lease(1, "b"), Marks: b.Marks, Facts: []string{"#items=1/1"}, Now: t0})
	for _, delivered := range [][]string{{"create"}, {"ship"}, {"create", "ship"}} {
		turn := acquire(t, s, lease(1, "c"), t0, delivered...)
		if !turn.Replayed || turn.Granted {
			t.Errorf("replays %v over a free lease: %+v, want Replayed", delivered, turn)
		}
		if got := slices.Sorted(maps.Keys(turn.Handed)); !slices.Equal(got, []string{"#items=1/1", "create", "ship:10"}) {
			t.Errorf("replays %v: Handed %v, want the facts that make them replays", delivered, got)
		}
	}
	c := mustAcquire(t, s, lease(1, "c"), t0, true, "receive") // news: the lease
	if turn := acquire(t, s, lease(1, "d"), t0, "create"); !turn.Replayed {
		t.Errorf("a replay while c holds the lease: %+v, want Replayed", turn)
	}
	if end := yield(t, s, webhook.Yield{Lease: lease(1, "c"), Marks: c.Marks, Now: t0}); end.Granted || len(end.Pending) != 0 {
		t.Errorf("c's turn went on after a replay elsewhere: %+v", end)
	}
	if turn := acquire(t, s, lease(1, "d"), t0, "create", "payment_sent"); turn.Replayed || !turn.Granted {
		t.Errorf("a replay with a hint: %+v, want the lease (a hint takes a fetch)", turn)
	}
	// Names left for a holder that its turn's facts make replays are not handed back.
	e := mustAcquire(t, s, lease(2, "e"), t0, true, "create")
	mustAcquire(t, s, lease(2, "f"), t0, false, "create", "agree")
	if again := yield(t, s, webhook.Yield{Lease: lease(2, "e"), Marks: e.Marks, Facts: []string{"create"}, Now: t0}); !again.Granted ||
		!slices.Equal(sortedNames(again.Pending), []string{"agree"}) {
		t.Errorf("a replay and news left for the holder: %+v, want the turn going on with agree alone", again)
	}
}

// ifKnown: a lease asked for IfKnown of a transaction the store knows nothing of is
// answered Unknown and changes nothing (another replica takes the lease at once, and no
// request waits for it); once another replica holds its lease, or it is tracked, or has
// facts recorded, it is granted like any other, or leaves its names to the holder.
func ifKnown(t *testing.T, s webhook.Store) {
	ifKnownWhileHeldOrRecorded(t, s)
	ifKnownTracked(t, s)
	ifKnownRecordedNothing(t, s)
}

// knownLease is the lease of id for holder, asked IfKnown.
func knownLease(id int64, holder string) webhook.Lease {
	l := lease(id, holder)
	l.IfKnown = true
	return l
}

// ifKnownWhileHeldOrRecorded: an unknown id is answered Unknown; held by another replica,
// its names are left to the holder; with facts recorded, its lease is granted.
func ifKnownWhileHeldOrRecorded(t *testing.T, s webhook.Store) {
	if turn := acquire(t, s, knownLease(1, "a"), t0, "create"); !turn.Unknown || turn.Granted {
		t.Fatalf("an unknown id: %+v, want Unknown", turn)
	}
	b := mustAcquire(t, s, lease(1, "b"), t0, true, "create")
	if b.Marks != 0 || len(b.Pending) != 0 {
		t.Errorf("the look-up left %d requests and names %v for the holder", b.Marks, b.Pending)
	}
	if turn := acquire(t, s, knownLease(1, "a"), t0, "agree"); turn.Unknown || turn.Granted {
		t.Errorf("an id another replica is confirming: %+v, want the names left to it", turn)
	}
	b = yield(t, s, webhook.Yield{Lease: lease(1, "b"), Marks: b.Marks, Now: t0})
	if !b.Granted || !slices.Equal(sortedNames(b.Pending), []string{"agree"}) {
		t.Fatalf("the holder's turn after a look-up left it a name: %+v, want agree", b)
	}
	yield(t, s, webhook.Yield{Lease: lease(1, "b"), Marks: b.Marks, Facts: []string{"create"}, Now: t0})
	if turn := acquire(t, s, knownLease(1, "a"), t0, "agree"); !turn.Granted || !turn.Handed["create"] {
		t.Errorf("an id with facts recorded: %+v, want the lease", turn)
	}
	if turn := acquire(t, s, knownLease(1, "c"), t0, "ship"); turn.Unknown || turn.Granted {
		t.Errorf("a known id another replica holds: %+v, want the names left to it", turn)
	}
}

// ifKnownTracked: a tracked id is granted its lease.
func ifKnownTracked(t *testing.T, s webhook.Store) {
	if err := s.Track(t.Context(), []int64{2}); err != nil {
		t.Fatal(err)
	}
	if turn := acquire(t, s, knownLease(2, "a"), t0, "create"); !turn.Granted {
		t.Errorf("a tracked id: %+v, want the lease", turn)
	}
}

// ifKnownRecordedNothing: a turn that recorded nothing (a forged id: its fetch found no
// transaction) leaves the id unknown, whatever its released lease keeps (a pause, names
// for a next holder): a flood of forgeries retried must not pass for known transactions.
func ifKnownRecordedNothing(t *testing.T, s webhook.Store) {
	c := mustAcquire(t, s, lease(3, "a"), t0, true, "create")
	yield(t, s, webhook.Yield{Lease: lease(3, "a"), Marks: c.Marks, Release: true, Names: names("create"),
		Pace: webhook.Pace{NotBefore: t0.Add(time.Minute), Hold: time.Minute}, Now: t0})
	if turn := acquire(t, s, knownLease(3, "b"), t0.Add(time.Second), "create"); !turn.Unknown || turn.Granted {
		t.Errorf("an id whose only turn recorded nothing: %+v, want Unknown", turn)
	}
}

// finishStampedOnce: a transaction's end is stamped once, with the store's clock: a later
// turn that records it finished again (a recheck, a replay's turn) does not postpone its
// pruning.
func finishStampedOnce(t *testing.T, s webhook.Store) {
	a := mustAcquire(t, s, lease(8, "a"), t0, true, "cancel")
	yield(t, s, webhook.Yield{Lease: lease(8, "a"), Marks: a.Marks, Facts: []string{"create", "cancel"}, Finished: true, Now: t0})
	time.Sleep(20 * time.Millisecond)
	cutoff := time.Now()
	time.Sleep(20 * time.Millisecond)
	b := mustAcquire(t, s, lease(8, "b"), t0, true)
	yield(t, s, webhook.Yield{Lease: lease(8, "b"), Marks: b.Marks, Finished: true, Now: t0})
	if err := s.Finish(t.Context(), 8); err != nil {
		t.Fatal(err)
	}
	mustPrune(t, s, cutoff, 1)
}

// leaseKeepsMaxNames: the names left for a lease's holder are kept once each, the first
// webhook.MaxNames of them, however long (hint names run to 64 characters) and however
// many deliveries bring them.
func leaseKeepsMaxNames(t *testing.T, s webhook.Store) {
	a := mustAcquire(t, s, lease(9, "a"), t0, true, "create")
	var want []string
	for i := range webhook.MaxNames + 6 {
		name := fmt.Sprintf("hint_%02d_%s", i, strings.Repeat("x", 56)) // 64 characters
		for range 2 {
			mustAcquire(t, s, lease(9, "b"), t0, false, name)
		}
		if i < webhook.MaxNames {
			want = append(want, name)
		}
	}
	again := yield(t, s, webhook.Yield{Lease: lease(9, "a"), Marks: a.Marks, Now: t0})
	slices.Sort(want)
	if got := sortedNames(again.Pending); !again.Granted || !slices.Equal(got, want) {
		t.Errorf("names left for the holder: %d of them, want the first %d once each", len(got), webhook.MaxNames)
	}

	// Deliveries that bring several names at once past the bound: still the first ones,
	// in the order they came.
	a = mustAcquire(t, s, lease(10, "a"), t0, true, "create")
	var first, second []string
	for i := range webhook.MaxNames + 4 {
		n := fmt.Sprintf("hint_%02d", i)
		if i < webhook.MaxNames-4 {
			first = append(first, n)
		} else {
			second = append(second, n)
		}
	}
	mustAcquire(t, s, lease(10, "b"), t0, false, first...)
	mustAcquire(t, s, lease(10, "c"), t0, false, second...)
	again = yield(t, s, webhook.Yield{Lease: lease(10, "a"), Marks: a.Marks, Now: t0})
	want = append(slices.Clone(first), second[:4]...)
	if got := sortedNames(again.Pending); !again.Granted || !slices.Equal(got, want) {
		t.Errorf("names left for the holder: %q, want the first %d: %q", got, webhook.MaxNames, want)
	}
}

// turnOfNoNewsMayFinish: a turn that hands nothing new over (every fact was handed over
// before) may still find the transaction ended, and its end finishes it: the reconciler
// no longer reads it, and pruning takes it.
func turnOfNoNewsMayFinish(t *testing.T, s webhook.Store) {
	a := mustAcquire(t, s, lease(5, "a"), t0, true, "cancel")
	yield(t, s, webhook.Yield{Lease: lease(5, "a"), Marks: a.Marks, Facts: []string{"create", "cancel"}, Now: t0})
	b := mustAcquire(t, s, lease(5, "b"), t0, true)
	yield(t, s, webhook.Yield{Lease: lease(5, "b"), Marks: b.Marks, Finished: true, Now: t0})
	if ids, err := s.Unfinished(t.Context()); err != nil || slices.Contains(ids, 5) {
		t.Errorf("Unfinished = %v, %v; want 5 finished by a turn of no news", ids, err)
	}
	mustPrune(t, s, time.Now().Add(time.Hour), 1)
}

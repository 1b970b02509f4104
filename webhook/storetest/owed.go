package storetest

import (
	"context"
	"math"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/escrowkit/escrow-go/webhook"
)

// OwedStores is how RunOwed opens the stores whose ids owed a look it checks.
type OwedStores struct {
	// Fresh returns an empty store.
	Fresh func(t *testing.T) webhook.Store
	// Replica returns another handle on s's data, as another process sharing its
	// database opens it; s itself for a store kept in one process's memory.
	Replica func(t *testing.T, s webhook.Store) webhook.Store
	// Reopen closes s and opens its data again, as a restarted process does; nil for a
	// store that keeps nothing across a restart.
	Reopen func(t *testing.T, s webhook.Store) webhook.Store
	// Bound makes s keep n ranges owed a look at most instead of webhook.MaxOwedRanges, so
	// that the bound is checked quickly; nil checks webhook.MaxOwedRanges itself.
	Bound func(s webhook.Store, n int)
}

// RunOwed checks what a Store shares of the ids owed a look: replicas see and settle each
// other's, concurrent Owe and Settle on several handles keep exactly the ids they leave
// owed, a restart keeps them, and the ranges stay within their bound, the farthest from
// the account's newest id dropped first.
func RunOwed(t *testing.T, o OwedStores) {
	t.Run("ReplicasShareOwedIds", func(t *testing.T) {
		s := o.Fresh(t)
		replicasShareOwed(t, s, o.Replica(t, s))
	})
	t.Run("ConcurrentOweAndSettleLeaveExactlyTheirIds", func(t *testing.T) {
		s := o.Fresh(t)
		concurrentOweAndSettle(t, s, o.Replica(t, s))
	})
	t.Run("OwedIdsSurviveARestart", func(t *testing.T) {
		if o.Reopen == nil {
			t.Skip("the store keeps nothing across a restart")
		}
		owedSurviveRestart(t, o.Fresh(t), o.Reopen)
	})
	t.Run("OwedRangesStayWithinTheirBound", func(t *testing.T) {
		s, bound := o.Fresh(t), webhook.MaxOwedRanges
		if o.Bound != nil {
			bound = 10
			o.Bound(s, bound)
		}
		owedBound(t, s, bound)
	})
}

func owe(t *testing.T, s webhook.Store, near int64, ids ...int64) int64 {
	t.Helper()
	dropped, err := s.Owe(t.Context(), ids, near)
	if err != nil {
		t.Fatalf("Owe(%d ids, near %d): %v", len(ids), near, err)
	}
	return dropped
}

func settle(t *testing.T, s webhook.Store, near int64, ids ...int64) int64 {
	t.Helper()
	dropped, err := s.Settle(t.Context(), ids, near)
	if err != nil {
		t.Fatalf("Settle(%d ids, near %d): %v", len(ids), near, err)
	}
	return dropped
}

func owed(t *testing.T, s webhook.Store, near int64, n int) []int64 {
	t.Helper()
	ids, err := s.Owed(t.Context(), near, n)
	if err != nil {
		t.Fatalf("Owed(near %d, %d): %v", near, n, err)
	}
	return ids
}

func wantOwed(t *testing.T, s webhook.Store, near int64, n int, want ...int64) {
	t.Helper()
	if got := owed(t, s, near, n); !slices.Equal(got, want) {
		t.Errorf("Owed(near %d, %d) = %v, want %v", near, n, got, want)
	}
}

// span returns the ids from lo to hi, by step.
func span(lo, hi, step int64) []int64 {
	var ids []int64
	for id := lo; id <= hi; id += step {
		ids = append(ids, id)
	}
	return ids
}

// owedNearestFirst: ids owed are merged whatever their order, ids at or below 0 left out;
// Owed answers the nearest to near first, the higher of two as near, up to n, and removes
// nothing; ids at the ends of int64 are answered like any other.
func owedNearestFirst(t *testing.T, s webhook.Store) {
	wantOwed(t, s, 0, 10)
	if d := owe(t, s, 12, 0, -5, math.MinInt64); d != 0 {
		t.Errorf("Owe of ids at or below 0 dropped %d", d)
	}
	wantOwed(t, s, 0, 10)
	if d := owe(t, s, 12, 10, 11, 12, 20, 15, 14, 13, 12); d != 0 {
		t.Errorf("Owe dropped %d ids of a store far from its bound", d)
	}
	wantOwed(t, s, 16, 100, 15, 14, 13, 20, 12, 11, 10) // 20 and 12 as near: 20 first
	wantOwed(t, s, 16, 100, 15, 14, 13, 20, 12, 11, 10) // nothing was removed
	wantOwed(t, s, 12, 3, 12, 13, 11)
	wantOwed(t, s, 0, 2, 10, 11)
	wantOwed(t, s, -7, 2, 10, 11)
	wantOwed(t, s, 100, 2, 20, 15)
	wantOwed(t, s, 18, 2, 20, 15) // between two ranges
	wantOwed(t, s, 12, 0)
	wantOwed(t, s, 12, -1)
	owe(t, s, 12, math.MaxInt64, math.MaxInt64-1, 1)
	wantOwed(t, s, math.MaxInt64, 3, math.MaxInt64, math.MaxInt64-1, 20)
	wantOwed(t, s, math.MinInt64, 3, 1, 10, 11)
}

// settleSplits: settling ids takes them out of the ranges that hold them, splitting a
// range at an id inside it; ids not owed, or at or below 0, change nothing.
func settleSplits(t *testing.T, s webhook.Store) {
	owe(t, s, 12, span(10, 15, 1)...)
	owe(t, s, 12, 20)
	if d := settle(t, s, 12, 12, 99, 0, -3); d != 0 {
		t.Errorf("Settle dropped %d ids of a store far from its bound", d)
	}
	wantOwed(t, s, 12, 100, 13, 11, 14, 10, 15, 20)
	settle(t, s, 12, 10, 15, 20, 14)
	wantOwed(t, s, 0, 100, 11, 13)
	settle(t, s, 12, 11, 13)
	wantOwed(t, s, 0, 100)
	// Many runs at once, into and out of many ranges.
	owe(t, s, 500, span(1, 1000, 2)...)
	owe(t, s, 500, span(600, 700, 1)...)
	settle(t, s, 500, span(5, 999, 4)...)
	var want []int64
	for id := int64(1); id <= 1000; id++ {
		if (id%2 == 1 || id >= 600 && id <= 700) && (id%4 != 1 || id == 1) {
			want = append(want, id)
		}
	}
	got := owed(t, s, 500, 2000)
	if slices.Sort(got); !slices.Equal(got, want) {
		t.Errorf("after many runs owed and settled: %d ids owed, want %d", len(got), len(want))
	}
	// Two ids with hundreds of ranges between them.
	settle(t, s, 500, 1, 999)
	want = slices.DeleteFunc(want, func(id int64) bool { return id == 1 || id == 999 })
	if got := owed(t, s, 500, 2000); len(got) != len(want) || slices.Contains(got, 1) || slices.Contains(got, 999) {
		t.Errorf("after settling the lowest and highest: %d ids owed, want %d", len(got), len(want))
	}
}

// reservedLease: a lease of a negative id (the receiver's, for one replica at a time to
// look at the ids owed) is granted to its first holder, refused to another while it is
// live, granted at its end; it makes no transaction known, and Prune deletes it once idle.
func reservedLease(t *testing.T, s webhook.Store) {
	ctx := t.Context()
	mustAcquire(t, s, lease(-1, "a"), t0, true)
	mustAcquire(t, s, lease(-1, "b"), t0.Add(30*time.Second), false)
	mustAcquire(t, s, lease(-1, "a"), t0.Add(40*time.Second), true) // its holder's own
	if ids, err := s.Unfinished(ctx); err != nil || len(ids) != 0 {
		t.Errorf("Unfinished = %v, %v; want none", ids, err)
	}
	if _, ok, err := s.Mark(ctx); ok || err != nil {
		t.Errorf("Mark known = %v, %v; want not", ok, err)
	}
	if turn := acquire(t, s, knownLease(1, "c"), t0); !turn.Unknown {
		t.Errorf("a transaction's lease asked IfKnown: %+v, want Unknown", turn)
	}
	wantOwed(t, s, 0, 10)
	mustPrune(t, s, t0.Add(30*time.Second), 0) // live: kept, with b's request
	if b := mustAcquire(t, s, lease(-1, "b"), t0.Add(time.Minute), true); b.Marks == 0 {
		t.Errorf("taken over at its end: marks %d, want b's earlier request counted", b.Marks)
	}
	mustPrune(t, s, t0.Add(2*time.Minute), 0) // ended and idle: deleted
	if c := mustAcquire(t, s, lease(-1, "c"), t0.Add(3*time.Minute), true); c.Marks != 0 {
		t.Errorf("after Prune: marks %d, want a fresh lease (the idle one deleted)", c.Marks)
	}
	if ids, err := s.Unfinished(ctx); err != nil || len(ids) != 0 {
		t.Errorf("Unfinished = %v, %v; want none", ids, err)
	}
}

// replicasShareOwed: ids one replica owes, the other lists, settles and merges with its
// own.
func replicasShareOwed(t *testing.T, s, replica webhook.Store) {
	owe(t, s, 104, 100, 101, 102, 103, 104, 110)
	wantOwed(t, replica, 104, 10, 104, 103, 102, 101, 100, 110)
	settle(t, replica, 104, 102)
	wantOwed(t, s, 104, 10, 104, 103, 101, 100, 110)
	owe(t, replica, 104, 105, 106, 107, 108, 109, 102)
	wantOwed(t, s, 107, 3, 107, 108, 106)
	settle(t, s, 104, span(100, 110, 1)...)
	wantOwed(t, replica, 104, 10)
}

// concurrentOweAndSettle: goroutines on both handles owe ids that interleave with each
// other's (merging into the same ranges) and settle some of their own at once; what is
// left owed is exactly what none settled.
func concurrentOweAndSettle(t *testing.T, s, replica webhook.Store) {
	const workers, ids, batch = 8, 480, 6
	var wg sync.WaitGroup
	for w := range workers {
		on := s
		if w%2 == 1 {
			on = replica
		}
		wg.Go(func() {
			ctx := context.WithoutCancel(t.Context())
			mine := span(int64(w+1), ids, workers)
			for b := range slices.Chunk(mine, batch) {
				if _, err := on.Owe(ctx, b, ids); err != nil {
					t.Error(err)
					return
				}
				done := slices.DeleteFunc(slices.Clone(b), func(id int64) bool { return id%3 != 0 })
				if _, err := on.Settle(ctx, done, ids); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	want := slices.DeleteFunc(span(1, ids, 1), func(id int64) bool { return id%3 == 0 })
	for _, on := range []webhook.Store{s, replica} {
		got := owed(t, on, ids, 2*ids)
		if slices.Sort(got); !slices.Equal(got, want) {
			t.Errorf("after concurrent Owe and Settle: %d ids owed, want %d (every id not a multiple of 3)", len(got), len(want))
		}
	}
}

// owedSurviveRestart: ids owed before a restart are owed after it, and settle as before.
func owedSurviveRestart(t *testing.T, s webhook.Store, reopen func(*testing.T, webhook.Store) webhook.Store) {
	owe(t, s, 50, span(40, 60, 1)...)
	owe(t, s, 50, 7, 900)
	s = reopen(t, s)
	wantOwed(t, s, 50, 3, 50, 51, 49)
	settle(t, s, 50, 50)
	wantOwed(t, s, 0, 100, append(append([]int64{7}, span(40, 49, 1)...), append(span(51, 60, 1), 900)...)...)
}

// owedBound: past bound ranges, Owe and Settle drop the ranges farthest from near (of two
// as far, the lower) and say how many ids they held, whatever the ids they were given;
// consecutive ids, a real burst, take one range however many they are.
func owedBound(t *testing.T, s webhook.Store, bound int) {
	b := int64(bound)
	near := 10*b + 10
	if d := owe(t, s, near, span(near-b, near+b-2, 2)...); d != 0 { // bound ranges, around near
		t.Fatalf("Owe of %d ranges dropped %d ids", bound, d)
	}
	if d := owe(t, s, near, span(5, 9, 1)...); d != 5 { // a range far below: the farthest
		t.Errorf("Owe past the bound dropped %d ids, want the 5 farthest", d)
	}
	if got := owed(t, s, near, 2*bound); len(got) != bound || slices.Contains(got, 5) {
		t.Errorf("after the first drop: %d owed (5 owed: %v), want the %d around near", len(got), slices.Contains(got, 5), bound)
	}
	// near+b+2 (b+2 above) goes first, then near-b and near+b, as far: the lower.
	if d := owe(t, s, near, near+b, near+b+2); d != 2 {
		t.Errorf("Owe of two more dropped %d ids, want 2", d)
	}
	wantOwed(t, s, near+b+2, 2, near+b, near+b-2)
	wantOwed(t, s, 0, 1, near-b+2)
	// Filling the gaps makes one range; a burst of 3×bound ids takes one more.
	if d := owe(t, s, near, span(near-b+3, near+b-1, 2)...); d != 0 {
		t.Errorf("Owe that merged the ranges dropped %d ids", d)
	}
	burst := 20 * b
	if d := owe(t, s, near, span(burst, burst+3*b-1, 1)...); d != 0 {
		t.Errorf("Owe of a burst of %d ids dropped %d", 3*b, d)
	}
	// Settling every other id of the burst's start splits it into bound ranges: one too
	// many, and the burst's top, the farthest, goes.
	top := burst + 2*b - 1
	if d := settle(t, s, near, span(burst+2, burst+2*b-2, 2)...); d != burst+3*b-top {
		t.Errorf("Settle past the bound dropped %d ids, want the burst's top (%d)", d, burst+3*b-top)
	}
	if got := owed(t, s, math.MaxInt64, 1); len(got) != 1 || got[0] != top-2 {
		t.Errorf("after the Settle: the highest owed is %v, want %d", got, top-2)
	}
}

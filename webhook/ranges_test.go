package webhook

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestIDRangesHoldWhatWasAddedAndNotRemoved: the set agrees with a plain set of ids through
// random adds, removes and takes, keeps its ranges sorted, disjoint and non-adjacent, and
// takes the lowest ids first.
func TestIDRangesHoldWhatWasAddedAndNotRemoved(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var s idRanges
	want := map[int64]bool{}
	for range 20_000 {
		id := r.Int64N(200)
		switch r.IntN(5) {
		case 0, 1, 2:
			s.add(id)
			want[id] = true
		case 3:
			s.remove(id)
			delete(want, id)
		default:
			for _, got := range s.take(3) {
				for low := range want {
					if low < got {
						t.Fatalf("took %d while %d was in the set", got, low)
					}
				}
				delete(want, got)
			}
		}
		for i, rg := range s.r {
			if rg.lo > rg.hi || (i > 0 && s.r[i-1].hi+1 >= rg.lo) {
				t.Fatalf("ranges %v: not sorted, disjoint and apart", s.r)
			}
		}
	}
	for id := range int64(200) {
		if s.has(id) != want[id] {
			t.Fatalf("has(%d) = %v, want %v", id, s.has(id), want[id])
		}
	}
	if s.len() != int64(len(want)) {
		t.Errorf("len %d, want %d", s.len(), len(want))
	}
}

// TestIDRangesKeepABurstInOneRange: 100,000 consecutive ids, added in any order, are one
// range.
func TestIDRangesKeepABurstInOneRange(t *testing.T) {
	var s idRanges
	ids := make([]int64, 100_000)
	for i := range ids {
		ids[i] = 500_000 + int64(i)
	}
	rand.Shuffle(len(ids), func(i, j int) { ids[i], ids[j] = ids[j], ids[i] })
	for _, id := range ids {
		s.add(id)
	}
	if s.ranges() != 1 || s.len() != 100_000 {
		t.Errorf("%d ranges holding %d ids, want 1 holding 100000", s.ranges(), s.len())
	}
}

// TestIDRangesDropTheFarthestFirst: when the set is full, the range farthest from the
// account's newest id goes, below or above it.
func TestIDRangesDropTheFarthestFirst(t *testing.T) {
	var s idRanges
	for _, id := range []int64{10, 11, 1000, 1001, 1002, 5000} {
		s.add(id)
	}
	if n := s.dropFarthest(1003); n != 1 || s.has(5000) {
		t.Errorf("dropped %d ids, %v left; want 5000 gone", n, s.r)
	}
	if n := s.dropFarthest(1003); n != 2 || !slices.Equal(s.take(10), []int64{1000, 1001, 1002}) {
		t.Errorf("dropped %d ids; want 10 and 11 gone", n)
	}
}

// TestIDRangesTakeTheNearestFirst: takeNear takes the ids nearest to a point first, above
// or below it, and leaves the rest.
func TestIDRangesTakeTheNearestFirst(t *testing.T) {
	var s idRanges
	for _, id := range []int64{1, 2, 3, 98, 103, 104, 900_000_000, 900_000_001} {
		s.add(id)
	}
	if got := s.takeNear(100, 4); !slices.Equal(got, []int64{98, 103, 104, 3}) {
		t.Errorf("takeNear(100, 4) = %v, want 98 103 104 3", got)
	}
	if got := s.take(10); !slices.Equal(got, []int64{1, 2, 900_000_000, 900_000_001}) {
		t.Errorf("left %v", got)
	}
}

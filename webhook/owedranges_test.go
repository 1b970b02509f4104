package webhook

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestOwedSetAgreesWithAPlainSet: through random Owe and Settle batches (few ids, applied
// one by one, and many, merged in one pass) and Trims, the set holds what a plain set of
// ids holds, as sorted, disjoint, never adjacent ranges; Nearest answers the ids by
// distance to near, the higher of two as near first; Trim drops whole ranges from the
// ends, the farther first, the lower of two as far.
func TestOwedSetAgreesWithAPlainSet(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	var s OwedSet
	want := map[int64]bool{}
	for step := range 3000 {
		batch := make([]int64, 1+r.IntN(40))
		for i := range batch {
			batch[i] = r.Int64N(400) - 5
		}
		near := r.Int64N(420) - 10
		switch r.IntN(7) {
		case 0, 1, 2:
			s.Owe(batch)
			for _, id := range batch {
				if id > 0 {
					want[id] = true
				}
			}
		case 3, 4:
			s.Settle(batch)
			for _, id := range batch {
				delete(want, id)
			}
		case 5:
			trimLikeAPlainSet(t, &s, want, near, r.IntN(s.Len()+1))
		}
		checkOwedSet(t, step, &s, want, near)
	}
}

// trimLikeAPlainSet trims s to keep ranges and checks it dropped those dropFarthest drops.
func trimLikeAPlainSet(t *testing.T, s *OwedSet, want map[int64]bool, near int64, keep int) {
	t.Helper()
	ref := idRanges{r: slices.Clone(s.r.r)}
	var refDropped int64
	for ref.ranges() > keep {
		refDropped += ref.dropFarthest(max(near, 0))
	}
	if got := s.Trim(near, keep); got != refDropped || !slices.Equal(s.r.r, ref.r) {
		t.Fatalf("Trim(%d, %d) dropped %d, left %v; want %d, %v", near, keep, got, s.r.r, refDropped, ref.r)
	}
	clear(want)
	for _, r := range ref.r {
		for id := r.lo; id <= r.hi; id++ {
			want[id] = true
		}
	}
}

func checkOwedSet(t *testing.T, step int, s *OwedSet, want map[int64]bool, near int64) {
	t.Helper()
	rs := s.Ranges()
	var n int
	for i, r := range rs {
		if r.Lo > r.Hi || r.Lo < 1 || i > 0 && rs[i-1].Hi >= r.Lo-1 {
			t.Fatalf("step %d: ranges %v", step, rs)
		}
		n += int(r.Hi - r.Lo + 1)
	}
	got := s.Nearest(near, len(want)+3)
	if n != len(want) || len(got) != len(want) {
		t.Fatalf("step %d: %d ids in ranges, %d answered, want %d", step, n, len(got), len(want))
	}
	d := func(id int64) int64 { return max(id-near, near-id) }
	for i, id := range got {
		if !want[id] {
			t.Fatalf("step %d: Nearest answered %d, not in the set", step, id)
		}
		if i > 0 && (d(got[i-1]) > d(id) || d(got[i-1]) == d(id) && got[i-1] < id) {
			t.Fatalf("step %d: Nearest(%d) answered %d before %d", step, near, got[i-1], id)
		}
	}
}

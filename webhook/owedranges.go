package webhook

import (
	"cmp"
	"slices"
)

// IDRange is the transaction ids from Lo to Hi, both included.
type IDRange struct{ Lo, Hi int64 }

// OwedSet holds the rules of a Store's ids owed a look (Store.Owe, Owed and Settle) over
// ranges of ids, kept sorted, disjoint and never adjacent. [MemoryStore] keeps one whole; a
// Store that keeps its ranges elsewhere (package sqlstore: rows of a table) loads those an
// operation can touch into an OwedSet, applies the operation and saves the difference
// between Ranges before and after, atomically. An operation touches the ranges that hold
// or border its ids (Owe, Settle), the ranges nearest to near on either side (Owed: n
// below or holding near, n above), or the farthest ranges at either end (Trim). The zero
// value is empty. Not safe for concurrent use.
type OwedSet struct {
	r idRanges
}

// NewOwedSet returns the set of the ids in ranges: in any order, merged where they overlap
// or touch. Ranges holding no id above 0 are left out.
func NewOwedSet(ranges []IDRange) *OwedSet {
	rs := make([]idRange, 0, len(ranges))
	for _, r := range ranges {
		if r.Hi >= max(r.Lo, 1) {
			rs = append(rs, idRange{max(r.Lo, 1), r.Hi})
		}
	}
	slices.SortFunc(rs, func(a, b idRange) int { return cmp.Compare(a.lo, b.lo) })
	return &OwedSet{r: idRanges{r: union(nil, rs)}}
}

// Ranges returns the set's ranges, lowest first.
func (o *OwedSet) Ranges() []IDRange {
	out := make([]IDRange, len(o.r.r))
	for i, r := range o.r.r {
		out[i] = IDRange{r.lo, r.hi}
	}
	return out
}

// Len is how many ranges the set keeps.
func (o *OwedSet) Len() int { return o.r.ranges() }

// inPlace is how many runs of ids Owe and Settle apply one by one, each a search and a
// move of the ranges above it; past it they rebuild the ranges in one pass.
const inPlace = 16

// Owe adds ids, those above 0.
func (o *OwedSet) Owe(ids []int64) { o.apply(ids, union, (*idRanges).add) }

// Settle removes ids.
func (o *OwedSet) Settle(ids []int64) { o.apply(ids, minus, (*idRanges).remove) }

// apply changes the set by the runs of ids: by each of their ids (each) when the runs are
// few, by all of them in one pass (all) when many.
func (o *OwedSet) apply(ids []int64, all func(set, runs []idRange) []idRange, each func(s *idRanges, id int64)) {
	runs := runsOf(ids)
	if len(runs) > inPlace {
		o.r.r = all(o.r.r, runs)
		return
	}
	for _, r := range runs {
		for id := r.lo; ; id++ {
			each(&o.r, id)
			if id == r.hi {
				break
			}
		}
	}
	if o.r.empty() {
		o.r.r = nil // give the array back
	}
}

// Nearest returns up to n ids of the set, the nearest to near first; of two as near, the
// higher first (ids are handed out in order: a new transaction's id is above the newest
// known). It removes nothing.
func (o *OwedSet) Nearest(near int64, n int) []int64 {
	near = max(near, 0) // ids are above 0: no distance overflows
	up, down := o.from(near)
	var out []int64
	for len(out) < n && (up.ok() || down.ok()) {
		if up.ok() && (!down.ok() || up.id-near <= near-down.id) {
			out = append(out, up.next())
		} else {
			out = append(out, down.next())
		}
	}
	return out
}

// from returns cursors on the ids at or above near, lowest first, and below it, highest
// first.
func (o *OwedSet) from(near int64) (up, down cursor) {
	rs := o.r.r
	i := o.r.find(near)
	up, down = cursor{rs: rs, i: i, step: 1}, cursor{rs: rs, i: i - 1, step: -1}
	if up.ok() {
		up.id = max(near, rs[i].lo)
		if rs[i].lo < near { // near-1 is in that range too
			down.i = i
		}
	}
	if down.ok() {
		down.id = min(near-1, rs[down.i].hi)
	}
	return up, down
}

// cursor walks a set's ids one way, a step at a time: up (step 1) or down (-1).
type cursor struct {
	rs   []idRange
	i    int   // the range of id; out of rs past the last id
	id   int64 // the next id
	step int64
}

func (c *cursor) ok() bool { return c.i >= 0 && c.i < len(c.rs) }

// next returns the next id and moves on, to the next range past the end of its own.
func (c *cursor) next() int64 {
	id, r := c.id, c.rs[c.i]
	switch {
	case c.step > 0 && id == r.hi:
		if c.i++; c.ok() {
			c.id = c.rs[c.i].lo
		}
	case c.step < 0 && id == r.lo:
		if c.i--; c.ok() {
			c.id = c.rs[c.i].hi
		}
	default:
		c.id += c.step
	}
	return id
}

// Trim drops the ranges farthest from near until keep are left, and returns how many ids
// they held: ids are handed out in order, so a real new transaction's id is close above
// near (the account's newest), and made-up ids far away go first. The farthest range is
// always at one end; of two as far, the lower goes first.
func (o *OwedSet) Trim(near int64, keep int) (dropped int64) {
	near = max(near, 0)
	rs := o.r.r
	lo, hi := 0, len(rs)
	for hi-lo > max(keep, 0) {
		first, last := rs[lo], rs[hi-1]
		if max(first.lo-near, near-first.hi, 0) >= max(last.lo-near, near-last.hi, 0) {
			dropped += first.hi - first.lo + 1
			lo++
		} else {
			dropped += last.hi - last.lo + 1
			hi--
		}
	}
	if lo > 0 || hi < len(rs) {
		o.r.r = append(rs[:0], rs[lo:hi]...)
	}
	if o.r.empty() {
		o.r.r = nil
	}
	return dropped
}

// runsOf returns the ids above 0 as sorted ranges, merged where they touch.
func runsOf(ids []int64) []idRange {
	sorted := slices.Sorted(slices.Values(ids))
	var runs []idRange
	for _, id := range sorted {
		switch {
		case id <= 0:
		case len(runs) > 0 && runs[len(runs)-1].hi >= id-1:
			runs[len(runs)-1].hi = id
		default:
			runs = append(runs, idRange{id, id})
		}
	}
	return runs
}

// union merges two sorted lists of disjoint ranges (each may touch its neighbours) into
// one, sorted, disjoint and never adjacent.
func union(a, b []idRange) []idRange {
	out := make([]idRange, 0, len(a)+len(b))
	for len(a) > 0 || len(b) > 0 {
		var next idRange
		if len(b) == 0 || len(a) > 0 && a[0].lo <= b[0].lo {
			next, a = a[0], a[1:]
		} else {
			next, b = b[0], b[1:]
		}
		if n := len(out); n > 0 && out[n-1].hi >= next.lo-1 {
			out[n-1].hi = max(out[n-1].hi, next.hi)
			continue
		}
		out = append(out, next)
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// minus returns the ids of a not in b, both sorted lists of disjoint ranges.
func minus(a, b []idRange) []idRange {
	var out []idRange
	for _, r := range a {
		for len(b) > 0 && b[0].hi < r.lo {
			b = b[1:]
		}
		out = append(out, cut(r, b)...)
	}
	return out
}

// cut returns what is left of r once the ranges of b are taken out of it; b is sorted,
// and none of it ends below r.
func cut(r idRange, b []idRange) []idRange {
	var out []idRange
	for _, c := range b {
		if c.lo > r.hi {
			break
		}
		if c.lo > r.lo {
			out = append(out, idRange{r.lo, c.lo - 1})
		}
		if c.hi >= r.hi {
			return out // nothing of r is left
		}
		r.lo = c.hi + 1
	}
	return append(out, r)
}

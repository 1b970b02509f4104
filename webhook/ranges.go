package webhook

import (
	"cmp"
	"slices"
	"sort"
)

// idRange is the transaction ids from lo to hi, both included.
type idRange struct{ lo, hi int64 }

// idRanges is a set of transaction ids kept as sorted, disjoint, non-adjacent ranges:
// the API hands ids out in order, so the ids of a burst of new transactions (or of a
// flood naming made-up ids one after another) take a few ranges, whatever their number.
// A 100,000-id backlog of consecutive ids is one range of 16 bytes. Not safe for
// concurrent use.
type idRanges struct {
	r []idRange
}

// find returns the index of the first range whose hi is at least id.
func (s *idRanges) find(id int64) int {
	return sort.Search(len(s.r), func(i int) bool { return s.r[i].hi >= id })
}

// has reports whether id is in the set.
func (s *idRanges) has(id int64) bool {
	i := s.find(id)
	return i < len(s.r) && s.r[i].lo <= id
}

// add puts id in the set, joining the ranges it touches.
func (s *idRanges) add(id int64) {
	i := s.find(id)
	switch {
	case i < len(s.r) && s.r[i].lo <= id:
		return // in already
	case i < len(s.r) && s.r[i].lo == id+1:
		s.r[i].lo = id
	case i > 0 && s.r[i-1].hi == id-1:
		s.r[i-1].hi = id
		return // s.r[i].lo > id+1: nothing to join
	default:
		s.r = slices.Insert(s.r, i, idRange{id, id})
		return
	}
	if i > 0 && s.r[i-1].hi == id-1 { // id joined two ranges
		s.r[i-1].hi = s.r[i].hi
		s.r = slices.Delete(s.r, i, i+1)
	}
}

// remove takes id out of the set, splitting the range it was in.
func (s *idRanges) remove(id int64) {
	i := s.find(id)
	if i == len(s.r) || s.r[i].lo > id {
		return
	}
	switch r := s.r[i]; {
	case r.lo == r.hi:
		s.r = slices.Delete(s.r, i, i+1)
	case r.lo == id:
		s.r[i].lo++
	case r.hi == id:
		s.r[i].hi--
	default:
		s.r[i].hi = id - 1
		s.r = slices.Insert(s.r, i+1, idRange{id + 1, r.hi})
	}
}

// take removes and returns up to n ids, the lowest first.
func (s *idRanges) take(n int) []int64 {
	var out []int64
	for len(out) < n && len(s.r) > 0 {
		r := &s.r[0]
		out = append(out, r.lo)
		if r.lo == r.hi {
			s.r = s.r[1:]
		} else {
			r.lo++
		}
	}
	if len(s.r) == 0 {
		s.r = nil // give the array back
	}
	return out
}

// takeNear removes and returns up to n ids, the nearest to near first.
func (s *idRanges) takeNear(near int64, n int) []int64 {
	var out []int64
	for len(out) < n && len(s.r) > 0 {
		i := s.find(near)
		var id int64
		switch {
		case i == len(s.r):
			id = s.r[i-1].hi
		case s.r[i].lo <= near:
			id = near
		case i == 0:
			id = s.r[0].lo
		case s.r[i].lo-near <= near-s.r[i-1].hi:
			id = s.r[i].lo
		default:
			id = s.r[i-1].hi
		}
		s.remove(id)
		out = append(out, id)
	}
	if len(s.r) == 0 {
		s.r = nil
	}
	return out
}

// distance is how far id is from near.
func distance(id, near int64) int64 { return max(id-near, near-id) }

// empty reports whether the set holds no id.
func (s *idRanges) empty() bool { return len(s.r) == 0 }

// ranges is how many ranges the set keeps: its memory is 16 bytes each.
func (s *idRanges) ranges() int { return len(s.r) }

// len is how many ids the set holds.
func (s *idRanges) len() int64 {
	var n int64
	for _, r := range s.r {
		n += r.hi - r.lo + 1
	}
	return n
}

// dropFarthest removes the range farthest from near (the newest id the account is known
// to have) and returns how many ids it held: ids are handed out in order, so a real new
// transaction's id is close above the account's newest, and made-up ids far away go
// first when the set is full.
func (s *idRanges) dropFarthest(near int64) int64 {
	if len(s.r) == 0 {
		return 0
	}
	far, at := int64(-1), 0
	for i, r := range s.r {
		d := max(r.lo-near, near-r.hi, 0)
		if d > far {
			far, at = d, i
		}
	}
	n := s.r[at].hi - s.r[at].lo + 1
	s.r = slices.Delete(s.r, at, at+1)
	return n
}

// splitFrom removes and returns the ids at or above id.
func (s *idRanges) splitFrom(id int64) idRanges {
	i := s.find(id)
	var out idRanges
	if i < len(s.r) && s.r[i].lo < id { // id falls within it: keep its lower part
		out.r = append(out.r, idRange{id, s.r[i].hi})
		s.r[i].hi = id - 1
		i++
	}
	out.r = append(out.r, s.r[i:]...)
	s.r = s.r[:i]
	if len(s.r) == 0 {
		s.r = nil
	}
	return out
}

// merge adds every id of o to s.
func (s *idRanges) merge(o idRanges) {
	if len(o.r) == 0 {
		return
	}
	all := slices.SortedFunc(slices.Values(append(slices.Clip(s.r), o.r...)), func(a, b idRange) int {
		return cmp.Compare(a.lo, b.lo)
	})
	out := all[:1]
	for _, r := range all[1:] {
		last := &out[len(out)-1]
		if r.lo <= last.hi+1 {
			last.hi = max(last.hi, r.hi)
			continue
		}
		out = append(out, r)
	}
	s.r = out
}

// all returns every id of s, lowest first.
func (s *idRanges) all() []int64 {
	var out []int64
	for _, r := range s.r {
		for id := r.lo; id <= r.hi; id++ {
			out = append(out, id)
		}
	}
	return out
}

package webhook

import (
	"container/heap"
	"slices"
	"testing"
	"time"

	escrow "github.com/escrowkit/escrow-go"
)

var floodT0 = time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)

func TestIDCacheForgetsAfterItsTimeAndBeyondItsSize(t *testing.T) {
	c := newIDCache(time.Minute, 3)
	c.add(1, floodT0)
	if !c.has(1, floodT0.Add(59*time.Second)) || c.has(1, floodT0.Add(time.Minute)) || c.has(2, floodT0) {
		t.Error("an id is remembered for its time only")
	}
	c.add(2, floodT0)
	c.add(3, floodT0)
	c.add(1, floodT0) // again: still one entry
	c.add(4, floodT0)
	if c.has(1, floodT0) || !c.has(2, floodT0) || !c.has(3, floodT0) || !c.has(4, floodT0) || len(c.until) != 3 {
		t.Errorf("past the size the oldest goes: %v", c.until)
	}
}

func TestShareBudgetBoundsWastedRequestsPerWindow(t *testing.T) {
	b := &shareBudget{share: 0.1}
	for range 20 {
		b.waste()
	}
	if ok, _ := b.allows(floodT0); !ok {
		t.Fatal("refused before any limit was stated")
	}
	b = &shareBudget{share: 0.1}
	b.observe(escrow.RateLimit{Limit: 100, Remaining: 90, Reset: floodT0.Add(time.Minute)})
	n := 0
	for {
		ok, retry := b.allows(floodT0.Add(time.Second))
		if !ok {
			if !retry.Equal(floodT0.Add(time.Minute)) {
				t.Errorf("retry at %v, want the window's end", retry)
			}
			break
		}
		b.waste()
		n++
	}
	if n != 10 {
		t.Errorf("wasted %d of a window of 100 at a share of 0.1", n)
	}
	b.observe(escrow.RateLimit{Limit: 100, Remaining: 50, Reset: floodT0.Add(2 * time.Minute)}) // the same window, seen later
	if ok, _ := b.allows(floodT0.Add(59 * time.Second)); ok {
		t.Error("allowed beyond the share before the window ended")
	}
	if ok, retry := b.allows(floodT0.Add(time.Minute)); !ok || !retry.IsZero() {
		t.Error("a new window allows requests again")
	}
}

// TestShareBudgetWithALimitOfOneOrNoReset: a stated limit of one allows one wasted
// request a window (at least one, whatever the share), and a limit stated without a reset
// still bounds the window: the budget asks again in a second, it does not start afresh.
func TestShareBudgetWithALimitOfOneOrNoReset(t *testing.T) {
	b := &shareBudget{share: 0.1}
	b.observe(escrow.RateLimit{Limit: 1, Reset: floodT0.Add(time.Minute)})
	if ok, _ := b.allows(floodT0); !ok {
		t.Fatal("a limit of one refused its one request")
	}
	b.waste()
	if ok, retry := b.allows(floodT0.Add(time.Second)); ok || !retry.Equal(floodT0.Add(time.Minute)) {
		t.Errorf("a limit of one after one wasted request: %v, retry %v; want refused until the window's end", ok, retry)
	}

	b = &shareBudget{share: 0.1}
	b.observe(escrow.RateLimit{Limit: 20}) // no RateLimit-Reset
	for range 2 {
		if ok, _ := b.allows(floodT0); !ok {
			t.Fatal("refused within the share")
		}
		b.waste()
	}
	if ok, retry := b.allows(floodT0.Add(time.Second)); ok || !retry.Equal(floodT0.Add(2*time.Second)) {
		t.Errorf("past the share with no reset stated: %v, retry %v; want refused, asked again a second later", ok, retry)
	}
}

func TestLaneIsFIFOAndGivesMemoryBack(t *testing.T) {
	var l lane
	for i := range int64(5000) {
		l.push(i)
	}
	for i := range int64(5000) {
		if got, ok := l.pop(); !ok || got != i {
			t.Fatalf("pop %d = %d %v", i, got, ok)
		}
	}
	if _, ok := l.pop(); ok || l.len() != 0 || cap(l.ids) > 4096 {
		t.Errorf("empty lane: len %d cap %d", l.len(), cap(l.ids))
	}
}

func TestLanesTakeABacklogInOrdersOfTheirOwn(t *testing.T) {
	const n = 5000 // past the lane's compaction, which happens once head passes 2,500
	var a, b lane
	for i := range int64(n) {
		a.push(i)
		b.push(i)
	}
	var order [2][]int64
	for k, l := range []*lane{&a, &b} {
		for {
			id, ok := l.take()
			if !ok {
				break
			}
			// Taken before every id pushed takeBlock or more places after it.
			if m := int64(len(order[k])); id > m+takeBlock-1 || id < m-takeBlock+1 {
				t.Fatalf("lane %d: id %d taken %dth", k, id, m)
			}
			order[k] = append(order[k], id)
		}
	}
	for k, o := range order {
		for i, id := range slices.Sorted(slices.Values(o)) {
			if id != int64(i) {
				t.Fatalf("lane %d took %d ids, not each of the %d once", k, len(o), n)
			}
		}
	}
	for _, part := range [][2]int{{0, n / 2}, {n / 2, n}} { // before and after the compaction
		same := 0
		for i := part[0]; i < part[1]; i++ {
			if order[0][i] == order[1][i] {
				same++
			}
		}
		if same > (part[1]-part[0])/8 {
			t.Errorf("ids %d to %d: two lanes with the same backlog took %d at the same place; want orders of their own", part[0], part[1], same)
		}
	}
}

func TestLaneHoldingOneIdAtATimeIsTakenInOrder(t *testing.T) {
	var l lane
	for i := range int64(100) {
		l.push(i)
		if got, ok := l.take(); !ok || got != i {
			t.Fatalf("take = %d %v; want %d, the only id waiting", got, ok, i)
		}
	}
}

func TestWakeupsComeDueInOrder(t *testing.T) {
	var w wakeups
	for _, s := range []int{3, 1, 2} {
		heap.Push(&w, wakeup{at: floodT0.Add(time.Duration(s) * time.Second), id: int64(s)})
	}
	ready, next := w.due(floodT0.Add(2 * time.Second))
	if len(ready) != 2 || ready[0].id != 1 || ready[1].id != 2 || !next.Equal(floodT0.Add(3*time.Second)) {
		t.Errorf("due: %v, next %v", ready, next)
	}
	if ready, next := w.due(floodT0.Add(time.Hour)); len(ready) != 1 || !next.IsZero() {
		t.Errorf("the rest: %v, next %v", ready, next)
	}
}

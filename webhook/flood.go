package webhook

import (
	"container/heap"
	"time"

	escrow "github.com/escrowkit/escrow-go"
)

// The defences against floods of deliveries naming transactions the handler never saw
// (forgeries, when no secret keeps them out). See doc.go, "Floods".

// negCache remembers, for a while, the ids the API answered 404 or 403: a delivery naming
// one again is dropped without a fetch. Entries expire (an id not found may be created
// later: ids are handed out in sequence) and the oldest go first past max. Not safe for
// concurrent use: the Handler holds its lock.
type negCache struct {
	ttl   time.Duration
	max   int
	until map[int64]time.Time
	order lane // insertion order, for eviction
}

func newNegCache(ttl time.Duration, max int) *negCache {
	return &negCache{ttl: ttl, max: max, until: make(map[int64]time.Time)}
}

func (c *negCache) add(id int64, now time.Time) {
	if _, ok := c.until[id]; !ok {
		c.order.push(id)
	}
	c.until[id] = now.Add(c.ttl)
	for len(c.until) > c.max {
		old, _ := c.order.pop()
		delete(c.until, old)
	}
}

func (c *negCache) has(id int64, now time.Time) bool {
	t, ok := c.until[id]
	return ok && now.Before(t)
}

// shareBudget bounds the requests spent on never-seen ids to a share of each rate-limit
// window of one endpoint, as the API's answers state it (RateLimit-Limit, RateLimit-Reset).
// The window counted ends at the first reset seen after it began; until a limit is known,
// bootstrap requests are allowed. Not safe for concurrent use.
type shareBudget struct {
	share     float64
	bootstrap int
	limit     int       // RateLimit-Limit; 0 until an answer states it
	end       time.Time // the counted window's end; zero until an answer states it
	spent     int
}

// take spends one request if the share allows it; otherwise it returns when to ask again.
func (b *shareBudget) take(now time.Time) (ok bool, retry time.Time) {
	if !b.end.IsZero() && !now.Before(b.end) {
		b.spent, b.end = 0, time.Time{}
	}
	allowed := b.bootstrap
	if b.limit > 0 {
		allowed = max(1, int(b.share*float64(b.limit)))
	}
	if b.spent >= allowed {
		if b.end.IsZero() {
			return false, now.Add(time.Second)
		}
		return false, b.end
	}
	b.spent++
	return true, time.Time{}
}

// observe notes an answer's rate-limit headers.
func (b *shareBudget) observe(rl escrow.RateLimit) {
	if rl.Limit > 0 {
		b.limit = rl.Limit
	}
	if b.end.IsZero() && !rl.Reset.IsZero() {
		b.end = rl.Reset
	}
}

// lane is a FIFO of transaction ids. The zero value is empty.
type lane struct {
	ids  []int64
	head int
}

func (l *lane) push(id int64) { l.ids = append(l.ids, id) }

func (l *lane) len() int { return len(l.ids) - l.head }

func (l *lane) pop() (int64, bool) {
	if l.head == len(l.ids) {
		return 0, false
	}
	id := l.ids[l.head]
	l.head++
	if l.head > 1024 && l.head*2 > len(l.ids) { // give the popped half back
		l.ids = append([]int64(nil), l.ids[l.head:]...)
		l.head = 0
	}
	return id, true
}

// wakeup is a transaction to be made ready again at a time (a retry, its pace), or the
// never-seen lane (id 0) once the share allows another fetch.
type wakeup struct {
	at time.Time
	id int64
}

// wakeups is a min-heap of wakeup by time.
type wakeups []wakeup

func (w wakeups) Len() int           { return len(w) }
func (w wakeups) Less(i, j int) bool { return w[i].at.Before(w[j].at) }
func (w wakeups) Swap(i, j int)      { w[i], w[j] = w[j], w[i] }
func (w *wakeups) Push(x any)        { *w = append(*w, x.(wakeup)) }
func (w *wakeups) Pop() any {
	old := *w
	x := old[len(old)-1]
	*w = old[:len(old)-1]
	return x
}

// due pops the wakeups due at now, and returns the time of the next one (zero if none).
func (w *wakeups) due(now time.Time) (ready []wakeup, next time.Time) {
	for w.Len() > 0 && !(*w)[0].at.After(now) {
		ready = append(ready, heap.Pop(w).(wakeup))
	}
	if w.Len() > 0 {
		next = (*w)[0].at
	}
	return ready, next
}

package webhook

import (
	"container/heap"
	mrand "math/rand/v2"
	"time"

	escrow "github.com/escrowkit/escrow-go"
)

// The scheduler's and the account's data structures: lanes of ids, the wakeups' heap, ids
// remembered for a while, and a share of a rate-limit window. The defences they serve
// against floods are in doc.go, "Floods".

// idCache remembers ids for a while, the oldest going first past max: the ids the API
// answered 404 or 403 (a delivery naming one again is dropped without a fetch; they
// expire, since an id not found may be created later: ids are handed out in sequence),
// and the ids the account is known to have. Not safe for concurrent use: the Handler
// holds its lock.
type idCache struct {
	ttl   time.Duration
	max   int
	until map[int64]time.Time
	order lane // insertion order, for eviction
}

func newIDCache(ttl time.Duration, max int) *idCache {
	return &idCache{ttl: ttl, max: max, until: make(map[int64]time.Time)}
}

func (c *idCache) add(id int64, now time.Time) {
	if _, ok := c.until[id]; !ok {
		c.order.push(id)
	}
	c.until[id] = now.Add(c.ttl)
	for len(c.until) > c.max {
		old, _ := c.order.pop()
		delete(c.until, old)
	}
}

func (c *idCache) has(id int64, now time.Time) bool {
	t, ok := c.until[id]
	return ok && now.Before(t)
}

// shareBudget bounds the requests for never-seen ids that were wasted, answered 404 or
// 403, to a share of each rate-limit window of one endpoint, as the API's answers state
// it (RateLimit-Limit, RateLimit-Reset): a flood of forged ids spends that share and
// waits for the next window, while the fetches of real new transactions cost it nothing.
// The window counted ends at the first reset seen after it began. Until an answer states
// a limit, nothing is bounded: the workers bound the requests in flight, and the first
// answer states it. Not safe for concurrent use.
type shareBudget struct {
	share float64
	limit int       // RateLimit-Limit; 0 until an answer states it
	end   time.Time // the counted window's end; zero until an answer states it
	spent int       // wasted requests in the window
}

// allows reports whether another request may be risked now; if not, it returns when to
// ask again.
func (b *shareBudget) allows(now time.Time) (ok bool, retry time.Time) {
	if !b.end.IsZero() && !now.Before(b.end) {
		b.spent, b.end = 0, time.Time{}
	}
	if b.limit > 0 && b.spent >= max(1, int(b.share*float64(b.limit))) {
		if b.end.IsZero() { // no reset stated: look again in a while
			return false, now.Add(time.Second)
		}
		return false, b.end
	}
	return true, time.Time{}
}

// waste counts a request that found nothing (answered 404 or 403, or no new fact).
func (b *shareBudget) waste() { b.spent++ }

// refund takes back a request counted by waste before it was made, which found something.
func (b *shareBudget) refund() { b.spent = max(b.spent-1, 0) }

// observe notes an answer's rate-limit headers.
func (b *shareBudget) observe(rl escrow.RateLimit) {
	if rl.Limit > 0 {
		b.limit = rl.Limit
	}
	if b.end.IsZero() && !rl.Reset.IsZero() {
		b.end = rl.Reset
	}
}

// lane is a FIFO of transaction ids, which take serves in blocks of its own order.
// The zero value is empty.
type lane struct {
	ids   []int64
	head  int
	block int // ids[head:block] are a block take shuffled
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
		l.block = max(0, l.block-l.head)
		l.head = 0
	}
	return id, true
}

// takeBlock is how many of a lane's oldest ids take shuffles together.
const takeBlock = 64

// take pops the next id of a backlog taken in an order of this handler's own: the
// oldest takeBlock ids (or all, if fewer wait) are shuffled when the previous block is
// used up, then taken in that order. Replicas behind one load balancer hold the same
// backlog (each gets some of every transaction's deliveries); taken oldest first by all,
// their workers would start on the same transactions at once, and all but one wait for
// that one's turn, then find its facts recorded. Taken in orders of their own, they
// mostly meet a transaction another replica has finished, a replay answered by one read.
// An id is taken before every id pushed takeBlock or more places after it; a lane that
// never holds more than one id (an idle receiver) is taken in order.
func (l *lane) take() (int64, bool) {
	if l.head >= l.block {
		l.block = min(len(l.ids), l.head+takeBlock)
		b := l.ids[l.head:l.block]
		mrand.Shuffle(len(b), func(i, j int) { b[i], b[j] = b[j], b[i] })
	}
	return l.pop()
}

// wakeup is a transaction to be made ready again at a time (a retry, its pace), or the
// never-seen lane (id 0) once the share allows another fetch.
type wakeup struct {
	at  time.Time
	id  int64
	gen uint64 // the queue's wait it was set for; a stale one is ignored
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

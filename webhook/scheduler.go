package webhook

import (
	"container/heap"
	"context"
	"errors"
	"log/slog"
	mrand "math/rand/v2"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	escrow "github.com/escrowkit/escrow-go"
)

// The scheduler decides when each transaction's work runs, on at most Options.Workers
// goroutines and one for the wakeups, started when there is work and ending when there is
// none: the number of goroutines does not grow with the transactions queued. A
// transaction's queue (txQueue) sits in one of
// four lanes while it waits for a worker, served in this order:
//
//   - ready: transactions the account is known to have (handed over before, found or
//     tracked by the reconciler, or found in the Store);
//   - unchecked: ids never seen in this process, not yet looked up in the Store (no API
//     call is spent on that);
//   - unseen: ids the Store does not know either, confirmed in pages by listings
//     (neverseen.go): a partner's by listings of its transactions naming them, another
//     account's by its list of transactions, newest first;
//   - unlisted: never-seen ids a listing did not name (a partner may be a party of a
//     transaction without being its partner; an id may be made up): each confirmed by a
//     fetch, while the never-seen share of the rate-limit window (Options.UnseenShare)
//     allows.
//
// Never-seen ids beyond MaxUnseen are owed a look without a queue of their own: they are
// kept as ranges of ids (idRanges) until the next listing moves them to the Store, where
// every replica's are (owed.go), never dropped but past MaxOwedRanges.
//
// Waits (a transaction's pace, a retry's backoff) are wakeups in a heap, not sleeping
// goroutines.

// qstate is where a transaction's queue is.
type qstate uint8

const (
	qIdle    qstate = iota // just made, not yet placed
	qReady                 // in its lane
	qRunning               // a worker is on it
	qWaiting               // a wakeup is set: its pace, or a retry's backoff
	qListing               // a never-seen id a listing under way asks about
)

// qkind is what the handler knows of a transaction: it decides the lane.
type qkind uint8

const (
	kindKnown     qkind = iota // the account has it
	kindUnchecked              // never seen here; the Store not yet asked
	kindUnseen                 // never seen here nor in the Store
	kindUnlisted               // never seen, and not named by a partner listing
	kinds
)

// scheduler holds what waits in this replica, one queue per transaction, and decides
// when each runs and on which worker: known transactions first, never-seen ids within
// their share (neverseen.go), a transaction's waits (its pace, a retry's backoff) as
// wakeups. A worker runs one try of a transaction's batch (confirmer.go) and decides what
// comes next (step).
type scheduler struct {
	opt  *Options
	log  *slog.Logger
	obs  Observer
	ctx  context.Context // ends when Shutdown gives up waiting
	wg   sync.WaitGroup  // the workers and the wakeups' goroutine
	conf *confirmer
	acct *account

	mu         sync.Mutex
	queues     map[int64]*txQueue // per transaction with work queued or under way
	closed     bool
	idle       chan struct{} // closed when the queues are empty (Flush)
	lanes      [kinds]lane   // ids ready for a worker, by qkind
	workers    int           // worker goroutines running
	unseen     int           // queues of never-seen ids (kindUnchecked and kindUnseen)
	later      wakeups       // queues set aside until a time
	scheduling bool          // the wakeups' goroutine runs
	kick       chan struct{} // tells it of an earlier wakeup
	known      *idCache      // ids the account has: handed over, reconciled, listed, in the Store
	newest     int64         // the newest id the account is known to have
	ns         neverSeen     // the never-seen ids owed a look, and their listings' pace
	stats      Stats         // UnseenDropped and NotFoundDropped
	depth      depthGauge    // the queue's depth, reported with s.mu released
}

func newScheduler(ctx context.Context, opt *Options, log *slog.Logger, conf *confirmer, acct *account) *scheduler {
	return &scheduler{
		opt: opt, log: log, obs: opt.Observer, ctx: ctx, conf: conf, acct: acct,
		queues: make(map[int64]*txQueue),
		kick:   make(chan struct{}, 1),
		known:  newIDCache(30*24*time.Hour, 100_000),
	}
}

// errClosed and errFull refuse work the handler cannot take.
var (
	errClosed = errors.New("webhook handler is shut down")
	errFull   = errors.New("webhook handler queue is full")
)

// place puts q in the lane of its kind and makes sure a worker will take it; once the
// handler is shutting down, a never-seen id is dropped instead (see Shutdown). s.mu held.
func (s *scheduler) place(id int64, q *txQueue) {
	if s.closed && q.kind >= kindUnseen {
		s.retire(id, q)
		return
	}
	q.state = qReady
	s.lanes[q.kind].push(id)
	s.spawn()
}

// spawn starts a worker if fewer than Workers run and there is work. s.mu held.
func (s *scheduler) spawn() {
	if s.workers >= s.opt.Workers || s.ctx.Err() != nil {
		return
	}
	s.workers++
	s.wg.Add(1)
	go s.worker()
}

// worker takes transactions until none is ready to be worked on now.
// The depth of the queue it changed is reported after each piece of work, with s.mu
// released.
func (s *scheduler) worker() {
	defer s.wg.Done()
	for {
		id, q, kind, ok := s.next()
		switch {
		case !ok:
			s.reportDepth()
			return
		case q == nil:
			s.listOwed()
		case kind == kindUnchecked:
			s.lookUp(id, q)
		default:
			s.step(id, q, askAlways)
		}
		s.reportDepth()
	}
}

// next returns the next queue to work on and its kind, known transactions first, or ends
// the worker (ok false) when nothing can be worked on now. A nil q asks for a listing.
func (s *scheduler) next() (id int64, q *txQueue, kind qkind, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for s.ctx.Err() == nil {
		id, q, ok = s.pop(kindKnown)
		if !ok {
			id, q, ok = s.pop(kindUnchecked)
		}
		if !ok && s.unseenWaiting() {
			var list bool
			if list, ok = s.unseenAllowed(); list {
				return 0, nil, kindUnseen, true // the worker lists the ids owed a look
			}
			if ok {
				id, q, ok = s.popFetch()
			}
		}
		if !ok {
			break
		}
		if q != nil {
			q.state = qRunning
			return id, q, q.kind, true
		}
	}
	s.workers--
	return 0, nil, 0, false
}

// pop takes the next id of a lane; q is nil for an id whose queue left the lane
// meanwhile (retired, evicted, or moved to another lane), which the caller skips. The
// never-seen lane is taken oldest first, as its oldest are evicted; the others in blocks
// of this handler's own order (lane.take), so that replicas holding the same backlog
// work on different transactions.
func (s *scheduler) pop(k qkind) (int64, *txQueue, bool) {
	take := s.lanes[k].take
	if k >= kindUnseen {
		take = s.lanes[k].pop
	}
	id, ok := take()
	if !ok {
		return 0, nil, false
	}
	q := s.queues[id]
	if q == nil || q.state != qReady || q.kind != k {
		return id, nil, true
	}
	return id, q, true
}

// unknown puts a never-seen id the Store does not know back, its batch's names queued
// again, in the lane of never-seen ids (unless it was listed meanwhile).
func (s *scheduler) unknown(id int64, q *txQueue, b *batch) {
	s.mu.Lock()
	defer s.mu.Unlock()
	q.b = nil
	q.events = addNames(b.events, q.events)
	if q.since.IsZero() {
		q.since = b.obs.received
	}
	if q.kind == kindUnchecked {
		q.kind = kindUnseen
	}
	s.place(id, q)
}

// know records that the account has the transaction. s.mu held.
func (s *scheduler) know(id int64, q *txQueue) {
	s.known.add(id, time.Now())
	s.newest = max(s.newest, id)
	if q != nil && q.kind != kindKnown {
		q.kind = kindKnown
		s.unseen--
	}
}

// step runs one try of the queue's batch (making the batch from what was queued if none
// is under way) and decides what comes next: done, a wait for the transaction's pace, a
// retry after a backoff, or giving up. askIfKnown leases the transaction only if the
// Store knows it (lookUp).
func (s *scheduler) step(id int64, q *txQueue, ask leaseAsk) {
	b := s.take(id, q)
	if b == nil {
		return
	}
	b.ask = ask
	paced, err := s.conf.try(b)
	if b.turn == turnUnknown {
		s.unknown(id, q, b)
		return
	}
	if b.route == routeListing && err == nil {
		s.askListing(id, q)
		return
	}
	if b.tx != nil || (ask == askIfKnown && err == nil) {
		s.mu.Lock()
		s.know(id, q)
		s.mu.Unlock()
	}
	switch {
	case err == nil && paced <= 0:
		s.finish(id, q)
	case err == nil: // waiting for the transaction's pace is not an attempt
		s.mu.Lock()
		s.wait(id, q, paced, waitPace)
		s.mu.Unlock()
	case q.attempt >= s.opt.MaxAttempts || s.ctx.Err() != nil:
		s.log.Error("escrow webhook: giving up; the next reconciliation will hand over what is missing",
			"transaction_id", b.id, "events", b.events, "attempts", q.attempt, "error", err)
		s.conf.giveUp(b)
		s.conf.observeGivenUp(b)
		s.finish(id, q)
	default:
		wait := min(s.opt.RetryWait<<min(q.attempt-1, 20), s.opt.MaxRetryWait)
		wait = wait/2 + mrand.N(wait/2+1) // jitter, so that failing transactions spread out
		var rle *escrow.RateLimitError
		if errors.As(err, &rle) {
			wait = max(wait, rle.RetryAfter) // the client knows when the allowance is back
		}
		s.log.Info("escrow webhook: retrying", "transaction_id", b.id, "events", b.events, "attempt", q.attempt, "wait", wait, "error", err)
		s.obs.Retry(s.ctx, Retry{TransactionID: b.id, Attempt: q.attempt, Wait: wait, Err: err})
		s.mu.Lock()
		q.attempt++
		s.wait(id, q, wait, waitRetry)
		s.mu.Unlock()
	}
}

// take returns the queue's batch under way, with what arrived during its wait, or makes
// one of what was queued; nil (and the queue retired) when nothing was.
func (s *scheduler) take(id int64, q *txQueue) *batch {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case q.b == nil && !q.pending():
		s.retire(id, q)
	case q.b == nil:
		q.b = &batch{id: id, q: q, events: q.events, tx: q.tx, fetch: (len(q.events) > 0 && !q.listed) || q.tx == nil, listed: q.listed, tracked: q.recheck, obs: batchObservation{received: q.since}}
		q.events, q.tx, q.recheck, q.listed, q.owed, q.attempt, q.since = nil, nil, false, false, false, 1, time.Time{}
	case len(q.events) > 0 || q.recheck: // arrived during the wait: they join the batch
		q.b.events, q.b.fetch = addNames(q.b.events, q.events), true
		q.b.tracked = q.b.tracked || q.recheck
		q.events, q.recheck = nil, false
	}
	if q.b != nil {
		q.b.kind = q.kind
	}
	return q.b
}

// finish ends the queue's batch: the queue goes back to its lane if more came meanwhile,
// or is retired.
func (s *scheduler) finish(id int64, q *txQueue) {
	s.mu.Lock()
	defer s.mu.Unlock()
	q.b = nil
	if q.kind != kindKnown && q.pending() && s.acct.refused(id, time.Now()) {
		s.stats.NotFoundDropped++ // delivered again while the fetch answered 404 or 403
		q.events, q.recheck = nil, false
	}
	if q.pending() && s.ctx.Err() == nil {
		s.place(id, q)
		return
	}
	s.retire(id, q)
}

// retire forgets a queue with nothing left to do. s.mu held.
func (s *scheduler) retire(id int64, q *txQueue) {
	delete(s.queues, id)
	if q.kind != kindKnown {
		s.unseen--
	}
	s.signalIdle()
}

// waitReason is why a queue is set aside.
type waitReason uint8

const (
	waitRetry waitReason = iota // a retry's backoff: deliveries join the retry
	waitPace                    // the transaction's pace: a delivery ends the wait
)

// wait sets the queue aside for d. A delivery that arrives during a pace's wait makes it
// ready at once: it may bring a name that need not wait. s.mu held.
func (s *scheduler) wait(id int64, q *txQueue, d time.Duration, why waitReason) {
	q.state, q.waiting = qWaiting, why
	q.gen++
	s.wakeAt(time.Now().Add(d), id, q.gen)
}

// wakeAt sets a wakeup, starting the scheduler if it does not run. id 0 is the
// never-seen lane's. s.mu held.
func (s *scheduler) wakeAt(at time.Time, id int64, gen uint64) {
	heap.Push(&s.later, wakeup{at: at, id: id, gen: gen})
	if !s.scheduling {
		s.scheduling = true
		s.wg.Add(1)
		go s.schedule()
		return
	}
	select {
	case s.kick <- struct{}{}:
	default:
	}
}

// schedule makes queues ready when their wakeups come due, and ends when none is left.
func (s *scheduler) schedule() {
	defer s.wg.Done()
	t := time.NewTimer(time.Hour)
	defer t.Stop()
	for {
		s.mu.Lock()
		due, next := s.later.due(time.Now())
		for _, w := range due {
			s.wake(w)
		}
		if next.IsZero() || s.ctx.Err() != nil {
			s.scheduling = false
			s.mu.Unlock()
			s.reportDepth()
			return
		}
		s.mu.Unlock()
		s.reportDepth()
		t.Reset(time.Until(next))
		select {
		case <-s.ctx.Done():
		case <-t.C:
		case <-s.kick:
		}
	}
}

// wake makes a wakeup's queue ready, unless it is stale; the never-seen lane's lets the
// workers try it again. s.mu held.
func (s *scheduler) wake(w wakeup) {
	if w.id == 0 {
		s.spawnFor()
		return
	}
	if q := s.queues[w.id]; q != nil && q.state == qWaiting && q.gen == w.gen {
		s.place(w.id, q)
	}
}

// queueOf returns the transaction's queue, made if need be (newQueue); what the
// reconciler sends tells that the account has the transaction. s.mu held.
func (s *scheduler) queueOf(id int64, a arrival) (*txQueue, error) {
	q := s.queues[id]
	if q == nil {
		return s.newQueue(id, a)
	}
	if a.reconciled() && q.kind != kindKnown {
		s.know(id, q)
		if q.state == qReady { // into the known lane; its old place is skipped
			s.place(id, q)
		}
	}
	return q, nil
}

// newQueue makes the queue of a transaction not queued yet, in the lane its kind says,
// or returns nil when the delivery takes no queue: an id the API answered 404 or 403
// lately is dropped, a never-seen id beyond MaxUnseen is owed a look (owe). err is
// errFull when known transactions fill MaxQueued. s.mu held.
func (s *scheduler) newQueue(id int64, a arrival) (*txQueue, error) {
	now, known := time.Now(), a.reconciled()
	if known || s.known.has(id, now) {
		if len(s.queues)-s.unseen >= s.opt.MaxQueued {
			return nil, errFull
		}
		q := &txQueue{kind: kindKnown}
		s.queues[id] = q
		if known {
			s.known.add(id, now)
		}
		s.depthChanged()
		return q, nil
	}
	if s.acct.refused(id, now) {
		s.stats.NotFoundDropped++
		return nil, nil
	}
	if !s.ns.looked { // the first never-seen id since the start: what did the Store keep owed?
		s.ns.looked, s.ns.storeOwes = true, true
	}
	if s.unseen >= s.opt.MaxUnseen {
		s.owe(id)
		s.spawnFor()
		return nil, nil
	}
	s.ns.owed.remove(id) // its queue confirms it
	s.ns.unlisted.remove(id)
	q := &txQueue{kind: kindUnchecked}
	s.queues[id] = q
	s.unseen++
	s.depthChanged()
	return q, nil
}

// close stops taking work and leaves the never-seen ids still waiting owed a look in
// the Store (owed.go), without their names: another replica, or this one after a
// restart, lists them.
func (s *scheduler) close() {
	s.mu.Lock()
	s.closed = true
	ids, names := s.takeAllWaiting()
	near := s.newest
	s.dropUnseen()
	s.mu.Unlock()
	reportDropped(s.ctx, s.obs, names)
	s.reportDepth()
	if len(ids) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(s.ctx), 5*time.Second)
	defer cancel()
	if _, err := s.opt.Store.Owe(ctx, ids, near); err != nil {
		s.log.Warn("escrow webhook: the never-seen ids waiting at shutdown are not owed in the Store; the next reconciliation finds the real ones", "ids", len(ids), "error", err)
	}
}

// abandon forgets the work left when the handler shut down, so that Flush returns.
func (s *scheduler) abandon() {
	s.mu.Lock()
	clear(s.queues)
	s.lanes, s.later, s.unseen = [kinds]lane{}, nil, 0
	s.signalIdle()
	s.mu.Unlock()
	s.reportDepth()
}

// txQueue is what waits for one transaction in this replica: the coalesced deliveries
// and a state the reconciler read. The pace of its fetches is kept in the Store.
type txQueue struct {
	events  []escrow.EventName  // distinct delivered names, in arrival order
	tx      *escrow.Transaction // read by the reconciler, nil if none
	recheck bool                // the reconciler asks for a fetch of a tracked transaction

	b       *batch // the batch under way (taken from the above), nil if none
	attempt int    // of b
	state   qstate
	kind    qkind
	waiting waitReason // why it waits, in qWaiting
	listed  bool       // tx was listed after the deliveries came: it confirms them unfetched
	owed    bool       // a never-seen id owed a look, taken with no delivery kept: fetch it
	asked   int        // len(events) when a listing asked about it: those it confirms
	gen     uint64     // counts the waits, so that a stale wakeup is ignored
	since   time.Time  // when the oldest delivery waiting arrived, for the Observer
}

func (q *txQueue) pending() bool { return len(q.events) > 0 || q.tx != nil || q.recheck || q.owed }

// arrival is what comes to a transaction's queue: a delivered name, a state the
// reconciler read, or the reconciler's request to fetch a tracked transaction again.
type arrival struct {
	name    escrow.EventName
	tx      *escrow.Transaction
	recheck bool
}

// reconciled reports whether the reconciler sent it: then the account has the transaction.
func (a arrival) reconciled() bool { return a.tx != nil || a.recheck }

// deliver queues a delivered name. A delivery of a never-seen id may be dropped (see
// newQueue).
func (s *scheduler) deliver(ctx context.Context, id int64, name escrow.EventName) error {
	return s.enqueue(ctx, id, arrival{name: name})
}

// reconciled queues a state the reconciler read.
func (s *scheduler) reconciled(tx *escrow.Transaction) error {
	return s.enqueue(s.ctx, tx.ID, arrival{tx: tx})
}

// recheck queues the reconciler's request to fetch a tracked transaction.
func (s *scheduler) recheck(id int64) error {
	return s.enqueue(s.ctx, id, arrival{recheck: true})
}

// enqueue adds what arrived to the transaction's queue and has a worker take it. The
// Observer hears of a delivery decided as it arrived after s.mu is released: an observer
// that blocks holds up this delivery's answer, never the other deliveries nor the workers.
func (s *scheduler) enqueue(ctx context.Context, id int64, a arrival) error {
	s.mu.Lock()
	out, err := s.queue(id, a)
	s.mu.Unlock()
	s.reportDepth()
	if out != "" {
		reportArrival(ctx, s.obs, id, a.name, out, http.StatusOK)
	}
	return err
}

// queue is enqueue's work under s.mu. out is the outcome of a delivery decided as it
// arrived (dropped, or coalesced with one waiting), "" for one queued.
func (s *scheduler) queue(id int64, a arrival) (out DeliveryOutcome, err error) {
	if s.closed {
		return "", errClosed
	}
	q, err := s.queueOf(id, a)
	if q == nil {
		if err == nil && a.name != "" { // dropped: see newQueue
			out = DeliveryDropped
		}
		return out, err
	}
	if a.tx != nil {
		q.tx = a.tx
	}
	q.recheck = q.recheck || a.recheck
	if a.name != "" {
		out = queuedOutcome(q, a.name)
		q.events = addNames(q.events, []escrow.EventName{a.name})
		q.listed = false // a state listed before may not show it
	}
	if q.state == qIdle || (q.state == qWaiting && q.waiting == waitPace && a.name != "") {
		s.place(id, q)
	}
	return out, nil
}

// signalIdle wakes Flush once nothing is pending, and notes the transactions with work
// left for the Observer (depthChanged). s.mu must be held.
func (s *scheduler) signalIdle() {
	s.depthChanged()
	if len(s.queues) == 0 && s.idle != nil {
		close(s.idle)
		s.idle = nil
	}
}

// depthGauge carries the queue's depth from where it changes, under s.mu, to the Observer,
// called with s.mu released: an observer that blocks or panics while the lock is held
// would stall or deadlock every delivery.
type depthGauge struct {
	n atomic.Int64 // len(s.queues), stored under s.mu
	// mu is held by the goroutine reporting; the others leave the report to it, so that an
	// observer that blocks holds up one goroutine, not each that changes the depth.
	mu       sync.Mutex
	reported atomic.Int64 // the depth last reported
}

// depthChanged notes the depth of the queue for the next reportDepth. s.mu held.
func (s *scheduler) depthChanged() { s.depth.n.Store(int64(len(s.queues))) }

// reportDepth reports the depth noted, if it changed since the last report. s.mu must not
// be held. The goroutine reporting reads the depth again after each report and after it
// lets go, so that the Observer's last word is the depth now, whoever changed it.
func (s *scheduler) reportDepth() {
	g := &s.depth
	for g.n.Load() != g.reported.Load() && g.mu.TryLock() {
		s.reportNoted()
		g.mu.Unlock()
	}
}

// settleDepth waits for a report of the depth under way and makes the one still owed, so
// that the Observer has heard the depth as it is now when Flush returns. s.mu must not be
// held.
func (s *scheduler) settleDepth() {
	s.depth.mu.Lock()
	defer s.depth.mu.Unlock()
	s.reportNoted()
}

// reportNoted reports the depth noted until the report is the depth now. s.depth.mu held.
func (s *scheduler) reportNoted() {
	g := &s.depth
	for n := g.n.Load(); n != g.reported.Load(); n = g.n.Load() {
		g.reported.Store(n)
		s.obs.QueueDepth(s.ctx, int(n))
	}
}

// flush waits until every queue is empty, or ctx ends; the Observer has heard the depth
// by then (settleDepth), though the goroutine that emptied the queues reports it after it
// lets go of s.mu.
func (s *scheduler) flush(ctx context.Context) error {
	s.mu.Lock()
	if len(s.queues) == 0 {
		s.mu.Unlock()
		s.settleDepth()
		return nil
	}
	if s.idle == nil {
		s.idle = make(chan struct{})
	}
	idle := s.idle
	s.mu.Unlock()
	select {
	case <-idle:
		s.settleDepth()
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// queuedOutcome notes when a delivery joins the transaction's queue (s.mu held) and
// returns the outcome of one that adds nothing to it: a duplicate of a name waiting, or
// dropped when the queue holds as many names as a batch keeps; "" for the others.
func queuedOutcome(q *txQueue, name escrow.EventName) DeliveryOutcome {
	if q.since.IsZero() {
		q.since = time.Now()
	}
	switch {
	case slices.Contains(q.events, name):
		return DeliveryDuplicate
	case len(q.events) >= MaxNames:
		return DeliveryDropped
	}
	return ""
}

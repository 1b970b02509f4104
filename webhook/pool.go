package webhook

import (
	"cmp"
	"container/heap"
	"errors"
	mrand "math/rand/v2"
	"slices"
	"time"

	escrow "github.com/escrowkit/escrow-go"
)

// The handler's work is done by at most Options.Workers goroutines and one scheduler,
// started when there is work and ending when there is none: the number of goroutines does
// not grow with the transactions queued. A transaction's queue (txQueue) sits in one of
// four lanes while it waits for a worker, served in this order:
//
//   - ready: transactions the account is known to have (handed over before, found or
//     tracked by the reconciler, or found in the Store);
//   - unchecked: ids never seen in this process, not yet looked up in the Store (no API
//     call is spent on that);
//   - unseen: ids the Store does not know either: a partner's are confirmed in pages by
//     listings of its transactions naming them; an account that is no partner confirms
//     each by a fetch, while the never-seen share of the rate-limit window
//     (Options.UnseenShare) allows;
//   - unlisted: a partner's never-seen ids a listing did not name (the partner may be a
//     party of a transaction without being its partner): each confirmed by a fetch within
//     the share.
//
// Never-seen ids beyond MaxUnseen are owed a look without a queue of their own: they are
// kept as ranges of ids (idRanges), listed or fetched after the queued ones, never dropped
// but past maxOwedRanges.
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

// maxOwedRanges bounds the ranges of never-seen ids owed a look (16 bytes each): past it
// the range farthest from the account's newest transaction is dropped (idRanges).
const maxOwedRanges = 100_000

// workersDefault sets Options.Workers: the Store's connections if it states them, else 8.
func workersDefault(opt *Options) {
	if opt.Workers > 0 {
		return
	}
	opt.Workers = 8
	if p, ok := opt.Store.(Pooled); ok && p.MaxConns() > 0 {
		opt.Workers = p.MaxConns()
	}
}

// floodDefaults sets the defaults of the options of never-seen ids.
func floodDefaults(opt *Options) {
	if opt.MaxUnseen <= 0 {
		opt.MaxUnseen = 1_000
	}
	if opt.UnseenShare <= 0 || opt.UnseenShare > 1 {
		opt.UnseenShare = 0.1
	}
	if opt.ClaimShare <= 0 || opt.ClaimShare > 1 {
		opt.ClaimShare = 0.2
	}
}

// place puts q in the lane of its kind and makes sure a worker will take it; once the
// handler is shutting down, a never-seen id is dropped instead (see Shutdown). h.mu held.
func (h *Handler) place(id int64, q *txQueue) {
	if h.closed && q.kind >= kindUnseen {
		h.retire(id, q)
		return
	}
	q.state = qReady
	h.lanes[q.kind].push(id)
	h.spawn()
}

// spawn starts a worker if fewer than Workers run and there is work. h.mu held.
func (h *Handler) spawn() {
	if h.workers >= h.opt.Workers || h.ctx.Err() != nil {
		return
	}
	h.workers++
	h.wg.Add(1)
	go h.worker()
}

// worker takes transactions until none is ready to be worked on now.
func (h *Handler) worker() {
	defer h.wg.Done()
	for {
		id, q, kind, ok := h.next()
		switch {
		case !ok:
			return
		case q == nil:
			h.listOwed()
		case kind == kindUnchecked:
			h.lookUp(id, q)
		default:
			h.step(id, q, false)
		}
	}
}

// next returns the next queue to work on and its kind, known transactions first, or ends
// the worker (ok false) when nothing can be worked on now. A nil q asks for a listing.
func (h *Handler) next() (id int64, q *txQueue, kind qkind, ok bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for h.ctx.Err() == nil {
		id, q, ok = h.pop(kindKnown)
		if !ok {
			id, q, ok = h.pop(kindUnchecked)
		}
		if !ok && h.unseenWaiting() {
			var list bool
			if list, ok = h.unseenAllowed(); list {
				return 0, nil, kindUnseen, true // the worker lists the ids owed a look
			}
			if ok {
				id, q, ok = h.popFetch()
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
	h.workers--
	return 0, nil, 0, false
}

// pop takes the next id of a lane; q is nil for an id whose queue left the lane
// meanwhile (retired, evicted, or moved to another lane), which the caller skips. The
// never-seen lane is taken oldest first, as its oldest are evicted; the others in blocks
// of this handler's own order (lane.take), so that replicas holding the same backlog
// work on different transactions.
func (h *Handler) pop(k qkind) (int64, *txQueue, bool) {
	take := h.lanes[k].take
	if k >= kindUnseen {
		take = h.lanes[k].pop
	}
	id, ok := take()
	if !ok {
		return 0, nil, false
	}
	q := h.queues[id]
	if q == nil || q.state != qReady || q.kind != k {
		return id, nil, true
	}
	return id, q, true
}

// mayList reports whether the account may be a partner: not found not to be. h.mu held.
func (h *Handler) mayList() bool { return h.partner == nil || *h.partner }

// listable reports whether never-seen ids wait that a listing may confirm. h.mu held.
func (h *Handler) listable() bool {
	return h.mayList() && (h.lanes[kindUnseen].len() > 0 || !h.owed.empty())
}

// fetchable reports whether never-seen ids wait for a fetch of their own. h.mu held.
func (h *Handler) fetchable() bool {
	return h.lanes[kindUnlisted].len() > 0 || !h.unlisted.empty() ||
		(!h.mayList() && (h.lanes[kindUnseen].len() > 0 || !h.owed.empty()))
}

// unseenWaiting reports whether never-seen ids wait for a listing or a fetch. h.mu held.
func (h *Handler) unseenWaiting() bool { return h.listable() || h.fetchable() }

// unseenAllowed reports what the never-seen ids allow now: a partner's listing of those
// waiting (list), at most one at a time and, after one that named few of them, a
// listEvery apart; or a fetch within the share (ok). If neither, it sets a wakeup for
// when one will be. h.mu held.
func (h *Handler) unseenAllowed() (list, ok bool) {
	now := time.Now()
	if h.listable() && !h.listing {
		if !now.Before(h.listAt) {
			h.listing = true
			return true, false
		}
		if !h.listWake.Equal(h.listAt) {
			h.listWake = h.listAt
			h.wakeAt(h.listAt, 0, 0)
		}
	}
	if !h.fetchable() || now.Before(h.unseenAt) {
		return false, false
	}
	ok, retry := h.budget.allows(now)
	if !ok {
		h.unseenAt = retry
		h.wakeAt(retry, 0, 0)
	}
	return false, ok
}

// popFetch takes the next never-seen id to be confirmed by a fetch of its own: queued ones
// first, then those owed a look, for which it makes a queue. h.mu held.
func (h *Handler) popFetch() (int64, *txQueue, bool) {
	lanes := []qkind{kindUnlisted}
	if !h.mayList() {
		lanes = append(lanes, kindUnseen)
	}
	for _, k := range lanes {
		if h.lanes[k].len() > 0 {
			return h.pop(k)
		}
	}
	var ids []int64
	if ids = h.unlisted.take(1); len(ids) == 0 && !h.mayList() {
		ids = h.owed.take(1)
	}
	if len(ids) == 0 {
		return 0, nil, false
	}
	if h.queues[ids[0]] != nil {
		return ids[0], nil, true // queued meanwhile: confirmed with its queue
	}
	q := &txQueue{kind: kindUnlisted, owed: true, state: qReady}
	h.queues[ids[0]] = q
	h.unseen++
	return ids[0], q, true
}

// Listing a partner's transactions by id (GET /partner/transactions?ids=…) confirms a
// page of never-seen ids in one call, on an endpoint of its own: a real transaction is
// among the answer, with its state, and needs no fetch of its own. A listing that named
// at least half of its ids (a burst of new transactions) is followed by the next a
// listSoon later (ten pages, a thousand ids, a second); one that named fewer (a flood of
// made-up ids) by the next a listEvery later.
const (
	listEvery = time.Second
	listSoon  = 100 * time.Millisecond
	listPage  = 100
)

// owe keeps id as owed a look, without a queue (past MaxUnseen). h.mu held.
func (h *Handler) owe(id int64) {
	h.owed.add(id)
	for h.owed.ranges()+h.unlisted.ranges() > maxOwedRanges {
		from := &h.owed
		if h.owed.empty() {
			from = &h.unlisted
		}
		h.stats.UnseenDropped += from.dropFarthest(h.newest)
	}
}

// listWanted takes the never-seen ids the next listing asks about out of their lane and
// set (a queued one is qListing while the listing is under way): the page of those
// nearest to the account's newest transaction, queued or owed a look. Ids are handed out
// in order, so a real new transaction's is just above the newest: however many made-up
// ids wait, it is in the next listing. h.mu held.
func (h *Handler) listWanted() (queued, owed []int64) {
	var waiting []int64
	for {
		id, q, ok := h.pop(kindUnseen)
		if !ok {
			break
		}
		if q != nil {
			waiting = append(waiting, id)
		}
	}
	near := func(a, b int64) int { return cmp.Compare(distance(a, h.newest), distance(b, h.newest)) }
	sorted := slices.SortedFunc(slices.Values(waiting), near)
	nearest := h.owed.takeNear(h.newest, listPage) // nearest first
	q, o := 0, 0
	for q+o < listPage && (q < len(sorted) || o < len(nearest)) {
		if o == len(nearest) || (q < len(sorted) && near(sorted[q], nearest[o]) <= 0) {
			q++
		} else {
			o++
		}
	}
	for _, id := range nearest[o:] { // the farther go back
		h.owed.add(id)
	}
	chosen := make(map[int64]bool, q)
	for _, id := range sorted[:q] {
		chosen[id] = true
	}
	for _, id := range waiting { // in the lane's order: a listing that fails keeps it
		if q := h.queues[id]; chosen[id] {
			q.state, q.asked = qListing, len(q.events)
			queued = append(queued, id)
		} else {
			h.lanes[kindUnseen].push(id)
		}
	}
	return queued, nearest[:o]
}

// listOwed lists the partner's transactions among the never-seen ids waiting: those named
// become known, with the state listed (read after their deliveries came, so no fetch is
// needed); those not named are left to a fetch of their own within the share. An account
// that is not a partner is noted, and its ids are fetched.
func (h *Handler) listOwed() {
	h.mu.Lock()
	queued, owed := h.listWanted()
	h.mu.Unlock()
	ids := append(slices.Clone(queued), owed...)
	var page *escrow.TransactionCursorList
	var err error
	if len(ids) > 0 {
		page, err = h.client.Partner.Transactions(h.ctx, &escrow.PartnerTransactionsOptions{IDs: ids, Limit: len(ids)})
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.listing = false
	h.listAt = time.Now().Add(listEvery)
	switch {
	case errors.Is(err, escrow.ErrForbidden):
		h.partner = new(bool) // not a partner: its never-seen ids are fetched
		h.unlist(queued, owed)
	case err != nil:
		h.log.Debug("escrow webhook: listing never-seen transactions failed", "error", err)
		h.unlist(queued, owed)
	case page == nil: // nothing was left to ask about
		h.unlist(queued, owed)
	default:
		h.partner = &[]bool{true}[0]
		h.afterListing(queued, owed, h.listed(page.Transactions))
	}
	h.spawnFor()
}

// unlist puts the ids of a listing that failed back where they waited: the queued in their
// lane, the others in the set owed a look. h.mu held.
func (h *Handler) unlist(queued, owed []int64) {
	for _, id := range queued {
		if q := h.queues[id]; q != nil && q.state == qListing {
			h.place(id, q) // back in its lane, for the next listing or a fetch
		}
	}
	for _, id := range owed {
		h.owed.add(id)
	}
}

// afterListing leaves the ids a listing did not name to a fetch of their own, and lets the
// next listing come at once after one that named at least half of its ids. h.mu held.
func (h *Handler) afterListing(queued, owed []int64, named map[int64]bool) {
	for _, id := range queued {
		if q := h.queues[id]; !named[id] && q != nil && q.state == qListing {
			if q.kind != kindKnown { // the reconciler may have found it meanwhile
				q.kind = kindUnlisted // the listing cannot tell: a fetch of its own
			}
			h.place(id, q)
		}
	}
	for _, id := range owed {
		if !named[id] {
			h.unlisted.add(id)
		}
	}
	if 2*len(named) >= len(queued)+len(owed) {
		h.listAt = time.Now().Add(listSoon) // a burst of real ones: the next page soon
	}
}

// listed takes a listing's transactions: queued never-seen ids become known with the
// state listed; ids owed a look without a queue are queued with it, to be handed over as
// the reconciler's would be. It returns the ids named. h.mu held.
func (h *Handler) listed(txs []escrow.Transaction) map[int64]bool {
	now := time.Now()
	named := make(map[int64]bool, len(txs))
	for i := range txs {
		tx := &txs[i]
		named[tx.ID] = true
		h.known.add(tx.ID, now)
		h.newest = max(h.newest, tx.ID)
		q := h.queues[tx.ID]
		if q == nil {
			if h.closed {
				continue
			}
			q = &txQueue{kind: kindKnown, tx: tx}
			h.queues[tx.ID] = q
			h.place(tx.ID, q)
			continue
		}
		if q.kind == kindKnown { // found by the reconciler meanwhile
			if q.state == qListing {
				h.place(tx.ID, q)
			}
			continue
		}
		h.know(tx.ID, q)
		if q.b == nil { // it confirms the names delivered before it was asked for
			q.tx, q.listed = tx, len(q.events) == q.asked
		}
		if q.state == qReady || q.state == qListing { // into the known lane; its old place is skipped
			h.place(tx.ID, q)
		}
	}
	return named
}

// spawnFor starts a worker if never-seen ids wait. h.mu held.
func (h *Handler) spawnFor() {
	if h.unseenWaiting() {
		h.spawn()
	}
}

// lookUp takes a never-seen id. While no flood is on (calm), its turn starts at once, as a
// known id's would. Otherwise the Store is asked whether it knows the id (another replica,
// or this one before a restart, handed something over, tracks it or is confirming it) by
// asking for its lease only if so (Lease.IfKnown): a known id's turn starts in the same
// round trip; an unknown one, left unchanged in the Store, moves to the lane of
// never-seen ids, which the share of the window paces.
func (h *Handler) lookUp(id int64, q *txQueue) {
	h.mu.Lock()
	calm := h.calm(time.Now())
	h.mu.Unlock()
	h.step(id, q, !calm)
}

// calm reports whether never-seen ids come no faster than they are taken: none waits for
// its look-up, a listing or a fetch, and their fetches answered 404 or 403 have not spent
// the window's share. Otherwise (a burst of new transactions, a flood of made-up ids)
// each is looked up in the Store first, and a partner's are listed in pages. h.mu held.
func (h *Handler) calm(now time.Time) bool {
	ok, _ := h.budget.allows(now)
	return ok && h.lanes[kindUnchecked].len() == 0 && !h.unseenWaiting() && !h.listing && !now.Before(h.unseenAt)
}

// unknown puts a never-seen id the Store does not know back, its batch's names queued
// again, in the lane of never-seen ids (unless it was listed meanwhile).
func (h *Handler) unknown(id int64, q *txQueue, b *batch) {
	h.mu.Lock()
	defer h.mu.Unlock()
	q.b = nil
	q.events = addNames(b.events, q.events)
	if q.since.IsZero() {
		q.since = b.obs.received
	}
	if q.kind == kindUnchecked {
		q.kind = kindUnseen
	}
	h.place(id, q)
}

// know records that the account has the transaction. h.mu held.
func (h *Handler) know(id int64, q *txQueue) {
	h.known.add(id, time.Now())
	h.newest = max(h.newest, id)
	if q != nil && q.kind != kindKnown {
		q.kind = kindKnown
		h.unseen--
	}
}

// step runs one try of the queue's batch (making the batch from what was queued if none
// is under way) and decides what comes next: done, a wait for the transaction's pace, a
// retry after a backoff, or giving up. ifKnown leases the transaction only if the Store
// knows it (lookUp).
func (h *Handler) step(id int64, q *txQueue, ifKnown bool) {
	b := h.take(id, q)
	if b == nil {
		return
	}
	b.ifKnown = ifKnown
	paced, err := h.try(b)
	if b.unknown {
		h.unknown(id, q, b)
		return
	}
	if b.tx != nil || (ifKnown && err == nil) {
		h.mu.Lock()
		h.know(id, q)
		h.mu.Unlock()
	}
	switch {
	case err == nil && paced <= 0:
		h.finish(id, q)
	case err == nil: // waiting for the transaction's pace is not an attempt
		h.mu.Lock()
		h.wait(id, q, paced, true)
		h.mu.Unlock()
	case q.attempt >= h.opt.MaxAttempts || h.ctx.Err() != nil:
		h.log.Error("escrow webhook: giving up; the next reconciliation will hand over what is missing",
			"transaction_id", b.id, "events", b.events, "attempts", q.attempt, "error", err)
		h.giveUp(b)
		h.observeGivenUp(b)
		h.finish(id, q)
	default:
		wait := min(h.opt.RetryWait<<min(q.attempt-1, 20), h.opt.MaxRetryWait)
		wait = wait/2 + mrand.N(wait/2+1) // jitter, so that failing transactions spread out
		var rle *escrow.RateLimitError
		if errors.As(err, &rle) {
			wait = max(wait, rle.RetryAfter) // the client knows when the allowance is back
		}
		h.log.Info("escrow webhook: retrying", "transaction_id", b.id, "events", b.events, "attempt", q.attempt, "wait", wait, "error", err)
		h.opt.Observer.Retry(h.ctx, Retry{TransactionID: b.id, Attempt: q.attempt, Wait: wait, Err: err})
		h.mu.Lock()
		q.attempt++
		h.wait(id, q, wait, false)
		h.mu.Unlock()
	}
}

// take returns the queue's batch under way, with what arrived during its wait, or makes
// one of what was queued; nil (and the queue retired) when nothing was.
func (h *Handler) take(id int64, q *txQueue) *batch {
	h.mu.Lock()
	defer h.mu.Unlock()
	switch {
	case q.b == nil && !q.pending():
		h.retire(id, q)
	case q.b == nil:
		q.b = &batch{id: id, q: q, events: q.events, tx: q.tx, fetch: (len(q.events) > 0 && !q.listed) || q.tx == nil, tracked: q.recheck, obs: batchObservation{received: q.since}}
		q.events, q.tx, q.recheck, q.listed, q.owed, q.attempt, q.since = nil, nil, false, false, false, 1, time.Time{}
	case len(q.events) > 0 || q.recheck: // arrived during the wait: they join the batch
		q.b.events, q.b.fetch = addNames(q.b.events, q.events), true
		q.b.tracked = q.b.tracked || q.recheck
		q.events, q.recheck = nil, false
	}
	return q.b
}

// finish ends the queue's batch: the queue goes back to its lane if more came meanwhile,
// or is retired.
func (h *Handler) finish(id int64, q *txQueue) {
	h.mu.Lock()
	defer h.mu.Unlock()
	q.b = nil
	if q.kind != kindKnown && q.pending() && h.neg.has(id, time.Now()) {
		h.stats.NotFoundDropped++ // delivered again while the fetch answered 404 or 403
		q.events, q.recheck = nil, false
	}
	if q.pending() && h.ctx.Err() == nil {
		h.place(id, q)
		return
	}
	h.retire(id, q)
}

// retire forgets a queue with nothing left to do. h.mu held.
func (h *Handler) retire(id int64, q *txQueue) {
	delete(h.queues, id)
	if q.kind != kindKnown {
		h.unseen--
	}
	h.signalIdle()
}

// wait sets the queue aside for d. A delivery that arrives during a pace's wait (pace
// true) makes it ready at once: it may bring a name that need not wait. h.mu held.
func (h *Handler) wait(id int64, q *txQueue, d time.Duration, pace bool) {
	q.state, q.paceWait = qWaiting, pace
	q.gen++
	h.wakeAt(time.Now().Add(d), id, q.gen)
}

// wakeAt sets a wakeup, starting the scheduler if it does not run. id 0 is the
// never-seen lane's. h.mu held.
func (h *Handler) wakeAt(at time.Time, id int64, gen uint64) {
	heap.Push(&h.later, wakeup{at: at, id: id, gen: gen})
	if !h.scheduling {
		h.scheduling = true
		h.wg.Add(1)
		go h.schedule()
		return
	}
	select {
	case h.kick <- struct{}{}:
	default:
	}
}

// schedule makes queues ready when their wakeups come due, and ends when none is left.
func (h *Handler) schedule() {
	defer h.wg.Done()
	t := time.NewTimer(time.Hour)
	defer t.Stop()
	for {
		h.mu.Lock()
		due, next := h.later.due(time.Now())
		for _, w := range due {
			h.wake(w)
		}
		if next.IsZero() || h.ctx.Err() != nil {
			h.scheduling = false
			h.mu.Unlock()
			return
		}
		h.mu.Unlock()
		t.Reset(time.Until(next))
		select {
		case <-h.ctx.Done():
		case <-t.C:
		case <-h.kick:
		}
	}
}

// wake makes a wakeup's queue ready, unless it is stale; the never-seen lane's lets the
// workers try it again. h.mu held.
func (h *Handler) wake(w wakeup) {
	if w.id == 0 {
		h.spawnFor()
		return
	}
	if q := h.queues[w.id]; q != nil && q.state == qWaiting && q.gen == w.gen {
		h.place(w.id, q)
	}
}

// queueOf returns the transaction's queue, made if need be (newQueue); reconciled says
// the reconciler asks, so the account has the transaction. h.mu held.
func (h *Handler) queueOf(id int64, reconciled bool) (*txQueue, error) {
	q := h.queues[id]
	if q == nil {
		return h.newQueue(id, reconciled)
	}
	if reconciled && q.kind != kindKnown {
		h.know(id, q)
		if q.state == qReady { // into the known lane; its old place is skipped
			h.place(id, q)
		}
	}
	return q, nil
}

// newQueue makes the queue of a transaction not queued yet, in the lane its kind says,
// or returns nil when the delivery takes no queue: an id the API answered 404 or 403
// lately is dropped, a never-seen id beyond MaxUnseen is owed a look (owe). err is
// errFull when known transactions fill MaxQueued. h.mu held.
func (h *Handler) newQueue(id int64, known bool) (*txQueue, error) {
	now := time.Now()
	if known || h.known.has(id, now) {
		if len(h.queues)-h.unseen >= h.opt.MaxQueued {
			return nil, errFull
		}
		q := &txQueue{kind: kindKnown}
		h.queues[id] = q
		if known {
			h.known.add(id, now)
		}
		h.opt.Observer.QueueDepth(h.ctx, len(h.queues))
		return q, nil
	}
	if h.neg.has(id, now) {
		h.stats.NotFoundDropped++
		return nil, nil
	}
	if h.unseen >= h.opt.MaxUnseen {
		h.owe(id)
		h.spawnFor()
		return nil, nil
	}
	h.owed.remove(id) // its queue confirms it
	h.unlisted.remove(id)
	q := &txQueue{kind: kindUnchecked}
	h.queues[id] = q
	h.unseen++
	h.opt.Observer.QueueDepth(h.ctx, len(h.queues))
	return q, nil
}

// unreadable notes an id the API answered 404 or 403: deliveries naming it are dropped
// without a fetch for a while, and a never-seen one wastes the never-seen share.
func (h *Handler) unreadable(b *batch) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.neg.add(b.id, time.Now())
	if b.q != nil && b.q.kind != kindKnown {
		h.budget.waste()
	}
}

// dropUnseen drops the never-seen ids waiting for a listing or a fetch, when the handler
// shuts down: they may wait for a rate-limit window, and a real one among them is found
// by the next reconciliation. h.mu held.
func (h *Handler) dropUnseen() {
	h.owed, h.unlisted = idRanges{}, idRanges{}
	for _, k := range []qkind{kindUnseen, kindUnlisted} {
		for {
			id, q, ok := h.pop(k)
			if !ok {
				break
			}
			if q != nil {
				h.retire(id, q)
			}
		}
	}
}

// abandon forgets the work left when the handler shut down, so that Flush returns.
func (h *Handler) abandon() {
	h.mu.Lock()
	defer h.mu.Unlock()
	clear(h.queues)
	h.lanes, h.later, h.unseen = [kinds]lane{}, nil, 0
	h.signalIdle()
}

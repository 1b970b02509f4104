package webhook

import (
	"cmp"
	"errors"
	"slices"
	"time"

	escrow "github.com/escrowkit/escrow-go"
)

// neverSeen is what the scheduler keeps of the never-seen ids beyond their queues: those
// owed a look, and when the next listing or fetch of them may come. Guarded by the
// scheduler's lock.
type neverSeen struct {
	owed     idRanges  // never-seen ids past MaxUnseen, owed a listing or a fetch
	unlisted idRanges  // owed ids a listing did not name: owed a fetch
	listing  bool      // a listing of never-seen ids is under way
	unseenAt time.Time // the never-seen lane waits till then: share spent, listing done
	listAt   time.Time // no listing of never-seen ids before this
	listWake time.Time // the wakeup set for listAt
}

// maxOwedRanges bounds the ranges of never-seen ids owed a look (16 bytes each): past it
// the range farthest from the account's newest transaction is dropped (idRanges).
const maxOwedRanges = 100_000

// listable reports whether never-seen ids wait that a listing may confirm. s.mu held.
func (s *scheduler) listable() bool {
	return s.acct.mayList() && (s.lanes[kindUnseen].len() > 0 || !s.ns.owed.empty())
}

// fetchable reports whether never-seen ids wait for a fetch of their own. s.mu held.
func (s *scheduler) fetchable() bool {
	return s.lanes[kindUnlisted].len() > 0 || !s.ns.unlisted.empty() ||
		(!s.acct.mayList() && (s.lanes[kindUnseen].len() > 0 || !s.ns.owed.empty()))
}

// unseenWaiting reports whether never-seen ids wait for a listing or a fetch. s.mu held.
func (s *scheduler) unseenWaiting() bool { return s.listable() || s.fetchable() }

// unseenAllowed reports what the never-seen ids allow now: a partner's listing of those
// waiting (list), at most one at a time and, after one that named few of them, a
// listEvery apart; or a fetch within the share (ok). If neither, it sets a wakeup for
// when one will be. s.mu held.
func (s *scheduler) unseenAllowed() (list, ok bool) {
	now := time.Now()
	if s.listable() && !s.ns.listing {
		if !now.Before(s.ns.listAt) {
			s.ns.listing = true
			return true, false
		}
		if !s.ns.listWake.Equal(s.ns.listAt) {
			s.ns.listWake = s.ns.listAt
			s.wakeAt(s.ns.listAt, 0, 0)
		}
	}
	if !s.fetchable() || now.Before(s.ns.unseenAt) {
		return false, false
	}
	ok, retry := s.acct.unseenAllows(now)
	if !ok {
		s.ns.unseenAt = retry
		s.wakeAt(retry, 0, 0)
	}
	return false, ok
}

// popFetch takes the next never-seen id to be confirmed by a fetch of its own: queued ones
// first, then those owed a look, for which it makes a queue. s.mu held.
func (s *scheduler) popFetch() (int64, *txQueue, bool) {
	lanes := []qkind{kindUnlisted}
	if !s.acct.mayList() {
		lanes = append(lanes, kindUnseen)
	}
	for _, k := range lanes {
		if s.lanes[k].len() > 0 {
			return s.pop(k)
		}
	}
	var ids []int64
	if ids = s.ns.unlisted.take(1); len(ids) == 0 && !s.acct.mayList() {
		ids = s.ns.owed.take(1)
	}
	if len(ids) == 0 {
		return 0, nil, false
	}
	if s.queues[ids[0]] != nil {
		return ids[0], nil, true // queued meanwhile: confirmed with its queue
	}
	q := &txQueue{kind: kindUnlisted, owed: true, state: qReady}
	s.queues[ids[0]] = q
	s.unseen++
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

// owe keeps id as owed a look, without a queue (past MaxUnseen). s.mu held.
func (s *scheduler) owe(id int64) {
	s.ns.owed.add(id)
	for s.ns.owed.ranges()+s.ns.unlisted.ranges() > maxOwedRanges {
		from := &s.ns.owed
		if s.ns.owed.empty() {
			from = &s.ns.unlisted
		}
		s.stats.UnseenDropped += from.dropFarthest(s.newest)
	}
}

// listWanted takes the never-seen ids the next listing asks about out of their lane and
// set (a queued one is qListing while the listing is under way): the page of those
// nearest to the account's newest transaction, queued or owed a look. Ids are handed out
// in order, so a real new transaction's is just above the newest: however many made-up
// ids wait, it is in the next listing. s.mu held.
func (s *scheduler) listWanted() (queued, owed []int64) {
	var waiting []int64
	for {
		id, q, ok := s.pop(kindUnseen)
		if !ok {
			break
		}
		if q != nil {
			waiting = append(waiting, id)
		}
	}
	near := func(a, b int64) int { return cmp.Compare(distance(a, s.newest), distance(b, s.newest)) }
	sorted := slices.SortedFunc(slices.Values(waiting), near)
	nearest := s.ns.owed.takeNear(s.newest, listPage) // nearest first
	q, o := 0, 0
	for q+o < listPage && (q < len(sorted) || o < len(nearest)) {
		if o == len(nearest) || (q < len(sorted) && near(sorted[q], nearest[o]) <= 0) {
			q++
		} else {
			o++
		}
	}
	for _, id := range nearest[o:] { // the farther go back
		s.ns.owed.add(id)
	}
	chosen := make(map[int64]bool, q)
	for _, id := range sorted[:q] {
		chosen[id] = true
	}
	for _, id := range waiting { // in the lane's order: a listing that fails keeps it
		if q := s.queues[id]; chosen[id] {
			q.state, q.asked = qListing, len(q.events)
			queued = append(queued, id)
		} else {
			s.lanes[kindUnseen].push(id)
		}
	}
	return queued, nearest[:o]
}

// listOwed lists the partner's transactions among the never-seen ids waiting: those named
// become known, with the state listed (read after their deliveries came, so no fetch is
// needed); those not named are left to a fetch of their own within the share. An account
// that is not a partner is noted, and its ids are fetched.
func (s *scheduler) listOwed() {
	s.mu.Lock()
	queued, owed := s.listWanted()
	s.mu.Unlock()
	ids := append(slices.Clone(queued), owed...)
	var page *escrow.TransactionCursorList
	var err error
	if len(ids) > 0 {
		page, err = s.acct.listIDs(s.ctx, ids)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ns.listing = false
	s.ns.listAt = time.Now().Add(listEvery)
	switch {
	case errors.Is(err, escrow.ErrForbidden):
		s.acct.setPartner(false) // not a partner: its never-seen ids are fetched
		s.unlist(queued, owed)
	case err != nil:
		s.log.Debug("escrow webhook: listing never-seen transactions failed", "error", err)
		s.unlist(queued, owed)
	case page == nil: // nothing was left to ask about
		s.unlist(queued, owed)
	default:
		s.acct.setPartner(true)
		s.afterListing(queued, owed, s.listed(page.Transactions))
	}
	s.spawnFor()
}

// unlist puts the ids of a listing that failed back where they waited: the queued in their
// lane, the others in the set owed a look. s.mu held.
func (s *scheduler) unlist(queued, owed []int64) {
	for _, id := range queued {
		if q := s.queues[id]; q != nil && q.state == qListing {
			s.place(id, q) // back in its lane, for the next listing or a fetch
		}
	}
	for _, id := range owed {
		s.ns.owed.add(id)
	}
}

// afterListing leaves the ids a listing did not name to a fetch of their own, and lets the
// next listing come at once after one that named at least half of its ids. s.mu held.
func (s *scheduler) afterListing(queued, owed []int64, named map[int64]bool) {
	for _, id := range queued {
		if q := s.queues[id]; !named[id] && q != nil && q.state == qListing {
			if q.kind != kindKnown { // the reconciler may have found it meanwhile
				q.kind = kindUnlisted // the listing cannot tell: a fetch of its own
			}
			s.place(id, q)
		}
	}
	for _, id := range owed {
		if !named[id] {
			s.ns.unlisted.add(id)
		}
	}
	if 2*len(named) >= len(queued)+len(owed) {
		s.ns.listAt = time.Now().Add(listSoon) // a burst of real ones: the next page soon
	}
}

// listed takes a listing's transactions: queued never-seen ids become known with the
// state listed; ids owed a look without a queue are queued with it, to be handed over as
// the reconciler's would be. It returns the ids named. s.mu held.
func (s *scheduler) listed(txs []escrow.Transaction) map[int64]bool {
	now := time.Now()
	named := make(map[int64]bool, len(txs))
	for i := range txs {
		tx := &txs[i]
		named[tx.ID] = true
		s.known.add(tx.ID, now)
		s.newest = max(s.newest, tx.ID)
		q := s.queues[tx.ID]
		if q == nil {
			if s.closed {
				continue
			}
			q = &txQueue{kind: kindKnown, tx: tx}
			s.queues[tx.ID] = q
			s.place(tx.ID, q)
			continue
		}
		if q.kind == kindKnown { // found by the reconciler meanwhile
			if q.state == qListing {
				s.place(tx.ID, q)
			}
			continue
		}
		s.know(tx.ID, q)
		if q.b == nil { // it confirms the names delivered before it was asked for
			q.tx, q.listed = tx, len(q.events) == q.asked
		}
		if q.state == qReady || q.state == qListing { // into the known lane; its old place is skipped
			s.place(tx.ID, q)
		}
	}
	return named
}

// spawnFor starts a worker if never-seen ids wait. s.mu held.
func (s *scheduler) spawnFor() {
	if s.unseenWaiting() {
		s.spawn()
	}
}

// lookUp takes a never-seen id. While no flood is on (calm), its turn starts at once, as a
// known id's would. Otherwise the Store is asked whether it knows the id (another replica,
// or this one before a restart, handed something over, tracks it or is confirming it) by
// asking for its lease only if so (Lease.IfKnown): a known id's turn starts in the same
// round trip; an unknown one, left unchanged in the Store, moves to the lane of
// never-seen ids, which the share of the window paces.
func (s *scheduler) lookUp(id int64, q *txQueue) {
	s.mu.Lock()
	calm := s.calm(time.Now())
	s.mu.Unlock()
	ask := askAlways
	if !calm {
		ask = askIfKnown
	}
	s.step(id, q, ask)
}

// calm reports whether never-seen ids come no faster than they are taken: none waits for
// its look-up, a listing or a fetch, and their fetches answered 404 or 403 have not spent
// the window's share. Otherwise (a burst of new transactions, a flood of made-up ids)
// each is looked up in the Store first, and a partner's are listed in pages. s.mu held.
func (s *scheduler) calm(now time.Time) bool {
	ok, _ := s.acct.unseenAllows(now)
	return ok && s.lanes[kindUnchecked].len() == 0 && !s.unseenWaiting() && !s.ns.listing && !now.Before(s.ns.unseenAt)
}

// dropUnseen drops the never-seen ids waiting for a listing or a fetch, when the handler
// shuts down: they may wait for a rate-limit window, and a real one among them is found
// by the next reconciliation. s.mu held.
func (s *scheduler) dropUnseen() {
	s.ns.owed, s.ns.unlisted = idRanges{}, idRanges{}
	for _, k := range []qkind{kindUnseen, kindUnlisted} {
		for {
			id, q, ok := s.pop(k)
			if !ok {
				break
			}
			if q != nil {
				s.retire(id, q)
			}
		}
	}
}

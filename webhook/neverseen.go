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
	// A round of listings of the newest transactions (listRecent): the page it lists
	// next (0 or 1: a round begins), the ids it asks about, queued (round) and owed a look
	// (asking), and how many its pages named.
	page       int
	round      []int64
	asking     idRanges
	roundNamed int
	settling   []int64 // ids asked and answered, to be settled in the Store (owed.go)

	storeOwes bool    // the Store may owe ids a look that no listing here asked about yet
	claims    []int64 // known transactions whose claims the next listing by id asks about (claims.go)
	// looked: a never-seen id came since the start, and with it a look at what the Store
	// owes (ids another replica handed it, or this process before a restart left).
	looked bool
}

// listable reports whether never-seen ids wait that a listing may confirm. s.mu held.
func (s *scheduler) listable() bool {
	return s.ns.page > 1 || s.lanes[kindUnseen].len() > 0 || !s.ns.owed.empty() || s.ns.storeOwes || len(s.ns.claims) > 0
}

// fetchable reports whether never-seen ids wait for a fetch of their own. s.mu held.
func (s *scheduler) fetchable() bool {
	return s.lanes[kindUnlisted].len() > 0 || !s.ns.unlisted.empty()
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
	if s.lanes[kindUnlisted].len() > 0 {
		return s.pop(kindUnlisted)
	}
	ids := s.ns.unlisted.take(1)
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
	for s.ns.owed.ranges()+s.ns.unlisted.ranges() > MaxOwedRanges {
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
func (s *scheduler) listWanted(stored []int64, room int) (queued, owed []int64) {
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
	nearest := slices.DeleteFunc(stored, func(id int64) bool { return s.queues[id] != nil }) // nearest first
	q, o := 0, 0
	for q+o < room && (q < len(sorted) || o < len(nearest)) {
		if o == len(nearest) || (q < len(sorted) && near(sorted[q], nearest[o]) <= 0) {
			q++
		} else {
			o++
		}
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

// listOwed lists what the never-seen ids waiting may be: a partner's transactions by id
// (listByID), another account's newest first (listRecent). Each call holds the list
// lease (owed.go); refused it, the ids waiting here are handed to the Store.
func (s *scheduler) listOwed() {
	if s.acct.mayList() {
		s.listByID()
		return
	}
	s.listRecent()
}

// listByID lists the partner's transactions among the never-seen ids waiting: those named
// become known, with the state listed (read after their deliveries came, so no fetch is
// needed); those not named are left to a fetch of their own within the share. An account
// that is not a partner is noted, and its ids are fetched.
func (s *scheduler) listByID() {
	stored := s.owedInStore(listPage)
	s.mu.Lock()
	claimed := s.takeClaims(listPage / 2)
	queued, owed := s.listWanted(stored, listPage-len(claimed))
	claimed = append(claimed, s.takeClaims(listPage-len(claimed)-len(queued)-len(owed))...)
	s.mu.Unlock()
	ids := slices.Concat(queued, owed, claimed)
	var page *escrow.TransactionCursorList
	var err error
	if len(ids) > 0 && !s.leased(func() { page, err = s.acct.listIDs(s.ctx, ids) }) {
		s.mu.Lock()
		s.unlist(queued)
		s.claimsAnswered(claimed, nil)
		s.mu.Unlock()
		s.handOff()
		return
	}
	if err == nil && page != nil {
		s.settle(owed) // answered: named, or left to a fetch each
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ns.listing = false
	if len(ids) > 0 {
		s.ns.listAt = time.Now().Add(listEvery)
	}
	var txs []escrow.Transaction
	if err == nil && page != nil {
		txs = page.Transactions
	}
	s.claimsAnswered(claimed, txs) // before listed, which would make them ready as they are
	switch {
	case errors.Is(err, escrow.ErrForbidden):
		s.acct.setPartner(false) // not a partner: its newest transactions are listed at once
		s.unlist(queued)
		s.ns.listAt = time.Time{}
	case err != nil:
		s.log.Debug("escrow webhook: listing never-seen transactions failed", "error", err)
		s.unlist(queued)
	case page == nil: // nothing was left to ask about
		s.unlist(queued)
	default:
		s.acct.setPartner(true)
		s.afterListing(queued, owed, s.listed(page.Transactions))
	}
	s.spawnFor()
}

// An account that is not a partner has no listing by id, but its paged list of
// transactions (GET /transaction), newest first, confirms a page of a burst of new ones in
// one call, on a rate-limit window of its own. A round of listings asks about the
// never-seen ids waiting as it begins and walks the list down from the newest, a page
// listSoon after the other, while its pages name ids waiting and ids asked lie below them
// (or it has probed fewer than recentProbe pages). An id asked that the round's pages
// passed without naming it, or that the round did not reach, is left to a fetch of its
// own within the never-seen share (kindUnlisted), as a partner's unnamed ids are. So a
// round begins only when ids came to wait since the last one began: a flood of made-up
// ids costs a round per burst of them, not a listing a second.
const recentProbe = 2

// recentAsk bounds the ids owed a look in the Store that a round asks about.
const recentAsk = 10 * listPage

// listRecent lists the next page of a round of the account's transactions, newest first.
func (s *scheduler) listRecent() {
	page, ok := s.roundPage()
	if !ok {
		return
	}
	var list *escrow.TransactionList
	var err error
	if !s.leased(func() { list, err = s.acct.listRecent(s.ctx, page, listPage) }) {
		s.mu.Lock()
		s.abandonRound()
		s.mu.Unlock()
		s.handOff()
		return
	}
	var stored []int64
	if err == nil {
		stored = s.owedAround(list.Transactions)
	}
	s.mu.Lock()
	s.ns.listing = false
	if err != nil {
		s.log.Debug("escrow webhook: listing the newest transactions failed; the ids it asked about are fetched", "error", err)
		s.endRound()
		s.ns.listAt = time.Now().Add(listEvery)
	} else {
		s.askAlso(stored)
		s.pageListed(page, list.Transactions)
	}
	s.spawnFor()
	settling := s.ns.settling
	s.ns.settling = nil
	s.mu.Unlock()
	s.settle(settling)
}

// owedAround returns the ids the Store owes a look around a page of the account's
// transactions, from its highest id down: the page judges those it reaches, so the round
// asks about them too, whichever were nearest the newest when it began.
func (s *scheduler) owedAround(txs []escrow.Transaction) []int64 {
	if len(txs) == 0 {
		return nil
	}
	owed, err := s.opt.Store.Owed(s.ctx, newest(txs), recentAsk)
	if err != nil {
		s.log.Debug("escrow webhook: reading the ids owed a look failed", "error", err)
	}
	return owed
}

// askAlso adds ids the Store owes to those the round asks about. s.mu held.
func (s *scheduler) askAlso(stored []int64) {
	for _, id := range stored {
		if s.queues[id] == nil { // a queued one is asked with its queue, or was confirmed
			s.ns.asking.add(id)
		}
	}
}

// roundPage returns the page of the round to list next, beginning a round with the ids
// the Store owes and those waiting here; ok is false when the round asks about none.
func (s *scheduler) roundPage() (page int, ok bool) {
	s.mu.Lock()
	begins := s.ns.page <= 1
	s.mu.Unlock()
	var stored []int64
	if begins {
		stored = s.owedInStore(recentAsk)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if begins {
		s.beginRound()
		s.askAlso(stored)
	}
	if len(s.ns.round) == 0 && s.ns.asking.empty() {
		s.ns.listing, s.ns.page = false, 1
		return 0, false
	}
	return s.ns.page, true
}

// pageListed takes a page of the round: the ids waiting it names are confirmed, those
// asked that it passed are left to a fetch each, and the next page is set. s.mu held.
func (s *scheduler) pageListed(page int, txs []escrow.Transaction) {
	s.newest = max(s.newest, newest(txs)) // the account's own: the newest it has
	named := s.listed(s.waitingAmong(txs))
	s.ns.roundNamed += len(named)
	lowest := lowestID(txs)
	if len(txs) < listPage {
		lowest = 0 // the list's end: the ids below are not the account's either
	}
	s.passed(lowest)
	s.nextPage(page, lowest, len(named))
}

// beginRound starts a round of listings of the newest transactions: it asks about every
// never-seen id queued here (qListing, as a listing by id asks), and those owed a look
// left here. s.mu held.
func (s *scheduler) beginRound() {
	s.ns.page, s.ns.roundNamed = 1, 0
	s.ns.round = s.ns.round[:0]
	for {
		id, q, ok := s.pop(kindUnseen)
		if !ok {
			break
		}
		if q != nil {
			q.state, q.asked = qListing, len(q.events)
			s.ns.round = append(s.ns.round, id)
		}
	}
	s.ns.asking, s.ns.owed = s.ns.owed, idRanges{}
}

// passed leaves to a fetch each id asked that the round's pages passed without naming it:
// those at or above lowest, the last page's lowest id. s.mu held.
func (s *scheduler) passed(lowest int64) {
	kept := s.ns.round[:0]
	for _, id := range s.ns.round {
		q := s.queues[id]
		switch {
		case q == nil || q.state != qListing: // named, or gone
		case id >= lowest:
			s.unlisted(id, q)
		default:
			kept = append(kept, id)
		}
	}
	s.ns.round = kept
	s.unlistAsked(s.ns.asking.splitFrom(lowest))
}

// unlistAsked leaves ids owed a look that a round asked about and did not name to a fetch
// each, and has them settled in the Store. s.mu held.
func (s *scheduler) unlistAsked(ids idRanges) {
	s.ns.settling = append(s.ns.settling, ids.all()...)
	s.ns.unlisted.merge(ids)
}

// nextPage sets when the round's next listing comes, and of which page: the next page
// soon while the round's pages name ids waiting (or it has probed fewer than recentProbe)
// and ids asked lie below this one's lowest; else the round ends. s.mu held.
func (s *scheduler) nextPage(page int, lowest int64, named int) {
	now := time.Now()
	below := len(s.ns.round) > 0 || !s.ns.asking.empty()
	if below && lowest > 0 && (named > 0 || page < recentProbe) {
		s.ns.page, s.ns.listAt = page+1, now.Add(listSoon)
		return
	}
	s.ns.listAt = now.Add(listEvery)
	if s.ns.roundNamed > 0 {
		s.ns.listAt = now.Add(listSoon) // a burst: the next round soon, if ids came meanwhile
	}
	s.endRound()
}

// endRound ends a round of listings: the ids it asked about and did not name are left to
// a fetch each, within the share (also when a listing failed: a list that cannot be read
// must not keep them waiting). s.mu held.
func (s *scheduler) endRound() {
	for _, id := range s.ns.round {
		if q := s.queues[id]; q != nil && q.state == qListing {
			s.unlisted(id, q)
		}
	}
	s.unlistAsked(s.ns.asking)
	s.ns.asking = idRanges{}
	s.ns.round, s.ns.page = s.ns.round[:0], 1
}

// abandonRound puts back what a round that cannot go on asked about: the queued ids in
// their lane, those owed a look with the others. s.mu held.
func (s *scheduler) abandonRound() {
	for _, id := range s.ns.round {
		if q := s.queues[id]; q != nil && q.state == qListing {
			s.place(id, q)
		}
	}
	s.ns.owed.merge(s.ns.asking)
	s.ns.asking = idRanges{}
	s.ns.round, s.ns.page = s.ns.round[:0], 1
}

// unlisted leaves a queued never-seen id a listing did not name to a fetch of its own,
// within the share. s.mu held.
func (s *scheduler) unlisted(id int64, q *txQueue) {
	if q.kind != kindKnown { // the reconciler may have found it meanwhile
		q.kind = kindUnlisted
	}
	s.place(id, q)
}

// waitingAmong returns the transactions of a listing whose ids wait to be confirmed:
// queued never-seen, or owed a look (which it takes out of their sets). s.mu held.
func (s *scheduler) waitingAmong(txs []escrow.Transaction) []escrow.Transaction {
	var out []escrow.Transaction
	for _, tx := range txs {
		q := s.queues[tx.ID]
		owed := s.ns.owed.has(tx.ID) || s.ns.unlisted.has(tx.ID) || s.ns.asking.has(tx.ID)
		if s.ns.asking.has(tx.ID) {
			s.ns.settling = append(s.ns.settling, tx.ID)
		}
		if owed {
			s.ns.owed.remove(tx.ID)
			s.ns.unlisted.remove(tx.ID)
			s.ns.asking.remove(tx.ID)
		}
		if owed || (q != nil && q.kind != kindKnown) {
			out = append(out, tx)
		}
	}
	return out
}

// lowestID returns the lowest id of txs, 0 for none: a listing's sort is not trusted.
func lowestID(txs []escrow.Transaction) int64 {
	var id int64
	for _, tx := range txs {
		if id == 0 || tx.ID < id {
			id = tx.ID
		}
	}
	return id
}

// unlist puts the queued ids of a listing that failed back in their lane; those the
// Store owes stay owed there. s.mu held.
func (s *scheduler) unlist(queued []int64) {
	for _, id := range queued {
		if q := s.queues[id]; q != nil && q.state == qListing {
			s.place(id, q) // back in its lane, for the next listing or a fetch
		}
	}
}

// afterListing leaves the never-seen ids a listing did not name to a fetch of their own,
// and lets the next listing come soon after one that named at least half of them (a burst
// of new transactions); a listing of claims alone is followed by the next a listEvery
// later, so that replays cost the listing's window a call a second at most. s.mu held.
func (s *scheduler) afterListing(queued, owed []int64, named map[int64]bool) {
	found := 0 // never-seen ids named; the claims asked beside them do not count
	for _, id := range queued {
		if named[id] {
			found++
		} else if q := s.queues[id]; q != nil && q.state == qListing {
			s.unlisted(id, q) // the listing cannot tell: a fetch of its own
		}
	}
	for _, id := range owed {
		if named[id] {
			found++
		} else {
			s.ns.unlisted.add(id)
		}
	}
	if found > 0 && 2*found >= len(queued)+len(owed) {
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
	waiting := s.lanes[kindUnseen].len() > 0 || !s.ns.owed.empty() || s.fetchable() // here, not in the Store
	return ok && s.lanes[kindUnchecked].len() == 0 && !waiting && !s.ns.listing && !now.Before(s.ns.unseenAt)
}

// dropUnseen drops the never-seen ids waiting for a listing or a fetch, when the handler
// shuts down: they may wait for a rate-limit window, and a real one among them is found
// by the next reconciliation. s.mu held.
func (s *scheduler) dropUnseen() {
	s.ns.owed, s.ns.unlisted, s.ns.asking = idRanges{}, idRanges{}, idRanges{}
	for _, id := range s.ns.round {
		if q := s.queues[id]; q != nil && q.state == qListing {
			s.retire(id, q)
		}
	}
	s.ns.round, s.ns.page = nil, 0
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

package webhook

import (
	"context"
	"errors"
	"time"
)

// The never-seen ids owed a look are kept in the Store (Store.Owe), where every replica
// sharing it finds them, and this one after a restart. One listing at a time, across the
// replicas, asks about them: it takes from the Store the ids owed nearest the account's
// newest transaction, with those waiting here with their names, makes its one call
// holding the list lease (listLease), and settles in the Store what it asked about once
// it has the answer (a replica killed in between leaves them owed). A replica refused the
// lease while another lists hands the ids waiting here to the Store instead (handOff),
// those queued without their names: their facts are handed over FromReconcile by the
// listing that names them, and the replicas do not list, and then confirm, the same new
// transactions at once.

// listLease is the lease id of the never-seen ids' listing (no transaction has a
// negative id; the prune lease is 0).
const listLease = -1

// listHold bounds a listing's hold on the list lease: a replica that dies while listing
// holds up the others' listings no longer than this.
const listHold = 30 * time.Second

// listTurn is a listing's hold on the list lease.
type listTurn struct {
	lease Lease
	marks int64
	held  bool
}

// takeListLease asks for the list lease; ok is false while another replica lists. A
// Store that fails lets the listing go on without it: listings at once cost calls, not
// correctness.
func (s *scheduler) takeListLease() (t listTurn, ok bool) {
	now := s.opt.Now()
	t.lease = Lease{TransactionID: listLease, Holder: s.opt.Replica, Expires: now.Add(listHold)}
	turn, err := s.opt.Store.Acquire(s.ctx, t.lease, nil, now)
	if err != nil {
		s.log.Warn("escrow webhook: the never-seen ids' listing goes on without its lease", "error", err)
		return t, true
	}
	t.marks, t.held = turn.Marks, turn.Granted
	return t, turn.Granted
}

// leased makes a listing's call holding the list lease, and reports whether it did: not
// while another replica lists. The lease is held for the call alone, no Store call
// within it: with a Store whose lease holds a database connection, the listing needs no
// second one.
func (s *scheduler) leased(call func()) bool {
	t, ok := s.takeListLease()
	if !ok {
		return false
	}
	call()
	s.releaseListLease(t)
	return true
}

// releaseListLease ends a listing's hold on the list lease.
func (s *scheduler) releaseListLease(t listTurn) {
	if !t.held {
		return
	}
	y := Yield{Lease: t.lease, Marks: t.marks, Now: s.opt.Now(), Release: true}
	if _, err := s.opt.Store.Yield(context.WithoutCancel(s.ctx), y); err != nil && !errors.Is(err, ErrClaimLost) {
		s.log.Debug("escrow webhook: releasing the never-seen ids' listing lease failed; it ends by itself", "error", err)
	}
}

// owedInStore moves the ids owed a look here into the Store, where every replica's are,
// and returns up to n of those it owes, the nearest to the account's newest transaction
// first. If the Store fails, the ids stay here and none is returned.
func (s *scheduler) owedInStore(n int) []int64 {
	s.mu.Lock()
	local, near := s.ns.owed, s.newest
	s.ns.owed = idRanges{}
	s.mu.Unlock()
	var dropped int64
	var err error
	if !local.empty() { // most listings have none here: no write for them
		dropped, err = s.opt.Store.Owe(s.ctx, local.all(), near)
	}
	var owed []int64
	if err == nil {
		owed, err = s.opt.Store.Owed(s.ctx, near, n)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stats.UnseenDropped += dropped
	if err != nil {
		s.log.Warn("escrow webhook: the Store failed to keep the ids owed a look; they wait here", "error", err)
		s.ns.owed.merge(local)
		return nil
	}
	s.ns.storeOwes = len(owed) > 0 // till a look finds none: the answer settles them
	return owed
}

// settle removes from the Store the ids a listing asked about and has an answer for:
// those it named are queued with their state, the others left to a fetch each.
func (s *scheduler) settle(ids []int64) {
	if len(ids) == 0 {
		return
	}
	s.mu.Lock()
	near := s.newest
	s.mu.Unlock()
	dropped, err := s.opt.Store.Settle(context.WithoutCancel(s.ctx), ids, near)
	if err != nil {
		// They are owed on: a later listing asks about them again, and confirms them again
		// (a known transaction's state shows nothing new: no hand-over twice).
		s.log.Warn("escrow webhook: settling the ids a listing asked about failed", "error", err)
	}
	s.mu.Lock()
	s.stats.UnseenDropped += dropped
	s.mu.Unlock()
}

// handOff leaves the never-seen ids waiting here to the listing under way in another
// replica: they are owed a look in the Store, queued ones without their names, and this
// replica asks for the lease again a listEvery later, to list what the Store still owes.
func (s *scheduler) handOff() {
	s.mu.Lock()
	ids, dropped := s.takeWaiting()
	near := s.newest
	s.mu.Unlock()
	reportDropped(s.ctx, s.obs, dropped)
	var lost int64
	var err error
	if len(ids) > 0 {
		lost, err = s.opt.Store.Owe(s.ctx, ids, near)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ns.listing, s.ns.listAt = false, time.Now().Add(listEvery)
	if err != nil {
		s.log.Warn("escrow webhook: the Store failed to keep the ids owed a look; they wait here", "error", err)
		for _, id := range ids {
			s.ns.owed.add(id)
		}
	} else {
		s.stats.UnseenDropped += lost
		s.ns.storeOwes = true
	}
	s.spawnFor()
}

// takeWaiting takes every never-seen id waiting here for a listing: those owed a look,
// and the queued ones, whose queues it retires, returning their delivered names. s.mu
// held.
func (s *scheduler) takeWaiting() (ids []int64, names []namedDelivery) {
	ids = s.ns.owed.all()
	s.ns.owed = idRanges{}
	queued, names := s.takeLane(kindUnseen)
	return append(ids, queued...), names
}

// takeLane takes the ids of a lane of never-seen ids, retiring their queues, and returns
// their delivered names. s.mu held.
func (s *scheduler) takeLane(k qkind) (ids []int64, names []namedDelivery) {
	for {
		id, q, ok := s.pop(k)
		if !ok {
			return ids, names
		}
		if q == nil {
			continue
		}
		ids = append(ids, id)
		for _, n := range q.events {
			names = append(names, namedDelivery{id: id, name: n, received: q.since})
		}
		s.retire(id, q)
	}
}

// takeAllWaiting takes every never-seen id waiting here, for a shutdown: those owed a
// look or a fetch, and the queued ones not under way. s.mu held.
func (s *scheduler) takeAllWaiting() (ids []int64, names []namedDelivery) {
	ids, names = s.takeWaiting()
	ids = append(ids, s.ns.unlisted.all()...)
	s.ns.unlisted = idRanges{}
	for _, k := range []qkind{kindUnchecked, kindUnlisted} {
		more, named := s.takeLane(k)
		ids, names = append(ids, more...), append(names, named...)
	}
	return ids, names
}

package webhook

import (
	"context"
	"errors"
	"maps"
	"slices"
	"sync"
	"time"

	escrow "github.com/escrowkit/escrow-go"
)

// Claim is a handler's hold on the facts one ConfirmedEvent hands over: the facts, and
// the transaction's lease they are handed over under. A callback that records them in its
// own database transaction (package sqlstore, Store.TxCallback) uses it.
type Claim struct {
	TransactionID int64
	// Facts are the keys of the facts the event hands over ("ship:300001", "complete").
	Facts []string
	// Owner names the handler holding the transaction's lease (Options.Replica).
	Owner string
	// Expires ends the lease: after it another replica may take the transaction over.
	Expires time.Time
}

// ErrClaimLost is returned when a transaction's lease was taken over by another replica
// after it expired, before the facts handed over under it were recorded.
var ErrClaimLost = errors.New("webhook: claim lost: its lease expired and another replica took it over")

// ErrTurnUndone is returned by a Store's Yield when the turn's end failed and undid, with
// the lease's grant, what the turn's callbacks did through the Store (package sqlstore's
// TxCallback on PostgreSQL runs in the turn's database transaction): none of its facts is
// recorded. The Handler takes the lease again (free, or its own still) and hands the
// turn's events over again, those the Store does not record by then.
var ErrTurnUndone = errors.New("webhook: the turn's end failed and undid its hand-overs")

// TombstoneHorizon is how long Prune keeps a pruned transaction's tombstone (its id and
// when it finished) after the retention that pruned its facts: a delivery for it that
// comes within Retention + TombstoneHorizon of its end is dropped without a fetch; one
// that comes later is confirmed like a new transaction's, and its facts would be handed
// over again.
const TombstoneHorizon = 365 * 24 * time.Hour

// Lease is a replica's turn at confirming one transaction: while it holds the lease, it
// alone fetches the transaction and hands its facts over; deliveries that reach other
// replicas meanwhile are recorded for it (Turn.Pending) instead of fetched again.
type Lease struct {
	TransactionID int64
	// Holder names the replica (Options.Replica).
	Holder string
	// Expires ends the lease; after it another replica may take it, as when the holder died.
	Expires time.Time
	// IfKnown asks for the lease only if the Store knows the transaction (facts of it
	// recorded, tracked, or its lease held live by another replica, which is confirming
	// it): otherwise Acquire changes nothing and answers Turn.Unknown. A replica looks up a
	// never-seen id so, starting its turn (or leaving its names to the holder) in the same
	// round trip.
	IfKnown bool
}

// Pace is when a transaction may be fetched again after fetches that found nothing new
// (replayed or forged deliveries), shared by the replicas so that a storm spread over
// them costs one fetch per pause.
type Pace struct {
	// NotBefore: no fetch for the names in Tried before it.
	NotBefore time.Time
	// Hold is the pause after the last fetch; the next pause is four times longer.
	Hold time.Duration
	// Tried are the delivered names that fetches since the last one that found something
	// new did not confirm; a delivery of any other confirmable name is fetched at once.
	Tried []escrow.EventName
}

// Turn is what a Store answers a replica asking for a transaction's lease.
type Turn struct {
	// Granted: the replica holds the lease. If not, the delivered names were recorded for
	// the holder, unless Pruned or Replayed is set.
	Granted bool
	// Replayed: the delivered names can only be replays of the facts recorded as handed
	// over (Replayed): the lease was not granted nor the names recorded, and nothing more
	// is to be done for them. Handed holds those facts.
	Replayed bool
	// Unknown: the lease was asked for IfKnown, and the Store knows nothing of the
	// transaction; nothing was changed.
	Unknown bool
	// Pruned: the transaction finished and was pruned (a tombstone): every fact it had was
	// handed over, and nothing more is to be done for it.
	Pruned bool
	// Marks counts the requests recorded for the holder so far; Yield compares it with
	// the count it saw to know whether more came during the turn.
	Marks int64
	// Pending are the names delivered to other replicas and not yet confirmed.
	Pending []escrow.EventName
	// Handed are the keys of the transaction's facts recorded as handed over.
	Handed map[string]bool
	// Pace is the transaction's fetching pace.
	Pace Pace
}

// Yield ends a turn: what was handed over under it, and the pace of the next fetch.
type Yield struct {
	// Lease is the turn that ends; its Expires is the new end if the turn goes on.
	Lease
	// Marks is Turn.Marks as last seen by the holder.
	Marks int64
	// Facts are the keys handed over during the turn, recorded as done.
	Facts []string
	// Finished marks the transaction finished (see Store.Finish).
	Finished bool
	// Pace is stored for the next fetch.
	Pace Pace
	// Now is when the turn ends.
	Now time.Time
	// Release ends the turn even if requests came during it, leaving Names and the
	// names delivered meanwhile to the next holder: the holder gives up or shuts down.
	Release bool
	Names   []escrow.EventName
}

// Store remembers, per transaction, which facts were handed over, who confirms it right
// now and at what pace, where the reconciler's look at the account's history ended, and
// which never-seen ids are owed a look.
// Every method is safe for concurrent use, also by several processes sharing one database
// (package sqlstore); [MemoryStore] keeps it in one process's memory. [LeaseState] holds
// the lease rules, so that an implementation only loads and saves them atomically.
type Store interface {
	// Acquire gives l.Holder the transaction's lease until l.Expires if nobody else holds
	// it live at now (LeaseState.Acquire), returning what the holder needs: facts handed,
	// names delivered elsewhere, the pace. Otherwise it records names (and a request to
	// fetch again) for the holder. A pruned transaction is never leased (Turn.Pruned), nor
	// one whose recorded facts make names replays (Replayed and Turn.Replayed), nor, with
	// l.IfKnown, one the Store knows nothing of (Turn.Unknown).
	Acquire(ctx context.Context, l Lease, names []escrow.EventName, now time.Time) (Turn, error)
	// Yield records y.Facts as done (and the transaction as known, finished if
	// y.Finished) and ends the turn (LeaseState.Yield). If more was recorded for the
	// holder during the turn, other than replays of the facts now recorded, the lease
	// goes on until y.Expires and the answer is Granted, with the names delivered
	// meanwhile that are no replays: the holder confirms them. If the lease was taken
	// over, the facts are recorded and the error is ErrClaimLost. An error matching
	// ErrTurnUndone says that what the turn handed over was undone with it.
	Yield(ctx context.Context, y Yield) (Turn, error)
	// Handed returns the keys of the transaction's facts recorded as done: for a look at
	// the store (tests, tools); the Handler reads them through Acquire.
	Handed(ctx context.Context, transactionID int64) (map[string]bool, error)
	// Track makes transactions known as unfinished, those not known yet; it leaves
	// finished and pruned ones as they are.
	Track(ctx context.Context, transactionIDs []int64) error
	// Finish marks a transaction finished: every fact of its terminal state was handed
	// over, so the reconciler no longer re-reads it. It is stamped with the store's clock.
	Finish(ctx context.Context, transactionID int64) error
	// Unfinished lists the known transactions not finished, by id.
	Unfinished(ctx context.Context) ([]int64, error)
	// Mark returns the newest transaction id the reconciler has seen; ok is false before
	// the first reconciliation.
	Mark(ctx context.Context) (mark int64, ok bool, err error)
	// AdvanceMark raises the mark to id, never lowers it.
	AdvanceMark(ctx context.Context, id int64) error
	// Prune deletes what the store keeps about transactions that finished before
	// finishedBefore, leaving a tombstone of each (Turn.Pruned), and leases idle since
	// before it; it deletes the tombstones of transactions that finished more than
	// TombstoneHorizon before finishedBefore. It returns how many transactions it pruned.
	Prune(ctx context.Context, finishedBefore time.Time) (int64, error)
	// Owe records ids as owed a look: never-seen ids that a listing or a fetch is to confirm
	// or refute; ids at or below 0 are left out. They are kept as ranges ([OwedSet]), so that
	// ids handed out in order take few, and shared with every replica and restart. near is
	// the newest id the account is known to have: past MaxOwedRanges ranges, the farthest
	// from it are dropped, and Owe returns how many ids they held.
	Owe(ctx context.Context, ids []int64, near int64) (dropped int64, err error)
	// Owed returns up to n of the ids owed a look, the nearest to near first (of two as
	// near, the higher first), without removing them: whoever looks them up settles them
	// afterwards, so that a process killed in between leaves them owed. n <= 0 returns none.
	Owed(ctx context.Context, near int64, n int) ([]int64, error)
	// Settle removes ids from those owed a look: confirmed, or found unreadable. A range
	// that settling splits counts against MaxOwedRanges as Owe's do: past it, the ranges
	// farthest from near are dropped, and Settle returns how many ids they held.
	Settle(ctx context.Context, ids []int64, near int64) (dropped int64, err error)
}

// MaxOwedRanges bounds the ranges of ids a Store keeps owed a look (Store.Owe): past it,
// the ranges farthest from the account's newest id are dropped. Ids handed out in order
// keep a real burst in few ranges (100,000 new transactions in one); it takes ids made up
// one apart to fill them, and a full Store keeps 1.6 MB of them in memory.
const MaxOwedRanges = 100_000

// Pooled is implemented by a Store whose calls share a bounded pool of database
// connections. A Handler over it runs as many workers as the pool has connections, unless
// Options.Workers says otherwise: more would wait for a connection, fewer would leave
// some idle.
type Pooled interface {
	// MaxConns is how many connections the Store uses at most; 0 for no bound.
	MaxConns() int
}

// MaxNames bounds the distinct delivered names a batch, a lease's pending names or a
// pace keep: the 14 confirmable names and a few hints. Names beyond it are dropped; a
// Store keeps the first MaxNames left for a lease's holder.
const MaxNames = 24

// LeaseState is what a Store keeps per transaction about its lease and its pace. Its
// methods are the rules of every Store: an implementation loads the state, applies one
// method and saves the result, atomically.
type LeaseState struct {
	Holder  string
	Expires time.Time
	Marks   int64
	Pending []escrow.EventName
	Pace    Pace
}

// Acquire grants l if the lease is free, l.Holder's own, or expired at now, and reports
// whether it did. Otherwise it counts a request for the holder and adds names to
// Pending. Pending is kept when granted: the new holder confirms those names, and a
// holder that dies leaves them to the next.
func (s *LeaseState) Acquire(l Lease, names []escrow.EventName, now time.Time) bool {
	if s.free(now) || s.Holder == l.Holder {
		s.Holder, s.Expires = l.Holder, l.Expires
		return true
	}
	s.Marks++
	s.Pending = addNames(s.Pending, names)
	return false
}

// Yield ends y's turn. It returns ErrClaimLost if the lease is no longer y.Holder's;
// otherwise it stores y.Pace, hands back Pending (cleared) but the names replayed reports
// as replays of the facts recorded (y's included), and reports again when requests came
// during the turn that need the holder: one with a name that is no replay, or one with
// none (a reconciler's recheck; one that came beside replays only is taken as served by
// the turn's own fetch, and the next reconciliation rechecks the transaction if it is
// still unfinished). Then the lease goes on until y.Expires, else it is free.
// A release (y.Release) frees the lease and leaves Pending, with y.Names, to the next.
func (s *LeaseState) Yield(y Yield, replayed func(names []escrow.EventName) bool) (again bool, pending []escrow.EventName, err error) {
	if s.Holder != y.Holder {
		return false, nil, ErrClaimLost
	}
	s.Pace = y.Pace
	if y.Release {
		s.Pending = addNames(s.Pending, y.Names)
		s.Holder, s.Expires = "", time.Time{}
		return false, nil, nil
	}
	pending, s.Pending = s.Pending, nil
	if s.Marks > y.Marks && (len(pending) == 0 || !replayed(pending)) {
		s.Expires = y.Expires
		return true, slices.DeleteFunc(pending, func(n escrow.EventName) bool { return replayed([]escrow.EventName{n}) }), nil
	}
	s.Holder, s.Expires = "", time.Time{}
	return false, nil, nil
}

// free reports whether nobody holds the lease live at now.
func (s *LeaseState) free(now time.Time) bool { return s.Holder == "" || !now.Before(s.Expires) }

// Idle reports whether the state holds nothing worth keeping at now: no lease, no names
// waiting, no pause ahead. A Store may delete an idle state.
func (s *LeaseState) Idle(now time.Time) bool {
	return s.free(now) && len(s.Pending) == 0 && !now.Before(s.Pace.NotBefore)
}

// addNames adds the names not in to, up to MaxNames in all.
func addNames(to, names []escrow.EventName) []escrow.EventName {
	for _, n := range names {
		if len(to) < MaxNames && !slices.Contains(to, n) {
			to = append(to, n)
		}
	}
	return to
}

// MemoryStore is a Store in memory, safe for concurrent use: it holds for one process
// and forgets everything when it exits. The zero value is ready.
type MemoryStore struct {
	mu         sync.Mutex
	records    map[int64]*record
	leases     map[int64]*LeaseState
	tombstones map[int64]time.Time // pruned transactions, by when they finished
	mark       int64
	marked     bool
	kv         settingsMap // Settings, in settings.go
	owed       OwedSet
}

type record struct {
	done     map[string]bool
	finished time.Time // zero while unfinished
}

func (m *MemoryStore) record(id int64) *record {
	if m.records == nil {
		m.records = make(map[int64]*record)
	}
	r := m.records[id]
	if r == nil {
		r = &record{done: make(map[string]bool)}
		m.records[id] = r
	}
	return r
}

func (m *MemoryStore) lease(id int64) *LeaseState {
	if m.leases == nil {
		m.leases = make(map[int64]*LeaseState)
	}
	s := m.leases[id]
	if s == nil {
		s = new(LeaseState)
		m.leases[id] = s
	}
	return s
}

// Acquire grants l or records names for the holder (LeaseState.Acquire).
func (m *MemoryStore) Acquire(_ context.Context, l Lease, names []escrow.EventName, now time.Time) (Turn, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.tombstones[l.TransactionID]; ok {
		return Turn{Pruned: true}, nil
	}
	r := m.records[l.TransactionID]
	held := m.leases[l.TransactionID] != nil && !m.leases[l.TransactionID].free(now)
	switch {
	case r == nil && !held && l.IfKnown:
		return Turn{Unknown: true}, nil
	case r != nil && Replayed(names, r.done):
		return Turn{Replayed: true, Handed: maps.Clone(r.done)}, nil
	}
	s := m.lease(l.TransactionID)
	if !s.Acquire(l, names, now) {
		return Turn{}, nil
	}
	t := Turn{Granted: true, Marks: s.Marks, Pending: slices.Clone(s.Pending), Handed: make(map[string]bool), Pace: s.Pace}
	t.Pace.Tried = slices.Clone(t.Pace.Tried)
	if r != nil {
		for k := range r.done {
			t.Handed[k] = true
		}
	}
	return t, nil
}

// Yield records y's facts and ends or extends the turn (LeaseState.Yield).
func (m *MemoryStore) Yield(_ context.Context, y Yield) (Turn, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.tombstones[y.TransactionID]; ok {
		return Turn{}, nil // pruned meanwhile: everything was handed over
	}
	if len(y.Facts) > 0 || y.Finished {
		r := m.record(y.TransactionID)
		for _, k := range y.Facts {
			r.done[k] = true
		}
		if y.Finished && r.finished.IsZero() {
			r.finished = time.Now()
		}
	}
	s := m.lease(y.TransactionID)
	y.Pace.Tried = slices.Clone(y.Pace.Tried)
	var done map[string]bool
	if r := m.records[y.TransactionID]; r != nil {
		done = r.done
	}
	again, pending, err := s.Yield(y, func(names []escrow.EventName) bool { return Replayed(names, done) })
	if s.Idle(y.Now) {
		delete(m.leases, y.TransactionID)
	}
	if err != nil {
		return Turn{}, err
	}
	return Turn{Granted: again, Marks: s.Marks, Pending: pending}, nil
}

// Handed returns the keys recorded as done.
func (m *MemoryStore) Handed(_ context.Context, transactionID int64) (map[string]bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make(map[string]bool)
	if r := m.records[transactionID]; r != nil {
		for k := range r.done {
			out[k] = true
		}
	}
	return out, nil
}

// Track makes the transactions known, as unfinished unless already finished or pruned.
func (m *MemoryStore) Track(_ context.Context, transactionIDs []int64) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, id := range transactionIDs {
		if _, ok := m.tombstones[id]; !ok {
			m.record(id)
		}
	}
	return nil
}

// Finish marks the transaction finished, now.
func (m *MemoryStore) Finish(_ context.Context, transactionID int64) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.tombstones[transactionID]; ok {
		return nil
	}
	if r := m.record(transactionID); r.finished.IsZero() {
		r.finished = time.Now()
	}
	return nil
}

// Unfinished lists the known transactions not finished, by id.
func (m *MemoryStore) Unfinished(context.Context) ([]int64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var ids []int64
	for id, r := range m.records {
		if r.finished.IsZero() {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	return ids, nil
}

// Mark returns the reconciler's mark.
func (m *MemoryStore) Mark(context.Context) (int64, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.mark, m.marked, nil
}

// AdvanceMark raises the mark to id.
func (m *MemoryStore) AdvanceMark(_ context.Context, id int64) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.mark, m.marked = max(m.mark, id), true
	return nil
}

// Prune replaces the records of transactions finished before finishedBefore with
// tombstones, forgets idle leases and expired tombstones.
func (m *MemoryStore) Prune(_ context.Context, finishedBefore time.Time) (int64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var n int64
	for id, r := range m.records {
		if !r.finished.IsZero() && r.finished.Before(finishedBefore) {
			if m.tombstones == nil {
				m.tombstones = make(map[int64]time.Time)
			}
			m.tombstones[id] = r.finished
			delete(m.records, id)
			delete(m.leases, id)
			n++
		}
	}
	for id, s := range m.leases {
		if s.Idle(finishedBefore) {
			delete(m.leases, id)
		}
	}
	horizon := finishedBefore.Add(-TombstoneHorizon)
	for id, at := range m.tombstones {
		if at.Before(horizon) {
			delete(m.tombstones, id)
		}
	}
	return n, nil
}

// Owe records ids as owed a look, dropping the ranges farthest from near past
// MaxOwedRanges.
func (m *MemoryStore) Owe(_ context.Context, ids []int64, near int64) (int64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.owed.Owe(ids)
	return m.owed.Trim(near, MaxOwedRanges), nil
}

// Owed returns up to n ids owed a look, the nearest to near first.
func (m *MemoryStore) Owed(_ context.Context, near int64, n int) ([]int64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.owed.Nearest(near, n), nil
}

// Settle removes ids from those owed a look, dropping the ranges farthest from near past
// MaxOwedRanges.
func (m *MemoryStore) Settle(_ context.Context, ids []int64, near int64) (int64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.owed.Settle(ids)
	return m.owed.Trim(near, MaxOwedRanges), nil
}

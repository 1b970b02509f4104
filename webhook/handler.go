package webhook

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"sync"
	"time"

	escrow "github.com/escrowkit/escrow-go"
)

// Source says how an event reached the callback.
type Source string

// Sources of a ConfirmedEvent.
const (
	// FromWebhook: a delivery announced the event.
	FromWebhook Source = "webhook"
	// FromReconcile: the event's delivery never came (or not yet); the transaction's
	// state showed it, to the reconciler or while confirming another delivery.
	FromReconcile Source = "reconcile"
)

// ConfirmedEvent is an event whose transaction was fetched and shows it happened. Only
// events a transaction's state can show become one: create, agree, payment_approved,
// ship, receive, accept, reject, the four return steps, payment_disbursed, complete and
// cancel.
type ConfirmedEvent struct {
	escrow.Event
	// Transaction is the transaction as fetched after the event; it may already show later
	// events too.
	Transaction *escrow.Transaction
	// ItemIDs are the items the event newly concerns (for ship, receive, accept and the
	// like); empty for events of the whole transaction.
	ItemIDs []int64
	Source  Source
	// Claim is the handler's hold on the facts this event hands over. A callback that
	// records them in its own database transaction (sqlstore.Store.TxCallback) uses it;
	// others can ignore it.
	Claim Claim
}

// Callback receives confirmed events. A non-nil error makes the handler retry the event
// later; events of other transactions go on meanwhile. It must honour ctx, which ends on
// shutdown.
type Callback func(ctx context.Context, ev ConfirmedEvent) error

// Hint is an UNCONFIRMED event: a delivery named it, the named transaction exists and the
// account can read it, but no transaction state can show that this event happened
// (payment_sent, payment_refunded, the party_verification_* events, names the API adds
// later, or names a forger invents). Anyone who can reach the webhook URL can send one.
// Use a Hint to decide to look closer, never as proof.
type Hint struct {
	// Event is the delivered name: 1 to 64 characters of a-z, 0-9 and "_".
	Event         escrow.EventName
	TransactionID int64
	// Transaction is the transaction as fetched when the hint was confirmed to name one
	// the account can read.
	Transaction *escrow.Transaction
}

// HintFunc receives unconfirmed hints. It is called at most once per name per
// confirming fetch, is not retried and may see the same hint again.
type HintFunc func(ctx context.Context, h Hint)

// Options tune a Handler. The zero value is usable.
type Options struct {
	// Store records what was handed over; default a new MemoryStore (one process only).
	Store Store
	// Logger receives dropped deliveries and retries; default silent.
	Logger *slog.Logger
	// MaxAttempts bounds the tries of one batch of events (confirming and calling back);
	// default 8. What was given up on is handed over by the next reconciliation instead.
	MaxAttempts int
	// RetryWait is the first wait between tries, doubled each time up to MaxRetryWait;
	// defaults 500ms and 30s.
	RetryWait, MaxRetryWait time.Duration
	// MaxQueued bounds the transactions the account is known to have (handed over before,
	// found or tracked by the reconciler, listed, or in the Store) with work waiting; a
	// delivery about one more is answered 503. Deliveries about a transaction already
	// waiting are coalesced and always taken. Default 10,000.
	MaxQueued int
	// MaxUnseen bounds, apart from MaxQueued, the never-seen ids waiting to be confirmed
	// with their delivered names: past it an id is kept as owed a look, with no name (its
	// facts are handed over FromReconcile), answered 200 all the same and never dropped
	// (see doc.go, "Floods"). Default 1,000.
	MaxUnseen int
	// UnseenShare bounds the fetches of never-seen ids that the API answers 404 or 403
	// (forgeries) to this share of each rate-limit window of GET /transaction/{id}; once
	// spent, never-seen ids wait for the next window, known transactions do not. Default
	// 0.1.
	UnseenShare float64
	// ClaimShare bounds the fetches made for claims, deliveries about a transaction whose
	// last fetch found nothing new (replays of a real id with names its state does not
	// show), that find nothing new either, to this share of each rate-limit window of
	// GET /transaction/{id}; once spent, claims wait for the next window, of any number of
	// transactions, while deliveries about a transaction whose last fetch found something
	// (a real fact's, most likely) are fetched at once. Default 0.2.
	ClaimShare float64
	// Workers bounds the transactions confirmed at once, and the handler's goroutines
	// (one more schedules the waits). Default: the Store's connections if it states them
	// ([Pooled]: package sqlstore's Store does), else 8. A turn holds a store connection
	// through its fetch, so a replica's ceiling is min(Workers, connections) turns under
	// way, each as long as the API's latency: leave Workers unset and size the store's
	// connections, the one knob of a replica's capacity.
	Workers int
	// Refetch and MaxRefetch pace the confirming fetches of one transaction, across the
	// replicas sharing the Store: after a fetch that found nothing new (a replayed or
	// forged delivery) a delivery of a name already tried waits Refetch, then four times
	// longer each time, up to MaxRefetch; deliveries that arrive meanwhile are coalesced
	// into that one fetch. A delivery of a confirmable name not tried yet is fetched at
	// once, and a fetch that finds something new resets the pace. Defaults 250ms and 5s.
	Refetch, MaxRefetch time.Duration
	// Replica names this handler as the holder of its leases in a shared Store; default a
	// random name, so that a restarted process is a new holder.
	Replica string
	// ClaimLease is how long a transaction's lease is held for one turn: its confirming
	// fetch and the callbacks of the events it hands over. A lease whose holder died is
	// taken over after it. It must exceed the callbacks' longest run. Default 2 min.
	ClaimLease time.Duration
	// Retention is how long the Store keeps what it knows of a finished transaction:
	// RunReconciler prunes what finished longer ago (Store.Prune), one replica at a
	// time, and a tombstone of each is kept TombstoneHorizon longer. Default 30 days;
	// negative keeps everything.
	Retention time.Duration
	// Reserve is how many requests of each rate-limit window of GET /transaction/{id} the
	// handler leaves to the application: once an answer says no more than Reserve remain,
	// confirmations wait for the window's reset instead of spending them (and then 429s).
	// Default a tenth of the limit the API states (RateLimit-Limit); -1 for none. Fetches
	// already under way when an answer reaches the reserve still complete: up to
	// Workers-1 of the reserve can be spent.
	Reserve int
	// OnUnconfirmedHint, if set, receives the deliveries no state can confirm (see Hint).
	OnUnconfirmedHint HintFunc
	// Now is the clock of leases and of the pace; default time.Now.
	Now func() time.Time
	// Secrets, when set, make a delivery prove its origin: its URL's last path segment
	// must be one of them (see DeliveryURL), or it is refused with 404 before any work.
	// The first is current; the others are still accepted while a rotation is under way.
	// Each must be 22 to 128 characters of A-Z, a-z, 0-9, '-' and '_' (NewSecret).
	Secrets []string
	// Observer sees each step of receiving, for telemetry (escrowotel implements it);
	// default NopObserver.
	Observer Observer
}

// Handler receives webhook deliveries (it is an http.Handler) and reconciles missed ones.
type Handler struct {
	client *escrow.Client
	fn     Callback
	opt    Options
	log    *slog.Logger
	door   *door // refuses deliveries without a secret (secret.go)

	ctx    context.Context // ends when Shutdown gives up waiting
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu      sync.Mutex
	queues  map[int64]*txQueue // per transaction with work queued or under way
	closed  bool
	idle    chan struct{} // closed when active drops to 0
	partner *bool         // whether the account answers the partner listing; nil: not yet known
	paused  time.Time     // no confirming fetch before this: the allowance left is the application's
	// pruneNext: no prune before this; another replica may hold the prune lease till then.
	pruneNext time.Time

	// The workers and their lanes (pool.go).
	lanes      [kinds]lane // ids ready for a worker, by qkind
	workers    int         // worker goroutines running
	unseen     int         // queues of never-seen ids (kindUnchecked and kindUnseen)
	later      wakeups     // queues set aside until a time
	scheduling bool        // the scheduler goroutine runs
	kick       chan struct{}
	known      *idCache    // ids the account has: handed over, reconciled, listed, in the Store
	replays    *replayMemo // names known to be replays, per transaction
	neg        *idCache    // ids the API answered 404 or 403 lately
	owed       idRanges    // never-seen ids past MaxUnseen, owed a listing or a fetch
	unlisted   idRanges    // owed ids a listing did not name: owed a fetch
	listing    bool        // a listing of never-seen ids is under way
	newest     int64       // the newest id the account is known to have
	budget     shareBudget // never-seen ids' wasted fetches in this rate-limit window
	claims     shareBudget // fetches for claims tried before that found nothing new
	unseenAt   time.Time   // the never-seen lane waits till then: share spent, listing done
	listAt     time.Time   // no listing of never-seen ids before this
	listWake   time.Time   // the wakeup set for listAt
	stats      Stats
}

// txQueue is what waits for one transaction in this replica: the coalesced deliveries
// and a state the reconciler read. The pace of its fetches is kept in the Store.
type txQueue struct {
	events  []escrow.EventName  // distinct delivered names, in arrival order
	tx      *escrow.Transaction // read by the reconciler, nil if none
	recheck bool                // the reconciler asks for a fetch of a tracked transaction

	b        *batch // the batch under way (taken from the above), nil if none
	attempt  int    // of b
	state    qstate
	kind     qkind
	paceWait bool      // waiting for the transaction's pace (a delivery ends the wait)
	listed   bool      // tx was listed after the deliveries came: it confirms them unfetched
	owed     bool      // a never-seen id owed a look, taken with no delivery kept: fetch it
	asked    int       // len(events) when a listing asked about it: those it confirms
	gen      uint64    // counts the waits, so that a stale wakeup is ignored
	since    time.Time // when the oldest delivery waiting arrived, for the Observer
}

func (q *txQueue) pending() bool { return len(q.events) > 0 || q.tx != nil || q.recheck || q.owed }

// NewHandler returns a Handler that confirms events with client, which must authenticate
// as the account the webhook is registered for, and hands them to fn.
func NewHandler(client *escrow.Client, fn Callback, opt Options) *Handler {
	if opt.Store == nil {
		opt.Store = new(MemoryStore)
	}
	if opt.MaxAttempts <= 0 {
		opt.MaxAttempts = 8
	}
	if opt.RetryWait <= 0 {
		opt.RetryWait = 500 * time.Millisecond
	}
	if opt.MaxRetryWait <= 0 {
		opt.MaxRetryWait = 30 * time.Second
	}
	if opt.MaxQueued <= 0 {
		opt.MaxQueued = 10_000
	}
	workersDefault(&opt)
	floodDefaults(&opt)
	if opt.Refetch <= 0 {
		opt.Refetch = 250 * time.Millisecond
	}
	if opt.MaxRefetch < opt.Refetch {
		opt.MaxRefetch = max(opt.Refetch, 5*time.Second)
	}
	if opt.ClaimLease <= 0 {
		opt.ClaimLease = 2 * time.Minute
	}
	if opt.Retention == 0 {
		opt.Retention = 30 * 24 * time.Hour
	}
	if opt.Replica == "" {
		var b [8]byte
		rand.Read(b[:]) // never fails (crypto/rand)
		opt.Replica = "replica-" + hex.EncodeToString(b[:])
	}
	if opt.Now == nil {
		opt.Now = time.Now
	}
	if opt.Observer == nil {
		opt.Observer = NopObserver{}
	}
	log := opt.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Handler{
		client: client, fn: fn, opt: opt, log: log, door: newDoor(opt.Secrets, log),
		ctx: ctx, cancel: cancel,
		queues:  make(map[int64]*txQueue),
		kick:    make(chan struct{}, 1),
		neg:     newIDCache(time.Minute, 100_000),
		known:   newIDCache(30*24*time.Hour, 100_000),
		replays: newReplayMemo(100_000),
		budget:  shareBudget{share: opt.UnseenShare},
		claims:  shareBudget{share: opt.ClaimShare},
	}
}

// Replica returns the name this handler holds leases under.
func (h *Handler) Replica() string { return h.opt.Replica }

// ServeHTTP parses a delivery and queues it, answering before any work is done: the sender
// waits at most 10 s. With Options.Secrets, a delivery whose URL carries none of them is
// answered 404 before anything else (Stats().Refused counts them). Malformed deliveries get the status of their *escrow.EventError;
// deliveries after Shutdown, or about one transaction too many (MaxQueued), get 503.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !h.door.admits(r) {
		h.door.refuse(w, r)
		h.observeArrival(r.Context(), 0, "", DeliveryRefused, http.StatusNotFound)
		return
	}
	ev, err := escrow.ParseEvent(r)
	if err != nil {
		var pe *escrow.EventError
		errors.As(err, &pe)
		h.log.Warn("escrow webhook: refused delivery", "reason", pe.Reason, "remote", r.RemoteAddr)
		http.Error(w, pe.Reason, pe.StatusCode)
		h.observeArrival(r.Context(), 0, "", DeliveryRefused, pe.StatusCode)
		return
	}
	if !confirmable(ev.Name) && (!validHintName(ev.Name) || h.opt.OnUnconfirmedHint == nil) {
		// Answered 200 like any delivery, so a sender learns nothing; never queued or kept.
		w.WriteHeader(http.StatusOK)
		if validHintName(ev.Name) { // nothing would receive it: no state shows it, no OnUnconfirmedHint
			h.log.Debug("escrow webhook: unconfirmable event dropped", "transaction_id", ev.TransactionID, "event", ev.Name)
			h.observeArrival(r.Context(), ev.TransactionID, ev.Name, DeliveryUnconfirmed, http.StatusOK)
			return
		}
		h.log.Warn("escrow webhook: delivery dropped: invalid event name", "transaction_id", ev.TransactionID, "name_length", len(ev.Name))
		h.observeArrival(r.Context(), ev.TransactionID, "", DeliveryDropped, http.StatusOK)
		return
	}
	if err := h.enqueue(ev.TransactionID, ev.Name, nil, false); err != nil {
		http.Error(w, err.Error(), http.StatusServiceUnavailable)
		h.observeArrival(r.Context(), ev.TransactionID, ev.Name, DeliveryRefused, http.StatusServiceUnavailable)
		return
	}
	w.WriteHeader(http.StatusOK)
}

// errClosed and errFull refuse work the handler cannot take.
var (
	errClosed = errors.New("webhook handler is shut down")
	errFull   = errors.New("webhook handler queue is full")
)

// enqueue adds a delivered event name, a state read by the reconciler, or the
// reconciler's request to fetch a tracked transaction to the transaction's queue, and
// has a worker take it. A delivery of a never-seen id may be dropped (see newQueue).
func (h *Handler) enqueue(id int64, name escrow.EventName, tx *escrow.Transaction, recheck bool) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return errClosed
	}
	if name != "" && h.replays.replay(id, name) {
		h.log.Debug("escrow webhook: replayed delivery dropped as it arrived", "transaction_id", id, "event", name)
		h.observeArrival(h.ctx, id, name, DeliveryDuplicate, http.StatusOK)
		return nil
	}
	q, err := h.queueOf(id, tx != nil || recheck)
	if q == nil {
		if err == nil && name != "" { // dropped: see newQueue
			h.observeArrival(h.ctx, id, name, DeliveryDropped, http.StatusOK)
		}
		return err
	}
	if tx != nil {
		q.tx = tx
	}
	q.recheck = q.recheck || recheck
	if name != "" {
		h.observeQueued(q, id, name)
		q.events = addNames(q.events, []escrow.EventName{name})
		q.listed = false // a state listed before may not show it
	}
	if q.state == qIdle || (q.state == qWaiting && q.paceWait && name != "") {
		h.place(id, q)
	}
	return nil
}

// signalIdle wakes Flush once nothing is pending, and reports the transactions with work
// left. h.mu must be held.
func (h *Handler) signalIdle() {
	h.opt.Observer.QueueDepth(h.ctx, len(h.queues))
	if len(h.queues) == 0 && h.idle != nil {
		close(h.idle)
		h.idle = nil
	}
}

// batch is the work of one transaction's turn: the coalesced deliveries of a
// transaction, or a state the reconciler read, and the lease it is done under.
type batch struct {
	id     int64
	q      *txQueue
	events []escrow.EventName
	tx     *escrow.Transaction
	fetch  bool // whether tx must be (re)fetched before use
	// tracked: the store tracks the transaction as unfinished (a reconciler's recheck), so
	// finding it unreadable ends the tracking. Deliveries never create such a record.
	tracked bool
	// ifKnown: the lease is asked for only if the Store knows the transaction (a
	// never-seen id's look-up); unknown: it did not.
	ifKnown, unknown bool

	// The turn, while this replica holds the transaction's lease.
	held    bool
	lease   Lease
	marks   int64           // Turn.Marks as last seen
	handed  map[string]bool // facts recorded as done, and those handed over since
	pace    Pace            // as the store had it when the turn began
	done    []string        // handed over under the lease, not yet recorded
	finish  bool            // the transaction is to be recorded finished
	fetched bool            // a confirming fetch was made in this turn
	fresh   bool            // something was handed over in this turn
	// claim: the fetch under way is for names tried before (ClaimShare).
	claim bool
	// unreadable: the fetch was answered 404 or 403.
	unreadable bool
	obs        batchObservation // what the Observer is told (observer.go)
}

// try runs a batch's turns: it takes the transaction's lease (or leaves the batch's names
// to the replica holding it, and is done), confirms and hands over what is new, and
// yields the lease, going on while other replicas asked for more during the turn. paced
// > 0 asks to be called again after that wait: the batch's names were all tried before
// and the transaction's pace does not allow a fetch yet.
func (h *Handler) try(b *batch) (paced time.Duration, err error) {
	for {
		if b.held && h.opt.Now().After(b.lease.Expires.Add(-h.opt.ClaimLease/2)) {
			if ok, err := h.renew(b); err != nil || !ok {
				return 0, err
			}
		}
		if !b.held {
			if ok, err := h.acquire(b); err != nil || !ok {
				return 0, err
			}
		}
		if wait := h.paced(b, h.opt.Now()); wait > 0 {
			// The lease is released for the wait, with the batch's names, so that a
			// delivery of something new at another replica is fetched at once.
			h.giveUp(b)
			return wait, nil
		}
		err := h.confirm(b)
		h.settleClaim(b)
		if err != nil {
			// The lease is kept for the retry, which reuses the state read; what was
			// handed over is recorded when the turn ends.
			return 0, err
		}
		if again, err := h.yield(b, false); err != nil || !again {
			return 0, err
		}
	}
}

// acquire asks the Store for the transaction's lease and reports whether this replica
// holds it. If another does, the batch's names were left to it.
func (h *Handler) acquire(b *batch) (bool, error) {
	now := h.opt.Now()
	l := Lease{TransactionID: b.id, Holder: h.opt.Replica, Expires: now.Add(h.opt.ClaimLease), IfKnown: b.ifKnown}
	turn, err := h.opt.Store.Acquire(h.ctx, l, b.events, now)
	switch {
	case err != nil:
		return false, fmt.Errorf("leasing: %w", err)
	case turn.Unknown:
		b.unknown = true
		return false, nil
	case turn.Pruned:
		h.log.Debug("escrow webhook: delivery for a finished and pruned transaction dropped", "transaction_id", b.id, "events", b.events)
		h.observeDropped(b)
		h.learnPruned(b.id)
		return false, nil
	case turn.Replayed:
		h.log.Debug("escrow webhook: replayed deliveries dropped without a fetch", "transaction_id", b.id, "events", b.events)
		h.observeReplays(b)
		h.learn(b.id, turn.Handed, b.events)
		return false, nil
	case !turn.Granted:
		h.log.Debug("escrow webhook: another replica is confirming the transaction; left to it", "transaction_id", b.id, "events", b.events)
		return false, nil
	}
	l.IfKnown, b.ifKnown = false, false // known now: renewals need not ask
	b.held, b.lease, b.marks, b.handed, b.pace = true, l, turn.Marks, turn.Handed, turn.Pace
	b.fetched, b.fresh, b.unreadable = false, false, false
	if len(turn.Pending) > 0 { // delivered to other replicas: confirm them too
		b.events, b.fetch = addNames(b.events, turn.Pending), true
	}
	return true, nil
}

// renew extends the lease a batch holds before its retries outlive it. If another
// replica took it over, the turn ends: what it handed over is recorded, the rest is left
// to the new holder.
func (h *Handler) renew(b *batch) (bool, error) {
	now := h.opt.Now()
	l := b.lease
	l.Expires = now.Add(h.opt.ClaimLease)
	turn, err := h.opt.Store.Acquire(h.ctx, l, nil, now)
	if err != nil {
		return false, fmt.Errorf("leasing: %w", err)
	}
	if !turn.Granted {
		h.giveUp(b)
		return false, nil
	}
	b.lease, b.marks = l, turn.Marks
	for k := range turn.Handed {
		b.handed[k] = true
	}
	if len(turn.Pending) > 0 {
		b.events, b.fetch = addNames(b.events, turn.Pending), true
	}
	return true, nil
}

// paced returns how long the batch must wait before its fetch. A transaction whose last
// fetch found something new (no pace) is fetched at once: its deliveries are facts about
// to be confirmed. Otherwise they are claims: a fetch for names all tried since then
// waits for the transaction's pace, and any fetch with names waits for the claims' share
// of the window (ClaimShare), so that replays of real ids, whatever names they carry,
// spend no more than that share, and other transactions' facts are fetched at once.
func (h *Handler) paced(b *batch, now time.Time) time.Duration {
	b.claim = false
	if !b.fetch || Replayed(b.events, b.handed) || b.pace.Hold == 0 {
		return 0 // replays are dropped without a fetch (confirm)
	}
	if wait := b.pace.NotBefore.Sub(now); wait > 0 && !untried(b.events, b.pace.Tried) {
		return wait
	}
	if len(b.events) == 0 {
		return 0 // a reconciler's recheck spends no claim's share
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	ok, retry := h.claims.allows(now)
	if !ok {
		return max(retry.Sub(now), time.Millisecond)
	}
	h.claims.waste() // counted now, so that workers at once take no more than the share
	b.claim = true
	return 0
}

// settleClaim gives a claim's share back when its fetch was not made or found something
// new: only claims that found nothing spend the share.
func (h *Handler) settleClaim(b *batch) {
	if b.claim && (!b.fetched || b.fresh) {
		h.mu.Lock()
		h.claims.refund()
		h.mu.Unlock()
	}
	b.claim = false
}

// untried reports whether events hold a confirmable name not tried since the last fetch
// that found something new: what may be a real fact, fetched at once.
func untried(events, tried []escrow.EventName) bool {
	return slices.ContainsFunc(events, func(n escrow.EventName) bool {
		return confirmable(n) && !slices.Contains(tried, n)
	})
}

// yield records what the turn handed over and ends it; again reports that other
// replicas asked for more meanwhile: the lease goes on, and the batch holds their names.
// release gives the lease up in any case, leaving the batch's names to the next holder.
func (h *Handler) yield(b *batch, release bool) (again bool, err error) {
	now := h.opt.Now()
	y := Yield{Lease: b.lease, Marks: b.marks, Facts: b.done, Finished: b.finish, Pace: h.nextPace(b, now), Now: now, Release: release}
	y.Expires = now.Add(h.opt.ClaimLease)
	if release {
		y.Names = b.events
	}
	turn, err := h.opt.Store.Yield(context.WithoutCancel(h.ctx), y)
	if errors.Is(err, ErrTurnUndone) {
		// The callbacks' effects went with the turn: the retry takes the lease again,
		// reads what is recorded, and hands the rest over again from the state fetched.
		h.log.Warn("escrow webhook: a turn's end failed and undid its hand-overs; handing them over again",
			"transaction_id", b.id, "facts", b.done, "error", err)
		b.held, b.done, b.finish = false, nil, false
		return false, fmt.Errorf("recording: %w", err)
	}
	if errors.Is(err, ErrClaimLost) {
		h.log.Error("escrow webhook: a turn outlived its lease; another replica may have handed its events over too",
			"transaction_id", b.id, "facts", b.done)
		err = nil
	}
	if err != nil {
		return false, fmt.Errorf("recording: %w", err)
	}
	h.learn(b.id, b.handed, nil) // recorded now, the turn's facts with those before it
	covered := turn.Granted && h.covered(b, turn.Pending)
	b.done, b.finish, b.held = nil, false, turn.Granted
	if !turn.Granted {
		return false, nil
	}
	b.lease.Expires, b.marks, b.pace = y.Expires, turn.Marks, y.Pace
	b.events, b.fetched, b.fresh, b.unreadable = turn.Pending, false, false, false
	b.fetch = !covered
	if covered {
		h.hints(h.ctx, b)
	}
	return true, nil
}

// learn notes which names the facts recorded of a transaction make replays, and names
// found to be replays, so that their deliveries are dropped as they arrive.
func (h *Handler) learn(id int64, handed map[string]bool, names []escrow.EventName) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.replays.learn(id, handed)
	h.replays.learnNames(id, names)
}

// learnPruned notes that every name of a pruned transaction is a replay.
func (h *Handler) learnPruned(id int64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.replays.learnAll(id)
}

// covered reports whether the state this turn fetched already confirms the names
// delivered to other replicas during the turn: each confirmable one is a replay of what
// is handed over now, this turn's facts with those before it (Replayed). Then they are
// handed over (hints passed on) from that state without a new fetch. An item event's name
// that some items do not show yet may be another item's, made after the fetch, and a
// name the state does not show may have happened since: those take a fetch (paced, if
// tried before).
func (h *Handler) covered(b *batch, pending []escrow.EventName) bool {
	if b.tx == nil || len(pending) == 0 {
		return false // asked to look again, for no name: a reconciler's recheck
	}
	for _, n := range pending {
		if confirmable(n) && !Replayed([]escrow.EventName{n}, b.handed) {
			return false
		}
	}
	return true
}

// nextPace is the transaction's pace after this turn: reset by a fetch that found
// something new, slowed by one that found nothing.
// An id the API does not show, of which nothing was ever recorded, keeps no pace: a
// forged id leaves nothing in the Store (its lease state is idle, so deleted at the turn's
// end), and this replica's negative cache keeps it from being fetched again for a while.
func (h *Handler) nextPace(b *batch, now time.Time) Pace {
	switch {
	case b.fresh, b.unreadable && len(b.handed) == 0:
		return Pace{}
	case !b.fetched:
		return b.pace
	}
	hold := min(max(b.pace.Hold*4, h.opt.Refetch), h.opt.MaxRefetch)
	tried := slices.Clone(b.pace.Tried)
	for _, n := range b.events {
		if confirmable(n) {
			tried = addNames(tried, []escrow.EventName{n})
		}
	}
	return Pace{NotBefore: now.Add(hold), Hold: hold, Tried: tried}
}

// giveUp ends the turn of a batch given up on: it records what was handed over and
// releases the lease, so that another replica can take the transaction over at once.
func (h *Handler) giveUp(b *batch) {
	if !b.held {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(h.ctx), 5*time.Second)
	defer cancel()
	now := h.opt.Now()
	y := Yield{Lease: b.lease, Marks: b.marks, Facts: b.done, Finished: b.finish, Pace: h.nextPace(b, now), Now: now, Release: true, Names: b.events}
	if _, err := h.opt.Store.Yield(ctx, y); err != nil && !errors.Is(err, ErrClaimLost) {
		h.log.Warn("escrow webhook: releasing a lease failed; it is taken over when it ends", "transaction_id", b.id, "error", err)
	}
	b.held, b.done, b.finish = false, nil, false
}

// confirm fetches the transaction if the batch needs it and hands over, in order, what
// it shows that was not handed over before. A nil error means the batch is done,
// including when it was dropped.
func (h *Handler) confirm(b *batch) error {
	ctx, id := h.ctx, b.id
	if b.fetch && Replayed(b.events, b.handed) {
		// A fetch could only show these facts as handed over already: no fetch, no pace.
		b.fetch = false
		if b.tx == nil {
			h.log.Debug("escrow webhook: replayed deliveries dropped without a fetch", "transaction_id", id, "events", b.events)
			h.observeReplays(b)
			return nil
		}
		// A retry's state read before: what it shows and was not handed over yet (a
		// callback failed) is still to be handed over, replays arriving meanwhile or not.
	}
	if b.fetch {
		b.fetched = true
		tx, err := h.observedGet(ctx, b)
		if errors.Is(err, escrow.ErrNotFound) || errors.Is(err, escrow.ErrForbidden) {
			h.dropUnreadable(b)
			return nil
		}
		if err != nil {
			return fmt.Errorf("confirming: %w", err)
		}
		b.tx, b.fetch = tx, false // a retry reuses it: the facts it shows stay true
		h.hints(ctx, b)
	}
	if b.tx == nil { // unreadable: nothing to hand over
		return nil
	}
	if k := shapeKey(b.tx); !b.handed[k] { // recorded with the turn's facts (Replayed reads it)
		b.handed[k] = true
		b.done = append(b.done, k)
	}
	facts := factsOf(b.tx)
	plan, unconfirmed := planBatch(id, b.events, b.tx, facts, b.handed)
	for _, name := range unconfirmed {
		h.log.Warn("escrow webhook: delivery dropped as unconfirmed: the transaction does not show it",
			"transaction_id", id, "event", name)
	}
	for _, p := range plan {
		p.ev.Claim = Claim{TransactionID: id, Facts: p.keys, Owner: h.opt.Replica, Expires: b.lease.Expires}
		if err := h.observedCallback(ctx, b, p.ev); err != nil {
			return fmt.Errorf("callback: %w", err)
		}
		markAll(b.handed, p.keys)
		b.done = append(b.done, p.keys...)
		b.fresh = true
	}
	// Finished only when the fetched state is terminal and every fact it shows was handed
	// over: a late delivery of an earlier event must not end the reconciler's interest.
	b.finish = b.finish || (terminal(b.tx) && allIn(keysOf(facts), b.handed))
	h.observeOutcomes(b, unconfirmed)
	return nil
}

// dropUnreadable ends a batch whose fetch the API answered 404 or 403: its deliveries are
// dropped unconfirmed, and a tracked transaction is no longer tracked.
func (h *Handler) dropUnreadable(b *batch) {
	b.unreadable = true
	h.unreadable(b)
	if len(b.events) > 0 {
		h.log.Warn("escrow webhook: unconfirmed deliveries dropped: the account cannot read the transaction",
			"transaction_id", b.id, "events", b.events)
	}
	if b.tracked {
		h.log.Warn("escrow webhook: no longer readable; no longer tracked", "transaction_id", b.id)
		b.finish = true
	}
	b.fetch = false
	h.observeOutcomes(b, b.events) // unreadable: none confirmed
}

// get fetches a transaction within the allowance: it waits while the rate-limit window is
// down to the application's reserve, and notes from each answer when that is so.
func (h *Handler) get(ctx context.Context, id int64) (*escrow.Transaction, error) {
	h.mu.Lock()
	wait := time.Until(h.paused)
	h.mu.Unlock()
	if wait > 0 {
		h.log.Debug("escrow webhook: waiting for the rate-limit window, leaving the rest to the application", "wait", wait)
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		}
	}
	var resp escrow.Response
	tx, err := h.client.Transactions.Get(ctx, id, escrow.WithResponse(&resp))
	h.mu.Lock()
	h.budget.observe(resp.RateLimit)
	h.claims.observe(resp.RateLimit)
	h.mu.Unlock()
	if rl := resp.RateLimit; rl.Remaining >= 0 && !rl.Reset.IsZero() {
		reserve := h.opt.Reserve
		if reserve == 0 && rl.Limit > 0 {
			reserve = rl.Limit / 10
		}
		if rl.Remaining <= reserve {
			h.mu.Lock()
			if rl.Reset.After(h.paused) {
				h.paused = rl.Reset
			}
			h.mu.Unlock()
		}
	}
	return tx, err
}

// hints passes the batch's unconfirmable names to OnUnconfirmedHint, once per fetch.
func (h *Handler) hints(ctx context.Context, b *batch) {
	for _, name := range b.events {
		if confirmable(name) {
			continue
		}
		if h.opt.OnUnconfirmedHint == nil {
			h.log.Debug("escrow webhook: unconfirmable event dropped", "transaction_id", b.id, "event", name)
			continue
		}
		h.opt.OnUnconfirmedHint(ctx, Hint{Event: name, TransactionID: b.id, Transaction: b.tx})
	}
}

// planBatch decides what a batch hands over: every fact the state shows that was not
// handed over before, in order, so that the callback sees a transaction's state changes
// in order and as soon as one fetch shows them. Facts of the batch's delivered events come
// FromWebhook; the others FromReconcile: their delivery was lost, or is on its way and
// will be dropped as a replay (Replayed) without a fetch. unconfirmed lists the delivered
// confirmable names the state does not show.
func planBatch(id int64, events []escrow.EventName, tx *escrow.Transaction, facts []fact, handed map[string]bool) (plan []handover, unconfirmed []escrow.EventName) {
	delivered := make(map[escrow.EventName]bool, len(events))
	for _, name := range events {
		if !confirmable(name) {
			continue
		}
		delivered[name] = true
		if !slices.ContainsFunc(facts, func(f fact) bool { return f.event == name }) {
			unconfirmed = append(unconfirmed, name)
		}
	}
	return pending(id, tx, delivered, facts, handed), unconfirmed
}

// handover is one event to give the callback, and the keys that record it.
type handover struct {
	ev   ConfirmedEvent
	keys []string
}

// pending groups the facts not handed over into events, in order: facts of a delivered
// event come FromWebhook, the others FromReconcile.
func pending(id int64, tx *escrow.Transaction, delivered map[escrow.EventName]bool, facts []fact, handed map[string]bool) []handover {
	var plan []handover
	for _, f := range facts {
		if handed[f.key] {
			continue
		}
		if n := len(plan); n == 0 || plan[n-1].ev.Name != f.event {
			src := FromReconcile
			if delivered[f.event] {
				src = FromWebhook
			}
			plan = append(plan, handover{ev: ConfirmedEvent{
				Event:       escrow.Event{Name: f.event, EventType: escrow.EventTypeTransaction, TransactionID: id},
				Transaction: tx, Source: src,
			}})
		}
		p := &plan[len(plan)-1]
		p.keys = append(p.keys, f.key)
		if f.itemID != 0 {
			p.ev.ItemIDs = append(p.ev.ItemIDs, f.itemID)
		}
	}
	return plan
}

func keysOf(facts []fact) []string {
	out := make([]string, len(facts))
	for i, f := range facts {
		out[i] = f.key
	}
	return out
}

func allIn(keys []string, set map[string]bool) bool {
	for _, k := range keys {
		if !set[k] {
			return false
		}
	}
	return true
}

func markAll(set map[string]bool, keys []string) {
	for _, k := range keys {
		set[k] = true
	}
}

// Flush waits until every queued delivery and reconciled state has been processed
// (handed over, dropped or given up on), or ctx ends.
func (h *Handler) Flush(ctx context.Context) error {
	h.mu.Lock()
	if len(h.queues) == 0 {
		h.mu.Unlock()
		return nil
	}
	if h.idle == nil {
		h.idle = make(chan struct{})
	}
	idle := h.idle
	h.mu.Unlock()
	select {
	case <-idle:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Shutdown stops taking deliveries (they are answered 503), drops the never-seen ids still
// waiting for a fetch (a real one among them is found by the next reconciliation), waits
// for queued events until ctx ends, then cancels the callbacks still running and waits for
// them to return. No goroutine of the handler is left behind. The lease of a turn whose
// callback was cancelled is released, with what was handed over before recorded; what was
// not handed over is found by the next reconciliation, by this process after a restart or
// by another replica.
func (h *Handler) Shutdown(ctx context.Context) error {
	h.mu.Lock()
	h.closed = true
	h.dropUnseen()
	h.mu.Unlock()
	err := h.Flush(ctx)
	h.cancel()
	h.wg.Wait()
	h.abandon()
	return err
}

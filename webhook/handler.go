package webhook

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	mrand "math/rand/v2"
	"net/http"
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
	// MaxQueued bounds the transactions with deliveries waiting; a delivery about one
	// more is answered 503. Deliveries about a transaction already waiting are coalesced
	// and always taken. Default 10,000.
	MaxQueued int
	// Workers bounds the transactions confirmed at once; default 8.
	Workers int
	// Refetch and MaxRefetch pace the confirming fetches of one transaction: after a
	// fetch that found nothing new (a replayed or forged delivery) the next one waits
	// Refetch, then four times longer each time, up to MaxRefetch; deliveries that arrive
	// meanwhile are coalesced into that one fetch. A fetch that finds something new
	// resets the pace. Defaults 250ms and 5s.
	Refetch, MaxRefetch time.Duration
	// Replica names this handler as the owner of its claims in a shared Store; default a
	// random name, so that a restarted process is a new owner.
	Replica string
	// ClaimLease is how long a claim is held for its callback; a claim whose owner died
	// is taken over after it. It must exceed the callback's longest run. Default 2 min.
	ClaimLease time.Duration
	// Reserve is how many requests of each rate-limit window of GET /transaction/{id} the
	// handler leaves to the application: once an answer says no more than Reserve remain,
	// confirmations wait for the window's reset instead of spending them (and then 429s).
	// Default a tenth of the limit the API states (RateLimit-Limit); -1 for none. Fetches
	// already under way when an answer reaches the reserve still complete: up to
	// Workers-1 of the reserve can be spent.
	Reserve int
	// OnUnconfirmedHint, if set, receives the deliveries no state can confirm (see Hint).
	OnUnconfirmedHint HintFunc
	// Now is the clock of claim leases; default time.Now.
	Now func() time.Time
	// Secrets, when set, make a delivery prove its origin: its URL's last path segment
	// must be one of them (see DeliveryURL), or it is refused with 404 before any work.
	// The first is current; the others are still accepted while a rotation is under way.
	// Each must be 22 to 128 characters of A-Z, a-z, 0-9, '-' and '_' (NewSecret).
	Secrets []string
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
	slots  chan struct{} // one per worker confirming a batch
	wg     sync.WaitGroup

	mu      sync.Mutex
	queues  map[int64]*txQueue // per transaction; one worker goroutine per entry
	active  int                // entries with pending or in-process work
	closed  bool
	idle    chan struct{} // closed when active drops to 0
	partner *bool         // whether the account answers the partner listing; nil: not yet known
	paused  time.Time     // no confirming fetch before this: the allowance left is the application's
}

// txQueue is what waits for one transaction: the coalesced deliveries, a state the
// reconciler read, and the pace of its confirming fetches.
type txQueue struct {
	events     []escrow.EventName  // distinct delivered names, in arrival order
	tx         *escrow.Transaction // read by the reconciler, nil if none
	recheck    bool                // the reconciler asks for a fetch of a tracked transaction
	processing bool
	next       time.Time     // no confirming fetch before this
	hold       time.Duration // the wait after the last fetch
}

func (q *txQueue) pending() bool { return len(q.events) > 0 || q.tx != nil || q.recheck }

// maxNamesPerBatch bounds the distinct delivered names one transaction's batch keeps:
// 14 confirmable names plus a few hints. Names beyond it are dropped.
const maxNamesPerBatch = 24

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
	if opt.Workers <= 0 {
		opt.Workers = 8
	}
	if opt.Refetch <= 0 {
		opt.Refetch = 250 * time.Millisecond
	}
	if opt.MaxRefetch < opt.Refetch {
		opt.MaxRefetch = max(opt.Refetch, 5*time.Second)
	}
	if opt.ClaimLease <= 0 {
		opt.ClaimLease = 2 * time.Minute
	}
	if opt.Replica == "" {
		var b [8]byte
		rand.Read(b[:]) // never fails (crypto/rand)
		opt.Replica = "replica-" + hex.EncodeToString(b[:])
	}
	if opt.Now == nil {
		opt.Now = time.Now
	}
	log := opt.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Handler{
		client: client, fn: fn, opt: opt, log: log, door: newDoor(opt.Secrets, log),
		ctx: ctx, cancel: cancel,
		slots:  make(chan struct{}, opt.Workers),
		queues: make(map[int64]*txQueue),
	}
}

// Replica returns the name this handler claims facts under.
func (h *Handler) Replica() string { return h.opt.Replica }

// ServeHTTP parses a delivery and queues it, answering before any work is done: the sender
// waits at most 10 s. With Options.Secrets, a delivery whose URL carries none of them is
// answered 404 before anything else (Stats().Refused counts them). Malformed deliveries get the status of their *escrow.EventError;
// deliveries after Shutdown, or about one transaction too many (MaxQueued), get 503.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !h.door.admits(r) {
		h.door.refuse(w, r)
		return
	}
	ev, err := escrow.ParseEvent(r)
	if err != nil {
		var pe *escrow.EventError
		errors.As(err, &pe)
		h.log.Warn("escrow webhook: refused delivery", "reason", pe.Reason, "remote", r.RemoteAddr)
		http.Error(w, pe.Reason, pe.StatusCode)
		return
	}
	if !confirmable(ev.Name) && !validHintName(ev.Name) {
		// Answered 200 like any delivery, so a sender learns nothing; never queued or kept.
		h.log.Warn("escrow webhook: delivery dropped: invalid event name", "transaction_id", ev.TransactionID, "name_length", len(ev.Name))
		w.WriteHeader(http.StatusOK)
		return
	}
	if err := h.enqueue(ev.TransactionID, ev.Name, nil, false); err != nil {
		http.Error(w, err.Error(), http.StatusServiceUnavailable)
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
// reconciler's request to fetch a tracked transaction to the transaction's queue,
// starting its worker if none runs.
func (h *Handler) enqueue(id int64, name escrow.EventName, tx *escrow.Transaction, recheck bool) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return errClosed
	}
	q := h.queues[id]
	if q == nil {
		if len(h.queues) >= h.opt.MaxQueued {
			return errFull
		}
		q = &txQueue{}
		h.queues[id] = q
		h.wg.Add(1)
		go h.work(id, q)
	}
	if !q.pending() && !q.processing {
		h.active++
	}
	if tx != nil {
		q.tx = tx
	}
	q.recheck = q.recheck || recheck
	if name != "" && len(q.events) < maxNamesPerBatch {
		known := false
		for _, n := range q.events {
			known = known || n == name
		}
		if !known {
			q.events = append(q.events, name)
		}
	}
	return nil
}

// work confirms one transaction's batches, one at a time and paced, and ends once nothing
// more arrived during the wait after its last batch.
func (h *Handler) work(id int64, q *txQueue) {
	defer h.wg.Done()
	for {
		h.mu.Lock()
		wait := time.Until(q.next)
		h.mu.Unlock()
		if wait > 0 {
			t := time.NewTimer(wait)
			select {
			case <-t.C:
			case <-h.ctx.Done():
				t.Stop()
			}
		}
		h.mu.Lock()
		if !q.pending() || h.ctx.Err() != nil {
			if q.pending() {
				h.active-- // abandoned at shutdown
				h.signalIdle()
			}
			delete(h.queues, id)
			h.mu.Unlock()
			return
		}
		b := batch{id: id, events: q.events, tx: q.tx, fetch: len(q.events) > 0 || q.tx == nil, tracked: q.recheck}
		q.events, q.tx, q.recheck, q.processing = nil, nil, false, true
		h.mu.Unlock()

		fresh := h.process(&b)

		h.mu.Lock()
		q.processing = false
		switch {
		case fresh:
			q.hold = 0
		case b.fetched: // a fetch that brought nothing new: replayed, forged or premature
			q.hold = min(max(q.hold*4, h.opt.Refetch), h.opt.MaxRefetch)
		}
		q.next = time.Now().Add(q.hold)
		if !q.pending() {
			h.active--
			h.signalIdle()
		}
		h.mu.Unlock()
	}
}

// signalIdle wakes Flush once nothing is pending. h.mu must be held.
func (h *Handler) signalIdle() {
	if h.active == 0 && h.idle != nil {
		close(h.idle)
		h.idle = nil
	}
}

// batch is the work of one confirming fetch: the coalesced deliveries of a transaction,
// or a state the reconciler read.
type batch struct {
	id     int64
	events []escrow.EventName
	tx     *escrow.Transaction
	fetch  bool // whether tx must be (re)fetched before use
	// fetched: a confirming fetch was made for this batch.
	fetched bool
	// tracked: the store tracks the transaction as unfinished (a reconciler's recheck), so
	// finding it unreadable ends the tracking. Deliveries never create such a record.
	tracked bool
}

// process tries a batch until it is done, given up on, or the handler shuts down, and
// reports whether it handed anything over.
func (h *Handler) process(b *batch) (handed bool) {
	for attempt := 1; ; attempt++ {
		var n int
		err := h.withSlot(func() (err error) {
			n, err = h.try(b)
			return err
		})
		handed = handed || n > 0
		if err == nil {
			return handed
		}
		if attempt >= h.opt.MaxAttempts || h.ctx.Err() != nil {
			h.log.Error("escrow webhook: giving up; the next reconciliation will hand over what is missing",
				"transaction_id", b.id, "events", b.events, "attempts", attempt, "error", err)
			return handed
		}
		wait := min(h.opt.RetryWait<<min(attempt-1, 20), h.opt.MaxRetryWait)
		wait = wait/2 + mrand.N(wait/2+1) // jitter, so that failing transactions spread out
		var rle *escrow.RateLimitError
		if errors.As(err, &rle) {
			wait = max(wait, rle.RetryAfter) // the client knows when the allowance is back
		}
		h.log.Info("escrow webhook: retrying", "transaction_id", b.id, "events", b.events, "attempt", attempt, "wait", wait, "error", err)
		t := time.NewTimer(wait)
		select {
		case <-h.ctx.Done():
			t.Stop()
		case <-t.C:
		}
	}
}

// withSlot runs f while holding one of the Workers slots.
func (h *Handler) withSlot(f func() error) error {
	select {
	case h.slots <- struct{}{}:
	case <-h.ctx.Done():
		return h.ctx.Err()
	}
	defer func() { <-h.slots }()
	return f()
}

// errHeld: another replica holds a live claim on a fact due before ours; try again later.
var errHeld = errors.New("another replica is handing over an earlier event of this transaction")

// try confirms a batch and hands over what is new, in order, returning how many events
// it handed over. A nil error means the batch is done, including when it was dropped.
func (h *Handler) try(b *batch) (int, error) {
	ctx, id := h.ctx, b.id
	if b.fetch {
		b.fetched = true
		tx, err := h.get(ctx, id)
		if errors.Is(err, escrow.ErrNotFound) || errors.Is(err, escrow.ErrForbidden) {
			if len(b.events) > 0 {
				h.log.Warn("escrow webhook: unconfirmed deliveries dropped: the account cannot read the transaction",
					"transaction_id", id, "events", b.events)
			}
			if b.tracked {
				h.log.Warn("escrow webhook: no longer readable; no longer tracked", "transaction_id", id)
				if err := h.opt.Store.Finish(ctx, id); err != nil {
					return 0, fmt.Errorf("recording: %w", err)
				}
			}
			return 0, nil
		}
		if err != nil {
			return 0, fmt.Errorf("confirming: %w", err)
		}
		b.tx, b.fetch = tx, false // a retry reuses it: the facts it shows stay true
		h.hints(ctx, b)
	}
	tx := b.tx
	facts := factsOf(tx)
	handed, err := h.opt.Store.Handed(ctx, id)
	if err != nil {
		return 0, fmt.Errorf("reading the store: %w", err)
	}
	plan, unconfirmed := planBatch(id, b.events, tx, facts, handed)
	for _, name := range unconfirmed {
		h.log.Warn("escrow webhook: delivery dropped as unconfirmed: the transaction does not show it",
			"transaction_id", id, "event", name)
	}
	n := 0
	for _, p := range plan {
		p.ev.Claim = Claim{TransactionID: id, Facts: p.keys, Owner: h.opt.Replica, Expires: h.opt.Now().Add(h.opt.ClaimLease)}
		ok, err := h.opt.Store.Claim(ctx, p.ev.Claim, h.opt.Now())
		if err != nil {
			return n, fmt.Errorf("claiming: %w", err)
		}
		if !ok {
			now, err := h.opt.Store.Handed(ctx, id)
			if err != nil {
				return n, fmt.Errorf("reading the store: %w", err)
			}
			if !allIn(p.keys, now) {
				return n, errHeld
			}
			markAll(handed, p.keys) // another replica handed it over
			continue
		}
		if err := h.fn(ctx, p.ev); err != nil {
			if rerr := h.opt.Store.Release(context.WithoutCancel(ctx), p.ev.Claim); rerr != nil {
				h.log.Warn("escrow webhook: releasing a claim failed; it is taken over when its lease ends", "transaction_id", id, "error", rerr)
			}
			return n, fmt.Errorf("callback: %w", err)
		}
		if err := h.opt.Store.Done(context.WithoutCancel(ctx), p.ev.Claim); err != nil {
			if errors.Is(err, ErrClaimLost) {
				h.log.Error("escrow webhook: the callback outlived its claim's lease; another replica may have handed the event over too",
					"transaction_id", id, "event", p.ev.Name)
			} else {
				return n, fmt.Errorf("recording: %w", err)
			}
		}
		markAll(handed, p.keys)
		n++
	}
	// Finished only when the fetched state is terminal and every fact it shows was handed
	// over: a late delivery of an earlier event must not end the reconciler's interest.
	if terminal(tx) && allIn(keysOf(facts), handed) {
		if err := h.opt.Store.Finish(ctx, id); err != nil {
			return n, fmt.Errorf("recording: %w", err)
		}
	}
	return n, nil
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

// planBatch decides what a batch hands over. For deliveries: the facts of the delivered
// events the transaction shows and that were not handed over before, preceded by any
// earlier fact whose own delivery was lost (as FromReconcile), so that the callback sees
// a transaction's state changes in order; later facts wait for their own delivery or
// the reconciler. For a reconciled state (no events): every fact not handed over.
// unconfirmed lists the delivered confirmable names the state does not show.
func planBatch(id int64, events []escrow.EventName, tx *escrow.Transaction, facts []fact, handed map[string]bool) (plan []handover, unconfirmed []escrow.EventName) {
	upto := -1
	if len(events) == 0 {
		upto = len(facts) - 1
	}
	delivered := make(map[escrow.EventName]bool, len(events))
	for _, name := range events {
		if !confirmable(name) {
			continue
		}
		delivered[name] = true
		last := -1
		for i, f := range facts {
			if f.event == name {
				last = i
			}
		}
		if last < 0 {
			unconfirmed = append(unconfirmed, name)
		}
		upto = max(upto, last)
	}
	return pending(id, tx, delivered, facts[:upto+1], handed), unconfirmed
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
	if h.active == 0 {
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

// Shutdown stops taking deliveries (they are answered 503), waits for queued events until
// ctx ends, then cancels the callbacks still running and waits for them to return. No
// goroutine of the handler is left behind. A claim whose callback was cancelled is
// released; what was not handed over is found by the next reconciliation, by this
// process after a restart or by another replica.
func (h *Handler) Shutdown(ctx context.Context) error {
	h.mu.Lock()
	h.closed = true
	h.mu.Unlock()
	err := h.Flush(ctx)
	h.cancel()
	h.wg.Wait()
	return err
}

package webhook

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
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
	// FromReconcile: the event's delivery never came; the transaction's state showed it,
	// to the reconciler or while confirming a later delivery.
	FromReconcile Source = "reconcile"
)

// ConfirmedEvent is an event whose transaction was fetched and shows it happened.
type ConfirmedEvent struct {
	escrow.Event
	// Transaction is the transaction as fetched after the event; it may already show later
	// events too.
	Transaction *escrow.Transaction
	// ItemIDs are the items the event newly concerns (for ship, receive, accept and the
	// like); empty for events of the whole transaction.
	ItemIDs []int64
	Source  Source
}

// Callback receives confirmed events. A non-nil error makes the handler retry the event
// later; events of other transactions go on meanwhile. It must honour ctx, which ends on
// shutdown.
type Callback func(ctx context.Context, ev ConfirmedEvent) error

// Options tune a Handler. The zero value is usable.
type Options struct {
	// Store records what was handed over; default a new MemoryStore.
	Store Store
	// Logger receives dropped deliveries and retries; default silent.
	Logger *slog.Logger
	// MaxAttempts bounds the tries of one event (confirming and calling back); default 8.
	// An event given up on is handed over by the next reconciliation instead.
	MaxAttempts int
	// RetryWait is the first wait between tries, doubled each time up to MaxRetryWait;
	// defaults 500ms and 30s.
	RetryWait, MaxRetryWait time.Duration
	// MaxQueued bounds the events waiting to be processed; deliveries beyond it are
	// answered 503. Default 10,000.
	MaxQueued int
	// Workers bounds the transactions processed at once; default 8.
	Workers int
}

// Handler receives webhook deliveries (it is an http.Handler) and reconciles missed ones.
type Handler struct {
	client *escrow.Client
	fn     Callback
	opt    Options
	log    *slog.Logger

	ctx    context.Context // ends when Shutdown gives up waiting
	cancel context.CancelFunc
	slots  chan struct{} // one per worker processing a job
	wg     sync.WaitGroup

	mu      sync.Mutex
	queues  map[int64][]job // per transaction; a worker runs while its queue exists
	queued  int
	closed  bool
	idle    chan struct{} // closed when queues becomes empty
	partner *bool         // whether the account answers the partner listing; nil: not yet known
	mark    int64         // the newest transaction id the reconciler has seen
	started bool          // whether a reconciliation has set mark
}

// job is one event to confirm and hand over, or one reconciliation of a transaction.
type job struct {
	ev     escrow.Event
	tx     *escrow.Transaction // already fetched (reconcile), or nil to fetch
	source Source
}

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
	log := opt.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Handler{
		client: client, fn: fn, opt: opt, log: log,
		ctx: ctx, cancel: cancel,
		slots:  make(chan struct{}, opt.Workers),
		queues: make(map[int64][]job),
	}
}

// ServeHTTP parses a delivery and queues it, answering before any work is done: the sender
// waits at most 10 s. Malformed deliveries get the status of their *escrow.EventError;
// deliveries after Shutdown, or beyond MaxQueued, get 503.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	ev, err := escrow.ParseEvent(r)
	if err != nil {
		var pe *escrow.EventError
		errors.As(err, &pe)
		h.log.Warn("escrow webhook: refused delivery", "reason", pe.Reason, "remote", r.RemoteAddr)
		http.Error(w, pe.Reason, pe.StatusCode)
		return
	}
	if err := h.enqueue(job{ev: *ev, source: FromWebhook}); err != nil {
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

func (h *Handler) enqueue(j job) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	switch {
	case h.closed:
		return errClosed
	case h.queued >= h.opt.MaxQueued:
		return errFull
	}
	id := j.ev.TransactionID
	q, running := h.queues[id]
	h.queues[id] = append(q, j)
	h.queued++
	if !running {
		h.wg.Add(1)
		go h.work(id)
	}
	return nil
}

// work processes one transaction's queue in order and ends when it is empty.
func (h *Handler) work(id int64) {
	defer h.wg.Done()
	for {
		h.mu.Lock()
		q := h.queues[id]
		if len(q) == 0 {
			delete(h.queues, id)
			if len(h.queues) == 0 && h.idle != nil {
				close(h.idle)
				h.idle = nil
			}
			h.mu.Unlock()
			return
		}
		j := q[0]
		h.mu.Unlock()

		h.process(j)

		h.mu.Lock()
		h.queues[id] = h.queues[id][1:]
		h.queued--
		h.mu.Unlock()
	}
}

// process tries a job until it is done, given up on, or the handler shuts down.
func (h *Handler) process(j job) {
	for attempt := 1; ; attempt++ {
		err := h.withSlot(func() error { return h.try(j) })
		if err == nil {
			return
		}
		if attempt >= h.opt.MaxAttempts || h.ctx.Err() != nil {
			h.log.Error("escrow webhook: giving up on event; the next reconciliation will hand it over",
				"transaction_id", j.ev.TransactionID, "event", j.ev.Name, "attempts", attempt, "error", err)
			return
		}
		wait := min(h.opt.RetryWait<<min(attempt-1, 20), h.opt.MaxRetryWait)
		wait = wait/2 + rand.N(wait/2+1) // jitter, so that failing transactions spread out
		h.log.Info("escrow webhook: retrying event", "transaction_id", j.ev.TransactionID, "event", j.ev.Name, "attempt", attempt, "wait", wait, "error", err)
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

// handover is one event to give the callback, and the keys that record it.
type handover struct {
	ev   ConfirmedEvent
	keys []string
}

// try confirms a job's event (or reads the reconciled transaction) and hands over what is
// new. A nil error means the job is done, including when it was dropped.
func (h *Handler) try(j job) error {
	ctx, id := h.ctx, j.ev.TransactionID
	tx := j.tx
	if tx == nil {
		var err error
		tx, err = h.client.Transactions.Get(ctx, id)
		if errors.Is(err, escrow.ErrNotFound) || errors.Is(err, escrow.ErrForbidden) {
			h.log.Warn("escrow webhook: unconfirmed event dropped: the account cannot read the transaction",
				"transaction_id", id, "event", j.ev.Name)
			return nil
		}
		if err != nil {
			return fmt.Errorf("confirming: %w", err)
		}
	}
	handed, err := h.opt.Store.Handed(ctx, id)
	if err != nil {
		return fmt.Errorf("reading the store: %w", err)
	}
	facts := factsOf(tx)
	var plan []handover
	if j.source == FromReconcile {
		plan = missing(j.ev, tx, facts, handed)
	} else {
		var why string
		plan, why = confirm(j.ev, tx, facts, handed)
		if why != "" {
			h.log.Warn("escrow webhook: event dropped: "+why, "transaction_id", id, "event", j.ev.Name)
		}
	}
	finished := terminal(facts)
	for _, p := range plan {
		if err := h.fn(ctx, p.ev); err != nil {
			return fmt.Errorf("callback: %w", err)
		}
		if err := h.opt.Store.Record(ctx, id, p.keys, finished); err != nil {
			return fmt.Errorf("recording: %w", err)
		}
	}
	return nil
}

// confirm decides what a delivered event hands over: the facts of its event the
// transaction shows and that were not handed over before, preceded by any earlier fact
// whose own delivery was lost (as FromReconcile), so that the callback sees a
// transaction's state changes in order; an event the facts do not cover is handed over
// once per resulting state. why explains a drop.
func confirm(ev escrow.Event, tx *escrow.Transaction, facts []fact, handed map[string]bool) (plan []handover, why string) {
	if !coveredByFacts(ev.Name) {
		key := stateKey(ev.Name, tx)
		if handed[key] {
			return nil, ""
		}
		// Where such an event falls among the facts is unknown, so nothing is caught up.
		return []handover{{ev: ConfirmedEvent{Event: ev, Transaction: tx, Source: FromWebhook}, keys: []string{key}}}, ""
	}
	last := -1
	for i, f := range facts {
		if f.event == ev.Name {
			last = i
		}
	}
	if last < 0 {
		return nil, "unconfirmed: the transaction does not show it"
	}
	return pending(ev, tx, facts[:last+1], handed), "" // empty for a duplicate
}

// missing lists, in lifecycle order, one event for each kind of fact the transaction shows
// that was not handed over.
func missing(ev escrow.Event, tx *escrow.Transaction, facts []fact, handed map[string]bool) []handover {
	return pending(escrow.Event{TransactionID: ev.TransactionID}, tx, facts, handed)
}

// pending groups the facts not handed over into events, in order: facts of the delivered
// event ev come FromWebhook, the others FromReconcile.
func pending(ev escrow.Event, tx *escrow.Transaction, facts []fact, handed map[string]bool) []handover {
	var plan []handover
	for _, f := range facts {
		if handed[f.key] {
			continue
		}
		if n := len(plan); n == 0 || plan[n-1].ev.Name != f.event {
			e, src := escrow.Event{Name: f.event, EventType: escrow.EventTypeTransaction, TransactionID: ev.TransactionID}, FromReconcile
			if f.event == ev.Name {
				e, src = ev, FromWebhook
			}
			plan = append(plan, handover{ev: ConfirmedEvent{Event: e, Transaction: tx, Source: src}})
		}
		p := &plan[len(plan)-1]
		p.keys = append(p.keys, f.key)
		if f.itemID != 0 {
			p.ev.ItemIDs = append(p.ev.ItemIDs, f.itemID)
		}
	}
	return plan
}

// Flush waits until every queued event has been processed (handed over, dropped or given
// up on), or ctx ends.
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

// Shutdown stops taking deliveries (they are answered 503), waits for queued events until
// ctx ends, then cancels the callbacks still running and waits for them to return. No
// goroutine of the handler is left behind.
func (h *Handler) Shutdown(ctx context.Context) error {
	h.mu.Lock()
	h.closed = true
	h.mu.Unlock()
	err := h.Flush(ctx)
	h.cancel()
	h.wg.Wait()
	return err
}

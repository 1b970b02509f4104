package webhook

import (
	"context"
	"log/slog"
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

// Handler receives webhook deliveries (it is an http.Handler) and reconciles missed ones.
// Its work is done by four parts, each in a file of its own, which a delivery meets in
// this order (doc.go, "Reading the code"): the door (door.go) refuses, parses and drops
// what needs no work; the scheduler (scheduler.go, neverseen.go) queues it per
// transaction and decides when it runs; the confirmer (confirmer.go) takes the
// transaction's turn, confirms and hands over; the Store records. The account
// (account.go) is what the API said: its allowance, its partnership.
type Handler struct {
	opt    Options
	log    *slog.Logger
	door   *door
	sched  *scheduler
	acct   *account
	cancel context.CancelFunc // ends the work's context, when Shutdown gives up waiting

	pruneMu   sync.Mutex
	pruneNext time.Time // no prune before this; another replica may hold the prune lease till then
}

// NewHandler returns a Handler that confirms events with client, which must authenticate
// as the account the webhook is registered for, and hands them to fn.
func NewHandler(client *escrow.Client, fn Callback, opt Options) *Handler {
	opt = withDefaults(opt)
	log := opt.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	opt.Observer = guardObserver(opt.Observer, log, opt.Secrets)
	ctx, cancel := context.WithCancel(context.Background())
	h := &Handler{opt: opt, log: log, door: newDoor(&opt, log), acct: newAccount(client, &opt, log), cancel: cancel}
	conf := &confirmer{opt: &h.opt, fn: fn, log: log, obs: opt.Observer, ctx: ctx, acct: h.acct, door: h.door}
	h.sched = newScheduler(ctx, &h.opt, log, conf, h.acct)
	return h
}

// Replica returns the name this handler holds leases under.
func (h *Handler) Replica() string { return h.opt.Replica }

// ServeHTTP parses a delivery and queues it, answering before any work is done: the sender
// waits at most 10 s. With Options.Secrets, a delivery whose URL carries none of them is
// answered 404 before anything else (Stats().Refused counts them). Malformed deliveries get
// the status of their *escrow.EventError; deliveries after Shutdown, or about one
// transaction too many (MaxQueued), get 503.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	ev, ok := h.door.admit(w, r)
	if !ok {
		return
	}
	if err := h.sched.deliver(r.Context(), ev.TransactionID, ev.Name); err != nil {
		http.Error(w, err.Error(), http.StatusServiceUnavailable)
		reportArrival(r.Context(), h.opt.Observer, ev.TransactionID, ev.Name, DeliveryRefused, http.StatusServiceUnavailable)
		return
	}
	w.WriteHeader(http.StatusOK)
}

// Flush waits until every queued delivery and reconciled state has been processed
// (handed over, dropped or given up on), or ctx ends. When it returns nil, the Observer has
// been told the queue's depth as it is then.
func (h *Handler) Flush(ctx context.Context) error { return h.sched.flush(ctx) }

// Shutdown stops taking deliveries (they are answered 503), leaves the never-seen ids
// still waiting owed a look in the Store, without their names (another replica, or this
// process after a restart, lists them; a Store that fails leaves the real ones to the next
// reconciliation), waits for queued events until ctx ends, then cancels the callbacks still running and waits for
// them to return. No goroutine of the handler is left behind. The lease of a turn whose
// callback was cancelled is released, with what was handed over before recorded; what was
// not handed over is found by the next reconciliation, by this process after a restart or
// by another replica.
func (h *Handler) Shutdown(ctx context.Context) error {
	h.sched.close()
	err := h.sched.flush(ctx)
	h.cancel()
	h.sched.wg.Wait()
	h.sched.abandon()
	return err
}

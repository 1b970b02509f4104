package webhook

import (
	"context"
	"time"

	escrow "github.com/escrowkit/escrow-go"
)

// Observer sees each step of receiving: what became of every delivery, the fetches that
// confirm them, the hand-overs to the callback with their lag, the retries, the queue's
// depth and the store's pruning. Package github.com/escrowkit/escrow-go/escrowotel
// implements it (and escrow.Observer) with OpenTelemetry; this package depends on no
// telemetry library. Set one in [Options].Observer; the default, [NopObserver], does
// nothing.
//
// Methods are called from the handler's goroutines, several at once: an Observer must be
// safe for concurrent use, return quickly, and not keep the pointers it is handed.
type Observer interface {
	// Delivery reports what became of one delivery. A refused or dropped one is reported
	// as it is answered, with the request's context; the others once the confirming fetch
	// decided, with the context ConfirmStart returned.
	Delivery(ctx context.Context, d Delivery)
	// ConfirmStart is called before the fetch that confirms a transaction's deliveries (or
	// a state the reconciler read). The context it returns is the fetch's: the client's
	// call is made with it, and Delivery, HandoverStart and ConfirmEnd receive it.
	ConfirmStart(ctx context.Context, c *Confirm) context.Context
	// ConfirmEnd is called when the confirming fetch returned, with c complete.
	ConfirmEnd(ctx context.Context, c *Confirm)
	// HandoverStart is called before the callback receives an event. The context it
	// returns is the callback's.
	HandoverStart(ctx context.Context, h *Handover) context.Context
	// HandoverEnd is called when the callback returned, with h complete.
	HandoverEnd(ctx context.Context, h *Handover)
	// Retry reports a batch (its confirmation and callbacks) tried again after a failure.
	Retry(ctx context.Context, r Retry)
	// QueueDepth reports how many transactions have work waiting, whenever it changes.
	QueueDepth(ctx context.Context, n int)
	// Pruned reports a run of the store's pruning (Options.Retention, or Handler.Prune).
	Pruned(ctx context.Context, p Prune)
}

// DeliveryOutcome is what became of a delivery.
type DeliveryOutcome string

// Outcomes of a [Delivery].
const (
	// DeliveryConfirmed: the fetched transaction shows the event; its facts not handed
	// over before were handed over.
	DeliveryConfirmed DeliveryOutcome = "confirmed"
	// DeliveryDuplicate: a replay: every fact of the event was handed over before, or the
	// delivery was coalesced with one of the same event still waiting.
	DeliveryDuplicate DeliveryOutcome = "duplicate"
	// DeliveryRefused: answered with an error status before any work: malformed, without
	// the delivery URL's secret, over the queue's bound, or after Shutdown.
	DeliveryRefused DeliveryOutcome = "refused"
	// DeliveryUnconfirmed: the fetched transaction does not show the event, the account
	// cannot read the transaction, or no state can show such an event (a Hint).
	DeliveryUnconfirmed DeliveryOutcome = "unconfirmed"
	// DeliveryDropped: answered 200 but never confirmed: an invalid event name, more names
	// than a batch keeps, or given up on (MaxAttempts, Shutdown); the reconciler hands
	// over what it missed.
	DeliveryDropped DeliveryOutcome = "dropped"
)

// Delivery is one delivery's outcome.
type Delivery struct {
	// Event is the delivered name; "" when the delivery was refused or its name was
	// invalid (such a name is never kept).
	Event         escrow.EventName
	TransactionID int64
	// Received is when the delivery arrived (the first of those coalesced with it).
	Received time.Time
	Outcome  DeliveryOutcome
	// StatusCode is the status the delivery was answered with.
	StatusCode int
}

// Confirm is one confirming fetch.
type Confirm struct {
	TransactionID int64
	// Events are the delivered names it confirms; none for a state the reconciler read.
	Events []escrow.EventName
	// Received is when the oldest of those deliveries arrived; zero for none.
	Received   time.Time
	Start, End time.Time
	// Err is the fetch's failure (escrow.ErrNotFound: the account cannot read it).
	Err error
}

// Handover is one event given to the callback.
type Handover struct {
	Event         escrow.EventName
	TransactionID int64
	Source        Source
	// Delivered is when the delivery that announced the event arrived; zero when none
	// did (FromReconcile).
	Delivered  time.Time
	Start, End time.Time
	// Err is the callback's error. It is the application's own: an observer that
	// exports it must know it holds nothing secret (escrowotel exports only that the
	// callback failed).
	Err error
}

// Lag is how long the event waited from its delivery to the callback; 0 when it came
// FromReconcile.
func (h *Handover) Lag() time.Duration {
	if h.Delivered.IsZero() {
		return 0
	}
	return h.Start.Sub(h.Delivered)
}

// Retry is a batch tried again.
type Retry struct {
	TransactionID int64
	// Attempt is the number of the try that failed (1: the first).
	Attempt int
	Wait    time.Duration
	// Err is what failed: the fetch, the store or the callback (see Handover.Err).
	Err error
}

// Prune is one run of the store's pruning.
type Prune struct {
	// Before is the cut-off: transactions finished before it were forgotten.
	Before     time.Time
	Removed    int64
	Start, End time.Time
	Err        error
}

// NopObserver is the default [Observer]: it does nothing.
type NopObserver struct{}

// Delivery does nothing.
func (NopObserver) Delivery(context.Context, Delivery) {}

// ConfirmStart returns ctx.
func (NopObserver) ConfirmStart(ctx context.Context, _ *Confirm) context.Context { return ctx }

// ConfirmEnd does nothing.
func (NopObserver) ConfirmEnd(context.Context, *Confirm) {}

// HandoverStart returns ctx.
func (NopObserver) HandoverStart(ctx context.Context, _ *Handover) context.Context { return ctx }

// HandoverEnd does nothing.
func (NopObserver) HandoverEnd(context.Context, *Handover) {}

// Retry does nothing.
func (NopObserver) Retry(context.Context, Retry) {}

// QueueDepth does nothing.
func (NopObserver) QueueDepth(context.Context, int) {}

// Pruned does nothing.
func (NopObserver) Pruned(context.Context, Prune) {}

var _ Observer = NopObserver{}

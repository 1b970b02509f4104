package webhook

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	escrow "github.com/escrowkit/escrow-go"
	"github.com/escrowkit/escrow-go/internal/hookguard"
	"github.com/escrowkit/escrow-go/internal/redact"
)

// Observer sees each step of receiving: what became of every delivery, the fetches that
// confirm them, the hand-overs to the callback with their lag, the retries, the queue's
// depth and the store's pruning. Package github.com/escrowkit/escrow-go/escrowotel
// implements it (and escrow.Observer) with OpenTelemetry; this package depends on no
// telemetry library. Set one in [Options].Observer; the default, [NopObserver], does
// nothing.
//
// Methods are called from the handler's goroutines, several at once: an Observer must be
// safe for concurrent use and not keep the pointers it is handed.
//
// An Observer must not block: it is called synchronously, on the handler's path. Delivery
// is called before a delivery is answered (for one decided as it arrives), and the sender
// waits at most 10 s for that answer and never sends the delivery again; the other methods
// run on the workers, so a blocking one holds up the confirmation and hand-over of every
// transaction behind it. Hand slow work (a network export) to a goroutine of your own.
// The handler calls no method while holding its own lock.
//
// A panic in any of its methods is recovered: the delivery is answered, confirmed and
// handed over as without the observer, and Options.Logger reports the first such panic at
// Error level, the later ones at Debug. A context ConfirmStart or HandoverStart did not
// return is the one it was given.
type Observer interface {
	// Delivery reports what became of one delivery: one refused, dropped or coalesced as
	// it arrives, at once; the others once the confirming fetch decided, with the context
	// ConfirmStart returned.
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
	// QueueDepth reports how many transactions have work waiting or under way, whenever
	// it changes.
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
	// than a batch keeps, a never-seen id dropped (Stats.UnseenDropped), a transaction finished and
	// pruned from the store, or a batch given up on after MaxAttempts (or at Shutdown).
	// The reconciler hands over what such a drop missed.
	DeliveryDropped DeliveryOutcome = "dropped"
)

// Delivery is one delivery's outcome.
type Delivery struct {
	// Event is the delivered name; "" when the delivery was refused or its name was
	// invalid (such a name is never kept).
	Event         escrow.EventName
	TransactionID int64
	// Received is when the delivery arrived; for one confirmed in a batch, when the
	// batch's oldest delivery arrived at this replica.
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

// namedDelivery is a delivered name dropped after it was queued.
type namedDelivery struct {
	id       int64
	name     escrow.EventName
	received time.Time
}

// reportDropped reports deliveries dropped after they were queued.
func reportDropped(ctx context.Context, obs Observer, ds []namedDelivery) {
	for _, d := range ds {
		obs.Delivery(ctx, Delivery{Event: d.name, TransactionID: d.id, Received: receivedOr(d.received), Outcome: DeliveryDropped, StatusCode: http.StatusOK})
	}
}

// reportArrival reports a delivery decided as it arrived: refused, dropped, coalesced
// with one of the same name waiting (duplicate), or refused for want of room.
func reportArrival(ctx context.Context, obs Observer, id int64, name escrow.EventName, out DeliveryOutcome, status int) {
	obs.Delivery(ctx, Delivery{Event: name, TransactionID: id, Received: time.Now(), Outcome: out, StatusCode: status})
}

// observedPrune runs the store's pruning, reported to the Observer.
func (h *Handler) observedPrune(ctx context.Context, before time.Time) (int64, error) {
	p := Prune{Before: before, Start: time.Now()}
	p.Removed, p.Err = h.opt.Store.Prune(ctx, before)
	p.End = time.Now()
	h.opt.Observer.Pruned(ctx, p)
	return p.Removed, p.Err
}

// guardedObserver calls an application's Observer, shielding the handler from it: a
// panic in a method is recovered and logged (internal/hookguard, shared with the SDK's
// escrow.Observer), and the work goes on.
type guardedObserver struct {
	o     Observer
	guard *hookguard.Guard
}

// guardObserver returns o guarded, or NopObserver for none. The panics it logs are scrubbed
// of the delivery secrets, in every form the SDK's redactor sees through: observers are
// handed none, but what the handler logs holds none either.
func guardObserver(o Observer, log *slog.Logger, secrets []string) Observer {
	if o == nil {
		return NopObserver{}
	}
	if _, nop := o.(NopObserver); nop {
		return o
	}
	redactors := make([]*redact.Redactor, 0, len(secrets))
	for _, s := range secrets {
		redactors = append(redactors, redact.New("", s))
	}
	scrub := func(s string) string {
		for _, r := range redactors {
			s = r.String(s)
		}
		return s
	}
	return &guardedObserver{o: o, guard: hookguard.New(log, "escrow webhook: the observer panicked; receiving goes on without it", scrub)}
}

func (g *guardedObserver) Delivery(ctx context.Context, d Delivery) {
	defer g.guard.Survive("Delivery")
	g.o.Delivery(ctx, d)
}

func (g *guardedObserver) ConfirmStart(ctx context.Context, c *Confirm) context.Context {
	return g.guard.Started(ctx, "ConfirmStart", func() context.Context { return g.o.ConfirmStart(ctx, c) })
}

func (g *guardedObserver) ConfirmEnd(ctx context.Context, c *Confirm) {
	defer g.guard.Survive("ConfirmEnd")
	g.o.ConfirmEnd(ctx, c)
}

func (g *guardedObserver) HandoverStart(ctx context.Context, ho *Handover) context.Context {
	return g.guard.Started(ctx, "HandoverStart", func() context.Context { return g.o.HandoverStart(ctx, ho) })
}

func (g *guardedObserver) HandoverEnd(ctx context.Context, ho *Handover) {
	defer g.guard.Survive("HandoverEnd")
	g.o.HandoverEnd(ctx, ho)
}

func (g *guardedObserver) Retry(ctx context.Context, r Retry) {
	defer g.guard.Survive("Retry")
	g.o.Retry(ctx, r)
}

func (g *guardedObserver) QueueDepth(ctx context.Context, n int) {
	defer g.guard.Survive("QueueDepth")
	g.o.QueueDepth(ctx, n)
}

func (g *guardedObserver) Pruned(ctx context.Context, p Prune) {
	defer g.guard.Survive("Pruned")
	g.o.Pruned(ctx, p)
}

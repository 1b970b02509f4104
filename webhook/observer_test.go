package webhook_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	escrow "github.com/escrowkit/escrow-go"
	"github.com/escrowkit/escrow-go/escrowtest"
	"github.com/escrowkit/escrow-go/internal/logtest"
	"github.com/escrowkit/escrow-go/webhook"
)

type confirmKey struct{}
type handoverKey struct{}

// recordingObserver keeps what a Handler reports, and checks the contexts it hands back:
// a hand-over's inside its confirming fetch's.
type recordingObserver struct {
	mu         sync.Mutex
	deliveries []webhook.Delivery
	confirms   []webhook.Confirm
	handovers  []webhook.Handover
	retries    []webhook.Retry
	depths     []int
	prunes     []webhook.Prune
	outside    int // hand-overs started outside a confirming fetch's context
}

func (r *recordingObserver) Delivery(_ context.Context, d webhook.Delivery) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.deliveries = append(r.deliveries, d)
}

func (r *recordingObserver) ConfirmStart(ctx context.Context, c *webhook.Confirm) context.Context {
	return context.WithValue(ctx, confirmKey{}, c.TransactionID)
}

func (r *recordingObserver) ConfirmEnd(_ context.Context, c *webhook.Confirm) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.confirms = append(r.confirms, *c)
}

func (r *recordingObserver) HandoverStart(ctx context.Context, h *webhook.Handover) context.Context {
	if id, _ := ctx.Value(confirmKey{}).(int64); id != h.TransactionID {
		r.mu.Lock()
		r.outside++
		r.mu.Unlock()
	}
	return context.WithValue(ctx, handoverKey{}, true)
}

func (r *recordingObserver) HandoverEnd(_ context.Context, h *webhook.Handover) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.handovers = append(r.handovers, *h)
}

func (r *recordingObserver) Retry(_ context.Context, x webhook.Retry) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.retries = append(r.retries, x)
}

func (r *recordingObserver) QueueDepth(_ context.Context, n int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.depths = append(r.depths, n)
}

func (r *recordingObserver) Pruned(_ context.Context, p webhook.Prune) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.prunes = append(r.prunes, p)
}

// outcomes returns "event:transaction=outcome" for every delivery reported, sorted.
func (r *recordingObserver) outcomes() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, d := range r.deliveries {
		out = append(out, string(d.Event)+":"+strconv.FormatInt(d.TransactionID, 10)+"="+string(d.Outcome))
	}
	slices.Sort(out)
	return out
}

// TestFullQueueObservedAsRefusedOnce: a delivery refused because known transactions fill
// MaxQueued is reported once, as refused: counted also as dropped, a dashboard would show
// a lost event where the sender was told to retry.
func TestFullQueueObservedAsRefusedOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		api := newFakeAPI()
		api.txs[1], api.txs[2] = created(1), created(2)
		obs := new(recordingObserver)
		got := &calls{}
		h := webhook.NewHandler(api.client(t), got.fn, webhook.Options{MaxQueued: 1, Observer: obs})
		defer shutdown(t, h)
		deliver(h, "create", 1)
		deliver(h, "create", 2) // never seen: a lane of its own
		flushed(t, h)
		api.set(agreed(1))
		api.set(agreed(2))
		got.block = make(chan struct{})
		deliver(h, "agree", 1)
		if code := deliver(h, "agree", 2); code != http.StatusServiceUnavailable {
			t.Fatalf("delivery beyond MaxQueued answered %d, want 503", code)
		}
		close(got.block)
		flushed(t, h)
		var about2 []string
		for _, o := range obs.outcomes() {
			if strings.HasPrefix(o, "agree:2=") {
				about2 = append(about2, o)
			}
		}
		if !slices.Equal(about2, []string{"agree:2=refused"}) {
			t.Errorf("the refused delivery observed as %q, want refused once", about2)
		}
	})
}

// TestObserverSeesEachDeliveryOutcome: every delivery is reported once with what became of
// it, the hand-over runs in its confirming fetch's context and the callback in the
// hand-over's, and the queue's depth goes back to zero.
func TestObserverSeesEachDeliveryOutcome(t *testing.T) {
	api := newFakeAPI()
	api.txs[1] = created(1)
	obs := new(recordingObserver)
	var inHandover bool
	h := webhook.NewHandler(api.client(t), func(ctx context.Context, ev webhook.ConfirmedEvent) error {
		inHandover = ctx.Value(handoverKey{}) == true
		return nil
	}, webhook.Options{Observer: obs, Refetch: time.Millisecond, MaxRefetch: time.Millisecond})
	defer shutdown(t, h)

	deliver(h, "create", 1)
	flushed(t, h)
	deliver(h, "create", 1)       // a replay: handed over already
	deliver(h, "ship", 1)         // the item is not shipped
	deliver(h, "payment_sent", 1) // no state can show it, and no OnUnconfirmedHint takes it
	deliver(h, "create", 99)      // the account cannot read it
	deliver(h, "Not A Name!", 1)  // dropped as it arrives
	req := httptest.NewRequest(http.MethodPost, "/escrow", strings.NewReader("{not json"))
	req.Header.Set("Content-Type", "application/json")
	h.ServeHTTP(httptest.NewRecorder(), req) // refused
	flushed(t, h)

	want := []string{
		":0=refused", ":1=dropped",
		"create:1=confirmed", "create:1=duplicate", "create:99=unconfirmed",
		"payment_sent:1=unconfirmed", "ship:1=unconfirmed",
	}
	if got := obs.outcomes(); !slices.Equal(got, want) {
		t.Errorf("outcomes %q\nwant     %q", got, want)
	}

	obs.mu.Lock()
	defer obs.mu.Unlock()
	if len(obs.handovers) != 1 || obs.handovers[0].Event != "create" || obs.handovers[0].Source != webhook.FromWebhook ||
		obs.handovers[0].Delivered.IsZero() || obs.handovers[0].Lag() < 0 || obs.handovers[0].End.Before(obs.handovers[0].Start) {
		t.Errorf("hand-overs %+v; want create from the webhook, with its delivery time", obs.handovers)
	}
	if obs.outside != 0 || !inHandover {
		t.Errorf("%d hand-overs outside their confirming fetch's context; callback in the hand-over's: %v", obs.outside, inHandover)
	}
	var unreadable bool
	for _, c := range obs.confirms {
		unreadable = unreadable || (c.TransactionID == 99 && errors.Is(c.Err, escrow.ErrNotFound))
	}
	if len(obs.confirms) < 2 || !unreadable {
		t.Errorf("confirming fetches %+v; want transaction 1's and 99's, not found", obs.confirms)
	}
	if len(obs.depths) == 0 || obs.depths[len(obs.depths)-1] != 0 || slices.Max(obs.depths) < 1 {
		t.Errorf("queue depths %v; want some work waiting, then none", obs.depths)
	}
}

// TestObserverSeesRetries: a callback that fails is retried, and each retry and failed
// hand-over is reported.
func TestObserverSeesRetries(t *testing.T) {
	api := newFakeAPI()
	api.txs[1] = sale(1, item(11, escrow.ItemGeneralMerchandise, false))
	obs := new(recordingObserver)
	failing := errors.New("the shop's database is down")
	h := webhook.NewHandler(api.client(t), func(context.Context, webhook.ConfirmedEvent) error { return failing },
		webhook.Options{Observer: obs, MaxAttempts: 2, RetryWait: time.Millisecond, MaxRetryWait: time.Millisecond})
	defer shutdown(t, h)
	deliver(h, "create", 1)
	flushed(t, h)

	obs.mu.Lock()
	defer obs.mu.Unlock()
	if len(obs.retries) != 1 || obs.retries[0].TransactionID != 1 || obs.retries[0].Attempt != 1 || !errors.Is(obs.retries[0].Err, failing) {
		t.Errorf("retries %+v; want one, after the first attempt's callback failed", obs.retries)
	}
	if len(obs.handovers) != 2 || !errors.Is(obs.handovers[1].Err, failing) {
		t.Errorf("hand-overs %+v; want two, failed", obs.handovers)
	}
}

// TestObserverSeesTheNamesPastMaxNamesDropped: a transaction's queue keeps MaxNames
// distinct names while its batch runs; each name delivered past them is reported dropped,
// and only those: a dashboard counting drops counts what was lost. The hints queued are
// passed on and reported unconfirmed (no state shows a hint), not as duplicates.
func TestObserverSeesTheNamesPastMaxNamesDropped(t *testing.T) {
	api := newFakeAPI()
	api.txs[1] = sale(1, item(11, escrow.ItemGeneralMerchandise, false))
	obs := new(recordingObserver)
	got := &calls{block: make(chan struct{})}
	var mu sync.Mutex
	hinted := map[escrow.EventName]bool{}
	h := webhook.NewHandler(api.client(t), got.fn, webhook.Options{Observer: obs, OnUnconfirmedHint: func(_ context.Context, x webhook.Hint) {
		mu.Lock()
		defer mu.Unlock()
		hinted[x.Event] = true
	}})
	defer shutdown(t, h)
	deliver(h, "create", 1) // its hand-over holds the batch until block closes
	for api.readsOf(1) == 0 {
		time.Sleep(time.Millisecond)
	}
	const extra = 3
	for i := range webhook.MaxNames + extra {
		deliver(h, fmt.Sprintf("hint_%02d", i), 1)
	}
	deliver(h, "hint_00", 1) // coalesced with the one waiting: a duplicate
	close(got.block)
	flushed(t, h)
	var dropped []string
	unconfirmed := 0
	for _, o := range obs.outcomes() {
		switch {
		case strings.HasSuffix(o, "=dropped"):
			dropped = append(dropped, o)
		case strings.HasPrefix(o, "hint_") && strings.HasSuffix(o, "=unconfirmed"):
			unconfirmed++
		}
	}
	if unconfirmed != webhook.MaxNames {
		t.Errorf("%d hints reported unconfirmed, want %d: %q", unconfirmed, webhook.MaxNames, obs.outcomes())
	}
	var want []string
	for i := webhook.MaxNames; i < webhook.MaxNames+extra; i++ {
		want = append(want, fmt.Sprintf("hint_%02d:1=dropped", i))
	}
	if !slices.Equal(dropped, want) {
		t.Errorf("reported dropped: %q, want %q", dropped, want)
	}
	if n := slices.Index(obs.outcomes(), "hint_00:1=duplicate"); n < 0 || unconfirmed+len(dropped)+2 != len(obs.outcomes()) {
		t.Errorf("outcomes %q: want hint_00's second delivery reported once, as a duplicate", obs.outcomes())
	}
	mu.Lock()
	defer mu.Unlock()
	if len(hinted) != webhook.MaxNames {
		t.Errorf("%d hints passed on, want the %d queued", len(hinted), webhook.MaxNames)
	}
}

// TestObserverSeesABatchGivenUpOn: deliveries of a batch given up on after MaxAttempts
// are reported once each: dropped (the reconciler hands over what they missed) when the
// transaction could not be read or the callback kept failing, confirmed for an event the
// callback took in an earlier attempt. Unreported, they vanished from the dashboards.
func TestObserverSeesABatchGivenUpOn(t *testing.T) {
	t.Run("unreadable", func(t *testing.T) {
		api := newFakeAPI()
		api.txs[1] = created(1)
		obs := new(recordingObserver)
		h := webhook.NewHandler(api.client(t), (&calls{}).fn, webhook.Options{Observer: obs, MaxAttempts: 2, RetryWait: time.Millisecond, MaxRetryWait: time.Millisecond})
		defer shutdown(t, h)
		deliver(h, "create", 1)
		flushed(t, h)
		api.setStatus(1, http.StatusBadRequest)
		deliver(h, "agree", 1)
		flushed(t, h)
		if got, want := obs.outcomes(), []string{"agree:1=dropped", "create:1=confirmed"}; !slices.Equal(got, want) {
			t.Errorf("outcomes %q, want %q", got, want)
		}
	})
	t.Run("callback failing after the first event", func(t *testing.T) {
		api := newFakeAPI()
		api.txs[1] = agreed(1)
		obs := new(recordingObserver)
		failing := errors.New("the shop's database is down")
		h := webhook.NewHandler(api.client(t), func(_ context.Context, ev webhook.ConfirmedEvent) error {
			if ev.Name == escrow.EventAgree {
				return failing
			}
			return nil
		}, webhook.Options{Observer: obs, MaxAttempts: 2, RetryWait: time.Millisecond, MaxRetryWait: time.Millisecond})
		defer shutdown(t, h)
		deliver(h, "create", 1)
		deliver(h, "agree", 1)
		flushed(t, h)
		if got, want := obs.outcomes(), []string{"agree:1=dropped", "create:1=confirmed"}; !slices.Equal(got, want) {
			t.Errorf("outcomes %q, want %q", got, want)
		}
	})
}

// TestLagOfAReconciledEventIsZero: an event the reconciler found had no delivery to wait
// from: its lag is 0, not the time since the zero time.
func TestLagOfAReconciledEventIsZero(t *testing.T) {
	start := time.Now()
	if lag := (&webhook.Handover{Source: webhook.FromReconcile, Start: start}).Lag(); lag != 0 {
		t.Errorf("Lag = %v, want 0", lag)
	}
	if lag := (&webhook.Handover{Delivered: start.Add(-time.Second), Start: start}).Lag(); lag != time.Second {
		t.Errorf("Lag = %v, want 1s", lag)
	}
}

// ctxObserver counts the reports that came with a nil context: an exporter reads spans
// from the context, and a nil one panics it.
type ctxObserver struct {
	webhook.NopObserver
	mu        sync.Mutex
	nils      int
	delivered map[int64][]webhook.DeliveryOutcome
}

func (o *ctxObserver) Delivery(ctx context.Context, d webhook.Delivery) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if ctx == nil {
		o.nils++
	}
	o.delivered[d.TransactionID] = append(o.delivered[d.TransactionID], d.Outcome)
}

// TestObserverGetsAContextForDeliveriesConfirmedByAListing: a delivery confirmed from a
// partner's listing, with no confirming fetch of its own, is reported with the handler's
// context, never a nil one.
func TestObserverGetsAContextForDeliveriesConfirmedByAListing(t *testing.T) {
	obs := &ctxObserver{delivered: map[int64][]webhook.DeliveryOutcome{}}
	w := newWorld(t, webhook.Options{Observer: obs}, escrowtest.WithRateLimit(20, time.Minute))
	w.create()
	w.settle()
	if err := w.h.Reconcile(t.Context()); err != nil { // the account is found to be a partner
		t.Fatal(err)
	}
	for i := range int64(30) { // 404s: two spend the never-seen share, the rest wait
		w.deliver(fmt.Sprintf(`{"event": "create", "event_type": "transaction", "transaction_id": %d}`, forgedBase+i))
	}
	id := w.create() // confirmed by the listing, unfetched
	deadline := time.Now().Add(10 * time.Second)
	for len(w.got.byTransaction()[id]) == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	obs.mu.Lock()
	defer obs.mu.Unlock()
	if got := obs.delivered[id]; !slices.Equal(got, []webhook.DeliveryOutcome{webhook.DeliveryConfirmed}) || obs.nils != 0 {
		t.Errorf("the new transaction's delivery reported %v; %d reports with a nil context", got, obs.nils)
	}
}

// TestObserverSeesEachPrune: a prune is reported with its cutoff, what it removed and when
// it ran; a failed one with the store's error.
func TestObserverSeesEachPrune(t *testing.T) {
	for _, failing := range []bool{false, true} {
		t.Run(fmt.Sprint("failing=", failing), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				store := &pruneFailingStore{failPrune: failing}
				for _, id := range []int64{1, 2} {
					if err := store.Finish(t.Context(), id); err != nil {
						t.Fatal(err)
					}
				}
				time.Sleep(2 * time.Hour)
				obs := new(recordingObserver)
				h := webhook.NewHandler(newListingAPI(false).client(t), (&calls{}).fn, webhook.Options{Store: store, Replica: "a", Retention: time.Hour, Observer: obs})
				defer shutdown(t, h)
				ctx, cancel := context.WithCancel(t.Context())
				done := make(chan error, 1)
				start := time.Now()
				go func() { done <- h.RunReconciler(ctx, time.Minute) }()
				synctest.Wait()
				cancel()
				<-done
				obs.mu.Lock()
				defer obs.mu.Unlock()
				want := webhook.Prune{Before: start.Add(-time.Hour), Removed: 2, Start: start, End: start}
				if failing {
					want.Removed = 0
				}
				if len(obs.prunes) != 1 {
					t.Fatalf("prunes reported: %+v, want one", obs.prunes)
				}
				got := obs.prunes[0]
				if !got.Before.Equal(want.Before) || got.Removed != want.Removed || !got.Start.Equal(want.Start) || !got.End.Equal(want.End) || errors.Is(got.Err, errStoreDown) != failing {
					t.Errorf("prune reported %+v, want %+v (error %v)", got, want, failing)
				}
			})
		})
	}
}

// TestObserverDatesNamesThatCameOnlyThroughTheStore: a turn the reconciler started (no
// delivery of its own) that confirms a name another replica left to it reports that
// delivery with a time, the holder's when it took the name, never the zero time.
func TestObserverDatesNamesThatCameOnlyThroughTheStore(t *testing.T) {
	api := newListingAPI(false)
	api.add(created(1))
	store := new(webhook.MemoryStore)
	obs := new(recordingObserver)
	entered, release := make(chan struct{}, 1), make(chan struct{})
	a := webhook.NewHandler(api.client(t), func(context.Context, webhook.ConfirmedEvent) error {
		select {
		case entered <- struct{}{}:
			<-release // the first hand-over holds the turn
		default:
		}
		return nil
	}, webhook.Options{Store: store, Replica: "a", Observer: obs})
	defer shutdown(t, a)
	b := webhook.NewHandler(api.client(t), (&calls{}).fn, webhook.Options{Store: store, Replica: "b"})
	defer shutdown(t, b)
	if err := a.Reconcile(t.Context()); err != nil {
		t.Fatal(err)
	}
	<-entered
	api.add(agreed(1))
	deliver(b, "agree", 1) // left to a, the holder
	flushed(t, b)
	close(release)
	flushed(t, a)
	obs.mu.Lock()
	defer obs.mu.Unlock()
	var agree []webhook.Delivery
	for _, d := range obs.deliveries {
		if d.Event == escrow.EventAgree {
			agree = append(agree, d)
		}
	}
	if len(agree) != 1 || agree[0].Outcome != webhook.DeliveryConfirmed || agree[0].Received.IsZero() {
		t.Errorf("agree reported %+v; want once, confirmed, dated", agree)
	}
}

// TestDeliveryWithoutTheSecretObservedAsRefused: a delivery refused for lacking the URL's
// secret is reported to the Observer as refused with its 404, like a malformed one with
// its own status: a dashboard counting refusals sees forgeries knocking.
func TestDeliveryWithoutTheSecretObservedAsRefused(t *testing.T) {
	api := newFakeAPI()
	api.txs[1] = created(1)
	obs := new(recordingObserver)
	got := &calls{}
	h := webhook.NewHandler(api.client(t), got.fn, webhook.Options{Secrets: []string{newSecret}, Observer: obs})
	defer shutdown(t, h)
	if code := post(h, "/escrow", "create", 1); code != http.StatusNotFound {
		t.Fatalf("a delivery without the secret answered %d, want 404", code)
	}
	req := httptest.NewRequest(http.MethodPost, "/escrow/"+newSecret, strings.NewReader(`{"event": "create"`))
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code/100 != 4 {
		t.Fatalf("a malformed delivery answered %d, want a 4xx", rec.Code)
	}
	obs.mu.Lock()
	defer obs.mu.Unlock()
	want := []webhook.Delivery{{Outcome: webhook.DeliveryRefused, StatusCode: http.StatusNotFound}, {Outcome: webhook.DeliveryRefused, StatusCode: rec.Code}}
	if len(obs.deliveries) != len(want) {
		t.Fatalf("observed %+v, want %+v", obs.deliveries, want)
	}
	for i, d := range obs.deliveries {
		d.Received = time.Time{}
		if d != want[i] {
			t.Errorf("delivery %d observed as %+v, want %+v", i, d, want[i])
		}
	}
	if n := api.readsOf(1); n != 0 {
		t.Errorf("refused deliveries cost %d fetches", n)
	}
}

// TestDeliveryOfAnUnreadableIdObservedAsDropped: a delivery naming an id the API answered
// 404 lately is dropped as it arrives, without a fetch, and the Observer is told so: a
// dashboard sees where the delivery went.
func TestDeliveryOfAnUnreadableIdObservedAsDropped(t *testing.T) {
	api := newFakeAPI()
	obs := new(recordingObserver)
	got := &calls{}
	h := webhook.NewHandler(api.client(t), got.fn, webhook.Options{Observer: obs})
	defer shutdown(t, h)
	deliver(h, "create", 99) // the account cannot read it
	flushed(t, h)
	deliver(h, "agree", 99) // dropped as it arrives
	flushed(t, h)
	if n := api.readsOf(99); n != 1 {
		t.Errorf("%d fetches of the unreadable id, want 1", n)
	}
	want := []string{"agree:99=dropped", "create:99=unconfirmed"}
	if got := obs.outcomes(); !slices.Equal(got, want) {
		t.Errorf("outcomes %q\nwant     %q", got, want)
	}
}

// TestDeliveriesForAPrunedTransactionAreDroppedAndRemembered: a delivery for a transaction
// finished and pruned from the store is dropped without a fetch and observed as dropped,
// and the handler remembers the transaction: a later delivery for it is dropped as it
// arrives, without asking the store again (with a database store, a round trip each).
func TestDeliveriesForAPrunedTransactionAreDroppedAndRemembered(t *testing.T) {
	api := newFakeAPI()
	api.txs[1] = created(1)
	store := &countingStore{}
	if err := store.Finish(t.Context(), 1); err != nil {
		t.Fatal(err)
	}
	if n, err := store.Prune(t.Context(), time.Now().Add(time.Second)); n != 1 || err != nil {
		t.Fatalf("pruned %d, %v", n, err)
	}
	store.calls.Store(0)
	obs := new(recordingObserver)
	got := &calls{}
	h := webhook.NewHandler(api.client(t), got.fn, webhook.Options{Store: store, Observer: obs})
	defer shutdown(t, h)
	deliver(h, "agree", 1)
	flushed(t, h)
	deliver(h, "cancel", 1)
	flushed(t, h)
	if n, r := store.calls.Load(), api.readsOf(1); n != 1 || r != 0 || len(got.list()) != 0 {
		t.Errorf("%d store calls, %d fetches, handed over %v; want one store call, nothing else", n, r, got.list())
	}
	want := []string{"agree:1=dropped", "cancel:1=duplicate"}
	if got := obs.outcomes(); !slices.Equal(got, want) {
		t.Errorf("outcomes %q\nwant     %q", got, want)
	}
}

// TestReplayAnsweredByTheStoreObservedAsDuplicate: a delivery the store answers as a
// replay of what another replica handed over is reported to the Observer as a duplicate.
func TestReplayAnsweredByTheStoreObservedAsDuplicate(t *testing.T) {
	api := newFakeAPI()
	api.txs[1] = created(1)
	obs := new(recordingObserver)
	got := &calls{}
	h := webhook.NewHandler(api.client(t), got.fn, webhook.Options{Store: storeWithCreateHandedOver(t), Observer: obs})
	defer shutdown(t, h)
	deliver(h, "create", 1)
	flushed(t, h)
	if r := api.readsOf(1); r != 0 || len(got.list()) != 0 {
		t.Errorf("%d fetches, handed over %v; want none", r, got.list())
	}
	if got, want := obs.outcomes(), []string{"create:1=duplicate"}; !slices.Equal(got, want) {
		t.Errorf("outcomes %q\nwant     %q", got, want)
	}
}

// panickingObserver panics in the method named, with a value that holds the delivery
// secret, as a careless observer might; it counts the panics.
type panickingObserver struct {
	webhook.NopObserver
	hook, secret string
	panics       atomic.Int32
}

func (p *panickingObserver) panicIn(hook string) {
	if p.hook == hook {
		p.panics.Add(1)
		panic("observer failed with " + p.secret)
	}
}

func (p *panickingObserver) Delivery(context.Context, webhook.Delivery) { p.panicIn("Delivery") }

func (p *panickingObserver) ConfirmStart(ctx context.Context, _ *webhook.Confirm) context.Context {
	p.panicIn("ConfirmStart")
	return ctx
}

func (p *panickingObserver) ConfirmEnd(context.Context, *webhook.Confirm) { p.panicIn("ConfirmEnd") }

func (p *panickingObserver) HandoverStart(ctx context.Context, _ *webhook.Handover) context.Context {
	p.panicIn("HandoverStart")
	return ctx
}

func (p *panickingObserver) HandoverEnd(context.Context, *webhook.Handover) {
	p.panicIn("HandoverEnd")
}

func (p *panickingObserver) Retry(context.Context, webhook.Retry) { p.panicIn("Retry") }

func (p *panickingObserver) QueueDepth(context.Context, int) { p.panicIn("QueueDepth") }

func (p *panickingObserver) Pruned(context.Context, webhook.Prune) { p.panicIn("Pruned") }

// TestPanickingObserverLeavesReceivingAsItWas: whichever method panics, no panic escapes,
// deliveries are answered 200, confirmed and handed over (a failed hand-over retried), the
// store pruned; the logger reports the first panic at Error level, once, the later ones at
// Debug, without the delivery secret the panic's value held.
func TestPanickingObserverLeavesReceivingAsItWas(t *testing.T) {
	hooks := []string{"Delivery", "ConfirmStart", "ConfirmEnd", "HandoverStart", "HandoverEnd", "Retry", "QueueDepth", "Pruned"}
	for _, hook := range hooks {
		t.Run(hook, func(t *testing.T) {
			api := newFakeAPI()
			api.txs[1], api.txs[2] = created(1), created(2)
			obs := &panickingObserver{hook: hook, secret: newSecret}
			var log logtest.Lines
			got := &calls{failFirst: 1} // a retry
			h := webhook.NewHandler(api.client(t), got.fn, webhook.Options{
				Observer: obs, Secrets: []string{newSecret}, RetryWait: time.Millisecond, MaxRetryWait: time.Millisecond,
				Logger: slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelDebug})),
			})
			for _, id := range []int64{1, 2} { // one at a time: each fetched, none listed
				if code := post(h, "/escrow/"+newSecret, "create", id); code != http.StatusOK {
					t.Errorf("delivery %d answered %d, want 200", id, code)
				}
				flushed(t, h)
			}
			stopped, stop := context.WithCancel(t.Context())
			stop()
			if err := h.RunReconciler(stopped, time.Hour); !errors.Is(err, context.Canceled) {
				t.Errorf("RunReconciler: %v, want its context's end", err)
			}
			shutdown(t, h) // the workers' last reports are made
			handed := slices.Sorted(slices.Values(got.list()))
			if !slices.Equal(handed, []string{"create:1", "create:1", "create:2"}) && !slices.Equal(handed, []string{"create:1", "create:2", "create:2"}) {
				t.Errorf("hand-overs %q; want each transaction's create, one of them twice (retried)", handed)
			}
			n := int(obs.panics.Load())
			if n == 0 {
				t.Fatalf("%s was never called", hook)
			}
			text := log.String()
			if e := strings.Count(text, "level=ERROR msg=\"escrow webhook: the observer panicked"); e != 1 || !strings.Contains(text, "hook="+hook) {
				t.Errorf("log has %d Error lines for the panic (want 1, naming %s):\n%s", e, hook, text)
			}
			if c := strings.Count(text, "the observer panicked"); c != n {
				t.Errorf("log reports %d panics of %d", c, n)
			}
			if strings.Contains(text, newSecret) {
				t.Errorf("log shows the delivery secret:\n%s", text)
			}
		})
	}
}

// blockingDepth is an observer whose QueueDepth waits for release, once it is entered.
type blockingDepth struct {
	webhook.NopObserver
	entered chan struct{}
	release chan struct{}
	once    sync.Once
}

func (b *blockingDepth) QueueDepth(context.Context, int) {
	first := false
	b.once.Do(func() { first = true; close(b.entered) })
	if first {
		<-b.release
	}
}

// TestObserverIsCalledWithoutTheHandlersLock: while the observer blocks in QueueDepth for
// one delivery, another delivery is still answered: the handler holds no lock of its own
// while it calls the observer.
func TestObserverIsCalledWithoutTheHandlersLock(t *testing.T) {
	api := newFakeAPI()
	api.txs[1], api.txs[2] = created(1), created(2)
	obs := &blockingDepth{entered: make(chan struct{}), release: make(chan struct{})}
	got := &calls{}
	h := webhook.NewHandler(api.client(t), got.fn, webhook.Options{Observer: obs})
	defer shutdown(t, h)
	go deliver(h, "create", 1)
	<-obs.entered
	answered := make(chan int, 1)
	go func() { answered <- deliver(h, "create", 2) }()
	select {
	case code := <-answered:
		if code != http.StatusOK {
			t.Errorf("the second delivery answered %d, want 200", code)
		}
	case <-time.After(5 * time.Second):
		t.Error("the second delivery was not answered while the observer blocked")
	}
	close(obs.release)
	flushed(t, h)
	if n := len(got.list()); n != 2 {
		t.Errorf("%d hand-overs, want 2", n)
	}
}

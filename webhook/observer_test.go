package webhook_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	escrow "github.com/escrowkit/escrow-go"
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

func (r *recordingObserver) Pruned(context.Context, webhook.Prune) {}

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

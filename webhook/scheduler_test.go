package webhook_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	escrow "github.com/escrowkit/escrow-go"
	"github.com/escrowkit/escrow-go/escrowtest"
	"github.com/escrowkit/escrow-go/webhook"
)

// forgedBase is the first made-up id of the tests' floods: the fake API has none of them.
const forgedBase = 900_000_000

// rateLimited is the fake API's answer headers for a window of 10 requests a minute:
// UnseenShare's default (a tenth) lets one forgery be fetched per window.
var rateLimited = http.Header{"Ratelimit-Limit": {"10"}, "Ratelimit-Remaining": {"9"}, "Ratelimit-Reset": {"60"}}

// TestKnownTransactionsGoFirst: with the never-seen share spent by a forgery and hundreds
// of never-seen ids waiting, a delivery about a transaction handed over before is
// confirmed at once; the never-seen ones wait for the next window, then are confirmed.
func TestKnownTransactionsGoFirst(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		api := newFakeAPI()
		api.header = rateLimited
		api.txs[1] = created(1)
		api.txs[2] = created(2)
		got := &calls{}
		h := webhook.NewHandler(api.client(t), got.fn, webhook.Options{})
		defer shutdown(t, h)
		deliver(h, "create", 1)
		flushed(t, h)
		start := time.Now()
		deliver(h, "create", forgedBase) // a 404: the window's share is spent
		synctest.Wait()
		deliver(h, "create", 2) // real, never seen: waits with the forgeries
		synctest.Wait()         // looked up in the store before the forgeries, so first in their lane
		for i := range int64(500) {
			if code := deliver(h, "create", forgedBase+1+i); code != http.StatusOK {
				t.Fatalf("a forgery answered %d", code)
			}
		}
		api.set(agreed(1))
		deliver(h, "agree", 1) // known
		synctest.Wait()
		if l := got.list(); !slices.Equal(l, []string{"create:1", "agree:1"}) || got.at[1] != start {
			t.Errorf("handed over %v at %v; want agree:1 at once", l, got.at)
		}
		if n := api.readsOf(forgedBase + 1); n != 0 {
			t.Errorf("a forgery was fetched %d times within a spent share", n)
		}
		time.Sleep(time.Minute) // the next window: the first never-seen id is fetched
		synctest.Wait()
		if l := got.list(); len(l) != 3 || l[2] != "create:2" {
			t.Errorf("after the window: %v", l)
		}
		if n := h.Stats().UnseenDropped; n != 0 {
			t.Errorf("%d never-seen ids dropped within MaxUnseen", n)
		}
	})
}

// TestNeverSeenIdsBeyondMaxUnseenAreOwedALook: past MaxUnseen a never-seen id takes no
// queue but is owed a look all the same, answered 200 (never 503) and never dropped: once
// the window allows, every one is confirmed, those beyond MaxUnseen FromReconcile (their
// delivered names are not kept). A MaxUnseen of 1 keeps one queued.
func TestNeverSeenIdsBeyondMaxUnseenAreOwedALook(t *testing.T) {
	for _, maxUnseen := range []int{3, 1} {
		t.Run(strconv.Itoa(maxUnseen), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				api := newFakeAPI()
				api.header = rateLimited
				last := int64(maxUnseen + 2)
				for id := int64(1); id <= last; id++ {
					api.txs[id] = created(id)
				}
				obs := &recordingObserver{}
				got := &calls{}
				h := webhook.NewHandler(api.client(t), got.fn, webhook.Options{MaxUnseen: maxUnseen, Observer: obs})
				defer shutdown(t, h)
				deliver(h, "create", forgedBase) // spends the share
				synctest.Wait()
				for id := int64(1); id <= last; id++ {
					if code := deliver(h, "create", id); code != http.StatusOK {
						t.Errorf("never-seen delivery %d answered %d", id, code)
					}
					synctest.Wait() // looked up in the store: waiting for the share
				}
				time.Sleep(time.Minute)
				synctest.Wait()
				var want []string
				for id := int64(1); id <= last; id++ {
					want = append(want, fmt.Sprintf("create:%d", id))
				}
				if l := got.list(); !slices.Equal(slices.Sorted(slices.Values(l)), want) {
					t.Errorf("handed over %v; want every one", l)
				}
				if s := h.Stats(); s.UnseenDropped != 0 {
					t.Errorf("Stats %+v, want none dropped", s)
				}
				obs.mu.Lock()
				defer obs.mu.Unlock()
				reconciled := 0
				for _, ho := range obs.handovers {
					if ho.Source == webhook.FromReconcile {
						reconciled++
					}
				}
				if reconciled != 2 {
					t.Errorf("%d hand-overs FromReconcile, want the 2 beyond MaxUnseen", reconciled)
				}
			})
		})
	}
}

// TestNeverSeenShareIsATenthByDefault: fetches of never-seen ids answered 404 may spend a
// share of each rate-limit window, a tenth unless UnseenShare says otherwise (a share
// outside (0, 1] is taken for unset): with a window of 20, two forgeries are fetched and
// the rest wait.
func TestNeverSeenShareIsATenthByDefault(t *testing.T) {
	for _, tc := range []struct {
		share   float64
		fetched int
	}{{0, 2}, {2, 2}, {-1, 2}, {0.25, 5}} {
		t.Run(fmt.Sprint(tc.share), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				api := newFakeAPI()
				api.header = http.Header{"Ratelimit-Limit": {"20"}, "Ratelimit-Remaining": {"19"}, "Ratelimit-Reset": {"60"}}
				h := webhook.NewHandler(api.client(t), (&calls{}).fn, webhook.Options{UnseenShare: tc.share})
				defer shutdown(t, h)
				fetched := 0
				for i := range int64(10) {
					deliver(h, "create", forgedBase+i)
					synctest.Wait()
					fetched += api.readsOf(forgedBase + i)
				}
				if fetched != tc.fetched {
					t.Errorf("%d forgeries fetched in the window, want %d", fetched, tc.fetched)
				}
			})
		})
	}
}

// TestRepeatedForgeryWaitsForTheShare: a never-seen id delivered again while it waits
// for the share stays never seen: repeating each forged id must not lift it out of the
// flood's lane into the known transactions' (fetched at once, the share unspent).
func TestRepeatedForgeryWaitsForTheShare(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		api := newFakeAPI()
		api.header = rateLimited
		h := webhook.NewHandler(api.client(t), (&calls{}).fn, webhook.Options{})
		defer shutdown(t, h)
		deliver(h, "create", forgedBase) // spends the share
		synctest.Wait()
		for range 3 {
			deliver(h, "create", forgedBase+1)
			synctest.Wait()
		}
		if n := api.readsOf(forgedBase + 1); n != 0 {
			t.Errorf("a forgery delivered again fetched %d times before the window's end", n)
		}
	})
}

// TestNotFoundIdsAreNotFetchedAgain: an id answered 404 is not fetched again for a while,
// however often it is delivered.
func TestNotFoundIdsAreNotFetchedAgain(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		api := newFakeAPI()
		h := webhook.NewHandler(api.client(t), (&calls{}).fn, webhook.Options{})
		defer shutdown(t, h)
		deliver(h, "create", forgedBase)
		flushed(t, h)
		for range 50 {
			deliver(h, "agree", forgedBase)
			flushed(t, h)
		}
		if n := api.readsOf(forgedBase); n != 1 {
			t.Errorf("fetched %d times", n)
		}
		if s := h.Stats(); s.NotFoundDropped != 50 {
			t.Errorf("Stats %+v, want 50 dropped unfetched", s)
		}
		time.Sleep(2 * time.Minute) // it may exist by now: ids are handed out in sequence
		deliver(h, "create", forgedBase)
		flushed(t, h)
		if n := api.readsOf(forgedBase); n != 2 {
			t.Errorf("fetched %d times after the negative cache expired", n)
		}
	})
}

// TestGoroutinesBoundedByWorkers: thousands of never-seen ids queued take no goroutine
// each: the handler runs at most Workers, and one scheduler.
func TestGoroutinesBoundedByWorkers(t *testing.T) {
	api := newFakeAPI()
	api.header = rateLimited
	h := webhook.NewHandler(api.client(t), (&calls{}).fn, webhook.Options{MaxUnseen: 5000})
	before := runtime.NumGoroutine()
	most := 0
	for i := range int64(5000) {
		deliver(h, "create", forgedBase+i)
		most = max(most, runtime.NumGoroutine())
	}
	// Workers (8) and the scheduler: not one per id. A worker that found nothing to do
	// counts until it has returned, and deliveries start new ones meanwhile, so the count
	// runs above 9 for moments; 5000 ids must not show in it.
	if most > before+8+1+64 {
		t.Errorf("%d goroutines with 5000 ids queued, %d before", most, before)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	h.Shutdown(ctx) // the ids still waiting are given up
}

// TestPartnerListingConfirmsNewTransactions: while the never-seen share is spent by
// forgeries, a partner's new transaction is confirmed from one listing of its newest
// transactions, without a fetch of its own.
func TestPartnerListingConfirmsNewTransactions(t *testing.T) {
	for _, known := range []bool{false, true} {
		// known: a reconciliation found the account to be a partner before the flood.
		t.Run(fmt.Sprintf("partner known=%v", known), func(t *testing.T) {
			w := newWorld(t, webhook.Options{}, escrowtest.WithRateLimit(20, time.Minute))
			earlier := w.create() // handed over before the flood: the listing names it too
			w.settle()
			if known {
				if err := w.h.Reconcile(t.Context()); err != nil {
					t.Fatal(err)
				}
			}
			for i := range int64(30) { // 404s: two spend the share, the rest wait
				if code := w.deliver(fmt.Sprintf(`{"event": "create", "event_type": "transaction", "transaction_id": %d}`, forgedBase+i)); code != http.StatusOK {
					t.Fatalf("a forgery answered %d", code)
				}
			}
			id := w.create()
			deadline := time.Now().Add(10 * time.Second)
			for len(w.got.byTransaction()[id]) == 0 && time.Now().Before(deadline) {
				time.Sleep(10 * time.Millisecond)
			}
			if got := w.got.byTransaction()[id]; !slices.Equal(got, []string{"create"}) {
				t.Errorf("the new transaction's events: %v", got)
			}
			if got := w.got.byTransaction()[earlier]; !slices.Equal(got, []string{"create"}) || w.got.count(webhook.FromWebhook) != 2 {
				t.Errorf("the earlier transaction's events: %v", got)
			}
		})
	}
}

// TestNoListingThatCannotHelp: the listing of a partner's newest transactions is asked for
// only when it may confirm a never-seen id waiting: not by an account found not to be a
// partner (refused, it would cost a request a second for the flood's length), and not
// once the never-seen ids are all dealt with (the share spent, known transactions busy).
// Each listing spends the rate limit the application shares.
func TestNoListingThatCannotHelp(t *testing.T) {
	forgery := func(i int64) string {
		return fmt.Sprintf(`{"event": "create", "event_type": "transaction", "transaction_id": %d}`, forgedBase+i)
	}
	t.Run("not a partner", func(t *testing.T) {
		srv := escrowtest.NewServer(escrowtest.WithRateLimit(20, time.Minute))
		t.Cleanup(srv.Close)
		shop := srv.AddCustomer("shop@example.com")
		var listings atomic.Int64
		hc := &http.Client{Transport: listingCounter{next: srv.Client().Transport, n: &listings}}
		c, err := escrow.NewClient(shop.Email, shop.APIKey, escrow.WithBaseURL(srv.URL), escrow.WithHTTPClient(hc))
		if err != nil {
			t.Fatal(err)
		}
		h := webhook.NewHandler(c, (&calls{}).fn, webhook.Options{})
		defer shutdown(t, h)
		for i := range int64(30) {
			deliver(h, "create", forgedBase+i)
		}
		time.Sleep(2500 * time.Millisecond) // long enough for three listings a second apart
		if n := listings.Load(); n != 1 {
			t.Errorf("%d listings asked for; want the one that found the account is no partner", n)
		}
	})
	t.Run("nothing waiting", func(t *testing.T) {
		w := newWorld(t, webhook.Options{}, escrowtest.WithRateLimit(200, time.Minute))
		id := w.create()
		w.settle()                 // known
		for i := range int64(20) { // spend the share, one at a time: nothing waits
			w.deliver(forgery(i))
			if err := w.h.Flush(t.Context()); err != nil {
				t.Fatal(err)
			}
		}
		before := w.listings.Load()
		// A known transaction keeps the workers busy, on and off, for more than a second.
		for i, step := range lifecycles[0].steps {
			if err := step(w, id); err != nil {
				t.Fatalf("step %d: %v", i, err)
			}
			time.Sleep(300 * time.Millisecond)
		}
		w.settle()
		if n := w.listings.Load() - before; n != 0 {
			t.Errorf("%d listings asked for with no never-seen id waiting", n)
		}
	})
}

// TestShutdownDropsANeverSeenIdItsLookUpFoundUnknown: a never-seen id whose look-up in the
// Store is under way when Shutdown begins, and comes back unknown with the never-seen share
// spent, is dropped like those already waiting: Shutdown neither waits for the next
// rate-limit window nor fetches it.
func TestShutdownDropsANeverSeenIdItsLookUpFoundUnknown(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		api := newFakeAPI()
		api.header = rateLimited
		store := &gatedLookUps{gate: make(chan struct{})}
		h := webhook.NewHandler(api.client(t), (&calls{}).fn, webhook.Options{Store: store})
		deliver(h, "create", forgedBase) // a 404: the window's share is spent
		synctest.Wait()
		deliver(h, "create", forgedBase+1) // looked up in the Store: held at the gate
		synctest.Wait()
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		done := make(chan error, 1)
		go func() { done <- h.Shutdown(ctx) }()
		synctest.Wait() // Shutdown has begun: deliveries are refused
		close(store.gate)
		if err := <-done; err != nil {
			t.Errorf("Shutdown: %v", err)
		}
		if n := api.readsOf(forgedBase + 1); n != 0 {
			t.Errorf("the never-seen id was fetched %d times during Shutdown", n)
		}
	})
}

// gatedLookUps is a memory store whose look-ups of never-seen ids (Lease.IfKnown) wait
// for gate to close: those of id alone if it is set.
type gatedLookUps struct {
	webhook.MemoryStore
	gate chan struct{}
	id   int64
}

func (s *gatedLookUps) Acquire(ctx context.Context, l webhook.Lease, names []escrow.EventName, now time.Time) (webhook.Turn, error) {
	if l.IfKnown && (s.id == 0 || s.id == l.TransactionID) {
		<-s.gate
	}
	return s.MemoryStore.Acquire(ctx, l, names, now)
}

// TestListingUnderWayAtShutdownHandsOverWhatItNames: Shutdown drops the never-seen ids
// waiting for the share and those whose look-up in the Store comes back unknown after it
// began (the next reconciliation finds a real one); a listing of never-seen ids already
// under way hands over those it names while Shutdown waits for the work left.
func TestListingUnderWayAtShutdownHandsOverWhatItNames(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const busy, lookedUp, waiting = 1, 2, 3
		partner := rateLimitedPartner(busy, lookedUp, waiting)
		store := &gatedLookUps{gate: make(chan struct{}), id: lookedUp}
		got := &calls{block: make(chan struct{})}
		h := webhook.NewHandler(clientOver(t, partner), got.fn, webhook.Options{Store: store})
		deliver(h, "create", busy) // its callback waits: Shutdown waits for it
		synctest.Wait()
		deliver(h, "create", forgedBase) // a 404: the window's share is spent
		synctest.Wait()
		deliver(h, "create", lookedUp) // looked up in the Store: held there
		synctest.Wait()
		deliver(h, "create", waiting) // unknown to the Store: a listing asks about it, held
		synctest.Wait()
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		done := make(chan error, 1)
		go func() { done <- h.Shutdown(ctx) }()
		synctest.Wait()   // waiting is dropped
		close(store.gate) // lookedUp is unknown: dropped, Shutdown having begun
		synctest.Wait()
		close(partner.gate) // the listing names 3
		synctest.Wait()
		close(got.block)
		if err := <-done; err != nil {
			t.Errorf("Shutdown: %v", err)
		}
		if l := got.list(); !slices.Equal(slices.Sorted(slices.Values(l)), []string{"create:1", "create:3"}) {
			t.Errorf("handed over %v; want the listed create of 3 too, not the dropped 2", l)
		}
	})
}

// gatedPartner is api for a partner account: its listing of transactions (those of api's
// the ids filter names, or all, newest first, on one page) is answered once gate is closed, the first failFirst
// with a 502. listings counts them.
type gatedPartner struct {
	api       *fakeAPI
	gate      chan struct{}
	failFirst int64
	listings  atomic.Int64
}

// rateLimitedPartner is a partner's API whose answers say the rate-limit window is down
// to its last call, knowing a created transaction of each id; its listings wait for gate.
func rateLimitedPartner(ids ...int64) *gatedPartner {
	api := newFakeAPI()
	api.header = rateLimited
	for _, id := range ids {
		api.txs[id] = created(id)
	}
	return &gatedPartner{api: api, gate: make(chan struct{})}
}

// shareSpent returns a handler over partner, with the default options, and its callback's
// calls, once a forged id's fetch, answered 404, has spent the never-seen share of the
// window (rateLimited): a never-seen id delivered next waits, for the share or a listing.
// The handler is shut down when the test ends.
func shareSpent(t *testing.T, partner *gatedPartner) (*webhook.Handler, *calls) {
	t.Helper()
	got := &calls{}
	h := webhook.NewHandler(clientOver(t, partner), got.fn, webhook.Options{})
	t.Cleanup(func() { shutdown(t, h) })
	deliver(h, "create", forgedBase)
	synctest.Wait()
	return h, got
}

func (p *gatedPartner) RoundTrip(r *http.Request) (*http.Response, error) {
	if !strings.HasSuffix(r.URL.Path, "/partner/transactions") {
		return p.api.RoundTrip(r)
	}
	n := p.listings.Add(1)
	<-p.gate
	if n <= p.failFirst {
		rec := httptest.NewRecorder()
		http.Error(rec, `{"error": "bad_gateway"}`, http.StatusBadGateway)
		return rec.Result(), nil
	}
	asked := map[int64]bool{} // the ids filter; none: every transaction
	for _, v := range r.URL.Query()["ids"] {
		for f := range strings.SplitSeq(v, ",") {
			id, _ := strconv.ParseInt(f, 10, 64)
			asked[id] = true
		}
	}
	p.api.mu.Lock()
	var page escrow.TransactionCursorList
	for _, id := range slices.Backward(slices.Sorted(maps.Keys(p.api.txs))) {
		if len(asked) == 0 || asked[id] {
			page.Transactions = append(page.Transactions, *p.api.txs[id])
		}
	}
	p.api.mu.Unlock()
	rec := httptest.NewRecorder()
	rec.Header().Set("Content-Type", "application/json")
	json.NewEncoder(rec).Encode(page)
	return rec.Result(), nil
}

// TestReconcilerConfirmingATurnUnderWayStartsNoSecondTurn: a never-seen transaction the
// reconciler lists while its first fetch is under way becomes known, and its turn goes on
// alone: no second worker fetches it beside the first, and its create is handed over once.
func TestReconcilerConfirmingATurnUnderWayStartsNoSecondTurn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		api := newFakeAPI()
		api.txs[1] = created(1)
		slow := &heldReads{api: api, id: 1, gate: make(chan struct{})}
		got := &calls{}
		h := webhook.NewHandler(clientOver(t, slow), got.fn, webhook.Options{})
		defer shutdown(t, h)
		deliver(h, "create", 1) // never seen: fetched at once, the answer held
		synctest.Wait()
		if err := h.Reconcile(t.Context()); err != nil { // lists it meanwhile
			t.Fatal(err)
		}
		synctest.Wait()
		if n := slow.asked.Load(); n != 1 {
			t.Errorf("fetched %d times at once", n)
		}
		close(slow.gate)
		flushed(t, h)
		if n := api.readsOf(1); n != 1 {
			t.Errorf("fetched %d times", n)
		}
		if l := got.list(); !slices.Equal(l, []string{"create:1"}) {
			t.Errorf("handed over %v", l)
		}
	})
}

// TestReconcilerConfirmingAQueuedIdStartsOneTurnAndStallsNoOther: a never-seen
// transaction waiting for a worker when the reconciler lists it moves ahead, as a known
// one; its one turn holds one worker while its fetch hangs, and the other worker goes on
// to what waits behind it.
func TestReconcilerConfirmingAQueuedIdStartsOneTurnAndStallsNoOther(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const busy1, busy2, slowID = 1, 2, 3
		api := newFakeAPI()
		for _, id := range []int64{busy1, busy2, slowID} {
			api.txs[id] = created(id)
		}
		slow := &heldReads{api: api, id: slowID, gate: make(chan struct{})}
		got := &calls{block: make(chan struct{})}
		h := webhook.NewHandler(clientOver(t, slow), got.fn, webhook.Options{Workers: 2})
		defer shutdown(t, h)
		deliver(h, "create", busy1) // both workers held by callbacks
		deliver(h, "create", busy2)
		synctest.Wait()
		deliver(h, "create", slowID) // never seen: waits for a worker
		deliver(h, "create", forgedBase)
		if err := h.Reconcile(t.Context()); err != nil { // lists slowID: known now
			t.Fatal(err)
		}
		close(got.block)
		synctest.Wait() // slowID's fetch hangs
		if n := api.readsOf(forgedBase); n != 1 {
			t.Errorf("the delivery behind the hanging fetch was fetched %d times, want 1", n)
		}
		if n := slow.asked.Load(); n != 1 {
			t.Errorf("the transaction whose fetch hangs was fetched %d times, want 1", n)
		}
		close(slow.gate)
		flushed(t, h)
		if l := got.list(); countOf(l, "create:3") != 1 {
			t.Errorf("handed over %v; want create:3 once", l)
		}
	})
}

// heldReads is api whose answers to reads of transaction id wait for gate to close;
// asked counts those reads as they are sent.
type heldReads struct {
	api   http.RoundTripper
	id    int64
	gate  chan struct{}
	asked atomic.Int64
}

func (s *heldReads) RoundTrip(r *http.Request) (*http.Response, error) {
	if strings.HasSuffix(r.URL.Path, "/transaction/"+strconv.FormatInt(s.id, 10)) {
		s.asked.Add(1)
		<-s.gate
	}
	return s.api.RoundTrip(r)
}

// TestNeverSeenIdsWaitingAtTheWindowsResetAreFetchedWithoutAListing: while the share is
// spent, a partner's newest transactions are listed once a second for the never-seen ids
// waiting; once the window resets and the share allows a fetch for each of the few that
// wait, they are fetched with no listing more (each listing spends the rate limit the
// application shares).
func TestNeverSeenIdsWaitingAtTheWindowsResetAreFetchedWithoutAListing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		api := newFakeAPI()
		api.header = http.Header{"Ratelimit-Limit": {"20"}, "Ratelimit-Remaining": {"19"}, "Ratelimit-Reset": {"60"}}
		partner := &gatedPartner{api: api, gate: make(chan struct{})}
		close(partner.gate)
		h := webhook.NewHandler(clientOver(t, partner), (&calls{}).fn, webhook.Options{})
		defer shutdown(t, h)
		for i := range int64(4) { // two 404s spend the share (2 of 20); two wait
			deliver(h, "create", forgedBase+i)
			synctest.Wait()
		}
		if n := partner.listings.Load(); n != 1 {
			t.Fatalf("%d listings for the ids waiting, want 1", n)
		}
		time.Sleep(time.Minute - time.Second/2) // a listing a second while they wait
		synctest.Wait()
		before := partner.listings.Load()
		time.Sleep(time.Second) // the window resets: the share allows both fetches
		synctest.Wait()
		if n := partner.listings.Load() - before; n != 0 {
			t.Errorf("%d listings at the window's reset, with the share allowing a fetch for each id waiting", n)
		}
		for i := range int64(4) {
			if n := api.readsOf(forgedBase + i); n != 1 {
				t.Errorf("forgery %d fetched %d times, want once", i, n)
			}
		}
	})
}

// TestListedNeverSeenIdIsHandedOverAtOnce: with the never-seen share spent, a partner's new
// transaction whose delivery waits among the never-seen ids is handed over as soon as the
// listing that asks about it answers, from the state listed: no fetch, no wait for the
// next window.
func TestListedNeverSeenIdIsHandedOverAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const fresh = 7
		partner := rateLimitedPartner(fresh)
		api := partner.api
		h, got := shareSpent(t, partner)
		deliver(h, "create", fresh) // unknown to the Store: a listing asks about it, held
		synctest.Wait()
		if l := got.list(); len(l) != 0 || partner.listings.Load() != 1 {
			t.Fatalf("handed over %v with %d listings asked for; want nothing yet, one", l, partner.listings.Load())
		}
		close(partner.gate)
		synctest.Wait()
		if l := got.list(); !slices.Equal(l, []string{"create:7"}) {
			t.Errorf("handed over %v after the listing; want create:7", l)
		}
		if n := api.readsOf(fresh); n != 0 {
			t.Errorf("the listed transaction was fetched %d times", n)
		}
	})
}

// TestFailedListingIsAskedForAgain: a listing of the newest transactions that fails (a
// 502) is asked for again a second later, and that one confirms the partner's new
// transaction waiting among the never-seen ids.
func TestFailedListingIsAskedForAgain(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const fresh = 7
		partner := rateLimitedPartner(fresh)
		partner.failFirst = 1
		close(partner.gate)
		h, got := shareSpent(t, partner)
		deliver(h, "create", fresh) // waits: the listing asked for fails
		synctest.Wait()
		if l := got.list(); len(l) != 0 || partner.listings.Load() != 1 {
			t.Fatalf("handed over %v after %d listings; want nothing after the failed one", l, partner.listings.Load())
		}
		time.Sleep(time.Second)
		synctest.Wait()
		if l := got.list(); !slices.Equal(l, []string{"create:7"}) || partner.listings.Load() != 2 {
			t.Errorf("handed over %v after %d listings; want create:7 from the second", l, partner.listings.Load())
		}
	})
}

// TestDeliveryOfATransactionAListingNamedIsConfirmedAtOnce: a transaction a listing of
// never-seen ids named, during a flood, is known from then on: its next delivery is
// confirmed at once, as a known transaction's, not queued among the never-seen ids for
// the share or the next listing.
func TestDeliveryOfATransactionAListingNamedIsConfirmedAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const fresh = 7
		partner := rateLimitedPartner(fresh)
		close(partner.gate)
		h, got := shareSpent(t, partner)
		deliver(h, "create", fresh) // the listing asked for names 7
		synctest.Wait()
		if n := partner.listings.Load(); n != 1 {
			t.Fatalf("%d listings, want 1", n)
		}
		partner.api.set(agreed(fresh))
		deliver(h, "agree", fresh)
		synctest.Wait()
		if l := got.list(); !slices.Equal(l, []string{"create:7", "agree:7"}) || partner.listings.Load() != 1 {
			t.Errorf("handed over %v after %d listings; want agree:7 at once", l, partner.listings.Load())
		}
	})
}

// TestLagOfANeverSeenDeliveryCountsItsWaitForTheShare: a real transaction's first
// delivery that waits among the never-seen ids for the next window is reported to the
// Observer with the time it arrived: its hand-over's Lag is the wait, not zero.
func TestLagOfANeverSeenDeliveryCountsItsWaitForTheShare(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		api := newFakeAPI()
		api.header = rateLimited
		api.txs[7] = created(7)
		obs := &recordingObserver{}
		got := &calls{}
		h := webhook.NewHandler(api.client(t), got.fn, webhook.Options{Observer: obs})
		defer shutdown(t, h)
		deliver(h, "create", forgedBase) // a 404: the window's share is spent
		synctest.Wait()
		arrived := time.Now()
		deliver(h, "create", 7) // waits for the next window
		synctest.Wait()
		time.Sleep(time.Minute)
		synctest.Wait()
		if l := got.list(); !slices.Equal(l, []string{"create:7"}) {
			t.Fatalf("handed over %v", l)
		}
		obs.mu.Lock()
		defer obs.mu.Unlock()
		for _, ho := range obs.handovers {
			if ho.TransactionID == 7 && (!ho.Delivered.Equal(arrived) || ho.Lag() != time.Minute) {
				t.Errorf("hand-over delivered at %v, Lag %v; want its arrival, a minute", ho.Delivered, ho.Lag())
			}
		}
		for _, d := range obs.deliveries {
			if d.TransactionID == 7 && !d.Received.Equal(arrived) {
				t.Errorf("delivery %s reported received at %v, want its arrival %v", d.Outcome, d.Received, arrived)
			}
		}
	})
}

// TestDeliveriesDuringAFailedFetchAreDropped: deliveries of a never-seen id that arrive
// while its fetch is under way are dropped with it when the API answers 404, counted as
// NotFoundDropped: no second fetch (a forgery repeated spends no request more).
func TestDeliveriesDuringAFailedFetchAreDropped(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		api := newFakeAPI()
		slow := &heldReads{api: api, id: forgedBase, gate: make(chan struct{})}
		h := webhook.NewHandler(clientOver(t, slow), (&calls{}).fn, webhook.Options{})
		defer shutdown(t, h)
		deliver(h, "create", forgedBase)
		synctest.Wait() // its fetch is under way
		deliver(h, "agree", forgedBase)
		close(slow.gate)
		flushed(t, h)
		if n := api.readsOf(forgedBase); n != 1 {
			t.Errorf("fetched %d times", n)
		}
		if s := h.Stats(); s.NotFoundDropped != 1 {
			t.Errorf("Stats %+v, want the delivery during the fetch dropped unfetched", s)
		}
	})
}

// TestKnownTransactionGoesBeforeNeverSeenLookUps: with one worker, the never-seen share
// spent and never-seen ids waiting for their look-up in the Store (held, as a slow
// database holds them), a delivery about a transaction handed over before is confirmed
// before any of those look-ups: known transactions are served first.
func TestKnownTransactionGoesBeforeNeverSeenLookUps(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		api := newFakeAPI()
		api.header = rateLimited
		api.txs[1], api.txs[2] = created(1), created(2)
		store := &gatedLookUps{gate: make(chan struct{})}
		got := &calls{}
		h := webhook.NewHandler(api.client(t), got.fn, webhook.Options{Store: store, Workers: 1})
		defer shutdown(t, h)
		defer close(store.gate) // before Shutdown, which waits for the look-ups
		for id := range int64(2) {
			deliver(h, "create", id+1)
			flushed(t, h) // known now
		}
		deliver(h, "create", forgedBase) // a 404: the share is spent, never-seen ids are looked up
		synctest.Wait()
		got.block = make(chan struct{})
		api.set(agreed(2))
		deliver(h, "agree", 2) // the one worker is held in its callback
		synctest.Wait()
		for i := range int64(5) {
			deliver(h, "create", forgedBase+1+i) // each waits for its look-up
		}
		api.set(agreed(1))
		deliver(h, "agree", 1) // known: comes last, goes first
		close(got.block)
		synctest.Wait()
		if l := got.list(); !slices.Equal(l, []string{"create:1", "create:2", "agree:2", "agree:1"}) {
			t.Errorf("handed over %v while the never-seen look-ups were held; want agree:1 before them", l)
		}
	})
}

// failOnce answers the next read of transaction id 404 once armed, after gate closes;
// every other request goes to api.
type failOnce struct {
	api   http.RoundTripper
	id    int64
	armed atomic.Bool
	gate  chan struct{}
}

func (f *failOnce) RoundTrip(r *http.Request) (*http.Response, error) {
	if strings.HasSuffix(r.URL.Path, "/transaction/"+strconv.FormatInt(f.id, 10)) && f.armed.CompareAndSwap(true, false) {
		<-f.gate
		rec := httptest.NewRecorder()
		rec.Header().Set("Content-Type", "application/json")
		rec.WriteHeader(http.StatusNotFound)
		fmt.Fprint(rec, `{"error": "not_found", "message": "a moment's inconsistency"}`)
		return rec.Result(), nil
	}
	return f.api.RoundTrip(r)
}

// TestDeliveriesDuringAKnownTransactionsFailedFetchAreConfirmed: a transaction the
// account is known to have whose fetch the API answers 404 for a moment (a replica of the
// API lagging) keeps the deliveries that arrived during that fetch: they are confirmed by
// the next fetch, not dropped as a forgery's would be.
func TestDeliveriesDuringAKnownTransactionsFailedFetchAreConfirmed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		api := newFakeAPI()
		api.txs[1] = created(1)
		flaky := &failOnce{api: api, id: 1, gate: make(chan struct{})}
		got := &calls{}
		h := webhook.NewHandler(clientOver(t, flaky), got.fn, webhook.Options{})
		defer shutdown(t, h)
		deliver(h, "create", 1)
		flushed(t, h) // known now
		flaky.armed.Store(true)
		api.set(agreed(1))
		deliver(h, "agree", 1) // its fetch is held, then answered 404
		synctest.Wait()
		deliver(h, "agree", 1) // arrives during the failed fetch
		close(flaky.gate)
		flushed(t, h)
		if l := got.list(); !slices.Equal(l, []string{"create:1", "agree:1"}) {
			t.Errorf("handed over %v; want the agree delivered during the failed fetch confirmed", l)
		}
		if s := h.Stats(); s.NotFoundDropped != 0 {
			t.Errorf("Stats %+v: a known transaction's delivery dropped as not found", s)
		}
	})
}

// TestDeliveryAfterAReconciledStateIsFetched: a state the reconciler read while a turn was
// under way confirms only what it shows; a delivery that arrives after it is fetched, as
// the state may have been read before the event it announces happened.
func TestDeliveryAfterAReconciledStateIsFetched(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		api := newFakeAPI()
		api.txs[1] = created(1)
		got := &calls{block: make(chan struct{})}
		h := webhook.NewHandler(api.client(t), got.fn, webhook.Options{})
		defer shutdown(t, h)
		deliver(h, "create", 1)
		synctest.Wait() // its callback runs
		// The reconciler reads the state as created.
		if err := h.Reconcile(t.Context()); err != nil {
			t.Fatal(err)
		}
		api.set(agreed(1))
		deliver(h, "agree", 1)
		close(got.block)
		flushed(t, h)
		if l := got.list(); !slices.Equal(l, []string{"create:1", "agree:1"}) {
			t.Errorf("handed over %v", l)
		}
	})
}

// TestGoroutinesBoundedWhileRetriesWait: hundreds of transactions waiting for a retry's
// backoff take no goroutine each: their waits are wakeups of the one scheduler.
func TestGoroutinesBoundedWhileRetriesWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		api := newFakeAPI()
		for id := range int64(300) {
			api.setStatus(id+1, http.StatusBadGateway)
		}
		h := webhook.NewHandler(api.client(t), (&calls{}).fn, webhook.Options{RetryWait: time.Minute, MaxRetryWait: time.Minute})
		before := runtime.NumGoroutine()
		for id := range int64(300) {
			deliver(h, "create", id+1)
		}
		synctest.Wait() // each fetched once, failed: each waits for its retry
		if n := api.readsOf(300); n != 1 {
			t.Fatalf("the last transaction fetched %d times, want once before its retry", n)
		}
		if n := runtime.NumGoroutine() - before; n > 8+1 {
			t.Errorf("%d goroutines more with 300 retries waiting; want at most the workers and one scheduler", n)
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		h.Shutdown(ctx) // the retries still waiting are given up
	})
}

// TestReconcilerConfirmsANeverSeenIdWaitingForTheShare: a real transaction's first
// delivery waiting among the never-seen ids for the next window is confirmed as soon as
// the reconciler lists it: the account has it, so it goes with the known transactions.
func TestReconcilerConfirmsANeverSeenIdWaitingForTheShare(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		api := newFakeAPI()
		api.header = rateLimited
		api.txs[7] = created(7)
		got := &calls{}
		h := webhook.NewHandler(api.client(t), got.fn, webhook.Options{})
		defer shutdown(t, h)
		deliver(h, "create", forgedBase) // a 404: the window's share is spent
		synctest.Wait()
		deliver(h, "create", 7) // waits for the next window
		synctest.Wait()
		if l := got.list(); len(l) != 0 {
			t.Fatalf("handed over %v before the window's end", l)
		}
		if err := h.Reconcile(t.Context()); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		if l := got.list(); !slices.Equal(l, []string{"create:7"}) {
			t.Errorf("handed over %v once the reconciler listed it; want create:7 at once", l)
		}
	})
}

// TestNeverSeenIdBeyondMaxUnseenIsConfirmedByTheNextListing: with MaxUnseen never-seen
// ids under way, a further one takes no queue but is owed a look (answered 200, not
// dropped); the next listing of a partner's never-seen ids asks about it and hands it
// over, as the reconciler would: its delivered name was not kept.
func TestNeverSeenIdBeyondMaxUnseenIsConfirmedByTheNextListing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const fresh = 7
		partner := rateLimitedPartner(fresh)
		close(partner.gate)
		slow := &heldReads{api: partner, id: forgedBase, gate: make(chan struct{})}
		obs := &recordingObserver{}
		got := &calls{}
		h := webhook.NewHandler(clientOver(t, slow), got.fn, webhook.Options{MaxUnseen: 1, Observer: obs})
		defer shutdown(t, h)
		deliver(h, "create", forgedBase) // fetched at once, the answer held: MaxUnseen reached
		synctest.Wait()
		if code := deliver(h, "create", fresh); code != http.StatusOK {
			t.Errorf("the delivery beyond MaxUnseen answered %d", code)
		}
		close(slow.gate) // a 404: the window's share is spent
		synctest.Wait()
		deliver(h, "create", forgedBase+1) // waits: a listing asks about it and about 7
		synctest.Wait()
		if l := got.list(); !slices.Equal(l, []string{"create:7"}) {
			t.Errorf("handed over %v; want create:7 from the listing", l)
		}
		if s := h.Stats(); s.UnseenDropped != 0 {
			t.Errorf("Stats %+v, want nothing dropped", s)
		}
		obs.mu.Lock()
		defer obs.mu.Unlock()
		if len(obs.handovers) != 1 || obs.handovers[0].Source != webhook.FromReconcile {
			t.Errorf("hand-overs %+v; want one FromReconcile", obs.handovers)
		}
	})
}

// TestQueueDepthReportedAsEachQueueIsMade: the Observer's queue depth counts a
// transaction's queue as soon as it is made, whether a never-seen id's delivery or a
// reconciled state of one not queued yet made it, not only when a queue goes.
func TestQueueDepthReportedAsEachQueueIsMade(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		api := newFakeAPI()
		api.txs[1], api.txs[2] = created(1), created(2)
		obs := &recordingObserver{}
		got := &calls{block: make(chan struct{})}
		h := webhook.NewHandler(api.client(t), got.fn, webhook.Options{Observer: obs})
		defer shutdown(t, h)
		deliver(h, "create", 1) // never seen; its callback waits
		synctest.Wait()
		depths := func() []int {
			obs.mu.Lock()
			defer obs.mu.Unlock()
			return slices.Clone(obs.depths)
		}
		if d := depths(); !slices.Equal(d, []int{1}) {
			t.Errorf("queue depths %v after a never-seen id's delivery; want [1]", d)
		}
		if err := h.Reconcile(t.Context()); err != nil { // lists 2, not queued yet
			t.Fatal(err)
		}
		if d := depths(); len(d) < 2 || d[1] != 2 {
			t.Errorf("queue depths %v after the reconciler queued another; want [1 2 ...]", d)
		}
		close(got.block)
	})
}

// TestThousandsOfQueuedIdsAreEachFetchedOnce: thousands of never-seen ids queued behind a
// hanging fetch, with no rate limit stated, are each fetched once when it returns: the
// queue that holds them keeps every id, in order, as it frees what it served.
func TestThousandsOfQueuedIdsAreEachFetchedOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const n = 3000
		api := newFakeAPI()
		slow := &heldReads{api: api, id: forgedBase, gate: make(chan struct{})}
		h := webhook.NewHandler(clientOver(t, slow), (&calls{}).fn, webhook.Options{Workers: 1, MaxUnseen: 2 * n})
		defer shutdown(t, h)
		for i := range int64(n) {
			deliver(h, "create", forgedBase+i) // the first one's fetch hangs; the others wait
		}
		synctest.Wait()
		close(slow.gate)
		flushed(t, h)
		for i := range int64(n) {
			if got := api.readsOf(forgedBase + i); got != 1 {
				t.Fatalf("forgery %d fetched %d times, want once", i, got)
			}
		}
	})
}

// TestReplicasTakeTheSameBacklogInOrdersOfTheirOwn: replicas behind a load balancer hold
// the same backlog; each takes it in an order of its own, so that they do not all start
// on the same transaction and wait for one another's turn. Four handlers, one worker
// each, busy while 64 deliveries queue: the transactions they go on with are not all
// the same (all four alike by chance: one time in 64³).
func TestReplicasTakeTheSameBacklogInOrdersOfTheirOwn(t *testing.T) {
	api := newFakeAPI()
	for id := range int64(65) {
		api.txs[id+1] = created(id + 1)
	}
	next := map[string]bool{}
	for range 4 {
		got := &calls{block: make(chan struct{})}
		h := webhook.NewHandler(api.client(t), got.fn, webhook.Options{Workers: 1})
		before := api.readsOf(1)
		deliver(h, "create", 1)
		for deadline := time.Now().Add(5 * time.Second); api.readsOf(1) == before; {
			if time.Now().After(deadline) {
				t.Fatal("transaction 1 was never fetched")
			}
			runtime.Gosched() // until the worker is on transaction 1, its callback waiting
		}
		for id := range int64(64) {
			deliver(h, "create", id+2)
		}
		close(got.block)
		flushed(t, h)
		shutdown(t, h)
		if l := got.list(); len(l) != 65 || l[0] != "create:1" {
			t.Fatalf("handed over %d events, first %v; want 65, create:1 first", len(l), l[:1])
		} else {
			next[l[1]] = true
		}
	}
	if len(next) == 1 {
		t.Errorf("four replicas all went on with %v after the first", next)
	}
}

// TestForgedIdsLeaveNothingInTheStore: forged ids, each fetched once and answered 404,
// leave no record, lease or pace in the Store: nothing is kept for what never existed,
// before Prune and after it.
func TestForgedIdsLeaveNothingInTheStore(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		api := newFakeAPI()
		store := new(webhook.MemoryStore)
		h := webhook.NewHandler(api.client(t), (&calls{}).fn, webhook.Options{Store: store})
		defer shutdown(t, h)
		for i := range int64(300) {
			deliver(h, "create", forgedBase+i)
			if i%50 == 49 {
				flushed(t, h)
			}
		}
		flushed(t, h)
		for i := range int64(300) {
			if n := api.readsOf(forgedBase + i); n != 1 {
				t.Fatalf("forgery %d fetched %d times, want once", i, n)
			}
		}
		if n := store.Entries(); n != 0 {
			t.Errorf("%d entries kept for 300 forged ids after their turns, want 0", n)
		}
		if _, err := store.Prune(t.Context(), time.Now().Add(-30*24*time.Hour)); err != nil {
			t.Fatal(err)
		}
		if n := store.Entries(); n != 0 {
			t.Errorf("%d entries kept for 300 forged ids after Prune, want 0", n)
		}
	})
}

// pooledStore is a memory store that says it has conns connections.
type pooledStore struct {
	webhook.MemoryStore
	conns int
}

func (s *pooledStore) MaxConns() int { return s.conns }

// TestWorkersFollowTheStoresConnections: a Handler over a Store with a bounded pool of
// connections (webhook.Pooled) confirms as many transactions at once as the pool has
// connections, unless Options.Workers says otherwise.
func TestWorkersFollowTheStoresConnections(t *testing.T) {
	for _, tc := range []struct{ conns, workers, want int }{{3, 0, 3}, {3, 5, 5}, {0, 0, 8}} {
		t.Run(fmt.Sprintf("conns=%d,workers=%d", tc.conns, tc.workers), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				api := newFakeAPI()
				var running, most atomic.Int64
				gate := make(chan struct{})
				fn := func(ctx context.Context, ev webhook.ConfirmedEvent) error {
					n := running.Add(1)
					defer running.Add(-1)
					for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
					}
					<-gate
					return nil
				}
				// Known transactions, so that every worker may take one: never-seen ids are
				// looked up apart, within their own share of the workers.
				store := &pooledStore{conns: tc.conns}
				if err := store.Track(t.Context(), []int64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20}); err != nil {
					t.Fatal(err)
				}
				h := webhook.NewHandler(api.client(t), fn, webhook.Options{Store: store, Workers: tc.workers})
				defer shutdown(t, h)
				for id := range int64(20) {
					api.set(created(id + 1))
					deliver(h, "create", id+1)
				}
				synctest.Wait()
				close(gate)
				flushed(t, h)
				if n := most.Load(); n != int64(tc.want) {
					t.Errorf("%d callbacks at once, want %d", n, tc.want)
				}
			})
		})
	}
}

// TestNewTransactionIsListedBeforeAFloodsMadeUpIds: a listing of never-seen ids asks about
// those nearest to the account's newest transaction first: ids are handed out in order,
// so a partner's new transaction delivered after hundreds of made-up ids is in the next
// listing, not behind them.
func TestNewTransactionIsListedBeforeAFloodsMadeUpIds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const fresh = 7
		partner := rateLimitedPartner(fresh)
		h, got := shareSpent(t, partner)
		deliver(h, "create", forgedBase+1) // waits; a listing asks about it, held
		synctest.Wait()
		for i := range int64(300) {
			deliver(h, "create", forgedBase+2+i)
		}
		deliver(h, "create", fresh)
		synctest.Wait()
		close(partner.gate) // names nothing: the next listing comes a second later
		synctest.Wait()
		time.Sleep(time.Second)
		synctest.Wait()
		if l := got.list(); !slices.Equal(l, []string{"create:7"}) || partner.listings.Load() != 2 {
			t.Errorf("handed over %v after %d listings; want create:7 from the second", l, partner.listings.Load())
		}
	})
}

// TestDeliveryDuringAListingIsFetched: a listing's state confirms only the deliveries that
// came before the listing asked about the id; one that arrives while it is under way (its
// event may be newer than the state listed) is confirmed by a fetch.
func TestDeliveryDuringAListingIsFetched(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const fresh = 7
		partner := rateLimitedPartner(fresh)
		slow := &heldReads{api: partner, id: fresh, gate: make(chan struct{})}
		got := &calls{}
		h := webhook.NewHandler(clientOver(t, slow), got.fn, webhook.Options{})
		defer shutdown(t, h)
		deliver(h, "create", forgedBase) // a 404: the window's share is spent
		synctest.Wait()
		deliver(h, "create", fresh) // a listing asks about it, held
		synctest.Wait()
		deliver(h, "agree", fresh) // during the listing
		close(partner.gate)        // the listing shows 7 created
		synctest.Wait()            // create:7 handed over; agree's fetch held
		partner.api.set(agreed(fresh))
		close(slow.gate)
		synctest.Wait()
		if l := got.list(); !slices.Equal(l, []string{"create:7", "agree:7"}) {
			t.Errorf("handed over %v; want the agree delivered during the listing fetched and handed over", l)
		}
	})
}

package webhook_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
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
	"github.com/escrowkit/escrow-go/internal/logtest"
	"github.com/escrowkit/escrow-go/webhook"
)

// listingAPI serves the two listings the reconciler reads (the partner listing, in pages of
// two, and the paged list) and single transactions, counts the requests of each, and
// answers a listing with the error statuses queued for it.
type listingAPI struct {
	mu      sync.Mutex
	partner bool
	txs     map[int64]*escrow.Transaction
	fail    map[string][]int // "partner" or "list": statuses to answer, one per request (0: as usual)
	// afterFirst, if set, runs (unlocked) once a listing request was first answered 200.
	afterFirst func()
	requests   map[string]int // "partner", "partner page", "list" and "read"
}

func newListingAPI(partner bool) *listingAPI {
	return &listingAPI{partner: partner, txs: map[int64]*escrow.Transaction{}, fail: map[string][]int{}, requests: map[string]int{}}
}

func (a *listingAPI) RoundTrip(r *http.Request) (*http.Response, error) {
	rec := httptest.NewRecorder()
	a.serve(rec, r)
	a.mu.Lock()
	after := a.afterFirst
	if after != nil && rec.Code == http.StatusOK && a.requests["partner"]+a.requests["list"] > 0 {
		a.afterFirst = nil
	} else {
		after = nil
	}
	a.mu.Unlock()
	if after != nil {
		after()
	}
	return rec.Result(), nil
}

func (a *listingAPI) serve(w http.ResponseWriter, r *http.Request) {
	a.mu.Lock()
	defer a.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	refuse := func(listing string) bool {
		if q := a.fail[listing]; len(q) > 0 {
			a.fail[listing] = q[1:]
			if q[0] == 0 { // answered as usual
				return false
			}
			w.WriteHeader(q[0])
			fmt.Fprintf(w, `{"error": %q, "message": "as the test says"}`, http.StatusText(q[0]))
			return true
		}
		return false
	}
	ids := slices.Sorted(maps.Keys(a.txs))
	switch path := r.URL.Path; {
	case strings.HasSuffix(path, "/partner/transactions"):
		a.requests["partner"]++
		if refuse("partner") {
			return
		}
		if !a.partner {
			w.WriteHeader(http.StatusForbidden)
			fmt.Fprint(w, `{"error": "forbidden", "message": "not a partner"}`)
			return
		}
		q := r.URL.Query()
		if q.Get("sort_direction") == string(escrow.SortDesc) {
			slices.Reverse(ids)
		}
		var page escrow.TransactionCursorList
		for _, id := range ids {
			tx := a.txs[id]
			if q.Get("status") == string(escrow.StatusOngoing) && (tx.Completed() || tx.Cancelled()) {
				continue
			}
			page.Transactions = append(page.Transactions, *tx)
		}
		// Pages of two; the cursor is the index of the next page's first transaction.
		from, _ := strconv.Atoi(q.Get("next_cursor"))
		if from > 0 {
			a.requests["partner page"]++
		}
		page.Transactions = page.Transactions[min(from, len(page.Transactions)):]
		if len(page.Transactions) > 2 {
			next := int64(from + 2)
			page.NextCursor = &next
			page.Transactions = page.Transactions[:2]
		}
		json.NewEncoder(w).Encode(page)
	case strings.HasSuffix(path, "/transaction"):
		a.requests["list"]++
		if refuse("list") {
			return
		}
		writePage(w, r, a.txs)
	default:
		a.requests["read"]++
		id, _ := strconv.ParseInt(path[strings.LastIndexByte(path, '/')+1:], 10, 64)
		if tx := a.txs[id]; tx != nil {
			json.NewEncoder(w).Encode(tx)
			return
		}
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprint(w, `{"error": "not_found", "message": "no such transaction"}`)
	}
}

func (a *listingAPI) add(txs ...*escrow.Transaction) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, tx := range txs {
		a.txs[tx.ID] = tx
	}
}

func (a *listingAPI) failNext(listing string, statuses ...int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.fail[listing] = append(a.fail[listing], statuses...)
}

func (a *listingAPI) count(what string) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.requests[what]
}

func (a *listingAPI) client(t *testing.T) *escrow.Client { return clientOver(t, a) }

// ongoing is a transaction created and not yet agreed; ended is one cancelled.
func ongoing(id int64) *escrow.Transaction {
	return sale(id, item(id*10, escrow.ItemGeneralMerchandise, false))
}

func ended(id int64) *escrow.Transaction {
	tx := ongoing(id)
	tx.IsCancelled = true
	return tx
}

// reconciled runs one reconciliation and waits for what it queued.
func reconciled(t *testing.T, h *webhook.Handler) {
	t.Helper()
	if err := h.Reconcile(t.Context()); err != nil {
		t.Fatalf("Reconcile: %v", err)
	}
	flushed(t, h)
}

// TestFirstReconciliationLeavesHistoryAlone: the first reconciliation over an empty store
// hands over the ongoing transactions and only notes where history ends, however the
// account is read: ended transactions are not missed events, even when nothing is ongoing
// (the mark is then the newest ended one). The next hands over what ended since, created
// after the mark, and nothing older.
func TestFirstReconciliationLeavesHistoryAlone(t *testing.T) {
	for _, partner := range []bool{true, false} {
		t.Run(fmt.Sprintf("partner=%v", partner), func(t *testing.T) {
			api := newListingAPI(partner)
			api.add(ended(1), ended(2), ended(3))
			got := &calls{}
			h := webhook.NewHandler(api.client(t), got.fn, webhook.Options{})
			defer shutdown(t, h)
			reconciled(t, h)
			if l := got.list(); len(l) != 0 {
				t.Fatalf("history handed over: %v", l)
			}
			reconciled(t, h) // nothing new: still nothing
			if l := got.list(); len(l) != 0 {
				t.Fatalf("history handed over by the second reconciliation: %v", l)
			}
			api.add(ongoing(4), ended(5))
			reconciled(t, h)
			l := got.list()
			for _, old := range []string{":1", ":2", ":3"} {
				if slices.ContainsFunc(l, func(s string) bool { return strings.HasSuffix(s, old) }) {
					t.Errorf("handed over %v: history among it", l)
				}
			}
			if !slices.Contains(l, "create:4") || !slices.Contains(l, "cancel:5") {
				t.Errorf("handed over %v, want the new ongoing transaction and the one created and ended since", l)
			}
		})
	}
}

// TestPartnerReconciliationStopsAtTheMark: a partner's newer transactions are read newest
// first down to the mark, not through the whole history: with twenty transactions and two
// new since the last look, in pages of two, the newer walk reads the first page and the
// one holding the mark, not the nine after it.
func TestPartnerReconciliationStopsAtTheMark(t *testing.T) {
	api := newListingAPI(true)
	for id := range int64(20) {
		api.add(ended(id + 1))
	}
	h := webhook.NewHandler(api.client(t), (&calls{}).fn, webhook.Options{})
	defer shutdown(t, h)
	reconciled(t, h)
	api.add(ended(21), ended(22))
	before := api.count("partner page")
	reconciled(t, h)
	if n := api.count("partner page") - before; n != 1 {
		t.Errorf("%d further pages read to find two new transactions, want 1", n)
	}
}

// TestAccountKindIsLearntOnce: an account the partner listing refuses (403) is read from
// the paged list from then on, without asking the partner listing again; a partner whose
// listing fails in any other way, or refuses once it is known to be a partner, gets the
// error and stays a partner.
func TestAccountKindIsLearntOnce(t *testing.T) {
	t.Run("not a partner", func(t *testing.T) {
		api := newListingAPI(false)
		h := webhook.NewHandler(api.client(t), (&calls{}).fn, webhook.Options{})
		defer shutdown(t, h)
		reconciled(t, h)
		reconciled(t, h)
		// The paged list three times: the newest id before the first walk, then each walk.
		if p, l := api.count("partner"), api.count("list"); p != 1 || l != 3 {
			t.Errorf("partner listing asked %d times, paged list %d times; want 1 and 3", p, l)
		}
	})
	t.Run("not a partner, restarted", func(t *testing.T) {
		// A store with a mark: the walk, not the first look at the newest id, learns the
		// kind, and moves the mark to the newest transaction it read.
		api := newListingAPI(false)
		api.add(ended(1), ended(2), ongoing(3))
		reconciledFromMark(t, api, 1, 2, 3)
		if p, l := api.count("partner"), api.count("list"); p != 1 || l != 2 {
			t.Errorf("partner listing asked %d times, paged list %d times; want 1 and 2", p, l)
		}
	})
	for _, tc := range []struct {
		name  string
		known bool // the first reconciliation succeeds, so the account is known as a partner
		fail  int
	}{
		{"partner, first listing fails", false, http.StatusInternalServerError},
		{"known partner refused once", true, http.StatusForbidden},
	} {
		t.Run(tc.name, func(t *testing.T) {
			api := newListingAPI(true)
			api.add(ongoing(1))
			h := webhook.NewHandler(api.client(t), (&calls{}).fn, webhook.Options{})
			defer shutdown(t, h)
			if tc.known {
				reconciled(t, h)
			}
			api.failNext("partner", tc.fail)
			staysPartner(t, h, api, fmt.Sprintf("a partner listing answered %d", tc.fail))
		})
	}
}

// TestPartnerMarkMovesToTheNewestTransaction: a partner's reconciliation moves the mark
// to the newest transaction it read, ended or not: the next walk stops there, instead of
// reading again what ended since the mark.
func TestPartnerMarkMovesToTheNewestTransaction(t *testing.T) {
	api := newListingAPI(true)
	api.add(ended(1), ongoing(2), ended(3))
	reconciledFromMark(t, api, 1, 1, 3)
}

// reconciledFromMark reconciles n times a handler over a store whose mark is at mark (a
// restart), and checks that the mark is then at want.
func reconciledFromMark(t *testing.T, api *listingAPI, mark int64, n int, want int64) {
	t.Helper()
	store := new(webhook.MemoryStore)
	if err := store.AdvanceMark(t.Context(), mark); err != nil {
		t.Fatal(err)
	}
	h := webhook.NewHandler(api.client(t), (&calls{}).fn, webhook.Options{Store: store})
	defer shutdown(t, h)
	for range n {
		reconciled(t, h)
	}
	if got, _, err := store.Mark(t.Context()); err != nil || got != want {
		t.Errorf("mark %d, %v; want %d, the newest transaction", got, err, want)
	}
}

// staysPartner checks that a reconciliation whose partner listing fails returns an error,
// and that the next ones still read the account as a partner, never from the paged list.
func staysPartner(t *testing.T, h *webhook.Handler, api *listingAPI, what string) {
	t.Helper()
	if err := h.Reconcile(t.Context()); err == nil {
		t.Fatalf("%s: no error", what)
	}
	reconciled(t, h)
	if n := api.count("list"); n != 0 {
		t.Errorf("the paged list read %d times: the partner was taken for another account", n)
	}
}

// TestKnownPartnerRefusedBeforeItsFirstMarkStaysAPartner: a partner whose first
// reconciliation failed after the partner listing answered (the mark not recorded) and
// whose listing then refuses once gets the error at the next try, and is still read as a
// partner afterwards, never from the paged list.
func TestKnownPartnerRefusedBeforeItsFirstMarkStaysAPartner(t *testing.T) {
	api := newListingAPI(true)
	api.add(ongoing(1))
	store := &markFailingStore{}
	h := webhook.NewHandler(api.client(t), (&calls{}).fn, webhook.Options{Store: store})
	defer shutdown(t, h)
	store.set("AdvanceMark", true)
	if err := h.Reconcile(t.Context()); !errors.Is(err, errStoreDown) {
		t.Fatalf("Reconcile with the mark's record failing: %v", err)
	}
	store.set("AdvanceMark", false)
	api.failNext("partner", http.StatusForbidden)
	staysPartner(t, h, api, "a known partner's refused listing")
}

// TestRestartedPartnerWhoseListingFailsStaysAPartner: a process restarted over a store
// with a mark does not know yet that its account is a partner; a partner listing that
// fails then (500, not a refusal) is an error, and the account is still read as a
// partner afterwards, never from the paged list.
func TestRestartedPartnerWhoseListingFailsStaysAPartner(t *testing.T) {
	api := newListingAPI(true)
	api.add(ongoing(1))
	store := new(webhook.MemoryStore)
	if err := store.AdvanceMark(t.Context(), 1); err != nil {
		t.Fatal(err)
	}
	h := webhook.NewHandler(api.client(t), (&calls{}).fn, webhook.Options{Store: store})
	defer shutdown(t, h)
	api.failNext("partner", http.StatusInternalServerError)
	staysPartner(t, h, api, "a failed partner listing")
}

// markFailingStore is a memory store whose reconciler methods fail while told to.
type markFailingStore struct {
	webhook.MemoryStore
	mu   sync.Mutex
	fail map[string]bool // "Mark", "Track", "Unfinished", "AdvanceMark"
}

var errStoreDown = errors.New("store down")

func (s *markFailingStore) failing(method string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.fail[method]
}

func (s *markFailingStore) set(method string, on bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fail == nil {
		s.fail = map[string]bool{}
	}
	s.fail[method] = on
}

func (s *markFailingStore) Mark(ctx context.Context) (int64, bool, error) {
	if s.failing("Mark") {
		return 0, false, errStoreDown
	}
	return s.MemoryStore.Mark(ctx)
}

func (s *markFailingStore) Track(ctx context.Context, ids []int64) error {
	if s.failing("Track") {
		return errStoreDown
	}
	return s.MemoryStore.Track(ctx, ids)
}

func (s *markFailingStore) Unfinished(ctx context.Context) ([]int64, error) {
	if s.failing("Unfinished") {
		return nil, errStoreDown
	}
	return s.MemoryStore.Unfinished(ctx)
}

func (s *markFailingStore) AdvanceMark(ctx context.Context, id int64) error {
	if s.failing("AdvanceMark") {
		return errStoreDown
	}
	return s.MemoryStore.AdvanceMark(ctx, id)
}

// TestFailedReconciliationMovesNoMark: a reconciliation whose store or listing fails
// returns the error, and moves the mark past nothing it did not hand over: the transactions
// created and ended meanwhile are found by the next one.
func TestFailedReconciliationMovesNoMark(t *testing.T) {
	for _, failing := range []string{"Mark", "Track", "Unfinished", "AdvanceMark", "listing"} {
		t.Run(failing, func(t *testing.T) {
			api := newListingAPI(false)
			api.add(ended(1))
			store := &markFailingStore{}
			got := &calls{}
			h := webhook.NewHandler(api.client(t), got.fn, webhook.Options{Store: store})
			defer shutdown(t, h)
			reconciled(t, h)
			api.add(ended(2))
			if failing == "listing" {
				api.failNext("list", http.StatusInternalServerError)
			} else {
				store.set(failing, true)
			}
			err := h.Reconcile(t.Context())
			if err == nil || (failing != "listing" && !errors.Is(err, errStoreDown)) {
				t.Fatalf("Reconcile with %s failing: %v", failing, err)
			}
			flushed(t, h)
			store.set(failing, false)
			reconciled(t, h)
			if l := got.list(); !slices.Contains(l, "cancel:2") {
				t.Errorf("handed over %v: the transaction ended while the reconciliation failed was lost", l)
			}
		})
	}
}

// newNotHistory checks that what was handed over holds transaction 3 (made after the
// mark, and ended) and nothing of transactions 1 and 2 (history).
func newNotHistory(t *testing.T, handed []string) {
	t.Helper()
	if !slices.Contains(handed, "cancel:3") {
		t.Errorf("handed over %v: the transaction made after the mark was lost", handed)
	}
	if slices.ContainsFunc(handed, func(s string) bool { return strings.HasSuffix(s, ":1") || strings.HasSuffix(s, ":2") }) {
		t.Errorf("handed over %v: history among it", handed)
	}
}

// TestMarkNotedBeforeTheFirstWalk: the first reconciliation notes the newest transaction
// before it walks the account, so that a process that dies during that walk leaves a
// mark: the next process hands over a transaction created and ended while none ran, and
// still leaves older history alone.
func TestMarkNotedBeforeTheFirstWalk(t *testing.T) {
	for _, partner := range []bool{true, false} {
		t.Run(fmt.Sprintf("partner=%v", partner), func(t *testing.T) {
			api := newListingAPI(partner)
			api.add(ended(1), ended(2))
			store := new(webhook.MemoryStore)
			first := webhook.NewHandler(api.client(t), (&calls{}).fn, webhook.Options{Store: store})
			listing := "list"
			if partner {
				listing = "partner"
			}
			api.failNext(listing, 0, http.StatusInternalServerError) // the newest id read, the walk cut short
			if err := first.Reconcile(t.Context()); err == nil {
				t.Fatal("Reconcile succeeded with its walk failing")
			}
			shutdown(t, first)
			if mark, ok, err := store.Mark(t.Context()); err != nil || !ok || mark != 2 {
				t.Fatalf("after a first walk cut short: Mark = %d, %v, %v; want 2, noted before the walk", mark, ok, err)
			}
			api.add(ended(3)) // created and ended while no receiver ran
			got := &calls{}
			second := webhook.NewHandler(api.client(t), got.fn, webhook.Options{Store: store})
			defer shutdown(t, second)
			reconciled(t, second)
			newNotHistory(t, got.list())
		})
	}
}

// TestFirstReconciliationHandsOverWhatCameAfterItsMark: a transaction created, and ended,
// after the first reconciliation noted its mark but before its walk read the account is
// no history: it is handed over.
func TestFirstReconciliationHandsOverWhatCameAfterItsMark(t *testing.T) {
	for _, partner := range []bool{true, false} {
		t.Run(fmt.Sprintf("partner=%v", partner), func(t *testing.T) {
			api := newListingAPI(partner)
			api.add(ended(1), ended(2))
			api.afterFirst = func() { api.add(ended(3)) }
			got := &calls{}
			h := webhook.NewHandler(api.client(t), got.fn, webhook.Options{})
			defer shutdown(t, h)
			reconciled(t, h)
			newNotHistory(t, got.list())
		})
	}
}

// TestTrackedTransactionsRechecked: every transaction the store tracks as unfinished and
// the listing no longer shows is read again; one the listing shows is handed over from it,
// not read again.
func TestTrackedTransactionsRechecked(t *testing.T) {
	api := newListingAPI(true)
	api.add(ended(1), ended(2), ended(3))
	store := new(webhook.MemoryStore)
	h := webhook.NewHandler(api.client(t), (&calls{}).fn, webhook.Options{Store: store})
	defer shutdown(t, h)
	reconciled(t, h) // the mark at 3; nothing ongoing
	api.add(ongoing(4))
	if err := store.Track(t.Context(), []int64{1, 2, 3, 4}); err != nil {
		t.Fatal(err)
	}
	reconciled(t, h)
	if n := api.count("read"); n != 3 {
		t.Errorf("%d transactions read, want the three tracked ones the listing no longer shows", n)
	}
	if ids, err := store.Unfinished(t.Context()); err != nil || !slices.Equal(ids, []int64{4}) {
		t.Errorf("Unfinished = %v, %v; want [4]", ids, err)
	}
}

// TestListedTransactionOnceNotFoundIsHandedOver: a delivery that named an id before the
// transaction existed was answered 404, and such an id is not fetched again for a while;
// the transaction, made since, is handed over from the first listing that shows it, not
// minutes later: a forger who guesses the next id must not hold a real sale back.
func TestListedTransactionOnceNotFoundIsHandedOver(t *testing.T) {
	api := newListingAPI(true)
	api.add(ended(1))
	got := &calls{}
	h := webhook.NewHandler(api.client(t), got.fn, webhook.Options{})
	defer shutdown(t, h)
	reconciled(t, h) // the mark at 1
	deliver(h, "create", 2)
	flushed(t, h) // answered 404
	api.add(ongoing(2))
	reconciled(t, h)
	if list := got.list(); !slices.Contains(list, "create:2") {
		t.Errorf("handed over %v; want transaction 2's creation", list)
	}
}

// TestDeliveryAfterTheListingIsFetched: a delivery that reaches a transaction queued
// with the state a reconciliation listed is confirmed by a fetch, not from that state,
// which may predate its event: the event would be dropped as unconfirmed.
func TestDeliveryAfterTheListingIsFetched(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		api := newListingAPI(true)
		api.add(ongoing(1))
		got := &calls{block: make(chan struct{})}
		h := webhook.NewHandler(api.client(t), got.fn, webhook.Options{Workers: 1})
		defer shutdown(t, h)
		if err := h.Reconcile(t.Context()); err != nil { // hands transaction 1 over from the listing
			t.Fatal(err)
		}
		synctest.Wait() // the one worker holds the first callback
		api.add(ongoing(2))
		if err := h.Reconcile(t.Context()); err != nil { // 2 queued with its listed state
			t.Fatal(err)
		}
		shipped := ongoing(2)
		shipped.Items[0].Status.Shipped = true
		api.add(shipped)
		deliver(h, "ship", 2)
		close(got.block)
		flushed(t, h)
		if list := got.list(); !slices.Contains(list, "ship:2") {
			t.Errorf("handed over %v; want transaction 2's shipping", list)
		}
	})
}

// TestTrackedTransactionOnceNotFoundIsRechecked: the same for a transaction another
// replica listed, tracked and moved the mark past, which ended since: this replica's
// reconciliation reads it again and hands over its events, although a delivery of its id
// was answered 404 here before it existed.
func TestTrackedTransactionOnceNotFoundIsRechecked(t *testing.T) {
	api := newListingAPI(true)
	api.add(ended(1))
	store := new(webhook.MemoryStore)
	got := &calls{}
	h := webhook.NewHandler(api.client(t), got.fn, webhook.Options{Store: store})
	defer shutdown(t, h)
	reconciled(t, h) // the mark at 1
	deliver(h, "create", 2)
	flushed(t, h) // answered 404
	api.add(ended(2))
	// Another replica listed it while it was ongoing.
	if err := store.Track(t.Context(), []int64{2}); err != nil {
		t.Fatal(err)
	}
	if err := store.AdvanceMark(t.Context(), 2); err != nil {
		t.Fatal(err)
	}
	reconciled(t, h)
	if list := got.list(); !slices.Contains(list, "cancel:2") {
		t.Errorf("handed over %v; want transaction 2's cancellation", list)
	}
}

// TestReconciliationFailuresLogged: RunReconciler logs a failed reconciliation, at once
// and at each tick, and nothing for one that succeeds.
func TestReconciliationFailuresLogged(t *testing.T) {
	const failed = "reconciliation failed"
	for _, failingAtFirst := range []bool{false, true} {
		t.Run(fmt.Sprintf("failing at first=%v", failingAtFirst), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				api := newListingAPI(false)
				store := &markFailingStore{}
				store.set("Mark", failingAtFirst)
				var log logtest.Lines
				h := webhook.NewHandler(api.client(t), (&calls{}).fn, webhook.Options{Store: store, Logger: slog.New(slog.NewTextHandler(&log, nil))})
				defer shutdown(t, h)
				ctx, cancel := context.WithCancel(t.Context())
				done := make(chan error, 1)
				go func() { done <- h.RunReconciler(ctx, time.Minute) }()
				want := 0
				check := func(when string) {
					t.Helper()
					synctest.Wait()
					if n := log.Count(failed); n != want {
						t.Errorf("%s: %d failures logged, want %d:\n%s", when, n, want, log.String())
					}
				}
				if failingAtFirst {
					want++
				}
				check("at the start")
				store.set("Mark", !failingAtFirst)
				time.Sleep(time.Minute)
				if !failingAtFirst {
					want++
				}
				check("after a tick")
				cancel()
				if err := <-done; !errors.Is(err, context.Canceled) {
					t.Errorf("RunReconciler = %v after its context ended", err)
				}
			})
		})
	}
}

// TestReconcilerStoppedAtStartLogsNoFailure: a RunReconciler whose context has ended by
// its first reconciliation returns the context's error and logs no failure: stopping is
// not failing.
func TestReconcilerStoppedAtStartLogsNoFailure(t *testing.T) {
	api := newListingAPI(false)
	var log logtest.Lines
	h := webhook.NewHandler(api.client(t), (&calls{}).fn, webhook.Options{Logger: slog.New(slog.NewTextHandler(&log, nil))})
	defer shutdown(t, h)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := h.RunReconciler(ctx, time.Minute); !errors.Is(err, context.Canceled) {
		t.Errorf("RunReconciler with its context ended = %v", err)
	}
	if n := log.Count("reconciliation failed"); n != 0 {
		t.Errorf("%d failures logged for a reconciler stopped at its start:\n%s", n, log.String())
	}
}

// gatedStore is a memory store whose Unfinished waits until gate is closed.
type gatedStore struct {
	webhook.MemoryStore
	gate chan struct{}
}

func (s *gatedStore) Unfinished(ctx context.Context) ([]int64, error) {
	select {
	case <-s.gate:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return s.MemoryStore.Unfinished(ctx)
}

// TestListedTransactionNotReadAgain: a tracked transaction that the listing shows is
// handed over from the listing and not queued again as a recheck, even when its worker has
// already taken the listed state (where a second queueing would not coalesce with it, and
// would cost a read).
func TestListedTransactionNotReadAgain(t *testing.T) {
	api := newListingAPI(false)
	api.add(ongoing(4))
	store := &gatedStore{gate: make(chan struct{})}
	if err := store.Track(t.Context(), []int64{4}); err != nil {
		t.Fatal(err)
	}
	release := make(chan struct{})
	var once sync.Once
	h := webhook.NewHandler(api.client(t), func(ctx context.Context, _ webhook.ConfirmedEvent) error {
		once.Do(func() { close(store.gate) }) // the worker has the listed state
		select {
		case <-release:
		case <-ctx.Done():
		}
		return nil
	}, webhook.Options{Store: store})
	defer shutdown(t, h)
	err := h.Reconcile(t.Context())
	close(release)
	if err != nil {
		t.Fatal(err)
	}
	flushed(t, h)
	if n := api.count("read"); n != 0 {
		t.Errorf("the listed transaction read %d times after the listing", n)
	}
}

// pruneCounting is a memory store that counts its prunings.
type pruneCounting struct {
	webhook.MemoryStore
	mu     sync.Mutex
	prunes []time.Time // finishedBefore of each
}

func (s *pruneCounting) Prune(ctx context.Context, finishedBefore time.Time) (int64, error) {
	s.mu.Lock()
	s.prunes = append(s.prunes, finishedBefore)
	s.mu.Unlock()
	return s.MemoryStore.Prune(ctx, finishedBefore)
}

// TestRunReconcilerPrunesOneReplicaAtATime: two replicas reconciling every 10 s over one
// store prune it in turn, once per tenth of the retention between them, deleting what
// finished more than Retention ago: a transaction finished at the start is pruned once
// the retention has passed. A negative retention prunes nothing.
func TestRunReconcilerPrunesOneReplicaAtATime(t *testing.T) {
	for _, tc := range []struct {
		retention time.Duration
		prunes    int
	}{{10 * time.Minute, 12}, {-1, 0}} {
		t.Run(fmt.Sprint(tc.retention), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				api := newListingAPI(false)
				store := new(pruneCounting)
				if err := store.Finish(t.Context(), 1); err != nil {
					t.Fatal(err)
				}
				ctx, cancel := context.WithCancel(t.Context())
				var wg sync.WaitGroup
				var hs []*webhook.Handler
				for _, name := range []string{"a", "b"} {
					h := webhook.NewHandler(api.client(t), (&calls{}).fn, webhook.Options{Store: store, Replica: name, Retention: tc.retention})
					hs = append(hs, h)
					wg.Go(func() { h.RunReconciler(ctx, 10*time.Second) })
				}
				start := time.Now()
				time.Sleep(12*time.Minute - time.Second)
				cancel()
				wg.Wait()
				for _, h := range hs {
					shutdown(t, h)
				}
				store.mu.Lock()
				defer store.mu.Unlock()
				if len(store.prunes) != tc.prunes {
					t.Errorf("%d prunes in 12 minutes, want %d", len(store.prunes), tc.prunes)
				}
				for i, before := range store.prunes {
					if want := start.Add(time.Duration(i)*time.Minute - tc.retention); before.Sub(want).Abs() > 10*time.Second {
						t.Errorf("prune %d deleted what finished before %v, want about %v", i, before.Sub(start), want.Sub(start))
					}
				}
				turn, err := store.Acquire(t.Context(), webhook.Lease{TransactionID: 1, Holder: "c", Expires: time.Now().Add(time.Minute)}, nil, time.Now())
				if err != nil || turn.Pruned != (tc.retention > 0) {
					t.Errorf("the transaction finished 12 minutes ago: %+v, %v; pruned should be %v", turn, err, tc.retention > 0)
				}
			})
		})
	}
}

// TestRunReconcilerPrunesHourlyWhatFinishedThirtyDaysAgo: without Options.Retention the
// store keeps 30 days of finished transactions and is pruned once an hour (a tenth of the
// retention is three days, and an hour is the most between prunes).
func TestRunReconcilerPrunesHourlyWhatFinishedThirtyDaysAgo(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := new(pruneCounting)
		h := webhook.NewHandler(newListingAPI(false).client(t), (&calls{}).fn, webhook.Options{Store: store, Replica: "a"})
		ctx, cancel := context.WithCancel(t.Context())
		var wg sync.WaitGroup
		wg.Go(func() { h.RunReconciler(ctx, 10*time.Minute) })
		start := time.Now()
		time.Sleep(3*time.Hour - time.Second)
		cancel()
		wg.Wait()
		shutdown(t, h)
		store.mu.Lock()
		defer store.mu.Unlock()
		if len(store.prunes) != 3 {
			t.Errorf("%d prunes in 3 hours, want 3 (one an hour)", len(store.prunes))
		}
		for i, before := range store.prunes {
			if want := start.Add(time.Duration(i)*time.Hour - 30*24*time.Hour); !before.Equal(want) {
				t.Errorf("prune %d deleted what finished before %v, want %v", i, before.Sub(start), want.Sub(start))
			}
		}
	})
}

// pruneFailingStore is a memory store whose prune lease (transaction 0) or Prune fails
// while the named method is set.
type pruneFailingStore struct {
	pruneCounting
	failAcquire, failPrune bool
}

func (s *pruneFailingStore) Acquire(ctx context.Context, l webhook.Lease, names []escrow.EventName, now time.Time) (webhook.Turn, error) {
	if s.failAcquire && l.TransactionID == 0 {
		return webhook.Turn{}, errStoreDown
	}
	return s.pruneCounting.Acquire(ctx, l, names, now)
}

func (s *pruneFailingStore) Prune(ctx context.Context, finishedBefore time.Time) (int64, error) {
	if s.failPrune {
		return 0, errStoreDown
	}
	return s.pruneCounting.Prune(ctx, finishedBefore)
}

// TestPruningLoggedWithWhatItDid: an operator whose store stops shrinking finds why in
// the log. A prune whose lease or deletion fails is logged as an error with the store's
// error; one that deletes says how many transactions it pruned and the cutoff.
func TestPruningLoggedWithWhatItDid(t *testing.T) {
	for _, tc := range []struct {
		name                   string
		failAcquire, failPrune bool
		want                   string
	}{
		{"lease fails", true, false, `level=ERROR msg="escrow webhook: pruning failed" error="store down"`},
		{"prune fails", false, true, `level=ERROR msg="escrow webhook: pruning failed" error="store down"`},
		{"prunes", false, false, `level=INFO msg="escrow webhook: pruned the store" transactions=2 finished_before=`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				store := &pruneFailingStore{failAcquire: tc.failAcquire, failPrune: tc.failPrune}
				for _, id := range []int64{1, 2} {
					if err := store.Finish(t.Context(), id); err != nil {
						t.Fatal(err)
					}
				}
				time.Sleep(2 * time.Hour) // both finished before the retention's cutoff
				var log logtest.Lines
				h := webhook.NewHandler(newListingAPI(false).client(t), (&calls{}).fn, webhook.Options{
					Store: store, Replica: "a", Retention: time.Hour, Logger: slog.New(slog.NewTextHandler(&log, nil))})
				defer shutdown(t, h)
				ctx, cancel := context.WithCancel(t.Context())
				done := make(chan error, 1)
				go func() { done <- h.RunReconciler(ctx, time.Minute) }()
				synctest.Wait()
				cancel()
				<-done
				if n := log.Count(tc.want); n != 1 {
					t.Errorf("%d lines with %s, want 1:\n%s", n, tc.want, log.String())
				}
				if strings.Contains(log.String(), "pruned the store") != (tc.name == "prunes") {
					t.Errorf("a prune reported done: %v, want %v:\n%s", !(tc.name == "prunes"), tc.name == "prunes", log.String())
				}
			})
		})
	}
}

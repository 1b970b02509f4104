package webhook_test

// Tests of the Handler: how it queues, retries, paces and hands over events. The
// account's API is faked in process (fakeAPI), so each test sets exactly the transaction
// the handler reads back, and the retry tests run in a synctest bubble on its fake clock.

import (
	"bytes"
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
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	escrow "github.com/escrowkit/escrow-go"
	"github.com/escrowkit/escrow-go/escrowtest"
	"github.com/escrowkit/escrow-go/internal/logtest"
	"github.com/escrowkit/escrow-go/webhook"
)

// fakeAPI answers GET /transaction/{id} from a table, in process (no network, so that a
// synctest bubble sees every goroutine block durably), and counts the reads.
type fakeAPI struct {
	mu     sync.Mutex
	txs    map[int64]*escrow.Transaction
	status map[int64]int // an error status to answer instead
	reads  map[int64]int
	readAt map[int64][]time.Time
	lists  int // pages of the paged list served
	// listStatus, if set, answers the paged list with this error status: the account's
	// list cannot confirm never-seen ids, so each is fetched.
	listStatus int
	header     http.Header // rate-limit headers of every answer about a transaction
}

func newFakeAPI() *fakeAPI {
	return &fakeAPI{txs: map[int64]*escrow.Transaction{}, status: map[int64]int{}, reads: map[int64]int{}, readAt: map[int64][]time.Time{}}
}

func (f *fakeAPI) RoundTrip(r *http.Request) (*http.Response, error) {
	rec := httptest.NewRecorder()
	f.serve(rec, r)
	return rec.Result(), nil
}

func (f *fakeAPI) serve(w http.ResponseWriter, r *http.Request) {
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	if r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/transaction") { // the paged list: one page
		f.mu.Lock()
		defer f.mu.Unlock()
		f.lists++
		if f.listStatus != 0 {
			w.WriteHeader(f.listStatus)
			return
		}
		writePage(w, r, f.txs)
		return
	}
	if strings.HasSuffix(r.URL.Path, "/partner/transactions") { // not a partner
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusForbidden)
		fmt.Fprint(w, `{"error": "forbidden", "message": "not a partner"}`)
		return
	}
	id, err := strconv.ParseInt(parts[len(parts)-1], 10, 64)
	if r.Method != http.MethodGet || len(parts) < 2 || parts[len(parts)-2] != "transaction" || err != nil {
		http.Error(w, `{"error": "not_found"}`, http.StatusNotFound)
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reads[id]++
	f.readAt[id] = append(f.readAt[id], time.Now())
	for k, v := range f.header {
		w.Header()[k] = v
	}
	w.Header().Set("Content-Type", "application/json")
	if s := f.status[id]; s != 0 {
		w.WriteHeader(s)
		fmt.Fprintf(w, `{"error": %q, "message": "as the test says"}`, http.StatusText(s))
		return
	}
	tx := f.txs[id]
	if tx == nil {
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprint(w, `{"error": "not_found", "message": "no such transaction"}`)
		return
	}
	json.NewEncoder(w).Encode(tx)
}

// setStatus makes the API answer reads of transaction id with the error status code
// (0: as usual).
func (f *fakeAPI) setStatus(id int64, code int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.status[id] = code
}

func (f *fakeAPI) readsOf(id int64) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.reads[id]
}

// gapsOf returns the time between consecutive reads of a transaction.
func (f *fakeAPI) gapsOf(id int64) []time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	var gaps []time.Duration
	for i := 1; i < len(f.readAt[id]); i++ {
		gaps = append(gaps, f.readAt[id][i].Sub(f.readAt[id][i-1]))
	}
	return gaps
}

func (f *fakeAPI) client(t *testing.T) *escrow.Client { return clientOver(t, f) }

// clientOver is a client of the market's account whose requests rt answers, without
// retries: each answer of a fake API is seen as it is.
func clientOver(t *testing.T, rt http.RoundTripper) *escrow.Client {
	t.Helper()
	c, err := escrow.NewClient("market@example.com", "key", escrow.WithBaseURL("https://api.example.com/2017-09-01/"),
		escrow.WithHTTPClient(&http.Client{Transport: rt}), escrow.WithMaxRetries(0))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// writePage answers the paged list of transactions from txs, as the API pages and sorts it
// (per_page 10 to 100, page, sort_direction; by id).
func writePage(w http.ResponseWriter, r *http.Request, txs map[int64]*escrow.Transaction) {
	n, _ := strconv.Atoi(r.URL.Query().Get("per_page"))
	p, _ := strconv.Atoi(r.URL.Query().Get("page"))
	n, p = min(max(n, 10), 100), max(p, 1)
	ids := slices.Sorted(maps.Keys(txs))
	if r.URL.Query().Get("sort_direction") != "asc" {
		slices.Reverse(ids)
	}
	page := escrow.TransactionList{Page: p, PerPage: n, PageCount: (len(ids) + n - 1) / n}
	for _, id := range ids[min((p-1)*n, len(ids)):min(p*n, len(ids))] {
		page.Transactions = append(page.Transactions, *txs[id])
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(page)
}

// sale is a transaction as the API shows it: agreed by both parties, with goods and any
// further items given.
func sale(id int64, items ...escrow.Item) *escrow.Transaction {
	return &escrow.Transaction{
		ID: id, Currency: escrow.USD, Description: "A bicycle",
		Parties: []escrow.Party{{Role: escrow.RoleBuyer, Customer: "b@example.com", Agreed: true}, {Role: escrow.RoleSeller, Customer: "s@example.com", Agreed: true}},
		Items:   items,
	}
}

// created is a transaction just created: nobody has agreed, nothing is paid; its state
// shows the create fact alone.
func created(id int64) *escrow.Transaction {
	tx := sale(id, escrow.Item{ID: id*10 + 1, Type: escrow.ItemGeneralMerchandise, Schedule: []escrow.Schedule{{Amount: escrow.MustAmount("10.00")}}})
	for i := range tx.Parties {
		tx.Parties[i].Agreed = false
	}
	return tx
}

// agreed is created(id) once both parties agreed: nothing is paid yet.
func agreed(id int64) *escrow.Transaction {
	tx := created(id)
	for i := range tx.Parties {
		tx.Parties[i].Agreed = true
	}
	return tx
}

// set replaces a transaction's state, as the API's next answer shows it.
func (f *fakeAPI) set(tx *escrow.Transaction) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.txs[tx.ID] = tx
}

// item is an item of a type whose one schedule entry is secured and perhaps paid out.
func item(id int64, typ escrow.ItemType, paid bool) escrow.Item {
	return escrow.Item{ID: id, Type: typ, Schedule: []escrow.Schedule{{
		Amount: escrow.MustAmount("10.00"), Status: escrow.ScheduleStatus{Secured: true, DisbursedToBeneficiary: paid},
	}}}
}

// deliver hands the handler one delivery and returns its status.
func deliver(h http.Handler, event string, id int64) int {
	body := fmt.Sprintf(`{"event": %q, "event_type": "transaction", "transaction_id": %d}`, event, id)
	req := httptest.NewRequest(http.MethodPost, "/escrow", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Code
}

// calls is a callback that records what it is handed and fails while told to.
type calls struct {
	mu        sync.Mutex
	got       []string // "event:transaction"
	at        []time.Time
	from      []webhook.Source
	fail      error
	failFirst int           // the first failFirst calls fail, as a database that is down
	block     chan struct{} // when set, each call waits for it to close
}

func (c *calls) fn(ctx context.Context, ev webhook.ConfirmedEvent) error {
	if c.block != nil {
		select {
		case <-c.block:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.got = append(c.got, fmt.Sprintf("%s:%d", ev.Name, ev.TransactionID))
	c.at = append(c.at, time.Now())
	c.from = append(c.from, ev.Source)
	if len(c.got) <= c.failFirst {
		return errors.New("the shop's database is down")
	}
	return c.fail
}

// count counts the hand-overs from src.
func (c *calls) count(src webhook.Source) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, f := range c.from {
		if f == src {
			n++
		}
	}
	return n
}

func (c *calls) list() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.got)
}

func shutdown(t *testing.T, h *webhook.Handler) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := h.Shutdown(ctx); err != nil {
		t.Errorf("Shutdown: %v", err)
	}
}

func flushed(t *testing.T, h *webhook.Handler) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := h.Flush(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestUnfinishedTransactionsStayForReconciliation: the store marks a transaction finished
// only once it is complete or cancelled; until then the reconciler must find it again.
func TestUnfinishedTransactionsStayForReconciliation(t *testing.T) {
	api := newFakeAPI()
	open, cancelled, complete := sale(1, item(11, escrow.ItemGeneralMerchandise, false)), sale(2, item(21, escrow.ItemGeneralMerchandise, false)), sale(3, item(31, escrow.ItemGeneralMerchandise, true))
	cancelled.IsCancelled = true
	complete.CloseDate, _ = escrow.ParseTimestamp("2024-05-04T12:00:00Z")
	for _, tx := range []*escrow.Transaction{open, cancelled, complete} {
		api.txs[tx.ID] = tx
	}
	store := new(webhook.MemoryStore)
	got := &calls{}
	h := webhook.NewHandler(api.client(t), got.fn, webhook.Options{Store: store})
	defer shutdown(t, h)
	for _, d := range []struct {
		event string
		id    int64
	}{{"agree", 1}, {"cancel", 2}, {"complete", 3}} {
		if code := deliver(h, d.event, d.id); code != http.StatusOK {
			t.Fatalf("%s: %d", d.event, code)
		}
	}
	flushed(t, h)
	ids, err := store.Unfinished(t.Context())
	if err != nil || !slices.Equal(ids, []int64{1}) {
		t.Errorf("Unfinished = %v, %v; want only the open transaction 1 (handed over %v)", ids, err, got.list())
	}
}

// TestQueueBoundAnswers503: deliveries about more known transactions than MaxQueued
// waiting are refused with 503, so that the sender retries later; one about a transaction
// already waiting is taken (coalesced); all are taken again once the queue drains. The
// default bound is 10,000 transactions. (Never-seen ids have a bound of their own,
// MaxUnseen, and are never answered 503: TestNeverSeenOverflowDropsTheOldest.)
func TestQueueBoundAnswers503(t *testing.T) {
	for _, tc := range []struct {
		max, accepted int
	}{{1, 1}, {2, 2}, {0, 10_000}} {
		// In a bubble: ten thousand transactions take a while under -race, and the waits
		// of Flush and Shutdown must not depend on the machine's speed.
		t.Run(strconv.Itoa(tc.max), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				api := newFakeAPI()
				for id := range int64(tc.accepted + 1) {
					api.txs[id+1] = created(id + 1)
				}
				got := &calls{}
				h := webhook.NewHandler(api.client(t), got.fn, webhook.Options{MaxQueued: tc.max})
				defer shutdown(t, h)
				// Their creations handed over, in rounds within MaxUnseen: now known.
				for id := range int64(tc.accepted + 1) {
					deliver(h, "create", id+1)
					if id%500 == 499 {
						flushed(t, h)
					}
				}
				flushed(t, h)
				for id := range int64(tc.accepted + 1) {
					api.set(agreed(id + 1)) // their agree is news: fetched and handed over
				}
				got.block = make(chan struct{})
				for id := range int64(tc.accepted) {
					if code := deliver(h, "agree", id+1); code != http.StatusOK {
						t.Fatalf("delivery about transaction %d of %d answered %d", id+1, tc.accepted, code)
					}
				}
				if code := deliver(h, "agree", int64(tc.accepted+1)); code != http.StatusServiceUnavailable {
					t.Errorf("delivery about one transaction more answered %d, want 503", code)
				}
				if code := deliver(h, "receive", 1); code != http.StatusOK {
					t.Errorf("delivery about a transaction already waiting answered %d, want 200", code)
				}
				close(got.block)
				flushed(t, h)
				if code := deliver(h, "agree", int64(tc.accepted+1)); code != http.StatusOK {
					t.Errorf("delivery after the queue drained answered %d", code)
				}
			})
		})
	}
}

// TestRetriesThenGivesUp: a failing callback is tried MaxAttempts times (8 by default),
// waiting between tries from RetryWait (500ms by default) doubling up to MaxRetryWait (30s by
// default), less up to half for jitter, on the state read once; then the event is left to
// reconciliation.
func TestRetriesThenGivesUp(t *testing.T) {
	for _, tc := range []struct {
		name      string
		opt       webhook.Options
		attempts  int
		base, cap time.Duration // the waits the options should mean
	}{
		{"defaults", webhook.Options{}, 8, 500 * time.Millisecond, 30 * time.Second},
		// Many tries at the default cap: with jitter, a cap a little off would show in one.
		{"default cap", webhook.Options{MaxAttempts: 200}, 200, 500 * time.Millisecond, 30 * time.Second},
		{"set", webhook.Options{MaxAttempts: 3, RetryWait: time.Second, MaxRetryWait: 90 * time.Second}, 3, time.Second, 90 * time.Second},
		{"capped", webhook.Options{MaxAttempts: 4, RetryWait: time.Minute, MaxRetryWait: 90 * time.Second}, 4, time.Minute, 90 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				api := newFakeAPI()
				api.txs[1] = sale(1, item(11, escrow.ItemGeneralMerchandise, false))
				got := &calls{fail: errors.New("the order system is down")}
				h := webhook.NewHandler(api.client(t), got.fn, tc.opt)
				deliver(h, "create", 1)
				if err := h.Flush(t.Context()); err != nil {
					t.Fatal(err)
				}
				if len(got.at) != tc.attempts {
					t.Fatalf("%d tries, want %d", len(got.at), tc.attempts)
				}
				if n := api.readsOf(1); n != 1 {
					t.Errorf("%d reads of the transaction; a retry of the callback reuses the state read", n)
				}
				for i := range tc.attempts - 1 {
					longest := min(tc.base<<min(i, 20), tc.cap)
					if wait := got.at[i+1].Sub(got.at[i]); wait < longest/2 || wait > longest {
						t.Fatalf("wait before try %d: %v, want between %v and %v", i+2, wait, longest/2, longest)
					}
				}
				if err := h.Shutdown(t.Context()); err != nil {
					t.Error(err)
				}
			})
		})
	}
}

// TestUnreadableTransactionDropped: a delivery about a transaction the account may not read
// (403) or that does not exist (404) is dropped at once, not retried: no retry can make it
// readable, and a forged delivery must not cost more than one read. A server error, by
// contrast, is worth retrying. (In a bubble: the retries' waits pass on the fake clock.)
func TestUnreadableTransactionDropped(t *testing.T) {
	for _, tc := range []struct {
		status, reads int
	}{{http.StatusForbidden, 1}, {http.StatusNotFound, 1}, {http.StatusInternalServerError, 3}} {
		t.Run(strconv.Itoa(tc.status), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				api := newFakeAPI()
				api.status[1] = tc.status
				got := &calls{}
				h := webhook.NewHandler(api.client(t), got.fn, webhook.Options{MaxAttempts: 3})
				defer shutdown(t, h)
				deliver(h, "create", 1)
				flushed(t, h)
				if n := api.readsOf(1); n != tc.reads || len(got.list()) != 0 {
					t.Errorf("%d reads and handed over %v; want %d reads and nothing", n, got.list(), tc.reads)
				}
			})
		})
	}
}

// failingStore fails Yield, the recording of a turn's hand-overs, a given number of times.
type failingStore struct {
	webhook.MemoryStore
	mu    sync.Mutex
	fails int
}

func (s *failingStore) Yield(ctx context.Context, y webhook.Yield) (webhook.Turn, error) {
	s.mu.Lock()
	if s.fails > 0 {
		s.fails--
		s.mu.Unlock()
		return webhook.Turn{}, errors.New("database unavailable")
	}
	s.mu.Unlock()
	return s.MemoryStore.Yield(ctx, y)
}

// TestFailedRecordIsRetried: when the store cannot record a hand-over (Yield), recording
// is tried again until it succeeds, without handing the event over a second time (the
// handler still holds the lease and knows what it handed over); once recorded, a
// repeated delivery is not handed over again.
func TestFailedRecordIsRetried(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		api := newFakeAPI()
		api.txs[1] = created(1)
		store := &failingStore{fails: 1}
		got := &calls{}
		h := webhook.NewHandler(api.client(t), got.fn, webhook.Options{Store: store})
		defer shutdown(t, h)
		deliver(h, "create", 1)
		flushed(t, h)
		handed, err := store.Handed(t.Context(), 1)
		if err != nil || !handed["create"] {
			t.Fatalf("after a failed record: handed %v, %v; want create recorded", handed, err)
		}
		if n := len(got.list()); n != 1 {
			t.Errorf("handed over %d times, want once", n)
		}
		deliver(h, "create", 1)
		flushed(t, h)
		if n := len(got.list()); n != 1 {
			t.Errorf("a repeated delivery was handed over again (%d in all)", n)
		}
	})
}

// undoingStore undoes a turn once, as a database whose commit fails takes a TxCallback's
// effects with the turn: its first Yield records nothing, frees the lease and answers
// ErrTurnUndone.
type undoingStore struct {
	webhook.MemoryStore
	mu     sync.Mutex
	undone bool
}

func (s *undoingStore) Yield(ctx context.Context, y webhook.Yield) (webhook.Turn, error) {
	s.mu.Lock()
	first := !s.undone
	s.undone = true
	s.mu.Unlock()
	if !first {
		return s.MemoryStore.Yield(ctx, y)
	}
	y.Facts, y.Finished, y.Release = nil, false, true
	if _, err := s.MemoryStore.Yield(ctx, y); err != nil {
		return webhook.Turn{}, err
	}
	return webhook.Turn{}, fmt.Errorf("commit refused: %w", webhook.ErrTurnUndone)
}

// TestUndoneTurnIsHandedOverAgain: a Yield that answers ErrTurnUndone undid what the
// turn's callbacks did, so the handler hands those events over again, and then records
// them; a later delivery of them is a replay.
func TestUndoneTurnIsHandedOverAgain(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		api := newFakeAPI()
		api.txs[1] = agreed(1)
		store := &undoingStore{}
		got := &calls{}
		h := webhook.NewHandler(api.client(t), got.fn, webhook.Options{Store: store})
		defer shutdown(t, h)
		deliver(h, "agree", 1)
		flushed(t, h)
		want := []string{"create:1", "agree:1", "create:1", "agree:1"}
		if l := got.list(); !slices.Equal(l, want) {
			t.Errorf("handed over %v, want %v: each event again after the undone turn", l, want)
		}
		if handed, err := store.Handed(t.Context(), 1); err != nil || !handed["create"] || !handed["agree"] {
			t.Errorf("recorded %v, %v; want create and agree", handed, err)
		}
		deliver(h, "agree", 1)
		flushed(t, h)
		if n := len(got.list()); n != 4 {
			t.Errorf("a replay after the record was handed over again (%d in all)", n)
		}
	})
}

// TestCompletionReadFromEveryItem: without a close date, completion is read from the items:
// every good accepted and every item owed paid out. A fee item listed before the goods is
// read like the others.
func TestCompletionReadFromEveryItem(t *testing.T) {
	api := newFakeAPI()
	goods := item(11, escrow.ItemGeneralMerchandise, true)
	goods.Status = escrow.ItemStatus{Shipped: true, Received: true, Accepted: true}
	api.txs[1] = sale(1, item(12, escrow.ItemShippingFee, true), goods)
	got := &calls{}
	h := webhook.NewHandler(api.client(t), got.fn, webhook.Options{})
	defer shutdown(t, h)
	deliver(h, "complete", 1)
	flushed(t, h)
	if !slices.Contains(got.list(), "complete:1") {
		t.Errorf("handed over %v; want complete", got.list())
	}
}

// TestHintNamesAtEveryRangeEdge: a hint's name is 1 to 64 of a-z, 0-9 and "_", starting
// with a letter. A name made of each range's first or last character reaches
// OnUnconfirmedHint; one with the character just outside a range never does.
func TestHintNamesAtEveryRangeEdge(t *testing.T) {
	names := map[string]bool{
		"zulu": true, "xa": true, "xz": true, "x0": true, "x9": true, "x_": true, "a": true,
		"`x": false, "{x": false, "x`": false, "x{": false, "x/": false, "x:": false, "_x": false, "0x": false,
	}
	api := newFakeAPI()
	var mu sync.Mutex
	hinted := map[string]bool{}
	got := &calls{}
	h := webhook.NewHandler(api.client(t), got.fn, webhook.Options{OnUnconfirmedHint: func(_ context.Context, h webhook.Hint) {
		mu.Lock()
		defer mu.Unlock()
		hinted[string(h.Event)] = true
	}})
	defer shutdown(t, h)
	ids := map[string]int64{} // a transaction per name: one fetch, one hint each
	for name := range names {
		ids[name] = int64(len(ids) + 1)
		api.txs[ids[name]] = sale(ids[name], item(11, escrow.ItemGeneralMerchandise, false))
	}
	for name, id := range ids {
		if code := deliver(h, name, id); code != http.StatusOK {
			t.Errorf("%q answered %d", name, code)
		}
	}
	flushed(t, h)
	mu.Lock()
	defer mu.Unlock()
	for name, want := range names {
		if hinted[name] != want {
			t.Errorf("hint %q passed on: %v, want %v", name, hinted[name], want)
		}
	}
}

// TestReplaysArePaced: while deliveries that bring nothing new keep arriving (here an item
// event the transaction does not show: it may be a new item's, so it takes a fetch), the
// transaction is fetched after Refetch (250ms by default), then four times longer each
// time up to MaxRefetch (5s by default; at least Refetch); the replays in between are
// coalesced into those fetches. A fetch that finds something new resets the pace.
func TestReplaysArePaced(t *testing.T) {
	const s, ms = time.Second, time.Millisecond
	for _, tc := range []struct {
		name string
		opt  webhook.Options
		gaps []time.Duration
	}{
		{"defaults", webhook.Options{}, []time.Duration{250 * ms, s, 4 * s, 5 * s, 5 * s}},
		{"max equal to refetch", webhook.Options{Refetch: s, MaxRefetch: s}, []time.Duration{s, s, s, s, s}},
		{"refetch above the default max", webhook.Options{Refetch: 8 * s}, []time.Duration{8 * s, 8 * s}},
		{"max below refetch", webhook.Options{Refetch: 2 * s, MaxRefetch: s}, []time.Duration{2 * s, 5 * s, 5 * s}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				api := newFakeAPI()
				api.txs[1] = created(1)
				store := storeWithCreateHandedOver(t)
				got := &calls{}
				h := webhook.NewHandler(api.client(t), got.fn, webhook.Options{Store: store, Refetch: tc.opt.Refetch, MaxRefetch: tc.opt.MaxRefetch})
				defer shutdown(t, h)
				var total time.Duration
				for _, g := range tc.gaps {
					total += g
				}
				for range total / (100 * ms) { // a replay every 100ms, until the last fetch
					deliver(h, "payment_disbursed", 1)
					time.Sleep(100 * ms)
				}
				flushed(t, h)
				if gaps := api.gapsOf(1); !slices.Equal(gaps[:min(len(gaps), len(tc.gaps))], tc.gaps) {
					t.Errorf("fetched after %v, want %v", gaps[:min(len(gaps), len(tc.gaps)+2)], tc.gaps)
				}
				if n := len(got.list()); n != 0 {
					t.Errorf("a replay was handed over %d times", n)
				}
			})
		})
	}
}

// TestClaimHoldsOtherReplicasForTheLease: while one replica's callback runs, another
// replica sharing the store does not hand the same event over, until the claim's lease
// (ClaimLease, 2 minutes by default) has ended; then it takes the event over. Replicas
// left to name themselves get distinct names, so they never take each other's claims as
// their own.
func TestClaimHoldsOtherReplicasForTheLease(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		api := newFakeAPI()
		api.txs[1] = created(1)
		store := new(webhook.MemoryStore)
		t0 := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
		entered := make(chan struct{})
		first := &calls{block: make(chan struct{})}
		a := webhook.NewHandler(api.client(t), func(ctx context.Context, ev webhook.ConfirmedEvent) error {
			close(entered)
			return first.fn(ctx, ev)
		}, webhook.Options{Store: store, Now: func() time.Time { return t0 }})
		defer shutdown(t, a)
		var mu sync.Mutex
		now := t0
		second := &calls{}
		b := webhook.NewHandler(api.client(t), second.fn, webhook.Options{Store: store, MaxAttempts: 1, Now: func() time.Time {
			mu.Lock()
			defer mu.Unlock()
			return now
		}})
		defer shutdown(t, b)
		if a.Replica() == "" || a.Replica() == b.Replica() {
			t.Errorf("replicas named %q and %q", a.Replica(), b.Replica())
		}
		deliver(a, "create", 1)
		<-entered // a's callback holds the claim
		for _, tc := range []struct {
			after time.Duration
			want  []string
		}{{0, nil}, {2*time.Minute - time.Millisecond, nil}, {2 * time.Minute, []string{"create:1"}}} {
			mu.Lock()
			now = t0.Add(tc.after)
			mu.Unlock()
			time.Sleep(time.Minute) // past the pace of b's previous fetch
			deliver(b, "create", 1)
			flushed(t, b)
			if got := second.list(); !slices.Equal(got, tc.want) {
				t.Errorf("%v into a's lease, the other replica handed over %v, want %v", tc.after, got, tc.want)
			}
		}
		close(first.block)
		flushed(t, a)
	})
}

// TestBatchKeepsEachNameOnceUpTo24: deliveries that wait for one transaction's next fetch
// are coalesced: each distinct name is kept once (a hint is passed on once per fetch,
// however often it was delivered), and at most 24 distinct names are kept, the first ones,
// confirmable or not.
func TestBatchKeepsEachNameOnceUpTo24(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		api := newFakeAPI()
		api.txs[1] = created(1)
		var mu sync.Mutex
		var hinted []string
		got := &calls{block: make(chan struct{})}
		h := webhook.NewHandler(api.client(t), got.fn, webhook.Options{OnUnconfirmedHint: func(_ context.Context, h webhook.Hint) {
			mu.Lock()
			defer mu.Unlock()
			hinted = append(hinted, string(h.Event))
		}})
		defer shutdown(t, h)
		deliver(h, "create", 1)
		synctest.Wait() // the callback holds the first batch; what follows waits for the next
		api.set(agreed(1))
		deliver(h, "agree", 1)
		var want []string
		for i := range 30 {
			name := fmt.Sprintf("hint_%02d", i)
			for range 3 {
				deliver(h, name, 1)
			}
			if i < 23 { // and agree: 24 names
				want = append(want, name)
			}
		}
		close(got.block)
		flushed(t, h)
		mu.Lock()
		defer mu.Unlock()
		slices.Sort(hinted)
		if !slices.Equal(hinted, want) {
			t.Errorf("hints passed on: %v, want each of the first 23 hint names once", hinted)
		}
		if l := got.list(); !slices.Equal(l, []string{"create:1", "agree:1"}) {
			t.Errorf("handed over %v", l)
		}
	})
}

// TestShutdownGivesUpWaitingWork: work still waiting when Shutdown's context ends is given
// up on, so that Flush, whether already waiting or called afterwards, returns instead of
// waiting for work that will never be done.
func TestShutdownGivesUpWaitingWork(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		api := newFakeAPI()
		api.txs[1] = sale(1, item(11, escrow.ItemGeneralMerchandise, false))
		got := &calls{}
		h := webhook.NewHandler(api.client(t), got.fn, webhook.Options{Refetch: time.Hour})
		deliver(h, "create", 1)
		flushed(t, h)
		deliver(h, "payment_disbursed", 1) // nothing new: fetched, it sets the next fetch an hour away
		synctest.Wait()
		deliver(h, "payment_disbursed", 1) // so this one waits
		waiting := make(chan error, 1)
		go func() { waiting <- h.Flush(context.Background()) }()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := h.Shutdown(ctx); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("Shutdown with work waiting: %v", err)
		}
		if err := <-waiting; err != nil {
			t.Errorf("Flush waiting during Shutdown: %v", err)
		}
		ctx, cancel = context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := h.Flush(ctx); err != nil {
			t.Errorf("Flush after Shutdown: %v", err)
		}
	})
}

// TestShutdownFinishesWhatWaitsForARetry: a known transaction whose fetch failed and waits
// for its retry when Shutdown begins is retried and handed over within Shutdown's context:
// only never-seen ids are dropped at shutdown.
func TestShutdownFinishesWhatWaitsForARetry(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		api := newFakeAPI()
		api.txs[1] = created(1)
		got := &calls{}
		h := webhook.NewHandler(api.client(t), got.fn, webhook.Options{RetryWait: time.Second, MaxRetryWait: time.Second})
		deliver(h, "create", 1)
		flushed(t, h)
		api.set(agreed(1))
		api.setStatus(1, http.StatusBadGateway)
		deliver(h, "agree", 1)
		synctest.Wait() // failed: waits for its retry
		api.setStatus(1, 0)
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := h.Shutdown(ctx); err != nil {
			t.Errorf("Shutdown: %v", err)
		}
		if l := got.list(); !slices.Equal(l, []string{"create:1", "agree:1"}) {
			t.Errorf("handed over %v; want the retried agree too", l)
		}
	})
}

// TestShutdownWaitsForCancelledCallbacks: a callback still running when Shutdown gives up
// waiting is cancelled, and Shutdown returns only after it has returned, so that the
// application may close what the callback uses (its database) as soon as Shutdown does.
func TestShutdownWaitsForCancelledCallbacks(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		api := newFakeAPI()
		api.txs[1] = sale(1, item(11, escrow.ItemGeneralMerchandise, false))
		var returned atomic.Bool
		h := webhook.NewHandler(api.client(t), func(ctx context.Context, _ webhook.ConfirmedEvent) error {
			<-ctx.Done()
			time.Sleep(time.Second) // rolls back what it had begun
			returned.Store(true)
			return ctx.Err()
		}, webhook.Options{})
		deliver(h, "create", 1)
		synctest.Wait()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := h.Shutdown(ctx); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("Shutdown with a callback running: %v", err)
		}
		if !returned.Load() {
			t.Error("Shutdown returned before the cancelled callback did")
		}
	})
}

// TestReconcileHandsOverFromTheListing: the states the reconciler reads from the account's
// listing are handed over as read, without reading each transaction again.
func TestReconcileHandsOverFromTheListing(t *testing.T) {
	api := newFakeAPI()
	for id := range int64(3) {
		api.txs[id+1] = sale(id+1, item(11, escrow.ItemGeneralMerchandise, false))
	}
	got := &calls{}
	h := webhook.NewHandler(api.client(t), got.fn, webhook.Options{})
	defer shutdown(t, h)
	if err := h.Reconcile(t.Context()); err != nil {
		t.Fatal(err)
	}
	flushed(t, h)
	// Two listings: the first reconciliation reads the newest id alone before its walk.
	if n := len(got.list()); n != 9 || api.lists != 2 {
		t.Fatalf("handed over %v after %d listings, want create, agree and payment_approved of each of 3 after 2", got.list(), api.lists)
	}
	for id := range int64(3) {
		if n := api.readsOf(id + 1); n != 0 {
			t.Errorf("transaction %d read %d times after the listing", id+1, n)
		}
	}
}

// TestNanosecondRetryWait: the smallest retry waits are taken as given: a callback
// failing with RetryWait and MaxRetryWait of 1ns is tried MaxAttempts times.
func TestNanosecondRetryWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		api := newFakeAPI()
		api.txs[1] = sale(1, item(11, escrow.ItemGeneralMerchandise, false))
		got := &calls{fail: errors.New("the order system is down")}
		h := webhook.NewHandler(api.client(t), got.fn, webhook.Options{MaxAttempts: 4, RetryWait: time.Nanosecond, MaxRetryWait: time.Nanosecond})
		defer shutdown(t, h)
		deliver(h, "create", 1)
		flushed(t, h)
		if n := len(got.list()); n != 4 {
			t.Errorf("%d tries, want 4", n)
		}
	})
}

// releaseFailing is a store that fails to release a lease.
type releaseFailing struct{ webhook.MemoryStore }

func (s *releaseFailing) Yield(ctx context.Context, y webhook.Yield) (webhook.Turn, error) {
	if y.Release {
		return webhook.Turn{}, errors.New("database unavailable")
	}
	return s.MemoryStore.Yield(ctx, y)
}

// TestWarningsSayWhatWasDropped: the log warns of malformed deliveries and invalid event
// names, of deliveries dropped because the account cannot read their transaction, and
// only then, and of a delivered event the transaction
// does not show, and only then; a tracked transaction found unreadable is
// no longer tracked, after one read, with its own warning; a lease that could not be
// released after giving up on a failing callback is warned of, and only then; a retry
// and giving up are logged.
func TestWarningsSayWhatWasDropped(t *testing.T) {
	const dropped, untracked, unreleased = "unconfirmed deliveries dropped", "no longer tracked", "releasing a lease failed"
	synctest.Test(t, func(t *testing.T) {
		api := newFakeAPI()
		api.txs[1] = sale(1, item(11, escrow.ItemGeneralMerchandise, false))
		store := new(webhook.MemoryStore)
		var log logtest.Lines
		h := webhook.NewHandler(api.client(t), (&calls{}).fn, webhook.Options{Store: store, Logger: slog.New(slog.NewTextHandler(&log, nil))})
		defer shutdown(t, h)
		deliver(h, "create", 404)
		flushed(t, h)
		if log.Count(dropped) != 1 || log.Count(untracked) != 0 {
			t.Errorf("a delivery about an unreadable transaction logged:\n%s", log.String())
		}
		if code := deliver(h, "create", -1); code/100 != 4 || log.Count("refused delivery") != 1 {
			t.Errorf("a malformed delivery answered %d and logged:\n%s", code, log.String())
		}
		if code := deliver(h, "Funds", 1); code != http.StatusOK || log.Count("invalid event name") != 1 {
			t.Errorf("a delivery with an invalid name answered %d and logged:\n%s", code, log.String())
		}
		const unshown = "delivery dropped as unconfirmed"
		deliver(h, "create", 1)
		flushed(t, h)
		deliver(h, "accept", 1)
		flushed(t, h)
		if n := log.Count(unshown); n != 1 || !strings.Contains(log.String(), "event=accept") {
			t.Errorf("create (shown) and accept (not shown) delivered: %d warnings of a delivery dropped:\n%s", n, log.String())
		}
		if err := store.Track(t.Context(), []int64{2}); err != nil { // tracked, now unreadable
			t.Fatal(err)
		}
		if err := h.Reconcile(t.Context()); err != nil {
			t.Fatal(err)
		}
		flushed(t, h)
		if log.Count(dropped) != 1 || log.Count(untracked) != 1 || api.readsOf(2) != 1 {
			t.Errorf("a tracked transaction found unreadable after %d reads logged:\n%s", api.readsOf(2), log.String())
		}
		if ids, err := store.Unfinished(t.Context()); err != nil || slices.Contains(ids, 2) {
			t.Errorf("Unfinished = %v, %v: the unreadable transaction is still tracked", ids, err)
		}

		for _, tc := range []struct {
			store webhook.Store
			warns int
		}{{new(webhook.MemoryStore), 0}, {new(releaseFailing), 1}} {
			var log logtest.Lines
			failing := &calls{fail: errors.New("the order system is down")}
			h := webhook.NewHandler(api.client(t), failing.fn, webhook.Options{Store: tc.store, MaxAttempts: 2, Logger: slog.New(slog.NewTextHandler(&log, nil))})
			deliver(h, "create", 1)
			flushed(t, h)
			shutdown(t, h)
			if n := log.Count(unreleased); n != tc.warns {
				t.Errorf("store %T: %d warnings of a failed release, want %d:\n%s", tc.store, n, tc.warns, log.String())
			}
			if log.Count("retrying") != 1 || log.Count("giving up") != 1 {
				t.Errorf("two failed tries logged:\n%s", log.String())
			}
		}
	})
}

// TestEventHandedOverByAnotherReplicaIsSkipped: an event another replica handed over
// under its lease is not handed over again; the rest is, at once, and the event counts as
// handed over when this one decides whether the transaction is finished.
func TestEventHandedOverByAnotherReplicaIsSkipped(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		api := newFakeAPI()
		api.txs[1] = sale(1, item(11, escrow.ItemGeneralMerchandise, false))
		api.txs[1].IsCancelled = true
		store := new(webhook.MemoryStore)
		other := webhook.Lease{TransactionID: 1, Holder: "other", Expires: time.Now().Add(time.Minute)}
		turn, err := store.Acquire(t.Context(), other, nil, time.Now())
		if err != nil || !turn.Granted {
			t.Fatal(turn, err)
		}
		if _, err := store.Yield(t.Context(), webhook.Yield{Lease: other, Marks: turn.Marks, Facts: []string{"create"}, Now: time.Now()}); err != nil {
			t.Fatal(err)
		}
		got := &calls{}
		h := webhook.NewHandler(api.client(t), got.fn, webhook.Options{Store: store})
		defer shutdown(t, h)
		start := time.Now()
		deliver(h, "cancel", 1)
		flushed(t, h)
		if l := got.list(); !slices.Equal(l, []string{"agree:1", "payment_approved:1", "cancel:1"}) || got.at[0] != start {
			t.Errorf("handed over %v at %v, want the rest at once", l, got.at)
		}
		if ids, err := store.Unfinished(t.Context()); err != nil || len(ids) != 0 {
			t.Errorf("Unfinished = %v, %v: every fact of the cancelled transaction was handed over, one by the other replica", ids, err)
		}
	})
}

// TestSpentWindowIsWaitedOut: an answer saying the window is down to the application's
// reserve (by default a tenth of the limit, rounded down) makes the handler wait for the
// reset before its next fetch; when nothing is left (0 of 5), it waits instead of sending
// one the client would refuse (a try lost). An answer that states a reset but not what
// remains pauses nothing. A wait is logged at debug level, so that a slow confirmation can
// be told from a stuck one.
func TestSpentWindowIsWaitedOut(t *testing.T) {
	for _, tc := range []struct {
		name   string
		header http.Header
		wait   time.Duration
	}{
		{"spent", http.Header{"Ratelimit-Limit": {"5"}, "Ratelimit-Remaining": {"0"}, "Ratelimit-Reset": {"60"}}, time.Minute},
		{"down to a tenth of the limit", http.Header{"Ratelimit-Limit": {"20"}, "Ratelimit-Remaining": {"2"}, "Ratelimit-Reset": {"60"}}, time.Minute},
		{"above a tenth", http.Header{"Ratelimit-Limit": {"20"}, "Ratelimit-Remaining": {"3"}, "Ratelimit-Reset": {"60"}}, 0},
		{"remaining unknown", http.Header{"Ratelimit-Reset": {"60"}}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				api := newFakeAPI()
				api.header = tc.header
				api.listStatus = http.StatusServiceUnavailable // no listing confirms 2: it is fetched
				api.txs[1] = created(1)
				api.txs[2] = created(2)
				got := &calls{}
				var log logtest.Lines
				h := webhook.NewHandler(api.client(t), got.fn, webhook.Options{MaxAttempts: 1,
					Logger: slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelDebug}))})
				defer shutdown(t, h)
				start := time.Now()
				deliver(h, "create", 1)
				flushed(t, h)
				deliver(h, "create", 2)
				ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
				defer cancel()
				if err := h.Flush(ctx); err != nil {
					t.Fatal(err)
				}
				if l := got.list(); !slices.Equal(l, []string{"create:1", "create:2"}) || got.at[1].Sub(start) != tc.wait {
					t.Errorf("handed over %v at %v, want the second after %v", l, got.at, tc.wait)
				}
				want := 0
				if tc.wait > 0 {
					want = 1
				}
				if n := log.Count("waiting for the rate-limit window"); n != want {
					t.Errorf("%d waits logged, want %d:\n%s", n, want, log.String())
				}
			})
		})
	}
}

// TestUnpassedHintsLoggedAtDebug: without OnUnconfirmedHint, each unconfirmable name of a
// batch is logged at debug level, whatever comes before it, and only there: a hint is not
// a delivery that the transaction failed to confirm, which is warned of.
func TestUnpassedHintsLoggedAtDebug(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		api := newFakeAPI()
		api.txs[1] = sale(1, item(11, escrow.ItemGeneralMerchandise, false))
		var log logtest.Lines
		got := &calls{block: make(chan struct{})}
		h := webhook.NewHandler(api.client(t), got.fn, webhook.Options{Logger: slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelDebug}))})
		defer shutdown(t, h)
		deliver(h, "create", 1)
		synctest.Wait() // the callback holds the first batch; the next takes the rest
		for _, name := range []string{"payment_sent", "agree", "party_verification_approved", "payment_refunded"} {
			deliver(h, name, 1)
		}
		close(got.block)
		flushed(t, h)
		for _, name := range []string{"payment_sent", "party_verification_approved", "payment_refunded"} {
			if n := log.Count("unconfirmable event dropped"); n != 3 || !strings.Contains(log.String(), "event="+name) {
				t.Errorf("%d debug lines; %s not logged:\n%s", n, name, log.String())
			}
		}
		if n := log.Count("dropped as unconfirmed"); n != 0 {
			t.Errorf("%d hints warned of as unconfirmed deliveries:\n%s", n, log.String())
		}
	})
}

// TestHintWithoutReceiverCostsNoFetch: without OnUnconfirmedHint, a hint about a
// transaction the handler knows is dropped as it arrives: a marketplace that never asked
// for hints must not spend its rate limit fetching for names nothing will receive.
func TestHintWithoutReceiverCostsNoFetch(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		api := newFakeAPI()
		api.txs[1] = created(1)
		got := &calls{}
		h := webhook.NewHandler(api.client(t), got.fn, webhook.Options{Refetch: time.Millisecond, MaxRefetch: time.Millisecond})
		defer shutdown(t, h)
		deliver(h, "create", 1)
		flushed(t, h)
		before := api.readsOf(1)
		for _, name := range []string{"payment_sent", "party_verification_submitted", "payment_refunded"} {
			deliver(h, name, 1)
			flushed(t, h)
		}
		if n := api.readsOf(1) - before; n != 0 {
			t.Errorf("%d fetches for hints nothing receives", n)
		}
		if len(got.list()) != 1 {
			t.Errorf("handed over %v, want the creation alone", got.list())
		}
	})
}

// storeWithCreateHandedOver is a memory store in which another replica has already handed
// over transaction 1's creation, so that deliveries of it are replays.
func storeWithCreateHandedOver(t *testing.T) *webhook.MemoryStore {
	t.Helper()
	store := new(webhook.MemoryStore)
	earlier := webhook.Lease{TransactionID: 1, Holder: "earlier", Expires: time.Now().Add(time.Hour)}
	turn, err := store.Acquire(t.Context(), earlier, nil, time.Now())
	if err != nil || !turn.Granted {
		t.Fatal(turn, err)
	}
	if _, err := store.Yield(t.Context(), webhook.Yield{Lease: earlier, Marks: turn.Marks, Facts: []string{"create"}, Now: time.Now()}); err != nil {
		t.Fatal(err)
	}
	return store
}

// TestReplaysOfOnceOnlyEventsAreNotFetched: a delivery of an event that happens once per
// transaction (create, agree, payment_approved, complete, cancel) whose fact the store
// records as handed over is a replay: it is dropped without a fetch, however often it
// comes, and reported as a duplicate.
func TestReplaysOfOnceOnlyEventsAreNotFetched(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		api := newFakeAPI()
		api.txs[1] = sale(1, item(11, escrow.ItemGeneralMerchandise, false))
		store := storeWithCreateHandedOver(t)
		got := &calls{}
		h := webhook.NewHandler(api.client(t), got.fn, webhook.Options{Store: store})
		defer shutdown(t, h)
		for range 20 {
			deliver(h, "create", 1)
			time.Sleep(100 * time.Millisecond)
		}
		flushed(t, h)
		if api.readsOf(1) != 0 {
			t.Errorf("replays of create fetched %d times", api.readsOf(1))
		}
		deliver(h, "agree", 1) // not handed over yet: fetched and handed over, with what the state shows after it
		flushed(t, h)
		if api.readsOf(1) != 1 || !slices.Equal(got.list(), []string{"agree:1", "payment_approved:1"}) {
			t.Errorf("agree after replays: %d fetches, handed over %v; want 1, and agree and payment_approved", api.readsOf(1), got.list())
		}
		deliver(h, "payment_approved", 1) // its delivery, late: a replay now
		flushed(t, h)
		if api.readsOf(1) != 1 || len(got.list()) != 2 {
			t.Errorf("a late delivery of what a fetch showed: %d fetches, handed over %v", api.readsOf(1), got.list())
		}
	})
}

func countOf(list []string, s string) int {
	n := 0
	for _, x := range list {
		if x == s {
			n++
		}
	}
	return n
}

// TestReplaysKnownHereCostNoStoreCall: once a replica has handed a transaction's facts
// over, or learnt from the Store that a name is a replay, later deliveries of those names
// are dropped as they arrive: no Store call, no fetch, reported as duplicates. News still
// goes to the Store and the API.
func TestReplaysKnownHereCostNoStoreCall(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		api := newFakeAPI()
		api.txs[1] = sale(1, item(11, escrow.ItemGeneralMerchandise, false)) // agreed and paid
		store := &countingStore{}
		obs := new(recordingObserver)
		got := &calls{}
		h := webhook.NewHandler(api.client(t), got.fn, webhook.Options{Store: store, Observer: obs})
		defer shutdown(t, h)
		deliver(h, "create", 1)
		flushed(t, h)
		calls, reads := store.calls.Load(), api.readsOf(1)
		for range 3 {
			for _, name := range []string{"create", "agree", "payment_approved"} {
				deliver(h, name, 1)
			}
		}
		flushed(t, h)
		if n, r := store.calls.Load()-calls, api.readsOf(1)-reads; n != 0 || r != 0 {
			t.Errorf("replays of what this replica handed over cost %d store calls and %d fetches", n, r)
		}
		if n := countOf(obs.outcomes(), "agree:1=duplicate"); n != 3 {
			t.Errorf("%d replays of agree reported as duplicates, want 3", n)
		}
		deliver(h, "ship", 1) // the item is not shipped: a fetch tells
		flushed(t, h)
		if store.calls.Load() == calls || api.readsOf(1) == reads {
			t.Error("a delivery that may be news was dropped unasked")
		}
	})
}

// firstFetchFails starts a handler with opt and delivers transaction 1's creation, which
// the API answers 502 until told otherwise (setStatus).
func firstFetchFails(t *testing.T, opt webhook.Options) (*fakeAPI, *webhook.Handler, *calls) {
	t.Helper()
	api := newFakeAPI()
	api.txs[1] = created(1)
	api.status[1] = http.StatusBadGateway
	got := &calls{}
	h := webhook.NewHandler(api.client(t), got.fn, opt)
	deliver(h, "create", 1)
	return api, h, got
}

// TestRetryWithinTheLeaseCostsNoStoreCall: a fetch retried while the turn's lease has more
// than half its time left keeps the lease as it is: the turn costs its two store calls
// (take the lease, end the turn), not one more per retry (with a database store, each is
// a commit).
func TestRetryWithinTheLeaseCostsNoStoreCall(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := &countingStore{}
		api, h, got := firstFetchFails(t, webhook.Options{Store: store, RetryWait: 100 * time.Millisecond})
		defer shutdown(t, h)
		synctest.Wait()
		api.setStatus(1, 0)
		flushed(t, h)
		if n, r := store.calls.Load(), api.readsOf(1); n != 2 || r != 2 {
			t.Errorf("%d store calls and %d fetches; want 2 of each (the lease, the turn's end; a retry)", n, r)
		}
		if !slices.Equal(got.list(), []string{"create:1"}) {
			t.Errorf("handed over %v", got.list())
		}
	})
}

// TestReplayLearntFromTheStoreIsNotAskedAgain: a replica whose delivery the Store
// answered as a replay (another replica handed its fact over) drops the next replay of it
// as it arrives: one Store call, not one per replay.
func TestReplayLearntFromTheStoreIsNotAskedAgain(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		api := newFakeAPI()
		api.txs[1] = created(1)
		store := &countingStore{}
		other := webhook.Lease{TransactionID: 1, Holder: "other", Expires: time.Now().Add(time.Hour)}
		turn, err := store.MemoryStore.Acquire(t.Context(), other, nil, time.Now())
		if err != nil || !turn.Granted {
			t.Fatal(turn, err)
		}
		if _, err := store.MemoryStore.Yield(t.Context(), webhook.Yield{Lease: other, Marks: turn.Marks, Facts: []string{"create"}, Now: time.Now()}); err != nil {
			t.Fatal(err)
		}
		h := webhook.NewHandler(api.client(t), (&calls{}).fn, webhook.Options{Store: store})
		defer shutdown(t, h)
		deliver(h, "create", 1)
		flushed(t, h)
		calls := store.calls.Load()
		if calls == 0 {
			t.Fatal("the first replay was dropped without asking the Store")
		}
		deliver(h, "create", 1)
		flushed(t, h)
		if n := store.calls.Load() - calls; n != 0 || api.readsOf(1) != 0 {
			t.Errorf("a replay the Store had answered cost %d more store calls and %d fetches", n, api.readsOf(1))
		}
	})
}

// TestReplaysOfAnEndedSaleCostNoStoreCall: once a replica handed over every fact of a
// completed sale (or a cancelled one), a replay of any event its state showed is dropped as
// it arrives, whichever it is: no Store call, no fetch.
func TestReplaysOfAnEndedSaleCostNoStoreCall(t *testing.T) {
	done := sale(1, item(11, escrow.ItemGeneralMerchandise, true))
	done.Items[0].Status = escrow.ItemStatus{Shipped: true, Received: true, Accepted: true}
	done.CloseDate = escrow.Timestamp{Time: time.Now()}
	cancelled := created(2)
	cancelled.IsCancelled = true
	for _, tc := range []struct {
		tx     *escrow.Transaction
		events []string
	}{
		{done, []string{"create", "agree", "payment_approved", "ship", "receive", "accept", "payment_disbursed", "complete"}},
		{cancelled, []string{"create", "cancel"}},
	} {
		synctest.Test(t, func(t *testing.T) {
			api := newFakeAPI()
			api.txs[tc.tx.ID] = tc.tx
			store := &countingStore{}
			got := &calls{}
			h := webhook.NewHandler(api.client(t), got.fn, webhook.Options{Store: store})
			defer shutdown(t, h)
			deliver(h, "create", tc.tx.ID)
			flushed(t, h)
			if n := len(got.list()); n != len(tc.events) {
				t.Fatalf("handed over %v, want %v", got.list(), tc.events)
			}
			calls, reads := store.calls.Load(), api.readsOf(tc.tx.ID)
			for _, name := range tc.events {
				deliver(h, name, tc.tx.ID)
				flushed(t, h)
				if n, r := store.calls.Load()-calls, api.readsOf(tc.tx.ID)-reads; n != 0 || r != 0 {
					t.Errorf("a replay of %s cost %d store calls and %d fetches", name, n, r)
				}
			}
		})
	}
}

// slowedPace starts, in a synctest bubble, a handler over a store in which transaction 1's
// creation was handed over, and delivers a replay of an item event (it may be a new item's,
// so it takes a fetch) every 100ms for 1.2s: fetched at 0, 250ms and 1.25s, the pace's next
// wait is 4s.
func slowedPace(t *testing.T) (*fakeAPI, *webhook.Handler, *calls) {
	t.Helper()
	api := newFakeAPI()
	api.txs[1] = created(1)
	got := &calls{}
	h := webhook.NewHandler(api.client(t), got.fn, webhook.Options{Store: storeWithCreateHandedOver(t)})
	for range 12 {
		deliver(h, "payment_disbursed", 1)
		time.Sleep(100 * time.Millisecond)
	}
	return api, h, got
}

// TestNewsIsNotPacedAndResetsThePace: a delivery of a name not tried yet is fetched at
// once, even while replays wait for the pace, and the fetch that finds it ends the slowed
// pace of replays: a replay after it is fetched at once too.
func TestNewsIsNotPacedAndResetsThePace(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		api, h, got := slowedPace(t)
		defer shutdown(t, h)
		const ms = time.Millisecond
		time.Sleep(100 * ms)
		api.set(agreed(1))
		deliver(h, "agree", 1) // news, fetched at once (1.3s), with the replays waiting
		time.Sleep(4050 * ms)
		deliver(h, "payment_disbursed", 1) // at 5.35s, fetched at once: the pace was reset
		flushed(t, h)
		want := []time.Duration{250 * ms, time.Second, 50 * ms, 4050 * ms}
		if gaps := api.gapsOf(1); !slices.Equal(gaps, want) || !slices.Equal(got.list(), []string{"agree:1"}) {
			t.Errorf("fetched after %v, handed over %v; want %v and agree", gaps, got.list(), want)
		}
	})
}

// TestNewsDuringAPaceWaitIsFetchedAtOnce: a replay that arrives after the pace slowed
// waits for it, and a delivery of news that arrives during that wait is fetched at once,
// not when the replay's wait ends: a real event after a storm of replays must not be
// held back by seconds.
func TestNewsDuringAPaceWaitIsFetchedAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		api, h, got := slowedPace(t)
		defer shutdown(t, h)
		const ms = time.Millisecond
		time.Sleep(200 * ms)
		deliver(h, "payment_disbursed", 1) // at 1.4s: waits until 5.25s
		time.Sleep(100 * ms)
		api.set(agreed(1))
		deliver(h, "agree", 1) // at 1.5s: fetched at once
		synctest.Wait()
		want := []time.Duration{250 * ms, time.Second, 250 * ms}
		if gaps := api.gapsOf(1); !slices.Equal(gaps, want) || !slices.Equal(got.list(), []string{"agree:1"}) {
			t.Errorf("fetched after %v, handed over %v; want %v and agree", gaps, got.list(), want)
		}
		flushed(t, h)
	})
}

// TestDeliveryDuringARetryWaitKeepsTheBackoff: a delivery that arrives while a failed
// fetch waits for its retry joins that retry and does not bring it forward: under an
// outage or a rate limit, a busy transaction must not fetch once per delivery.
func TestDeliveryDuringARetryWaitKeepsTheBackoff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		api, h, got := firstFetchFails(t, webhook.Options{RetryWait: time.Second, MaxRetryWait: time.Second})
		defer shutdown(t, h) // retried after 0.5 to 1s
		time.Sleep(100 * time.Millisecond)
		api.setStatus(1, 0)
		deliver(h, "create", 1)
		flushed(t, h)
		if gaps := api.gapsOf(1); len(gaps) != 1 || gaps[0] < 500*time.Millisecond {
			t.Errorf("fetched again after %v; want once, after the backoff of at least 500ms", gaps)
		}
		if !slices.Equal(got.list(), []string{"create:1"}) {
			t.Errorf("handed over %v", got.list())
		}
	})
}

// TestHintStormIsPaced: hints passed to OnUnconfirmedHint take a fetch each (only a
// transaction the account reads is hinted about), so a storm of them is paced like a
// storm of replays: a sender repeating payment_sent every 100ms must not spend the rate
// limit at that rate.
func TestHintStormIsPaced(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		api := newFakeAPI()
		api.txs[1] = created(1)
		store := storeWithCreateHandedOver(t)
		h := webhook.NewHandler(api.client(t), (&calls{}).fn, webhook.Options{Store: store,
			OnUnconfirmedHint: func(context.Context, webhook.Hint) {}})
		defer shutdown(t, h)
		const ms = time.Millisecond
		for range 13 { // fetched at 0, 250ms and 1.25s, like replays
			deliver(h, "payment_sent", 1)
			time.Sleep(100 * ms)
		}
		flushed(t, h)
		want := []time.Duration{250 * ms, time.Second}
		if gaps := api.gapsOf(1); !slices.Equal(gaps, want) {
			t.Errorf("fetched after %v; want %v", gaps, want)
		}
	})
}

// TestListedStateIsNotPaced: a state the reconciler's listing read is handed over at once,
// even while the transaction's deliveries wait for a slowed pace: it needs no fetch.
func TestListedStateIsNotPaced(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		api, h, got := slowedPace(t)
		defer shutdown(t, h)
		time.Sleep(100 * time.Millisecond)
		api.set(agreed(1))
		if err := h.Reconcile(t.Context()); err != nil { // lists it, ongoing
			t.Fatal(err)
		}
		synctest.Wait()
		if !slices.Equal(got.list(), []string{"agree:1"}) {
			t.Errorf("handed over %v at once; want agree from the listing", got.list())
		}
		flushed(t, h)
	})
}

// TestRecheckAskedDuringATurnIsFetchedAfterIt: a reconciler (here another replica's) that
// asks for a transaction to be read again while a replica's turn on it runs gets a fetch
// after that turn: the state the turn read may predate what made it ask.
func TestRecheckAskedDuringATurnIsFetchedAfterIt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		api := newFakeAPI()
		api.txs[1] = created(1)
		store := new(webhook.MemoryStore)
		got := &calls{block: make(chan struct{})}
		h := webhook.NewHandler(api.client(t), got.fn, webhook.Options{Store: store})
		defer shutdown(t, h)
		deliver(h, "create", 1)
		synctest.Wait() // the turn's callback runs
		other := webhook.Lease{TransactionID: 1, Holder: "other", Expires: time.Now().Add(time.Minute)}
		if turn, err := store.Acquire(t.Context(), other, nil, time.Now()); err != nil || turn.Granted {
			t.Fatalf("the other replica's recheck: %+v, %v; want it left to the holder", turn, err)
		}
		close(got.block)
		flushed(t, h)
		if n := api.readsOf(1); n != 2 {
			t.Errorf("read %d times; want again after the turn", n)
		}
	})
}

// TestItemEventLeftDuringATurnIsFetchedAgain: with two goods, a ship delivered to
// another replica while the holder's turn hands over the first good's shipping may be the
// second good's, shipped after the holder's fetch: the holder fetches again and hands it
// over, rather than taking the name as confirmed by the first good's fact.
func TestItemEventLeftDuringATurnIsFetchedAgain(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		shipped := func(shipped ...bool) *escrow.Transaction {
			tx := sale(1, item(11, escrow.ItemGeneralMerchandise, false), item(12, escrow.ItemGeneralMerchandise, false))
			for i := range tx.Items {
				tx.Items[i].Status.Shipped = shipped[i]
			}
			return tx
		}
		api := newFakeAPI()
		api.txs[1] = shipped(true, false)
		store := new(webhook.MemoryStore)
		got := &calls{block: make(chan struct{})}
		a := webhook.NewHandler(api.client(t), got.fn, webhook.Options{Store: store})
		defer shutdown(t, a)
		b := webhook.NewHandler(api.client(t), got.fn, webhook.Options{Store: store})
		defer shutdown(t, b)
		deliver(a, "ship", 1)
		synctest.Wait() // a's turn hands the first good's shipping over
		api.set(shipped(true, true))
		deliver(b, "ship", 1) // left to a, the holder
		synctest.Wait()
		close(got.block)
		flushed(t, a)
		flushed(t, b)
		ships := 0
		for _, e := range got.list() {
			if e == "ship:1" {
				ships++
			}
		}
		if ships != 2 {
			t.Errorf("handed over %v; want both goods' shipping", got.list())
		}
	})
}

// TestGivenUpBatchKeepsThePace: a batch given up on handed nothing over, so the next
// delivery of its transaction waits Refetch like a replay's.
func TestGivenUpBatchKeepsThePace(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		api := newFakeAPI()
		api.txs[1] = sale(1, item(11, escrow.ItemGeneralMerchandise, false))
		got := &calls{fail: errors.New("the order system is down")}
		h := webhook.NewHandler(api.client(t), got.fn, webhook.Options{MaxAttempts: 1})
		defer shutdown(t, h)
		deliver(h, "create", 1)
		time.Sleep(100 * time.Millisecond)
		deliver(h, "create", 1)
		flushed(t, h)
		if gaps := api.gapsOf(1); !slices.Equal(gaps, []time.Duration{250 * time.Millisecond}) {
			t.Errorf("fetched after %v, want 250ms", gaps)
		}
	})
}

// TestRateLimitedFetchWaitsForTheAllowance: a fetch refused with a 429 asking for a minute
// is tried again after that minute, not sooner: tries spent while the client itself still
// holds the endpoint back would exhaust MaxAttempts and lose the event.
func TestRateLimitedFetchWaitsForTheAllowance(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		api := newFakeAPI()
		api.txs[1] = created(1)
		api.status[1] = http.StatusTooManyRequests
		api.header = http.Header{"Retry-After": {"60"}}
		got := &calls{}
		h := webhook.NewHandler(api.client(t), got.fn, webhook.Options{MaxAttempts: 2})
		defer shutdown(t, h)
		start := time.Now()
		deliver(h, "create", 1)
		synctest.Wait() // refused; waiting to try again
		api.mu.Lock()
		delete(api.status, 1)
		api.header = nil
		api.mu.Unlock()
		ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
		defer cancel()
		if err := h.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		if l := got.list(); !slices.Equal(l, []string{"create:1"}) || got.at[0].Sub(start) < time.Minute {
			t.Errorf("handed over %v at %v, want create after a minute", l, got.at)
		}
	})
}

// partlyFailing fails the callback for one event name.
type partlyFailing struct {
	calls
	name escrow.EventName
}

func (p *partlyFailing) fn(ctx context.Context, ev webhook.ConfirmedEvent) error {
	if ev.Name == p.name {
		return errors.New("the order system refuses " + string(ev.Name))
	}
	return p.calls.fn(ctx, ev)
}

// TestPartlyHandedBatchIsNews: a batch given up on after handing over part of its events
// did find news, so the next delivery is fetched at once, not paced as a replay.
func TestPartlyHandedBatchIsNews(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		api := newFakeAPI()
		api.txs[1] = sale(1, item(11, escrow.ItemGeneralMerchandise, false))
		got := &partlyFailing{name: escrow.EventAgree}
		h := webhook.NewHandler(api.client(t), got.fn, webhook.Options{MaxAttempts: 1})
		defer shutdown(t, h)
		deliver(h, "agree", 1) // create handed over, agree refused
		time.Sleep(100 * time.Millisecond)
		deliver(h, "agree", 1)
		flushed(t, h)
		if gaps := api.gapsOf(1); !slices.Equal(gaps, []time.Duration{100 * time.Millisecond}) || !slices.Equal(got.list(), []string{"create:1"}) {
			t.Errorf("fetched after %v, handed over %v; want 100ms and create", gaps, got.list())
		}
	})
}

// lostStore reports every turn lost when it ends: its lease ended and another replica
// took it over while the callback ran.
type lostStore struct{ webhook.MemoryStore }

func (s *lostStore) Yield(ctx context.Context, y webhook.Yield) (webhook.Turn, error) {
	s.MemoryStore.Yield(ctx, y)
	return webhook.Turn{}, webhook.ErrClaimLost
}

// TestClaimLostIsLoggedNotRetried: a turn whose callbacks outlived its lease is logged as
// an error (another replica may have handed the event over too) and not tried again.
func TestClaimLostIsLoggedNotRetried(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		api := newFakeAPI()
		api.txs[1] = created(1)
		var log logtest.Lines
		got := &calls{}
		h := webhook.NewHandler(api.client(t), got.fn, webhook.Options{Store: new(lostStore), Logger: slog.New(slog.NewTextHandler(&log, nil))})
		defer shutdown(t, h)
		deliver(h, "create", 1)
		flushed(t, h)
		if n := log.Count("outlived its lease"); n != 1 || len(got.list()) != 1 {
			t.Errorf("handed over %v; %d errors logged:\n%s", got.list(), n, log.String())
		}
	})
}

// world is a partner's marketplace on the emulator: a webhook receiver served by a Handler,
// and clients for the partner and for the buyer and seller it acts for.
type world struct {
	t                      *testing.T
	srv                    *escrowtest.Server
	partner, buyer, seller *escrow.Client
	buyerEmail, sellerMail string
	h                      *webhook.Handler
	hook                   *httptest.Server
	got                    *recorder
	listings               atomic.Int64 // the handler's requests of the partner listing
}

// listingCounter counts a client's requests of the partner listing.
type listingCounter struct {
	next http.RoundTripper
	n    *atomic.Int64
}

func (c listingCounter) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/partner/transactions") {
		c.n.Add(1)
	}
	return c.next.RoundTrip(r)
}

// recorder is a callback that remembers what it was handed, and can be told to fail or
// to be slow.
type recorder struct {
	mu     sync.Mutex
	events []webhook.ConfirmedEvent
	fail   map[escrow.EventName]int // failures left per event
	delay  time.Duration
	// entered, if set, is sent to (without blocking) as each callback begins.
	entered chan struct{}
}

func (r *recorder) callback(ctx context.Context, ev webhook.ConfirmedEvent) error {
	if r.entered != nil {
		select {
		case r.entered <- struct{}{}:
		default:
		}
	}
	if r.delay > 0 {
		select {
		case <-time.After(r.delay):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.fail[ev.Name] > 0 {
		r.fail[ev.Name]--
		return fmt.Errorf("the order system is down")
	}
	r.events = append(r.events, ev)
	return nil
}

// byTransaction lists the names of the events handed over per transaction, in order.
func (r *recorder) byTransaction() map[int64][]string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make(map[int64][]string)
	for _, ev := range r.events {
		out[ev.TransactionID] = append(out[ev.TransactionID], string(ev.Name))
	}
	return out
}

func (r *recorder) count(src webhook.Source) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, ev := range r.events {
		if ev.Source == src {
			n++
		}
	}
	return n
}

func newWorld(t *testing.T, opt webhook.Options, emuOpts ...escrowtest.Option) *world {
	t.Helper()
	srv := escrowtest.NewServer(emuOpts...)
	t.Cleanup(srv.Close)
	p := srv.AddPartner("market@example.com")
	b, s := srv.AddCustomer("buyer@example.com"), srv.AddCustomer("seller@example.com")
	w := &world{
		t: t, srv: srv,
		partner: client(t, srv, p), buyer: client(t, srv, b), seller: client(t, srv, s),
		buyerEmail: b.Email, sellerMail: s.Email,
		got: &recorder{fail: map[escrow.EventName]int{}},
	}
	opt.RetryWait, opt.MaxRetryWait = time.Millisecond, 5*time.Millisecond
	hc := &http.Client{Transport: listingCounter{next: srv.Client().Transport, n: &w.listings}}
	receiving, err := escrow.NewClient(p.Email, p.APIKey, escrow.WithBaseURL(srv.URL), escrow.WithHTTPClient(hc))
	if err != nil {
		t.Fatal(err)
	}
	w.h = webhook.NewHandler(receiving, w.got.callback, opt)
	w.hook = httptest.NewServer(w.h)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := w.h.Shutdown(ctx); err != nil {
			t.Errorf("Shutdown: %v", err)
		}
		w.hook.Close()
	})
	if _, err := w.partner.Webhooks.Create(t.Context(), escrow.Me, w.hook.URL+"/escrow"); err != nil {
		t.Fatal(err)
	}
	return w
}

func client(t *testing.T, srv *escrowtest.Server, a escrowtest.Account) *escrow.Client {
	t.Helper()
	c, err := escrow.NewClient(a.Email, a.APIKey, escrow.WithBaseURL(srv.URL), escrow.WithHTTPClient(srv.Client()))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// create makes a sale between the buyer and the seller, as the partner.
func (w *world) create() int64 {
	w.t.Helper()
	tx, err := w.partner.Transactions.Create(w.t.Context(), &escrow.CreateTransactionRequest{
		Currency: escrow.USD, Description: "A bicycle",
		Parties: []escrow.PartyInput{{Role: escrow.RoleBuyer, Customer: w.buyerEmail}, {Role: escrow.RoleSeller, Customer: w.sellerMail}},
		Items: []escrow.ItemInput{{
			Title: "Bicycle", Type: escrow.ItemGeneralMerchandise, InspectionPeriod: escrow.Days(1),
			Schedule: []escrow.ScheduleInput{{Amount: escrow.MustAmount("250.00"), PayerCustomer: w.buyerEmail, BeneficiaryCustomer: w.sellerMail}},
		}},
	})
	if err != nil {
		w.t.Fatalf("create: %v", err)
	}
	return tx.ID
}

// step is one move of a lifecycle.
type step func(w *world, id int64) error

// as has the partner take an action As-Customer for the buyer or the seller.
func as(email func(*world) string, action escrow.Action) step {
	return func(w *world, id int64) error {
		_, err := w.partner.Transactions.Act(w.t.Context(), id, &escrow.ActionRequest{Action: action}, escrow.AsCustomer(email(w)))
		return err
	}
}

func buyer(w *world) string  { return w.buyerEmail }
func seller(w *world) string { return w.sellerMail }

var (
	buyerAgrees  = as(buyer, escrow.ActionAgree)
	sellerAgrees = as(seller, escrow.ActionAgree)
	ships        = as(seller, escrow.ActionShip)
	receives     = as(buyer, escrow.ActionReceive)
	rejects      = as(buyer, escrow.ActionReject)
	shipsBack    = as(buyer, escrow.ActionShipReturn)
	receivesBack = as(seller, escrow.ActionReceiveReturn)

	funds       step = func(w *world, id int64) error { return w.srv.ApprovePayment(id) }
	partnerEnds step = func(w *world, id int64) error {
		_, err := w.partner.Transactions.Cancel(w.t.Context(), id, "out of stock")
		return err
	}
	buyerAccepts step = func(w *world, id int64) error { _, err := w.buyer.Transactions.Accept(w.t.Context(), id); return err }
	sellerTakes  step = func(w *world, id int64) error {
		_, err := w.seller.Transactions.AcceptReturn(w.t.Context(), id)
		return err
	}
	sellerGivesBank step = func(w *world, id int64) error {
		_, err := w.seller.Transactions.SelectDisbursementMethod(w.t.Context(), id, &escrow.DisbursementMethod{
			Type: escrow.DisbursementACH, AccountName: "Seller", AccountType: "savings",
			BankABARoutingNumber: "121000248", BankAccountNumber: "12345678", BankName: "First Bank",
		})
		return err
	}
	inspectionEnds step = func(w *world, id int64) error { w.srv.Advance(25 * time.Hour); return nil }
)

// lifecycles are the paths a sale can take, with the state changes each announces.
var lifecycles = []struct {
	name  string
	steps []step
	want  string
}{
	{"sale", []step{buyerAgrees, sellerAgrees, funds, sellerGivesBank, ships, receives, buyerAccepts},
		"create agree payment_approved ship receive accept payment_disbursed complete"},
	{"auto-accepted", []step{buyerAgrees, sellerAgrees, funds, sellerGivesBank, ships, receives, inspectionEnds},
		"create agree payment_approved ship receive accept payment_disbursed complete"},
	{"cancelled", []step{partnerEnds}, "create cancel"},
	{"cancelled after agreement", []step{buyerAgrees, sellerAgrees, partnerEnds}, "create agree cancel"},
	{"returned", []step{buyerAgrees, sellerAgrees, funds, ships, receives, rejects, shipsBack, receivesBack, sellerTakes},
		"create agree payment_approved ship receive reject ship_return receive_return accept_return complete"},
}

// run takes n transactions through every lifecycle and returns the events each should
// have announced.
func (w *world) run(n int) map[int64]string {
	w.t.Helper()
	want := make(map[int64]string)
	for range n {
		for _, l := range lifecycles {
			id := w.create()
			for i, s := range l.steps {
				if err := s(w, id); err != nil {
					w.t.Fatalf("%s, step %d: %v", l.name, i, err)
				}
			}
			want[id] = l.want
		}
	}
	return want
}

// settle waits for the emulator's calls and the handler's work.
func (w *world) settle() {
	w.t.Helper()
	ctx, cancel := context.WithTimeout(w.t.Context(), 10*time.Second)
	defer cancel()
	if err := w.srv.FlushWebhooks(ctx); err != nil {
		w.t.Fatal(err)
	}
	if err := w.h.Flush(ctx); err != nil {
		w.t.Fatal(err)
	}
}

func (w *world) reconcile() {
	w.t.Helper()
	if err := w.h.Reconcile(w.t.Context()); err != nil {
		w.t.Fatalf("Reconcile: %v", err)
	}
	w.settle()
}

// deliver posts a delivery body to the receiver as the API would, and returns the status.
func (w *world) deliver(body string) int {
	w.t.Helper()
	resp, err := http.Post(w.hook.URL+"/escrow", "application/json", strings.NewReader(body))
	if err != nil {
		w.t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// checkExactlyOnce compares what was handed over with what each transaction announced:
// every state change once, in order, and nothing else: events no state shows
// (payment_sent, payment_received, payment_refunded) never reach the callback.
func (w *world) checkExactlyOnce(want map[int64]string) {
	w.t.Helper()
	got := w.got.byTransaction()
	for id, events := range want {
		if strings.Join(got[id], " ") != events {
			w.t.Errorf("transaction %d: handed over %v, want %s", id, got[id], events)
		}
	}
	for id := range got {
		if _, ok := want[id]; !ok {
			w.t.Errorf("transaction %d was never made here, but handed over: %v", id, got[id])
		}
	}
}

// TestEveryStateChangeOnceWithoutLoss: with every delivery arriving, each state change
// is handed over once, in order. (Some come FromReconcile: a fetch showed them before
// their own delivery was taken, which then was a replay.)
func TestEveryStateChangeOnceWithoutLoss(t *testing.T) {
	w := newWorld(t, webhook.Options{})
	w.reconcile() // at startup, as RunReconciler does
	want := w.run(2)
	w.settle()
	w.checkExactlyOnce(want)
}

// TestLostDeliveriesAreRecovered drops 30% of the emulator's webhook calls and replays every
// call that did arrive: each state change of every lifecycle is still handed over exactly
// once, in order.
func TestLostDeliveriesAreRecovered(t *testing.T) {
	w := newWorld(t, webhook.Options{}, escrowtest.WithSeed(7))
	if err := w.srv.InjectFault(escrowtest.Fault{Endpoint: "WEBHOOK *", Probability: 0.3, Drop: escrowtest.DropBefore}); err != nil {
		t.Fatal(err)
	}
	w.reconcile()
	want := w.run(8)
	w.settle()

	lost := 0
	for _, d := range w.srv.Deliveries() {
		if d.Error != "" {
			lost++
			continue
		}
		body := fmt.Sprintf(`{"event": %q, "event_type": %q, "transaction_id": %d}`, d.Event, d.EventType, d.TransactionID)
		if code := w.deliver(body); code != http.StatusOK {
			t.Fatalf("replay answered %d", code)
		}
	}
	if total := len(w.srv.Deliveries()); lost < total/5 || lost > total/2 {
		t.Fatalf("%d of %d deliveries lost; the fault should drop about 30%%", lost, total)
	}
	w.settle()
	w.reconcile()
	w.checkExactlyOnce(want)
	if w.got.count(webhook.FromReconcile) == 0 {
		t.Error("nothing was recovered, yet deliveries were lost")
	}

	// Nothing is left to find: another reconciliation hands over nothing.
	before := len(w.got.byTransaction())
	n := w.got.count(webhook.FromReconcile) + w.got.count(webhook.FromWebhook)
	w.reconcile()
	if after := w.got.count(webhook.FromReconcile) + w.got.count(webhook.FromWebhook); after != n || len(w.got.byTransaction()) != before {
		t.Errorf("a second reconciliation handed over %d more events", after-n)
	}
}

// TestForgedDeliveriesAreNeverHandedOver: deliveries about a transaction that does not
// exist, one of another account, or a change that did not happen are dropped.
func TestForgedDeliveriesAreNeverHandedOver(t *testing.T) {
	w := newWorld(t, webhook.Options{})
	id := w.create()
	w.settle()

	// A stranger's transaction: the partner's client cannot read it.
	stranger := client(t, w.srv, w.srv.AddCustomer("stranger@example.com"))
	other, err := stranger.Transactions.Create(t.Context(), &escrow.CreateTransactionRequest{
		Currency: escrow.USD, Description: "Not the marketplace's",
		Parties: []escrow.PartyInput{{Role: escrow.RoleBuyer, Customer: "me"}, {Role: escrow.RoleSeller, Customer: w.sellerMail}},
		Items: []escrow.ItemInput{{Title: "Lamp", Type: escrow.ItemGeneralMerchandise, Schedule: []escrow.ScheduleInput{
			{Amount: escrow.MustAmount("40"), PayerCustomer: "me", BeneficiaryCustomer: w.sellerMail}}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	forged := []string{
		`{"event": "create", "event_type": "transaction", "transaction_id": 999999}`,
		fmt.Sprintf(`{"event": "create", "event_type": "transaction", "transaction_id": %d}`, other.ID),
		fmt.Sprintf(`{"event": "payment_approved", "event_type": "transaction", "transaction_id": %d}`, id),
		fmt.Sprintf(`{"event": "ship", "event_type": "transaction", "transaction_id": %d}`, id),
		fmt.Sprintf(`{"event": "complete", "event_type": "transaction", "transaction_id": %d}`, id),
	}
	for _, body := range forged {
		if code := w.deliver(body); code != http.StatusOK {
			t.Errorf("%s: answered %d", body, code)
		}
	}
	for _, body := range []string{`{"event": "ship"`, `[]`, `{"event": "ship", "event_type": "transaction", "transaction_id": "x"}`} {
		if code := w.deliver(body); code != http.StatusBadRequest {
			t.Errorf("%s: answered %d, want 400", body, code)
		}
	}
	w.settle()
	got := w.got.byTransaction()
	if len(got) != 1 || strings.Join(got[id], " ") != "create" {
		t.Errorf("handed over %v; want only the real creation of %d", got, id)
	}
}

// TestSlowCallbackDoesNotHoldTheSender: with a callback that takes far longer than the
// emulator's webhook timeout, every delivery is still answered in time, and the events
// are handed over afterwards, in order.
func TestSlowCallbackDoesNotHoldTheSender(t *testing.T) {
	w := newWorld(t, webhook.Options{}, escrowtest.WithWebhookTimeout(250*time.Millisecond))
	w.got.delay = 100 * time.Millisecond // slower than 3 deliveries at once allow
	id := w.create()
	for _, s := range []step{buyerAgrees, sellerAgrees, funds, ships} {
		if err := s(w, id); err != nil {
			t.Fatal(err)
		}
	}
	w.settle()
	for _, d := range w.srv.Deliveries() {
		if d.StatusCode != http.StatusOK {
			t.Errorf("delivery %s answered %d (%s)", d.Event, d.StatusCode, d.Error)
		}
	}
	if got := strings.Join(w.got.byTransaction()[id], " "); got != "create agree payment_approved ship" {
		t.Errorf("handed over %q", got)
	}
}

// TestFailingCallbackIsRetriedWithoutBlockingOthers: a callback failing on one
// transaction's event is retried, and another transaction's events go on meanwhile.
func TestFailingCallbackIsRetriedWithoutBlockingOthers(t *testing.T) {
	w := newWorld(t, webhook.Options{})
	w.got.fail[escrow.EventAgree] = 3
	a := w.create()
	if err := buyerAgrees(w, a); err != nil {
		t.Fatal(err)
	}
	if err := sellerAgrees(w, a); err != nil {
		t.Fatal(err)
	}
	b := w.create()
	w.settle()
	got := w.got.byTransaction()
	if strings.Join(got[a], " ") != "create agree" || strings.Join(got[b], " ") != "create" {
		t.Errorf("handed over %v", got)
	}
}

// TestShutdownIsClean: after Shutdown, deliveries are refused with 503 and no goroutine of
// the handler is left (TestMain checks for leaks).
func TestShutdownIsClean(t *testing.T) {
	w := newWorld(t, webhook.Options{})
	w.got.delay = time.Hour // a callback that only ends when cancelled
	w.got.entered = make(chan struct{}, 1)
	id := w.create()
	// Shutdown drops never-seen ids still waiting for their fetch: wait until the
	// callback runs, so that the event is under way.
	select {
	case <-w.got.entered:
	case <-time.After(10 * time.Second):
		t.Fatal("the callback never began")
	}
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Millisecond)
	defer cancel()
	if err := w.h.Shutdown(ctx); err == nil {
		t.Error("Shutdown reported the stuck callback's event as processed")
	}
	body := fmt.Sprintf(`{"event": "create", "event_type": "transaction", "transaction_id": %d}`, id)
	if code := w.deliver(body); code != http.StatusServiceUnavailable {
		t.Errorf("delivery after shutdown answered %d", code)
	}
	done := make(chan error, 1)
	go func() { done <- w.h.RunReconciler(t.Context(), time.Hour) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("RunReconciler runs on after Shutdown")
	}
}

// TestEventBodies: ParseEvent's limits hold through the handler.
func TestEventBodies(t *testing.T) {
	w := newWorld(t, webhook.Options{})
	big := bytes.Repeat([]byte(" "), escrow.MaxEventBody+1)
	resp, err := http.Post(w.hook.URL, "application/json", bytes.NewReader(big))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Errorf("oversized body answered %d", resp.StatusCode)
	}
	req, _ := http.NewRequest(http.MethodGet, w.hook.URL, nil)
	if resp, err = http.DefaultClient.Do(req); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("GET answered %d", resp.StatusCode)
	}
}

// TestStateInvisibleEventsAreOnlyHints: events no state can show never reach the
// callback, whatever transaction they name; with OnUnconfirmedHint set, those naming a
// transaction the account reads arrive there, names validated, and nothing is kept.
func TestStateInvisibleEventsAreOnlyHints(t *testing.T) {
	var mu sync.Mutex
	hints := map[string]int{}
	w := newWorld(t, webhook.Options{OnUnconfirmedHint: func(_ context.Context, h webhook.Hint) {
		mu.Lock()
		defer mu.Unlock()
		if h.Transaction == nil || h.Transaction.ID != h.TransactionID {
			t.Errorf("hint without its transaction: %+v", h)
		}
		hints[string(h.Event)]++
	}})
	id := w.create()
	w.settle()
	for _, name := range []string{"payment_sent", "payment_refunded", "party_verification_approved", "funds_released_to_attacker",
		"Funds", strings.Repeat("a", 65), "a b", "x-y"} {
		for _, tx := range []int64{id, 999999} {
			if code := w.deliver(fmt.Sprintf(`{"event": %q, "event_type": "transaction", "transaction_id": %d}`, name, tx)); code != http.StatusOK {
				t.Errorf("%s: answered %d", name, code)
			}
		}
	}
	w.settle()
	if got := w.got.byTransaction(); len(got) != 1 || strings.Join(got[id], " ") != "create" {
		t.Errorf("handed over %v", got)
	}
	mu.Lock()
	defer mu.Unlock()
	want := map[string]int{"payment_sent": 1, "payment_refunded": 1, "party_verification_approved": 1, "funds_released_to_attacker": 1}
	if len(hints) != len(want) {
		t.Errorf("hints %v, want %v", hints, want)
	}
	for name := range want {
		if hints[name] < 1 {
			t.Errorf("no hint of %s: %v", name, hints)
		}
	}
}

// TestLateDeliveryHandsOverTheEnd: a late delivery of an early event of a transaction that
// ended meanwhile, every other delivery lost, hands over what its state shows, in order,
// up to the end; the transaction is then finished, and the reconciler hands over nothing
// more.
func TestLateDeliveryHandsOverTheEnd(t *testing.T) {
	store := new(webhook.MemoryStore)
	w := newWorld(t, webhook.Options{Store: store})
	w.reconcile()
	if err := w.srv.InjectFault(escrowtest.Fault{Endpoint: "WEBHOOK *", Drop: escrowtest.DropBefore}); err != nil {
		t.Fatal(err)
	}
	id := w.create()
	for _, s := range []step{buyerAgrees, sellerAgrees, partnerEnds} {
		if err := s(w, id); err != nil {
			t.Fatal(err)
		}
	}
	w.settle()
	w.deliver(fmt.Sprintf(`{"event": "agree", "event_type": "transaction", "transaction_id": %d}`, id))
	w.settle()
	if got := strings.Join(w.got.byTransaction()[id], " "); got != "create agree cancel" {
		t.Fatalf("handed over %q from a late delivery", got)
	}
	if ids, _ := store.Unfinished(t.Context()); slices.Contains(ids, id) {
		t.Errorf("%d still unfinished after its cancel was handed over", id)
	}
	w.reconcile()
	if got := strings.Join(w.got.byTransaction()[id], " "); got != "create agree cancel" {
		t.Errorf("handed over %q after reconciling", got)
	}
}

// TestRestartResumesFromTheStoredMark: a fresh handler over the same store finds a
// transaction created and ended while no handler ran, none of its deliveries arriving.
func TestRestartResumesFromTheStoredMark(t *testing.T) {
	store := new(webhook.MemoryStore)
	w := newWorld(t, webhook.Options{Store: store})
	w.reconcile()
	first := w.create()
	w.settle()
	if err := w.h.Shutdown(t.Context()); err != nil {
		t.Fatal(err)
	}
	// Down: every delivery fails (503); a transaction is made and cancelled.
	down := w.create()
	if err := partnerEnds(w, down); err != nil {
		t.Fatal(err)
	}
	w.h = webhook.NewHandler(w.partner, w.got.callback, webhook.Options{Store: store})
	w.reconcile()
	got := w.got.byTransaction()
	if strings.Join(got[down], " ") != "create cancel" || strings.Join(got[first], " ") != "create" {
		t.Errorf("after the restart: %v", got)
	}
}

// countingTransport counts a client's GET /transaction/{id} and its 429s.
type countingTransport struct {
	next          http.RoundTripper
	gets, limited atomic.Int64
}

func (c *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := c.next.RoundTrip(r)
	if r.Method == http.MethodGet && strings.Contains(r.URL.Path, "/transaction/") {
		c.gets.Add(1)
	}
	if err == nil && resp.StatusCode == http.StatusTooManyRequests {
		c.limited.Add(1)
	}
	return resp, err
}

// TestConfirmationsLeaveTheApplicationItsReserve: once the rate-limit window is down to
// the reserve, confirmations wait for its reset and the application's own call succeeds.
func TestConfirmationsLeaveTheApplicationItsReserve(t *testing.T) {
	srv := escrowtest.NewServer(escrowtest.WithClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)), escrowtest.WithRateLimit(10, time.Minute))
	defer srv.Close()
	p := srv.AddPartner("market@example.com")
	srv.AddCustomer("buyer@example.com")
	srv.AddCustomer("seller@example.com")
	app := client(t, srv, p)
	ct := &countingTransport{next: srv.Client().Transport}
	rc, err := escrow.NewClient(p.Email, p.APIKey, escrow.WithBaseURL(srv.URL), escrow.WithHTTPClient(&http.Client{Transport: ct}))
	if err != nil {
		t.Fatal(err)
	}
	got := &recorder{fail: map[escrow.EventName]int{}}
	h := webhook.NewHandler(rc, got.callback, webhook.Options{Workers: 1, Reserve: 2})
	hook := httptest.NewServer(h)
	defer hook.Close()
	defer func() {
		ctx, cancel := context.WithCancel(context.Background())
		cancel() // the handler waits a minute for the window; do not wait with it
		h.Shutdown(ctx)
	}()
	if _, err := app.Webhooks.Create(t.Context(), escrow.Me, hook.URL); err != nil {
		t.Fatal(err)
	}
	// Not answered as a partner, and its list of transactions unreadable, so that no
	// listing confirms these new transactions: each takes its own fetch.
	for _, f := range []escrowtest.Fault{
		{Endpoint: "GET /partner/transactions", Status: http.StatusForbidden},
		{Endpoint: "GET /transaction", Status: http.StatusServiceUnavailable},
	} {
		if err := srv.InjectFault(f); err != nil {
			t.Fatal(err)
		}
	}
	w := &world{t: t, partner: app, buyerEmail: "buyer@example.com", sellerMail: "seller@example.com"}
	var ids []int64
	for range 9 { // 9 of the 10 creations a window allows
		ids = append(ids, w.create())
	}
	if err := srv.FlushWebhooks(t.Context()); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for ct.gets.Load() < 8 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	time.Sleep(50 * time.Millisecond) // would a ninth fetch go out?
	if n := ct.gets.Load(); n != 8 || ct.limited.Load() != 0 {
		t.Fatalf("the handler fetched %d times (%d answered 429); want 8, leaving 2 of 10", n, ct.limited.Load())
	}
	for _, id := range ids[:2] {
		if _, err := app.Transactions.Get(t.Context(), id); err != nil {
			t.Errorf("the application's own call: %v", err)
		}
	}
}

// TestQueuedWorkSurvivesACrash: the reconciler moves its mark past a transaction only once
// the store tracks it, so a process that dies with that transaction still queued leaves
// it for the next one to find, even when it has ended.
func TestQueuedWorkSurvivesACrash(t *testing.T) {
	store := new(webhook.MemoryStore)
	w := newWorld(t, webhook.Options{Store: store})
	if err := w.srv.InjectFault(escrowtest.Fault{Endpoint: "WEBHOOK *", Drop: escrowtest.DropBefore}); err != nil {
		t.Fatal(err)
	}
	stuck := make(chan int64, 1)
	h1 := webhook.NewHandler(w.partner, func(ctx context.Context, ev webhook.ConfirmedEvent) error {
		stuck <- ev.TransactionID
		<-ctx.Done() // the only worker hangs until the process dies
		return ctx.Err()
	}, webhook.Options{Store: store, Workers: 1})
	if err := h1.Reconcile(t.Context()); err != nil { // marks where history ends
		t.Fatal(err)
	}
	busy := w.create()
	if err := h1.Reconcile(t.Context()); err != nil {
		t.Fatal(err)
	}
	if id := <-stuck; id != busy {
		t.Fatalf("stuck on %d", id)
	}
	ended := w.create()
	if err := partnerEnds(w, ended); err != nil {
		t.Fatal(err)
	}
	if err := h1.Reconcile(t.Context()); err != nil { // queues ended behind the stuck worker
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	h1.Shutdown(ctx) // dies with ended still queued

	w.reconcile() // a fresh handler over the same store
	got := w.got.byTransaction()
	if strings.Join(got[ended], " ") != "create cancel" || strings.Join(got[busy], " ") != "create" {
		t.Errorf("after the crash: %v", got)
	}
}

// TestSellerPaidBrokerFeeKeepsItOpen: a brokered sale whose seller pays the broker's fee is
// not complete when the goods are paid out; complete is handed over once the fee is paid
// out too, when the transaction really closes.
func TestSellerPaidBrokerFeeKeepsItOpen(t *testing.T) {
	w := newWorld(t, webhook.Options{})
	tx, err := w.partner.Transactions.Create(t.Context(), &escrow.CreateTransactionRequest{
		Currency: escrow.USD, Description: "A brokered bicycle",
		Parties: []escrow.PartyInput{{Role: escrow.RoleBuyer, Customer: w.buyerEmail}, {Role: escrow.RoleSeller, Customer: w.sellerMail}, {Role: escrow.RoleBroker, Customer: "me"}},
		Items: []escrow.ItemInput{
			{Title: "Bicycle", Type: escrow.ItemGeneralMerchandise, InspectionPeriod: escrow.Days(1),
				Schedule: []escrow.ScheduleInput{{Amount: escrow.MustAmount("900"), PayerCustomer: w.buyerEmail, BeneficiaryCustomer: w.sellerMail}}},
			{Type: escrow.ItemBrokerFee, Schedule: []escrow.ScheduleInput{{Amount: escrow.MustAmount("45"), PayerCustomer: w.sellerMail, BeneficiaryCustomer: "me"}}},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range []step{buyerAgrees, sellerAgrees, funds, sellerGivesBank, ships, receives, buyerAccepts} {
		if err := s(w, tx.ID); err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
	}
	w.settle()
	w.reconcile()
	if got := strings.Join(w.got.byTransaction()[tx.ID], " "); strings.Contains(got, "complete") {
		t.Fatalf("complete handed over while the broker's fee is owed: %s", got)
	}
	if _, err := w.partner.Transactions.SelectDisbursementMethod(t.Context(), tx.ID, &escrow.DisbursementMethod{
		Type: escrow.DisbursementWireTransfer, AccountName: "Market LLC", BankName: "Second Bank",
		BankSwiftCode: "EXAMUS33", BankAccountNumber: "9876543210",
	}); err != nil {
		t.Fatal(err)
	}
	w.settle()
	got := w.got.byTransaction()[tx.ID]
	if want := "create agree payment_approved ship receive accept payment_disbursed payment_disbursed complete"; strings.Join(got, " ") != want {
		t.Errorf("handed over %v, want %s", got, want)
	}
}

// TestRetryBeyondTheLeaseHandsOverUnderALiveClaim: a callback retried after a backoff
// longer than the lease is handed the event under a claim renewed for it, not one that
// already expired: a TxCallback commits only under a live claim, and another replica may
// take an expired lease over and hand the same event over too.
func TestRetryBeyondTheLeaseHandsOverUnderALiveClaim(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		api := newFakeAPI()
		api.txs[1] = created(1)
		var mu sync.Mutex
		var claims []time.Time // each call's claim's expiry
		h := webhook.NewHandler(api.client(t), func(_ context.Context, ev webhook.ConfirmedEvent) error {
			mu.Lock()
			defer mu.Unlock()
			claims = append(claims, ev.Claim.Expires)
			if len(claims) == 1 {
				if !ev.Claim.Expires.After(time.Now()) {
					t.Errorf("first hand-over's claim expires %v, not after now (%v)", ev.Claim.Expires, time.Now())
				}
				return errors.New("the shop's database is down")
			}
			if !ev.Claim.Expires.After(time.Now()) {
				t.Errorf("retried hand-over's claim expired at %v, before the call (%v)", ev.Claim.Expires, time.Now())
			}
			return nil
		}, webhook.Options{ClaimLease: time.Second, RetryWait: 4 * time.Second, MaxRetryWait: 4 * time.Second})
		defer shutdown(t, h)
		deliver(h, "create", 1)
		flushed(t, h)
		mu.Lock()
		defer mu.Unlock()
		if len(claims) != 2 {
			t.Errorf("%d calls, want 2 (a failure, its retry)", len(claims))
		}
	})
}

// TestNewsAtAnotherReplicaDuringAPaceWaitIsFetchedAtOnce: a replica whose replays wait for
// the transaction's pace does not hold its lease meanwhile, so news delivered to another
// replica during that wait is fetched and handed over there at once, not left to the
// waiting replica until its wait ends; the waiting replica, its wait over, does not hand it
// over again, nor take its turn's end for the deal's.
func TestNewsAtAnotherReplicaDuringAPaceWaitIsFetchedAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		api := newFakeAPI()
		api.txs[1] = created(1)
		store := storeWithCreateHandedOver(t)
		waiting, other := &calls{}, &calls{}
		a := webhook.NewHandler(api.client(t), waiting.fn, webhook.Options{Store: store})
		defer shutdown(t, a)
		b := webhook.NewHandler(api.client(t), other.fn, webhook.Options{Store: store})
		defer shutdown(t, b)
		const ms = time.Millisecond
		for range 12 { // fetched at 0, 250ms and 1.25s: the next wait is 4s
			deliver(a, "payment_disbursed", 1)
			time.Sleep(100 * ms)
		}
		time.Sleep(200 * ms)
		deliver(a, "payment_disbursed", 1) // at 1.4s: waits until 5.25s
		time.Sleep(100 * ms)
		api.set(agreed(1))
		deliver(b, "agree", 1) // at 1.5s, to the other replica: fetched at once
		synctest.Wait()
		if got := slices.Concat(waiting.list(), other.list()); !slices.Equal(got, []string{"agree:1"}) {
			t.Errorf("at once, handed over %v; want agree", got)
		}
		flushed(t, a)
		flushed(t, b)
		if got := slices.Concat(waiting.list(), other.list()); !slices.Equal(got, []string{"agree:1"}) {
			t.Errorf("after the wait, handed over %v; want agree once", got)
		}
		if ids, err := store.Unfinished(t.Context()); err != nil || !slices.Equal(ids, []int64{1}) {
			t.Errorf("unfinished %v, %v; want the open deal", ids, err)
		}
	})
}

// TestReplicaTakingOverConfirmsWhatWasLeftToTheDeadHolder: names delivered to a replica
// while another held the lease are left to the holder; when that holder dies and the lease
// runs out, the replica that takes the transaction over confirms them as deliveries
// (FromWebhook) and passes their hints on, not as facts only the state showed.
func TestReplicaTakingOverConfirmsWhatWasLeftToTheDeadHolder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		api := newFakeAPI()
		api.txs[1] = created(1)
		store := new(webhook.MemoryStore)
		t0 := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
		entered, stuck := make(chan struct{}), make(chan struct{})
		dead := webhook.NewHandler(api.client(t), func(ctx context.Context, ev webhook.ConfirmedEvent) error {
			close(entered)
			select { // hangs, as a process that died holding the lease
			case <-stuck:
			case <-ctx.Done():
			}
			return errors.New("gone")
		}, webhook.Options{Store: store, Now: func() time.Time { return t0 }, MaxAttempts: 1})
		var mu sync.Mutex
		now := t0
		var got []string
		var hints []string
		b := webhook.NewHandler(api.client(t), func(_ context.Context, ev webhook.ConfirmedEvent) error {
			mu.Lock()
			defer mu.Unlock()
			got = append(got, fmt.Sprintf("%s:%s", ev.Name, ev.Source))
			return nil
		}, webhook.Options{Store: store, Now: func() time.Time {
			mu.Lock()
			defer mu.Unlock()
			return now
		}, OnUnconfirmedHint: func(_ context.Context, h webhook.Hint) {
			mu.Lock()
			defer mu.Unlock()
			hints = append(hints, string(h.Event))
		}})
		defer shutdown(t, b)
		deliver(dead, "create", 1)
		<-entered // the dead replica holds the lease
		api.set(agreed(1))
		deliver(b, "agree", 1) // left to the holder
		deliver(b, "payment_sent", 1)
		flushed(t, b)
		mu.Lock()
		now = t0.Add(3 * time.Minute) // the lease ran out
		mu.Unlock()
		deliver(b, "create", 1)
		flushed(t, b)
		mu.Lock()
		slices.Sort(got)
		if want := []string{"agree:webhook", "create:webhook"}; !slices.Equal(got, want) {
			t.Errorf("handed over %v, want %v", got, want)
		}
		if !slices.Equal(hints, []string{"payment_sent"}) {
			t.Errorf("hints %v, want payment_sent", hints)
		}
		mu.Unlock()
		close(stuck)
		shutdown(t, dead)
	})
}

// TestRetryAfterTheLeaseWasTakenOverHandsNothingOver: a replica whose retry comes after its
// lease ran out, and another replica took the transaction over, leaves the transaction to
// the new holder: the event is handed over once, by the holder, not by both.
func TestRetryAfterTheLeaseWasTakenOverHandsNothingOver(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		api := newFakeAPI()
		api.txs[1] = created(1)
		store := new(webhook.MemoryStore)
		first := &calls{failFirst: 1}
		a := webhook.NewHandler(api.client(t), first.fn, webhook.Options{Store: store, ClaimLease: time.Second, RetryWait: 4 * time.Second, MaxRetryWait: 4 * time.Second})
		defer shutdown(t, a)
		second := &calls{block: make(chan struct{})}
		b := webhook.NewHandler(api.client(t), second.fn, webhook.Options{Store: store})
		defer shutdown(t, b)
		deliver(a, "create", 1) // fails; retried after 2 to 4s
		time.Sleep(1500 * time.Millisecond)
		deliver(b, "create", 1) // a's lease ran out: b takes the transaction over
		time.Sleep(3 * time.Second)
		flushed(t, a) // a's retry came while b's callback runs
		close(second.block)
		flushed(t, b)
		if !slices.Equal(first.list(), []string{"create:1"}) || !slices.Equal(second.list(), []string{"create:1"}) {
			t.Errorf("the first replica handed over %v, the holder %v; want the failed create, then the holder's alone", first.list(), second.list())
		}
	})
}

// TestNamesLeftDuringARetryWaitAreConfirmedByTheRetry: a delivery that reaches another
// replica while the lease's holder waits to retry is left to the holder, which confirms it
// with its retry (fetching the transaction again), not lost with the turn's end.
func TestNamesLeftDuringARetryWaitAreConfirmedByTheRetry(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		api := newFakeAPI()
		api.txs[1] = created(1)
		store := new(webhook.MemoryStore)
		var mu sync.Mutex
		var got []string
		a := webhook.NewHandler(api.client(t), func(_ context.Context, ev webhook.ConfirmedEvent) error {
			mu.Lock()
			got = append(got, string(ev.Name))
			n := len(got)
			mu.Unlock()
			if n == 1 {
				time.Sleep(3 * time.Second) // a slow failure: the retry comes past half the lease
				return errors.New("the shop's database is down")
			}
			return nil
		}, webhook.Options{Store: store, ClaimLease: 5 * time.Second, RetryWait: 1500 * time.Millisecond, MaxRetryWait: 1500 * time.Millisecond})
		defer shutdown(t, a)
		other := &calls{}
		b := webhook.NewHandler(api.client(t), other.fn, webhook.Options{Store: store})
		defer shutdown(t, b)
		deliver(a, "create", 1) // fails at 3s; retried at 3.75 to 4.5s, within the lease
		time.Sleep(3500 * time.Millisecond)
		api.set(agreed(1))
		deliver(b, "agree", 1) // left to a, which holds the lease
		flushed(t, b)
		flushed(t, a)
		mu.Lock()
		defer mu.Unlock()
		if !slices.Equal(got, []string{"create", "create", "agree"}) || len(other.list()) != 0 {
			t.Errorf("the holder handed over %v, the other replica %v; want create (failed), create, agree by the holder", got, other.list())
		}
	})
}

// TestRetryAfterAnotherReplicaHandedTheEventOverSkipsIt: a replica whose lease ran out
// during its retry wait, while another replica took the transaction over, handed its event
// over and let the lease go, takes the lease again for its retry and does not hand the
// event over a second time.
func TestRetryAfterAnotherReplicaHandedTheEventOverSkipsIt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		api := newFakeAPI()
		api.txs[1] = created(1)
		store := new(webhook.MemoryStore)
		first := &calls{failFirst: 1}
		a := webhook.NewHandler(api.client(t), first.fn, webhook.Options{Store: store, ClaimLease: time.Second, RetryWait: 4 * time.Second, MaxRetryWait: 4 * time.Second})
		defer shutdown(t, a)
		second := &calls{}
		b := webhook.NewHandler(api.client(t), second.fn, webhook.Options{Store: store})
		defer shutdown(t, b)
		deliver(a, "create", 1) // fails; retried after 2 to 4s
		time.Sleep(1500 * time.Millisecond)
		deliver(b, "create", 1) // a's lease ran out: b hands create over
		flushed(t, b)
		flushed(t, a)
		if !slices.Equal(first.list(), []string{"create:1"}) || !slices.Equal(second.list(), []string{"create:1"}) {
			t.Errorf("the first replica handed over %v, the other %v; want the failed create, then the other's alone", first.list(), second.list())
		}
	})
}

// storeCalls counts one replica's calls about transactions of a Store that other
// replicas share (not those of the never-seen ids' listing lease, a negative id).
type storeCalls struct {
	webhook.Store
	n atomic.Int64
}

func (s *storeCalls) Acquire(ctx context.Context, l webhook.Lease, names []escrow.EventName, now time.Time) (webhook.Turn, error) {
	if l.TransactionID > 0 {
		s.n.Add(1)
	}
	return s.Store.Acquire(ctx, l, names, now)
}

func (s *storeCalls) Yield(ctx context.Context, y webhook.Yield) (webhook.Turn, error) {
	if y.TransactionID > 0 {
		s.n.Add(1)
	}
	return s.Store.Yield(ctx, y)
}

// TestTurnThatGoesOnKeepsItsLeaseWithoutRenewing: a turn that goes on because another
// replica left it a delivery, after a callback that took most of the lease, gets its new
// expiry from the Yield that goes on: it confirms that delivery without one more store
// call to renew the lease (with a database store, a commit).
func TestTurnThatGoesOnKeepsItsLeaseWithoutRenewing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		api := newFakeAPI()
		api.txs[1] = created(1)
		shared := new(webhook.MemoryStore)
		store := &storeCalls{Store: shared}
		holder := &calls{block: make(chan struct{})}
		a := webhook.NewHandler(api.client(t), holder.fn, webhook.Options{Store: store})
		defer shutdown(t, a)
		other := &calls{}
		b := webhook.NewHandler(api.client(t), other.fn, webhook.Options{Store: shared})
		defer shutdown(t, b)
		deliver(a, "create", 1)
		synctest.Wait() // a's callback holds the lease
		api.set(agreed(1))
		deliver(b, "agree", 1) // left to a
		flushed(t, b)
		time.Sleep(90 * time.Second) // of the lease's 2 minutes
		close(holder.block)
		flushed(t, a)
		if n := store.n.Load(); n != 3 || !slices.Equal(holder.list(), []string{"create:1", "agree:1"}) {
			t.Errorf("%d store calls, handed over %v; want 3 (the lease, a turn that goes on, its end) and create, agree", n, holder.list())
		}
	})
}

// TestHintLeftDuringATurnIsPassedOnFromItsState: a hint delivered to another replica
// during the holder's turn is left to the holder, which passes it on from the state it
// fetched, without another fetch; and the turn that goes on for it leaves an open deal
// unfinished, for the reconciler to look at again.
func TestHintLeftDuringATurnIsPassedOnFromItsState(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		api := newFakeAPI()
		api.txs[1] = created(1)
		store := new(webhook.MemoryStore)
		var mu sync.Mutex
		var hints []string
		holder := &calls{block: make(chan struct{})}
		a := webhook.NewHandler(api.client(t), holder.fn, webhook.Options{Store: store, OnUnconfirmedHint: func(_ context.Context, h webhook.Hint) {
			mu.Lock()
			defer mu.Unlock()
			hints = append(hints, fmt.Sprintf("%s:%d", h.Event, h.TransactionID))
		}})
		defer shutdown(t, a)
		other := &calls{}
		b := webhook.NewHandler(api.client(t), other.fn, webhook.Options{Store: store, OnUnconfirmedHint: func(context.Context, webhook.Hint) {
			t.Error("the other replica passed a hint on")
		}})
		defer shutdown(t, b)
		deliver(a, "create", 1)
		synctest.Wait()               // a's callback holds the lease
		deliver(b, "payment_sent", 1) // left to a
		flushed(t, b)
		close(holder.block)
		flushed(t, a)
		mu.Lock()
		defer mu.Unlock()
		if !slices.Equal(hints, []string{"payment_sent:1"}) || api.readsOf(1) != 1 {
			t.Errorf("hints %v after %d fetches; want payment_sent after the one", hints, api.readsOf(1))
		}
		if ids, err := store.Unfinished(t.Context()); err != nil || !slices.Equal(ids, []int64{1}) {
			t.Errorf("unfinished %v, %v; want the open deal", ids, err)
		}
	})
}

// TestItemEventReplayAtAnotherReplicaCostsNoFetch: once one replica handed over the
// shipping of a deal's only good, a replay of that delivery at another replica sharing the
// store is dropped without a fetch: the store knows how many goods the deal has, so it
// knows every one of them shipped.
func TestItemEventReplayAtAnotherReplicaCostsNoFetch(t *testing.T) {
	api := newFakeAPI()
	tx := agreed(1)
	tx.Items[0].Status = escrow.ItemStatus{Shipped: true}
	api.set(tx)
	store := new(webhook.MemoryStore)
	first, second := &calls{}, &calls{}
	a := webhook.NewHandler(api.client(t), first.fn, webhook.Options{Store: store})
	defer shutdown(t, a)
	deliver(a, "ship", 1)
	flushed(t, a)
	b := webhook.NewHandler(api.client(t), second.fn, webhook.Options{Store: store})
	defer shutdown(t, b)
	deliver(b, "ship", 1)
	flushed(t, b)
	if r := api.readsOf(1); r != 1 || !slices.Contains(first.list(), "ship:1") || len(second.list()) != 0 {
		t.Errorf("%d fetches; handed over %v, then %v; want one fetch, ship handed over once", r, first.list(), second.list())
	}
}

// TestPassedHintIsNoUnconfirmedDelivery: a hint passed to OnUnconfirmedHint is not also
// warned of as a delivery the transaction does not show: a warning per hint would bury
// the real ones.
func TestPassedHintIsNoUnconfirmedDelivery(t *testing.T) {
	api := newFakeAPI()
	api.txs[1] = created(1)
	var log logtest.Lines
	var mu sync.Mutex
	var hints []string
	h := webhook.NewHandler(api.client(t), (&calls{}).fn, webhook.Options{
		Logger: slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelDebug})),
		OnUnconfirmedHint: func(_ context.Context, h webhook.Hint) {
			mu.Lock()
			defer mu.Unlock()
			hints = append(hints, string(h.Event))
		}})
	defer shutdown(t, h)
	deliver(h, "payment_sent", 1)
	flushed(t, h)
	mu.Lock()
	defer mu.Unlock()
	if !slices.Equal(hints, []string{"payment_sent"}) {
		t.Errorf("hints %v, want payment_sent", hints)
	}
	if n := log.Count("dropped as unconfirmed"); n != 0 {
		t.Errorf("%d hints warned of as unconfirmed deliveries:\n%s", n, log.String())
	}
}

// TestHintLeftToAReplicaWithoutAReceiverIsDropped: a hint another replica (one with
// OnUnconfirmedHint) left to the holder of the lease, which has none, is dropped there:
// replicas configured apart, as in a rolling deploy, do not bring the holder down.
func TestHintLeftToAReplicaWithoutAReceiverIsDropped(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		api := newFakeAPI()
		api.txs[1] = created(1)
		store := new(webhook.MemoryStore)
		holder := &calls{block: make(chan struct{})}
		a := webhook.NewHandler(api.client(t), holder.fn, webhook.Options{Store: store})
		defer shutdown(t, a)
		b := webhook.NewHandler(api.client(t), (&calls{}).fn, webhook.Options{Store: store, OnUnconfirmedHint: func(context.Context, webhook.Hint) {
			t.Error("the other replica passed a hint on")
		}})
		defer shutdown(t, b)
		deliver(a, "create", 1)
		synctest.Wait()               // a's callback holds the lease
		deliver(b, "payment_sent", 1) // left to a
		flushed(t, b)
		close(holder.block)
		flushed(t, a)
		if got := holder.list(); !slices.Equal(got, []string{"create:1"}) {
			t.Errorf("handed over %v, want create", got)
		}
	})
}

// TestFailedCallbackIsRetriedDespiteAReplay: an event whose callback failed is retried
// after the backoff even when a replay of another event of the batch arrives during the
// wait: the replay needs no fetch, but the failed event is still to be handed over.
func TestFailedCallbackIsRetriedDespiteAReplay(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		api := newFakeAPI()
		api.txs[1] = agreed(1)
		var mu sync.Mutex
		var got []string
		h := webhook.NewHandler(api.client(t), func(_ context.Context, ev webhook.ConfirmedEvent) error {
			mu.Lock()
			defer mu.Unlock()
			got = append(got, string(ev.Name))
			if ev.Name == "agree" && len(got) == 2 {
				return errors.New("the shop's database is down")
			}
			return nil
		}, webhook.Options{RetryWait: time.Second, MaxRetryWait: time.Second})
		defer shutdown(t, h)
		deliver(h, "create", 1) // the state shows create and agree; agree's callback fails
		time.Sleep(100 * time.Millisecond)
		deliver(h, "create", 1) // a replay, during the retry's wait
		flushed(t, h)
		mu.Lock()
		defer mu.Unlock()
		if !slices.Equal(got, []string{"create", "agree", "agree"}) || api.readsOf(1) != 1 {
			t.Errorf("handed over %v after %d fetches; want create, agree (failed), agree after one fetch", got, api.readsOf(1))
		}
	})
}

// TestRetryOfAFailedFetchFindingTheEventHandedOverIsObservedAsDuplicate: a replica whose
// fetch failed, and whose lease ran out during the retry wait while another replica handed
// the event over, drops its delivery at the retry without a fetch and reports it to the
// Observer as a duplicate: the delivery is not lost from the dashboards.
func TestRetryOfAFailedFetchFindingTheEventHandedOverIsObservedAsDuplicate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		api := newFakeAPI()
		api.txs[1] = created(1)
		store := new(webhook.MemoryStore)
		obs := &recordingObserver{}
		first := &calls{}
		a := webhook.NewHandler(api.client(t), first.fn, webhook.Options{Store: store, Observer: obs, ClaimLease: time.Second, RetryWait: 4 * time.Second, MaxRetryWait: 4 * time.Second})
		defer shutdown(t, a)
		second := &calls{}
		b := webhook.NewHandler(api.client(t), second.fn, webhook.Options{Store: store})
		defer shutdown(t, b)
		api.setStatus(1, http.StatusBadGateway)
		deliver(a, "create", 1) // its fetch fails: retried after 2 to 4s
		synctest.Wait()
		api.setStatus(1, 0)
		time.Sleep(1500 * time.Millisecond)
		deliver(b, "create", 1) // a's lease ran out: b hands create over
		flushed(t, b)
		flushed(t, a)
		if len(first.list()) != 0 || !slices.Equal(second.list(), []string{"create:1"}) {
			t.Errorf("the first replica handed over %v, the other %v; want the other's create alone", first.list(), second.list())
		}
		if got := obs.outcomes(); !slices.Equal(got, []string{"create:1=duplicate"}) {
			t.Errorf("the first replica observed %v; want its delivery reported a duplicate", got)
		}
		if n := api.readsOf(1); n != 2 {
			t.Errorf("fetched %d times; want the failed fetch and the other replica's", n)
		}
	})
}

// TestClaimsTriedBeforeWaitForTheirShare: deliveries naming events that a fetch did not
// confirm (replays of real ids with names their state does not show), spread over many
// transactions, spend at most ClaimShare of each window (2% of 100: two fetches); the
// others wait for the next window, while a real event of another transaction, a name not
// tried since its last new fact, is fetched and handed over at once.
func TestClaimsTriedBeforeWaitForTheirShare(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		api := newFakeAPI()
		api.header = http.Header{"Ratelimit-Limit": {"100"}, "Ratelimit-Remaining": {"99"}, "Ratelimit-Reset": {"60"}}
		const replayed = 4
		for id := range int64(replayed + 1) {
			api.txs[id+1] = created(id + 1)
		}
		got := &calls{}
		h := webhook.NewHandler(api.client(t), got.fn, webhook.Options{ClaimShare: 0.02})
		defer shutdown(t, h)
		for id := range int64(replayed + 1) {
			deliver(h, "create", id+1)
		}
		flushed(t, h)
		reads := func() (n int) {
			for id := range int64(replayed) {
				n += api.readsOf(id + 1)
			}
			return n
		}
		created := reads() // a fetch each, or none: a listing may have confirmed them
		for id := range int64(replayed) {
			deliver(h, "agree", id+1) // not tried yet: fetched at once, shows nothing new
		}
		flushed(t, h)
		time.Sleep(time.Second) // past each transaction's pace
		for id := range int64(replayed) {
			deliver(h, "agree", id+1) // tried: a claim, within the claims' share
		}
		synctest.Wait()
		if n := reads() - created; n != replayed+2 {
			t.Errorf("%d reads of the replayed transactions, want %d: the claims' share is two", n, replayed+2)
		}
		api.set(agreed(replayed + 1))
		deliver(h, "agree", replayed+1)
		synctest.Wait()
		if l := got.list(); l[len(l)-1] != fmt.Sprintf("agree:%d", replayed+1) {
			t.Errorf("handed over %v; want the real agree at once", l)
		}
		time.Sleep(time.Minute) // the next window: the claims left are fetched
		flushed(t, h)
		if n := reads() - created; n != 2*replayed {
			t.Errorf("%d reads after the window, want %d", n, 2*replayed)
		}
	})
}

// TestClosedTransactionsClaimsCostNoFetch: once a transaction's complete is handed over its
// state changes no more, so deliveries naming any event of it, even one never shown
// (reject, ship_return), are dropped without a fetch.
func TestClosedTransactionsClaimsCostNoFetch(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		api := newFakeAPI()
		done := sale(3, item(31, escrow.ItemGeneralMerchandise, true))
		done.CloseDate, _ = escrow.ParseTimestamp("2024-05-04T12:00:00Z")
		api.txs[3] = done
		got := &calls{}
		h := webhook.NewHandler(api.client(t), got.fn, webhook.Options{})
		defer shutdown(t, h)
		deliver(h, "complete", 3)
		flushed(t, h)
		for _, name := range []string{"reject", "ship_return", "cancel", "agree"} {
			deliver(h, name, 3)
			flushed(t, h)
		}
		if n := api.readsOf(3); n != 1 {
			t.Errorf("%d reads of a closed transaction, want the one that handed it over (%v)", n, got.list())
		}
	})
}

// TestAnyNameAboutATransactionWhoseLastFetchFoundNothingIsAClaim: once a transaction's fetch
// found nothing new, deliveries about it are claims whatever name they carry, one never
// tried included: a replayer rotating through every event name spends the claims' share
// (2% of 100: two fetches) and no more.
func TestAnyNameAboutATransactionWhoseLastFetchFoundNothingIsAClaim(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		api := newFakeAPI()
		api.header = http.Header{"Ratelimit-Limit": {"100"}, "Ratelimit-Remaining": {"99"}, "Ratelimit-Reset": {"60"}}
		const replayed = 4
		h := webhook.NewHandler(api.client(t), (&calls{}).fn, webhook.Options{ClaimShare: 0.02})
		defer shutdown(t, h)
		for id := range int64(replayed) {
			api.set(created(id + 1))
			deliver(h, "create", id+1)
		}
		flushed(t, h)
		created := 0 // a fetch each, or none: a listing may have confirmed them
		for id := range int64(replayed) {
			created += api.readsOf(id + 1)
		}
		for id := range int64(replayed) {
			deliver(h, "agree", id+1) // its last fetch found create: fetched at once, finds nothing
		}
		flushed(t, h)
		time.Sleep(time.Second) // past each transaction's pace
		for id := range int64(replayed) {
			deliver(h, "reject", id+1) // never tried, but a claim
		}
		synctest.Wait()
		n := -created
		for id := range int64(replayed) {
			n += api.readsOf(id + 1)
		}
		if n != replayed+2 {
			t.Errorf("%d reads, want %d: the claims' share is two", n, replayed+2)
		}
		time.Sleep(time.Minute) // the next window: the claims left are fetched
		flushed(t, h)
	})
}

// stalledStore is a MemoryStore whose Acquire waits until release is closed, as a
// database whose connections are all taken; entered receives each call that waits.
type stalledStore struct {
	webhook.MemoryStore
	entered chan struct{}
	release chan struct{}
}

func (s *stalledStore) Acquire(ctx context.Context, l webhook.Lease, names []escrow.EventName, now time.Time) (webhook.Turn, error) {
	select {
	case s.entered <- struct{}{}:
	default: // nobody counts past the first
	}
	select {
	case <-s.release:
	case <-ctx.Done():
		return webhook.Turn{}, ctx.Err()
	}
	return s.MemoryStore.Acquire(ctx, l, names, now)
}

// stalledAPI holds every request until release is closed, as an API that stopped
// answering; entered receives each request held.
type stalledAPI struct {
	next    http.RoundTripper
	entered chan struct{}
	release chan struct{}
}

func (a *stalledAPI) RoundTrip(r *http.Request) (*http.Response, error) {
	select {
	case a.entered <- struct{}{}:
	default: // nobody counts past the first
	}
	select {
	case <-a.release:
	case <-r.Context().Done():
		return nil, r.Context().Err()
	}
	return a.next.RoundTrip(r)
}

// TestDeliveriesAnsweredWhileEveryWorkerWaits: with every worker held by the store (a
// never-seen id's turn) or by the API (its confirming fetch), deliveries are
// still answered 200 at once, for ids known, never seen and already queued: the sender
// waits at most 10 s and never sends again, so ServeHTTP must wait on no worker. Once the
// store and the API answer, every delivery is handed over.
func TestDeliveriesAnsweredWhileEveryWorkerWaits(t *testing.T) {
	fake := newFakeAPI()
	for id := int64(1); id <= 60; id++ {
		fake.txs[id] = created(id)
	}
	api := &stalledAPI{next: fake, entered: make(chan struct{}, 100), release: make(chan struct{})}
	store := &stalledStore{entered: make(chan struct{}, 100), release: make(chan struct{})}
	got := &calls{}
	h := webhook.NewHandler(clientOver(t, api), got.fn, webhook.Options{Store: store, Workers: 2})
	defer shutdown(t, h)
	release := sync.OnceFunc(func() { close(store.release); close(api.release) })
	defer release()         // before the shutdown, whatever failed
	deliver(h, "create", 1) // a never-seen id: its look-up is held by the store
	deliver(h, "create", 2)
	for range 2 { // both workers wait
		select {
		case <-store.entered:
		case <-api.entered:
		case <-time.After(10 * time.Second):
			t.Fatal("the two workers did not both reach the store or the API: one waits on something else")
		}
	}
	answered := make(chan int)
	go func() {
		for id := int64(1); id <= 60; id++ {
			answered <- deliver(h, "create", id)
		}
		close(answered)
	}()
	deadline := time.After(5 * time.Second)
	for n := 0; n < 60; n++ {
		select {
		case code := <-answered:
			if code != http.StatusOK {
				t.Errorf("a delivery answered %d while the workers waited, want 200", code)
			}
		case <-deadline:
			t.Fatalf("%d of 60 deliveries answered while the workers waited; the others are lost", n)
		}
	}
	release()
	flushed(t, h)
	if n := len(got.list()); n != 60 {
		t.Errorf("%d hand-overs, want 60", n)
	}
}

package webhook_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	escrow "github.com/escrowkit/escrow-go"
	"github.com/escrowkit/escrow-go/escrowtest"
	"github.com/escrowkit/escrow-go/webhook"
)

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
}

// recorder is a callback that remembers what it was handed, and can be told to fail or
// to be slow.
type recorder struct {
	mu     sync.Mutex
	events []webhook.ConfirmedEvent
	fail   map[escrow.EventName]int // failures left per event
	delay  time.Duration
}

func (r *recorder) callback(ctx context.Context, ev webhook.ConfirmedEvent) error {
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
	w.h = webhook.NewHandler(w.partner, w.got.callback, opt)
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

func TestEveryStateChangeOnceWithoutLoss(t *testing.T) {
	w := newWorld(t, webhook.Options{})
	w.reconcile() // at startup, as RunReconciler does
	want := w.run(2)
	w.settle()
	if n := w.got.count(webhook.FromReconcile); n != 0 {
		t.Errorf("%d events came from reconciliation with no delivery lost", n)
	}
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
	id := w.create()
	if err := w.srv.FlushWebhooks(t.Context()); err != nil {
		t.Fatal(err)
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

// TestLateDeliveryDoesNotFinish: when the only delivery that arrives is an early one,
// processed after the transaction ended, the transaction stays unfinished in the store
// and the reconciler hands over the rest.
func TestLateDeliveryDoesNotFinish(t *testing.T) {
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
	if got := strings.Join(w.got.byTransaction()[id], " "); got != "create agree" {
		t.Fatalf("handed over %q before reconciling", got)
	}
	if ids, _ := store.Unfinished(t.Context()); !slices.Contains(ids, id) {
		t.Fatalf("the late delivery marked %d finished: unfinished %v", id, ids)
	}
	w.reconcile()
	if got := strings.Join(w.got.byTransaction()[id], " "); got != "create agree cancel" {
		t.Errorf("handed over %q", got)
	}
	if ids, _ := store.Unfinished(t.Context()); slices.Contains(ids, id) {
		t.Errorf("%d still unfinished after its cancel was handed over", id)
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
	// Not answered as a partner, so that no listing confirms these new transactions:
	// each takes its own fetch.
	if err := srv.InjectFault(escrowtest.Fault{Endpoint: "GET /partner/transactions", Status: http.StatusForbidden}); err != nil {
		t.Fatal(err)
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

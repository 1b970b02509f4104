package storetest

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	escrow "github.com/escrowkit/escrow-go"
	"github.com/escrowkit/escrow-go/escrowtest"
	"github.com/escrowkit/escrow-go/webhook"
)

// RunReplicas checks Handlers sharing the Store that fresh returns, against the emulator:
// deliveries alternating between two replicas hand every fact over once and in order; a
// delivery reaching one replica while the other confirms the transaction costs no fetch
// and is handed over by the holder; a holder that dies is taken over when its lease ends;
// a late delivery for a pruned transaction hands nothing over again.
func RunReplicas(t *testing.T, fresh func(t *testing.T) webhook.Store) {
	t.Run("AlternatingDeliveriesHandEachFactOnce", func(t *testing.T) { alternating(t, fresh(t)) })
	t.Run("DeliveryElsewhereDuringATurnCostsNoFetch", func(t *testing.T) { deliveryElsewhere(t, fresh(t)) })
	t.Run("DeadHolderIsTakenOver", func(t *testing.T) { deadHandler(t, fresh(t)) })
	t.Run("PrunedTransactionIsNotHandedOverAgain", func(t *testing.T) { prunedNotAgain(t, fresh(t)) })
}

// market is a partner's marketplace on the emulator, with replicas receiving for it.
type market struct {
	t                     *testing.T
	srv                   *escrowtest.Server
	partner               *escrow.Client
	buyerMail, sellerMail string
	account               escrowtest.Account // the partner's
	store                 webhook.Store

	mu      sync.Mutex
	handed  map[int64][]string // event names per transaction, as handed over
	block   map[string]chan struct{}
	blocked chan string // the names of callbacks that block, as they do
}

func newMarket(t *testing.T, s webhook.Store) *market {
	srv := escrowtest.NewServer()
	t.Cleanup(srv.Close)
	p, b, se := srv.AddPartner("market@example.com"), srv.AddCustomer("buyer@example.com"), srv.AddCustomer("seller@example.com")
	m := &market{t: t, srv: srv, buyerMail: b.Email, sellerMail: se.Email, account: p, store: s,
		handed: map[int64][]string{}, block: map[string]chan struct{}{}, blocked: make(chan string, 16)}
	m.partner = m.client(p, nil)
	return m
}

func (m *market) client(a escrowtest.Account, fetches *atomic.Int64) *escrow.Client {
	hc := m.srv.Client()
	if fetches != nil {
		hc = &http.Client{Transport: &countingTransport{next: hc.Transport, n: fetches}}
	}
	c, err := escrow.NewClient(a.Email, a.APIKey, escrow.WithBaseURL(m.srv.URL), escrow.WithHTTPClient(hc))
	if err != nil {
		m.t.Fatal(err)
	}
	return c
}

// countingTransport counts the fetches of one transaction (GET /transaction/{id}).
type countingTransport struct {
	next http.RoundTripper
	n    *atomic.Int64
}

var transactionPath = regexp.MustCompile(`/transaction/\d+$`)

func (c *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Method == http.MethodGet && transactionPath.MatchString(r.URL.Path) {
		c.n.Add(1)
	}
	return c.next.RoundTrip(r)
}

// replica is one receiving process: a Handler and the fetches it made.
type replica struct {
	h       *webhook.Handler
	fetches atomic.Int64
}

// start runs a replica over the market's store (or s, if given), as the partner.
func (m *market) start(name string, s webhook.Store, lease time.Duration) *replica {
	if s == nil {
		s = m.store
	}
	rp := &replica{}
	rp.h = webhook.NewHandler(m.client(m.account, &rp.fetches), m.callback, webhook.Options{
		Store: s, Replica: name, ClaimLease: lease,
		RetryWait: time.Millisecond, MaxRetryWait: 5 * time.Millisecond,
		Refetch: 10 * time.Millisecond, MaxRefetch: 40 * time.Millisecond,
	})
	m.t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		rp.h.Shutdown(ctx)
	})
	return rp
}

func (m *market) callback(ctx context.Context, ev webhook.ConfirmedEvent) error {
	m.mu.Lock()
	ch := m.block[string(ev.Name)]
	m.mu.Unlock()
	if ch != nil {
		m.blocked <- string(ev.Name)
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for range max(1, len(ev.ItemIDs)) {
		m.handed[ev.TransactionID] = append(m.handed[ev.TransactionID], string(ev.Name))
	}
	return nil
}

// waitBlocked waits for a callback to block, for up to 10 s.
func (m *market) waitBlocked() {
	m.t.Helper()
	select {
	case <-m.blocked:
	case <-time.After(10 * time.Second):
		m.t.Fatal("no callback was handed the event")
	}
}

func (m *market) handedOf(id int64) string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return strings.Join(m.handed[id], " ")
}

// deliver hands a delivery to a replica, as the API would send it.
func deliver(rp *replica, id int64, name string) {
	body := fmt.Sprintf(`{"event": %q, "event_type": "transaction", "transaction_id": %d}`, name, id)
	req := httptest.NewRequest(http.MethodPost, "/escrow", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	rp.h.ServeHTTP(httptest.NewRecorder(), req)
}

func flush(t *testing.T, rps ...*replica) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	for range 2 { // a turn at one may leave work to another
		for _, rp := range rps {
			if err := rp.h.Flush(ctx); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// sale creates a sale and returns its id.
func (m *market) sale() int64 {
	tx, err := m.partner.Transactions.Create(m.t.Context(), &escrow.CreateTransactionRequest{
		Currency: escrow.USD, Description: "A bicycle",
		Parties: []escrow.PartyInput{{Role: escrow.RoleBuyer, Customer: m.buyerMail}, {Role: escrow.RoleSeller, Customer: m.sellerMail}},
		Items: []escrow.ItemInput{{
			Title: "Bicycle", Type: escrow.ItemGeneralMerchandise, InspectionPeriod: escrow.Days(1),
			Schedule: []escrow.ScheduleInput{{Amount: escrow.MustAmount("250.00"), PayerCustomer: m.buyerMail, BeneficiaryCustomer: m.sellerMail}},
		}},
	})
	if err != nil {
		m.t.Fatal(err)
	}
	return tx.ID
}

// act moves a transaction one step on and returns the event it announces.
func (m *market) act(id int64, step string) {
	m.t.Helper()
	ctx := m.t.Context()
	var err error
	switch step {
	case "agree":
		for _, who := range []string{m.buyerMail, m.sellerMail} {
			if _, err = m.partner.Transactions.Act(ctx, id, &escrow.ActionRequest{Action: escrow.ActionAgree}, escrow.AsCustomer(who)); err != nil {
				break
			}
		}
	case "payment_approved":
		err = m.srv.ApprovePayment(id)
	case "ship":
		_, err = m.partner.Transactions.Act(ctx, id, &escrow.ActionRequest{Action: escrow.ActionShip}, escrow.AsCustomer(m.sellerMail))
	case "receive":
		_, err = m.partner.Transactions.Act(ctx, id, &escrow.ActionRequest{Action: escrow.ActionReceive}, escrow.AsCustomer(m.buyerMail))
	case "cancel":
		_, err = m.partner.Transactions.Cancel(ctx, id, "out of stock")
	default:
		m.t.Fatalf("unknown step %s", step)
	}
	if err != nil {
		m.t.Fatalf("%s: %v", step, err)
	}
}

var saleSteps = []string{"agree", "payment_approved", "ship", "receive"}

// alternating: the deliveries of three sales go to two replicas in turn, as a load
// balancer sends them, each delivered as soon as its step is taken; every fact is handed
// over once, in order, and the replicas together fetch no more than once per delivery.
func alternating(t *testing.T, s webhook.Store) {
	m := newMarket(t, s)
	rps := []*replica{m.start("a", nil, time.Minute), m.start("b", nil, time.Minute)}
	deliveries := 0
	send := func(id int64, name string) {
		deliver(rps[deliveries%2], id, name)
		deliveries++
	}
	var ids []int64
	for range 3 {
		id := m.sale()
		ids = append(ids, id)
		send(id, "create")
		for _, step := range saleSteps {
			m.act(id, step)
			send(id, step)
		}
	}
	flush(t, rps...)
	want := "create agree payment_approved ship receive"
	for _, id := range ids {
		if got := m.handedOf(id); got != want {
			t.Errorf("transaction %d: handed over %q, want %q", id, got, want)
		}
	}
	if f := rps[0].fetches.Load() + rps[1].fetches.Load(); f > int64(deliveries) {
		t.Errorf("%d fetches for %d deliveries", f, deliveries)
	}
}

// deliveryElsewhere: while replica a's callback holds a transaction's turn, deliveries
// of it at b cost b no fetch; a confirms them when its turn ends, and nothing is handed
// over twice.
func deliveryElsewhere(t *testing.T, s webhook.Store) {
	m := newMarket(t, s)
	a, b := m.start("a", nil, time.Minute), m.start("b", nil, time.Minute)
	release := make(chan struct{})
	m.block["create"] = release
	id := m.sale()
	deliver(a, id, "create")
	m.waitBlocked() // a holds the turn, in the callback
	m.act(id, "agree")
	for range 3 {
		deliver(b, id, "agree")
		deliver(b, id, "create")
	}
	flush(t, b)
	if n := b.fetches.Load(); n != 0 {
		t.Errorf("b fetched %d times while a held the turn; want none", n)
	}
	close(release)
	flush(t, a, b)
	if got := m.handedOf(id); got != "create agree" {
		t.Errorf("handed over %q, want create agree", got)
	}
	if n := a.fetches.Load(); n != 2 {
		t.Errorf("a fetched %d times; want 2: its own delivery, then once more for b's", n)
	}
}

// deadHandler: replica a dies in the middle of a turn (its callback never returns and it
// records nothing); a delivery at b meanwhile is left to a; once the lease has ended, the
// next delivery at b takes the transaction over and b hands over what a never finished
// and what was left to it, once.
func deadHandler(t *testing.T, s webhook.Store) {
	m := newMarket(t, s)
	const lease = 300 * time.Millisecond
	dying := &silenced{Store: s}
	a, b := m.start("a", dying, lease), m.start("b", nil, lease)
	hang := make(chan struct{})
	defer close(hang)
	m.block["create"] = hang
	id := m.sale()
	deliver(a, id, "create")
	<-m.blocked            // a holds the turn, in the callback
	dying.dead.Store(true) // from now on a writes nothing: a crashed process
	m.mu.Lock()
	delete(m.block, "create") // b's callback goes through
	m.mu.Unlock()
	m.act(id, "agree")
	deliver(b, id, "agree") // a's lease is live: left to a, which is dead
	flush(t, b)
	if got := m.handedOf(id); got != "" || b.fetches.Load() != 0 {
		t.Fatalf("during a's lease, b handed over %q after %d fetches; want nothing", got, b.fetches.Load())
	}
	time.Sleep(lease)
	deliver(b, id, "create") // a replay, after the lease: b takes over, with the agree left to a
	flush(t, b)
	if got := m.handedOf(id); got != "create agree" {
		t.Errorf("after a's lease ended, handed over %q, want create agree", got)
	}
}

// silenced is a Store that, once dead, ends no turn: the process crashed.
type silenced struct {
	webhook.Store
	dead atomic.Bool
}

func (s *silenced) Yield(ctx context.Context, y webhook.Yield) (webhook.Turn, error) {
	if s.dead.Load() {
		return webhook.Turn{}, context.Canceled
	}
	return s.Store.Yield(ctx, y)
}

// prunedNotAgain: a cancelled sale is handed over and pruned; replayed deliveries of it
// at either replica hand nothing over and cost no fetch.
func prunedNotAgain(t *testing.T, s webhook.Store) {
	m := newMarket(t, s)
	a, b := m.start("a", nil, time.Minute), m.start("b", nil, time.Minute)
	id := m.sale()
	m.act(id, "cancel")
	deliver(a, id, "cancel")
	flush(t, a)
	if got := m.handedOf(id); got != "create cancel" {
		t.Fatalf("handed over %q, want create cancel", got)
	}
	if n, err := s.Prune(t.Context(), time.Now().Add(time.Second)); err != nil || n != 1 {
		t.Fatalf("Prune = %d, %v; want the cancelled sale", n, err)
	}
	before := a.fetches.Load() + b.fetches.Load()
	for _, rp := range []*replica{a, b} {
		deliver(rp, id, "create")
		deliver(rp, id, "cancel")
	}
	flush(t, a, b)
	if got := m.handedOf(id); got != "create cancel" {
		t.Errorf("after replays of a pruned transaction: handed over %q", got)
	}
	if n := a.fetches.Load() + b.fetches.Load() - before; n != 0 {
		t.Errorf("replays of a pruned transaction cost %d fetches", n)
	}
}

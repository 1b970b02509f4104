package sqlstore_test

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	escrow "github.com/escrowkit/escrow-go"
	"github.com/escrowkit/escrow-go/escrowtest"
	"github.com/escrowkit/escrow-go/internal/pgtest"
	"github.com/escrowkit/escrow-go/webhook"
	"github.com/escrowkit/escrow-go/webhook/sqlstore"
)

// market is a broker's marketplace on the emulator, receiving its webhooks through replicas
// of one receiver over one store. Every delivery that arrives goes to every replica that
// is up; 30% of the emulator's calls are lost on the way.
type market struct {
	t                      *testing.T
	srv                    *escrowtest.Server
	partner, buyer, seller *escrow.Client
	stranger               *escrow.Client
	buyerMail, sellerMail  string
	dsn                    string

	mu       sync.Mutex
	replicas map[string]*replica // up, by name
	hook     *httptest.Server
	hints    atomic.Int64
}

// replica is one receiver process: its own database handle, Handler and reconciler.
type replica struct {
	name   string
	store  *dyingStore
	db     *sqlstore.Store
	h      *webhook.Handler
	cancel context.CancelFunc
	done   chan struct{}
}

// dyingStore is a Store that stops ending turns once its process is "killed": a crashed
// process releases nothing, so its leases must be taken over when they end.
type dyingStore struct {
	*sqlstore.Store
	dead atomic.Bool
}

func (d *dyingStore) Yield(ctx context.Context, y webhook.Yield) (webhook.Turn, error) {
	if d.dead.Load() {
		return webhook.Turn{}, nil
	}
	return d.Store.Yield(ctx, y)
}

func newMarket(t *testing.T, dsn string) *market {
	srv := escrowtest.NewServer(escrowtest.WithSeed(16), escrowtest.WithRateLimit(0, time.Minute))
	t.Cleanup(srv.Close)
	p := srv.AddPartner("market@example.com")
	b, s := srv.AddCustomer("buyer@example.com"), srv.AddCustomer("seller@example.com")
	m := &market{
		t: t, srv: srv, dsn: dsn,
		partner: apiClient(t, srv, p), buyer: apiClient(t, srv, b), seller: apiClient(t, srv, s),
		stranger:  apiClient(t, srv, srv.AddCustomer("stranger@example.com")),
		buyerMail: b.Email, sellerMail: s.Email,
		replicas: make(map[string]*replica),
	}
	if _, err := m.partner.Customers.Get(t.Context(), escrow.Me); err != nil {
		t.Fatal(err)
	}
	m.hook = httptest.NewServer(http.HandlerFunc(m.fanOut))
	t.Cleanup(m.hook.Close)
	if _, err := m.partner.Webhooks.Create(t.Context(), escrow.Me, m.hook.URL+"/escrow"); err != nil {
		t.Fatal(err)
	}
	if err := srv.InjectFault(escrowtest.Fault{Endpoint: "WEBHOOK *", Probability: 0.3, Drop: escrowtest.DropBefore}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	s0, err := sqlstore.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer s0.Close()
	seq := "seq BIGSERIAL PRIMARY KEY"
	if s0.Dialect() == sqlstore.SQLite {
		seq = "seq INTEGER PRIMARY KEY AUTOINCREMENT"
	}
	if _, err := s0.DB().ExecContext(ctx, `CREATE TABLE handed (`+seq+`, transaction_id BIGINT NOT NULL, event TEXT NOT NULL,
		item_id BIGINT NOT NULL, source TEXT NOT NULL, replica TEXT NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	return m
}

func apiClient(t *testing.T, srv *escrowtest.Server, a escrowtest.Account) *escrow.Client {
	t.Helper()
	c, err := escrow.NewClient(a.Email, a.APIKey, escrow.WithBaseURL(srv.URL), escrow.WithHTTPClient(srv.Client()))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// fanOut is the webhook URL: it hands every delivery to every replica that is up.
func (m *market) fanOut(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	m.mu.Lock()
	up := make([]*replica, 0, len(m.replicas))
	for _, rp := range m.replicas {
		up = append(up, rp)
	}
	m.mu.Unlock()
	status := http.StatusServiceUnavailable
	for _, rp := range up {
		rec := httptest.NewRecorder()
		req := httptest.NewRequestWithContext(r.Context(), http.MethodPost, "/escrow", strings.NewReader(string(body)))
		req.Header.Set("Content-Type", "application/json")
		rp.h.ServeHTTP(rec, req)
		status = rec.Code
	}
	w.WriteHeader(status)
}

// start runs a fresh replica process over the shared store: a new database handle, a
// new Handler (a new owner of claims) and its reconciler.
func (m *market) start(name string) *replica {
	t := m.t
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	db, err := sqlstore.Open(ctx, m.dsn)
	if err != nil {
		t.Fatal(err)
	}
	rp := &replica{name: name, db: db, store: &dyingStore{Store: db}, done: make(chan struct{})}
	insert := `INSERT INTO handed (transaction_id, event, item_id, source, replica) VALUES ($1, $2, $3, $4, $5)`
	if db.Dialect() == sqlstore.SQLite {
		insert = `INSERT INTO handed (transaction_id, event, item_id, source, replica) VALUES (?, ?, ?, ?, ?)`
	}
	record := db.TxCallback(func(ctx context.Context, tx *sql.Tx, ev webhook.ConfirmedEvent) error {
		if rand.N(4) == 0 { // a slow side effect: a kill may land in the middle of it
			select {
			case <-time.After(time.Duration(rand.N(3)+1) * time.Millisecond):
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		items := ev.ItemIDs
		if len(items) == 0 {
			items = []int64{0}
		}
		for _, it := range items {
			if _, err := tx.ExecContext(ctx, insert,
				ev.TransactionID, string(ev.Name), it, string(ev.Source), name); err != nil {
				return err
			}
		}
		return nil
	})
	logger := slog.New(slog.DiscardHandler)
	if dir := os.Getenv("ESCROW_TEST_LOGDIR"); dir != "" { // for a run that failed: every replica's log
		f, err := os.Create(filepath.Join(dir, name+".log"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		logger = slog.New(slog.NewTextHandler(f, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	rp.h = webhook.NewHandler(m.partner, record, webhook.Options{
		Store: rp.store, Logger: logger, Replica: name + fmt.Sprint("-", time.Now().UnixNano()),
		Workers: 4, MaxAttempts: 40,
		RetryWait: 2 * time.Millisecond, MaxRetryWait: 40 * time.Millisecond,
		Refetch: 2 * time.Millisecond, MaxRefetch: 30 * time.Millisecond,
		ClaimLease:        time.Second,
		OnUnconfirmedHint: func(context.Context, webhook.Hint) { m.hints.Add(1) },
	})
	rctx, rcancel := context.WithCancel(context.Background())
	rp.cancel = rcancel
	go func() {
		defer close(rp.done)
		rp.h.RunReconciler(rctx, 150*time.Millisecond)
	}()
	m.mu.Lock()
	m.replicas[name] = rp
	m.mu.Unlock()
	return rp
}

// kill ends a replica as a crash would: it gets no more deliveries, its callbacks are
// cancelled mid-way (their transactions roll back) and it releases none of its claims.
func (m *market) kill(rp *replica) {
	m.mu.Lock()
	delete(m.replicas, rp.name)
	m.mu.Unlock()
	rp.store.dead.Store(true)
	rp.cancel()
	<-rp.done
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // no grace: whatever runs is cut short
	rp.h.Shutdown(ctx)
	rp.db.Close()
}

// stop ends a replica cleanly, after its queued work.
func (m *market) stop(rp *replica) {
	m.mu.Lock()
	delete(m.replicas, rp.name)
	m.mu.Unlock()
	rp.cancel()
	<-rp.done
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := rp.h.Shutdown(ctx); err != nil {
		m.t.Errorf("Shutdown %s: %v", rp.name, err)
	}
	rp.db.Close()
}

// path is one way a transaction goes, and the facts it leaves: per event, how many
// distinct items (0 for an event of the whole transaction).
type path struct {
	name    string
	create  func(m *market) *escrow.CreateTransactionRequest
	run     func(m *market, tx *escrow.Transaction) error
	want    map[string]int
	ordered bool // events come in the lifecycle order (not so for milestones, item by item)
}

func (m *market) goods(amount string) escrow.ItemInput {
	return escrow.ItemInput{
		Title: "Bicycle", Type: escrow.ItemGeneralMerchandise, InspectionPeriod: escrow.Days(1),
		Schedule: []escrow.ScheduleInput{{Amount: escrow.MustAmount(amount), PayerCustomer: m.buyerMail, BeneficiaryCustomer: m.sellerMail}},
	}
}

func (m *market) brokerFee(payer string) escrow.ItemInput {
	return escrow.ItemInput{Type: escrow.ItemBrokerFee, Schedule: []escrow.ScheduleInput{{Amount: escrow.MustAmount("25.00"), PayerCustomer: payer, BeneficiaryCustomer: "me"}}}
}

func (m *market) sale(items ...escrow.ItemInput) *escrow.CreateTransactionRequest {
	return &escrow.CreateTransactionRequest{Currency: escrow.USD, Description: "A sale",
		Parties: []escrow.PartyInput{{Role: escrow.RoleBuyer, Customer: m.buyerMail}, {Role: escrow.RoleSeller, Customer: m.sellerMail}},
		Items:   items}
}

func (m *market) brokered(items ...escrow.ItemInput) *escrow.CreateTransactionRequest {
	r := m.sale(items...)
	r.Parties = append(r.Parties, escrow.PartyInput{Role: escrow.RoleBroker, Customer: "me"})
	return r
}

func (m *market) act(id int64, as string, a escrow.Action) error {
	_, err := m.partner.Transactions.Act(m.t.Context(), id, &escrow.ActionRequest{Action: a}, escrow.AsCustomer(as))
	return err
}

func (m *market) agreeAndFund(id int64) error {
	if err := m.act(id, m.buyerMail, escrow.ActionAgree); err != nil {
		return err
	}
	if err := m.act(id, m.sellerMail, escrow.ActionAgree); err != nil {
		return err
	}
	return m.srv.ApprovePayment(id)
}

func (m *market) sellerBank(id int64) error {
	_, err := m.seller.Transactions.SelectDisbursementMethod(m.t.Context(), id, &escrow.DisbursementMethod{
		Type: escrow.DisbursementACH, AccountName: "Seller", AccountType: "savings",
		BankABARoutingNumber: "121000248", BankAccountNumber: "12345678", BankName: "First Bank",
	})
	return err
}

func (m *market) brokerBank(id int64) error {
	_, err := m.partner.Transactions.SelectDisbursementMethod(m.t.Context(), id, &escrow.DisbursementMethod{
		Type: escrow.DisbursementWireTransfer, AccountName: "Market LLC", BankName: "Second Bank",
		BankSwiftCode: "EXAMUS33", BankAccountNumber: "9876543210",
	})
	return err
}

func steps(fs ...func() error) error {
	for i, f := range fs {
		if err := f(); err != nil {
			return fmt.Errorf("step %d: %w", i, err)
		}
	}
	return nil
}

func (m *market) paths() []path {
	ctx := m.t.Context()
	return []path{
		{"sale", func(m *market) *escrow.CreateTransactionRequest { return m.sale(m.goods("250")) },
			func(m *market, tx *escrow.Transaction) error {
				id := tx.ID
				return steps(func() error { return m.agreeAndFund(id) }, func() error { return m.sellerBank(id) },
					func() error { return m.act(id, m.sellerMail, escrow.ActionShip) },
					func() error { return m.act(id, m.buyerMail, escrow.ActionReceive) },
					func() error { _, err := m.buyer.Transactions.Accept(ctx, id); return err })
			},
			map[string]int{"create": 0, "agree": 0, "payment_approved": 0, "ship": 1, "receive": 1, "accept": 1, "payment_disbursed": 1, "complete": 0}, true},
		{"brokered, seller pays the fee", func(m *market) *escrow.CreateTransactionRequest {
			return m.brokered(m.goods("900"), m.brokerFee(m.sellerMail))
		},
			func(m *market, tx *escrow.Transaction) error {
				id := tx.ID
				return steps(func() error { return m.agreeAndFund(id) }, func() error { return m.sellerBank(id) },
					func() error { return m.act(id, m.sellerMail, escrow.ActionShip) },
					func() error { return m.act(id, m.buyerMail, escrow.ActionReceive) },
					func() error { _, err := m.buyer.Transactions.Accept(ctx, id); return err },
					// The goods are paid out; the broker's fee is not until it names a bank.
					func() error {
						if got, err := m.partner.Transactions.Get(ctx, id); err != nil || !got.CloseDate.IsZero() {
							return fmt.Errorf("closed before the broker fee was paid out (%v)", err)
						}
						return nil
					},
					func() error { return m.brokerBank(id) })
			},
			map[string]int{"create": 0, "agree": 0, "payment_approved": 0, "ship": 1, "receive": 1, "accept": 1, "payment_disbursed": 2, "complete": 0}, true},
		{"milestones, seller pays the fee", func(m *market) *escrow.CreateTransactionRequest {
			due := m.srv.Now().AddDate(0, 1, 0)
			ms := func(title, amount string) escrow.ItemInput {
				return escrow.ItemInput{Title: title, Type: escrow.ItemMilestone, InspectionPeriod: escrow.Days(1),
					Schedule: []escrow.ScheduleInput{{Amount: escrow.MustAmount(amount), PayerCustomer: m.buyerMail, BeneficiaryCustomer: m.sellerMail, DueDate: escrow.Timestamp{Time: due}}}}
			}
			return m.brokered(ms("Design", "500"), ms("Build", "1500"), ms("Launch", "300"), m.brokerFee(m.sellerMail))
		},
			func(m *market, tx *escrow.Transaction) error {
				id := tx.ID
				if err := steps(func() error { return m.agreeAndFund(id) }, func() error { return m.sellerBank(id) }, func() error { return m.brokerBank(id) }); err != nil {
					return err
				}
				for _, it := range tx.Items {
					if it.Type != escrow.ItemMilestone {
						continue
					}
					on := func(as string, a escrow.Action) func() error {
						return func() error {
							_, err := m.partner.Transactions.ActOnItem(ctx, id, it.ID, &escrow.ActionRequest{Action: a}, escrow.AsCustomer(as))
							return err
						}
					}
					if err := steps(on(m.sellerMail, escrow.ActionShip), on(m.buyerMail, escrow.ActionReceive), func() error {
						_, err := m.buyer.Transactions.ActOnItem(ctx, id, it.ID, &escrow.ActionRequest{Action: escrow.ActionAccept})
						return err
					}); err != nil {
						return err
					}
				}
				return nil
			},
			map[string]int{"create": 0, "agree": 0, "payment_approved": 0, "ship": 3, "receive": 3, "accept": 3, "payment_disbursed": 4, "complete": 0}, false},
		{"returned", func(m *market) *escrow.CreateTransactionRequest { return m.sale(m.goods("120")) },
			func(m *market, tx *escrow.Transaction) error {
				id := tx.ID
				return steps(func() error { return m.agreeAndFund(id) },
					func() error { return m.act(id, m.sellerMail, escrow.ActionShip) },
					func() error { return m.act(id, m.buyerMail, escrow.ActionReceive) },
					func() error { return m.act(id, m.buyerMail, escrow.ActionReject) },
					func() error { return m.act(id, m.buyerMail, escrow.ActionShipReturn) },
					func() error { return m.act(id, m.sellerMail, escrow.ActionReceiveReturn) },
					func() error { _, err := m.seller.Transactions.AcceptReturn(ctx, id); return err })
			},
			map[string]int{"create": 0, "agree": 0, "payment_approved": 0, "ship": 1, "receive": 1, "reject": 1, "ship_return": 1, "receive_return": 1, "accept_return": 1, "complete": 0}, true},
		{"cancelled", func(m *market) *escrow.CreateTransactionRequest { return m.sale(m.goods("60")) },
			func(m *market, tx *escrow.Transaction) error {
				_, err := m.partner.Transactions.Cancel(ctx, tx.ID, "out of stock")
				return err
			},
			map[string]int{"create": 0, "cancel": 0}, true},
		{"cancelled after agreement", func(m *market) *escrow.CreateTransactionRequest {
			return m.brokered(m.goods("80"), m.brokerFee(m.buyerMail))
		},
			func(m *market, tx *escrow.Transaction) error {
				return steps(func() error { return m.act(tx.ID, m.buyerMail, escrow.ActionAgree) },
					func() error { return m.act(tx.ID, m.sellerMail, escrow.ActionAgree) },
					func() error { _, err := m.partner.Transactions.Cancel(ctx, tx.ID, "changed their mind"); return err })
			},
			map[string]int{"create": 0, "agree": 0, "cancel": 0}, true},
	}
}

// lifecycleOrder ranks events for the order check.
var lifecycleOrder = []string{"create", "agree", "payment_approved", "ship", "receive", "accept", "reject",
	"ship_return", "receive_return", "accept_return", "reject_return", "payment_disbursed", "complete", "cancel"}

// forger sends deliveries no state confirms, of many kinds, straight to the webhook URL.
type forger struct {
	m                             *market
	completed, cancelled, ongoing []int64
	strangers                     []int64
	n                             int
	kinds                         map[string]int
}

func (f *forger) send(count int) {
	m := f.m
	pick := func(ids []int64) int64 {
		if len(ids) == 0 {
			return 1 << 40
		}
		return ids[rand.N(len(ids))]
	}
	for range count {
		var kind, event string
		var id int64
		switch f.n % 13 {
		case 0:
			kind, event, id = "payment_refunded on a sale", "payment_refunded", pick(f.completed)
		case 1:
			kind, event, id = "payment_sent", "payment_sent", pick(f.ongoing)
		case 2:
			kind, event, id = "invented name", "funds_released_to_attacker", pick(f.completed)
		case 3:
			kind, event, id = "verification", "party_verification_approved", pick(f.ongoing)
		case 4:
			kind, event, id = "complete of a cancelled one", "complete", pick(f.cancelled)
		case 5:
			kind, event, id = "cancel of a completed one", "cancel", pick(f.completed)
		case 6:
			kind, event, id = "ship of a cancelled one", "ship", pick(f.cancelled)
		case 7:
			kind, event, id = "unknown transaction", "create", 1<<40+int64(f.n)
		case 8:
			kind, event, id = "another account's transaction", "create", pick(f.strangers)
		case 9:
			kind, event, id = "accept_return of a sale", "accept_return", pick(f.completed)
		case 10:
			kind, event, id = "unique invented names", fmt.Sprintf("x_%d", f.n), pick(f.ongoing)
		case 11:
			kind, event, id = "invalid names", strings.Repeat("Z", 70+f.n%50), pick(f.ongoing)
		case 12:
			kind, event, id = "reject of a completed sale", "reject", pick(f.completed)
		}
		f.n++
		f.kinds[kind]++
		body := fmt.Sprintf(`{"event": %q, "event_type": "transaction", "transaction_id": %d}`, event, id)
		resp, err := http.Post(m.hook.URL+"/escrow", "application/json", strings.NewReader(body))
		if err != nil {
			m.t.Fatal(err)
		}
		resp.Body.Close()
	}
}

// TestReplicasRestartsAndForgers: two replicas over one PostgreSQL store receive every
// delivery that arrives (30% are lost), one is killed and restarted mid-run, both are down
// while transactions are created and ended, and 1,000 forged deliveries of 13 kinds come
// in. Over 54 lifecycles of every path, each fact is handed over once, none is lost and
// nothing forged is handed over.
func TestReplicasRestartsAndForgers(t *testing.T) {
	pgtest.Need(t, pg, pgErr)
	runMarket(t, pg.NewDatabase(t), true)
}

// TestRestartsAndForgersOnSQLite: the same with one process over a SQLite file, killed
// mid-run and restarted after transactions were created and ended while it was down.
func TestRestartsAndForgersOnSQLite(t *testing.T) {
	runMarket(t, "sqlite:"+filepath.Join(t.TempDir(), "hooks.db"), false)
}

func runMarket(t *testing.T, dsn string, twoReplicas bool) {
	m := newMarket(t, dsn)
	live := []*replica{m.start("a")}
	if twoReplicas {
		live = append(live, m.start("b"))
	}
	f := &forger{m: m, kinds: map[string]int{}}
	st, err := m.stranger.Transactions.Create(t.Context(), &escrow.CreateTransactionRequest{Currency: escrow.USD, Description: "Not the market's",
		Parties: []escrow.PartyInput{{Role: escrow.RoleBuyer, Customer: "me"}, {Role: escrow.RoleSeller, Customer: m.sellerMail}},
		Items: []escrow.ItemInput{{Title: "Lamp", Type: escrow.ItemGeneralMerchandise, Schedule: []escrow.ScheduleInput{
			{Amount: escrow.MustAmount("40"), PayerCustomer: "me", BeneficiaryCustomer: m.sellerMail}}}}})
	if err != nil {
		t.Fatal(err)
	}
	f.strangers = append(f.strangers, st.ID)

	paths := m.paths()
	const rounds = 9
	want := make(map[int64]path)
	var downIDs []int64
	for r := range rounds {
		switch {
		case twoReplicas && r == 3:
			m.kill(live[1]) // mid-run, claims held and callbacks cut short
			live = live[:1]
		case twoReplicas && r == 5, !twoReplicas && r == 3:
			m.kill(live[0]) // nobody receives: what happens now is found only through the store's mark
			live = nil
		case twoReplicas && r == 7:
			live = []*replica{m.start("a2"), m.start("b2")}
		case !twoReplicas && r == 5:
			live = []*replica{m.start("a2")}
		}
		down := len(live) == 0
		for _, p := range paths {
			tx, err := m.partner.Transactions.Create(t.Context(), p.create(m))
			if err != nil {
				t.Fatalf("%s: create: %v", p.name, err)
			}
			if down {
				downIDs = append(downIDs, tx.ID)
			}
			f.ongoing = append(f.ongoing, tx.ID)
			if err := p.run(m, tx); err != nil {
				t.Fatalf("%s (%d): %v", p.name, tx.ID, err)
			}
			want[tx.ID] = p
			if _, ok := p.want["cancel"]; ok {
				f.cancelled = append(f.cancelled, tx.ID)
			} else {
				f.completed = append(f.completed, tx.ID)
			}
			f.send(1000 / (rounds * len(paths)))
		}
	}
	f.send(1000 - f.n)

	// Let everything land: the emulator's calls, both replicas' queues, and reconciliations
	// until a full one finds nothing more.
	ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
	defer cancel()
	if err := m.srv.FlushWebhooks(ctx); err != nil {
		t.Fatal(err)
	}
	time.Sleep(1200 * time.Millisecond) // the killed replicas' leases end
	m.mu.Lock()
	m.replicas = map[string]*replica{}
	m.mu.Unlock()
	for _, rp := range live {
		rp.cancel()
		<-rp.done
	}
	for range 3 {
		for _, rp := range live {
			if err := rp.h.Reconcile(ctx); err != nil {
				t.Fatal(err)
			}
		}
		for _, rp := range live {
			if err := rp.h.Flush(ctx); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, rp := range live {
		m.stop(rp)
	}

	// What reached the application, through the callback's own database transactions.
	store, err := sqlstore.Open(t.Context(), m.dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	rows, err := store.DB().QueryContext(t.Context(), `SELECT transaction_id, event, item_id, source, replica FROM handed ORDER BY seq`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	type key struct {
		tx    int64
		event string
		item  int64
	}
	seen := map[key]int{}
	byTx := map[int64][]string{}
	bySource, byReplica := map[string]int{}, map[string]int{}
	for rows.Next() {
		var k key
		var src, rep string
		if err := rows.Scan(&k.tx, &k.event, &k.item, &src, &rep); err != nil {
			t.Fatal(err)
		}
		seen[k]++
		byTx[k.tx] = append(byTx[k.tx], k.event)
		bySource[src]++
		byReplica[rep]++
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	duplicates, lost, forged := 0, 0, 0
	for k, n := range seen {
		if n > 1 {
			duplicates += n - 1
			t.Errorf("transaction %d: %s (item %d) handed over %d times", k.tx, k.event, k.item, n)
		}
		p, ok := want[k.tx]
		if _, expected := p.want[k.event]; !ok || !expected {
			forged++
			t.Errorf("transaction %d: %s handed over, never happened", k.tx, k.event)
		}
	}
	for id, p := range want {
		for ev, items := range p.want {
			got := 0
			for k := range seen {
				if k.tx == id && k.event == ev {
					got++
				}
			}
			if items == 0 {
				items = 1
			}
			if got < items {
				lost += items - got
				t.Errorf("transaction %d (%s): %s handed over for %d of %d items: %v", id, p.name, ev, got, items, byTx[id])
			}
		}
		if p.ordered {
			rank := func(ev string) int { return slices.Index(lifecycleOrder, ev) }
			for i := 1; i < len(byTx[id]); i++ {
				if rank(byTx[id][i]) < rank(byTx[id][i-1]) {
					t.Errorf("transaction %d (%s): out of order: %v", id, p.name, byTx[id])
					break
				}
			}
		}
	}
	lost2 := 0
	for _, id := range downIDs {
		if len(byTx[id]) == 0 {
			lost2++
		}
	}
	lostDeliveries := 0
	for _, d := range m.srv.Deliveries() {
		if d.Error != "" {
			lostDeliveries++
		}
	}
	t.Logf("%d lifecycles (%d while no replica ran), %d deliveries (%d lost by the network), %d forged of %d kinds, %d hints; handed over %d facts %v by %v; duplicates %d, lost %d, forged handed over %d",
		len(want), len(downIDs), len(m.srv.Deliveries()), lostDeliveries, f.n, len(f.kinds), m.hints.Load(), len(seen), bySource, byReplica, duplicates, lost, forged)
	if len(want) < 50 || len(f.kinds) < 10 || f.n < 1000 || lost2 != 0 {
		t.Errorf("the run was too small or missed the transactions made while down: %d lifecycles, %d kinds, %d forged, %d down-time transactions with nothing", len(want), len(f.kinds), f.n, lost2)
	}
	if bySource["reconcile"] == 0 || lostDeliveries == 0 {
		t.Error("nothing was lost, so nothing was tested")
	}
}

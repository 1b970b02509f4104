package bench

import (
	"context"
	"database/sql"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	escrow "github.com/escrowkit/escrow-go"
	"github.com/escrowkit/escrow-go/escrowtest"
	"github.com/escrowkit/escrow-go/internal/pgtest"
	"github.com/escrowkit/escrow-go/webhook"
	"github.com/escrowkit/escrow-go/webhook/sqlstore"
)

// ReceiveConfig is a receiving run: Replicas webhook.Handlers over one Store, each
// delivery sent to one of them in turn, as a load balancer sends them.
type ReceiveConfig struct {
	Replicas int
	// Store is "memory" (one process only: the replicas share one MemoryStore), "sqlite"
	// (a file in Dir) or a postgres:// URL of a server where the run may create databases.
	Store string
	// Dir holds the SQLite files.
	Dir string
	// Lifecycles is how many sales are taken from creation to completion (8 facts each),
	// by Workers goroutines at once.
	Lifecycles, Workers int
	// Gap is a pause between the steps of a sale, so that each delivery reaches a receiver
	// that is not busy with the one before (the live API's steps are minutes apart); 0
	// makes every sale a burst, as fast as the emulator goes.
	Gap time.Duration
	// ServerCPU, when set, tells the processor time the store's server has used so far
	// (pgtest's server on this machine), for the phases' store CPU per fact.
	ServerCPU func() (time.Duration, error)
	// CPUProfile, when set, names a file that gets a CPU profile of the catch-up phase
	// (suffixed with the replica count: "cpu.prof.4").
	CPUProfile string
	// StoreConns, when above 0, is how many connections each replica's PostgreSQL store
	// uses at most (sqlstore.PostgresConns otherwise).
	StoreConns int
	// APILatency delays each of the replicas' API calls by this much before it is sent, as
	// a network between the receiver and the live API does (the emulator answers in about
	// a millisecond); the market's own calls are not delayed.
	APILatency time.Duration
	// TxCallback has each replica's callback record an order in the store's database, in
	// the transaction that records the event (sqlstore.Store.TxCallback); SQL stores only.
	TxCallback bool
}

// ReceiveResult is what a receiving run measured, live and catching up.
type ReceiveResult struct {
	Replicas   int
	Store      string
	Lifecycles int
	Gap        time.Duration
	APILatency time.Duration // ReceiveConfig.APILatency
	TxCallback bool          // ReceiveConfig.TxCallback
	// Live: the sales are made while the replicas receive their deliveries.
	Live ReceivePhase
	// CatchUp: the deliveries recorded live are replayed as fast as possible to fresh
	// replicas over a fresh store.
	CatchUp ReceivePhase
	// RowsKept is the store's rows after the live run; RowsPruned after Prune deleted every
	// finished sale (what remains are tombstones). -1 for the memory store.
	RowsKept, RowsPruned int64
	// Undelivered counts the emulator's webhook calls of the live run that got no 2xx (a
	// receiver queue past the emulator's bound drops the newest calls): facts of a sale none
	// of whose deliveries arrived count as lost in both phases without being the receiver's.
	Undelivered int
}

// ReceivePhase is one phase's counts.
type ReceivePhase struct {
	Duration   time.Duration
	Facts      int   // handed over (with its items, one per fact)
	Duplicates int   // facts handed over more than once
	Lost       int   // facts of the sales never handed over
	Fetches    int64 // the replicas' confirming calls: GET /transaction/{id} and partner listings
	Commits    int64 // PostgreSQL transactions committed in the store's database; -1 elsewhere
	Rollbacks  int64 // and rolled back (the store's read-only ones end so); -1 elsewhere
	// OwnCPU is this process's processor time over the phase (the emulator, the replicas
	// and the senders); StoreCPU the store's server's, -1 when unknown.
	OwnCPU, StoreCPU time.Duration
	// P50, P99: from a delivery's arrival to its event's hand-over, 0 for an event handed
	// over before its delivery came (live only).
	P50, P99 time.Duration
}

func (p ReceivePhase) perFact(n int64) float64 {
	if p.Facts == 0 || n < 0 {
		return -1
	}
	return float64(n) / float64(p.Facts)
}

// cpuPerFact is a processor time per fact handed over, in milliseconds; -1 when unknown.
func (p ReceivePhase) cpuPerFact(d time.Duration) float64 {
	if p.Facts == 0 || d < 0 {
		return -1
	}
	return float64(d.Microseconds()) / 1000 / float64(p.Facts)
}

func (p ReceivePhase) rate() float64 {
	if p.Duration <= 0 {
		return 0
	}
	return float64(p.Facts) / p.Duration.Seconds()
}

func (r ReceiveResult) String() string {
	return fmt.Sprintf("receive store=%s replicas=%d lifecycles=%d gap=%s api_latency=%s tx_callback=%t"+
		" live_facts=%d live_facts_per_s=%.0f live_fetches_per_fact=%.2f live_commits_per_fact=%.2f live_rollbacks_per_fact=%.2f live_p50=%s live_p99=%s live_duplicates=%d live_lost=%d"+
		" catchup_facts_per_s=%.0f catchup_fetches_per_fact=%.2f catchup_commits_per_fact=%.2f catchup_rollbacks_per_fact=%.2f catchup_duplicates=%d catchup_lost=%d"+
		" live_own_cpu_ms_per_fact=%.3f live_store_cpu_ms_per_fact=%.3f catchup_own_cpu_ms_per_fact=%.3f catchup_store_cpu_ms_per_fact=%.3f"+
		" rows_kept=%d rows_after_prune=%d undelivered=%d",
		r.Store, r.Replicas, r.Lifecycles, r.Gap, r.APILatency, r.TxCallback,
		r.Live.Facts, r.Live.rate(), r.Live.perFact(r.Live.Fetches), r.Live.perFact(r.Live.Commits), r.Live.perFact(r.Live.Rollbacks),
		r.Live.P50.Round(100*time.Microsecond), r.Live.P99.Round(100*time.Microsecond), r.Live.Duplicates, r.Live.Lost,
		r.CatchUp.rate(), r.CatchUp.perFact(r.CatchUp.Fetches), r.CatchUp.perFact(r.CatchUp.Commits), r.CatchUp.perFact(r.CatchUp.Rollbacks), r.CatchUp.Duplicates, r.CatchUp.Lost,
		r.Live.cpuPerFact(r.Live.OwnCPU), r.Live.cpuPerFact(r.Live.StoreCPU), r.CatchUp.cpuPerFact(r.CatchUp.OwnCPU), r.CatchUp.cpuPerFact(r.CatchUp.StoreCPU),
		r.RowsKept, r.RowsPruned, r.Undelivered)
}

// factsPerSale are the facts of one sale taken to completion.
const factsPerSale = 8

// receiver is the replicas of one phase and what they handed over.
type receiver struct {
	replicas []*webhook.Handler
	clients  []*escrow.Client // the replicas'
	fetches  atomic.Int64
	next     atomic.Int64 // round robin

	mu        sync.Mutex
	handed    map[string]int       // "tx event item" → times handed over
	delivered map[string]time.Time // "tx event" → first arrival
	early     map[string]bool      // "tx event" handed over before any delivery of it came
	latencies latencies
	recorded  []escrowtest.Delivery // every delivery, in arrival order
	last      time.Time             // the last hand-over
}

var fetchPath = regexp.MustCompile(`/transaction/\d+$`)

// confirming reports whether r is one of the calls a receiver confirms deliveries with: a
// transaction's fetch, or a partner listing that names the ids it asks about.
func confirming(r *http.Request) bool {
	return r.Method == http.MethodGet &&
		(fetchPath.MatchString(r.URL.Path) || strings.HasSuffix(r.URL.Path, "/partner/transactions"))
}

// apiTransport is the replicas' way to the API: it counts their confirming calls and
// delays each call by the configured latency.
type apiTransport struct {
	next    http.RoundTripper
	n       *atomic.Int64
	latency time.Duration
}

func (f apiTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if confirming(r) {
		f.n.Add(1)
	}
	if f.latency > 0 {
		t := time.NewTimer(f.latency)
		select {
		case <-t.C:
		case <-r.Context().Done():
			t.Stop()
			return nil, r.Context().Err()
		}
	}
	return f.next.RoundTrip(r)
}

// receiveWorkers are each replica's Handler workers.
const receiveWorkers = 8

// warm opens the connections the replicas' workers use, to the store and to the API, so
// that the latencies measured are a running receiver's, not those of its first
// connections (a PostgreSQL backend started, a TLS handshake: 20 to 70 ms each on the
// machine of BENCHMARKS.md). The requests it makes are not counted as fetches.
func (rc *receiver) warm(ctx context.Context, st *benchStore) error {
	var wg sync.WaitGroup
	errs := make(chan error, len(rc.clients)*receiveWorkers*2)
	for i, c := range rc.clients {
		for range receiveWorkers {
			wg.Go(func() {
				if _, err := c.Customers.Get(ctx, escrow.Me); err != nil {
					errs <- err
				}
			})
			if i < len(st.replicas) {
				wg.Go(func() {
					conn, err := st.replicas[i].DB().Conn(ctx)
					if err == nil {
						err = conn.PingContext(ctx)
						time.Sleep(10 * time.Millisecond) // held, so that each goroutine opens its own
						conn.Close()
					}
					if err != nil {
						errs <- err
					}
				})
			}
		}
	}
	wg.Wait()
	close(errs)
	return <-errs
}

func newReceiver(ctx context.Context, srv *escrowtest.Server, a escrowtest.Account, st *benchStore, cfg ReceiveConfig) (*receiver, error) {
	rc := &receiver{handed: map[string]int{}, delivered: map[string]time.Time{}, early: map[string]bool{}}
	hc := &http.Client{Transport: apiTransport{next: srv.Client().Transport, n: &rc.fetches, latency: cfg.APILatency}}
	for i := range cfg.Replicas {
		c, err := escrow.NewClient(a.Email, a.APIKey, escrow.WithBaseURL(srv.URL), escrow.WithHTTPClient(hc))
		if err != nil {
			return nil, err
		}
		store, err := st.replica(ctx)
		if err != nil {
			return nil, err
		}
		rc.replicas = append(rc.replicas, webhook.NewHandler(c, rc.callbackOver(store, cfg.TxCallback), webhook.Options{
			Store: store, Replica: fmt.Sprint("replica-", i), Workers: receiveWorkers, MaxQueued: 100_000,
		}))
		rc.clients = append(rc.clients, c)
	}
	return rc, rc.warm(ctx, st)
}

func (rc *receiver) callback(_ context.Context, ev webhook.ConfirmedEvent) error {
	now := time.Now()
	rc.mu.Lock()
	defer rc.mu.Unlock()
	items := ev.ItemIDs
	if len(items) == 0 {
		items = []int64{0}
	}
	for _, it := range items {
		rc.handed[fmt.Sprint(ev.TransactionID, " ", ev.Name, " ", it)]++
	}
	rc.last = now
	// A fact is handed over once its delivery came, or before: a fetch for another
	// delivery showed it (it then counts 0 when its delivery comes).
	key := fmt.Sprint(ev.TransactionID, " ", ev.Name)
	if at, ok := rc.delivered[key]; ok {
		rc.latencies.add(now.Sub(at))
	} else {
		rc.early[key] = true
	}
	return nil
}

// callbackOver is a replica's callback: the receiver's count, after an order recorded
// with the event's facts in one database transaction when tx is set.
func (rc *receiver) callbackOver(store webhook.Store, tx bool) webhook.Callback {
	s, ok := store.(*sqlstore.Store)
	if !tx || !ok {
		return rc.callback
	}
	insert := `INSERT INTO bench_orders VALUES (?, ?)`
	if s.Dialect() == sqlstore.Postgres {
		insert = `INSERT INTO bench_orders VALUES ($1, $2)`
	}
	recorded := s.TxCallback(func(ctx context.Context, tx *sql.Tx, ev webhook.ConfirmedEvent) error {
		_, err := tx.ExecContext(ctx, insert, ev.TransactionID, string(ev.Name))
		return err
	})
	return func(ctx context.Context, ev webhook.ConfirmedEvent) error {
		if err := recorded(ctx, ev); err != nil {
			return err
		}
		return rc.callback(ctx, ev)
	}
}

// ServeHTTP passes a delivery to the next replica, noting when it came.
func (rc *receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	ev, err := escrow.ParseEvent(r)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	rc.mu.Lock()
	key := fmt.Sprint(ev.TransactionID, " ", ev.Name)
	if _, ok := rc.delivered[key]; !ok {
		rc.delivered[key] = time.Now()
		if rc.early[key] {
			rc.latencies.add(0)
		}
	}
	rc.recorded = append(rc.recorded, escrowtest.Delivery{Event: string(ev.Name), EventType: string(ev.EventType), TransactionID: ev.TransactionID})
	rc.mu.Unlock()
	rc.deliver(ev.TransactionID, string(ev.Name), w)
}

func (rc *receiver) deliver(id int64, name string, w http.ResponseWriter) {
	body := fmt.Sprintf(`{"event": %q, "event_type": "transaction", "transaction_id": %d}`, name, id)
	req := httptest.NewRequest(http.MethodPost, "/escrow", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	h := rc.replicas[int(rc.next.Add(1))%len(rc.replicas)]
	h.ServeHTTP(w, req)
}

func (rc *receiver) flush(ctx context.Context) error {
	for range 3 { // a turn at one replica may leave work to another
		for _, h := range rc.replicas {
			if err := h.Flush(ctx); err != nil {
				return err
			}
		}
	}
	return nil
}

func (rc *receiver) shutdown() {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, h := range rc.replicas {
		h.Shutdown(ctx)
	}
}

// phase counts what the receiver handed over for the sales since start. Its duration
// ends at the last hand-over: hints (payment_received) confirmed after it do not count.
func (rc *receiver) phase(sales []int64, start time.Time) ReceivePhase {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	p := ReceivePhase{Duration: rc.last.Sub(start), Fetches: rc.fetches.Load(), Commits: -1, Rollbacks: -1,
		P50: rc.latencies.quantile(0.5), P99: rc.latencies.quantile(0.99)}
	for _, n := range rc.handed {
		p.Facts++
		if n > 1 {
			p.Duplicates += n - 1
		}
	}
	p.Lost = max(0, len(sales)*factsPerSale-p.Facts)
	return p
}

// RunReceive takes cfg.Lifecycles sales to completion on the emulator while cfg.Replicas
// handlers receive their deliveries over one store, then replays the recorded deliveries
// as fast as possible to fresh replicas over a fresh store, and measures both. The
// emulator has no rate limit here: the run measures the receiver, not the allowance.
func RunReceive(ctx context.Context, cfg ReceiveConfig) (ReceiveResult, error) {
	if cfg.Replicas <= 0 || cfg.Lifecycles <= 0 || cfg.Workers <= 0 {
		return ReceiveResult{}, errors.New("receive: Replicas, Lifecycles and Workers must be positive")
	}
	if cfg.TxCallback && cfg.Store == "memory" {
		return ReceiveResult{}, errors.New("receive: TxCallback needs a SQL store")
	}
	res := ReceiveResult{Replicas: cfg.Replicas, Store: storeKind(cfg.Store), Lifecycles: cfg.Lifecycles, Gap: cfg.Gap, APILatency: cfg.APILatency, TxCallback: cfg.TxCallback, RowsKept: -1, RowsPruned: -1}
	srv := escrowtest.NewServer(escrowtest.WithRateLimit(0, time.Minute))
	defer srv.Close()
	m, err := newSaleMarket(srv)
	if err != nil {
		return res, err
	}

	live, err := openBenchStore(ctx, cfg, "live")
	if err != nil {
		return res, err
	}
	defer live.close()
	rc, err := newReceiver(ctx, srv, m.account, live, cfg)
	if err != nil {
		return res, err
	}
	defer rc.shutdown()
	hook := httptest.NewServer(rc)
	defer hook.Close()
	if _, err := m.partner.Webhooks.Create(ctx, escrow.Me, hook.URL+"/escrow"); err != nil {
		return res, err
	}
	before, cpu := live.xacts(ctx), startCPU(cfg)
	start := time.Now()
	sales, err := m.run(ctx, cfg.Lifecycles, cfg.Workers, cfg.Gap)
	if err != nil {
		return res, err
	}
	if err := srv.FlushWebhooks(ctx); err != nil {
		return res, err
	}
	for _, d := range srv.Deliveries() {
		if d.StatusCode/100 != 2 {
			res.Undelivered++
		}
	}
	if err := rc.flush(ctx); err != nil {
		return res, err
	}
	res.Live = rc.phase(sales, start)
	res.Live.OwnCPU, res.Live.StoreCPU = cpu()
	res.Live.Commits, res.Live.Rollbacks = live.since(ctx, before)
	if res.RowsKept, res.RowsPruned, err = live.prune(ctx); err != nil {
		return res, err
	}

	res.CatchUp, err = catchUp(ctx, srv, m.account, cfg, sales, rc.recorded)
	return res, err
}

// catchUp replays deliveries to fresh replicas over a fresh store from 8 goroutines.
func catchUp(ctx context.Context, srv *escrowtest.Server, a escrowtest.Account, cfg ReceiveConfig, sales []int64, recorded []escrowtest.Delivery) (ReceivePhase, error) {
	st, err := openBenchStore(ctx, cfg, "catchup")
	if err != nil {
		return ReceivePhase{}, err
	}
	defer st.close()
	rc, err := newReceiver(ctx, srv, a, st, cfg)
	if err != nil {
		return ReceivePhase{}, err
	}
	defer rc.shutdown()
	before := st.xacts(ctx)
	if cfg.CPUProfile != "" {
		stop, err := profileCPU(fmt.Sprint(cfg.CPUProfile, ".", cfg.Replicas))
		if err != nil {
			return ReceivePhase{}, err
		}
		defer stop()
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	cpu := startCPU(cfg)
	start := time.Now()
	for range 8 {
		wg.Go(func() {
			for i := next.Add(1) - 1; i < int64(len(recorded)); i = next.Add(1) - 1 {
				d := recorded[i]
				rc.deliver(d.TransactionID, d.Event, httptest.NewRecorder())
			}
		})
	}
	wg.Wait()
	if err := rc.flush(ctx); err != nil {
		return ReceivePhase{}, err
	}
	p := rc.phase(sales, start)
	p.OwnCPU, p.StoreCPU = cpu()
	p.P50, p.P99 = 0, 0
	p.Commits, p.Rollbacks = st.since(ctx, before)
	return p, nil
}

// startCPU notes the processor time used so far, by this process and by the store's
// server when cfg tells it; since returns what each used after, -1 when unknown.
func startCPU(cfg ReceiveConfig) (since func() (own, server time.Duration)) {
	serverCPU := func() time.Duration {
		if cfg.ServerCPU == nil {
			return -1
		}
		d, err := cfg.ServerCPU()
		if err != nil {
			return -1
		}
		return d
	}
	own0, server0 := processCPU(), serverCPU()
	return func() (own, server time.Duration) {
		own, server = processCPU(), serverCPU()
		if own >= 0 && own0 >= 0 {
			own -= own0
		} else {
			own = -1
		}
		if server >= 0 && server0 >= 0 {
			server -= server0
		} else {
			server = -1
		}
		return own, server
	}
}

// profileCPU starts a CPU profile written to path; stop ends it and closes the file.
func profileCPU(path string) (stop func(), err error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
}

func storeKind(s string) string {
	if strings.HasPrefix(s, "postgres") {
		return "postgres"
	}
	return s
}

// benchStore is one phase's store.
type benchStore struct {
	store    webhook.Store
	sql      *sqlstore.Store // nil for memory
	dsn      string
	replicas []*sqlstore.Store // each replica's own handle, as separate processes have
	admin    *sql.DB           // the server's maintenance database, to drop the phase's one
	name     string
	conns    int // ReceiveConfig.StoreConns
}

// replica returns the store a replica uses: the shared memory store, or a handle of its
// own on the database.
func (b *benchStore) replica(ctx context.Context) (webhook.Store, error) {
	if b.sql == nil {
		return b.store, nil
	}
	s, err := sqlstore.Open(ctx, b.dsn)
	if err != nil {
		return nil, err
	}
	if b.conns > 0 && s.Dialect() == sqlstore.Postgres {
		s.DB().SetMaxOpenConns(b.conns)
		s.DB().SetMaxIdleConns(b.conns)
	}
	b.replicas = append(b.replicas, s)
	return s, nil
}

var benchDBs atomic.Int64

func openBenchStore(ctx context.Context, cfg ReceiveConfig, phase string) (*benchStore, error) {
	switch {
	case cfg.Store == "memory":
		return &benchStore{store: new(webhook.MemoryStore)}, nil
	case cfg.Store == "sqlite":
		dsn := "sqlite:" + filepath.Join(cfg.Dir, fmt.Sprintf("receive-%s-%d.db", phase, benchDBs.Add(1)))
		s, err := sqlstore.Open(ctx, dsn)
		if err != nil {
			return nil, err
		}
		return withOrders(ctx, cfg, &benchStore{store: s, sql: s, dsn: dsn})
	case strings.HasPrefix(cfg.Store, "postgres"):
		admin, err := sql.Open("pgx", cfg.Store)
		if err != nil {
			return nil, err
		}
		name := fmt.Sprintf("escrow_bench_%s_%d_%d", phase, time.Now().UnixNano(), benchDBs.Add(1))
		if _, err := admin.ExecContext(ctx, "CREATE DATABASE "+name); err != nil {
			admin.Close()
			return nil, err
		}
		i := strings.LastIndex(cfg.Store, "/")
		dsn := cfg.Store[:i+1] + name
		if q := strings.Index(cfg.Store[i:], "?"); q >= 0 {
			dsn += cfg.Store[i+q:]
		}
		s, err := sqlstore.Open(ctx, dsn)
		if err != nil {
			admin.Close()
			return nil, err
		}
		return withOrders(ctx, cfg, &benchStore{store: s, sql: s, dsn: dsn, admin: admin, name: name, conns: cfg.StoreConns})
	}
	return nil, fmt.Errorf("receive: unknown store %q: want memory, sqlite or a postgres:// URL", cfg.Store)
}

// withOrders makes the table the replicas' TxCallbacks write to, if cfg asks for them.
func withOrders(ctx context.Context, cfg ReceiveConfig, b *benchStore) (*benchStore, error) {
	if cfg.TxCallback {
		if _, err := b.sql.DB().ExecContext(ctx, `CREATE TABLE bench_orders (transaction_id BIGINT, event TEXT)`); err != nil {
			b.close()
			return nil, err
		}
	}
	return b, nil
}

// xacts are a database's transactions so far (PostgreSQL): committed and rolled back.
type xacts struct{ commits, rollbacks int64 }

// xacts returns the database's transactions so far, or -1s.
func (b *benchStore) xacts(ctx context.Context) xacts {
	x := xacts{-1, -1}
	if b.admin == nil {
		return x
	}
	if err := b.admin.QueryRowContext(ctx, `SELECT xact_commit, xact_rollback FROM pg_stat_database WHERE datname = $1`, b.name).Scan(&x.commits, &x.rollbacks); err != nil {
		return xacts{-1, -1}
	}
	return x
}

// since returns the commits and rollbacks since before (-1 if unknown). A PostgreSQL
// backend reports its counts when it ends or after a while idle, so the store's
// connections are closed first, and the counts are read once they have settled.
func (b *benchStore) since(ctx context.Context, before xacts) (commits, rollbacks int64) {
	if before.commits < 0 {
		return -1, -1
	}
	for _, s := range append(b.replicas, b.sql) {
		s.DB().SetMaxIdleConns(0) // closes the idle connections: their backends report
	}
	last := b.xacts(ctx)
	for range 20 {
		time.Sleep(250 * time.Millisecond)
		n := b.xacts(ctx)
		if n == last && n.commits > before.commits {
			break
		}
		last = n
	}
	return last.commits - before.commits, last.rollbacks - before.rollbacks
}

// prune counts the store's rows, prunes every finished transaction and counts again.
func (b *benchStore) prune(ctx context.Context) (kept, after int64, err error) {
	if b.sql == nil {
		return -1, -1, nil
	}
	if kept, err = b.rows(ctx); err != nil {
		return 0, 0, err
	}
	if _, err := b.store.Prune(ctx, time.Now().Add(time.Second)); err != nil {
		return 0, 0, err
	}
	after, err = b.rows(ctx)
	return kept, after, err
}

func (b *benchStore) rows(ctx context.Context) (int64, error) {
	var n int64
	err := b.sql.DB().QueryRowContext(ctx, `SELECT (SELECT count(*) FROM escrow_webhook_facts) + (SELECT count(*) FROM escrow_webhook_transactions)
		+ (SELECT count(*) FROM escrow_webhook_leases)`).Scan(&n)
	return n, err
}

func (b *benchStore) close() {
	for _, s := range b.replicas {
		s.Close()
	}
	if b.sql != nil {
		b.sql.Close()
	}
	if b.admin != nil {
		b.admin.ExecContext(context.Background(), "DROP DATABASE IF EXISTS "+b.name+" WITH (FORCE)")
		b.admin.Close()
	}
}

// saleMarket is a partner's marketplace taking sales to completion.
type saleMarket struct {
	srv                   *escrowtest.Server
	account               escrowtest.Account
	partner, buyer, sell  *escrow.Client
	buyerMail, sellerMail string
}

func newSaleMarket(srv *escrowtest.Server) (*saleMarket, error) {
	p, b, s := srv.AddPartner("market@example.com"), srv.AddCustomer("buyer@example.com"), srv.AddCustomer("seller@example.com")
	m := &saleMarket{srv: srv, account: p, buyerMail: b.Email, sellerMail: s.Email}
	for _, c := range []struct {
		to **escrow.Client
		a  escrowtest.Account
	}{{&m.partner, p}, {&m.buyer, b}, {&m.sell, s}} {
		cl, err := escrow.NewClient(c.a.Email, c.a.APIKey, escrow.WithBaseURL(srv.URL), escrow.WithHTTPClient(srv.Client()))
		if err != nil {
			return nil, err
		}
		*c.to = cl
	}
	return m, nil
}

// run takes n sales to completion with workers goroutines and returns their ids.
func (m *saleMarket) run(ctx context.Context, n, workers int, gap time.Duration) ([]int64, error) {
	var mu sync.Mutex
	var ids []int64
	var errs []error
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for next.Add(1) <= int64(n) && ctx.Err() == nil {
				id, err := m.sale(ctx, gap)
				mu.Lock()
				if err != nil {
					errs = append(errs, err)
				} else {
					ids = append(ids, id)
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return ids, errors.Join(errs...)
}

// sale takes one sale from creation to completion, pausing gap before each step: 8 facts.
func (m *saleMarket) sale(ctx context.Context, gap time.Duration) (int64, error) {
	tx, err := m.partner.Transactions.Create(ctx, merchandise(m.buyerMail, m.sellerMail, ""))
	if err != nil {
		return 0, err
	}
	id := tx.ID
	act := func(as string, a escrow.Action) error {
		_, err := m.partner.Transactions.Act(ctx, id, &escrow.ActionRequest{Action: a}, escrow.AsCustomer(as))
		return err
	}
	steps := []func() error{
		func() error { return act(m.buyerMail, escrow.ActionAgree) },
		func() error { return act(m.sellerMail, escrow.ActionAgree) },
		func() error { return m.srv.ApprovePayment(id) },
		func() error {
			_, err := m.sell.Transactions.SelectDisbursementMethod(ctx, id, &escrow.DisbursementMethod{
				Type: escrow.DisbursementACH, AccountName: "Seller", AccountType: "savings",
				BankABARoutingNumber: "121000248", BankAccountNumber: "12345678", BankName: "First Bank",
			})
			return err
		},
		func() error { return act(m.sellerMail, escrow.ActionShip) },
		func() error { return act(m.buyerMail, escrow.ActionReceive) },
		func() error { _, err := m.buyer.Transactions.Accept(ctx, id); return err },
	}
	for i, s := range steps {
		time.Sleep(gap)
		if err := s(); err != nil {
			return 0, fmt.Errorf("sale %d, step %d: %w", id, i, err)
		}
	}
	return id, nil
}

// receiveProgram is the flags and output of `go run ./bench/receive`.
func receiveProgram(fs *flag.FlagSet) func(context.Context, io.Writer, io.Writer) error {
	cfg := ReceiveConfig{Lifecycles: 200, Workers: 8}
	replicas := fs.String("replicas", "1,2,4", "replica counts to measure, comma-separated")
	fs.StringVar(&cfg.Store, "store", "sqlite", "memory, sqlite, pgtest, or a postgres:// URL")
	fs.IntVar(&cfg.Lifecycles, "lifecycles", cfg.Lifecycles, "sales taken to completion (8 facts each)")
	fs.IntVar(&cfg.Workers, "workers", cfg.Workers, "goroutines making sales at once")
	fs.DurationVar(&cfg.Gap, "gap", 0, "pause between the steps of a sale (0: every sale is a burst)")
	fs.StringVar(&cfg.CPUProfile, "cpuprofile", "", "write a CPU profile of each catch-up phase to this file, suffixed .REPLICAS")
	fs.DurationVar(&cfg.APILatency, "api-latency", 0, "delay before each of the replicas' API calls, as a network to the live API adds (0: the emulator's own, about a millisecond)")
	fs.BoolVar(&cfg.TxCallback, "tx-callback", false, "each replica's callback records an order in the store's database with the event (sqlstore's TxCallback)")
	fs.IntVar(&cfg.StoreConns, "store-conns", 0, "connections each replica's PostgreSQL store uses at most (0: sqlstore.PostgresConns)")
	return func(ctx context.Context, stdout, _ io.Writer) error {
		dir, err := os.MkdirTemp("", "escrow-receive-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		cfg.Dir = dir
		if cfg.Store == "pgtest" {
			pg, err := pgtest.Start()
			if err != nil {
				return err
			}
			defer pg.Stop()
			cfg.Store, cfg.ServerCPU = pg.DSN("postgres"), pg.CPU
		}
		for _, r := range strings.Split(*replicas, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(r))
			if err != nil {
				return fmt.Errorf("-replicas: %w", err)
			}
			cfg.Replicas = n
			res, err := RunReceive(ctx, cfg)
			if err != nil {
				return err
			}
			fmt.Fprintln(stdout, res)
		}
		return nil
	}
}

package redislimit_test

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	escrow "github.com/escrowkit/escrow-go"
	"github.com/escrowkit/escrow-go/escrowtest"
	"github.com/escrowkit/escrow-go/internal/logtest"
	"github.com/escrowkit/escrow-go/internal/redisserver"
	"github.com/escrowkit/escrow-go/redislimit"
)

// These tests run against a real redis-server (see internal/redisserver): they skip without
// one, and fail without one when ESCROW_REQUIRE_SERVERS=1. Each starts its own.

const meEndpoint = "GET /customer/{customer_id}"

// redisClient connects to srv and closes the connection at the end of the test.
func redisClient(t testing.TB, srv *redisserver.Server) *redis.Client {
	t.Helper()
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr(), MaxRetries: -1, DialTimeout: time.Second})
	t.Cleanup(func() { _ = rdb.Close() })
	return rdb
}

// newStore is a Store whose timeout leaves room for a loaded test machine: a timeout
// would make the client fall back to local pacing, which some tests check does not happen.
func newStore(rdb *redis.Client, opts ...redislimit.Option) *redislimit.Store {
	return redislimit.New(rdb, append([]redislimit.Option{redislimit.WithTimeout(5 * time.Second)}, opts...)...)
}

// emulator is an escrowtest server with one customer; it is closed at the end of the test.
func emulator(t *testing.T, opts ...escrowtest.Option) (*escrowtest.Server, escrowtest.Account) {
	t.Helper()
	srv := escrowtest.NewServer(opts...)
	t.Cleanup(srv.Close)
	return srv, srv.AddCustomer("buyer@replicas.test")
}

// counter counts what reaches the emulator.
type counter struct {
	next               http.RoundTripper
	attempts, refused  atomic.Int64
	okAnswers, noReply atomic.Int64
}

func (c *counter) RoundTrip(req *http.Request) (*http.Response, error) {
	c.attempts.Add(1)
	resp, err := c.next.RoundTrip(req)
	switch {
	case err != nil:
		c.noReply.Add(1)
	case resp.StatusCode == http.StatusTooManyRequests:
		c.refused.Add(1)
	case resp.StatusCode == http.StatusOK:
		c.okAnswers.Add(1)
	}
	return resp, err
}

// replica is one client of the emulator's account, as a separate process would have.
func replica(t *testing.T, srv *escrowtest.Server, acct escrowtest.Account, rt http.RoundTripper, store escrow.RateLimitStore, logger *slog.Logger) *escrow.Client {
	t.Helper()
	opts := []escrow.Option{escrow.WithBaseURL(srv.URL), escrow.WithHTTPClient(&http.Client{Transport: rt}), escrow.WithMaxRetries(8)}
	if store != nil {
		opts = append(opts, escrow.WithRateLimitStore(store))
	}
	if logger != nil {
		opts = append(opts, escrow.WithLogger(logger))
	}
	c, err := escrow.NewClient(acct.Email, acct.APIKey, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// load runs goroutines calling GET /customer/me on each client until stop is closed,
// counting successes and failures.
type load struct {
	wg         sync.WaitGroup
	stop       chan struct{}
	ok, failed atomic.Int64
	mu         sync.Mutex
	errs       []error
}

func startLoad(clients []*escrow.Client, perClient int) *load {
	l := &load{stop: make(chan struct{})}
	for _, c := range clients {
		for range perClient {
			l.wg.Go(func() {
				for {
					select {
					case <-l.stop:
						return
					default:
					}
					if _, err := c.Customers.Get(context.Background(), escrow.Me); err != nil {
						l.failed.Add(1)
						l.mu.Lock()
						l.errs = append(l.errs, err)
						l.mu.Unlock()
						continue
					}
					l.ok.Add(1)
				}
			})
		}
	}
	return l
}

// until waits for cond, failing the test after d.
func until(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up after %v waiting for %s", d, what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func (l *load) end(t *testing.T) {
	t.Helper()
	close(l.stop)
	l.wg.Wait()
	for i, err := range l.errs {
		if i == 5 {
			t.Errorf("... and %d more", len(l.errs)-5)
			break
		}
		t.Errorf("call failed: %v", err)
	}
}

// TestReplicasShareOneBudget: four clients of one account, each with its own connections
// and memory, spend one emulator allowance through one Redis without a 429 beyond the
// first window's start, where nothing is known yet. Alone, each would take the allowance
// for its own (the issue measured 17% of attempts refused).
func TestReplicasShareOneBudget(t *testing.T) {
	t.Parallel()
	rs := redisserver.Start(t)
	rdb := redisClient(t, rs)
	const limit, window = 15, time.Second
	srv, acct := emulator(t, escrowtest.WithRateLimit(limit, window))
	cnt := &counter{next: srv.Client().Transport}
	var clients []*escrow.Client
	for range 4 {
		// One Store per replica, as separate processes have.
		clients = append(clients, replica(t, srv, acct, cnt, newStore(rdb), nil))
	}
	start := time.Now()
	l := startLoad(clients, 3)
	until(t, 20*time.Second, "three windows' worth of calls", func() bool { return l.ok.Load() >= 3*limit })
	l.end(t)
	elapsed := time.Since(start)

	ok, refused, attempts := cnt.okAnswers.Load(), cnt.refused.Load(), cnt.attempts.Load()
	t.Logf("ok=%d refused=%d attempts=%d in %v", ok, refused, attempts, elapsed)
	if refused > 0 {
		t.Errorf("%d of %d attempts refused with 429: the replicas did not share the budget", refused, attempts)
	}
	if windows := int64(elapsed/window) + 1; ok > windows*limit {
		t.Errorf("%d calls served in %d windows of %d", ok, windows, limit)
	}
	// The budget is in Redis, counted under the account's hash.
	keys, err := rdb.Keys(context.Background(), redislimit.DefaultPrefix+"*").Result()
	if err != nil || len(keys) == 0 {
		t.Fatalf("no budget in Redis: %v %v", keys, err)
	}
}

// loggedReplicasOnRedis starts a Redis and two replicas sharing it, each logging to its own
// lines, against an emulator whose limit the load cannot spend: the outage tests are about
// Redis going, not about pacing.
func loggedReplicasOnRedis(t *testing.T) (*redisserver.Server, *redis.Client, []*escrow.Client, *[2]logtest.Lines) {
	t.Helper()
	rs := redisserver.Start(t)
	rdb := redisClient(t, rs)
	srv, acct := emulator(t, escrowtest.WithRateLimit(1_000_000, time.Minute))
	var logs [2]logtest.Lines
	var clients []*escrow.Client
	for i := range logs {
		logger := slog.New(slog.NewTextHandler(&logs[i], &slog.HandlerOptions{Level: slog.LevelInfo}))
		clients = append(clients, replica(t, srv, acct, srv.Client().Transport, newStore(rdb), logger))
	}
	return rs, rdb, clients, &logs
}

// TestRedisStoppedMidRunFailsNoCall: Redis stops under load; every call still succeeds,
// and each client logs the outage once.
func TestRedisStoppedMidRunFailsNoCall(t *testing.T) {
	t.Parallel()
	rs, _, clients, logs := loggedReplicasOnRedis(t)
	l := startLoad(clients, 2)
	until(t, 10*time.Second, "calls through Redis", func() bool { return l.ok.Load() >= 20 })
	rs.Stop()
	stoppedAt := l.ok.Load()
	until(t, 10*time.Second, "calls without Redis", func() bool { return l.ok.Load() >= stoppedAt+60 })
	l.end(t)
	for i := range logs {
		if n := logs[i].Count("level=WARN"); n != 1 {
			t.Errorf("client %d logged %d warnings, want 1:\n%s", i, n, logs[i].String())
		}
	}
}

// TestRedisRestartedIsTakenUpAgain: after an outage the clients go back to Redis, which
// holds the budget again.
func TestRedisRestartedIsTakenUpAgain(t *testing.T) {
	t.Parallel()
	rs, rdb, clients, logs := loggedReplicasOnRedis(t)
	l := startLoad(clients, 1)
	until(t, 10*time.Second, "calls through Redis", func() bool { return l.ok.Load() >= 10 })
	rs.Stop()
	until(t, 10*time.Second, "both clients to notice the outage", func() bool {
		return logs[0].Count("level=WARN") == 1 && logs[1].Count("level=WARN") == 1
	})
	rs.Restart() // empty: it saved nothing
	until(t, 10*time.Second, "both clients to take Redis up again", func() bool {
		// At least once: a pooled connection from before the restart may fail a
		// command afterwards, and that outage ends too.
		return logs[0].Count("answers again") >= 1 && logs[1].Count("answers again") >= 1
	})
	l.end(t)
	sent, err := rdb.HGet(context.Background(), stateKey(t, rdb), "sent").Int()
	if err != nil || sent == 0 {
		t.Errorf("after the restart Redis counted %d requests (err %v)", sent, err)
	}
}

// stateKey is the one budget's state key in Redis.
func stateKey(t *testing.T, rdb *redis.Client) string {
	t.Helper()
	keys, err := rdb.Keys(context.Background(), redislimit.DefaultPrefix+"*").Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		if strings.HasSuffix(k, meEndpoint) {
			return k
		}
	}
	t.Fatalf("no state key among %v", keys)
	return ""
}

// cancelHook cancels a caller while its reservation's script is on its way to Redis.
type cancelHook struct {
	armed  atomic.Bool
	cancel context.CancelFunc
}

func (h *cancelHook) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h *cancelHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if name := cmd.Name(); (name == "evalsha" || name == "eval") && h.armed.CompareAndSwap(true, false) {
			h.cancel()
		}
		return next(ctx, cmd)
	}
}

func (h *cancelHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

// TestReplicaCancelledMidReservation: a caller cancelled while its reservation is being
// made gets its cancellation, sends nothing, and leaves no reservation in flight.
func TestReplicaCancelledMidReservation(t *testing.T) {
	t.Parallel()
	rs := redisserver.Start(t)
	rdb := redisClient(t, rs)
	srv, acct := emulator(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	hook := &cancelHook{cancel: cancel}
	rdb.AddHook(hook)
	store := newStore(rdb)
	cnt := &counter{next: srv.Client().Transport}
	c := replica(t, srv, acct, cnt, store, nil)
	if _, err := c.Customers.Get(context.Background(), escrow.Me); err != nil {
		t.Fatal(err)
	}
	hook.armed.Store(true)
	_, err := c.Customers.Get(ctx, escrow.Me)
	if hook.armed.Load() {
		t.Fatal("the hook never ran")
	}
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want the caller's cancellation", err)
	}
	key := stateKey(t, rdb)
	if n, err := rdb.ZCard(context.Background(), key+":inflight").Result(); err != nil || n != 0 {
		t.Errorf("%d reservations in flight after the cancelled call (err %v)", n, err)
	}
	if ok := cnt.okAnswers.Load(); ok != 1 {
		t.Errorf("%d requests answered, want only the first call's", ok)
	}
	if _, err := c.Customers.Get(context.Background(), escrow.Me); err != nil {
		t.Errorf("the next call: %v", err)
	}
}

// TestDeadReplicasReservationsExpire: reservations never reported, as a replica that died
// leaves them, stop counting after their lease and go with their key.
func TestDeadReplicasReservationsExpire(t *testing.T) {
	t.Parallel()
	rs := redisserver.Start(t)
	rdb := redisClient(t, rs)
	const lease = 150 * time.Millisecond
	dead := newStore(rdb, redislimit.WithLease(lease))
	key := escrow.RateLimitKey{Account: strings.Repeat("ab", 16), Endpoint: meEndpoint}
	ctx := context.Background()
	for range 3 {
		if g, err := dead.Reserve(ctx, key); err != nil || !g.OK || g.ID == "" {
			t.Fatalf("reserve: %+v, %v", g, err)
		}
	}
	_, inflight := dead.Keys(key)
	if n := rdb.ZCard(ctx, inflight).Val(); n != 3 {
		t.Fatalf("%d reservations in flight, want 3", n)
	}
	if ttl := rdb.PTTL(ctx, inflight).Val(); ttl <= 0 || ttl > lease+time.Second {
		t.Errorf("reservations' key TTL %v, want within the lease and a second", ttl)
	}
	time.Sleep(lease + 20*time.Millisecond)
	live := newStore(rdb, redislimit.WithLease(time.Minute))
	g, err := live.Reserve(ctx, key)
	if err != nil || !g.OK {
		t.Fatalf("reserve: %+v, %v", g, err)
	}
	if members := rdb.ZRange(ctx, inflight, 0, -1).Val(); len(members) != 1 || members[0] != g.ID {
		t.Errorf("in flight after the lease: %v, want only %s", members, g.ID)
	}
	if err := live.Record(ctx, key, g, escrow.RateLimitAnswer{}); err != nil {
		t.Fatal(err)
	}
	// The set is empty now, and Redis drops an empty set.
	until(t, 5*time.Second, "the empty in-flight key to go", func() bool { return rdb.Exists(ctx, inflight).Val() == 0 })
}

// TestKeysExpireAndHoldNoSecrets: every key a client writes has a TTL, names the account
// by a hash only, and goes once idle; two base URLs keep two budgets.
func TestKeysExpireAndHoldNoSecrets(t *testing.T) {
	t.Parallel()
	rs := redisserver.Start(t)
	rdb := redisClient(t, rs)
	ctx := context.Background()
	const ttl = 3 * time.Second // long enough for both calls on a loaded machine
	store := newStore(rdb, redislimit.WithTTL(ttl))
	// Without rate-limit headers there is no window whose reset would outlast the idle TTL.
	srvA, acctA := emulator(t, escrowtest.WithRateLimit(0, 0))
	srvB := escrowtest.NewServer(escrowtest.WithRateLimit(0, 0))
	t.Cleanup(srvB.Close)
	acctB := srvB.AddCustomer(acctA.Email) // the same address, at another base URL
	for _, c := range []*escrow.Client{
		replica(t, srvA, acctA, srvA.Client().Transport, store, nil),
		replica(t, srvB, acctB, srvB.Client().Transport, store, nil),
	} {
		if _, err := c.Customers.Get(ctx, escrow.Me); err != nil {
			t.Fatal(err)
		}
	}
	keys := rdb.Keys(ctx, "*").Val()
	pattern := regexp.MustCompile(`^` + regexp.QuoteMeta(redislimit.DefaultPrefix) + `\{[0-9a-f]{32}\}:` + regexp.QuoteMeta(meEndpoint) + `$`)
	if len(keys) != 2 {
		t.Fatalf("keys %q; want one state key per base URL (in-flight sets are empty, so gone)", keys)
	}
	for _, k := range keys {
		if !pattern.MatchString(k) {
			t.Errorf("key %q is not prefix{account hash}:endpoint", k)
		}
		for _, secret := range []string{acctA.Email, acctA.APIKey, acctB.APIKey, "127.0.0.1"} {
			if strings.Contains(k, secret) {
				t.Errorf("key %q holds %q", k, secret)
			}
			for field, v := range rdb.HGetAll(ctx, k).Val() {
				if strings.Contains(v, secret) {
					t.Errorf("field %s of %q holds %q", field, k, secret)
				}
			}
		}
		if got := rdb.PTTL(ctx, k).Val(); got <= 0 || got > ttl {
			t.Errorf("key %q has TTL %v, want at most the idle TTL of %v", k, got, ttl)
		}
		if sent := rdb.HGet(ctx, k, "sent").Val(); sent != strconv.Itoa(1) {
			t.Errorf("sent = %q in %s, want 1: the two base URLs shared a budget", sent, k)
		}
	}
	until(t, ttl+5*time.Second, "the idle keys to expire", func() bool { return rdb.DBSize(ctx).Val() == 0 })
}

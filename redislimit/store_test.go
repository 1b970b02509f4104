package redislimit_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	escrow "github.com/escrowkit/escrow-go"
	"github.com/escrowkit/escrow-go/escrowtest"
	"github.com/escrowkit/escrow-go/internal/logtest"
	"github.com/escrowkit/escrow-go/internal/redisserver"
	"github.com/escrowkit/escrow-go/redislimit"
	"github.com/redis/go-redis/v9"
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

// The tests from here pin the store's edges: bad keys, Redis away, options, and how the
// window, probe and hold arithmetic of budget.lua behaves. Like the others, each runs against
// a redis-server of its own, but for TestAnswerNotUnderstoodIsAnError, whose answers no Redis
// gives.

// TestKeyWithoutAccountOrEndpointRefused: a key missing its account or its endpoint is
// refused by both operations with ErrBadKey, naming the operation, and writes nothing.
func TestKeyWithoutAccountOrEndpointRefused(t *testing.T) {
	t.Parallel()
	rdb := redisClient(t, redisserver.Start(t))
	store := newStore(rdb)
	ctx := context.Background()
	for _, key := range []escrow.RateLimitKey{
		{Account: strings.Repeat("ab", 16)},
		{Endpoint: meEndpoint},
	} {
		_, err := store.Reserve(ctx, key)
		var rerr *redislimit.Error
		if !errors.Is(err, redislimit.ErrBadKey) || !errors.As(err, &rerr) || rerr.Op != "reserve" {
			t.Errorf("Reserve(%+v) = %v, want a reserve Error wrapping ErrBadKey", key, err)
		}
		err = store.Record(ctx, key, escrow.RateLimitGrant{OK: true, ID: "x"}, ok(3, time.Minute))
		if !errors.Is(err, redislimit.ErrBadKey) || !errors.As(err, &rerr) || rerr.Op != "record" {
			t.Errorf("Record(%+v) = %v, want a record Error wrapping ErrBadKey", key, err)
		}
	}
	if n := rdb.DBSize(ctx).Val(); n != 0 {
		t.Errorf("%d keys written for keys refused", n)
	}
}

// TestRedisAwayIsAnErrorNamingTheOperation: with Redis stopped, both operations fail with an
// Error that says which one failed and unwraps to the network error.
func TestRedisAwayIsAnErrorNamingTheOperation(t *testing.T) {
	t.Parallel()
	rs := redisserver.Start(t)
	store := newStore(redisClient(t, rs))
	rs.Stop()
	ctx := context.Background()
	key := budgetKey(meEndpoint)
	_, err := store.Reserve(ctx, key)
	var nerr *net.OpError
	if err == nil || !strings.HasPrefix(err.Error(), "redislimit: reserve: ") || !errors.As(err, &nerr) {
		t.Errorf("Reserve with Redis stopped: %v, want \"redislimit: reserve: \" and the network error", err)
	}
	err = store.Record(ctx, key, escrow.RateLimitGrant{OK: true, ID: "x"}, ok(3, time.Minute))
	if err == nil || !strings.HasPrefix(err.Error(), "redislimit: record: ") || !errors.As(err, &nerr) {
		t.Errorf("Record with Redis stopped: %v, want \"redislimit: record: \" and the network error", err)
	}
}

// TestPrefixNamesEveryKey: WithPrefix puts the keys under the prefix given, so that two
// applications on one Redis keep apart.
func TestPrefixNamesEveryKey(t *testing.T) {
	t.Parallel()
	rdb := redisClient(t, redisserver.Start(t))
	store := newStore(rdb, redislimit.WithPrefix("shop:"))
	ctx := context.Background()
	key := budgetKey(meEndpoint)
	g := reserve(t, store, key)
	state, inflight := store.Keys(key)
	if !strings.HasPrefix(state, "shop:{") || inflight != state+":inflight" {
		t.Errorf("keys %q, %q; want them under shop:{account}", state, inflight)
	}
	for _, k := range []string{state, inflight} {
		if rdb.Exists(ctx, k).Val() != 1 {
			t.Errorf("no key %q after a reservation; keys: %v", k, rdb.Keys(ctx, "*").Val())
		}
	}
	record(t, store, key, g, ok(3, time.Minute))
}

// TestNonPositiveOptionsKeepTheDefaults: a zero or negative timeout, lease or TTL is
// ignored, not taken literally (which would fail every call, or expire every reservation
// and key at once).
func TestNonPositiveOptionsKeepTheDefaults(t *testing.T) {
	t.Parallel()
	rdb := redisClient(t, redisserver.Start(t))
	ctx := context.Background()
	for i, d := range []time.Duration{0, -time.Second} {
		// newStore's own timeout (5s, for a loaded machine) comes first: a later
		// non-positive one must leave it.
		store := newStore(rdb, redislimit.WithTimeout(d), redislimit.WithLease(d), redislimit.WithTTL(d))
		key := budgetKey([]string{"GET /a", "GET /b"}[i])
		g, err := store.Reserve(ctx, key)
		if err != nil || !g.OK {
			t.Fatalf("options %v: reserve: %+v, %v", d, g, err)
		}
		state, inflight := store.Keys(key)
		// The reservation is held for the default lease; its key lives a second more.
		if ttl := rdb.PTTL(ctx, inflight).Val(); ttl <= redislimit.DefaultLease || ttl > redislimit.DefaultLease+time.Second {
			t.Errorf("options %v: reservations' key TTL %v, want the default lease and a second", d, ttl)
		}
		if score := rdb.ZScore(ctx, inflight, g.ID).Val(); score == 0 {
			t.Errorf("options %v: the reservation is not in flight", d)
		}
		if ttl := rdb.PTTL(ctx, state).Val(); ttl <= redislimit.DefaultTTL-time.Minute || ttl > redislimit.DefaultTTL {
			t.Errorf("options %v: state TTL %v, want the default %v", d, ttl, redislimit.DefaultTTL)
		}
		if err := store.Record(ctx, key, g, ok(3, -1)); err != nil {
			t.Errorf("options %v: record: %v", d, err)
		}
	}
}

// TestShortTTLIsASecond: a TTL under a second is taken as a second.
func TestShortTTLIsASecond(t *testing.T) {
	t.Parallel()
	rdb := redisClient(t, redisserver.Start(t))
	ctx := context.Background()
	store := newStore(rdb, redislimit.WithTTL(10*time.Millisecond))
	key := budgetKey(meEndpoint)
	start := time.Now()
	g := reserve(t, store, key)
	state, _ := store.Keys(key)
	ttl := rdb.PTTL(ctx, state).Val()
	// What is left of the TTL plus the time the calls took is about a second, unless the
	// machine stalled so long that the key may have gone (then nothing can be told).
	if elapsed := time.Since(start); elapsed < 900*time.Millisecond && (ttl > time.Second || ttl+elapsed <= 500*time.Millisecond) {
		t.Errorf("state TTL %v after %v, want a second", ttl, elapsed)
	}
	record(t, store, key, g, ok(3, -1))
}

var (
	bare429 = escrow.RateLimitAnswer{Answered: true, Status: 429, Limit: -1, Remaining: 0, Reset: -1}
	bareOK  = escrow.RateLimitAnswer{Answered: true, Status: 200, Limit: -1, Remaining: -1, Reset: -1}
)

// said is a success carrying the three headers (a limit or remaining count of -1, or a reset
// of -1, is a header left out).
func said(limit, remaining int, reset time.Duration) escrow.RateLimitAnswer {
	return escrow.RateLimitAnswer{Answered: true, Status: 200, Limit: limit, Remaining: remaining, Reset: reset}
}

// unasked is the grant of a request a replica sent without asking the store (its Redis was
// away), reported when Redis is back.
var unasked = escrow.RateLimitGrant{OK: true, ID: "unasked"}

// takeAll counts the requests the budget lets out now, up to most.
func takeAll(t *testing.T, s *redislimit.Store, key escrow.RateLimitKey, most int) int {
	t.Helper()
	for i := range most {
		if g := reserve(t, s, key); !g.OK {
			return i
		} else if g.Probe {
			t.Fatalf("request %d of the window went as a probe: %+v", i, g)
		}
	}
	return most
}

// nextProbe waits, as a client does, until the budget lets out a request, and wants it a
// probe.
func nextProbe(t *testing.T, s *redislimit.Store, key escrow.RateLimitKey) escrow.RateLimitGrant {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		g := reserve(t, s, key)
		if g.OK {
			if !g.Probe {
				t.Fatalf("after a bare 429: %+v, want a probe", g)
			}
			return g
		}
		time.Sleep(max(g.Wait, 5*time.Millisecond))
	}
	t.Fatal("no probe within 5s of a bare 429")
	return escrow.RateLimitGrant{}
}

// TestWindowResetGivesBackTheLimit: once a spent window resets, the whole limit goes out at
// once, as ordinary requests, and no more than the limit.
func TestWindowResetGivesBackTheLimit(t *testing.T) {
	t.Parallel()
	a, b := twoReplicas(t)
	key := budgetKey(meEndpoint)
	record(t, a, key, reserve(t, a, key), said(3, 0, 300*time.Millisecond))
	time.Sleep(350 * time.Millisecond)
	if n := takeAll(t, b, key, 5); n != 3 {
		t.Errorf("%d requests let out in the new window, want its limit of 3", n)
	}
}

// TestWindowResetWithoutALimitFreesTheEndpoint: a spent window whose limit was never said
// frees the endpoint when it resets: the calls go, not one probe at a time.
func TestWindowResetWithoutALimitFreesTheEndpoint(t *testing.T) {
	t.Parallel()
	a, b := twoReplicas(t)
	key := budgetKey(meEndpoint)
	record(t, a, key, reserve(t, a, key), said(-1, 0, 300*time.Millisecond))
	time.Sleep(350 * time.Millisecond)
	if n := takeAll(t, b, key, 5); n != 5 {
		t.Errorf("%d requests let out after the reset, want all 5 asked for", n)
	}
}

// TestNewWindowStartsItsOwnCount: the requests sent in a window that has reset are not
// counted against the next one: a replica alone on the account spends the new window whole,
// and the new window's answers are heeded.
func TestNewWindowStartsItsOwnCount(t *testing.T) {
	t.Parallel()
	a, b := twoReplicas(t)
	key := budgetKey(meEndpoint)
	var old []escrow.RateLimitGrant
	for range 3 {
		old = append(old, reserve(t, a, key))
	}
	for i, g := range old {
		record(t, a, key, g, said(5, 4-i, 500*time.Millisecond))
	}
	time.Sleep(600 * time.Millisecond)
	// The new window: two sent, and the server counts them 4 and 3.
	g1, g2 := reserve(t, a, key), reserve(t, b, key)
	record(t, a, key, g1, said(5, 4, time.Minute))
	record(t, b, key, g2, said(5, 3, time.Minute))
	if n := takeAll(t, b, key, 6); n != 3 {
		t.Errorf("%d more requests let out in the new window, want 3 (5 less the 2 sent in it)", n)
	}
}

// TestFirstAnswerCountsTheRequestsInFlight: the first answer of a window says 2 left while
// two other requests are on their way; those may spend the 2, so nothing more goes out.
func TestFirstAnswerCountsTheRequestsInFlight(t *testing.T) {
	t.Parallel()
	a, b := twoReplicas(t)
	key := budgetKey(meEndpoint)
	first := reserve(t, a, key)
	reserve(t, b, key)
	reserve(t, b, key)
	record(t, a, key, first, said(5, 2, time.Minute))
	if g := reserve(t, a, key); g.OK {
		t.Errorf("a fourth request let out: %+v, want it held (the two in flight may take the 2 left)", g)
	}
}

// TestOthersSpendingShows: an answer lower than this budget's own requests explain means
// another client spends from the allowance too; what it says is left, less the requests in
// flight, is what goes out, and an answer overtaken on the way back changes nothing.
func TestOthersSpendingShows(t *testing.T) {
	t.Parallel()
	a, b := twoReplicas(t)
	key := budgetKey(meEndpoint)
	record(t, a, key, reserve(t, a, key), said(10, 9, time.Minute))
	g1, g2 := reserve(t, a, key), reserve(t, b, key)
	// Someone else spent 3: the server counted g2 at 5 and g1 at 4, and g1's answer comes first.
	record(t, a, key, g1, said(10, 4, time.Minute))
	record(t, b, key, g2, said(10, 5, time.Minute))
	if n := takeAll(t, b, key, 12); n != 3 {
		t.Errorf("%d more requests let out, want 3 (4 left, less g2 then in flight)", n)
	}
}

// TestSpentWindowIgnoresOvertakenAnswers: once an answer has said 0 left, one counted
// earlier and saying 2 does not reopen the window.
func TestSpentWindowIgnoresOvertakenAnswers(t *testing.T) {
	t.Parallel()
	a, b := twoReplicas(t)
	key := budgetKey(meEndpoint)
	var gs []escrow.RateLimitGrant
	for range 4 {
		gs = append(gs, reserve(t, a, key))
	}
	record(t, a, key, gs[3], said(5, 0, time.Minute))
	record(t, a, key, gs[1], said(5, 2, time.Minute))
	if g := reserve(t, b, key); g.OK || g.Wait < 50*time.Second {
		t.Errorf("after 0 left, then an earlier-counted 2: %+v, want a hold to the reset", g)
	}
}

// TestUnknownLimitPacesOnWhatIsLeft: without RateLimit-Limit, the requests let out are what
// the server says is left, not none.
func TestUnknownLimitPacesOnWhatIsLeft(t *testing.T) {
	t.Parallel()
	a, b := twoReplicas(t)
	key := budgetKey(meEndpoint)
	record(t, a, key, reserve(t, a, key), said(-1, 9, time.Minute))
	g := reserve(t, b, key)
	record(t, b, key, g, said(-1, 6, time.Minute)) // others spent 2
	if n := takeAll(t, a, key, 10); n != 6 {
		t.Errorf("%d requests let out, want the 6 left", n)
	}
}

// TestBare429WaitsForTheAnswersInFlight: after a 429 that says nothing of the reset, a
// request still in flight is waited for rather than probed past, and its plain success
// frees the endpoint.
func TestBare429WaitsForTheAnswersInFlight(t *testing.T) {
	t.Parallel()
	a, b := twoReplicas(t)
	key := budgetKey(meEndpoint)
	refused, inFlight := reserve(t, a, key), reserve(t, b, key)
	record(t, a, key, refused, bare429)
	time.Sleep(300 * time.Millisecond) // past the first probe interval
	if g := reserve(t, a, key); g.OK || g.Wait != 0 {
		t.Errorf("with a request in flight: %+v, want a short step while its answer is awaited", g)
	}
	record(t, b, key, inFlight, bareOK)
	if g := reserve(t, a, key); !g.OK || g.Probe {
		t.Errorf("after the request in flight succeeded: %+v, want the call sent freely", g)
	}
}

// TestRefusedProbesAreSpacedFurtherApart: each bare 429 in a row doubles the interval
// before the next probe, from 250ms up to 5s; a refused or unanswered probe lets the next
// one go after its interval, not after its lease.
func TestRefusedProbesAreSpacedFurtherApart(t *testing.T) {
	t.Parallel()
	a, b := twoReplicas(t)
	for _, c := range []struct {
		refusals int
		min, max time.Duration
	}{
		// Halfway between the interval and one doubling less: 1s, not 500ms; 5s, not 4s.
		{3, 750 * time.Millisecond, time.Second},
		{6, 4500 * time.Millisecond, 5 * time.Second},
	} {
		key := budgetKey("GET /refused/" + strconv.Itoa(c.refusals))
		var gs []escrow.RateLimitGrant
		for range c.refusals {
			gs = append(gs, reserve(t, a, key))
		}
		var start time.Time
		for _, g := range gs {
			start = time.Now() // the interval runs from the last refusal
			record(t, a, key, g, bare429)
		}
		// The wait is the interval less the time since the last refusal: the interval is
		// the wait plus that time, which a loaded machine makes long.
		g := reserve(t, b, key)
		if interval := g.Wait + time.Since(start); g.OK || g.Wait > c.max || interval <= c.min {
			t.Errorf("after %d bare 429s: %+v, an interval of about %v; want one in (%v, %v]", c.refusals, g, interval, c.min, c.max)
		}
	}

	key := budgetKey("GET /probed")
	record(t, a, key, reserve(t, a, key), bare429)
	probe := nextProbe(t, b, key)
	record(t, b, key, probe, bare429)
	if g := reserve(t, a, key); !g.OK && g.Wait == 0 {
		t.Errorf("after the probe was refused: %+v, want the next probe's interval, not a wait for the probe's lease", g)
	}
	probe = nextProbe(t, a, key)
	record(t, a, key, probe, escrow.RateLimitAnswer{}) // no answer: a transport error
	time.Sleep(time.Second)                            // past the interval
	if g := reserve(t, b, key); !g.OK || !g.Probe {
		t.Errorf("after a probe got no answer: %+v, want the next probe", g)
	}
}

// TestEachBare429EpisodeStartsAtTheFirstInterval: once the endpoint has served again, or a
// 429 said when it resets, the next bare 429 is probed after the first interval, 250ms, not
// after the longer one the earlier refusals had reached.
func TestEachBare429EpisodeStartsAtTheFirstInterval(t *testing.T) {
	t.Parallel()
	a, b := twoReplicas(t)
	ended := map[string]func(key escrow.RateLimitKey){
		"a probe answered with requests left": func(key escrow.RateLimitKey) {
			record(t, a, key, reserve(t, a, key), bare429)
			record(t, b, key, nextProbe(t, b, key), said(10, 5, -1))
		},
		"a probe answered without headers": func(key escrow.RateLimitKey) {
			record(t, a, key, reserve(t, a, key), bare429)
			record(t, b, key, nextProbe(t, b, key), bareOK)
		},
		"a 429 that said when it resets": func(key escrow.RateLimitKey) {
			record(t, a, key, reserve(t, a, key), escrow.RateLimitAnswer{Answered: true, Status: 429, Limit: -1, Remaining: 0, Reset: 300 * time.Millisecond})
			time.Sleep(350 * time.Millisecond)
		},
	}
	for what, end := range ended {
		key := budgetKey("GET /" + strings.ReplaceAll(what, " ", "-"))
		end(key)
		g := reserve(t, a, key)
		if !g.OK || g.Probe {
			t.Fatalf("after %s: %+v, want the call sent", what, g)
		}
		start := time.Now()
		record(t, a, key, g, bare429)
		// A wait of at most the first interval; or, if the machine stalled past it, the
		// probe it leads to.
		g = reserve(t, b, key)
		waited := g.OK && g.Probe && time.Since(start) >= 250*time.Millisecond
		if !waited && (g.OK || g.Wait <= 0 || g.Wait > 250*time.Millisecond) {
			t.Errorf("a bare 429 after %s: %+v, want a wait of at most the first interval", what, g)
		}
	}
}

// TestWindowSaidToResetNowIsNotWaitedFor: a Retry-After or RateLimit-Reset of 0 means the
// window has reset: the next call goes at once, as an ordinary request.
func TestWindowSaidToResetNowIsNotWaitedFor(t *testing.T) {
	t.Parallel()
	a, b := twoReplicas(t)
	for what, answer := range map[string]escrow.RateLimitAnswer{
		"429, Retry-After: 0":       {Answered: true, Status: 429, Limit: -1, Remaining: 0, Reset: 0},
		"0 left, RateLimit-Reset 0": said(5, 0, 0),
	} {
		key := budgetKey("GET /" + what)
		record(t, a, key, reserve(t, a, key), answer)
		if g := reserve(t, b, key); !g.OK || g.Probe {
			t.Errorf("after %s: %+v, want the call sent", what, g)
		}
	}
}

// TestWindowEndIsTheEarliestSaid: RateLimit-Reset is rounded up, so of a window's answers
// the earliest end is kept; an answer that leaves the header out moves it neither way.
func TestWindowEndIsTheEarliestSaid(t *testing.T) {
	t.Parallel()
	a, b := twoReplicas(t)
	key := budgetKey(meEndpoint)
	record(t, a, key, reserve(t, a, key), said(5, 0, 31*time.Second))
	record(t, b, key, unasked, said(5, 0, 30*time.Second))
	record(t, b, key, unasked, said(5, 0, 45*time.Second))
	record(t, b, key, unasked, said(5, 0, -1))
	if g := reserve(t, a, key); g.OK || g.Wait <= 25*time.Second || g.Wait > 30*time.Second {
		t.Errorf("held %+v, want about 30s: the earliest end said", g)
	}
}

// TestHoldOutlivesTheIdleTTL: a spent window's state stays in Redis until after it resets,
// whatever the idle TTL, so that no replica forgets the hold.
func TestHoldOutlivesTheIdleTTL(t *testing.T) {
	t.Parallel()
	rdb := redisClient(t, redisserver.Start(t))
	a := newStore(rdb, redislimit.WithTTL(time.Second))
	key := budgetKey(meEndpoint)
	record(t, a, key, reserve(t, a, key), said(5, 0, 5*time.Second))
	held := reserve(t, a, key)
	state, _ := a.Keys(key)
	if ttl := rdb.PTTL(context.Background(), state).Val(); held.OK || ttl <= held.Wait {
		t.Errorf("state TTL %v for a hold of %+v: the state would go before the window resets", ttl, held)
	}
}

// TestBareAnswersLiftOnlyAnUnexplainedExhaustion: a success without headers ends the
// probing after a bare 429, but neither a hold whose reset is known nor what the server
// said is left; and a client error without headers ends nothing.
func TestBareAnswersLiftOnlyAnUnexplainedExhaustion(t *testing.T) {
	t.Parallel()
	a, b := twoReplicas(t)
	key := budgetKey("GET /held")
	record(t, a, key, reserve(t, a, key), said(5, 0, 30*time.Second))
	record(t, b, key, unasked, bareOK)
	if g := reserve(t, a, key); g.OK {
		t.Errorf("a bare success lifted a hold whose reset was known: %+v", g)
	}

	key = budgetKey("GET /left")
	record(t, a, key, reserve(t, a, key), said(5, 2, -1))
	record(t, b, key, unasked, bareOK)
	if n := takeAll(t, a, key, 5); n != 2 {
		t.Errorf("%d requests let out after a bare success, want the 2 said to be left", n)
	}

	key = budgetKey("GET /probing")
	record(t, a, key, reserve(t, a, key), bare429)
	probe := nextProbe(t, b, key)
	record(t, b, key, probe, escrow.RateLimitAnswer{Answered: true, Status: 400, Limit: -1, Remaining: -1, Reset: -1})
	if g := reserve(t, a, key); g.OK && !g.Probe {
		t.Errorf("a 400 without headers ended the probing: %+v", g)
	}
}

// garbled answers every script with a value of its choosing, as no budget.lua does: a proxy
// in the way, or another program's script. (No real Redis gives these, so this test has none.)
type garbled struct {
	redis.Scripter
	val any
}

func (g garbled) EvalSha(ctx context.Context, _ string, _ []string, _ ...any) *redis.Cmd {
	cmd := redis.NewCmd(ctx)
	cmd.SetVal(g.val)
	return cmd
}

// TestAnswerNotUnderstoodIsAnError: a reservation answered with anything but four numbers,
// the wait and the window non-negative, is a reserve Error, which sends the client to its own
// memory, rather than a grant made of it.
func TestAnswerNotUnderstoodIsAnError(t *testing.T) {
	t.Parallel()
	for _, val := range []any{
		[]any{int64(1), int64(0), int64(0)},
		[]any{int64(0), int64(-5), int64(0), int64(2)},
		[]any{int64(1), int64(0), int64(0), int64(-1)},
		"OK",
	} {
		store := redislimit.New(garbled{val: val})
		g, err := store.Reserve(context.Background(), budgetKey(meEndpoint))
		var rerr *redislimit.Error
		if !errors.As(err, &rerr) || rerr.Op != "reserve" {
			t.Errorf("answer %v: %+v, %v; want a reserve Error", val, g, err)
		}
	}
}

// TestDefaultStoreServes: a Store made with no options answers a healthy Redis (its default
// timeout, 250ms, is a timeout, not none). A loaded test machine may miss 250ms once, so
// one success in three tries will do.
func TestDefaultStoreServes(t *testing.T) {
	t.Parallel()
	store := redislimit.New(redisClient(t, redisserver.Start(t)))
	key := budgetKey(meEndpoint)
	var err error
	for range 3 {
		var g escrow.RateLimitGrant
		if g, err = store.Reserve(context.Background(), key); err == nil {
			if err = store.Record(context.Background(), key, g, ok(5, time.Minute)); err == nil {
				return
			}
		}
	}
	t.Errorf("a Store at its defaults failed three times against a healthy Redis: %v", err)
}

// TestLongerTimeoutWaitsForASlowRedis: WithTimeout longer than the default is honoured: a
// Redis that answers after 600ms still serves a Store given 5s.
func TestLongerTimeoutWaitsForASlowRedis(t *testing.T) {
	t.Parallel()
	rs := redisserver.Start(t)
	store := redislimit.New(redisClient(t, rs), redislimit.WithTimeout(5*time.Second))
	key := budgetKey(meEndpoint)
	ctx := context.Background()
	record(t, store, key, reserve(t, store, key), ok(5, time.Minute)) // loads the script
	if err := redisClient(t, rs).ClientPause(ctx, 600*time.Millisecond).Err(); err != nil {
		t.Fatal(err)
	}
	if _, err := store.Reserve(ctx, key); err != nil {
		t.Errorf("with Redis paused for 600ms and a timeout of 5s: %v", err)
	}
}

// TestAnswersOutsideTheClientsHabitsAreReadSafely: Store is public, and a caller other than
// escrow.Client may report a limit of 0 (the client reports -1) or a 429 without a remaining
// count (the client reports 0). A limit of 0 is no limit: the one known is kept, and the next
// window gives it back. A 429 is nothing left, whatever the count says.
func TestAnswersOutsideTheClientsHabitsAreReadSafely(t *testing.T) {
	t.Parallel()
	a, b := twoReplicas(t)

	key := budgetKey("GET /zero-limit")
	record(t, a, key, reserve(t, a, key), said(3, 0, 300*time.Millisecond))
	record(t, b, key, unasked, said(0, 0, 300*time.Millisecond))
	time.Sleep(350 * time.Millisecond)
	if n := takeAll(t, b, key, 5); n != 3 {
		t.Errorf("%d requests let out in the next window after a limit of 0 was reported, want the known limit of 3", n)
	}

	key = budgetKey("GET /uncounted-429")
	record(t, a, key, reserve(t, a, key), escrow.RateLimitAnswer{Answered: true, Status: 429, Limit: -1, Remaining: -1, Reset: 30 * time.Second})
	if g := reserve(t, b, key); g.OK || g.Wait <= 25*time.Second {
		t.Errorf("after a 429 asking for 30s, without a remaining count: %+v, want a hold of about 30s", g)
	}
}

// The budget script is the client's own memory (ratelimit.go) moved into Redis; these are
// that memory's cases, run against the script through two Stores, as two replicas.

func budgetKey(endpoint string) escrow.RateLimitKey {
	return escrow.RateLimitKey{Account: strings.Repeat("0f", 16), Endpoint: endpoint}
}

// ok is a success in a window of twenty.
func ok(remaining int, reset time.Duration) escrow.RateLimitAnswer { return said(20, remaining, reset) }

// twoReplicas is two Stores on one fresh Redis server, as two replicas of one application.
func twoReplicas(t *testing.T) (a, b *redislimit.Store) {
	t.Helper()
	rdb := redisClient(t, redisserver.Start(t))
	return newStore(rdb), newStore(rdb)
}

func reserve(t *testing.T, s *redislimit.Store, key escrow.RateLimitKey) escrow.RateLimitGrant {
	t.Helper()
	g, err := s.Reserve(context.Background(), key)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func record(t *testing.T, s *redislimit.Store, key escrow.RateLimitKey, g escrow.RateLimitGrant, a escrow.RateLimitAnswer) {
	t.Helper()
	if err := s.Record(context.Background(), key, g, a); err != nil {
		t.Fatal(err)
	}
}

// TestBudgetSpendsTheWholeAllowanceWhateverTheAnswersOrder: two replicas that sent eleven
// requests in a window of twenty have nine left, whatever order the answers came back in.
func TestBudgetSpendsTheWholeAllowanceWhateverTheAnswersOrder(t *testing.T) {
	t.Parallel()
	a, b := twoReplicas(t)
	key := budgetKey("GET /transaction/{id}")
	first := reserve(t, a, key)
	record(t, a, key, first, ok(19, time.Minute))
	var grants []escrow.RateLimitGrant
	for i := range 10 {
		s := []*redislimit.Store{a, b}[i%2]
		g := reserve(t, s, key)
		if !g.OK {
			t.Fatalf("refused within the allowance: %+v", g)
		}
		grants = append(grants, g)
	}
	// The server counted them 18 down to 9; the answers arrive last-counted first.
	for i, g := range grants {
		record(t, []*redislimit.Store{a, b}[i%2], key, g, ok(9+i, time.Minute))
	}
	taken := 0
	for reserve(t, b, key).OK {
		taken++
	}
	if taken != 9 {
		t.Errorf("%d more requests allowed in the window, want 9 (20 less the 11 sent)", taken)
	}
}

// TestBudgetOvertakenFirstAnswerIsNoNews: the first answer of a window is its lowest yet.
// Here it says 1 left (limit 5); the answer the server counted before it comes back after
// it and says 4. Taking the 4 for news would make the replicas think they are alone on the
// account, with 3 left, and send two requests to a certain 429.
func TestBudgetOvertakenFirstAnswerIsNoNews(t *testing.T) {
	t.Parallel()
	a, b := twoReplicas(t)
	key := budgetKey("GET /transaction/{id}")
	earlier, later := reserve(t, a, key), reserve(t, b, key) // another client spends two between them
	record(t, b, key, later, said(5, 1, time.Minute))
	record(t, a, key, earlier, said(5, 4, time.Minute))
	taken := 0
	for range 3 {
		if reserve(t, []*redislimit.Store{a, b}[taken%2], key).OK {
			taken++
		}
	}
	if taken > 1 {
		t.Errorf("%d more requests allowed in the window, want at most the 1 left", taken)
	}
}

// TestBudgetAnswerOfAnEndedWindowHoldsNothing: an answer that comes back after its window
// has reset speaks of that window: its "0 left" must not hold the new window's requests.
func TestBudgetAnswerOfAnEndedWindowHoldsNothing(t *testing.T) {
	t.Parallel()
	a, b := twoReplicas(t)
	key := budgetKey("GET /transaction/{id}")
	const window = time.Second // ample for the next reserve to fall within it on a loaded machine
	first := reserve(t, a, key)
	record(t, a, key, first, escrow.RateLimitAnswer{Answered: true, Status: 200, Limit: 5, Remaining: 4, Reset: window})
	slow := reserve(t, b, key) // its answer takes longer than the window has left
	time.Sleep(window + 50*time.Millisecond)
	record(t, b, key, slow, escrow.RateLimitAnswer{Answered: true, Status: 200, Limit: 5, Remaining: 0, Reset: 2 * time.Second})
	if g := reserve(t, a, key); !g.OK {
		t.Errorf("in the new window: %+v, want the request sent: the 0 left was the old window's", g)
	}
}

// TestBudgetHoldIsShared: a window one replica saw spent holds the other until it resets.
func TestBudgetHoldIsShared(t *testing.T) {
	t.Parallel()
	a, b := twoReplicas(t)
	key := budgetKey("GET /customer/{customer_id}")
	g := reserve(t, a, key)
	record(t, a, key, g, ok(0, 30*time.Second))
	held := reserve(t, b, key)
	if held.OK || held.Wait <= 29*time.Second || held.Wait > 30*time.Second {
		t.Errorf("the other replica got %+v, want a hold of about 30s", held)
	}
	refused := escrow.RateLimitAnswer{Answered: true, Status: 429, Limit: -1, Remaining: 0, Reset: 45 * time.Second}
	// A replica that sent without asking (its Redis was away) reports its 429.
	record(t, b, key, escrow.RateLimitGrant{OK: true, ID: "unreserved"}, refused)
	if held := reserve(t, a, key); held.OK || held.Wait <= 44*time.Second {
		t.Errorf("after a 429 asking for 45s: %+v", held)
	}
}

// TestBudgetBare429ProbesOneAtATime: after a 429 that says nothing of the reset, one
// request at a time probes, no sooner than the probe interval, and a success ends it.
func TestBudgetBare429ProbesOneAtATime(t *testing.T) {
	t.Parallel()
	a, b := twoReplicas(t)
	key := budgetKey("GET /transaction")
	g := reserve(t, a, key)
	record(t, a, key, g, escrow.RateLimitAnswer{Answered: true, Status: 429, Limit: -1, Remaining: 0, Reset: -1})
	probe := reserve(t, b, key)
	if !probe.OK { // on a loaded machine the interval may have passed already
		if probe.Wait <= 0 || probe.Wait > 250*time.Millisecond {
			t.Fatalf("right after a bare 429: %+v, want a wait of at most the first probe interval", probe)
		}
		time.Sleep(probe.Wait + 10*time.Millisecond)
		probe = reserve(t, b, key)
	}
	if !probe.OK || !probe.Probe {
		t.Fatalf("after the interval: %+v, want a probe", probe)
	}
	if other := reserve(t, a, key); other.OK || other.Wait != 0 {
		t.Fatalf("while the probe is in flight: %+v, want a short step", other)
	}
	record(t, b, key, probe, escrow.RateLimitAnswer{Answered: true, Status: 200, Limit: -1, Remaining: -1, Reset: -1})
	for i := range 5 {
		if g := reserve(t, a, key); !g.OK || g.Probe {
			t.Fatalf("request %d after the successful probe: %+v, want it sent freely", i, g)
		}
	}
}

// TestRedisSlowFallsBackWithinTheTimeout: a Redis that does not answer (paused) costs a
// call the store's timeout, not Redis's delay, and the call succeeds.
func TestRedisSlowFallsBackWithinTheTimeout(t *testing.T) {
	t.Parallel()
	rs := redisserver.Start(t)
	rdb := redisClient(t, rs)
	srv, acct := emulator(t)
	var logs logtest.Lines
	logger := slog.New(slog.NewTextHandler(&logs, nil))
	c := replica(t, srv, acct, srv.Client().Transport, redislimit.New(rdb, redislimit.WithTimeout(100*time.Millisecond)), logger)
	ctx := context.Background()
	if _, err := c.Customers.Get(ctx, escrow.Me); err != nil { // loads the script
		t.Fatal(err)
	}
	admin := redisClient(t, rs)
	const pause = 3 * time.Second
	if err := admin.ClientPause(ctx, pause).Err(); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if _, err := c.Customers.Get(ctx, escrow.Me); err != nil {
		t.Fatalf("call failed while Redis was paused: %v", err)
	}
	took := time.Since(start)
	t.Logf("the call took %v", took)
	if took >= pause {
		t.Errorf("the call took %v: it waited for Redis, not the 100ms timeout", took)
	}
	if n := logs.Count("level=WARN"); n != 1 {
		t.Errorf("%d warnings, want 1:\n%s", n, logs.String())
	}
}

// TestBudgetHoldEndsAtTheLongestHold: an answer whose reset is a year away (as a client at
// a longer hold, or any other client of the store, may report) holds the shared endpoint
// for the store's longest hold at most; then one request probes it, the others wait for its
// answer, and an answer with requests left lets them go.
func TestBudgetHoldEndsAtTheLongestHold(t *testing.T) {
	t.Parallel()
	rdb := redisClient(t, redisserver.Start(t))
	a, b := newStore(rdb, redislimit.WithMaxHold(300*time.Millisecond)), newStore(rdb, redislimit.WithMaxHold(300*time.Millisecond))
	year := 365 * 24 * time.Hour
	for _, tt := range []struct {
		name   string
		answer escrow.RateLimitAnswer
	}{
		{"a success with nothing left, reset in a year", said(20, 0, year)},
		{"a 429 asking for a year", escrow.RateLimitAnswer{Answered: true, Status: 429, Limit: 20, Remaining: 0, Reset: year}},
		{"a client's own cut hold", escrow.RateLimitAnswer{Answered: true, Status: 429, Limit: 20, Remaining: 0, Reset: 100 * time.Millisecond, Capped: true}},
	} {
		key := budgetKey("GET /transaction/{id} " + tt.name)
		record(t, a, key, reserve(t, a, key), tt.answer)
		held := reserve(t, b, key)
		if held.OK || held.Wait > 300*time.Millisecond || held.Wait < 50*time.Millisecond {
			t.Errorf("%s: the other replica got %+v, want a hold of at most 300ms", tt.name, held)
		}
		probe := nextProbe(t, b, key)
		if g := reserve(t, a, key); g.OK {
			t.Errorf("%s: a second request went beside the probe: %+v", tt.name, g)
		}
		record(t, b, key, probe, said(20, 7, -1))
		if n := takeAll(t, a, key, 20); n != 7 {
			t.Errorf("%s: %d requests let out after the probe's answer, want the 7 it said are left", tt.name, n)
		}
	}
}

// TestBudgetCutsALongerHoldKeptBefore: a hold a store with a longer bound wrote is cut to
// the bound of the store that reads it.
func TestBudgetCutsALongerHoldKeptBefore(t *testing.T) {
	t.Parallel()
	rdb := redisClient(t, redisserver.Start(t))
	long, short := newStore(rdb, redislimit.WithMaxHold(time.Hour)), newStore(rdb, redislimit.WithMaxHold(200*time.Millisecond))
	key := budgetKey(meEndpoint)
	record(t, long, key, reserve(t, long, key), said(20, 0, 50*time.Minute))
	if held := reserve(t, short, key); held.OK || held.Wait > 200*time.Millisecond {
		t.Errorf("got %+v, want a hold of at most 200ms", held)
	}
	nextProbe(t, short, key)
}

// TestHealthyRedisNeverFails: every round trip to a Redis that answers succeeds. Each runs
// in a goroutine of its own, raced against the timeout; an early version sometimes took the
// end of its own context for the timeout and reported a healthy call as failed, which sends
// a client off the shared budget for a second.
func TestHealthyRedisNeverFails(t *testing.T) {
	t.Parallel()
	store := newStore(redisClient(t, redisserver.Start(t)))
	key := escrow.RateLimitKey{Account: strings.Repeat("5a", 16), Endpoint: "GET /transaction/{id}"}
	answer := escrow.RateLimitAnswer{Answered: true, Status: 200, Limit: 1 << 30, Remaining: 1 << 29, Reset: -1}
	ctx := context.Background()
	for i := range 3000 {
		g, err := store.Reserve(ctx, key)
		if err == nil {
			err = store.Record(ctx, key, g, answer)
		}
		if err != nil {
			t.Fatalf("round trip %d: %v", i, err)
		}
	}
}

// TestHostileResetHoldsNoReplicaLonger: one answer with nothing left and a reset a year
// away, in each form a server gives it, holds the endpoint for the other replica for the
// maximum hold at most, whether the clients' bound or the store's is the shorter; then its
// call goes.
func TestHostileResetHoldsNoReplicaLonger(t *testing.T) {
	t.Parallel()
	rdb := redisClient(t, redisserver.Start(t))
	const hold = 300 * time.Millisecond
	year := time.Now().Add(365 * 24 * time.Hour)
	hints := []struct {
		name    string
		status  int
		headers []string
	}{
		{"RateLimit-Reset, a year of seconds", 200, []string{"RateLimit-Reset", "31536000"}},
		{"RateLimit-Reset, epoch seconds", 200, []string{"RateLimit-Reset", strconv.FormatInt(year.Unix(), 10)}},
		{"RateLimit-Reset, epoch milliseconds", 200, []string{"RateLimit-Reset", strconv.FormatInt(year.UnixMilli(), 10)}},
		{"429, Retry-After seconds", 429, []string{"Retry-After", "31536000"}},
		{"429, Retry-After an HTTP date", 429, []string{"Retry-After", year.UTC().Format(http.TimeFormat)}},
		{"429, RateLimit-Reset epoch milliseconds", 429, []string{"RateLimit-Reset", strconv.FormatInt(year.UnixMilli(), 10)}},
	}
	for i, h := range hints { // each case is an account of its own on the one Redis
		for k, cfg := range []struct {
			name        string
			clientOpts  []escrow.Option
			storeBounds []redislimit.Option
		}{
			{"the clients' bound", []escrow.Option{escrow.WithMaxHold(hold)}, nil},
			{"the store's bound", nil, []redislimit.Option{redislimit.WithMaxHold(hold)}},
		} {
			var hits atomic.Int64
			srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				if hits.Add(1) == 1 {
					for j := 0; j+1 < len(h.headers); j += 2 {
						w.Header().Set(h.headers[j], h.headers[j+1])
					}
					w.Header().Set("RateLimit-Remaining", "0")
					w.WriteHeader(h.status)
				} else {
					w.Header().Set("RateLimit-Remaining", "50")
				}
				_, _ = w.Write([]byte(`{"id": 9}`))
			}))
			store := newStore(rdb, cfg.storeBounds...)
			replica := func() *escrow.Client {
				opts := append([]escrow.Option{escrow.WithBaseURL(srv.URL + "/2017-09-01/"), escrow.WithHTTPClient(srv.Client()),
					escrow.WithMaxRetries(0), escrow.WithMaxWait(time.Minute), escrow.WithRateLimitStore(store)}, cfg.clientOpts...)
				c, err := escrow.NewClient(fmt.Sprintf("hold%d-%d@replicas.test", i, k), "k/ey+=A1", opts...)
				if err != nil {
					t.Fatal(err)
				}
				return c
			}
			a, b := replica(), replica()
			_, _ = a.Transactions.Get(context.Background(), 9)
			start := time.Now()
			if _, err := b.Transactions.Get(context.Background(), 9); err != nil {
				t.Errorf("%s, %s: the other replica's call failed: %v", h.name, cfg.name, err)
			}
			if waited := time.Since(start); waited > hold+time.Second {
				t.Errorf("%s, %s: the other replica was held %v, want at most %v", h.name, cfg.name, waited, hold)
			}
			if n := hits.Load(); n != 2 {
				t.Errorf("%s, %s: %d requests reached the server, want 2", h.name, cfg.name, n)
			}
			srv.Close()
		}
	}
}

// BenchmarkAttempt is what Redis adds to one attempt of a call on loopback: its reservation
// and its record, two round trips, one after the other as a client makes them. It reports
// the median and 99th percentile beside the mean (ns/op).
//
//	go test -run '^$' -bench Attempt -benchtime 20000x ./redislimit/
func BenchmarkAttempt(b *testing.B) {
	rs := redisserver.Start(b)
	store := newStore(redisClient(b, rs))
	key := escrow.RateLimitKey{Account: strings.Repeat("cd", 16), Endpoint: "GET /transaction/{id}"}
	answer := escrow.RateLimitAnswer{Answered: true, Status: 200, Limit: 1 << 30, Remaining: 1 << 29, Reset: time.Minute}
	ctx := context.Background()
	var took []time.Duration
	for b.Loop() {
		start := time.Now()
		g, err := store.Reserve(ctx, key)
		if err != nil || !g.OK {
			b.Fatalf("reserve: %+v, %v", g, err)
		}
		if err := store.Record(ctx, key, g, answer); err != nil {
			b.Fatal(err)
		}
		took = append(took, time.Since(start))
	}
	b.StopTimer()
	sort.Slice(took, func(i, j int) bool { return took[i] < took[j] })
	q := func(p float64) float64 {
		return float64(took[min(int(p*float64(len(took))), len(took)-1)].Microseconds())
	}
	b.ReportMetric(q(0.5), "p50-us")
	b.ReportMetric(q(0.99), "p99-us")
}

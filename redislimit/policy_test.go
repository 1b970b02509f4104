package redislimit_test

import (
	"context"
	"errors"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	escrow "github.com/escrowkit/escrow-go"
	"github.com/escrowkit/escrow-go/internal/redisserver"
	"github.com/escrowkit/escrow-go/redislimit"
)

// These tests pin what the mutation run of store.go and the hand mutants of budget.lua found
// unpinned (TESTING.md, "Redis rate-limit store"). Like the others, each runs against a
// redis-server of its own, but for TestAnswerNotUnderstoodIsAnError, whose answers no Redis
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

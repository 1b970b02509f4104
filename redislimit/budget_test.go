package redislimit_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	escrow "github.com/escrowkit/escrow-go"
	"github.com/escrowkit/escrow-go/internal/logtest"
	"github.com/escrowkit/escrow-go/internal/redisserver"
	"github.com/escrowkit/escrow-go/redislimit"
)

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

package redislimit_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	escrow "github.com/escrowkit/escrow-go"
	"github.com/escrowkit/escrow-go/internal/redisserver"
	"github.com/escrowkit/escrow-go/redislimit"
)

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

package redislimit_test

import (
	"context"
	"strings"
	"testing"

	escrow "github.com/escrowkit/escrow-go"
	"github.com/escrowkit/escrow-go/internal/redisserver"
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

package redislimit_test

import (
	"context"
	"sort"
	"strings"
	"testing"
	"time"

	escrow "github.com/escrowkit/escrow-go"
	"github.com/escrowkit/escrow-go/internal/redisserver"
)

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

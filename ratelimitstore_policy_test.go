package escrow

// Policies of the shared rate-limit memory (a RateLimitStore) and of the client's own memory
// beside it that mutation testing (scripts/mutate ratelimit.go ratelimitstore.go) found
// unpinned.

import (
	"context"
	"log/slog"
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/escrowkit/escrow-go/internal/logtest"
)

// TestOwnCallsInFlightCountWhenLearningFromTheStore: calls this client sent on its own memory
// (while the store was away) and still awaiting answers spend from what a store-reserved
// call's answer says is left, so that were the store to go again the client would not count
// them twice over as free.
func TestOwnCallsInFlightCountWhenLearningFromTheStore(t *testing.T) {
	now := time.Unix(1_000_000, 0)
	l := newEndpointLimits(time.Millisecond, time.Minute)
	const ep = "GET /transaction/{id}"
	for range 2 { // sent on its own memory, knowing nothing yet: both go
		if _, _, ok := l.take(ep, now); !ok {
			t.Fatal("refused while nothing is known")
		}
	}
	l.learn(ep, answer(200, "", "5", ""), now) // the store's call: 5 left
	taken := takeAll(l, ep, now)
	if taken != 3 {
		t.Errorf("its own memory lets out %d more, want 3: the 5 left less its 2 in flight", taken)
	}
}

// TestStoreRetriedUntilItAnswers: a store that fails again when tried after an outage is
// tried again a second later, and once it answers the client paces on it again.
func TestStoreRetriedUntilItAnswers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store, logs, get := storeOutageTest(t)
		store.set(true)
		get() // the outage starts
		time.Sleep(time.Second)
		get() // tried again: still failing
		store.set(false)
		time.Sleep(time.Second)
		get() // tried again: it answers
		get()
		if r, w := store.counts(); r != 2 || w != 2 {
			t.Errorf("%d reserves and %d records once the store answers, want 2 and 2", r, w)
		}
		if n := logs.Count("answers again"); n != 1 {
			t.Errorf("%d lines saying the store is back, want 1:\n%s", n, logs.String())
		}
	})
}

// recordFailing is a store whose Reserve works and whose Record fails.
type recordFailing struct{ *fakeStore }

func (recordFailing) Record(context.Context, RateLimitKey, RateLimitGrant, RateLimitAnswer) error {
	return errStoreDown
}

// TestFailingRecordIsAnOutage: a store that cannot record answers is failing as much as one
// that cannot reserve: the outage is logged, and the client paces on its own memory until
// the store is tried again a second later.
func TestFailingRecordIsAnOutage(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := &fakeStore{}
		var logs logtest.Lines
		c, mt := setup(t, WithRateLimitStore(recordFailing{store}), WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
		mt.RegisterResponder("GET", testBase+"transaction/9", respond(200, `{"id": 9}`, "RateLimit-Remaining", "90"))
		for range 3 {
			if _, err := c.Transactions.Get(context.Background(), 9); err != nil {
				t.Fatalf("call failed: %v", err)
			}
		}
		if r, _ := store.counts(); r != 1 {
			t.Errorf("%d reserves within the second after a failed record, want 1", r)
		}
		if n := logs.Count("level=WARN"); n != 1 || logs.Count("store down") != 1 {
			t.Errorf("%d warnings, want 1:\n%s", n, logs.String())
		}
	})
}

// TestStoreToldNoLimitForALimitOfZero: an answer saying the limit is 0 reaches the store as
// an answer without a limit (-1), as the client's own memory reads it.
func TestStoreToldNoLimitForALimitOfZero(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := &fakeStore{}
		c, mt := setup(t, WithRateLimitStore(store))
		mt.RegisterResponder("GET", testBase+"transaction/9", respond(200, `{"id": 9}`, "RateLimit-Limit", "0", "RateLimit-Remaining", "5"))
		if _, err := c.Transactions.Get(context.Background(), 9); err != nil {
			t.Fatal(err)
		}
		want := RateLimitAnswer{Answered: true, Status: http.StatusOK, Limit: -1, Remaining: 5, Reset: -1}
		if store.records[0] != want {
			t.Errorf("recorded %+v, want %+v", store.records[0], want)
		}
	})
}

package escrow

// Policies of the shared rate-limit memory (a RateLimitStore) and of the client's own memory
// beside it that mutation testing (scripts/mutate ratelimit.go ratelimitstore.go) found
// unpinned.

import (
	"testing"
	"time"
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
	taken := 0
	for {
		if _, _, ok := l.take(ep, now); !ok {
			break
		}
		taken++
	}
	if taken != 3 {
		t.Errorf("its own memory lets out %d more, want 3: the 5 left less its 2 in flight", taken)
	}
}

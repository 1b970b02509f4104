package escrow

// Policies of the client's own rate-limit memory that mutation testing
// (scripts/mutate ratelimit.go) found unpinned, tested on the memory itself so that the
// order of answers and the clock are the test's to choose.

import (
	"testing"
	"time"
)

// TestNonsenseLimitIsIgnored: an answer saying the limit is 0 does not make the client forget
// the limit it learnt: after the reset it expects that limit again, and no more.
func TestNonsenseLimitIsIgnored(t *testing.T) {
	now := time.Unix(1_000_000, 0)
	l := newEndpointLimits(time.Millisecond, time.Minute)
	const ep = "GET /transaction/{id}"
	sl, _, _ := l.take(ep, now)
	l.observe(ep, answer(200, "2", "1", "10"), sl, now) // a limit of 2; 1 left for 10s
	sl, _, _ = l.take(ep, now)
	l.observe(ep, answer(200, "0", "0", "10"), sl, now) // a limit of 0: nonsense
	later := now.Add(10 * time.Second)
	for i := range 2 {
		if _, _, ok := l.take(ep, later); !ok {
			t.Fatalf("call %d after the reset refused, want the limit of 2 to go", i)
		}
	}
	if _, _, ok := l.take(ep, later); ok {
		t.Error("a third call went in a window of 2: the limit was forgotten")
	}
}

// TestBareSuccessDoesNotLiftAKnownExhaustion: an answer without rate-limit headers says
// nothing of the window: an endpoint exhausted until a reset the server gave stays held
// until then.
func TestBareSuccessDoesNotLiftAKnownExhaustion(t *testing.T) {
	now := time.Unix(1_000_000, 0)
	l := newEndpointLimits(time.Millisecond, time.Minute)
	const ep = "GET /transaction/{id}"
	sl, _, _ := l.take(ep, now)
	l.observe(ep, answer(200, "", "1", "10"), sl, now) // 1 left for 10s
	sl, _, _ = l.take(ep, now)                         // the last one
	l.observe(ep, answer(200, "", "", ""), sl, now)    // answered without the headers
	if _, wait, ok := l.take(ep, now); ok || wait != 10*time.Second {
		t.Errorf("take = %v, wait %v; want the call held the 10s to the reset", ok, wait)
	}
}

// TestClientErrorDoesNotEndProbing: after a bare 429, a 4xx answer without rate-limit
// headers (the server may check credentials or the request before its limit) does not show
// the endpoint serves again: calls still go one probe at a time.
func TestClientErrorDoesNotEndProbing(t *testing.T) {
	now := time.Unix(1_000_000, 0)
	l := newEndpointLimits(time.Millisecond, time.Minute)
	const ep = "GET /transaction/{id}"
	sl, _, _ := l.take(ep, now)
	l.observe(ep, answer(429, "", "", ""), sl, now)
	later := now.Add(time.Second)
	probe, _, ok := l.take(ep, later)
	if !ok || !probe.probe {
		t.Fatalf("after a bare 429: take = %+v, %v; want a probe", probe, ok)
	}
	l.observe(ep, answer(400, "", "", ""), probe, later)
	if sl, _, ok := l.take(ep, later.Add(time.Second)); !ok || !sl.probe {
		t.Fatalf("after the 400: take = %+v, %v; want another probe", sl, ok)
	}
	if _, _, ok := l.take(ep, later.Add(time.Second)); ok {
		t.Error("a second call went beside the probe: the 400 was taken for the end of the exhaustion")
	}
}

package bench

import (
	"net/http"
	"sort"
	"sync"
	"sync/atomic"
	"time"
)

// countingTransport counts the attempts that pass through it, as the server sees them:
// retries inside a client are separate attempts, which a count of calls would hide.
type countingTransport struct {
	next      http.RoundTripper
	attempts  atomic.Int64
	status429 atomic.Int64
	noAnswer  atomic.Int64 // attempts that got no HTTP answer
}

// RoundTrip forwards to the wrapped transport and records the outcome.
func (t *countingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	t.attempts.Add(1)
	resp, err := t.next.RoundTrip(req)
	switch {
	case err != nil:
		t.noAnswer.Add(1)
	case resp.StatusCode == http.StatusTooManyRequests:
		t.status429.Add(1)
	}
	return resp, err
}

// CloseIdleConnections lets the owner of a client built on this transport release the
// pooled connections, so that a leak check sees only what the code under test left.
func (t *countingTransport) CloseIdleConnections() {
	if c, ok := t.next.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

// latencies collects call durations from many goroutines.
type latencies struct {
	mu sync.Mutex
	d  []time.Duration
}

func (l *latencies) add(d time.Duration) {
	l.mu.Lock()
	l.d = append(l.d, d)
	l.mu.Unlock()
}

// quantile returns the q-quantile (nearest rank), or 0 when nothing was recorded.
func (l *latencies) quantile(q float64) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.d) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), l.d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	i := int(q*float64(len(s))+0.5) - 1
	return s[min(max(i, 0), len(s)-1)]
}

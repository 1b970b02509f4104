package escrowtest

import (
	"net/http"
	"strconv"
	"time"
)

// rateKey is what a limit counts: one account's requests to one endpoint. Requests without
// valid credentials count under account 0.
type rateKey struct {
	account  int64
	endpoint string
}

// rateWindow is a fixed window: it starts with the first request and lasts the
// configured window, on the emulator's clock.
type rateWindow struct {
	start time.Time
	used  int
}

type rateLimiter struct {
	limit   int
	window  time.Duration
	windows map[rateKey]*rateWindow
}

func newRateLimiter(limit int, window time.Duration) *rateLimiter {
	return &rateLimiter{limit: limit, window: window, windows: map[rateKey]*rateWindow{}}
}

// maxWindows is the count of windows past which ended ones are forgotten. Keys are
// bounded already (accounts times endpoints, and one anonymous account), but a
// long-running emulator with many accounts would otherwise keep every window it ever
// opened.
const maxWindows = 4096

// prune forgets the windows that have ended: a new request would open a fresh one anyway.
func (l *rateLimiter) prune(now time.Time) {
	for k, w := range l.windows {
		if !now.Before(w.start.Add(l.window)) {
			delete(l.windows, k)
		}
	}
}

// quota is the outcome of counting one request.
type quota struct {
	enabled   bool
	allowed   bool
	limit     int
	remaining int
	reset     time.Duration
}

// take counts a request against its window.
func (l *rateLimiter) take(k rateKey, now time.Time) quota {
	if l.limit <= 0 || l.window <= 0 {
		return quota{allowed: true}
	}
	w := l.windows[k]
	if w == nil || !now.Before(w.start.Add(l.window)) {
		if w == nil && len(l.windows) >= maxWindows {
			l.prune(now)
		}
		w = &rateWindow{start: now}
		l.windows[k] = w
	}
	q := quota{enabled: true, limit: l.limit, reset: w.start.Add(l.window).Sub(now)}
	if w.used >= l.limit {
		return q
	}
	w.used++
	q.allowed, q.remaining = true, l.limit-w.used
	return q
}

// resetSeconds is the wait until the window resets, rounded up to whole seconds.
func (q quota) resetSeconds() string {
	return strconv.FormatInt(int64((q.reset+time.Second-1)/time.Second), 10)
}

// setHeaders adds RateLimit-Limit, RateLimit-Remaining and RateLimit-Reset.
func (q quota) setHeaders(h http.Header) {
	if !q.enabled {
		return
	}
	h.Set("RateLimit-Limit", strconv.Itoa(q.limit))
	h.Set("RateLimit-Remaining", strconv.Itoa(q.remaining))
	h.Set("RateLimit-Reset", q.resetSeconds())
}

// refusal is the 429 answer; it also carries Retry-After.
func (q quota) refusal() response {
	err := newError(http.StatusTooManyRequests, "rate_limited", "at most %d requests per endpoint per window; retry in %s seconds", q.limit, q.resetSeconds())
	err.header = http.Header{"Retry-After": {q.resetSeconds()}}
	return err.response()
}

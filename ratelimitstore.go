package escrow

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"
)

// RateLimitStore keeps what a client knows of each endpoint's rate limit: what remains in
// the window, when it resets, how many requests were sent in it and how many are in flight.
// A client keeps this in its own memory unless [WithRateLimitStore] hands it a store, such
// as the Redis one in package redislimit, which replicas calling the API as one account
// share so that together they spend the account's allowance and no more.
//
// A store is called at most once before each attempt (Reserve) and once after it (Record).
// Implementations must be safe for concurrent use, should bound each call by a short timeout
// of their own, and must return when the context ends: the client's context for a store
// call has a deadline at most [RateLimitStoreTimeout] away, and does not end when the
// caller's does. An error from either method never fails a call: the client paces on its
// own memory until the store answers again.
type RateLimitStore interface {
	// Reserve asks to send one request to the endpoint now. A grant that is not OK says how
	// long to wait before asking again.
	Reserve(ctx context.Context, key RateLimitKey) (RateLimitGrant, error)
	// Record reports the answer to a request that Reserve granted, which ends the
	// reservation. It is called for every OK grant whose request was attempted, answered or
	// not.
	Record(ctx context.Context, key RateLimitKey, grant RateLimitGrant, answer RateLimitAnswer) error
}

// RateLimitKey names one budget: one endpoint of one account at one base URL. The API counts
// requests per account and endpoint, and sandbox and production are separate accounts.
type RateLimitKey struct {
	// Account identifies the account and base URL without revealing either: 32 hex digits of
	// the SHA-256 of the lower-cased e-mail address and the base URL. The API key plays no
	// part, so clients of one account that use different keys share one budget.
	Account string
	// Endpoint is the method and route template, such as "GET /transaction/{id}".
	Endpoint string
}

// RateLimitGrant is a store's answer to Reserve.
type RateLimitGrant struct {
	// OK says the request may be sent now. Otherwise Wait says how long to wait before asking
	// again; 0 means a short step, while the answers of requests in flight are awaited.
	OK   bool
	Wait time.Duration
	// Probe says the request probes an exhausted endpoint whose reset time is unknown: one
	// request at a time does, until one is answered with requests remaining.
	Probe bool
	// Window numbers the rate-limit window the request is sent in, as the store counts them.
	Window uint64
	// ID is the store's name for the reservation, handed back to Record.
	ID string
}

// RateLimitAnswer is what the answer to one attempt said about the endpoint's allowance.
type RateLimitAnswer struct {
	// Answered is false when the attempt got no HTTP answer (a transport error); the other
	// fields are then zero.
	Answered bool
	// Status is the HTTP status code.
	Status int
	// Limit is RateLimit-Limit, or -1 when the answer did not carry it (as in [RateLimit]).
	Limit int
	// Remaining is RateLimit-Remaining (0 for a 429), or -1 when the answer did not say.
	Remaining int
	// Reset is how long until the window resets: RateLimit-Reset, or for a 429 Retry-After
	// when present, at most the client's maximum hold ([WithMaxHold]). It is -1 when the
	// answer did not say.
	Reset time.Duration
	// Capped says the server asked for longer than Reset and the client cut its hint at the
	// maximum hold: when Reset has passed, the window is not known to have reset, so one
	// request should probe the endpoint (as after an exhaustion whose reset is unknown)
	// instead of the whole limit being spent at once.
	Capped bool
}

// RateLimitStoreTimeout is the longest deadline the client gives a call to a
// [RateLimitStore]. A store should bound its calls more tightly itself; this is the
// client's backstop.
const RateLimitStoreTimeout = time.Second

// rateLimitStoreRetry is how long a client paces on its own memory after its store failed
// before one call tries the store again.
const rateLimitStoreRetry = time.Second

// WithRateLimitStore makes the client keep its rate-limit memory in store, shared with every
// other client (in this process or another) that uses the same store and account. Without
// it, each client remembers only its own answers. While the store fails or is slow, the
// client paces on its own memory, logs the outage once (at Warn) and its end (at Info), and
// tries the store again every second; no call fails because the store did.
func WithRateLimitStore(store RateLimitStore) Option {
	return func(s *settings) { s.rateLimitStore = store }
}

// accountScope is RateLimitKey.Account for an account at a base URL.
func accountScope(email string, base string) string {
	sum := sha256.Sum256([]byte(strings.ToLower(email) + "\x00" + base))
	return hex.EncodeToString(sum[:16])
}

// sharedLimits puts a client's rate-limit memory in a RateLimitStore, falling back to the
// client's own memory while the store fails.
type sharedLimits struct {
	store   RateLimitStore
	account string
	maxHold time.Duration // see WithMaxHold
	logger  *slog.Logger
	timeout time.Duration
	retry   time.Duration

	mu      sync.Mutex
	down    bool      // the store failed and has not answered since
	retryAt time.Time // when a call may try the store again
	trying  bool      // a call is trying the store again
}

func newSharedLimits(store RateLimitStore, account string, logger *slog.Logger, maxHold time.Duration) *sharedLimits {
	return &sharedLimits{store: store, account: account, logger: logger, maxHold: maxHold, timeout: RateLimitStoreTimeout, retry: rateLimitStoreRetry}
}

// begin says whether this call may use the store, and whether it is the one call trying the
// store again after an outage.
func (s *sharedLimits) begin(now time.Time) (use, retrying bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case !s.down:
		return true, false
	case s.trying || now.Before(s.retryAt):
		return false, false
	}
	s.trying = true
	return true, true
}

// end records how the store answered, logging the start and the end of an outage once each.
func (s *sharedLimits) end(ctx context.Context, err error, retrying bool) {
	s.mu.Lock()
	wasDown := s.down
	if retrying {
		s.trying = false
	}
	switch {
	case err != nil:
		s.down, s.retryAt = true, time.Now().Add(s.retry)
	case retrying:
		s.down = false
	}
	s.mu.Unlock()
	switch {
	case err != nil && !wasDown:
		s.logger.LogAttrs(ctx, slog.LevelWarn, "escrow: rate-limit store failed; pacing on this client's own memory until it answers",
			slog.String("error", err.Error()))
	case err == nil && retrying:
		s.logger.LogAttrs(ctx, slog.LevelInfo, "escrow: rate-limit store answers again; pacing is shared again")
	}
}

// reserve asks the store for a request on the endpoint. used is false when the store is
// away or failed: the caller then paces on its own memory.
func (s *sharedLimits) reserve(ctx context.Context, endpoint string, now time.Time) (sl slot, wait time.Duration, ok, used bool) {
	use, retrying := s.begin(now)
	if !use {
		return slot{}, 0, false, false
	}
	// The caller's cancellation must not abandon a reservation half made: the store's own
	// timeout bounds the call instead, and an attempt cancelled after its grant still
	// reports back through record.
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.timeout)
	g, err := s.store.Reserve(sctx, RateLimitKey{Account: s.account, Endpoint: endpoint})
	cancel()
	s.end(ctx, err, retrying)
	switch {
	case err != nil:
		return slot{}, 0, false, false
	case !g.OK:
		// A store keeping an older or longer hold than this client's does not hold it
		// longer: it is asked again when this client's hold ends.
		return slot{}, min(max(g.Wait, 0), s.maxHold), false, true
	}
	return slot{probe: g.Probe, window: g.Window, shared: true, id: g.ID}, 0, true, true
}

// record reports an attempt's answer to the store that granted it. While the store is away
// it is not asked: the reservation expires there on its own.
func (s *sharedLimits) record(ctx context.Context, endpoint string, resp *http.Response, sl slot, now time.Time) {
	s.mu.Lock()
	down := s.down
	s.mu.Unlock()
	if down {
		return
	}
	g := RateLimitGrant{OK: true, Probe: sl.probe, Window: sl.window, ID: sl.id}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.timeout)
	err := s.store.Record(sctx, RateLimitKey{Account: s.account, Endpoint: endpoint}, g, answerOf(resp, now, s.maxHold))
	cancel()
	if err != nil {
		s.end(ctx, err, false)
	}
}

// answerOf reads what an attempt's answer says of the allowance (resp is nil when the
// attempt got none), as endpointLimits.observe reads it, its reset cut at maxHold.
func answerOf(resp *http.Response, now time.Time, maxHold time.Duration) RateLimitAnswer {
	if resp == nil {
		return RateLimitAnswer{}
	}
	a := RateLimitAnswer{Answered: true, Status: resp.StatusCode, Limit: -1, Remaining: -1, Reset: -1}
	if limit, ok := headerInt(resp.Header, "RateLimit-Limit"); ok && limit > 0 {
		a.Limit = limit
	}
	if remaining, ok := headerInt(resp.Header, "RateLimit-Remaining"); ok {
		a.Remaining = max(remaining, 0)
	}
	var reset time.Duration
	var ok bool
	if resp.StatusCode == http.StatusTooManyRequests {
		a.Remaining = 0
		reset, ok = retryHint(resp, now)
	} else {
		reset, ok = headerSeconds(resp.Header.Get("RateLimit-Reset"), now)
	}
	if ok {
		a.Reset, a.Capped = min(reset, maxHold), reset > maxHold
	}
	return a
}

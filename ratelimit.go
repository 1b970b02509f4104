package escrow

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-retryablehttp"
)

// The retry table, in one place:
//
//	                         GET, DELETE    POST, PATCH
//	429                      retry          retry   (refused, not performed)
//	500, 502-599             retry          no      (may have been performed)
//	network, never sent      retry          retry   (DNS, dial, TLS handshake)
//	network, maybe sent      retry          no
//	certificate, redirect    no             no      (will not change by retrying)
//	other 4xx, 501           no             no
//
// Each call gets its own retryablehttp.Client (a small struct) whose hooks close over the
// call's method and endpoint, since CheckRetry is not told which request it judges.

// attemptPolicy carries one call through the retry layer.
type attemptPolicy struct {
	c                      *Client
	method, path, endpoint string
	attempts               int
	// slot is the attempt's reservation on its endpoint (see endpointLimits.take).
	slot slot
	// maybePerformed says whether the last attempt may have reached the server and been
	// acted on. It starts false: nothing has been sent.
	maybePerformed bool
	// obs records the call for an Observer; nil without one (see observe.go).
	obs *callRecord
	// retrying is the retry decided in backoff, recorded once it is sent (prepareRetry).
	retrying Retry
}

// retryClient configures go-retryablehttp for this call; none of its defaults are used.
func (p *attemptPolicy) retryClient() *retryablehttp.Client {
	return &retryablehttp.Client{
		HTTPClient:   p.c.retryHTTP,
		Logger:       nil, // we log ourselves, without URLs' secrets or headers
		RetryWaitMin: p.c.baseWait,
		RetryWaitMax: p.c.maxWait,
		RetryMax:     p.c.maxRetries,
		CheckRetry:   p.checkRetry,
		Backoff:      p.backoff,
		PrepareRetry: p.prepareRetry,
		// Hand back the last response and error as they are, so that the typed error
		// can be built from the server's own body.
		ErrorHandler: retryablehttp.PassthroughErrorHandler,
	}
}

// checkRetry is called after every attempt: it records the endpoint's allowance and applies
// the retry table.
func (p *attemptPolicy) checkRetry(ctx context.Context, resp *http.Response, err error) (bool, error) {
	p.attempts++
	p.obs.attempt(resp)
	p.c.record(ctx, p.endpoint, resp, p.slot, time.Now())
	p.slot = slot{}
	switch {
	case err != nil:
		p.maybePerformed = !neverSent(err)
		if p.c.logger.Enabled(ctx, slog.LevelDebug) {
			p.log(ctx, slog.LevelDebug, "escrow: request failed", slog.String("error", p.c.scrubError(err).Error()))
		}
	default:
		p.maybePerformed = resp.StatusCode != http.StatusTooManyRequests
		p.log(ctx, slog.LevelDebug, "escrow: response", slog.Int("status", resp.StatusCode))
	}
	if ctxErr := ctx.Err(); ctxErr != nil {
		return false, ctxErr
	}
	if err != nil {
		return !permanent(err) && (idempotent(p.method) || neverSent(err)), nil
	}
	switch code := resp.StatusCode; {
	case code == http.StatusTooManyRequests:
		if wait, ok := p.c.retryHint(resp, time.Now()); ok && wait > p.c.maxWait {
			return false, &retryHintTooLong{wait: wait}
		}
		return true, nil
	case code >= 500 && code != http.StatusNotImplemented:
		return idempotent(p.method), nil
	}
	return false, nil
}

// backoff chooses the wait before a retry: the server's hint when it gives one (clamped to
// the maximum wait), else full jitter.
func (p *attemptPolicy) backoff(_, _ time.Duration, attempt int, resp *http.Response) time.Duration {
	wait := p.c.backoffStep(attempt)
	if resp != nil {
		if hint, ok := p.c.retryHint(resp, time.Now()); ok {
			wait = min(hint, p.c.maxWait)
		}
	}
	p.log(context.Background(), slog.LevelInfo, "escrow: retrying", slog.Duration("wait", wait))
	if p.obs != nil {
		reason, status := retryReason(resp)
		p.retrying = Retry{At: time.Now(), Reason: reason, StatusCode: status, Wait: wait}
	}
	return wait
}

// prepareRetry runs after the backoff and before the next attempt: the retry, too, must
// pass the endpoint's allowance.
func (p *attemptPolicy) prepareRetry(req *http.Request) error {
	p.obs.retry(p.retrying)
	return p.acquire(req.Context())
}

// acquire reserves one request on the endpoint, waiting while its allowance is spent. A
// wait beyond the maximum fails at once with a *RateLimitError that sent nothing.
func (p *attemptPolicy) acquire(ctx context.Context) error {
	for n := 0; ; n++ {
		sl, wait, ok := p.c.reserve(ctx, p.endpoint, time.Now())
		if ok {
			p.slot = sl
			return nil
		}
		if wait > p.c.maxWait {
			return &RateLimitError{Method: p.method, Path: p.path, Endpoint: p.endpoint, RetryAfter: wait}
		}
		if wait <= 0 { // another call is probing the endpoint; check back after a step
			wait = p.c.backoffStep(n)
		}
		p.log(ctx, slog.LevelInfo, "escrow: holding call, no requests remaining", slog.Duration("wait", wait))
		p.obs.held(wait)
		if err := sleep(ctx, wait); err != nil {
			return &TransportError{Method: p.method, Path: p.path, Attempts: p.attempts, OutcomeUnknown: p.maybePerformed, Err: err}
		}
	}
}

// log records a line about the call, building its attributes only when the level is on:
// logging is silent by default and must cost nothing then.
func (p *attemptPolicy) log(ctx context.Context, level slog.Level, msg string, extra slog.Attr) {
	if !p.c.logger.Enabled(ctx, level) {
		return
	}
	p.c.logger.LogAttrs(ctx, level, msg,
		slog.String("method", p.method),
		slog.String("path", p.path),
		slog.String("endpoint", p.endpoint),
		slog.Int("attempt", p.attempts),
		extra)
}

// backoffStep draws a full-jitter wait for retry number attempt (0-based): uniform in
// [0, min(maxWait, baseWait·2^attempt)].
func (c *Client) backoffStep(attempt int) time.Duration {
	ceiling := c.maxWait
	if attempt < 30 {
		ceiling = min(c.baseWait<<attempt, c.maxWait)
	}
	return c.jitter(ceiling)
}

// retryHintTooLong stops the retries when the server asks for a wait beyond the maximum.
type retryHintTooLong struct{ wait time.Duration }

func (e *retryHintTooLong) Error() string {
	return fmt.Sprintf("server asked to wait %s, beyond the maximum wait", e.wait)
}

func idempotent(method string) bool { return method == http.MethodGet || method == http.MethodDelete }

// neverSent reports transport errors that happen before a request can reach the server:
// name resolution, connecting, and the TLS handshake.
func neverSent(err error) bool {
	var dnsErr *net.DNSError
	var opErr *net.OpError
	var recErr tls.RecordHeaderError
	var alert tls.AlertError
	switch {
	case errors.As(err, &dnsErr), errors.As(err, &recErr), errors.As(err, &alert):
		return true
	case errors.As(err, &opErr) && opErr.Op == "dial":
		return true
	}
	// net/http's handshake timeout has no exported type.
	return strings.Contains(err.Error(), "TLS handshake timeout") || permanent(err)
}

// permanent reports transport errors that retrying cannot cure.
func permanent(err error) bool {
	var certErr *tls.CertificateVerificationError
	var unknownAuth x509.UnknownAuthorityError
	var hostErr x509.HostnameError
	var invalid x509.CertificateInvalidError
	return errors.As(err, &certErr) || errors.As(err, &unknownAuth) || errors.As(err, &hostErr) ||
		errors.As(err, &invalid) || errors.Is(err, ErrRedirectRefused) || errors.Is(err, errHeadersTooLarge)
}

// retryHint is how long the server asked the caller to wait, cut at the client's maximum
// hold: no hint makes the client wait longer (see WithMaxHold).
func (c *Client) retryHint(resp *http.Response, now time.Time) (time.Duration, bool) {
	d, ok := retryHint(resp, now)
	return min(d, c.limits.maxHold), ok
}

// retryHint is how long the server asked the caller to wait: Retry-After on any answer,
// else RateLimit-Reset on a 429.
func retryHint(resp *http.Response, now time.Time) (time.Duration, bool) {
	if d, ok := retryAfter(resp, now); ok {
		return d, true
	}
	if resp.StatusCode == http.StatusTooManyRequests {
		return headerSeconds(resp.Header.Get("RateLimit-Reset"), now)
	}
	return 0, false
}

// retryAfter reads Retry-After: delay-seconds or an HTTP date.
func retryAfter(resp *http.Response, now time.Time) (time.Duration, bool) {
	v := strings.TrimSpace(resp.Header.Get("Retry-After"))
	if v == "" {
		return 0, false
	}
	if d, ok := headerSeconds(v, now); ok {
		return d, true
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(t.Sub(now), 0), true
	}
	return 0, false
}

// headerSeconds reads a count of seconds, or a time since the epoch, the forms servers use
// for RateLimit-Reset: values beyond 10¹¹ are milliseconds since the epoch (10¹¹ ms is
// 1973; 10¹¹ s would be the year 5138), values beyond 10⁹ seconds since the epoch, smaller
// ones a count of seconds. The result is at most [maxHintSeconds]; how long it may hold an
// endpoint is bounded separately, by the client's maximum hold.
func headerSeconds(v string, now time.Time) (time.Duration, bool) {
	n, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
	if err != nil || n < 0 || n != n {
		return 0, false
	}
	secs := n
	switch {
	case n > 1e11:
		secs = n/1e3 - float64(now.UnixNano())/1e9
	case n > 1e9:
		secs = n - float64(now.UnixNano())/1e9
	}
	switch {
	case secs <= 0:
		return 0, true
	case secs > maxHintSeconds:
		return maxHintSeconds * time.Second, true
	}
	return time.Duration(secs * float64(time.Second)), true
}

// maxHintSeconds bounds what a header is read as (a year), far inside time.Duration.
const maxHintSeconds = 365 * 24 * 3600

// DefaultMaxHold is how long, at most, a server's hint holds an endpoint unless
// [WithMaxHold] says otherwise.
const DefaultMaxHold = 10 * time.Minute

// headerInt reads an integer header; absent (the common case, checked first since a failed
// Atoi allocates its error) or malformed is not ok.
func headerInt(h http.Header, name string) (int, bool) {
	v := strings.TrimSpace(h.Get(name))
	if v == "" {
		return 0, false
	}
	n, err := strconv.Atoi(v)
	return n, err == nil
}

// endpointLimits remembers, per endpoint, what the server last said about its allowance,
// so that calls wait for the window to reset instead of spending a request on a certain
// 429. It is shared by all goroutines using the client.
type endpointLimits struct {
	mu         sync.Mutex
	byEndpoint map[string]*allowance
	probeStep  time.Duration // the first probe interval; it doubles per refused probe
	probeMax   time.Duration
	// maxHold bounds how long one answer may hold the endpoint; see WithMaxHold.
	maxHold time.Duration
}

// allowance is one endpoint's state.
type allowance struct {
	known     bool      // remaining is meaningful
	remaining int       // what the server last said is left, less the calls sent since
	limit     int       // RateLimit-Limit, when the server sends it (0: unknown)
	inflight  int       // calls sent and not yet answered
	resetAt   time.Time // when the window resets (zero: the server has not said)
	// capped says resetAt is the client's maximum hold, not the server's word: when it
	// passes, the window is not known to have reset, and one call probes the endpoint.
	capped bool
	// When an endpoint is exhausted and the server does not say when it resets, one call
	// at a time probes it (the only call in flight), no sooner than probeAfter. Each refused
	// probe doubles the interval (up to maxProbeInterval); an answer with requests
	// remaining ends it.
	probeAfter   time.Time
	failedProbes int
	// While the window's end is known, window numbers it, sent counts the calls sent in it
	// and lowest is the lowest RateLimit-Remaining answered in it (-1: none yet). The
	// server counts down, so the lowest answer is the one it counted last, whatever order
	// the answers arrive in.
	window uint64
	sent   int
	lowest int
}

// slot is a call's reservation of one request on an endpoint.
type slot struct {
	probe  bool   // the call holds the endpoint's probe slot
	window uint64 // the window it was sent in
	// shared says the reservation was made in the client's RateLimitStore, which names it
	// id; otherwise it was made in the client's own memory.
	shared bool
	id     string
}

// reserve reserves one request on the endpoint: in the client's RateLimitStore when it has
// one that answers, else in its own memory.
func (c *Client) reserve(ctx context.Context, endpoint string, now time.Time) (slot, time.Duration, bool) {
	if c.shared != nil {
		if sl, wait, ok, used := c.shared.reserve(ctx, endpoint, now); used {
			return sl, wait, ok
		}
	}
	return c.limits.take(endpoint, now)
}

// record reports an attempt's answer (resp is nil when it got none) to whichever memory
// reserved it. The client's own memory learns from every answer, so that it knows the
// endpoint's state if the store goes away.
func (c *Client) record(ctx context.Context, endpoint string, resp *http.Response, sl slot, now time.Time) {
	if !sl.shared {
		c.limits.observe(endpoint, resp, sl, now)
		return
	}
	c.shared.record(ctx, endpoint, resp, sl, now)
	c.limits.learn(endpoint, resp, now)
}

// maxProbeInterval bounds the spacing of probes of an exhausted endpoint whose reset time
// is unknown: one refused request every few seconds is cheap, and a longer interval would
// waste the start of the next window.
const maxProbeInterval = 5 * time.Second

func newEndpointLimits(probeStep, maxWait time.Duration) *endpointLimits {
	return &endpointLimits{byEndpoint: make(map[string]*allowance), probeStep: probeStep, probeMax: min(maxWait, maxProbeInterval), maxHold: DefaultMaxHold}
}

func (l *endpointLimits) get(endpoint string) *allowance {
	a := l.byEndpoint[endpoint]
	if a == nil {
		a = &allowance{lowest: -1}
		l.byEndpoint[endpoint] = a
	}
	return a
}

// take reserves a request, or says how long to wait first (0: a short step, while the
// answers of calls in flight are awaited).
func (l *endpointLimits) take(endpoint string, now time.Time) (sl slot, wait time.Duration, ok bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	a := l.get(endpoint)
	a.roll(now)
	switch {
	case !a.known:
	case a.remaining > 0:
		a.remaining--
	case !a.resetAt.IsZero():
		return slot{}, a.resetAt.Sub(now), false
	case a.inflight > 0: // their answers (a probe's among them) will tell more
		return slot{}, 0, false
	case now.Before(a.probeAfter):
		return slot{}, a.probeAfter.Sub(now), false
	default:
		sl.probe = true
	}
	a.inflight++
	a.sent++
	sl.window = a.window
	return sl, 0, true
}

// roll starts a new window once the current one has reset. A hold the client cut short
// (capped) ends in a probe instead: the server never said the window reset.
func (a *allowance) roll(now time.Time) {
	if !a.resetAt.IsZero() && !now.Before(a.resetAt) {
		a.resetAt = time.Time{}
		a.known, a.remaining = a.limit > 0, a.limit
		if a.capped {
			a.known, a.remaining, a.probeAfter, a.capped = true, 0, time.Time{}, false
		}
		a.window, a.sent, a.lowest = a.window+1, 0, -1
	}
}

// hold sets when the window resets from a server's hint, cut at the maximum hold.
func (l *endpointLimits) hold(a *allowance, now time.Time, wait time.Duration) {
	a.resetAt, a.capped = now.Add(min(wait, l.maxHold)), wait > l.maxHold
}

// learn records the answer to a request this memory did not reserve (a RateLimitStore did),
// as if it had been sent now by someone else on the account.
func (l *endpointLimits) learn(endpoint string, resp *http.Response, now time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	a := l.get(endpoint)
	a.roll(now)
	a.inflight++
	l.observeLocked(a, resp, slot{window: a.window}, now)
}

// observe records an attempt's answer (resp is nil when the attempt got none).
func (l *endpointLimits) observe(endpoint string, resp *http.Response, sl slot, now time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	a := l.get(endpoint)
	a.roll(now)
	l.observeLocked(a, resp, sl, now)
}

func (l *endpointLimits) observeLocked(a *allowance, resp *http.Response, sl slot, now time.Time) {
	a.inflight = max(a.inflight-1, 0)
	if resp == nil || sl.window != a.window {
		// No answer, or one of a window that has reset since: what it says is left, and
		// when it resets, are that window's, and would hold the calls of this one.
		return
	}
	if limit, ok := headerInt(resp.Header, "RateLimit-Limit"); ok && limit > 0 {
		a.limit = limit
	}
	remaining, ok := headerInt(resp.Header, "RateLimit-Remaining")
	if resp.StatusCode == http.StatusTooManyRequests {
		remaining, ok = 0, true
	}
	if !ok {
		// A success without the header says nothing of the allowance but that the endpoint
		// serves again: the next exhaustion's probes start from the first step, and an
		// exhaustion learnt from a bare 429 is forgotten, or every later call would queue
		// for the probe slot.
		if resp.StatusCode < 400 {
			a.failedProbes, a.probeAfter = 0, time.Time{}
			if a.remaining == 0 && a.resetAt.IsZero() {
				a.known = false
			}
		}
		return
	}
	inWindow := !a.resetAt.IsZero() // and ahead: the window was rolled on arrival
	switch {
	case !inWindow:
		// Where the window's end is unknown, so is its start: the server counted this
		// request, and the ones in flight will spend from what it says is left. It is the
		// window's first answer, and so its lowest yet: one the server counted before it,
		// arriving after it, is no news.
		a.lowest = remaining
		a.known, a.remaining = true, max(remaining-a.inflight, 0)
	case a.lowest >= 0 && remaining >= a.lowest:
		// One the server counted before an answer already seen (overtaken on the way
		// back): no news.
	case a.limit > 0 && a.limit-remaining <= a.sent:
		// The server has counted no more than this client sent in the window, so it is
		// alone on the account: what is left is the limit less what it sent, answered or
		// not. (Subtracting the calls in flight from the answer would count twice those
		// the server already counted.)
		a.lowest = remaining
		a.known, a.remaining = true, max(a.limit-a.sent, 0)
	default: // others spend from the same allowance: assume the worst of the calls in flight
		a.lowest = remaining
		a.known, a.remaining = true, max(remaining-a.inflight, 0)
	}
	l.learnReset(a, resp, now, inWindow, remaining)
}

// learnReset records when an answer says the window resets, and spaces the probes of an
// endpoint exhausted with no word on when.
func (l *endpointLimits) learnReset(a *allowance, resp *http.Response, now time.Time, inWindow bool, remaining int) {
	switch {
	case resp.StatusCode == http.StatusTooManyRequests:
		if wait, ok := retryHint(resp, now); ok {
			l.hold(a, now, wait)
		}
	default:
		// RateLimit-Reset is in whole seconds, rounded up, so every answer bounds the reset
		// from above and the earliest bound of a window is the tightest; taking the latest
		// would start each window an answer's delay late.
		if reset, ok := headerSeconds(resp.Header.Get("RateLimit-Reset"), now); ok && (!inWindow || now.Add(min(reset, l.maxHold)).Before(a.resetAt)) {
			l.hold(a, now, reset)
		}
	}
	switch {
	case remaining > 0:
		a.failedProbes, a.probeAfter = 0, time.Time{}
	case a.resetAt.IsZero(): // exhausted, and no word on when it resets: space the probes
		a.probeAfter = now.Add(min(l.probeStep<<min(a.failedProbes, 20), l.probeMax))
		a.failedProbes++
	}
}

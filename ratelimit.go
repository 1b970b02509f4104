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
	// probe is set while this call holds its endpoint's probe slot (see endpointLimits).
	probe bool
	// maybePerformed says whether the last attempt may have reached the server and been
	// acted on. It starts false: nothing has been sent.
	maybePerformed bool
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
	p.c.limits.observe(p.endpoint, resp, p.probe, time.Now())
	p.probe = false
	switch {
	case err != nil:
		p.maybePerformed = !neverSent(err)
		p.c.logger.LogAttrs(ctx, slog.LevelDebug, "escrow: request failed", p.attrs(slog.String("error", p.c.scrubError(err).Error()))...)
	default:
		p.maybePerformed = resp.StatusCode != http.StatusTooManyRequests
		p.c.logger.LogAttrs(ctx, slog.LevelDebug, "escrow: response", p.attrs(slog.Int("status", resp.StatusCode))...)
	}
	if ctxErr := ctx.Err(); ctxErr != nil {
		return false, ctxErr
	}
	if err != nil {
		return !permanent(err) && (idempotent(p.method) || neverSent(err)), nil
	}
	switch code := resp.StatusCode; {
	case code == http.StatusTooManyRequests:
		if wait, ok := retryHint(resp, time.Now()); ok && wait > p.c.maxWait {
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
		if hint, ok := retryHint(resp, time.Now()); ok {
			wait = min(hint, p.c.maxWait)
		}
	}
	p.c.logger.LogAttrs(context.Background(), slog.LevelInfo, "escrow: retrying", p.attrs(slog.Duration("wait", wait))...)
	return wait
}

// prepareRetry runs after the backoff and before the next attempt: the retry, too, must
// pass the endpoint's allowance.
func (p *attemptPolicy) prepareRetry(req *http.Request) error { return p.acquire(req.Context()) }

// acquire reserves one request on the endpoint, waiting while its allowance is spent. A
// wait beyond the maximum fails at once with a *RateLimitError that sent nothing.
func (p *attemptPolicy) acquire(ctx context.Context) error {
	for n := 0; ; n++ {
		probe, wait, ok := p.c.limits.take(p.endpoint, time.Now())
		if ok {
			p.probe = probe
			return nil
		}
		if wait > p.c.maxWait {
			return &RateLimitError{Method: p.method, Path: p.path, Endpoint: p.endpoint, RetryAfter: wait}
		}
		if wait <= 0 { // another call is probing the endpoint; check back after a step
			wait = p.c.backoffStep(n)
		}
		p.c.logger.LogAttrs(ctx, slog.LevelInfo, "escrow: holding call, no requests remaining", p.attrs(slog.Duration("wait", wait))...)
		if err := sleep(ctx, wait); err != nil {
			return &TransportError{Method: p.method, Path: p.path, Attempts: p.attempts, OutcomeUnknown: p.maybePerformed, Err: err}
		}
	}
}

func (p *attemptPolicy) attrs(extra ...slog.Attr) []slog.Attr {
	return append([]slog.Attr{
		slog.String("method", p.method),
		slog.String("path", p.path),
		slog.String("endpoint", p.endpoint),
		slog.Int("attempt", p.attempts),
	}, extra...)
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
		errors.As(err, &invalid) || errors.Is(err, ErrRedirectRefused)
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

// headerSeconds reads a count of seconds. Values beyond 10⁹ are taken as a Unix time, the
// form some servers use for RateLimit-Reset.
func headerSeconds(v string, now time.Time) (time.Duration, bool) {
	n, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
	if err != nil || n < 0 || n != n {
		return 0, false
	}
	const maxSeconds = 365 * 24 * 3600
	switch {
	case n > 1e9:
		return max(time.Unix(int64(n), 0).Sub(now), 0), true
	case n > maxSeconds:
		return maxSeconds * time.Second, true
	}
	return time.Duration(n * float64(time.Second)), true
}

// endpointLimits remembers, per endpoint, what the server last said about its allowance,
// so that calls wait for the window to reset instead of spending a request on a certain
// 429. It is shared by all goroutines using the client.
type endpointLimits struct {
	mu         sync.Mutex
	byEndpoint map[string]*allowance
	probeStep  time.Duration // the first probe interval; it doubles per refused probe
	probeMax   time.Duration
}

// allowance is one endpoint's state.
type allowance struct {
	known     bool      // remaining is meaningful
	remaining int       // what the server last said is left, less the calls sent since
	limit     int       // RateLimit-Limit, when the server sends it (0: unknown)
	inflight  int       // calls sent and not yet answered
	resetAt   time.Time // when the window resets (zero: the server has not said)
	// When an endpoint is exhausted and the server does not say when it resets, one call
	// at a time probes it, no sooner than probeAfter. Each refused probe doubles the
	// interval (up to maxProbeInterval); an answer with requests remaining ends it.
	probing      bool
	probeAfter   time.Time
	failedProbes int
}

// maxProbeInterval bounds the spacing of probes of an exhausted endpoint whose reset time
// is unknown: one refused request every few seconds is cheap, and a longer interval would
// waste the start of the next window.
const maxProbeInterval = 5 * time.Second

func newEndpointLimits(probeStep, maxWait time.Duration) *endpointLimits {
	return &endpointLimits{byEndpoint: make(map[string]*allowance), probeStep: probeStep, probeMax: min(maxWait, maxProbeInterval)}
}

func (l *endpointLimits) get(endpoint string) *allowance {
	a := l.byEndpoint[endpoint]
	if a == nil {
		a = new(allowance)
		l.byEndpoint[endpoint] = a
	}
	return a
}

// take reserves a request, or says how long to wait first (0: a short step, while the
// answers of calls in flight are awaited).
func (l *endpointLimits) take(endpoint string, now time.Time) (probe bool, wait time.Duration, ok bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	a := l.get(endpoint)
	if !a.resetAt.IsZero() && !now.Before(a.resetAt) { // a new window
		a.resetAt = time.Time{}
		a.known, a.remaining = a.limit > 0, a.limit
	}
	switch {
	case !a.known:
		a.inflight++
		return false, 0, true
	case a.remaining > 0:
		a.remaining--
		a.inflight++
		return false, 0, true
	case !a.resetAt.IsZero():
		return false, a.resetAt.Sub(now), false
	case a.probing || a.inflight > 0: // their answers will tell more
		return false, 0, false
	case now.Before(a.probeAfter):
		return false, a.probeAfter.Sub(now), false
	}
	a.probing = true
	a.inflight++
	return true, 0, true
}

// observe records an attempt's answer (resp is nil when the attempt got none).
func (l *endpointLimits) observe(endpoint string, resp *http.Response, probe bool, now time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	a := l.get(endpoint)
	a.inflight = max(a.inflight-1, 0)
	if probe {
		a.probing = false
	}
	if resp == nil {
		return
	}
	if limit, err := strconv.Atoi(strings.TrimSpace(resp.Header.Get("RateLimit-Limit"))); err == nil && limit > 0 {
		a.limit = limit
	}
	remaining, err := strconv.Atoi(strings.TrimSpace(resp.Header.Get("RateLimit-Remaining")))
	if resp.StatusCode == http.StatusTooManyRequests {
		remaining, err = 0, nil
	}
	if err != nil {
		return
	}
	// The server counted this request; the ones still in flight will spend from what it
	// says is left. Answers can arrive out of order, so within a window whose end is known
	// the estimate only goes down: it rises when the window resets (see take).
	left := max(remaining-a.inflight, 0)
	if a.known && !a.resetAt.IsZero() && now.Before(a.resetAt) {
		left = min(left, a.remaining)
	}
	a.known, a.remaining = true, left
	switch {
	case resp.StatusCode == http.StatusTooManyRequests:
		if wait, ok := retryHint(resp, now); ok {
			a.resetAt = now.Add(wait)
		}
	default:
		if reset, ok := headerSeconds(resp.Header.Get("RateLimit-Reset"), now); ok {
			a.resetAt = now.Add(reset)
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

package escrow

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/escrowkit/escrow-go/internal/hookguard"
	"github.com/escrowkit/escrow-go/internal/redact"
)

// Observer sees each SDK call from start to end: for traces and metrics. Package
// github.com/escrowkit/escrow-go/escrowotel implements it with OpenTelemetry; this package
// depends on no telemetry library. Set one with [WithObserver]; without one, a call costs
// nothing more than a nil check. An Observer that also implements [AttemptObserver] sees
// each HTTP request of a call as well.
//
// A call is one method of the client (or one [Client.Do]), not one request: its retries,
// its waits for the rate limit and, for a write whose outcome was left open, the reads that
// settle it and the write sent again all belong to it. Each page an iterator fetches is a
// call of its own. The reads that settle a write are calls of their own too, made with the
// context CallStart returned for the write, so that a tracer shows them inside it.
//
// An Observer is called from the goroutine making the call, and from several goroutines at
// once when the client is shared: it must be safe for concurrent use. It must not keep c
// after CallEnd returns.
//
// An Observer must not block: it is called synchronously, on the call's path, and the
// call cannot return before it does. An observer that waits (on a full channel, a lock
// held elsewhere, a network export) keeps the caller waiting past the context's deadline,
// which the SDK cannot enforce on code it does not own. Hand slow work to a goroutine of
// your own, as OpenTelemetry's batching exporters do.
//
// A panic in any of its methods is recovered: the call goes on and returns its own result,
// and the client's logger ([WithLogger]) reports the first such panic at Error level, the
// later ones at Debug. A context CallStart or AttemptStart did not return is the one it
// was given.
type Observer interface {
	// CallStart is called before anything is sent, with c's Method, Route, ServerAddress,
	// ServerPort and Start set. The context it returns is the call's: its requests are
	// sent with it (so a traced http.Client transport shows each attempt inside the call),
	// and CallEnd receives it.
	CallStart(ctx context.Context, c *Call) context.Context
	// CallEnd is called once, when the call returns, with c complete.
	CallEnd(ctx context.Context, c *Call)
}

// AttemptObserver is an [Observer] that also sees each HTTP request a call sends: the
// first, each retry, each write sent again after a read found it not performed, and each
// redirect followed, as OpenTelemetry's HTTP client conventions count them (one client
// span and one http.client.request.duration measurement per request). The client asks
// whether its Observer implements it once, in [NewClient]; one that does not costs nothing
// per request.
//
// The same rules hold as for an Observer: concurrent use, no blocking, panics recovered,
// a pointers not kept after AttemptEnd.
type AttemptObserver interface {
	Observer
	// AttemptStart is called just before a request is handed to the transport, with a's
	// Call, Method, URL, ResendCount and Start set, and the context of the call (the one
	// CallStart returned). The context it returns is the request's: the transport (and
	// a traced transport given with [WithHTTPClient]) receives it, and AttemptEnd too.
	AttemptStart(ctx context.Context, a *Attempt) context.Context
	// AttemptEnd is called when the transport returned: when the answer's status and
	// headers arrived, or the request failed. Reading the body belongs to the call, not to
	// the attempt, so an attempt never ends later than its call nor waits on the caller.
	AttemptEnd(ctx context.Context, a *Attempt)
}

// WithObserver makes the client report every call to o (see [Observer]), and every
// request too when o is an [AttemptObserver]; nil, the default, reports nothing.
func WithObserver(o Observer) Option { return func(s *settings) { s.observer = o } }

// Call describes one SDK call to an [Observer]. Nothing in it carries a credential: the
// path is the one sent, the error is the one the caller gets (already scrubbed). The
// error's text may still quote the server's answer, which may hold personal data (an
// e-mail address a server echoes): export [Call.ErrorType], not the text.
type Call struct {
	// Method is the HTTP method: "GET".
	Method string
	// Route is the route template relative to the base URL, as the route table names it:
	// "/transaction/{id}". It is "" for a path [Client.Do] sent that no route matches,
	// whose shape is not known to be low in cardinality.
	Route string
	// ServerAddress and ServerPort are the API's host and port.
	ServerAddress string
	ServerPort    int
	// Start is when the call began; End when it returned (zero until CallEnd).
	Start, End time.Time
	// StatusCode is the status of the last answer; 0 when none arrived.
	StatusCode int
	// Err is what the call returned: nil on success.
	Err error
	// Attempts counts the requests sent, every send of a settled write included, and a
	// request with the redirects it followed counted once.
	Attempts int
	// Retries are the requests sent again, in order, each with its reason.
	Retries []Retry
	// RateLimitWaits are the waits for the endpoint's allowance, in order.
	RateLimitWaits []RateLimitWait
	// SettlingReads are the reads of the state after a write that may or may not have been
	// performed (see [ErrOutcomeUnknown]), in order.
	SettlingReads []SettlingRead
}

// Duration is how long the call took; 0 until it ended.
func (c *Call) Duration() time.Duration { return elapsed(c.Start, c.End) }

func elapsed(start, end time.Time) time.Duration {
	if end.IsZero() {
		return 0
	}
	return end.Sub(start)
}

// ErrorType is [ErrorType] of the call's error.
func (c *Call) ErrorType() string { return ErrorType(c.Err) }

// ErrorType names the kind of failure of an error the SDK returned, in few words, for a
// metric label or OpenTelemetry's error.type: the status code for an answer of 4xx or 5xx
// ("404", "429"), else "rate_limited" (held back by the client: the allowance is spent
// beyond the maximum wait), "outcome_unknown", "timeout", "canceled",
// "malformed_response", "invalid_argument", "transport", or "_OTHER". It is "" for nil.
// It never holds text the server sent, which an error's own text may quote (an account's
// e-mail a server echoes): show this instead where others may read it.
func ErrorType(err error) string {
	var apiErr *APIError
	var rle *RateLimitError
	var de *DecodeError
	switch {
	case err == nil:
		return ""
	case errors.Is(err, ErrOutcomeUnknown):
		return "outcome_unknown"
	case errors.As(err, &apiErr):
		return strconv.Itoa(apiErr.StatusCode)
	case errors.As(err, &rle):
		return "rate_limited"
	case interruption(err) != "":
		return interruption(err)
	case errors.As(err, &de):
		return "malformed_response"
	case errors.Is(err, ErrInvalidArgument):
		return "invalid_argument"
	case isTransportFailure(err):
		return "transport"
	}
	return "_OTHER"
}

// interruption is "timeout" or "canceled" when err is a deadline or a cancellation, of the
// caller's context or of the network; else "".
func interruption(err error) string {
	var ne net.Error
	switch {
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &ne) && ne.Timeout():
		return "timeout"
	case errors.Is(err, context.Canceled):
		return "canceled"
	}
	return ""
}

// isTransportFailure reports an error of the network under a call: no answer came.
func isTransportFailure(err error) bool {
	var te *TransportError
	var ne net.Error
	return errors.As(err, &te) || errors.As(err, &ne)
}

// Attempt describes one HTTP request of a call to an [AttemptObserver]. Like [Call], it
// carries no credential.
type Attempt struct {
	// Call is the call the request belongs to, as it stands: its End, Err and final
	// StatusCode are not set yet. Read it, do not keep it.
	Call *Call
	// Method is the request's method; a redirect (303) may change it from the call's.
	Method string
	// URL is the request's absolute URL with the account's e-mail, key and token removed
	// in any encoding (each replaced by "[REDACTED]"), for OpenTelemetry's url.full. A
	// redirect's URL is the server's, and is cleaned the same way.
	URL string
	// ResendCount is 0 for a call's first request and counts the ones after it, whatever
	// sent them again (a retry, a settled write sent again, a redirect followed):
	// OpenTelemetry's http.request.resend_count.
	ResendCount int
	// Start is when the request was handed to the transport; End when the transport
	// returned (zero until AttemptEnd).
	Start, End time.Time
	// StatusCode is the answer's status; 0 when none arrived.
	StatusCode int
	// Err is the transport's failure, with credentials scrubbed; nil when an answer
	// arrived, whatever its status. Its text may quote the server (a malformed answer).
	Err error
}

// Duration is how long the request took, until its answer's headers arrived (or it
// failed): OpenTelemetry's http.client.request.duration. 0 until it ended.
func (a *Attempt) Duration() time.Duration { return elapsed(a.Start, a.End) }

// ErrorType names the request's failure for error.type: the status code for an answer of
// 4xx or 5xx, "timeout", "canceled" or "transport" when no answer came, "" otherwise.
func (a *Attempt) ErrorType() string {
	switch {
	case a.StatusCode >= 400:
		return strconv.Itoa(a.StatusCode)
	case a.Err == nil:
		return ""
	case interruption(a.Err) != "":
		return interruption(a.Err)
	}
	return "transport"
}

// RetryReason says why a request was sent again.
type RetryReason string

// Reasons for a [Retry].
const (
	// RetryRateLimited: the answer was 429, Too Many Requests.
	RetryRateLimited RetryReason = "rate_limited"
	// RetryServerError: a 5xx answered a GET or a DELETE.
	RetryServerError RetryReason = "server_error"
	// RetryTransport: the request got no answer (connection refused, reset, timed out).
	RetryTransport RetryReason = "transport_error"
	// RetryNotPerformed: a write whose outcome was open was read back as not performed,
	// and is sent again.
	RetryNotPerformed RetryReason = "not_performed"
)

// Retry is one request sent again.
type Retry struct {
	// At is when the retry was decided; the request went after Wait.
	At     time.Time
	Reason RetryReason
	// StatusCode is the answer that caused it; 0 for none.
	StatusCode int
	Wait       time.Duration
}

// RateLimitCause says why a call waited for the rate limit.
type RateLimitCause string

// Causes of a [RateLimitWait].
const (
	// RateLimitExhausted: the client held the call back because the endpoint had no
	// requests remaining, instead of spending one on a certain 429.
	RateLimitExhausted RateLimitCause = "exhausted"
	// RateLimitTooManyRequests: a 429 answered, and the call waits before sending again.
	RateLimitTooManyRequests RateLimitCause = "too_many_requests"
)

// RateLimitWait is one wait for the endpoint's allowance.
type RateLimitWait struct {
	At    time.Time
	Wait  time.Duration
	Cause RateLimitCause
}

// SettleOutcome is what reading the state after an ambiguous write found.
type SettleOutcome string

// Outcomes of a [SettlingRead].
const (
	// SettlePresent: the write's effect is there; the call succeeds with it.
	SettlePresent SettleOutcome = "present"
	// SettleAbsent: the write was provably not performed; it is sent again or refused.
	SettleAbsent SettleOutcome = "absent"
	// SettleUndetermined: the state does not tell; the call fails with ErrOutcomeUnknown.
	SettleUndetermined SettleOutcome = "undetermined"
	// SettleFailed: the state could not be read.
	SettleFailed SettleOutcome = "read_failed"
)

// SettlingRead is one read of the state after a write that may have been performed.
type SettlingRead struct {
	Start, End time.Time
	Outcome    SettleOutcome
}

// observerHooks calls a client's Observer, shielding the call from it: a panic in a hook
// is recovered and logged (internal/hookguard), and the call goes on. It is made once, in
// NewClient; a client without an observer has none (nil), and the pipeline asks only that.
type observerHooks struct {
	observer Observer
	// attempts is observer when it sees requests too, else nil.
	attempts AttemptObserver
	guard    *hookguard.Guard
	redact   *redactor
	email    string // the account's, kept out of the URLs an Attempt shows
}

// newObserverHooks returns the hooks of o, or nil when o is nil.
func newObserverHooks(o Observer, logger *slog.Logger, auth *credentials) *observerHooks {
	if o == nil {
		return nil
	}
	guard := hookguard.New(logger, "escrow: the observer panicked; the call goes on without it", auth.redact.string)
	h := &observerHooks{observer: o, guard: guard, redact: auth.redact, email: auth.email}
	h.attempts, _ = o.(AttemptObserver)
	return h
}

func (h *observerHooks) callStart(ctx context.Context, c *Call) context.Context {
	return h.guard.Started(ctx, "CallStart", func() context.Context { return h.observer.CallStart(ctx, c) })
}

func (h *observerHooks) callEnd(ctx context.Context, c *Call) {
	defer h.guard.Survive("CallEnd")
	h.observer.CallEnd(ctx, c)
}

func (h *observerHooks) attemptStart(ctx context.Context, a *Attempt) context.Context {
	return h.guard.Started(ctx, "AttemptStart", func() context.Context { return h.attempts.AttemptStart(ctx, a) })
}

func (h *observerHooks) attemptEnd(ctx context.Context, a *Attempt) {
	defer h.guard.Survive("AttemptEnd")
	h.attempts.AttemptEnd(ctx, a)
}

// callRecord is a call under way, for its Observer. Its methods do nothing on a nil
// receiver, so that the pipeline calls them without asking whether there is an observer.
// One call runs on one goroutine (its requests too: a transport's RoundTrip runs on the
// goroutine that sends): no lock.
type callRecord struct {
	hooks   *observerHooks
	ctx     context.Context // as CallStart returned it
	pattern string          // the endpoint's, as the client names it: "transaction/{id}"
	call    Call
	// requests counts the HTTP requests handed to the transport, redirects included: the
	// next one's resend count.
	requests int
}

// observe starts observing a call on the endpoint (method, pattern). It returns nil when
// the client has no observer.
func (c *Client) observe(ctx context.Context, method, pattern string) *callRecord {
	if c.observer == nil {
		return nil
	}
	r := &callRecord{hooks: c.observer, pattern: pattern, call: Call{
		Method: method, Route: routeTemplate(method, pattern),
		ServerAddress: c.baseURL.Hostname(), ServerPort: c.serverPort(), Start: time.Now(),
	}}
	r.ctx = r.hooks.callStart(ctx, &r.call)
	return r
}

// routeTemplate is the template telemetry names a call by: the route table's pattern with a
// leading "/", or "" for a pattern that is not a row of the table (a path Client.Do sent
// that matched no route, folded into a shape of unknown cardinality).
func routeTemplate(method, pattern string) string {
	for _, r := range routeTable() {
		if r.Method == method && r.path() == pattern {
			return r.Template
		}
	}
	return ""
}

// serverPort is the base URL's port, or the scheme's.
func (c *Client) serverPort() int {
	if p, err := strconv.Atoi(c.baseURL.Port()); err == nil {
		return p
	}
	if c.baseURL.Scheme == "http" {
		return 80
	}
	return 443
}

// end reports the call's end and result.
func (r *callRecord) end(err error) {
	if r == nil {
		return
	}
	r.call.End, r.call.Err = time.Now(), err
	r.hooks.callEnd(r.ctx, &r.call)
}

// joinKey marks the context a settled write is sent with: the send joins the write's
// record instead of starting a call of its own.
type joinKey struct{}

// joining returns the context for sending the write that r observes as a whole.
func (r *callRecord) joining() context.Context {
	return context.WithValue(r.ctx, joinKey{}, r)
}

// joined returns the record a send of (method, pattern) joins, if ctx carries one for
// that endpoint.
func joined(ctx context.Context, method, pattern string) *callRecord {
	r, _ := ctx.Value(joinKey{}).(*callRecord)
	if r != nil && r.call.Method == method && r.pattern == pattern {
		return r
	}
	return nil
}

// through returns the http.Client the call's requests go through: base itself, or, when
// the observer sees requests, a client around base's transport that reports each one.
func (r *callRecord) through(base *http.Client) *http.Client {
	if r == nil || r.hooks.attempts == nil {
		return base
	}
	return &http.Client{Transport: &attemptReporter{next: base.Transport, record: r}, Timeout: base.Timeout, CheckRedirect: base.CheckRedirect}
}

// attemptReporter reports each request of one call to the AttemptObserver, around the
// transport that sends it. Being under http.Client, it sees each redirect followed as a
// request of its own, as OpenTelemetry's conventions count them.
type attemptReporter struct {
	next   http.RoundTripper
	record *callRecord
}

func (t *attemptReporter) RoundTrip(req *http.Request) (*http.Response, error) {
	r := t.record
	a := &Attempt{Call: &r.call, Method: req.Method, URL: r.hooks.fullURL(req.URL), ResendCount: r.requests, Start: time.Now()}
	r.requests++
	ctx := r.hooks.attemptStart(req.Context(), a)
	sent := req
	if ctx != req.Context() {
		sent = req.WithContext(ctx)
	}
	resp, err := t.next.RoundTrip(sent)
	a.End = time.Now()
	if resp != nil {
		a.StatusCode = resp.StatusCode
	}
	if err != nil {
		a.Err = r.hooks.redact.scrub(err)
	}
	r.hooks.attemptEnd(ctx, a)
	return resp, err
}

// fullURL is u as an Attempt shows it: no user information (the client never sends any),
// and no credential of the account nor its e-mail address, in the path or the query,
// whoever wrote them (a caller's Client.Do path, a server's redirect). Path and query are
// rid of the e-mail decoded, so that no escaping hides it, then encoded again, and the
// whole is redacted once: the redactor sees through the one escaping that encoding adds.
func (h *observerHooks) fullURL(u *url.URL) string {
	clean := url.URL{Scheme: u.Scheme, Host: u.Host, Path: h.withoutEmail(u.Path)}
	if u.RawQuery != "" {
		values, _ := url.ParseQuery(u.RawQuery) // what parses; the rest is not shown
		cleaned := make(url.Values, len(values))
		for key, vals := range values {
			key = h.withoutEmail(key)
			for _, v := range vals {
				cleaned[key] = append(cleaned[key], h.withoutEmail(v))
			}
		}
		clean.RawQuery = cleaned.Encode()
	}
	return h.redact.string(clean.String())
}

// withoutEmail is s with every percent-escape undone, however nested, and the account's
// e-mail, in any case, replaced by [REDACTED].
func (h *observerHooks) withoutEmail(s string) string {
	for range 16 { // each round shortens s; see safeSegment
		decoded := unescapeLenient(s)
		if decoded == s {
			break
		}
		s = decoded
	}
	return replaceFold(s, h.email, redact.Redacted)
}

// replaceFold replaces every occurrence of old in s, compared without case, by repl.
func replaceFold(s, old, repl string) string {
	if old == "" || len(s) < len(old) {
		return s
	}
	var b strings.Builder
	last := 0
	for i := 0; i+len(old) <= len(s); {
		if strings.EqualFold(s[i:i+len(old)], old) {
			b.WriteString(s[last:i])
			b.WriteString(repl)
			i += len(old)
			last = i
			continue
		}
		i++
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

// attempt records an attempt's answer (resp nil: none).
func (r *callRecord) attempt(resp *http.Response) {
	if r == nil {
		return
	}
	r.call.Attempts++
	r.call.StatusCode = 0
	if resp != nil {
		r.call.StatusCode = resp.StatusCode
	}
}

// retry records a request sent again: rt as decided before its wait.
func (r *callRecord) retry(rt Retry) {
	if r == nil {
		return
	}
	r.call.Retries = append(r.call.Retries, rt)
	if rt.Reason == RetryRateLimited {
		r.call.RateLimitWaits = append(r.call.RateLimitWaits, RateLimitWait{At: rt.At, Wait: rt.Wait, Cause: RateLimitTooManyRequests})
	}
}

// held records a wait for the endpoint's allowance before sending.
func (r *callRecord) held(wait time.Duration) {
	if r == nil {
		return
	}
	r.call.RateLimitWaits = append(r.call.RateLimitWaits, RateLimitWait{At: time.Now(), Wait: wait, Cause: RateLimitExhausted})
}

// settlingRead records a read that began at start and found p (or failed).
func (r *callRecord) settlingRead(start time.Time, p presence, err error) {
	if r == nil {
		return
	}
	out := SettleUndetermined
	switch {
	case err != nil:
		out = SettleFailed
	case p == present:
		out = SettlePresent
	case p == absent:
		out = SettleAbsent
	}
	r.call.SettlingReads = append(r.call.SettlingReads, SettlingRead{Start: start, End: time.Now(), Outcome: out})
}

// retryReason names why an attempt that got resp (nil: no answer) is sent again.
func retryReason(resp *http.Response) (RetryReason, int) {
	switch {
	case resp == nil:
		return RetryTransport, 0
	case resp.StatusCode == http.StatusTooManyRequests:
		return RetryRateLimited, resp.StatusCode
	}
	return RetryServerError, resp.StatusCode
}

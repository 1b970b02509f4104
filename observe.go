package escrow

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"time"
)

// Observer sees each SDK call from start to end: for traces and metrics. Package
// github.com/escrowkit/escrow-go/escrowotel implements it with OpenTelemetry; this package
// depends on no telemetry library. Set one with [WithObserver]; without one, a call costs
// nothing more than a nil check.
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
type Observer interface {
	// CallStart is called before anything is sent, with c's Method, Route, ServerAddress,
	// ServerPort and Start set. The context it returns is the call's: its requests are
	// sent with it (so a traced http.Client transport shows each attempt inside the call),
	// and CallEnd receives it.
	CallStart(ctx context.Context, c *Call) context.Context
	// CallEnd is called once, when the call returns, with c complete.
	CallEnd(ctx context.Context, c *Call)
}

// WithObserver makes the client report every call to o (see [Observer]); nil, the default,
// reports nothing.
func WithObserver(o Observer) Option { return func(s *settings) { s.observer = o } }

// Call describes one SDK call to an [Observer]. Nothing in it carries a credential: the
// path is the one sent, the error is the one the caller gets (already scrubbed).
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
	// Attempts counts the requests sent, every send of a settled write included.
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
func (c *Call) Duration() time.Duration {
	if c.End.IsZero() {
		return 0
	}
	return c.End.Sub(c.Start)
}

// ErrorType names the kind of failure in few words, for a metric label or OpenTelemetry's
// error.type: the status code for an answer of 4xx or 5xx ("404", "429"), else
// "rate_limited" (held back by the client: the allowance is spent beyond the maximum
// wait), "outcome_unknown", "timeout", "canceled", "malformed_response",
// "invalid_argument", "transport", or "_OTHER". It is "" when the call succeeded.
func (c *Call) ErrorType() string {
	var rle *RateLimitError
	var te *TransportError
	var de *DecodeError
	switch err := c.Err; {
	case err == nil:
		return ""
	case errors.Is(err, ErrOutcomeUnknown):
		return "outcome_unknown"
	case c.StatusCode >= 400:
		return strconv.Itoa(c.StatusCode)
	case errors.As(err, &rle):
		return "rate_limited"
	case errors.Is(err, context.DeadlineExceeded):
		return "timeout"
	case errors.Is(err, context.Canceled):
		return "canceled"
	case errors.As(err, &de):
		return "malformed_response"
	case errors.Is(err, ErrInvalidArgument):
		return "invalid_argument"
	case errors.As(err, &te):
		return "transport"
	}
	return "_OTHER"
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

// observation is a call under way, for its Observer. Its methods do nothing on a nil
// receiver, so that the pipeline calls them without asking whether there is an observer.
// One call runs on one goroutine: no lock.
type observation struct {
	o       Observer
	ctx     context.Context // as CallStart returned it
	pattern string          // the endpoint's, as the client names it: "transaction/{id}"
	call    Call
}

// observe starts observing a call on the endpoint (method, pattern). It returns nil when
// the client has no observer.
func (c *Client) observe(ctx context.Context, method, pattern string) *observation {
	if c.observer == nil {
		return nil
	}
	ob := &observation{o: c.observer, pattern: pattern, call: Call{
		Method: method, Route: routeTemplate(method, pattern),
		ServerAddress: c.baseURL.Hostname(), ServerPort: c.serverPort(), Start: time.Now(),
	}}
	ob.ctx = ob.o.CallStart(ctx, &ob.call)
	if ob.ctx == nil {
		ob.ctx = ctx
	}
	return ob
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
func (ob *observation) end(err error) {
	if ob == nil {
		return
	}
	ob.call.End, ob.call.Err = time.Now(), err
	ob.o.CallEnd(ob.ctx, &ob.call)
}

// joinKey marks the context a settled write is sent with: the send joins the write's
// observation instead of starting a call of its own.
type joinKey struct{}

// joining returns the context for sending the write that ob observes as a whole.
func (ob *observation) joining() context.Context {
	return context.WithValue(ob.ctx, joinKey{}, ob)
}

// joined returns the observation a send of (method, pattern) joins, if ctx carries one
// for that endpoint.
func joined(ctx context.Context, method, pattern string) *observation {
	ob, _ := ctx.Value(joinKey{}).(*observation)
	if ob != nil && ob.call.Method == method && ob.pattern == pattern {
		return ob
	}
	return nil
}

// attempt records an attempt's answer (resp nil: none).
func (ob *observation) attempt(resp *http.Response) {
	if ob == nil {
		return
	}
	ob.call.Attempts++
	ob.call.StatusCode = 0
	if resp != nil {
		ob.call.StatusCode = resp.StatusCode
	}
}

// retry records a request sent again: r as decided before its wait.
func (ob *observation) retry(r Retry) {
	if ob == nil {
		return
	}
	ob.call.Retries = append(ob.call.Retries, r)
	if r.Reason == RetryRateLimited {
		ob.call.RateLimitWaits = append(ob.call.RateLimitWaits, RateLimitWait{At: r.At, Wait: r.Wait, Cause: RateLimitTooManyRequests})
	}
}

// held records a wait for the endpoint's allowance before sending.
func (ob *observation) held(wait time.Duration) {
	if ob == nil {
		return
	}
	ob.call.RateLimitWaits = append(ob.call.RateLimitWaits, RateLimitWait{At: time.Now(), Wait: wait, Cause: RateLimitExhausted})
}

// settlingRead records a read that began at start and found p (or failed).
func (ob *observation) settlingRead(start time.Time, p presence, err error) {
	if ob == nil {
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
	ob.call.SettlingReads = append(ob.call.SettlingReads, SettlingRead{Start: start, End: time.Now(), Outcome: out})
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

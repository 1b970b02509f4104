package escrow

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/escrowkit/escrow-go/internal/jsonbudget"
	"github.com/google/go-querystring/query"
	"github.com/hashicorp/go-retryablehttp"
)

// Defaults of the retry policy; see [WithMaxRetries] and [WithMaxWait].
const (
	DefaultMaxRetries = 4
	DefaultMaxWait    = 30 * time.Second
	// defaultBaseWait is the first backoff step; each retry doubles the ceiling of the
	// full-jitter draw up to the maximum wait.
	defaultBaseWait = 250 * time.Millisecond
	// defaultAttemptTimeout bounds one attempt when the caller gives no http.Client; the
	// caller's context bounds the call as a whole.
	defaultAttemptTimeout = 30 * time.Second
	// MaxResponseHeaderBytes bounds the headers of an answer on the client's own transport
	// (Go's default is 10 MiB): the API's answers carry a few hundred bytes of headers, and
	// every header is read, kept and redacted (WithResponse, an error's Header).
	MaxResponseHeaderBytes = 64 << 10
)

// Client talks to the escrow API as one account. It is safe for concurrent use; create one
// per account and reuse it, since it remembers each endpoint's rate-limit state.
type Client struct {
	// Transactions creates, reads and acts on transactions.
	Transactions *TransactionsService
	// Customers reads and manages customer accounts, API keys and saved disbursement methods.
	Customers *CustomersService
	// Partner holds the endpoints only approved partners may call.
	Partner *PartnerService
	// Webhooks registers the URLs the API calls when a transaction changes.
	Webhooks *WebhooksService

	common    service // reused for every service, as go-github does
	baseURL   *url.URL
	auth      *credentials // a pointer, so that %+v of a Client prints an address, not the key
	retryHTTP *http.Client // handed to go-retryablehttp; see newHTTPClient
	// noRedirectHTTP shares retryHTTP's transport but hands redirects back to the caller.
	noRedirectHTTP *http.Client
	userAgent      string
	maxRetries     int
	maxWait        time.Duration
	baseWait       time.Duration
	logger         *slog.Logger
	limits         *endpointLimits
	bodies         *sync.Pool // *[]byte buffers that answers are read into, reused across calls
	// jitter draws a wait in [0, d]; replaced in tests to make waits predictable.
	jitter func(d time.Duration) time.Duration
	// shared holds the rate-limit memory when a RateLimitStore was given; see
	// WithRateLimitStore.
	shared *sharedLimits
	// observer, when set, sees every call; see WithObserver and observe.go.
	observer *observerHooks
}

// service is embedded (by conversion) in every resource service.
type service struct{ client *Client }

// credentials holds what identifies the account. It never leaves the request header.
type credentials struct {
	header string // "Basic base64(email:key)"
	email  string // the account's e-mail: whose transactions and webhooks are the caller's
	// redact scrubs the key and the token, in any encoding, from what the client returns.
	redact *redactor
}

// String keeps credentials out of any fmt output that reaches them.
func (*credentials) String() string { return "[REDACTED]" }

// GoString keeps credentials out of %#v.
func (*credentials) GoString() string { return "[REDACTED]" }

// Option configures a [Client] in [NewClient].
//
// Functional options are the configuration style of every package of escrow-go: escrow,
// escrowtest, redislimit and escrowotel. A constructor called with none is the
// recommended configuration; each option is a named function with its own doc comment
// and default, so a call site reads as what it changes, and adding one never breaks a
// caller. The one struct, [github.com/escrowkit/escrow-go/webhook.Options], is not a
// second style for new code but the receiver's settings record: one value that every
// replica of a receiver shares, with a zero value that is usable. New knobs join the style
// their package already has, so a user never meets two styles in one package.
type Option func(*settings)

type settings struct {
	baseURL    string
	httpClient *http.Client
	maxRetries int
	maxWait    time.Duration
	logger     *slog.Logger
	userAgent  string
	// rateLimitStore, when set, holds the rate-limit memory; see WithRateLimitStore.
	rateLimitStore RateLimitStore
	maxHold        time.Duration
	observer       Observer
}

// WithSandbox points the client at the provider's sandbox, whose accounts and credentials
// are separate from production.
func WithSandbox() Option { return WithBaseURL(SandboxURL) }

// WithBaseURL points the client at another server, such as an escrowtest emulator. The URL
// must use https, except that http is allowed for loopback hosts (for tests). It should
// include the version segment; a missing trailing "/" is added.
func WithBaseURL(rawURL string) Option { return func(s *settings) { s.baseURL = rawURL } }

// WithHTTPClient supplies the http.Client whose Transport (and per-attempt Timeout) carry
// the requests under the client's retry layer. The client is not modified; its redirect
// policy and cookie jar are not used. Its transport's own limits apply: set its
// MaxResponseHeaderBytes (the client's own transport has [MaxResponseHeaderBytes]), or a
// server can make every call read and redact up to Go's default of 10 MiB of headers.
func WithHTTPClient(hc *http.Client) Option { return func(s *settings) { s.httpClient = hc } }

// WithMaxRetries sets how many times one call may be retried (default 4; 0 disables retries).
func WithMaxRetries(n int) Option { return func(s *settings) { s.maxRetries = max(n, 0) } }

// WithMaxWait caps any single wait: a backoff step, a Retry-After or RateLimit-Reset hint,
// or the hold on an exhausted endpoint (default 30s). When the server asks for longer, the
// call fails at once with a [*RateLimitError] instead of sleeping.
func WithMaxWait(d time.Duration) Option { return func(s *settings) { s.maxWait = d } }

// WithMaxHold bounds how long a server's hint may hold an endpoint (default
// [DefaultMaxHold], 10 minutes). An answer with no requests remaining and a RateLimit-Reset
// or Retry-After further away (a year, an epoch time in the far future, a garbled value)
// holds calls to that endpoint for at most d, in this client's memory and in a shared
// [RateLimitStore]; then one request probes the endpoint, and its answer says whether the
// others may follow. A [*RateLimitError]'s RetryAfter is never longer than d either.
// Non-positive values are refused by NewClient.
func WithMaxHold(d time.Duration) Option { return func(s *settings) { s.maxHold = d } }

// WithLogger makes the client log requests, retries and waits at Debug and Info levels. The
// client is silent by default. Credentials and bodies are never logged.
func WithLogger(l *slog.Logger) Option { return func(s *settings) { s.logger = l } }

// WithUserAgent prefixes the User-Agent header with the caller's product, such as
// "acme-market/2.1".
func WithUserAgent(product string) Option { return func(s *settings) { s.userAgent = product } }

// NewClient returns a client for the account with this e-mail address, authenticating with
// an API key (or the account password). It talks to production unless an option says
// otherwise.
//
// Without [WithHTTPClient], the client has a transport of its own, not
// http.DefaultTransport, which refuses an answer whose headers exceed
// [MaxResponseHeaderBytes]: the call fails at once, unretried, with a [*TransportError]
// that says so.
func NewClient(email, apiKey string, opts ...Option) (*Client, error) {
	s := settings{baseURL: ProductionURL, maxRetries: DefaultMaxRetries, maxWait: DefaultMaxWait, maxHold: DefaultMaxHold}
	for _, opt := range opts {
		opt(&s)
	}
	if email == "" || strings.ContainsAny(email, ":\r\n") || hasControl(email) {
		return nil, fmt.Errorf("%w: the e-mail must be non-empty and contain no colon or control character", ErrInvalidArgument)
	}
	if apiKey == "" || hasControl(apiKey) {
		return nil, fmt.Errorf("%w: the API key must be non-empty and contain no control character", ErrInvalidArgument)
	}
	if s.maxWait <= 0 || s.maxHold <= 0 {
		return nil, fmt.Errorf("%w: the maximum wait and hold must be positive", ErrInvalidArgument)
	}
	base, err := parseBaseURL(s.baseURL)
	if err != nil {
		return nil, err
	}
	token := base64.StdEncoding.EncodeToString([]byte(email + ":" + apiKey))
	c := &Client{
		baseURL:    base,
		auth:       &credentials{header: "Basic " + token, email: email, redact: newRedactor(email, apiKey)},
		userAgent:  userAgent(s.userAgent),
		maxRetries: s.maxRetries,
		maxWait:    s.maxWait,
		baseWait:   min(defaultBaseWait, s.maxWait),
		logger:     s.logger,
		jitter:     func(d time.Duration) time.Duration { return rand.N(d + 1) },
	}
	if c.logger == nil {
		c.logger = slog.New(slog.DiscardHandler)
	}
	c.observer = newObserverHooks(s.observer, c.logger, c.auth)
	c.limits = newEndpointLimits(c.baseWait, c.maxWait)
	c.limits.maxHold = s.maxHold
	if s.rateLimitStore != nil {
		c.shared = newSharedLimits(s.rateLimitStore, accountScope(email, base.String()), c.logger, s.maxHold)
	}
	c.bodies = new(sync.Pool)
	c.retryHTTP = c.newHTTPClient(s.httpClient)
	c.noRedirectHTTP = &http.Client{
		Transport:     c.retryHTTP.Transport,
		Timeout:       c.retryHTTP.Timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	c.common.client = c
	c.Transactions = (*TransactionsService)(&c.common)
	c.Customers = (*CustomersService)(&c.common)
	c.Partner = (*PartnerService)(&c.common)
	c.Webhooks = (*WebhooksService)(&c.common)
	return c, nil
}

// BaseURL returns the base URL requests are sent to, ending in "/".
func (c *Client) BaseURL() string { return c.baseURL.String() }

func userAgent(product string) string {
	ua := "escrow-go/" + Version + " (" + runtime.Version() + "; +https://github.com/escrowkit/escrow-go)"
	if product = strings.TrimSpace(product); product != "" && !hasControl(product) {
		ua = product + " " + ua
	}
	return ua
}

func hasControl(s string) bool {
	return strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f })
}

// parseBaseURL enforces HTTPS (HTTP only on loopback, for tests) and the trailing slash the
// relative paths are joined to.
func parseBaseURL(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("%w: base URL: %v", ErrInvalidArgument, err)
	}
	switch {
	case u.Host == "":
		return nil, fmt.Errorf("%w: base URL %q has no host", ErrInvalidArgument, raw)
	case u.User != nil:
		return nil, fmt.Errorf("%w: the base URL must not carry credentials; pass them to NewClient", ErrInvalidArgument)
	case u.RawQuery != "" || u.Fragment != "":
		return nil, fmt.Errorf("%w: base URL %q must not have a query or fragment", ErrInvalidArgument, raw)
	case u.Scheme == "https":
	case u.Scheme == "http" && isLoopback(u.Hostname()):
	case u.Scheme == "http":
		return nil, fmt.Errorf("%w: base URL %q: plain HTTP is allowed only to loopback hosts", ErrInvalidArgument, raw)
	default:
		return nil, fmt.Errorf("%w: base URL %q: scheme must be https", ErrInvalidArgument, raw)
	}
	if !strings.HasSuffix(u.Path, "/") {
		u.Path += "/"
		if u.RawPath != "" {
			u.RawPath += "/"
		}
	}
	return u, nil
}

func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// newHTTPClient wraps the caller's transport in a client of our own, so that the caller's
// redirect policy, cookie jar and the shared http.DefaultTransport are never touched.
func (c *Client) newHTTPClient(hc *http.Client) *http.Client {
	var rt http.RoundTripper
	timeout := defaultAttemptTimeout
	if hc != nil {
		rt, timeout = hc.Transport, hc.Timeout
	}
	if rt == nil {
		rt = &http.Transport{
			Proxy:                  http.ProxyFromEnvironment,
			DialContext:            (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
			ForceAttemptHTTP2:      true,
			MaxIdleConns:           100,
			MaxIdleConnsPerHost:    16,
			IdleConnTimeout:        90 * time.Second,
			TLSHandshakeTimeout:    10 * time.Second,
			ExpectContinueTimeout:  time.Second,
			TLSClientConfig:        &tls.Config{MinVersion: tls.VersionTLS12},
			MaxResponseHeaderBytes: MaxResponseHeaderBytes,
		}
	}
	// go-retryablehttp closes all idle connections of its client whenever one call gives
	// up; hiding CloseIdleConnections keeps one failing call from costing every other
	// goroutine its pooled connection.
	return &http.Client{Transport: roundTripperOnly{rt}, Timeout: timeout, CheckRedirect: c.checkRedirect}
}

// roundTripperOnly exposes RoundTrip and nothing else of a transport.
type roundTripperOnly struct{ rt http.RoundTripper }

func (t roundTripperOnly) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.rt.RoundTrip(req)
	if err != nil && headersTooLarge(err) {
		err = errHeadersTooLarge
	}
	return resp, err
}

// errHeadersTooLarge is a transport's refusal of an answer's headers: the same answer
// would come again, so it is not retried (see permanent).
var errHeadersTooLarge = errors.New("the answer's headers exceed the transport's MaxResponseHeaderBytes")

// headersTooLarge recognizes net/http's refusal of too many header bytes, over HTTP/1 and
// HTTP/2, which it reports as untyped errors. fmt reads the text: a transport's error whose
// Error method panics (an x509.HostnameError without its certificate) must not panic here.
func headersTooLarge(err error) bool {
	msg := fmt.Sprint(err)
	return strings.Contains(msg, "server response headers exceeded") || strings.Contains(msg, "response header list larger than")
}

// checkRedirect follows a redirect only to the same scheme and host: credentials and the
// As-Customer header must not reach anyone else.
func (c *Client) checkRedirect(req *http.Request, via []*http.Request) error {
	first := via[0].URL
	switch {
	case len(via) > 5:
		return fmt.Errorf("%w: more than 5 redirects", ErrRedirectRefused)
	case !strings.EqualFold(req.URL.Host, first.Host) || req.URL.Scheme != first.Scheme:
		return fmt.Errorf("%w: to %s://%s", ErrRedirectRefused, req.URL.Scheme, req.URL.Host)
	}
	return nil
}

// RequestOption adjusts one call.
type RequestOption func(*requestOptions)

type requestOptions struct {
	asCustomer string
	response   *Response // see WithResponse
	maxPages   int       // iterators only; see MaxPages
}

// AsCustomer makes an approved partner act for the customer with this e-mail address (the
// As-Customer header), on what the API lets a partner do for a party ([Action.Delegable],
// [Route.AsCustomer]; this list is generated from actions.go and endpoints.go):
//
//	actions        agree, ship, receive, reject, ship_return, receive_return
//	not delegable  accept, accept_return, reject_return, cancel
//	routes         PATCH /transaction/{id}
//	               PATCH /transaction/{id}/item/{item_id}
//	               GET /transaction/{id}/payment_methods
//	               POST /transaction/{id}/payment_methods/{payment_method_name}
//	               POST /transaction/{id}/payment_methods/wire_transfer
//	               GET /transaction/{id}/web_link/{action}
//	               GET /transaction/{id}/item/{item_id}/web_link/{action}
//
// The other actions stay with the party (cancel: with the partner as itself). The tables
// follow the live API where it and the spec differ: the spec lists reject_return, which the
// live API refuses. The emulator enforces the same matrix from its own table, which the
// contract test compares with the SDK's.
func AsCustomer(email string) RequestOption {
	return func(o *requestOptions) { o.asCustomer = email }
}

// call describes one API call for [Client.send].
type call struct {
	route  Route // the row of the route table (endpoints.go)
	params []any // values of the template's {…} segments, in order
	query  any   // a struct with `url` tags, or nil
	body   any   // encoded to JSON once, or nil
	out    any   // decoded from a 2xx body (see responseDecoder), or nil
	opts   []RequestOption
	// keepRedirect returns a redirect to out instead of following it.
	keepRedirect bool
	// escapedPath and rawQuery, set by Client.Do, are sent as they are instead of the
	// template and the query; the route then only names the endpoint.
	escapedPath, rawQuery string
}

// responseDecoder is implemented by results that need more than the JSON body: headers, or
// a body that is not JSON. body is the client's reusable buffer: copy what is kept.
type responseDecoder interface {
	decodeResponse(resp *http.Response, body []byte) error
}

// endpoint names the route for rate-limit accounting and logs: "GET /transaction/{id}".
func (apiCall *call) endpoint() string { return apiCall.route.String() }

// fetch sends apiCall and decodes the answer into a new T.
func fetch[T any](ctx context.Context, c *Client, apiCall call) (*T, error) {
	out := new(T)
	apiCall.out = out
	if err := c.send(ctx, apiCall); err != nil {
		return nil, err
	}
	return out, nil
}

// send is the request pipeline: build the request once, send it through the retry layer,
// and turn the answer into a result or a typed error. With an observer, the call is
// reported to it, unless it is a settled write's send, which its settle reports as a whole.
func (c *Client) send(ctx context.Context, apiCall call) error {
	if c.observer == nil {
		return c.sendRecorded(ctx, apiCall, nil)
	}
	if record := joined(ctx, apiCall.route.Method, apiCall.route.path()); record != nil {
		return c.sendRecorded(ctx, apiCall, record)
	}
	record := c.observe(ctx, apiCall.route.Method, apiCall.route.path())
	err := c.sendRecorded(record.ctx, apiCall, record)
	record.end(err)
	return err
}

// sendRecorded is send's pipeline; record, when not nil, records the attempts, retries
// and waits for the observer.
func (c *Client) sendRecorded(ctx context.Context, apiCall call, record *callRecord) error {
	options := apiCall.requestOptions()
	if options.response != nil {
		options.response.capture(nil, time.Time{}) // a call refused before sending leaves no stale answer
	}
	target, err := c.requestURL(apiCall)
	if err != nil {
		return err
	}
	req, err := c.newRequest(ctx, apiCall, &target, options)
	if err != nil {
		return err
	}
	// What the caller sent is shown redacted in every error and log line: a key put in a
	// path (Client.Do, a reference) must not come back in Error().
	policy, done := c.newAttemptPolicy(ctx, apiCall, c.auth.redact.string(target.EscapedPath()), record)
	defer done()
	if err := policy.acquire(ctx); err != nil {
		return err
	}
	retrying := policy.retryClient()
	if apiCall.keepRedirect {
		retrying.HTTPClient = c.noRedirectHTTP
	}
	retrying.HTTPClient = record.through(retrying.HTTPClient)
	resp, err := retrying.Do(req)
	if options.response != nil {
		options.response.capture(resp, time.Now())
		c.auth.redact.response(options.response) // an echoed header must not hand the key back
	}
	return c.finish(ctx, policy, resp, err, apiCall)
}

// newAttemptPolicy starts a call's way through the retry layer. Within a settled write its
// attempts continue the numbering of the write's earlier sends (see settle), and done
// records them when the call ends.
func (c *Client) newAttemptPolicy(ctx context.Context, apiCall call, shownPath string, record *callRecord) (policy *attemptPolicy, done func()) {
	endpoint := c.auth.redact.string(apiCall.endpoint()) // Client.Do's endpoint is named after its path
	policy = &attemptPolicy{c: c, method: apiCall.route.Method, path: shownPath, endpoint: endpoint, obs: record}
	var recordAttempts func(int)
	policy.attempts, recordAttempts = priorAttempts(ctx)
	return policy, func() { recordAttempts(policy.attempts) }
}

// requestOptions applies the call's RequestOptions.
func (apiCall *call) requestOptions() requestOptions {
	var options requestOptions
	for _, opt := range apiCall.opts {
		opt(&options)
	}
	return options
}

// requestURL is where the call goes: the base URL, the route's path with its parameters
// (or Client.Do's path), and the query.
func (c *Client) requestURL(apiCall call) (url.URL, error) {
	path := apiCall.escapedPath
	if path == "" {
		var err error
		if path, err = expandPath(apiCall.route.path(), apiCall.params); err != nil {
			return url.URL{}, c.scrubError(err) // it quotes the parameter, which may be anything
		}
	}
	target := *c.baseURL
	target.Path, target.RawPath = c.baseURL.Path+unescapedPath(path), c.baseURL.EscapedPath()+path
	target.RawQuery = apiCall.rawQuery
	if apiCall.query != nil {
		values, err := queryValues(apiCall.query)
		if err != nil {
			return url.URL{}, err
		}
		target.RawQuery = values.Encode()
	}
	return target, nil
}

// queryValues encodes a call's query struct: its `url` fields, then its Extra values for
// names no field took.
func queryValues(q any) (url.Values, error) {
	values, err := query.Values(q)
	if err != nil {
		return nil, fmt.Errorf("%w: query: %w", ErrInvalidArgument, err)
	}
	if x, ok := q.(interface{ extraQuery() url.Values }); ok {
		for key, vals := range x.extraQuery() {
			if !values.Has(key) { // a named field wins over the same name in Extra
				values[key] = vals
			}
		}
	}
	return values, nil
}

// newRequest builds the call's request: its body encoded once (each attempt resends the
// same bytes) and its headers.
func (c *Client) newRequest(ctx context.Context, apiCall call, target *url.URL, options requestOptions) (*retryablehttp.Request, error) {
	var body []byte
	if apiCall.body != nil {
		var err error
		if body, err = json.Marshal(apiCall.body); err != nil {
			return nil, c.scrubError(fmt.Errorf("escrow: %s %s: encoding the request: %w", apiCall.route.Method, target.EscapedPath(), err))
		}
	}
	if hasControl(options.asCustomer) {
		return nil, fmt.Errorf("%w: As-Customer e-mail contains a control character", ErrInvalidArgument)
	}
	req, err := retryablehttp.NewRequestWithContext(ctx, apiCall.route.Method, target.String(), bodyOrNil(body))
	if err != nil {
		return nil, c.scrubError(fmt.Errorf("%w: %v", ErrInvalidArgument, err))
	}
	req.Header.Set("Authorization", c.auth.header)
	req.Header.Set("User-Agent", c.userAgent)
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if options.asCustomer != "" {
		req.Header.Set("As-Customer", options.asCustomer)
	}
	return req, nil
}

// bodyOrNil keeps a nil slice from becoming an empty, non-nil request body.
func bodyOrNil(b []byte) any {
	if b == nil {
		return nil
	}
	return b
}

// finish turns what the retry layer returned into the caller's result or a typed error.
func (c *Client) finish(ctx context.Context, policy *attemptPolicy, resp *http.Response, err error, apiCall call) error {
	if err != nil {
		return c.unanswered(ctx, policy, resp, err)
	}
	defer resp.Body.Close()
	redirected := apiCall.keepRedirect && resp.StatusCode >= 300 && resp.StatusCode < 400
	if (resp.StatusCode < 200 || resp.StatusCode > 299) && !redirected {
		return c.errorAnswer(ctx, policy, resp)
	}
	return c.decodeAnswer(ctx, policy, resp, apiCall)
}

// unanswered is the error of a call the retry layer gave up on: held back by the rate
// limit, a server hint beyond the maximum wait, or no answer at all.
func (c *Client) unanswered(ctx context.Context, policy *attemptPolicy, resp *http.Response, err error) error {
	if resp != nil {
		defer resp.Body.Close()
	}
	switch e := err.(type) {
	case *RateLimitError, *TransportError: // from acquire: held back, or cancelled while held
		return e
	case *retryHintTooLong:
		apiErr, _ := c.readErrorBody(ctx, policy, resp)
		return &RateLimitError{Method: policy.method, Path: policy.path, Endpoint: policy.endpoint, RetryAfter: e.wait, Response: apiErr}
	}
	return &TransportError{Method: policy.method, Path: policy.path, Attempts: policy.attempts, OutcomeUnknown: policy.maybePerformed, Err: c.scrubError(err)}
}

// readErrorBody reads an error answer into an *APIError and its field errors, every
// credential removed (see redactor.errorAnswer).
func (c *Client) readErrorBody(ctx context.Context, policy *attemptPolicy, resp *http.Response) (*APIError, []FieldError) {
	body, _ := readCapped(resp, maxErrorBody, nil)
	return c.auth.redact.errorAnswer(ctx, policy.method, policy.path, resp, body)
}

// errorAnswer is the typed error of an answer outside 2xx (and not a redirect kept).
func (c *Client) errorAnswer(ctx context.Context, policy *attemptPolicy, resp *http.Response) error {
	apiErr, fields := c.readErrorBody(ctx, policy, resp)
	switch {
	case resp.StatusCode == http.StatusTooManyRequests:
		wait, _ := c.retryHint(resp, time.Now())
		return &RateLimitError{Method: policy.method, Path: policy.path, Endpoint: policy.endpoint, RetryAfter: wait, Response: apiErr}
	case len(fields) > 0:
		return &ValidationError{APIError: apiErr, fields: fields}
	}
	return apiErr
}

// decodeAnswer decodes a successful answer into the call's out.
func (c *Client) decodeAnswer(ctx context.Context, policy *attemptPolicy, resp *http.Response, apiCall call) error {
	if apiCall.out == nil || resp.StatusCode == http.StatusNoContent {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, apiCall.route.MaxBody()))
		return nil
	}
	// The body is read into a pooled buffer: decoders copy what they keep, so it is free
	// again once decoded.
	buf, _ := c.bodies.Get().(*[]byte)
	if buf == nil {
		buf = new([]byte)
	}
	limit := apiCall.route.MaxBody()
	body, err := readCapped(resp, limit, (*buf)[:0]) // see limits.go
	if err != nil && limit == MaxListBody {
		err = fmt.Errorf("%w: a page of a listing; ask for smaller pages (ListTransactionsOptions.PerPage, the partner options' Limit)", err)
	}
	if err == nil {
		err = decodeBody(resp, body, apiCall.out)
	}
	if err != nil {
		shown, _ := c.auth.redact.bytesContext(ctx, bytes.Clone(body[:min(len(body), 64<<10)]))
		err = &DecodeError{Method: policy.method, Path: policy.path, StatusCode: resp.StatusCode, Body: shown, Err: c.scrubError(err)}
	}
	if cap(body) <= maxPooledBody {
		*buf = body
		c.bodies.Put(buf)
	}
	return err
}

// decodeBody fills out from a successful answer.
func decodeBody(resp *http.Response, body []byte, out any) error {
	switch o := out.(type) {
	case responseDecoder:
		return o.decodeResponse(resp, body)
	case *json.RawMessage:
		if len(bytes.TrimSpace(body)) == 0 {
			*o = nil // an endpoint of undocumented shape answered with no body
			return nil
		}
	}
	if err := jsonbudget.Check(body, out); err != nil {
		return err
	}
	return json.Unmarshal(body, out)
}

// maxPooledBody bounds the buffers kept for reuse, so that one large report does not stay
// in memory for the client's lifetime.
const maxPooledBody = 256 << 10

// readCapped appends at most limit bytes of a response body to body; a longer body is an
// error (and is cut at the limit). The buffer grows to Content-Length at once when the
// server sends it, up to maxPrealloc: beyond that it grows as bytes arrive.
func readCapped(resp *http.Response, limit int64, body []byte) ([]byte, error) {
	size := 512
	if n := resp.ContentLength; n > 0 && n <= limit {
		size = int(min(n+1, maxPrealloc)) // room to read the end of the body without growing
	}
	if cap(body) < size {
		body = make([]byte, 0, size)
	}
	r := io.LimitReader(resp.Body, limit+1)
	var err error
	for err == nil {
		if len(body) == cap(body) {
			if int64(len(body)) >= limit {
				// Full at the cap: one more byte makes the body too long. A probe of its
				// own keeps the buffer from growing past the cap only to find that out.
				var probe [1]byte
				var n int
				for n == 0 && err == nil {
					n, err = r.Read(probe[:])
				}
				if n > 0 {
					return body[:limit], fmt.Errorf("body exceeds %d bytes", limit)
				}
				break
			}
			body = growBody(body, limit) // see limits.go
		}
		var n int
		n, err = r.Read(body[len(body):cap(body)])
		body = body[:len(body)+n]
	}
	if err == io.EOF {
		err = nil
	}
	if int64(len(body)) > limit {
		body, err = body[:limit], fmt.Errorf("body exceeds %d bytes", limit)
	}
	return body, err
}

// scrubError keeps a credential that some transport echoed out of an error's text.
func (c *Client) scrubError(err error) error { return c.auth.redact.scrub(err) }

// expandPath fills the pattern's {…} segments with escaped params. A parameter can never add
// a path segment or climb out of its place: "/" is escaped and "." and ".." are refused.
func expandPath(pattern string, params []any) (string, error) {
	var b strings.Builder
	rest := pattern
	for i := 0; ; i++ {
		open := strings.IndexByte(rest, '{')
		if open < 0 {
			if i != len(params) {
				return "", fmt.Errorf("%w: %d parameters for %q", ErrInvalidArgument, len(params), pattern)
			}
			b.WriteString(rest)
			return b.String(), nil
		}
		end := strings.IndexByte(rest[open:], '}')
		if end < 0 || i >= len(params) {
			return "", fmt.Errorf("%w: missing parameter for %q", ErrInvalidArgument, pattern)
		}
		seg, err := pathSegment(params[i])
		if err != nil {
			return "", fmt.Errorf("%w: %s: %v", ErrInvalidArgument, rest[open+1:open+end], err)
		}
		b.WriteString(rest[:open])
		b.WriteString(seg)
		rest = rest[open+end+1:]
	}
}

func pathSegment(p any) (string, error) {
	switch v := p.(type) {
	case int64:
		if v <= 0 {
			return "", fmt.Errorf("id %d is not positive", v)
		}
		return strconv.FormatInt(v, 10), nil
	case CustomerRef:
		return v.segment()
	case string:
		seg := url.PathEscape(v)
		if v == "" || !safeSegment(seg) { // see do.go: "a/../../x" would climb where %2F is decoded
			return "", fmt.Errorf("%q cannot be a path segment", truncate(v, 64))
		}
		return seg, nil
	}
	return "", fmt.Errorf("unsupported parameter type %T", p)
}

// unescapedPath decodes an escaped path for url.URL.Path; RawPath keeps the escaped form.
func unescapedPath(escaped string) string {
	s, err := url.PathUnescape(escaped)
	if err != nil {
		return escaped
	}
	return s
}

// Me is the literal "me", which the API reads as the caller wherever it names a customer:
// in a path, as a [CustomerRef] (client.Customers.Get(ctx, escrow.Me)), and in a
// transaction, as a party's or a payer's customer (PartyInput{Customer: escrow.Me}). It is
// an untyped constant so that one name serves both.
const Me = "me"

// CustomerRef names a customer in a path: [Me] or a [CustomerID]. Any other value is
// refused with [ErrInvalidArgument] before a request is sent.
type CustomerRef string

// CustomerID refers to a customer by numeric id.
func CustomerID(id int64) CustomerRef { return CustomerRef(strconv.FormatInt(id, 10)) }

func (r CustomerRef) segment() (string, error) {
	if r == Me {
		return Me, nil
	}
	if id, err := strconv.ParseInt(string(r), 10, 64); err == nil && id > 0 && strconv.FormatInt(id, 10) == string(r) {
		return string(r), nil
	}
	return "", fmt.Errorf("customer reference %q is neither Me nor a positive CustomerID", truncate(string(r), 32))
}

// sleep waits d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

package escrowtest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// maxBodyBytes bounds request bodies; a larger one answers 413.
const maxBodyBytes = 1 << 20

// Emulator is the escrow API as an http.Handler: serve it on any listener, or use Server,
// which serves it over TLS on the loopback interface. All of its methods are safe for
// concurrent use.
type Emulator struct {
	cfg      config
	log      *slog.Logger
	clock    *clock
	faults   *faultInjector
	hooks    *dispatcher
	routes   *router
	control  http.Handler
	changes  *changes // wakes the page's event stream
	requests *requestLog

	// mu guards the store, the rate limiter and now. It is never held while a webhook
	// is delivered or a fault's latency is slept.
	mu      sync.Mutex
	st      *store
	limiter *rateLimiter
	now     time.Time // the emulator time of the operation holding mu

	done      chan struct{} // closed by Close
	closeOnce sync.Once
}

// NewEmulator returns an emulator with no accounts. Call Close when done with it, to stop
// its webhook deliveries.
func NewEmulator(opts ...Option) *Emulator {
	cfg := newConfig(opts)
	clk := newClock(cfg.start, cfg.frozen)
	routes := apiRouter()
	faults := newFaultInjector(cfg.seed, routes)
	e := &Emulator{
		cfg:      cfg,
		log:      cfg.logger,
		clock:    clk,
		faults:   faults,
		hooks:    newDispatcher(cfg.webhookClient, cfg.webhookTimeout, faults, cfg.logger),
		routes:   routes,
		st:       newStore(),
		limiter:  newRateLimiter(cfg.rateLimit, cfg.rateWindow),
		done:     make(chan struct{}),
		changes:  newChanges(),
		requests: &requestLog{},
	}
	e.hooks.changed = e.changes.notify
	e.control = e.controlMux()
	return e
}

// Close stops webhook deliveries, in flight or queued, and cuts short injected latencies.
// The emulator still answers requests afterwards, but sends no more webhooks.
func (e *Emulator) Close() {
	e.closeOnce.Do(func() {
		close(e.done)
		e.hooks.close()
	})
}

// Reset forgets every account, transaction, fault, rate-limit count and recorded webhook
// delivery, undoes every Advance and restarts ids, as if the emulator were new. Options
// given to NewEmulator stay in force; a rate limit set later with SetRateLimit is undone.
func (e *Emulator) Reset() {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.st = newStore()
	e.limiter = newRateLimiter(e.cfg.rateLimit, e.cfg.rateWindow)
	e.clock.reset()
	e.faults.clear()
	e.hooks.reset()
	e.requests.reset()
}

// ServeHTTP serves the API below /2017-09-01/ and the control API below /_emulator/.
// A request addressed to a Host that is not a loopback name or address, nor one given to
// WithHosts, is answered 421 Misdirected Request before anything else.
func (e *Emulator) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !e.hostAllowed(r.Host) {
		misdirected().write(w)
		return
	}
	if strings.HasPrefix(r.URL.Path, controlRoot) {
		e.control.ServeHTTP(w, r)
		return
	}
	rt, params, allowed := e.routes.match(r.Method, r.URL.EscapedPath())
	endpoint := unroutedEndpoint(r.Method)
	if rt != nil {
		endpoint = rt.endpoint()
	}
	t := e.newTrace(r, endpoint)
	fault := e.faults.pick(endpoint)
	t.Fault = FaultEffect(fault)
	if !e.latencyBefore(r, fault.Latency) || fault.Drop == DropBefore {
		// When the client went away (or the emulator closed) during the latency,
		// returning would make net/http answer an empty 200, which a client still
		// listening would take for success.
		e.finish(t, 0, nil, nil) // first: dropConnection may panic to abort the handler
		dropConnection(w)
		return
	}
	s := e.serve(w, r, call{route: rt, params: params, allowed: allowed, endpoint: endpoint, injected: fault.Status})
	t.Account = s.account
	e.changes.notify()
	status, data := s.resp.encode()
	if e.answerLost(r.Context(), fault) {
		e.finish(t, 0, s.body, data)
		dropConnection(w) // the change is made; the client never hears of it
		return
	}
	s.resp.writeEncoded(w, status, data)
	e.finish(t, status, s.body, data)
	e.log.Debug("escrowtest request", "method", r.Method, "endpoint", endpoint, "status", status)
}

// latencyBefore waits a fault's latency before the request is handled, and reports false
// when the client or the emulator went away meanwhile.
func (e *Emulator) latencyBefore(r *http.Request, d time.Duration) bool {
	if d <= 0 {
		return true
	}
	// net/http notices a client that went away only once the request body has been read
	// to its end: read it first, or a POST or PATCH whose client gave up during the
	// latency would still be handled, when Latency promises nothing is.
	if r.Body != nil && r.Body != http.NoBody && r.ContentLength != 0 {
		r.Body = readAhead(r.Body)
	}
	return e.sleep(r.Context(), d)
}

// answerLost applies a fault's effects after the request was handled, whose change is
// made whether or not the client is still there: it reports true when the answer is to
// be dropped, or the client or the emulator went away during the latency after (the
// connection is dropped then too, not answered an empty 200).
func (e *Emulator) answerLost(ctx context.Context, fault Fault) bool {
	if fault.LatencyAfter > 0 && !e.sleep(ctx, fault.LatencyAfter) {
		return true
	}
	return fault.Drop == DropAfter
}

// standardMethods are the methods of RFC 9110. Any other token is a valid HTTP method
// too, so naming an endpoint by a method the client chose would let every new method
// add a rate-limit window: requests that match no route are counted by their method
// only when it is one of these.
var standardMethods = []string{
	http.MethodConnect, http.MethodDelete, http.MethodGet, http.MethodHead, http.MethodOptions,
	http.MethodPatch, http.MethodPost, http.MethodPut, http.MethodTrace,
}

// unroutedEndpoint names the endpoint of a request that matches no route: "GET *", or
// "OTHER *" for a method outside standardMethods.
func unroutedEndpoint(method string) string {
	if slices.Contains(standardMethods, method) {
		return method + " *"
	}
	return "OTHER *"
}

// readAhead reads a request body (up to one byte past the limit readBody enforces) and
// returns a body that yields the same bytes.
func readAhead(body io.ReadCloser) io.ReadCloser {
	head, _ := io.ReadAll(io.LimitReader(body, maxBodyBytes+1))
	return struct {
		io.Reader
		io.Closer
	}{io.MultiReader(bytes.NewReader(head), body), body}
}

// call is what routing found out about a request.
type call struct {
	route    *route
	params   map[string]string
	allowed  []string
	endpoint string
	injected int // an injected status, or 0
}

// served is an API request answered: the answer to write, and what the request log keeps
// of it.
type served struct {
	resp    response
	body    []byte // the request's body as read
	account string // the caller's address, "" without valid credentials
}

// serve answers an API request: it authenticates, counts the request against the rate
// limit and runs the handler, all under the lock, and returns the answer to write.
func (e *Emulator) serve(w http.ResponseWriter, r *http.Request, c call) served {
	body, err := readBody(w, r)
	if err != nil {
		return served{resp: e.errorResponse(err)}
	}

	e.lock()
	defer e.mu.Unlock()
	caller := e.st.authenticate(r)
	var callerID int64
	if caller != nil {
		callerID = caller.id
	}
	quota := e.limiter.take(rateKey{account: callerID, endpoint: c.endpoint}, e.now)

	resp := e.answer(r, c, quota, caller, body)
	quota.setHeaders(resp.headers())
	e.recordAsCustomer(r, c, caller, resp.status)
	out := served{resp: resp, body: body}
	if caller != nil {
		out.account = caller.email
	}
	return out
}

// lock takes the emulator's lock for one operation: it reads the clock once, so the whole
// operation happens at one instant, and first applies what time has done since.
func (e *Emulator) lock() {
	e.mu.Lock()
	e.now = e.clock.now()
	e.settle()
}

// answer is the response to an API request within its rate limit's quota: a refusal, or
// its route's handler's answer.
func (e *Emulator) answer(r *http.Request, c call, quota quota, caller *account, body []byte) response {
	if !quota.allowed {
		return quota.refusal()
	}
	if refused := refusal(r, c, caller); refused != nil {
		return refused.response()
	}
	resp, err := c.route.handle(e, &request{Request: r, params: c.params, body: body, caller: caller})
	if err != nil {
		return e.errorResponse(err)
	}
	return resp
}

// refusal is the error a request gets before its handler runs: an injected fault, no route
// or method for it, no valid credentials, or an As-Customer the caller or the route does
// not take. It is nil when the handler is to answer.
func refusal(r *http.Request, c call, caller *account) *apiError {
	switch {
	case c.injected != 0:
		return newError(c.injected, "injected_fault", "fault injected on %s", c.endpoint)
	case c.route == nil && c.allowed == nil:
		return notFound("no route for %s %s", r.Method, r.URL.Path)
	case c.route == nil:
		err := newError(http.StatusMethodNotAllowed, "method_not_allowed", "%s is not allowed on %s; use %s", r.Method, r.URL.Path, strings.Join(c.allowed, ", "))
		err.header = http.Header{"Allow": {strings.Join(c.allowed, ", ")}}
		return err
	case caller == nil:
		return unauthorized(r)
	}
	return delegationRefusal(r, c, caller)
}

// delegationRefusal refuses an As-Customer request from a caller that is no approved
// partner, or on a route that does not take the header; nil otherwise.
func delegationRefusal(r *http.Request, c call, caller *account) *apiError {
	switch {
	case r.Header.Get(asCustomerHeader) == "":
		return nil
	case !caller.partner:
		return forbidden(notApprovedPartner)
	case !c.route.delegable:
		return forbidden("%s is not accepted on %s", asCustomerHeader, c.endpoint)
	}
	return nil
}

// unauthorized answers a request without valid credentials: it says whether credentials
// were sent and refused, or are missing, since "required" misleads a caller that sent a
// key the emulator no longer knows.
func unauthorized(r *http.Request) *apiError {
	err := newError(http.StatusUnauthorized, "unauthorized", "HTTP Basic authentication with an e-mail address and a password or API key is required")
	if _, _, sent := r.BasicAuth(); sent {
		err.message = "the credentials sent were refused: no account has this e-mail address with this password or active API key " +
			"(an emulator forgets its accounts and keys when it is reset, and when it restarts unless it keeps its state in a file: add the account again for a new key)"
	}
	err.header = http.Header{"Www-Authenticate": {`Basic realm="escrow"`}}
	return err
}

// errorResponse renders a handler's error.
func (e *Emulator) errorResponse(err error) response {
	var ae *apiError
	if errors.As(err, &ae) {
		return ae.response()
	}
	var fe fieldErrors
	if errors.As(err, &fe) {
		return response{status: http.StatusUnprocessableEntity, body: wireValidation{Errors: fe}}
	}
	// Handlers return only the two kinds above; this is a bug in the emulator.
	e.log.Error("escrowtest: unexpected error", "err", err)
	return newError(http.StatusInternalServerError, "internal", "%v", err).response()
}

// sleep waits d, and reports false when the request or the emulator ended first.
func (e *Emulator) sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
	case <-e.done:
	}
	return false
}

// request is an authenticated API request as handlers see it.
type request struct {
	*http.Request
	params map[string]string
	body   []byte
	caller *account
}

// id reads a numeric path parameter; anything else names nothing (404).
func (req *request) id(name string) (int64, error) {
	n, err := strconv.ParseInt(req.params[name], 10, 64)
	if err != nil || n <= 0 {
		return 0, notFound("no %s %q", strings.TrimSuffix(name, "_id"), req.params[name])
	}
	return n, nil
}

// emulatorURL is an address below the control root on the host the request came to:
// the URLs the emulator hands out (landing pages, report downloads) point back at it.
func emulatorURL(r *http.Request, path string) string {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host + strings.TrimSuffix(controlRoot, "/") + path
}

// response is an answer ready to write.
type response struct {
	status int
	header http.Header
	body   any // encoded as JSON; nil for no body
}

func success(body any) response { return response{status: http.StatusOK, body: body} }

func (resp *response) headers() http.Header {
	if resp.header == nil {
		resp.header = http.Header{}
	}
	return resp.header
}

func (resp response) write(w http.ResponseWriter) {
	status, data := resp.encode()
	resp.writeEncoded(w, status, data)
}

// encode returns the status and the JSON body to write, nil for none.
func (resp response) encode() (int, []byte) {
	if resp.body == nil {
		return resp.status, nil
	}
	data, err := json.Marshal(resp.body)
	if err != nil {
		// Wire structs always encode; this is a bug in the emulator.
		return http.StatusInternalServerError, []byte(`{"error":"internal","message":"encoding failed"}` + "\n")
	}
	return resp.status, append(data, '\n')
}

// writeEncoded writes what encode returned.
func (resp response) writeEncoded(w http.ResponseWriter, status int, data []byte) {
	for k, v := range resp.header {
		w.Header()[k] = v
	}
	if data != nil {
		w.Header().Set("Content-Type", "application/json")
	}
	w.WriteHeader(status)
	w.Write(data)
}

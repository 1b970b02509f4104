package escrow_test

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	escrow "github.com/escrowkit/escrow-go"
	"github.com/escrowkit/escrow-go/escrowtest"
)

// observed is one call as a recordingObserver saw it end, with the call whose context it
// was started in (0: none).
type observed struct {
	id, parent int
	call       escrow.Call
}

type callIDKey struct{}

// recordingObserver keeps every call that ended, and which call's context each started in.
type recordingObserver struct {
	mu    sync.Mutex
	next  int
	calls []observed
}

func (r *recordingObserver) CallStart(ctx context.Context, c *escrow.Call) context.Context {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.next++
	parent, _ := ctx.Value(callIDKey{}).([2]int)
	return context.WithValue(ctx, callIDKey{}, [2]int{r.next, parent[0]})
}

func (r *recordingObserver) CallEnd(ctx context.Context, c *escrow.Call) {
	ids := ctx.Value(callIDKey{}).([2]int)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, observed{id: ids[0], parent: ids[1], call: *c})
}

func (r *recordingObserver) all() []observed {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]observed(nil), r.calls...)
}

// only returns the one call observed, failing the test if there were more or none.
func (r *recordingObserver) only(t *testing.T) escrow.Call {
	t.Helper()
	all := r.all()
	if len(all) != 1 {
		t.Fatalf("observed %d calls, want 1: %+v", len(all), all)
	}
	return all[0].call
}

func observedClient(t *testing.T, srv *escrowtest.Server, a escrowtest.Account, opts ...escrow.Option) (*escrow.Client, *recordingObserver) {
	t.Helper()
	obs := new(recordingObserver)
	c, err := escrow.NewClient(a.Email, a.APIKey, append([]escrow.Option{escrow.WithEmulator(srv), escrow.WithObserver(obs)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return c, obs
}

// TestObserverSeesOneCallWithItsRouteAndStatus: a plain call is reported once, named by
// its route template, with the server, the status and one attempt.
func TestObserverSeesOneCallWithItsRouteAndStatus(t *testing.T) {
	srv := escrowtest.NewServer()
	t.Cleanup(srv.Close)
	c, obs := observedClient(t, srv, srv.AddCustomer("buyer@example.com"))
	before := time.Now()
	if _, err := c.Transactions.Get(t.Context(), 999); !errors.Is(err, escrow.ErrNotFound) {
		t.Fatalf("Get of a missing transaction: %v", err)
	}
	got := obs.only(t)
	if got.Method != "GET" || got.Route != "/transaction/{id}" || got.StatusCode != 404 || got.Attempts != 1 || len(got.Retries) != 0 {
		t.Errorf("observed %+v; want GET /transaction/{id}, 404, one attempt", got)
	}
	if got.ServerAddress != "127.0.0.1" || !strings.HasSuffix(srv.URL[:strings.LastIndex(srv.URL, "/2017")], fmt.Sprintf(":%d", got.ServerPort)) {
		t.Errorf("server %s:%d; want the emulator's %s", got.ServerAddress, got.ServerPort, srv.URL)
	}
	if got.ErrorType() != "404" || !errors.Is(got.Err, escrow.ErrNotFound) {
		t.Errorf("error %v typed %q; want the call's ErrNotFound, typed 404", got.Err, got.ErrorType())
	}
	if got.Start.Before(before) || got.Duration() <= 0 {
		t.Errorf("start %v, duration %v; want a start after %v and a positive duration", got.Start, got.Duration(), before)
	}
}

// failFirst fails the first request it carries without sending it, as a reset connection
// would, and passes the others on.
type failFirst struct {
	next http.RoundTripper
	n    atomic.Int32
}

func (f *failFirst) RoundTrip(r *http.Request) (*http.Response, error) {
	if f.n.Add(1) == 1 {
		return nil, errors.New("connection reset by peer")
	}
	return f.next.RoundTrip(r)
}

// TestObserverSeesRetriesWithTheirReasons: a GET that lost its connection once and a GET
// the server kept failing are each one call, with every retry and its reason; neither
// retry is a wait for the rate limit (RateLimitWaits holds those of a 429 or a hold only).
func TestObserverSeesRetriesWithTheirReasons(t *testing.T) {
	srv := escrowtest.NewServer()
	t.Cleanup(srv.Close)
	acct := srv.AddCustomer("buyer@example.com")

	obs := new(recordingObserver)
	hc := &http.Client{Transport: &failFirst{next: srv.Client().Transport}}
	c, err := escrow.NewClient(acct.Email, acct.APIKey, escrow.WithBaseURL(srv.URL), escrow.WithHTTPClient(hc),
		escrow.WithObserver(obs), escrow.WithMaxWait(time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Customers.Get(t.Context(), escrow.Me); err != nil {
		t.Fatalf("Get after one lost connection: %v", err)
	}
	got := obs.only(t)
	if got.Attempts != 2 || len(got.Retries) != 1 || got.Retries[0].Reason != escrow.RetryTransport || got.StatusCode != 200 || got.Err != nil {
		t.Errorf("observed %+v; want two attempts, one transport_error retry, 200", got)
	}
	if len(got.RateLimitWaits) != 0 {
		t.Errorf("a transport retry reported as rate-limit waits %+v", got.RateLimitWaits)
	}

	if err := srv.InjectFault(escrowtest.Fault{Endpoint: "GET /customer/{customer_id}", Status: 503}); err != nil {
		t.Fatal(err)
	}
	c, obs = observedClient(t, srv, acct, escrow.WithMaxRetries(2), escrow.WithMaxWait(time.Millisecond))
	if _, err := c.Customers.Get(t.Context(), escrow.Me); err == nil {
		t.Fatal("Get succeeded through a 503 on every attempt")
	}
	got = obs.only(t)
	if got.Attempts != 3 || len(got.Retries) != 2 || got.StatusCode != 503 || got.ErrorType() != "503" {
		t.Errorf("observed %+v; want three attempts, two retries, 503", got)
	}
	if len(got.RateLimitWaits) != 0 {
		t.Errorf("5xx retries reported as rate-limit waits %+v", got.RateLimitWaits)
	}
	for _, r := range got.Retries {
		if r.Reason != escrow.RetryServerError || r.StatusCode != 503 || r.At.IsZero() {
			t.Errorf("retry %+v; want server_error after a 503", r)
		}
	}
}

// emulatorTransport serves requests from an emulator in process, with no network, so that
// a synctest bubble sees every goroutine block durably and its fake clock runs the waits.
type emulatorTransport struct{ e *escrowtest.Emulator }

func (t emulatorTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	rec := httptest.NewRecorder()
	if r.Body == nil { // a server's request always has one
		r = r.Clone(r.Context())
		r.Body = http.NoBody
	}
	t.e.ServeHTTP(rec, r)
	return rec.Result(), nil
}

// TestObserverSeesRateLimitWaits: a call held back because the endpoint had no requests
// remaining, and a call that met a 429 and waited as told, each report the wait.
func TestObserverSeesRateLimitWaits(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := escrowtest.NewEmulator(escrowtest.WithRateLimit(1, 10*time.Second))
		defer e.Close()
		acct := e.AddCustomer("buyer@example.com")
		connect := func() (*escrow.Client, *recordingObserver) {
			obs := new(recordingObserver)
			c, err := escrow.NewClient(acct.Email, acct.APIKey, escrow.WithBaseURL("http://127.0.0.1/2017-09-01/"),
				escrow.WithHTTPClient(&http.Client{Transport: emulatorTransport{e}}), escrow.WithObserver(obs))
			if err != nil {
				t.Fatal(err)
			}
			return c, obs
		}
		c, obs := connect()
		ctx := t.Context()
		if _, err := c.Customers.Get(ctx, escrow.Me); err != nil {
			t.Fatal(err)
		}
		// The first answer said none remain for 10 s: the second call waits for the window.
		start := time.Now()
		if _, err := c.Customers.Get(ctx, escrow.Me); err != nil {
			t.Fatal(err)
		}
		all := obs.all()
		if len(all) != 2 {
			t.Fatalf("observed %d calls, want 2", len(all))
		}
		held := all[1].call
		if len(held.RateLimitWaits) != 1 || held.RateLimitWaits[0].Cause != escrow.RateLimitExhausted || held.RateLimitWaits[0].Wait <= 0 || held.Attempts != 1 {
			t.Errorf("held call %+v; want one wait for an exhausted endpoint, then one attempt", held)
		}
		if waited := time.Since(start); len(held.RateLimitWaits) == 1 && held.RateLimitWaits[0].Wait > waited {
			t.Errorf("reported a wait of %v; the call took %v", held.RateLimitWaits[0].Wait, waited)
		}

		// Another client of the account does not know the window is spent: it meets a 429.
		other, obs := connect()
		if _, err := c.Customers.Get(ctx, escrow.Me); err != nil { // spends the new window
			t.Fatal(err)
		}
		if _, err := other.Customers.Get(ctx, escrow.Me); err != nil {
			t.Fatal(err)
		}
		got := obs.only(t)
		if len(got.Retries) != 1 || got.Retries[0].Reason != escrow.RetryRateLimited || got.Retries[0].StatusCode != 429 {
			t.Errorf("retries %+v; want one after a 429", got.Retries)
		}
		if len(got.RateLimitWaits) != 1 || got.RateLimitWaits[0].Cause != escrow.RateLimitTooManyRequests || got.RateLimitWaits[0].Wait <= 0 {
			t.Errorf("waits %+v; want the wait the 429 asked for", got.RateLimitWaits)
		}
	})
}

// TestObserverSeesASettledWriteAsOneCall: an action whose answer was lost is one PATCH
// call, with the read that settled it; the read is a call of its own, started in the
// PATCH's context. Create by reference is observed the same way.
func TestObserverSeesASettledWriteAsOneCall(t *testing.T) {
	m := newMarket(t)
	partner, obs := observedClient(t, m.srv, m.srv.AddPartner("observed@example.com"))
	ctx := t.Context()
	if err := m.srv.InjectFault(escrowtest.Fault{Endpoint: "POST /transaction", Drop: escrowtest.DropAfter}); err != nil {
		t.Fatal(err)
	}
	tx, err := partner.Transactions.Create(ctx, brokeredSale("order-observed"))
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	m.srv.ClearFaults()
	checkSettled(t, obs.all(), "POST", "/transaction", "/transaction/reference/{reference}")

	buyer, obs := observedClient(t, m.srv, m.srv.AddCustomer("buyer@example.com"))
	if err := m.srv.InjectFault(escrowtest.Fault{Endpoint: "PATCH /transaction/{id}", Drop: escrowtest.DropAfter}); err != nil {
		t.Fatal(err)
	}
	if _, err := buyer.Transactions.Agree(ctx, tx.ID); err != nil {
		t.Fatalf("Agree: %v", err)
	}
	checkSettled(t, obs.all(), "PATCH", "/transaction/{id}", "/transaction/{id}")
}

// checkSettled checks that calls are one write (method, route) with one settling read
// that found it present, and the read's call, inside the write's.
func checkSettled(t *testing.T, calls []observed, method, route, readRoute string) {
	t.Helper()
	if len(calls) != 2 {
		t.Fatalf("observed %d calls, want the write and its read: %+v", len(calls), calls)
	}
	read, write := calls[0], calls[1] // the read ends first
	if w := write.call; w.Method != method || w.Route != route || w.Err != nil || w.Attempts != 1 ||
		len(w.SettlingReads) != 1 || w.SettlingReads[0].Outcome != escrow.SettlePresent {
		t.Errorf("write %+v; want %s %s, one attempt, settled by one read that found it", w, method, route)
	}
	if r := read.call; r.Method != "GET" || r.Route != readRoute || r.StatusCode != 200 || read.parent != write.id {
		t.Errorf("read %+v (inside call %d); want GET %s inside the write (%d)", r, read.parent, readRoute, write.id)
	}
}

// TestObserverRoutesOfDo: Do on a path of the route table is named by its row; on any
// other path, or with a method no row of that path has, it has no route template, since
// its shape may be of any cardinality.
func TestObserverRoutesOfDo(t *testing.T) {
	srv := escrowtest.NewServer()
	t.Cleanup(srv.Close)
	c, obs := observedClient(t, srv, srv.AddCustomer("buyer@example.com"))
	_ = c.Do(t.Context(), "get", "transaction/42", nil, nil)
	_ = c.Do(t.Context(), "GET", "no-such-endpoint/42/order-9", nil, nil)
	_ = c.Do(t.Context(), "DELETE", "transaction/42", nil, nil) // a path of the table, but no row with this method
	all := obs.all()
	if len(all) != 3 || all[0].call.Route != "/transaction/{id}" || all[1].call.Route != "" || all[1].call.Method != "GET" ||
		all[2].call.Route != "" || all[2].call.Method != "DELETE" {
		t.Errorf("observed %+v; want /transaction/{id}, then no route twice", all)
	}
}

// TestCallErrorType: each kind of failure has its low-cardinality name, the call's and its
// error's alike.
func TestCallErrorType(t *testing.T) {
	for _, tc := range []struct {
		call escrow.Call
		want string
	}{
		{escrow.Call{StatusCode: 200}, ""},
		{escrow.Call{StatusCode: 400, Err: &escrow.APIError{StatusCode: 400}}, "400"}, // the first status of the class
		{escrow.Call{StatusCode: 422, Err: &escrow.APIError{StatusCode: 422}}, "422"},
		{escrow.Call{StatusCode: 422, Err: &escrow.ValidationError{APIError: &escrow.APIError{StatusCode: 422}}}, "422"},
		{escrow.Call{StatusCode: 429, Err: &escrow.RateLimitError{Response: &escrow.APIError{StatusCode: 429}}}, "429"},
		{escrow.Call{Err: &escrow.RateLimitError{RetryAfter: time.Hour}}, "rate_limited"},
		{escrow.Call{Err: &escrow.TransportError{Err: context.DeadlineExceeded}}, "timeout"},
		{escrow.Call{Err: &escrow.TransportError{Err: context.Canceled}}, "canceled"},
		{escrow.Call{Err: &escrow.TransportError{Err: errors.New("reset")}}, "transport"},
		{escrow.Call{StatusCode: 500, Err: &escrow.OutcomeUnknownError{Err: errors.New("x")}}, "outcome_unknown"},
		{escrow.Call{StatusCode: 200, Err: &escrow.DecodeError{Err: errors.New("x")}}, "malformed_response"},
		{escrow.Call{Err: fmt.Errorf("%w: bad", escrow.ErrInvalidArgument)}, "invalid_argument"},
		{escrow.Call{Err: errors.New("something else")}, "_OTHER"},
	} {
		if got := tc.call.ErrorType(); got != tc.want || escrow.ErrorType(tc.call.Err) != got {
			t.Errorf("ErrorType of %v (status %d) = %q, want %q, as escrow.ErrorType says", tc.call.Err, tc.call.StatusCode, got, tc.want)
		}
	}
}

// TestObservedCallsHoldNoCredential: nothing an observer is handed, printed in full,
// shows the API key or the Authorization token, even for a call that failed.
func TestObservedCallsHoldNoCredential(t *testing.T) {
	srv := escrowtest.NewServer()
	t.Cleanup(srv.Close)
	acct := srv.AddCustomer("buyer@example.com")
	c, obs := observedClient(t, srv, acct, escrow.WithMaxRetries(1), escrow.WithMaxWait(time.Millisecond))
	_, _ = c.Customers.Get(t.Context(), escrow.Me)
	_, _ = c.Transactions.Get(t.Context(), 1)
	if err := srv.InjectFault(escrowtest.Fault{Endpoint: "*", Status: 500}); err != nil {
		t.Fatal(err)
	}
	_, _ = c.Customers.Get(t.Context(), escrow.Me)
	token := base64.StdEncoding.EncodeToString([]byte(acct.Email + ":" + acct.APIKey))
	for _, o := range obs.all() {
		s := fmt.Sprintf("%+v %#v %v", o.call, o.call, o.call.Err)
		if strings.Contains(s, acct.APIKey) || strings.Contains(s, token) {
			t.Errorf("an observed call shows a credential: %s", s)
		}
	}
}

// scripted answers each request with the next of its answers: a status, or (0) a lost
// connection.
type scripted struct {
	statuses []int
	n        atomic.Int32
}

func (s *scripted) RoundTrip(r *http.Request) (*http.Response, error) {
	i := int(s.n.Add(1)) - 1
	if i >= len(s.statuses) || s.statuses[i] == 0 {
		return nil, errors.New("connection reset by peer")
	}
	return &http.Response{StatusCode: s.statuses[i], Header: http.Header{"Content-Type": {"application/json"}},
		Body: io.NopCloser(strings.NewReader(`{"id": 1}`)), Request: r}, nil
}

// TestObservedCallEndsWithItsLastAttempt: a call whose last attempt lost its connection
// after a 503 reports no status and the error type "transport", not the 503 before it.
func TestObservedCallEndsWithItsLastAttempt(t *testing.T) {
	obs := new(recordingObserver)
	c, err := escrow.NewClient("me@example.com", "key-7f3a9c", escrow.WithBaseURL("https://api.example.com/2017-09-01/"),
		escrow.WithHTTPClient(&http.Client{Transport: &scripted{statuses: []int{503, 0}}}),
		escrow.WithObserver(obs), escrow.WithMaxRetries(1), escrow.WithMaxWait(time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Customers.Get(t.Context(), escrow.Me); err == nil {
		t.Fatal("Get succeeded through a 503 and a lost connection")
	}
	if got := obs.only(t); got.Attempts != 2 || got.StatusCode != 0 || got.ErrorType() != "transport" {
		t.Errorf("observed %d attempts, status %d, error type %q; want 2, 0, transport", got.Attempts, got.StatusCode, got.ErrorType())
	}
}

// TestObservedServerPortIsTheSchemesWithoutOne: a base URL without a port is served on its
// scheme's (80 for plain HTTP to a loopback host, 443 for HTTPS); one with a port, on it.
func TestObservedServerPortIsTheSchemesWithoutOne(t *testing.T) {
	for base, want := range map[string]int{
		"http://localhost/2017-09-01/":        80,
		"https://api.example.com/2017-09-01/": 443,
		"http://127.0.0.1:8443/2017-09-01/":   8443,
	} {
		obs := new(recordingObserver)
		c, err := escrow.NewClient("me@example.com", "key-7f3a9c", escrow.WithBaseURL(base),
			escrow.WithHTTPClient(&http.Client{Transport: &scripted{statuses: []int{200}}}), escrow.WithObserver(obs))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Customers.Get(t.Context(), escrow.Me); err != nil {
			t.Fatal(err)
		}
		if got := obs.only(t); got.ServerPort != want {
			t.Errorf("%s: server port %d, want %d", base, got.ServerPort, want)
		}
	}
}

// nilContextObserver returns no context from CallStart and notes what CallEnd got.
type nilContextObserver struct {
	mu     sync.Mutex
	ended  int
	nilCtx int
}

func (*nilContextObserver) CallStart(context.Context, *escrow.Call) context.Context { return nil }

func (o *nilContextObserver) CallEnd(ctx context.Context, _ *escrow.Call) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.ended++
	if ctx == nil {
		o.nilCtx++
	}
}

// TestObserverReturningNoContextBreaksNothing: an Observer whose CallStart returns nil
// (a misbehaving exporter) leaves the call as it would be, sent with the caller's
// context, and CallEnd gets that context, not nil.
func TestObserverReturningNoContextBreaksNothing(t *testing.T) {
	srv := escrowtest.NewServer()
	t.Cleanup(srv.Close)
	a := srv.AddCustomer("buyer@example.com")
	obs := new(nilContextObserver)
	c, err := escrow.NewClient(a.Email, a.APIKey, escrow.WithEmulator(srv), escrow.WithObserver(obs))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Customers.Get(t.Context(), escrow.Me); err != nil {
		t.Fatalf("Get with an observer returning no context: %v", err)
	}
	obs.mu.Lock()
	defer obs.mu.Unlock()
	if obs.ended != 1 || obs.nilCtx != 0 {
		t.Errorf("CallEnd called %d times, %d with a nil context; want once, with the caller's", obs.ended, obs.nilCtx)
	}
}

// TestCallDurationIsZeroUntilItEnds: a Call read in CallStart has no duration yet, not
// the time since year 1; an ended one lasted from Start to End.
func TestCallDurationIsZeroUntilItEnds(t *testing.T) {
	start := time.Now()
	c := escrow.Call{Start: start}
	if d := c.Duration(); d != 0 {
		t.Errorf("Duration before the end = %v, want 0", d)
	}
	c.End = start.Add(1500 * time.Millisecond)
	if d := c.Duration(); d != 1500*time.Millisecond {
		t.Errorf("Duration = %v, want 1.5s", d)
	}
}

// emulatorSale starts an emulator with a seller, a buyer and a transaction between them,
// created by a client without an observer.
func emulatorSale(t *testing.T) (srv *escrowtest.Server, seller, buyer escrowtest.Account, tx *escrow.Transaction) {
	t.Helper()
	srv = escrowtest.NewServer()
	t.Cleanup(srv.Close)
	seller, buyer = srv.AddCustomer("seller@example.com"), srv.AddCustomer("buyer@example.com")
	plain, err := escrow.NewClient(seller.Email, seller.APIKey, escrow.WithEmulator(srv))
	if err != nil {
		t.Fatal(err)
	}
	if tx, err = plain.Transactions.Create(t.Context(), domainSale(buyer.Email, seller.Email)); err != nil {
		t.Fatal(err)
	}
	return srv, seller, buyer, tx
}

// panicking is an AttemptObserver that panics in the hook named, with a value that holds
// the API key, as a careless observer might.
type panicking struct {
	hook, key string
	ended     atomic.Int32
}

func (p *panicking) panicIn(hook string) {
	if p.hook == hook {
		panic("observer failed with " + p.key)
	}
}

func (p *panicking) CallStart(ctx context.Context, _ *escrow.Call) context.Context {
	p.panicIn("CallStart")
	return ctx
}

func (p *panicking) CallEnd(context.Context, *escrow.Call) {
	p.ended.Add(1)
	p.panicIn("CallEnd")
}

func (p *panicking) AttemptStart(ctx context.Context, _ *escrow.Attempt) context.Context {
	p.panicIn("AttemptStart")
	return ctx
}

func (p *panicking) AttemptEnd(context.Context, *escrow.Attempt) { p.panicIn("AttemptEnd") }

// TestPanickingObserverLeavesTheCallItsResult: whichever hook panics, no panic escapes the
// call, each call returns its own result (a transaction, a 404), the other hooks still run,
// and the client's logger reports the first panic at Error level, once, the later ones at
// Debug, without the key the panic's value held.
func TestPanickingObserverLeavesTheCallItsResult(t *testing.T) {
	srv, seller, _, tx := emulatorSale(t)
	for _, hook := range []string{"CallStart", "CallEnd", "AttemptStart", "AttemptEnd"} {
		t.Run(hook, func(t *testing.T) {
			obs := &panicking{hook: hook, key: seller.APIKey}
			var log strings.Builder
			logger := slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelDebug}))
			c, err := escrow.NewClient(seller.Email, seller.APIKey, escrow.WithEmulator(srv), escrow.WithObserver(obs), escrow.WithLogger(logger))
			if err != nil {
				t.Fatal(err)
			}
			got, err := c.Transactions.Get(t.Context(), tx.ID)
			if err != nil || got.ID != tx.ID {
				t.Errorf("Get with an observer panicking in %s: %v, %v; want the transaction", hook, got, err)
			}
			if _, err := c.Transactions.Get(t.Context(), tx.ID+1000); !errors.Is(err, escrow.ErrNotFound) {
				t.Errorf("Get of a missing transaction: %v; want its own ErrNotFound", err)
			}
			if n := obs.ended.Load(); n != 2 {
				t.Errorf("CallEnd ran %d times, want 2: a panic in one hook must not skip the others", n)
			}
			text := log.String()
			if n := strings.Count(text, "level=ERROR"); n != 1 || !strings.Contains(text, "hook="+hook) {
				t.Errorf("log has %d Error lines (want 1, naming %s):\n%s", n, hook, text)
			}
			if strings.Count(text, "the observer panicked") != 2 {
				t.Errorf("log does not report the second panic (at Debug):\n%s", text)
			}
			if strings.Contains(text, seller.APIKey) {
				t.Errorf("log shows the API key:\n%s", text)
			}
		})
	}
}

// attempts is an AttemptObserver that keeps every request's Attempt as it ended, and
// whether each was inside its call's context.
type attempts struct {
	recordingObserver
	mu    sync.Mutex
	ended []escrow.Attempt
	inner []bool // AttemptEnd got the context AttemptStart returned, inside the call's
}

type attemptKey struct{}

func (a *attempts) AttemptStart(ctx context.Context, at *escrow.Attempt) context.Context {
	_, inCall := ctx.Value(callIDKey{}).([2]int)
	return context.WithValue(ctx, attemptKey{}, inCall)
}

func (a *attempts) AttemptEnd(ctx context.Context, at *escrow.Attempt) {
	inCall, _ := ctx.Value(attemptKey{}).(bool)
	a.mu.Lock()
	defer a.mu.Unlock()
	a.ended = append(a.ended, *at)
	a.inner = append(a.inner, inCall)
}

func (a *attempts) all() ([]escrow.Attempt, []bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]escrow.Attempt(nil), a.ended...), append([]bool(nil), a.inner...)
}

// TestAttemptObserverSeesEachRequest: a GET answered 503 twice then 200 is one call and
// three requests, with resend counts 0, 1, 2 and their own statuses and error types, each
// within the call and sent with the call's context; a redirect followed is a request of
// its own.
func TestAttemptObserverSeesEachRequest(t *testing.T) {
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/2017-09-01/customer/me" && n.Add(1) <= 2:
			w.WriteHeader(http.StatusServiceUnavailable)
		case r.URL.Path == "/2017-09-01/moved":
			http.Redirect(w, r, "/2017-09-01/customer/me", http.StatusFound)
		default:
			fmt.Fprint(w, `{"id": 7, "email": "market@example.com"}`)
		}
	}))
	t.Cleanup(srv.Close)
	obs := new(attempts)
	c, err := escrow.NewClient("market@example.com", "kQ9zX4vbLm0pT7", escrow.WithBaseURL(srv.URL+"/2017-09-01/"),
		escrow.WithObserver(obs), escrow.WithMaxWait(time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Customers.Get(t.Context(), escrow.Me); err != nil {
		t.Fatal(err)
	}
	call := obs.only(t)
	got, inner := obs.all()
	if len(got) != 3 || call.Attempts != 3 {
		t.Fatalf("%d requests seen, call attempts %d; want 3 and 3", len(got), call.Attempts)
	}
	for i, a := range got {
		wantStatus, wantType := 503, "503"
		if i == 2 {
			wantStatus, wantType = 200, ""
		}
		if a.ResendCount != i || a.StatusCode != wantStatus || a.ErrorType() != wantType || a.Method != "GET" ||
			a.URL != srv.URL+"/2017-09-01/customer/me" || a.Call == nil || a.Call.Route != "/customer/{customer_id}" {
			t.Errorf("request %d: %+v, error type %q; want resend count %d, %d %q, its URL and call", i, a, a.ErrorType(), i, wantStatus, wantType)
		}
		if a.Start.Before(call.Start) || a.End.After(call.End) || a.Duration() <= 0 || !inner[i] {
			t.Errorf("request %d [%v, %v] (in the call's context: %v) is not within its call [%v, %v]", i, a.Start, a.End, inner[i], call.Start, call.End)
		}
	}

	obs = new(attempts)
	c, err = escrow.NewClient("market@example.com", "kQ9zX4vbLm0pT7", escrow.WithBaseURL(srv.URL+"/2017-09-01/"), escrow.WithObserver(obs))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Do(t.Context(), "GET", "moved", nil, nil); err != nil {
		t.Fatal(err)
	}
	got, _ = obs.all()
	if len(got) != 2 || got[0].StatusCode != 302 || got[0].ErrorType() != "" || got[1].ResendCount != 1 || got[1].URL != srv.URL+"/2017-09-01/customer/me" {
		t.Errorf("requests of a redirected call: %+v; want the 302, then the redirect's request, resend count 1", got)
	}
}

// TestAttemptURLHoldsNoCredential: the URL an Attempt shows has the account's e-mail,
// key and token removed, in any case or escaping, whether the caller's Client.Do path
// held them or a server's redirect did.
func TestAttemptURLHoldsNoCredential(t *testing.T) {
	const email, key = "Market@Example.com", "kQ9zX4vbLm0pT7"
	token := base64.StdEncoding.EncodeToString([]byte(email + ":" + key))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/go") {
			http.Redirect(w, r, "/2017-09-01/to/market%252540example.COM?who=MARKET%40EXAMPLE.COM&k="+key+"&t="+url.QueryEscape(token), http.StatusFound)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(srv.Close)
	obs := new(attempts)
	c, err := escrow.NewClient(email, key, escrow.WithBaseURL(srv.URL+"/2017-09-01/"), escrow.WithObserver(obs))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Do(t.Context(), "GET", "customer/market@example.com/go?key="+key, nil, nil); err != nil {
		t.Fatal(err)
	}
	got, _ := obs.all()
	if len(got) != 2 {
		t.Fatalf("%d requests seen, want 2 (the redirect followed)", len(got))
	}
	for _, a := range got {
		if !strings.HasPrefix(a.URL, srv.URL+"/2017-09-01/") || !strings.Contains(a.URL, "REDACTED") {
			t.Errorf("URL %q: want the request's URL with what was removed marked", a.URL)
		}
		lower := strings.ToLower(a.URL)
		for range 3 {
			lower, _ = url.PathUnescape(lower)
		}
		for _, secret := range []string{"market@example.com", strings.ToLower(key), strings.ToLower(token)} {
			if strings.Contains(lower, secret) {
				t.Errorf("URL %q shows %q", a.URL, secret)
			}
		}
	}
}

// TestAttemptResendCountSpansASettledWrite: a write sent again after its reads found it
// not performed counts on from the first send (0, then 1), while each read, a call of its
// own, starts at 0.
func TestAttemptResendCountSpansASettledWrite(t *testing.T) {
	srv, _, buyer, tx := emulatorSale(t)
	if err := srv.InjectFault(escrowtest.Fault{Endpoint: "PATCH /transaction/{id}", Drop: escrowtest.DropBefore}); err != nil {
		t.Fatal(err)
	}
	obs := new(attempts)
	c, err := escrow.NewClient(buyer.Email, buyer.APIKey, escrow.WithEmulator(srv), escrow.WithObserver(obs),
		escrow.WithMaxRetries(1), escrow.WithMaxWait(time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Transactions.Agree(t.Context(), tx.ID); err == nil {
		t.Fatal("Agree succeeded with every PATCH dropped")
	}
	got, _ := obs.all()
	var writes, reads []int
	for _, a := range got {
		if a.Method == "PATCH" {
			writes = append(writes, a.ResendCount)
		} else {
			reads = append(reads, a.ResendCount)
		}
	}
	if fmt.Sprint(writes) != "[0 1]" || fmt.Sprint(reads) != "[0 0]" {
		t.Errorf("resend counts: writes %v, reads %v; want [0 1] and [0 0]", writes, reads)
	}
}

// TestAttemptErrorHoldsNoCredential: a transport failure that quotes the server's answer
// (a status line echoing the key) reaches an AttemptObserver with the key scrubbed, and
// is typed "transport".
func TestAttemptErrorHoldsNoCredential(t *testing.T) {
	const key = "kQ9zX4vbLm0pT7"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		conn, buf, err := w.(http.Hijacker).Hijack()
		if err != nil {
			t.Error(err)
			return
		}
		defer conn.Close()
		fmt.Fprintf(buf, "HTTP/1.1 %s OK\r\n\r\n", key)
		buf.Flush()
	}))
	t.Cleanup(srv.Close)
	obs := new(attempts)
	c, err := escrow.NewClient("market@example.com", key, escrow.WithBaseURL(srv.URL+"/2017-09-01/"), escrow.WithObserver(obs), escrow.WithMaxRetries(0))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Customers.Get(t.Context(), escrow.Me); err == nil {
		t.Fatal("Get succeeded on a malformed status line")
	}
	got, _ := obs.all()
	if len(got) != 1 || got[0].Err == nil || got[0].ErrorType() != "transport" || got[0].StatusCode != 0 {
		t.Fatalf("requests %+v; want one, failed, typed transport", got)
	}
	if s := fmt.Sprintf("%v %+v", got[0].Err, got[0]); strings.Contains(s, key) || !strings.Contains(s, "REDACTED") {
		t.Errorf("the attempt's error %q shows the key, or not where it was", s)
	}
}

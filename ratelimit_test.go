package escrow

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/jarcoal/httpmock"
)

// transportFaults are the network failures the retry table distinguishes.
var transportFaults = []struct {
	name      string
	err       error
	neverSent bool // the request provably did not reach the server
	permanent bool // retrying cannot help
}{
	{"dns", &net.DNSError{Err: "no such host", Name: "api.test", IsNotFound: true}, true, false},
	{"dial refused", &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}, true, false},
	{"tls handshake", tls.RecordHeaderError{Msg: "first record does not look like a TLS handshake"}, true, false},
	{"tls handshake timeout", errors.New("net/http: TLS handshake timeout"), true, false},
	{"certificate", &tls.CertificateVerificationError{Err: x509.UnknownAuthorityError{}}, true, true},
	{"reset after send", &net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET}, false, false},
	{"eof after send", io.ErrUnexpectedEOF, false, false},
	{"read timeout", &net.OpError{Op: "read", Net: "tcp", Err: errTimeout{}}, false, false},
}

type errTimeout struct{}

func (errTimeout) Error() string   { return "i/o timeout" }
func (errTimeout) Timeout() bool   { return true }
func (errTimeout) Temporary() bool { return true }

// doMethod sends one call with the given method through the client's pipeline.
func doMethod(ctx context.Context, c *Client, method string) error {
	k := call{route: Route{Method: method, Template: "/transaction/{id}"}, params: []any{int64(9)}}
	if method == http.MethodPost || method == http.MethodPatch {
		k.body = map[string]string{"action": "ship"}
	}
	return c.send(ctx, k)
}

func TestRetryTable(t *testing.T) {
	const maxRetries = 2
	type outcome struct {
		name    string
		respond httpmock.Responder
		retry   map[string]bool // by method
	}
	both := map[string]bool{"GET": true, "DELETE": true, "POST": true, "PATCH": true}
	readsOnly := map[string]bool{"GET": true, "DELETE": true}
	none := map[string]bool{}
	outcomes := []outcome{
		{"429", respond(429, `{}`), both},
		{"500", respond(500, `{}`), readsOnly},
		{"502", respond(502, `{}`), readsOnly},
		{"503", respond(503, `{}`), readsOnly},
		{"504", respond(504, `{}`), readsOnly},
		{"501", respond(501, `{}`), none},
		{"400", respond(400, `{}`), none},
		{"401", respond(401, `{}`), none},
		{"403", respond(403, `{}`), none},
		{"404", respond(404, `{}`), none},
		{"422", respond(422, `{}`), none},
	}
	for _, f := range transportFaults {
		retry := readsOnly
		switch {
		case f.permanent:
			retry = none
		case f.neverSent:
			retry = both
		}
		outcomes = append(outcomes, outcome{"transport " + f.name, fail(f.err), retry})
	}
	for _, o := range outcomes {
		for _, method := range []string{"GET", "DELETE", "POST", "PATCH"} {
			t.Run(o.name+"/"+method, func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					c, mt := setup(t, WithMaxRetries(maxRetries))
					var rec recorder
					mt.RegisterResponder(method, testBase+"transaction/9", rec.then(o.respond))
					err := doMethod(context.Background(), c, method)
					if err == nil {
						t.Fatal("no error")
					}
					want := 1
					if o.retry[method] {
						want = 1 + maxRetries
					}
					if got := rec.count(); got != want {
						t.Errorf("%d attempts, want %d (err: %v)", got, want, err)
					}
					for i, r := range rec.all() { // every attempt resends the same bytes
						if (method == "POST" || method == "PATCH") && string(r.Body) != `{"action":"ship"}` {
							t.Errorf("attempt %d sent body %q", i, r.Body)
						}
					}
				})
			})
		}
	}
}

func TestTransportErrorSaysWhetherTheOutcomeIsUnknown(t *testing.T) {
	for _, f := range transportFaults {
		t.Run(f.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				c, mt := setup(t, WithMaxRetries(1))
				mt.RegisterResponder("POST", testBase+"transaction/9", fail(f.err))
				err := doMethod(context.Background(), c, "POST")
				var te *TransportError
				if !errors.As(err, &te) {
					t.Fatalf("error %T %v is not a *TransportError", err, err)
				}
				if te.OutcomeUnknown == f.neverSent {
					t.Errorf("OutcomeUnknown = %v for %s", te.OutcomeUnknown, f.name)
				}
				if !errors.Is(err, f.err) && errors.Unwrap(f.err) == nil {
					t.Errorf("the cause %v is not reachable through errors.Is", f.err)
				}
			})
		})
	}
}

func TestBackoffIsCappedFullJitter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, mt := setup(t, WithMaxRetries(5), WithMaxWait(time.Second))
		var draws []time.Duration
		c.jitter = func(d time.Duration) time.Duration { draws = append(draws, d); return d }
		mt.RegisterResponder("GET", testBase+"transaction/9", respond(503, `{}`))
		start := time.Now()
		_ = doMethod(context.Background(), c, "GET")
		// Ceilings double from 250ms and stop at the 1s cap.
		want := []time.Duration{250 * time.Millisecond, 500 * time.Millisecond, time.Second, time.Second, time.Second}
		if fmt.Sprint(draws) != fmt.Sprint(want) {
			t.Errorf("jitter ceilings %v, want %v", draws, want)
		}
		if elapsed := time.Since(start); elapsed != 3750*time.Millisecond {
			t.Errorf("waited %v in all", elapsed)
		}
	})
}

func TestFullJitterStaysWithinTheCeiling(t *testing.T) {
	c, err := NewClient(testEmail, testKey)
	if err != nil {
		t.Fatal(err)
	}
	for attempt := range 40 {
		ceiling := min(c.baseWait<<min(attempt, 30), c.maxWait)
		if d := c.backoffStep(attempt); d < 0 || d > ceiling || d > DefaultMaxWait {
			t.Fatalf("attempt %d drew %v, ceiling %v", attempt, d, ceiling)
		}
	}
}

func TestServerHintsAreHonouredAndClamped(t *testing.T) {
	tests := []struct {
		name     string
		first    httpmock.Responder
		wantWait time.Duration
	}{
		{"Retry-After seconds", respond(429, `{}`, "Retry-After", "3"), 3 * time.Second},
		{"RateLimit-Reset", respond(429, `{}`, "RateLimit-Reset", "5", "RateLimit-Remaining", "0"), 5 * time.Second},
		{"Retry-After wins over RateLimit-Reset", respond(429, `{}`, "Retry-After", "2", "RateLimit-Reset", "9"), 2 * time.Second},
		{"503 Retry-After clamped to the cap", respond(503, `{}`, "Retry-After", "3600"), 10 * time.Second},
		{"no hint: backoff", respond(429, `{}`), 250 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				c, mt := setup(t, WithMaxWait(10*time.Second))
				mt.RegisterResponder("GET", testBase+"transaction/9", sequence(tt.first, respond(200, `{"id": 9}`)))
				start := time.Now()
				tx, err := c.Transactions.Get(context.Background(), 9)
				if err != nil || tx.ID != 9 {
					t.Fatalf("Get = %v, %v", tx, err)
				}
				if elapsed := time.Since(start); elapsed != tt.wantWait {
					t.Errorf("waited %v, want %v", elapsed, tt.wantWait)
				}
			})
		})
	}
}

func TestRetryAfterAsHTTPDate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, mt := setup(t)
		date := time.Now().Add(4 * time.Second).UTC().Format(http.TimeFormat)
		mt.RegisterResponder("GET", testBase+"transaction/9", sequence(respond(429, `{}`, "Retry-After", date), respond(200, `{"id": 9}`)))
		start := time.Now()
		if _, err := c.Transactions.Get(context.Background(), 9); err != nil {
			t.Fatal(err)
		}
		if elapsed := time.Since(start); elapsed < 3*time.Second || elapsed > 4*time.Second {
			t.Errorf("waited %v for a date 4s ahead", elapsed)
		}
	})
}

func TestHintBeyondTheCapFailsAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, mt := setup(t, WithMaxWait(30*time.Second))
		var rec recorder
		mt.RegisterResponder("POST", testBase+"transaction", rec.then(respond(429, `{"error": "slow down"}`, "Retry-After", "120")))
		start := time.Now()
		_, err := c.Transactions.Create(context.Background(), &CreateTransactionRequest{Currency: USD})
		var rl *RateLimitError
		if !errors.As(err, &rl) {
			t.Fatalf("error %T %v is not a *RateLimitError", err, err)
		}
		if time.Since(start) != 0 || rec.count() != 1 {
			t.Errorf("slept %v over %d attempts; want an immediate failure", time.Since(start), rec.count())
		}
		if rl.RetryAfter != 120*time.Second || rl.Response == nil || rl.Response.Message != "slow down" || rl.Endpoint != "POST /transaction" {
			t.Errorf("RateLimitError = %+v", rl)
		}
		if !errors.Is(err, ErrRateLimited) {
			t.Error("errors.Is(err, ErrRateLimited) = false")
		}
		var apiErr *APIError
		if !errors.As(err, &apiErr) || apiErr.StatusCode != 429 {
			t.Error("the 429 answer is not reachable as an *APIError")
		}
	})
}

func TestRateLimitErrorWhenRetriesRunOut(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, mt := setup(t, WithMaxRetries(2))
		var rec recorder
		mt.RegisterResponder("GET", testBase+"transaction/9", rec.then(respond(429, `{"message": "limit"}`, "Retry-After", "1")))
		_, err := c.Transactions.Get(context.Background(), 9)
		var rl *RateLimitError
		if !errors.As(err, &rl) || rl.Response == nil || rl.RetryAfter != time.Second {
			t.Fatalf("err = %#v", err)
		}
		if rec.count() != 3 {
			t.Errorf("%d attempts, want 3", rec.count())
		}
	})
}

func TestCancellationDuringAWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, mt := setup(t)
		var rec recorder
		mt.RegisterResponder("POST", testBase+"transaction", rec.then(respond(429, `{}`, "Retry-After", "20")))
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(time.Second, cancel)
		start := time.Now()
		_, err := c.Transactions.Create(ctx, &CreateTransactionRequest{Currency: USD})
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v, want context.Canceled", err)
		}
		if elapsed := time.Since(start); elapsed != time.Second {
			t.Errorf("returned after %v, want 1s (when cancelled)", elapsed)
		}
		var te *TransportError
		if !errors.As(err, &te) || te.OutcomeUnknown {
			t.Errorf("after a 429 the outcome is known (not performed): %#v", err)
		}
		if rec.count() != 1 {
			t.Errorf("%d attempts", rec.count())
		}
	})
}

func TestDeadlineBoundsTheWholeCall(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, mt := setup(t, WithMaxRetries(100))
		mt.RegisterResponder("GET", testBase+"transaction/9", respond(503, `{}`))
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		start := time.Now()
		_, err := c.Transactions.Get(ctx, 9)
		if !errors.Is(err, context.DeadlineExceeded) || time.Since(start) > 5*time.Second {
			t.Errorf("err = %v after %v", err, time.Since(start))
		}
	})
}

func TestExhaustedEndpointHoldsCallsUntilReset(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, mt := setup(t)
		var rec recorder
		mt.RegisterResponder("GET", testBase+"transaction/9", rec.then(respond(200, `{"id": 9}`, "RateLimit-Remaining", "0", "RateLimit-Reset", "7")))
		mt.RegisterResponder("GET", testBase+"customer/me", respond(200, `{"id": 1}`, "RateLimit-Remaining", "99"))
		ctx := context.Background()
		if _, err := c.Transactions.Get(ctx, 9); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		if _, err := c.Customers.Get(ctx, Me); err != nil || time.Since(start) != 0 {
			t.Fatalf("another endpoint was held back %v (err %v)", time.Since(start), err)
		}
		if _, err := c.Transactions.Get(ctx, 9); err != nil {
			t.Fatal(err)
		}
		if elapsed := time.Since(start); elapsed != 7*time.Second {
			t.Errorf("second call to the exhausted endpoint went after %v, want 7s", elapsed)
		}
		if rec.count() != 2 {
			t.Errorf("%d requests", rec.count())
		}
	})
}

func TestExhaustedEndpointBeyondTheCapFailsWithoutSending(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, mt := setup(t, WithMaxWait(30*time.Second))
		var rec recorder
		mt.RegisterResponder("GET", testBase+"transaction/9", rec.then(respond(200, `{"id": 9}`, "RateLimit-Remaining", "0", "RateLimit-Reset", "600")))
		if _, err := c.Transactions.Get(context.Background(), 9); err != nil {
			t.Fatal(err)
		}
		_, err := c.Transactions.Get(context.Background(), 9)
		var rl *RateLimitError
		if !errors.As(err, &rl) || rl.Response != nil || rl.RetryAfter != 600*time.Second || !errors.Is(err, ErrRateLimited) {
			t.Fatalf("err = %#v", err)
		}
		if rec.count() != 1 {
			t.Errorf("%d requests; the held call must not be sent", rec.count())
		}
	})
}

func TestHeldCallIsCancellable(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, mt := setup(t)
		mt.RegisterResponder("GET", testBase+"transaction/9", respond(200, `{"id": 9}`, "RateLimit-Remaining", "0", "RateLimit-Reset", "20"))
		if _, err := c.Transactions.Get(context.Background(), 9); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_, err := c.Transactions.Get(ctx, 9)
		var te *TransportError
		if !errors.Is(err, context.DeadlineExceeded) || !errors.As(err, &te) || te.OutcomeUnknown || te.Attempts != 0 {
			t.Fatalf("err = %#v", err)
		}
	})
}

// windowServer answers like an API with a fixed window of `limit` requests, telling the
// client what remains and when the window resets.
type windowServer struct {
	mu              sync.Mutex
	limit           int
	window          time.Duration
	origin, start   time.Time // when the test began; when the current window began
	used            int
	ok, refused     int
	sendResetHeader bool
}

func (s *windowServer) respond(req *http.Request) (*http.Response, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now()
	if now.Sub(s.start) >= s.window {
		s.start, s.used = now.Truncate(s.window), 0
	}
	reset := strconv.Itoa(int((s.window - now.Sub(s.start) + time.Second - 1) / time.Second))
	status, body := 200, `{"id": 9}`
	if s.used >= s.limit {
		status, body = 429, `{}`
		s.refused++
	} else {
		s.used++
		s.ok++
	}
	r, _ := respond(status, body, "RateLimit-Limit", strconv.Itoa(s.limit), "RateLimit-Remaining", strconv.Itoa(s.limit-s.used))(req)
	if s.sendResetHeader {
		r.Header.Set("RateLimit-Reset", reset)
	}
	return r, nil
}

func TestConcurrentCallersShareTheAllowance(t *testing.T) {
	for _, withReset := range []bool{true, false} {
		t.Run(fmt.Sprintf("reset header %v", withReset), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				c, mt := setup(t, WithMaxRetries(20))
				real := rngJitter()
				c.jitter = real
				srv := &windowServer{limit: 5, window: 10 * time.Second, origin: time.Now(), start: time.Now(), sendResetHeader: withReset}
				mt.RegisterResponder("GET", testBase+"transaction/9", srv.respond)
				// One call first: until an answer arrives nothing is known of the allowance,
				// and a concurrent start may overshoot it.
				if _, err := c.Transactions.Get(context.Background(), 9); err != nil {
					t.Fatal(err)
				}
				var wg sync.WaitGroup
				errs := make(chan error, 40)
				for range 39 {
					wg.Go(func() {
						if _, err := c.Transactions.Get(context.Background(), 9); err != nil {
							errs <- err
						}
					})
				}
				wg.Wait()
				close(errs)
				for err := range errs {
					t.Errorf("call failed: %v", err)
				}
				if srv.ok != 40 {
					t.Errorf("%d calls succeeded", srv.ok)
				}
				// With the reset time known, the callers wait for it and spend nothing on
				// 429s. Without it, one caller at a time probes, at doubling intervals: a
				// handful of refusals per 10s window, not one per waiting caller.
				windows := int(time.Since(srv.origin)/srv.window) + 1
				if withReset && srv.refused != 0 {
					t.Errorf("%d requests refused with 429 despite a known reset", srv.refused)
				}
				if !withReset && srv.refused > 6*windows {
					t.Errorf("%d requests refused over %d windows", srv.refused, windows)
				}
				t.Logf("ok=%d refused=%d windows=%d", srv.ok, srv.refused, windows)
			})
		})
	}
}

// rngJitter is the production jitter, for tests that need realistic spreading.
func rngJitter() func(time.Duration) time.Duration {
	c, _ := NewClient(testEmail, testKey)
	return c.jitter
}

func TestHeaderSeconds(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	tests := []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"5", 5 * time.Second, true},
		{" 0.5 ", 500 * time.Millisecond, true},
		{"1700000010", 10 * time.Second, true}, // a Unix time
		{"1699999990", 0, true},                // a Unix time in the past
		{"999999999", 365 * 24 * time.Hour, true},
		{"1700000010500", 10500 * time.Millisecond, true}, // epoch milliseconds
		{"1000000000000", 0, true},                        // epoch milliseconds, 2001
		{"100000000001", 0, true},                         // just past 10¹¹: milliseconds, 1973
		{"99999999999", 365 * 24 * time.Hour, true},       // just under: seconds, the year 5138
		{"1e300", 365 * 24 * time.Hour, true},
		{"+Inf", 365 * 24 * time.Hour, true},
		{"-1", 0, false},
		{"NaN", 0, false},
		{"soon", 0, false},
		{"", 0, false},
	}
	for _, tt := range tests {
		got, ok := headerSeconds(tt.in, now)
		if got != tt.want || ok != tt.ok {
			t.Errorf("headerSeconds(%q) = %v, %v; want %v, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}

// answer is a response carrying rate-limit headers; "" leaves a header out.
func answer(status int, limit, remaining, reset string) *http.Response {
	h := http.Header{}
	for k, v := range map[string]string{"RateLimit-Limit": limit, "RateLimit-Remaining": remaining, "RateLimit-Reset": reset} {
		if v != "" {
			h.Set(k, v)
		}
	}
	return &http.Response{StatusCode: status, Header: h}
}

// takeAll counts the calls the client's memory lets out on endpoint at now before it refuses
// one.
func takeAll(l *endpointLimits, endpoint string, now time.Time) int {
	n := 0
	for {
		if _, _, ok := l.take(endpoint, now); !ok {
			return n
		}
		n++
	}
}

// TestAllowanceSurvivesAnswersOutOfOrder: alone on an account, a client that sent ten calls
// at once spends exactly the limit in the window, whatever order the answers come back in;
// subtracting the calls in flight from each answer would leave requests unspent.
func TestAllowanceSurvivesAnswersOutOfOrder(t *testing.T) {
	now := time.Unix(1_000_000, 0)
	l := newEndpointLimits(time.Millisecond, time.Minute)
	const ep = "GET /transaction/{id}"
	first, _, _ := l.take(ep, now)
	l.observe(ep, answer(200, "20", "19", "1"), first, now)
	var slots []slot
	for range 10 {
		sl, _, ok := l.take(ep, now)
		if !ok {
			t.Fatal("refused within the allowance")
		}
		slots = append(slots, sl)
	}
	// The server counted them 18 down to 9; the answers arrive last-counted first.
	for i := range slots {
		l.observe(ep, answer(200, "20", strconv.Itoa(9+i), "1"), slots[i], now)
	}
	taken := takeAll(l, ep, now)
	if taken != 9 {
		t.Errorf("%d more calls allowed in the window, want 9 (20 less the 11 sent)", taken)
	}
}

// TestEarliestResetBoundsTheWindow: RateLimit-Reset is rounded up to whole seconds, so a
// later answer saying "1" must not push the window's end past what an earlier one said.
func TestEarliestResetBoundsTheWindow(t *testing.T) {
	start := time.Unix(1_000_000, 0)
	l := newEndpointLimits(time.Millisecond, time.Minute)
	const ep = "GET /customer/{id}"
	a, _, _ := l.take(ep, start)
	b, _, _ := l.take(ep, start)
	l.observe(ep, answer(200, "2", "1", "1"), a, start)
	l.observe(ep, answer(200, "2", "0", "1"), b, start.Add(900*time.Millisecond))
	if _, wait, ok := l.take(ep, start.Add(900*time.Millisecond)); ok || wait != 100*time.Millisecond {
		t.Errorf("take = %v, %v; want a wait of 100ms for the first answer's reset", ok, wait)
	}
}

// TestBare429DoesNotSerializeTheEndpointForever: a 429 without headers makes calls probe
// one at a time, and the first success without headers ends that.
func TestBare429DoesNotSerializeTheEndpointForever(t *testing.T) {
	now := time.Unix(1_000_000, 0)
	l := newEndpointLimits(time.Millisecond, time.Minute)
	const ep = "GET /transaction"
	sl, _, _ := l.take(ep, now)
	l.observe(ep, answer(429, "", "", ""), sl, now)
	probe, _, ok := l.take(ep, now.Add(time.Second))
	if !ok || !probe.probe {
		t.Fatalf("after a bare 429: take = %+v, %v; want a probe", probe, ok)
	}
	if _, _, ok := l.take(ep, now.Add(time.Second)); ok {
		t.Fatal("a second call went out while the probe was in flight")
	}
	l.observe(ep, answer(200, "", "", ""), probe, now.Add(time.Second))
	for i := range 8 {
		if sl, _, ok := l.take(ep, now.Add(time.Second)); !ok || sl.probe {
			t.Fatalf("call %d after the successful probe: %+v, %v; want it sent freely", i, sl, ok)
		}
	}
}

// hostileHints are the forms a server can give a wait in, each asking for far longer than
// any hold should last (a year, or a time since the epoch a year away), but those in the
// past, which hold nothing.
func hostileHints(now time.Time) []struct {
	name    string
	status  int
	headers []string
	capped  bool
} {
	year := now.Add(365 * 24 * time.Hour)
	return []struct {
		name    string
		status  int
		headers []string
		capped  bool
	}{
		{"RateLimit-Reset, a year of seconds", 200, []string{"RateLimit-Reset", "31536000"}, true},
		{"RateLimit-Reset, epoch seconds a year away", 200, []string{"RateLimit-Reset", strconv.FormatInt(year.Unix(), 10)}, true},
		{"RateLimit-Reset, epoch milliseconds a year away", 200, []string{"RateLimit-Reset", strconv.FormatInt(year.UnixMilli(), 10)}, true},
		// The value: 2001, a year ahead of synctest's clock and long past of a real one.
		{"RateLimit-Reset, 1e12 epoch milliseconds (2001)", 200, []string{"RateLimit-Reset", "1000000000000"}, time.UnixMilli(1e12).After(now.Add(time.Hour))},
		{"RateLimit-Reset, epoch milliseconds a second ago", 200, []string{"RateLimit-Reset", strconv.FormatInt(now.UnixMilli()-1000, 10)}, false},
		{"RateLimit-Reset, 1e15 (far beyond any epoch)", 200, []string{"RateLimit-Reset", "1000000000000000"}, true},
		{"429, Retry-After a year of seconds", 429, []string{"Retry-After", "31536000"}, true},
		{"429, Retry-After an HTTP date a year away", 429, []string{"Retry-After", year.UTC().Format(http.TimeFormat)}, true},
		{"429, RateLimit-Reset epoch milliseconds a year away", 429, []string{"RateLimit-Reset", strconv.FormatInt(year.UnixMilli(), 10)}, true},
	}
}

// TestEveryHoldEnds: one answer with nothing left and a reset hint far away (a year, or
// RateLimit-Reset: 1000000000000, epoch milliseconds) holds its endpoint for the maximum
// hold at most; then exactly one request probes it while the other callers wait for its
// answer.
func TestEveryHoldEnds(t *testing.T) {
	for _, maxHold := range []time.Duration{DefaultMaxHold, 90 * time.Second} {
		synctest.Test(t, func(t *testing.T) {
			for _, h := range hostileHints(time.Now()) {
				opts := []Option{WithMaxWait(time.Hour), WithMaxRetries(0)}
				if maxHold != DefaultMaxHold {
					opts = append(opts, WithMaxHold(maxHold))
				}
				c, mt := setup(t, opts...)
				var mu sync.Mutex
				var sent []time.Time
				first := true
				mt.RegisterResponder("GET", testBase+"transaction/9", func(req *http.Request) (*http.Response, error) {
					mu.Lock()
					sent = append(sent, time.Now())
					hostile := first
					first = false
					mu.Unlock()
					if hostile {
						return respond(h.status, `{"id": 9}`, append([]string{"RateLimit-Remaining", "0"}, h.headers...)...)(req)
					}
					time.Sleep(time.Second) // the probe's answer takes a second to come back
					return respond(200, `{"id": 9}`, "RateLimit-Remaining", "50")(req)
				})
				_, _ = c.Transactions.Get(context.Background(), 9)
				start := time.Now()
				var wg sync.WaitGroup
				errs := make(chan error, 3)
				for range 3 {
					wg.Go(func() {
						_, err := c.Transactions.Get(context.Background(), 9)
						errs <- err
					})
				}
				wg.Wait()
				close(errs)
				for err := range errs {
					if err != nil {
						t.Errorf("%s: a call after the hold failed: %v", h.name, err)
					}
				}
				if len(sent) != 4 {
					t.Fatalf("%s: %d requests, want 4", h.name, len(sent))
				}
				wantHold := time.Duration(0)
				if h.capped {
					wantHold = maxHold
				}
				if got := sent[1].Sub(start); got != wantHold {
					t.Errorf("%s: the endpoint was held %v, want %v", h.name, got, wantHold)
				}
				if h.capped && (sent[2].Sub(sent[1]) < time.Second || sent[3].Sub(sent[1]) < time.Second) {
					t.Errorf("%s: after the hold, requests went at %v: want one probe, the others after its answer", h.name, sent[1:])
				}
			}
		})
	}
}

// TestHeldCallSaysTheHoldNotTheServersYear: a call held back, or refused by a 429 asking for
// a year, reports a RetryAfter of the maximum hold, the time after which it is worth trying.
func TestHeldCallSaysTheHoldNotTheServersYear(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, mt := setup(t, WithMaxWait(time.Minute), WithMaxHold(5*time.Minute))
		var rec recorder
		mt.RegisterResponder("GET", testBase+"transaction/9", rec.then(respond(429, `{}`, "Retry-After", "31536000")))
		for i, want := range []bool{true, false} {
			_, err := c.Transactions.Get(context.Background(), 9)
			var rl *RateLimitError
			if !errors.As(err, &rl) || rl.RetryAfter != 5*time.Minute || (rl.Response != nil) != want {
				t.Errorf("call %d: err = %v; want a *RateLimitError (answered: %v) saying 5m", i, err, want)
			}
		}
		if rec.count() != 1 {
			t.Errorf("%d requests, want 1: the second call is held", rec.count())
		}
	})
}

// TestMaxHoldMustBePositive: a zero or negative hold is refused, not taken as "hold for
// ever" or "never hold".
func TestMaxHoldMustBePositive(t *testing.T) {
	for _, d := range []time.Duration{0, -time.Second} {
		if _, err := NewClient(testEmail, testKey, WithMaxHold(d)); !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("WithMaxHold(%v): err = %v, want ErrInvalidArgument", d, err)
		}
	}
}

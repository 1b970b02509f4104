package escrow

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/escrowkit/escrow-go/internal/logtest"
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

// TestNanosecondMaxWaitRetries: the shortest maximum wait a client accepts, a nanosecond,
// still lets it retry: the full-jitter draw over [0, 1ns] must not fail on the range.
func TestNanosecondMaxWaitRetries(t *testing.T) {
	mt := httpmock.NewMockTransport()
	mt.RegisterResponder("GET", testBase+"transaction/1", httpmock.ResponderFromMultipleResponses([]*http.Response{
		httpmock.NewStringResponse(http.StatusServiceUnavailable, `{"error": "down"}`),
		httpmock.NewStringResponse(http.StatusServiceUnavailable, `{"error": "down"}`),
		httpmock.NewStringResponse(http.StatusOK, `{"id": 1}`),
	}))
	c, err := NewClient(testEmail, testKey, WithBaseURL(testBase), WithHTTPClient(&http.Client{Transport: mt}), WithMaxWait(time.Nanosecond))
	if err != nil {
		t.Fatal(err)
	}
	tx, err := c.Transactions.Get(context.Background(), 1)
	if err != nil || tx.ID != 1 {
		t.Fatalf("got %v, %v; want transaction 1 on the third attempt", tx, err)
	}
	if n := mt.GetTotalCallCount(); n != 3 {
		t.Errorf("%d attempts, want 3", n)
	}
}

// TestNonsenseLimitIsIgnored: an answer saying the limit is 0 does not make the client forget
// the limit it learnt: after the reset it expects that limit again, and no more.
func TestNonsenseLimitIsIgnored(t *testing.T) {
	now := time.Unix(1_000_000, 0)
	l := newEndpointLimits(time.Millisecond, time.Minute)
	const ep = "GET /transaction/{id}"
	sl, _, _ := l.take(ep, now)
	l.observe(ep, answer(200, "2", "1", "10"), sl, now) // a limit of 2; 1 left for 10s
	sl, _, _ = l.take(ep, now)
	l.observe(ep, answer(200, "0", "0", "10"), sl, now) // a limit of 0: nonsense
	later := now.Add(10 * time.Second)
	for i := range 2 {
		if _, _, ok := l.take(ep, later); !ok {
			t.Fatalf("call %d after the reset refused, want the limit of 2 to go", i)
		}
	}
	if _, _, ok := l.take(ep, later); ok {
		t.Error("a third call went in a window of 2: the limit was forgotten")
	}
}

// TestBareSuccessDoesNotLiftAKnownExhaustion: an answer without rate-limit headers says
// nothing of the window: an endpoint exhausted until a reset the server gave stays held
// until then.
func TestBareSuccessDoesNotLiftAKnownExhaustion(t *testing.T) {
	now := time.Unix(1_000_000, 0)
	l := newEndpointLimits(time.Millisecond, time.Minute)
	const ep = "GET /transaction/{id}"
	sl, _, _ := l.take(ep, now)
	l.observe(ep, answer(200, "", "1", "10"), sl, now) // 1 left for 10s
	sl, _, _ = l.take(ep, now)                         // the last one
	l.observe(ep, answer(200, "", "", ""), sl, now)    // answered without the headers
	if _, wait, ok := l.take(ep, now); ok || wait != 10*time.Second {
		t.Errorf("take = %v, wait %v; want the call held the 10s to the reset", ok, wait)
	}
}

// TestClientErrorDoesNotEndProbing: after a bare 429, a 4xx answer without rate-limit
// headers (the server may check credentials or the request before its limit) does not show
// the endpoint serves again: calls still go one probe at a time.
func TestClientErrorDoesNotEndProbing(t *testing.T) {
	now := time.Unix(1_000_000, 0)
	l := newEndpointLimits(time.Millisecond, time.Minute)
	const ep = "GET /transaction/{id}"
	sl, _, _ := l.take(ep, now)
	l.observe(ep, answer(429, "", "", ""), sl, now)
	later := now.Add(time.Second)
	probe, _, ok := l.take(ep, later)
	if !ok || !probe.probe {
		t.Fatalf("after a bare 429: take = %+v, %v; want a probe", probe, ok)
	}
	l.observe(ep, answer(400, "", "", ""), probe, later)
	if sl, _, ok := l.take(ep, later.Add(time.Second)); !ok || !sl.probe {
		t.Fatalf("after the 400: take = %+v, %v; want another probe", sl, ok)
	}
	if _, _, ok := l.take(ep, later.Add(time.Second)); ok {
		t.Error("a second call went beside the probe: the 400 was taken for the end of the exhaustion")
	}
}

// TestRetriesAreLogged: with a Debug logger, every attempt's failure or status and every
// retry's wait is logged, and a transport error's text is logged without the key it echoes.
func TestRetriesAreLogged(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var logs logtest.Lines
		c, mt := setup(t, WithLogger(slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))))
		reset := &net.OpError{Op: "read", Net: "tcp", Err: errors.New("reset by peer (key " + testKey + ")")}
		mt.RegisterResponder("GET", testBase+"transaction/9", sequence(fail(reset), respond(503, `{}`, "Retry-After", "2"), respond(200, `{"id": 9}`)))
		if _, err := c.Transactions.Get(context.Background(), 9); err != nil {
			t.Fatal(err)
		}
		text := logs.String()
		for _, want := range []string{
			`msg="escrow: request failed"`, `reset by peer`, `msg="escrow: response"`, `status=503`,
			`status=200`, `msg="escrow: retrying"`, `wait=2s`,
		} {
			if !strings.Contains(text, want) {
				t.Errorf("the log lacks %s:\n%s", want, text)
			}
		}
		if n := strings.Count(text, `msg="escrow: retrying"`); n != 2 {
			t.Errorf("%d retries logged, want 2:\n%s", n, text)
		}
		if strings.Contains(text, testKey) {
			t.Errorf("the key is in the log:\n%s", text)
		}
	})
}

// TestCancelledAttemptIsNotRetried: a call whose context ends during an attempt stops there:
// no retry is announced, and the error is the context's.
func TestCancelledAttemptIsNotRetried(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var logs logtest.Lines
		c, mt := setup(t, WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
		ctx, cancel := context.WithCancel(context.Background())
		mt.RegisterResponder("GET", testBase+"transaction/9", func(req *http.Request) (*http.Response, error) {
			cancel()
			return respond(503, `{}`)(req)
		})
		if _, err := c.Transactions.Get(ctx, 9); !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v, want context.Canceled", err)
		}
		if n := logs.Count("retrying"); n != 0 {
			t.Errorf("a cancelled call announced %d retries", n)
		}
	})
}

// TestServerErrorThenCancelLeavesTheOutcomeUnknown: a DELETE answered 503 may have been
// carried out; cancelled while waiting to retry, the call says its outcome is unknown.
func TestServerErrorThenCancelLeavesTheOutcomeUnknown(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, mt := setup(t)
		mt.RegisterResponder("DELETE", testBase+"transaction/9", respond(503, `{}`, "Retry-After", "5"))
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		err := doMethod(ctx, c, "DELETE")
		var te *TransportError
		if !errors.As(err, &te) || !te.OutcomeUnknown {
			t.Errorf("err = %#v, want a *TransportError with OutcomeUnknown", err)
		}
	})
}

// TestHeldCallIsLogged: a call held for an exhausted endpoint says so at Info, with the wait.
func TestHeldCallIsLogged(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var logs logtest.Lines
		c, mt := setup(t, WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
		mt.RegisterResponder("GET", testBase+"transaction/9", respond(200, `{"id": 9}`, "RateLimit-Remaining", "0", "RateLimit-Reset", "3"))
		for range 2 {
			if _, err := c.Transactions.Get(context.Background(), 9); err != nil {
				t.Fatal(err)
			}
		}
		if n := logs.Count(`msg="escrow: holding call, no requests remaining"`); n != 1 || logs.Count("wait=3s") != 1 {
			t.Errorf("the held call logged %d holds:\n%s", n, logs.String())
		}
	})
}

// limitedAPI is a server with a fixed window per endpoint: limit requests per window, of
// which others are spent by other clients of the account at the window's start. It answers
// the RateLimit headers, and 429 with Retry-After beyond the limit. An answer takes
// latency(n) to come back for the n-th request (0-based), so answers can overtake each other.
type limitedAPI struct {
	limit, others int
	window        time.Duration
	latency       func(n int) time.Duration

	mu      sync.Mutex
	start   time.Time // of the current window
	used    int
	n       int
	refused int // 429s served
	perWin  map[int]int
	origin  time.Time
}

func newLimitedAPI(limit, others int, window time.Duration) *limitedAPI {
	return &limitedAPI{limit: limit, others: others, window: window, latency: func(int) time.Duration { return 0 },
		start: time.Now(), used: others, origin: time.Now(), perWin: map[int]int{}}
}

func (s *limitedAPI) RoundTrip(r *http.Request) (*http.Response, error) {
	s.mu.Lock()
	now := time.Now()
	for !now.Before(s.start.Add(s.window)) {
		s.start, s.used = s.start.Add(s.window), s.others
	}
	n := s.n
	s.n++
	left := s.start.Add(s.window).Sub(now)
	resetSecs := strconv.Itoa(int(math.Ceil(left.Seconds())))
	h := http.Header{"Content-Type": {"application/json"}, "Ratelimit-Limit": {strconv.Itoa(s.limit)}}
	status, body := http.StatusOK, `{"id": 9}`
	if s.used >= s.limit {
		s.refused++
		status, body = http.StatusTooManyRequests, `{"error": "rate_limited"}`
		h.Set("Retry-After", resetSecs)
	} else {
		s.used++
		s.perWin[int(now.Sub(s.origin)/s.window)]++
		h.Set("RateLimit-Remaining", strconv.Itoa(s.limit-s.used))
		h.Set("RateLimit-Reset", resetSecs)
	}
	s.mu.Unlock()
	time.Sleep(s.latency(n))
	return &http.Response{StatusCode: status, Header: h, Body: io.NopCloser(strings.NewReader(body)), Request: r}, nil
}

func (s *limitedAPI) refusals() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.refused
}

// fakeClient returns a client whose requests go to rt, in process.
func fakeClient(t *testing.T, rt http.RoundTripper, opts ...Option) *Client {
	t.Helper()
	opts = append([]Option{WithBaseURL("https://api.example.com/2017-09-01/"), WithHTTPClient(&http.Client{Transport: rt})}, opts...)
	c, err := NewClient("me@example.com", "key-7f3a9c", opts...)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestCallersNeverSpendACertain429: callers sharing a client against a limited endpoint
// get every answer without the server refusing one request, and without wasting a window:
// the client counts its calls in flight, answers that come back out of order or from an
// earlier window, the requests of other clients of the account, and what a window reset
// gives back.
func TestCallersNeverSpendACertain429(t *testing.T) {
	for _, tc := range []struct {
		name          string
		limit, others int
		latency       func(n int) time.Duration
	}{
		{"alone", 5, 0, func(int) time.Duration { return 0 }},
		{"alone, answers out of order", 5, 0, func(n int) time.Duration { return time.Duration(n%3) * 700 * time.Millisecond }},
		{"with others on the account", 5, 2, func(int) time.Duration { return 0 }},
		{"with others, answers out of order", 5, 2, func(n int) time.Duration { return time.Duration(n%4) * 900 * time.Millisecond }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				// More callers than the limit: at a window's reset they all want to go.
				const callers, calls = 6, 4
				api := newLimitedAPI(tc.limit, tc.others, 10*time.Second)
				api.latency = tc.latency
				c := fakeClient(t, api, WithMaxWait(time.Minute))
				// One call first: until an answer, the client knows nothing of the allowance
				// and concurrent first calls may well be refused.
				if _, err := c.Transactions.Get(context.Background(), 9); err != nil {
					t.Fatal(err)
				}
				var wg sync.WaitGroup
				errs := make(chan error, callers*calls)
				for range callers {
					wg.Go(func() {
						for range calls {
							if _, err := c.Transactions.Get(context.Background(), 9); err != nil {
								errs <- err
							}
						}
					})
				}
				wg.Wait()
				close(errs)
				for err := range errs {
					t.Errorf("call failed: %v", err)
				}
				// 25 calls at limit-others per window: no window may go unused.
				per := tc.limit - tc.others
				windows := (callers*calls + 1 + per - 1) / per
				// At a reset the client must assume the whole limit is there: the other clients'
				// spending shows only in the answers to what it sends meanwhile, so each window
				// may cost one refusal per caller beyond what is really left. Nothing else.
				unforeseeable := 0
				if tc.others > 0 {
					unforeseeable = (min(callers, tc.limit) - per) * windows
				}

				if n := api.refusals(); n > unforeseeable {
					t.Errorf("the server refused %d requests, more than the %d the client cannot foresee", n, unforeseeable)
				}
				api.mu.Lock()
				defer api.mu.Unlock()
				for w := range windows {
					if api.perWin[w] == 0 {
						t.Errorf("window %d went unused (requests per window: %v)", w, api.perWin)
					}
				}
			})
		})
	}
}

// TestWaitEqualToMaxWaitIsTaken: the maximum wait is inclusive. A 429 asking for exactly
// that long is waited out and retried; so is an exhausted endpoint resetting exactly then.
func TestWaitEqualToMaxWaitIsTaken(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := 0
		rt := roundTrip(func(r *http.Request) *http.Response {
			n++
			if n == 1 {
				return jsonAnswer(429, `{}`, "Retry-After", "30")
			}
			return jsonAnswer(200, `{"id": 9}`, "RateLimit-Remaining", "0", "RateLimit-Reset", "30")
		})
		c := fakeClient(t, rt, WithMaxWait(30*time.Second))
		start := time.Now()
		if _, err := c.Transactions.Get(context.Background(), 9); err != nil {
			t.Fatalf("a hint equal to the maximum wait: %v", err)
		}
		if d := time.Since(start); d != 30*time.Second {
			t.Errorf("retried after %v, want 30s", d)
		}
		start = time.Now()
		if _, err := c.Transactions.Get(context.Background(), 9); err != nil {
			t.Fatalf("a reset equal to the maximum wait: %v", err)
		}
		if d := time.Since(start); d != 30*time.Second || n != 3 {
			t.Errorf("held %v over %d requests, want 30s and 3", d, n)
		}
	})
}

// TestZeroHintsMeanNow: Retry-After: 0 retries at once, and RateLimit-Remaining: 0 with
// RateLimit-Reset: 0 holds nothing: the window has already reset.
func TestZeroHintsMeanNow(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := 0
		rt := roundTrip(func(r *http.Request) *http.Response {
			n++
			if n == 1 {
				return jsonAnswer(429, `{}`, "Retry-After", "0")
			}
			return jsonAnswer(200, `{"id": 9}`, "RateLimit-Remaining", "0", "RateLimit-Reset", "0")
		})
		c := fakeClient(t, rt)
		start := time.Now()
		for range 3 {
			if _, err := c.Transactions.Get(context.Background(), 9); err != nil {
				t.Fatal(err)
			}
		}
		if d := time.Since(start); d != 0 || n != 4 {
			t.Errorf("took %v over %d requests, want no wait and 4", d, n)
		}
	})
}

// TestWaitersOnAProbeBackOff: when an endpoint is exhausted and the server does not say
// until when, one call probes it while the others wait, and the probes space out: a handful
// of refused requests in a minute, not one per waiting caller per instant. (A waiter that
// spun instead of sleeping would never let the bubble's clock reach the probe's answer: the
// test would time out.)
func TestWaitersOnAProbeBackOff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		var sent []time.Duration
		start := time.Now()
		open := start.Add(time.Minute)
		rt := roundTrip(func(r *http.Request) *http.Response {
			mu.Lock()
			defer mu.Unlock()
			sent = append(sent, time.Since(start))
			refuse := time.Now().Before(open)
			mu.Unlock()
			time.Sleep(time.Second) // the probe's answer takes a while: the others wait on it
			mu.Lock()
			if refuse {
				return jsonAnswer(429, `{}`) // bare: no word on the reset
			}
			return jsonAnswer(200, `{"id": 9}`, "RateLimit-Remaining", "50")
		})
		c := fakeClient(t, rt, WithMaxWait(2*time.Minute), WithMaxRetries(100))
		var wg sync.WaitGroup
		for range 5 {
			wg.Go(func() {
				if _, err := c.Transactions.Get(context.Background(), 9); err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
		mu.Lock()
		defer mu.Unlock()
		refused := 0
		for _, d := range sent {
			if d < time.Minute {
				refused++
			}
		}
		// Five first tries, then probes at most every few seconds for the minute.
		if refused > 5+60/2 {
			t.Errorf("%d requests refused in the minute the endpoint was exhausted: %v", refused, sent)
		}
	})
}

// TestProbeIntervalStartsAfreshAfterRecovery: the spacing of probes grows while they are
// refused, and starts from the beginning once the endpoint has answered: a second
// exhaustion does not inherit the first one's long interval.
func TestProbeIntervalStartsAfreshAfterRecovery(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		var closedUntil time.Time
		rt := roundTrip(func(r *http.Request) *http.Response {
			mu.Lock()
			defer mu.Unlock()
			if time.Now().Before(closedUntil) {
				return jsonAnswer(429, `{}`)
			}
			return jsonAnswer(200, `{"id": 9}`, "RateLimit-Remaining", "50")
		})
		c := fakeClient(t, rt, WithMaxWait(2*time.Minute), WithMaxRetries(100))
		get := func() time.Duration {
			start := time.Now()
			if _, err := c.Transactions.Get(context.Background(), 9); err != nil {
				t.Fatal(err)
			}
			return time.Since(start)
		}
		mu.Lock()
		closedUntil = time.Now().Add(time.Minute)
		mu.Unlock()
		get() // probes through a minute of refusals: the interval grows to its cap
		get() // the endpoint serves again
		mu.Lock()
		closedUntil = time.Now().Add(time.Millisecond)
		mu.Unlock()
		// A short closure costs a short wait: the probes start again from the first step.
		if d := get(); d > 2*time.Second {
			t.Errorf("a 1ms closure after recovery held the call %v: the probe interval was not reset", d)
		}
	})
}

// TestProbeIntervalStartsAfreshAfterAHintedRecovery: the same when the refusals end with a
// hint (Retry-After), the hold passes and the endpoint answers without rate-limit headers:
// that answer says it serves again, and the next exhaustion's probes start from the first
// step, not from the five-second cap the earlier refusals reached.
func TestProbeIntervalStartsAfreshAfterAHintedRecovery(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		var closedUntil time.Time
		hinted := false
		rt := roundTrip(func(r *http.Request) *http.Response {
			mu.Lock()
			defer mu.Unlock()
			switch {
			case time.Now().Before(closedUntil):
				return jsonAnswer(429, `{}`)
			case !hinted:
				hinted = true
				return jsonAnswer(429, `{}`, "Retry-After", "2")
			}
			return jsonAnswer(200, `{"id": 9}`)
		})
		c := fakeClient(t, rt, WithMaxWait(2*time.Minute), WithMaxRetries(100))
		get := func() time.Duration {
			start := time.Now()
			if _, err := c.Transactions.Get(context.Background(), 9); err != nil {
				t.Fatal(err)
			}
			return time.Since(start)
		}
		mu.Lock()
		closedUntil = time.Now().Add(time.Minute)
		mu.Unlock()
		get() // a minute of bare refusals, a hint of 2 s, then an answer without headers
		get()
		mu.Lock()
		closedUntil, hinted = time.Now().Add(time.Millisecond), true
		mu.Unlock()
		if d := get(); d > 2*time.Second {
			t.Errorf("a 1ms closure after recovery held the call %v: the probe interval was not reset", d)
		}
	})
}

// TestRateLimitErrorKeepsTheKeyOut: a 429 whose hint is beyond the maximum wait ends the
// call with the server's body in the error, and a credential echoed there is redacted.
func TestRateLimitErrorKeepsTheKeyOut(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rt := roundTrip(func(r *http.Request) *http.Response {
			return jsonAnswer(429, `{"error": "rate_limited", "message": "key key-7f3a9c is over its limit"}`, "Retry-After", "3600")
		})
		c := fakeClient(t, rt, WithMaxWait(time.Minute))
		_, err := c.Transactions.Get(context.Background(), 9)
		var rl *RateLimitError
		if !errors.As(err, &rl) || rl.Response == nil {
			t.Fatalf("err = %v, want a *RateLimitError with the response", err)
		}
		text := fmt.Sprintf("%v %+v %s", err, rl, rl.Response.Message)
		if strings.Contains(text, "key-7f3a9c") {
			t.Errorf("the API key is in the error: %s", text)
		}
		if !strings.Contains(rl.Response.Message, "[REDACTED]") {
			t.Errorf("message %q: the server's words are lost, not redacted", rl.Response.Message)
		}
	})
}

type roundTrip func(*http.Request) *http.Response

func (f roundTrip) RoundTrip(r *http.Request) (*http.Response, error) {
	resp := f(r)
	resp.Request = r
	return resp, nil
}

// jsonAnswer builds a response with a JSON body and header pairs.
func jsonAnswer(status int, body string, headers ...string) *http.Response {
	h := http.Header{"Content-Type": {"application/json"}}
	for i := 0; i+1 < len(headers); i += 2 {
		h.Set(headers[i], headers[i+1])
	}
	return &http.Response{StatusCode: status, Header: h, Body: io.NopCloser(strings.NewReader(body))}
}

// heldAPI counts requests against a limit and, while hold is set, keeps each answer until
// the test releases it: the order answers come back in is the test's to choose. Without a
// window it sends RateLimit-Remaining only, so the client never knows when the window
// started or ends; with one, it sends RateLimit-Limit and RateLimit-Reset too.
type heldAPI struct {
	mu       sync.Mutex
	limit    int
	used     int
	received int
	hold     bool
	waiting  []chan struct{}
	window   time.Duration
	end      time.Time // of the current window, when window is set
}

func (s *heldAPI) RoundTrip(r *http.Request) (*http.Response, error) {
	s.mu.Lock()
	s.received++
	if s.window > 0 {
		if s.end.IsZero() {
			s.end = time.Now().Add(s.window)
		}
		for !time.Now().Before(s.end) {
			s.end, s.used = s.end.Add(s.window), 0
		}
	}
	resp := jsonAnswer(429, `{"error": "rate_limited"}`)
	if s.used < s.limit {
		s.used++
		resp = jsonAnswer(200, `{"id": 9}`, "RateLimit-Remaining", strconv.Itoa(s.limit-s.used))
		if s.window > 0 {
			resp.Header.Set("RateLimit-Limit", strconv.Itoa(s.limit))
			resp.Header.Set("RateLimit-Reset", strconv.Itoa(int(math.Ceil(time.Until(s.end).Seconds()))))
		}
	}
	var release chan struct{}
	if s.hold {
		release = make(chan struct{})
		s.waiting = append(s.waiting, release)
	}
	s.mu.Unlock()
	if release != nil {
		<-release
	}
	resp.Request = r
	return resp, nil
}

// holding sets whether answers are held until released.
func (s *heldAPI) holding(on bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.hold = on
}

// release lets the i-th held answer (0-based) go back.
func (s *heldAPI) release(i int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	close(s.waiting[i])
	s.waiting[i] = nil
}

// releaseAll stops holding answers and lets every one still held go back.
func (s *heldAPI) releaseAll() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.hold = false
	for i, ch := range s.waiting {
		if ch != nil {
			close(ch)
			s.waiting[i] = nil
		}
	}
}

func (s *heldAPI) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.received
}

// TestCallsInFlightCountAgainstTheAllowance: what the server says is left does not yet count
// the calls still on their way, so the client subtracts them; a call that would be one too
// many waits instead of being sent to a certain 429.
func TestCallsInFlightCountAgainstTheAllowance(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		api := &heldAPI{limit: 3}
		c := fakeClient(t, api, WithMaxWait(time.Minute))
		get := func() error { _, err := c.Transactions.Get(context.Background(), 9); return err }
		if err := get(); err != nil { // the server answers: 2 left
			t.Fatal(err)
		}
		api.holding(true)
		var wg sync.WaitGroup
		for range 3 {
			wg.Go(func() {
				if err := get(); err != nil {
					t.Error(err)
				}
			})
		}
		synctest.Wait()
		if n := api.count(); n != 3 {
			t.Fatalf("%d requests sent with 2 left, want 3: two go, the third waits", n)
		}
		api.release(0)               // "1 left": the server had not counted the other call in flight
		time.Sleep(30 * time.Second) // ample time for the waiting call to look again
		synctest.Wait()
		if n := api.count(); n != 3 {
			t.Errorf("%d requests sent after an answer of 1 left with one call in flight, want 3", n)
		}
		// Let everything finish: the window resets, and every answer goes back.
		api.mu.Lock()
		api.used = 0
		api.mu.Unlock()
		api.releaseAll()
		wg.Wait()
	})
}

// TestOvertakenAnswerIsNoNews: answers can come back in another order than the server counted
// the requests. An answer saying more is left than one already seen in the same window was
// counted earlier: it must not raise the allowance, or the client would spend requests the
// other clients of the account have taken.
func TestOvertakenAnswerIsNoNews(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		api := &heldAPI{limit: 5, window: 10 * time.Second}
		c := fakeClient(t, api, WithMaxWait(time.Minute))
		get := func() error { _, err := c.Transactions.Get(context.Background(), 9); return err }
		if err := get(); err != nil { // 4 left; the window ends in 10s
			t.Fatal(err)
		}
		api.holding(true)
		var wg sync.WaitGroup
		wg.Go(func() { get() }) // counted first: 3 left
		synctest.Wait()
		api.mu.Lock()
		api.used += 2 // another client of the account spends two
		api.mu.Unlock()
		wg.Go(func() { get() }) // counted last: 0 left
		synctest.Wait()
		api.release(1) // the later answer comes back first: 0 left
		synctest.Wait()
		api.release(0) // then the earlier one: "3 left", which is old news
		synctest.Wait()
		wg.Go(func() {
			if err := get(); err != nil {
				t.Error(err)
			}
		})
		time.Sleep(5 * time.Second) // within the window
		synctest.Wait()
		if n := api.count(); n != 3 {
			t.Errorf("%d requests within the window, want 3: nothing is left in it", n)
		}
		api.holding(false)
		wg.Wait()
		if n := api.count(); n != 4 {
			t.Errorf("%d requests in all, want 4: the held call goes once the window resets", n)
		}
	})
}

// failingTransport fails every request with err, counting them.
type failingTransport struct {
	mu  sync.Mutex
	n   int
	err error
}

func (f *failingTransport) RoundTrip(*http.Request) (*http.Response, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.n++
	return nil, f.err
}

// TestCertificateFailuresAreNeverRetried: a server whose certificate cannot be verified will
// not become trustworthy by asking again, whatever the verifier objects to: the call fails
// after one attempt, a read as much as a write.
func TestCertificateFailuresAreNeverRetried(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
	}{
		{"unknown authority", &tls.CertificateVerificationError{Err: x509.UnknownAuthorityError{}}},
		{"wrong host", &tls.CertificateVerificationError{Err: x509.HostnameError{Host: "api.example.com"}}},
		{"expired", &tls.CertificateVerificationError{Err: x509.CertificateInvalidError{Reason: x509.Expired}}},
		{"no system roots", &tls.CertificateVerificationError{Err: x509.SystemRootsError{}}},
		{"unhandled critical extension", &tls.CertificateVerificationError{Err: x509.UnhandledCriticalExtension{}}},
		{"bare unknown authority", x509.UnknownAuthorityError{}},
		{"bare wrong host", x509.HostnameError{Host: "api.example.com"}},
		{"bare expired", x509.CertificateInvalidError{Reason: x509.Expired}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				rt := &failingTransport{err: tc.err}
				c := fakeClient(t, rt, WithMaxRetries(3))
				_, err := c.Transactions.Get(context.Background(), 9)
				var te *TransportError
				if !errors.As(err, &te) {
					t.Fatalf("err = %v, want a *TransportError", err)
				}
				if rt.n != 1 || te.Attempts != 1 {
					t.Errorf("%d requests (%d attempts reported) for a certificate failure, want 1", rt.n, te.Attempts)
				}
			})
		})
	}
}

// TestOthersSpendingShowsInTheFirstWindow: from the first answer that delimits a window, the
// client reads what the other clients of the account spend in it: once an answer says only
// two are left, five callers at once send two requests and wait for the reset, rather than
// five requests of which three are refused.
func TestOthersSpendingShowsInTheFirstWindow(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		api := &heldAPI{limit: 10, window: 10 * time.Second}
		c := fakeClient(t, api, WithMaxWait(time.Minute))
		get := func() error { _, err := c.Transactions.Get(context.Background(), 9); return err }
		if err := get(); err != nil { // 9 left; the window ends in 10s
			t.Fatal(err)
		}
		api.mu.Lock()
		api.used += 6 // another client of the account spends six
		api.mu.Unlock()
		if err := get(); err != nil { // 2 left
			t.Fatal(err)
		}
		api.holding(true) // the callers go together, before any answer
		var wg sync.WaitGroup
		for range 5 {
			wg.Go(func() {
				if err := get(); err != nil {
					t.Error(err)
				}
			})
		}
		time.Sleep(time.Second) // within the window
		synctest.Wait()
		if n := api.count(); n != 4 {
			t.Errorf("%d requests within the window, want 4: the two left, no more", n)
		}
		api.releaseAll()
		wg.Wait()
	})
}

// TestWindowResetGivesBackTheLimit: when a window whose limit the server told resets, the
// client expects that limit and no more: of four callers held for the reset, two go (the
// limit), and the others wait for their answers instead of all four going at once.
func TestWindowResetGivesBackTheLimit(t *testing.T) {
	for _, limit := range []int{1, 2, 3} { // 1: the smallest limit is a limit, not "none known"
		t.Run(fmt.Sprint("limit ", limit), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				api := &heldAPI{limit: limit, window: 10 * time.Second}
				c := fakeClient(t, api, WithMaxWait(time.Minute))
				get := func() error { _, err := c.Transactions.Get(context.Background(), 9); return err }
				for range limit { // the window's requests: none left until it ends in 10s
					if err := get(); err != nil {
						t.Fatal(err)
					}
				}
				api.holding(true)
				var wg sync.WaitGroup
				for range 2 * limit {
					wg.Go(func() {
						if err := get(); err != nil {
							t.Error(err)
						}
					})
				}
				time.Sleep(10 * time.Second) // the reset
				synctest.Wait()
				if n := api.count(); n != 2*limit {
					t.Errorf("%d requests by the reset with answers outstanding, want %d: %d in the first window, %d in the next", n, 2*limit, limit, limit)
				}
				api.releaseAll()
				wg.Wait()
			})
		})
	}
}

// TestWindowResetWithoutALimitFreesTheEndpoint: when the server never said the limit, a
// window's reset leaves the client knowing nothing of the next one: every caller held for
// the reset goes at once, none waits behind a probe.
func TestWindowResetWithoutALimitFreesTheEndpoint(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		n := 0
		rt := roundTrip(func(r *http.Request) *http.Response {
			mu.Lock()
			n++
			first := n == 1
			mu.Unlock()
			if first { // exhausted until the reset in 5s; no RateLimit-Limit
				return jsonAnswer(200, `{"id": 9}`, "RateLimit-Remaining", "0", "RateLimit-Reset", "5")
			}
			time.Sleep(time.Second) // answers take a second: a probe would hold the others that long
			return jsonAnswer(200, `{"id": 9}`, "RateLimit-Remaining", "50")
		})
		c := fakeClient(t, rt, WithMaxWait(time.Minute))
		get := func() error { _, err := c.Transactions.Get(context.Background(), 9); return err }
		if err := get(); err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		for range 3 {
			wg.Go(func() {
				if err := get(); err != nil {
					t.Error(err)
				}
			})
		}
		time.Sleep(5 * time.Second) // the reset
		synctest.Wait()
		mu.Lock()
		sent := n
		mu.Unlock()
		if sent != 4 {
			t.Errorf("%d requests at the reset, want 4: the three held callers go together", sent)
		}
		wg.Wait()
	})
}

// TestAGigasecondIsACountOfSeconds: only values beyond 10⁹ are read as a Unix time; a
// Retry-After of exactly 1000000000 asks for over thirty years, cut at the maximum hold,
// beyond the maximum wait: the call fails at once instead of retrying as though the wait
// were over.
func TestAGigasecondIsACountOfSeconds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var sent atomic.Int32
		c := fakeClient(t, roundTrip(func(r *http.Request) *http.Response {
			sent.Add(1)
			return jsonAnswer(429, `{}`, "Retry-After", "1000000000")
		}), WithMaxWait(time.Minute))
		_, err := c.Transactions.Get(context.Background(), 9)
		var rl *RateLimitError
		if !errors.As(err, &rl) || rl.RetryAfter != DefaultMaxHold {
			t.Fatalf("err = %v, want a *RateLimitError asking for the maximum hold", err)
		}
		if n := sent.Load(); n != 1 {
			t.Errorf("%d requests, want 1", n)
		}
	})
}

// TestLateAnswerOfAnEndedWindowHoldsNothing: an answer that comes back after its window has
// reset speaks of that window: its "none left, reset in 9s" must not hold the calls of the
// new window, which has its whole limit.
func TestLateAnswerOfAnEndedWindowHoldsNothing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		api := &heldAPI{limit: 2, window: 10 * time.Second}
		c := fakeClient(t, api, WithMaxWait(time.Minute))
		get := func() error { _, err := c.Transactions.Get(context.Background(), 9); return err }
		if err := get(); err != nil { // 1 left; the window ends in 10s
			t.Fatal(err)
		}
		time.Sleep(time.Second)
		api.holding(true)
		var wg sync.WaitGroup
		wg.Go(func() { get() }) // counted at 1s: none left, reset in 9s
		synctest.Wait()
		time.Sleep(10 * time.Second) // the window resets while the answer is on its way
		api.holding(false)
		api.release(0)
		wg.Wait()
		start := time.Now()
		if err := get(); err != nil {
			t.Fatal(err)
		}
		if d := time.Since(start); d != 0 {
			t.Errorf("a call of the new window was held %v by the late answer of the old one", d)
		}
	})
}

// TestUnknownLimitPacesOnWhatIsLeft: a server that says what is left and when the window
// resets, but not the limit, is paced on what it says is left: calls go at once while
// requests remain.
func TestUnknownLimitPacesOnWhatIsLeft(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		left := 10
		c := fakeClient(t, roundTrip(func(r *http.Request) *http.Response {
			mu.Lock()
			defer mu.Unlock()
			left--
			return jsonAnswer(200, `{"id": 9}`, "RateLimit-Remaining", strconv.Itoa(left), "RateLimit-Reset", "10")
		}), WithMaxWait(time.Minute))
		start := time.Now()
		for range 5 {
			if _, err := c.Transactions.Get(context.Background(), 9); err != nil {
				t.Fatal(err)
			}
		}
		if d := time.Since(start); d != 0 {
			t.Errorf("five calls with requests left took %v, want no wait", d)
		}
	})
}

// TestOvertakenFirstAnswerIsNoNews: the first answer of a window is news like any other, so
// an answer the server counted before it, arriving after it, must not be read as what is
// left. Here the first answer to come back says 1 left, and the overtaken one 4; a client
// that took the 4 for news would think itself alone on the account with 3 left, and send
// two calls to a certain 429.
func TestOvertakenFirstAnswerIsNoNews(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		api := &heldAPI{limit: 5, window: 10 * time.Second, hold: true}
		c := fakeClient(t, api, WithMaxWait(time.Minute))
		get := func() error { _, err := c.Transactions.Get(context.Background(), 9); return err }
		var wg sync.WaitGroup
		wg.Go(func() { get() }) // counted first: 4 left
		synctest.Wait()
		api.mu.Lock()
		api.used += 2 // another client of the account spends two
		api.mu.Unlock()
		wg.Go(func() { get() }) // counted last: 1 left
		synctest.Wait()
		api.release(1) // the later answer comes back first: 1 left
		synctest.Wait()
		api.release(0) // then the earlier one: "4 left", which is old news
		synctest.Wait()
		// Three callers at once, their answers held: the client sends what it thinks is left.
		for range 3 {
			wg.Go(func() { get() })
		}
		synctest.Wait()
		if n := api.count(); n > 3 {
			t.Errorf("%d requests within the window, want at most 3: only one was left, so %d went to a certain 429", n, n-3)
		}
		api.releaseAll()
		wg.Wait()
	})
}

// TestMalformedRetryAfterFallsBackToTheReset: a 429 whose Retry-After cannot be read (not
// seconds, not a date) is timed by its RateLimit-Reset, not retried at once.
func TestMalformedRetryAfterFallsBackToTheReset(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := 0
		rt := roundTrip(func(r *http.Request) *http.Response {
			n++
			if n == 1 {
				return jsonAnswer(429, `{}`, "Retry-After", "soon", "RateLimit-Remaining", "0", "RateLimit-Reset", "2")
			}
			return jsonAnswer(200, `{"id": 9}`)
		})
		c := fakeClient(t, rt)
		start := time.Now()
		if _, err := c.Transactions.Get(context.Background(), 9); err != nil {
			t.Fatal(err)
		}
		if d := time.Since(start); d < 2*time.Second || n != 2 {
			t.Errorf("retried after %v over %d requests, want the 2s the reset said and 2", d, n)
		}
	})
}

// TestLate429OfAnEndedWindowHoldsNothing: a 429 counted in a window and arriving after that
// window reset asks its own call to wait, not the calls of the new window: its Retry-After
// was computed from the old window, and the new one has its whole limit. (An answer is
// placed in its window on arrival; without that, the late 429 set the reset ten seconds past
// the new window's start.)
func TestLate429OfAnEndedWindowHoldsNothing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		n := 0
		both, late := make(chan struct{}), make(chan struct{})
		c := fakeClient(t, roundTrip(func(*http.Request) *http.Response {
			mu.Lock()
			n++
			i := n
			mu.Unlock()
			switch i {
			case 1: // sent beside the second; another client took the window's other call
				<-both
				return jsonAnswer(200, `{"id": 9}`, "RateLimit-Limit", "2", "RateLimit-Remaining", "0", "RateLimit-Reset", "10")
			case 2: // counted at once, refused, and slow to come back
				close(both)
				<-late
				return jsonAnswer(429, `{"error": "rate_limited"}`, "Retry-After", "10")
			}
			return jsonAnswer(200, `{"id": 9}`, "RateLimit-Limit", "2", "RateLimit-Remaining", "1", "RateLimit-Reset", "10")
		}), WithMaxWait(time.Minute))
		get := func() error { _, err := c.Transactions.Get(context.Background(), 9); return err }
		var wg sync.WaitGroup
		wg.Go(func() { get() })
		wg.Go(func() { get() })
		synctest.Wait() // one answered (none left, reset in 10s), one held
		time.Sleep(11 * time.Second)
		close(late)
		synctest.Wait() // the late 429 is read; its call waits out its Retry-After
		start := time.Now()
		if err := get(); err != nil {
			t.Fatal(err)
		}
		if d := time.Since(start); d != 0 {
			t.Errorf("a call of the new window was held %v by the late 429 of the old one", d)
		}
		wg.Wait()
	})
}

// TestAnswersOutOfOrderLoseNoCallOfTheWindow: three calls of a window the client knew
// nothing of come back out of the order the server counted them. The first to arrive
// (counted second) must be read warily, as if others spent from the window; the next
// (counted third) shows the client is alone on the account, and gives back what the wary
// reading held: all seven calls left go at once.
func TestAnswersOutOfOrderLoseNoCallOfTheWindow(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		api := &heldAPI{limit: 10, window: 10 * time.Second, hold: true}
		c := fakeClient(t, api, WithMaxWait(time.Minute))
		get := func() error { _, err := c.Transactions.Get(context.Background(), 9); return err }
		var wg sync.WaitGroup
		for range 3 {
			wg.Go(func() { get() })
		}
		synctest.Wait() // counted: 9, 8 and 7 left
		api.holding(false)
		for _, i := range []int{1, 2, 0} { // 8 left, then 7, then the overtaken 9
			api.release(i)
			synctest.Wait()
		}
		wg.Wait()
		start := time.Now()
		for n := range 7 {
			if err := get(); err != nil {
				t.Fatal(err)
			}
			if d := time.Since(start); d != 0 {
				t.Fatalf("call %d of the 7 left was held %v", n+1, d)
			}
		}
		api.mu.Lock()
		defer api.mu.Unlock()
		if api.received != 10 {
			t.Errorf("the server received %d requests, want 10 (none refused)", api.received)
		}
	})
}

// TestDefaultMaxHoldIsTenMinutes: without WithMaxHold, a 429 asking for a year is reported
// as worth retrying after 10 minutes, the documented default, not the server's year.
func TestDefaultMaxHoldIsTenMinutes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := fakeClient(t, roundTrip(func(r *http.Request) *http.Response {
			return jsonAnswer(429, `{}`, "Retry-After", strconv.Itoa(365*24*3600))
		}), WithMaxWait(time.Minute))
		_, err := c.Transactions.Get(context.Background(), 9)
		var rl *RateLimitError
		if !errors.As(err, &rl) || rl.RetryAfter != 10*time.Minute {
			t.Fatalf("err = %v, want a *RateLimitError asking for 10 minutes", err)
		}
	})
}

// timedAnswers answers GET transaction/9 with answers in turn (the last repeated) and
// records when each request was sent.
type timedAnswers struct {
	mu      sync.Mutex
	answers [][]string // header pairs of each 200 answer
	sent    []time.Time
}

func (a *timedAnswers) RoundTrip(r *http.Request) (*http.Response, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	h := a.answers[min(len(a.sent), len(a.answers)-1)]
	a.sent = append(a.sent, time.Now())
	resp := jsonAnswer(200, `{"id": 9}`, h...)
	resp.Request = r
	return resp, nil
}

// TestAnswersWithoutALimitHoldNothingWhileRequestsRemain: a server that sends
// RateLimit-Remaining and RateLimit-Reset but no RateLimit-Limit, with 50, then 49 left,
// holds no call: the third call of a window goes at once, not at its reset a minute on.
func TestAnswersWithoutALimitHoldNothingWhileRequestsRemain(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		api := &timedAnswers{answers: [][]string{
			{"RateLimit-Remaining", "50", "RateLimit-Reset", "60"},
			{"RateLimit-Remaining", "49", "RateLimit-Reset", "60"},
			{"RateLimit-Remaining", "48", "RateLimit-Reset", "60"},
		}}
		c := fakeClient(t, api, WithMaxWait(time.Hour))
		start := time.Now()
		for i := range 3 {
			if _, err := c.Transactions.Get(context.Background(), 9); err != nil {
				t.Fatalf("call %d: %v", i, err)
			}
		}
		if last := api.sent[2].Sub(start); last != 0 {
			t.Errorf("the third call went %v after the first, want at once: 49 requests were left", last)
		}
	})
}

// TestWindowEndsAtItsEarliestBound: RateLimit-Reset is rounded up, so a later answer that
// puts the reset earlier is the better bound: a first answer says 10 s, one a second later
// says 5 s and nothing left; the next call goes when the window resets 6 s after the
// first, not 10.
func TestWindowEndsAtItsEarliestBound(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		api := &timedAnswers{answers: [][]string{
			{"RateLimit-Limit", "2", "RateLimit-Remaining", "1", "RateLimit-Reset", "10"},
			{"RateLimit-Limit", "2", "RateLimit-Remaining", "0", "RateLimit-Reset", "5"},
			{"RateLimit-Limit", "2", "RateLimit-Remaining", "1", "RateLimit-Reset", "10"},
		}}
		c := fakeClient(t, api, WithMaxWait(time.Hour))
		start := time.Now()
		for i := range 3 {
			if _, err := c.Transactions.Get(context.Background(), 9); err != nil {
				t.Fatalf("call %d: %v", i, err)
			}
			if i == 0 {
				time.Sleep(time.Second)
			}
		}
		if got := api.sent[2].Sub(start); got != 6*time.Second {
			t.Errorf("the call after the window's last went %v after the first, want 6s", got)
		}
	})
}

// TestProbesOfAnEndpointRefusedWithoutAHintAreAtMostFiveSecondsApart: an endpoint answers
// every request with a bare 429 (no word on when it serves again), and calls keep coming,
// one after another, each without retries: each waits for the endpoint's next probe, whose
// interval doubles from the first backoff step (250 ms) per refusal and stops at 5 s. A
// caller notices a longer cap as an endpoint that serves again but is left untried for
// longer, and a shorter one as twice the refused requests.
func TestProbesOfAnEndpointRefusedWithoutAHintAreAtMostFiveSecondsApart(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, mt := setup(t, WithMaxRetries(0))
		var sent []time.Time
		mt.RegisterResponder("GET", testBase+"transaction/9", func(req *http.Request) (*http.Response, error) {
			sent = append(sent, time.Now())
			return respond(429, `{}`)(req)
		})
		for range 10 {
			if _, err := c.Transactions.Get(context.Background(), 9); !errors.Is(err, ErrRateLimited) {
				t.Fatalf("Get = %v, want the 429", err)
			}
		}
		var gaps []time.Duration
		for i := 1; i < len(sent); i++ {
			gaps = append(gaps, sent[i].Sub(sent[i-1]))
		}
		want := []time.Duration{250 * time.Millisecond, 500 * time.Millisecond, time.Second, 2 * time.Second, 4 * time.Second,
			5 * time.Second, 5 * time.Second, 5 * time.Second, 5 * time.Second}
		if !slices.Equal(gaps, want) {
			t.Errorf("requests apart by %v, want %v", gaps, want)
		}
	})
}

// TestAnswerWithoutTheHeaderKeepsWhatIsLeft: the server says 2 requests are left (and not
// when the window resets), then answers one without the header: the client still counts
// the one left, lets it out, and holds the next call for a probe rather than sending it to
// a certain 429. Only an exhaustion is forgotten on such an answer (the endpoint serves
// again), not a count.
func TestAnswerWithoutTheHeaderKeepsWhatIsLeft(t *testing.T) {
	now := time.Unix(1_000_000, 0)
	l := newEndpointLimits(time.Millisecond, time.Minute)
	const ep = "GET /transaction/{id}"
	sl, _, _ := l.take(ep, now)
	l.observe(ep, answer(200, "", "2", ""), sl, now)
	sl, _, _ = l.take(ep, now)
	l.observe(ep, answer(200, "", "", ""), sl, now)
	if _, _, ok := l.take(ep, now); !ok {
		t.Fatal("the request left was held")
	}
	if _, _, ok := l.take(ep, now); ok {
		t.Error("a call went out beyond the 2 the server said were left")
	}
}

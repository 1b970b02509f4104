package escrow_test

// Rate-limit policies that mutation testing (scripts/mutate) found unpinned. The server is
// faked in process and every test runs in a synctest bubble, so waits are read off the fake
// clock; only the exported client is used, so the tests hold whatever store the limiter
// keeps its state in.

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	escrow "github.com/escrowkit/escrow-go"
)

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
func fakeClient(t *testing.T, rt http.RoundTripper, opts ...escrow.Option) *escrow.Client {
	t.Helper()
	opts = append([]escrow.Option{escrow.WithBaseURL("https://api.example.com/2017-09-01/"), escrow.WithHTTPClient(&http.Client{Transport: rt})}, opts...)
	c, err := escrow.NewClient("me@example.com", "key-7f3a9c", opts...)
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
				c := fakeClient(t, api, escrow.WithMaxWait(time.Minute))
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
				return answer(429, `{}`, "Retry-After", "30")
			}
			return answer(200, `{"id": 9}`, "RateLimit-Remaining", "0", "RateLimit-Reset", "30")
		})
		c := fakeClient(t, rt, escrow.WithMaxWait(30*time.Second))
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
				return answer(429, `{}`, "Retry-After", "0")
			}
			return answer(200, `{"id": 9}`, "RateLimit-Remaining", "0", "RateLimit-Reset", "0")
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
				return answer(429, `{}`) // bare: no word on the reset
			}
			return answer(200, `{"id": 9}`, "RateLimit-Remaining", "50")
		})
		c := fakeClient(t, rt, escrow.WithMaxWait(2*time.Minute), escrow.WithMaxRetries(100))
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
				return answer(429, `{}`)
			}
			return answer(200, `{"id": 9}`, "RateLimit-Remaining", "50")
		})
		c := fakeClient(t, rt, escrow.WithMaxWait(2*time.Minute), escrow.WithMaxRetries(100))
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

// TestRateLimitErrorKeepsTheKeyOut: a 429 whose hint is beyond the maximum wait ends the
// call with the server's body in the error, and a credential echoed there is redacted.
func TestRateLimitErrorKeepsTheKeyOut(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rt := roundTrip(func(r *http.Request) *http.Response {
			return answer(429, `{"error": "rate_limited", "message": "key key-7f3a9c is over its limit"}`, "Retry-After", "3600")
		})
		c := fakeClient(t, rt, escrow.WithMaxWait(time.Minute))
		_, err := c.Transactions.Get(context.Background(), 9)
		var rl *escrow.RateLimitError
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

// answer builds a response with a JSON body and header pairs.
func answer(status int, body string, headers ...string) *http.Response {
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
	resp := answer(429, `{"error": "rate_limited"}`)
	if s.used < s.limit {
		s.used++
		resp = answer(200, `{"id": 9}`, "RateLimit-Remaining", strconv.Itoa(s.limit-s.used))
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
		c := fakeClient(t, api, escrow.WithMaxWait(time.Minute))
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
		c := fakeClient(t, api, escrow.WithMaxWait(time.Minute))
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
				c := fakeClient(t, rt, escrow.WithMaxRetries(3))
				_, err := c.Transactions.Get(context.Background(), 9)
				var te *escrow.TransportError
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
		c := fakeClient(t, api, escrow.WithMaxWait(time.Minute))
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
	synctest.Test(t, func(t *testing.T) {
		api := &heldAPI{limit: 2, window: 10 * time.Second}
		c := fakeClient(t, api, escrow.WithMaxWait(time.Minute))
		get := func() error { _, err := c.Transactions.Get(context.Background(), 9); return err }
		for range 2 { // the window's two requests: none left until it ends in 10s
			if err := get(); err != nil {
				t.Fatal(err)
			}
		}
		api.holding(true)
		var wg sync.WaitGroup
		for range 4 {
			wg.Go(func() {
				if err := get(); err != nil {
					t.Error(err)
				}
			})
		}
		time.Sleep(10 * time.Second) // the reset
		synctest.Wait()
		if n := api.count(); n != 4 {
			t.Errorf("%d requests by the reset with answers outstanding, want 4: two in the first window, two in the next", n)
		}
		api.releaseAll()
		wg.Wait()
	})
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
				return answer(200, `{"id": 9}`, "RateLimit-Remaining", "0", "RateLimit-Reset", "5")
			}
			time.Sleep(time.Second) // answers take a second: a probe would hold the others that long
			return answer(200, `{"id": 9}`, "RateLimit-Remaining", "50")
		})
		c := fakeClient(t, rt, escrow.WithMaxWait(time.Minute))
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
			return answer(429, `{}`, "Retry-After", "1000000000")
		}), escrow.WithMaxWait(time.Minute))
		_, err := c.Transactions.Get(context.Background(), 9)
		var rl *escrow.RateLimitError
		if !errors.As(err, &rl) || rl.RetryAfter != escrow.DefaultMaxHold {
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
		c := fakeClient(t, api, escrow.WithMaxWait(time.Minute))
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
			return answer(200, `{"id": 9}`, "RateLimit-Remaining", strconv.Itoa(left), "RateLimit-Reset", "10")
		}), escrow.WithMaxWait(time.Minute))
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
		c := fakeClient(t, api, escrow.WithMaxWait(time.Minute))
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
// seconds, not a date) is timed by its RateLimit-Reset, not retried at once. Our own mutant
// ratelimit.go:219:12 (an unreadable Retry-After taken as "now") lived before this test.
func TestMalformedRetryAfterFallsBackToTheReset(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := 0
		rt := roundTrip(func(r *http.Request) *http.Response {
			n++
			if n == 1 {
				return answer(429, `{}`, "Retry-After", "soon", "RateLimit-Remaining", "0", "RateLimit-Reset", "2")
			}
			return answer(200, `{"id": 9}`)
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
				return answer(200, `{"id": 9}`, "RateLimit-Limit", "2", "RateLimit-Remaining", "0", "RateLimit-Reset", "10")
			case 2: // counted at once, refused, and slow to come back
				close(both)
				<-late
				return answer(429, `{"error": "rate_limited"}`, "Retry-After", "10")
			}
			return answer(200, `{"id": 9}`, "RateLimit-Limit", "2", "RateLimit-Remaining", "1", "RateLimit-Reset", "10")
		}), escrow.WithMaxWait(time.Minute))
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
		c := fakeClient(t, api, escrow.WithMaxWait(time.Minute))
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

package escrow

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/jarcoal/httpmock"

	"github.com/escrowkit/escrow-go/internal/logtest"
)

// fakeStore is a RateLimitStore that grants everything (or what grant says) and fails while
// failing is set.
type fakeStore struct {
	mu       sync.Mutex
	failing  bool
	grant    func(n int) RateLimitGrant // the n-th Reserve's answer (0-based); nil: OK
	reserves int
	keys     []RateLimitKey
	records  []RateLimitAnswer
	grants   []RateLimitGrant // of the records, as Record was handed them
	calls    int              // Reserve calls, failed ones included
	gate     chan struct{}    // when set, Reserve waits for it to close (a slow store)
}

var errStoreDown = errors.New("store down")

func (f *fakeStore) Reserve(ctx context.Context, key RateLimitKey) (RateLimitGrant, error) {
	f.mu.Lock()
	f.calls++
	gate := f.gate
	f.mu.Unlock()
	if gate != nil {
		<-gate
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := ctx.Deadline(); !ok {
		return RateLimitGrant{}, errors.New("no deadline on the store's context")
	}
	if f.failing {
		return RateLimitGrant{}, errStoreDown
	}
	f.keys = append(f.keys, key)
	n := f.reserves
	f.reserves++
	if f.grant != nil {
		return f.grant(n), nil
	}
	return RateLimitGrant{OK: true, ID: "r" + string(rune('a'+n%26))}, nil
}

func (f *fakeStore) Record(ctx context.Context, key RateLimitKey, g RateLimitGrant, a RateLimitAnswer) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := ctx.Err(); err != nil { // as a store must: its context's end ends the call
		return err
	}
	if f.failing {
		return errStoreDown
	}
	f.records = append(f.records, a)
	f.grants = append(f.grants, g)
	return nil
}

func (f *fakeStore) set(failing bool) {
	f.mu.Lock()
	f.failing = failing
	f.mu.Unlock()
}

func (f *fakeStore) counts() (reserves, records int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.reserves, len(f.records)
}

func TestRateLimitStoreIsAskedOnceBeforeAndOnceAfterEachAttempt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := &fakeStore{}
		c, mt := setup(t, WithRateLimitStore(store), WithMaxRetries(2))
		var n int
		mt.RegisterResponder("GET", testBase+"transaction/9", func(req *http.Request) (*http.Response, error) {
			n++
			if n == 1 { // one retry: two attempts
				return respond(429, `{}`, "Retry-After", "1")(req)
			}
			return respond(200, `{"id": 9}`, "RateLimit-Limit", "50", "RateLimit-Remaining", "48", "RateLimit-Reset", "3")(req)
		})
		if _, err := c.Transactions.Get(context.Background(), 9); err != nil {
			t.Fatal(err)
		}
		if r, w := store.counts(); r != 2 || w != 2 {
			t.Fatalf("%d reserves and %d records for two attempts", r, w)
		}
		want := []RateLimitAnswer{
			{Answered: true, Status: 429, Limit: -1, Remaining: 0, Reset: time.Second},
			{Answered: true, Status: 200, Limit: 50, Remaining: 48, Reset: 3 * time.Second},
		}
		for i, a := range store.records {
			if a != want[i] {
				t.Errorf("record %d: %+v, want %+v", i, a, want[i])
			}
		}
		if store.grants[0].ID != "ra" || store.grants[1].ID != "rb" {
			t.Errorf("records carry grants %+v, want ids [ra rb]", store.grants)
		}
		if store.keys[0].Endpoint != "GET /transaction/{id}" {
			t.Errorf("endpoint %q", store.keys[0].Endpoint)
		}
	})
}

// TestRateLimitKeyNamesTheAccountWithoutSecrets: the account part is a hash of the e-mail
// (whatever its case) and the base URL, and the API key plays no part.
func TestRateLimitKeyNamesTheAccountWithoutSecrets(t *testing.T) {
	key := func(email, apiKey, base string) string {
		t.Helper()
		store := &fakeStore{}
		mt := httpmock.NewMockTransport()
		mt.RegisterResponder("GET", base+"customer/me", respond(200, `{"id": 1}`))
		c, err := NewClient(email, apiKey, WithBaseURL(base), WithHTTPClient(&http.Client{Transport: mt}), WithRateLimitStore(store))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Customers.Get(context.Background(), Me); err != nil {
			t.Fatal(err)
		}
		return store.keys[0].Account
	}
	a := key(testEmail, testKey, testBase)
	if !regexp.MustCompile(`^[0-9a-f]{32}$`).MatchString(a) {
		t.Errorf("account %q is not 32 hex digits", a)
	}
	if b := key(strings.ToUpper(testEmail), "another-key-of-the-same-account", testBase); b != a {
		t.Errorf("the same account with another key or case has another budget: %s, %s", a, b)
	}
	if b := key(testEmail, testKey, SandboxURL); b == a {
		t.Error("two base URLs share a budget")
	}
	if b := key("seller@example.com", testKey, testBase); b == a {
		t.Error("two accounts share a budget")
	}
}

// storeOutageTest is a client pacing on store, logging to logs; get makes one call the
// server answers with plenty left, and fails the test if the call fails.
func storeOutageTest(t *testing.T) (store *fakeStore, logs *logtest.Lines, get func()) {
	store, logs = &fakeStore{}, new(logtest.Lines)
	c, mt := setup(t, WithRateLimitStore(store), WithLogger(slog.New(slog.NewTextHandler(logs, nil))))
	mt.RegisterResponder("GET", testBase+"transaction/9", respond(200, `{"id": 9}`, "RateLimit-Remaining", "90"))
	return store, logs, func() {
		t.Helper()
		if _, err := c.Transactions.Get(context.Background(), 9); err != nil {
			t.Fatalf("call failed: %v", err)
		}
	}
}

// TestRateLimitStoreAwayFallsBackAndReturns: while the store fails, calls succeed on the
// client's own memory, the outage is logged once, and the store is tried again once a
// second until it answers.
func TestRateLimitStoreAwayFallsBackAndReturns(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store, logs, get := storeOutageTest(t)
		get()
		store.set(true)
		for range 5 {
			get()
		}
		if r, _ := store.counts(); r != 1 {
			t.Errorf("%d successful reserves; want only the first", r)
		}
		if n := logs.Count("level=WARN"); n != 1 || logs.Count("store down") != 1 {
			t.Errorf("%d warnings, want 1:\n%s", n, logs.String())
		}
		store.set(false)
		get() // within the second after the failure: still on its own memory
		if r, _ := store.counts(); r != 1 {
			t.Errorf("the store was asked again before a second passed")
		}
		time.Sleep(time.Second)
		get()
		get()
		if r, w := store.counts(); r != 3 || w != 3 {
			t.Errorf("after the store came back: %d reserves, %d records; want 3 and 3", r, w)
		}
		if n := logs.Count("answers again"); n != 1 {
			t.Errorf("%d lines saying the store is back, want 1:\n%s", n, logs.String())
		}
		if logs.Count(testKey) != 0 {
			t.Error("the API key is in the log")
		}
	})
}

// TestRateLimitStoreHoldIsShared: a hold the store says applies to this client too, and a
// hold beyond the maximum wait fails at once without sending.
func TestRateLimitStoreHoldIsShared(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := &fakeStore{grant: func(n int) RateLimitGrant {
			switch n {
			case 0:
				return RateLimitGrant{Wait: 3 * time.Second}
			case 2:
				return RateLimitGrant{Wait: time.Hour}
			}
			return RateLimitGrant{OK: true, ID: "x"}
		}}
		c, mt := setup(t, WithRateLimitStore(store), WithMaxWait(time.Minute), WithMaxHold(2*time.Hour))
		var rec recorder
		mt.RegisterResponder("GET", testBase+"transaction/9", rec.then(respond(200, `{"id": 9}`)))
		start := time.Now()
		if _, err := c.Transactions.Get(context.Background(), 9); err != nil {
			t.Fatal(err)
		}
		if waited := time.Since(start); waited != 3*time.Second {
			t.Errorf("waited %v, want the store's 3s", waited)
		}
		_, err := c.Transactions.Get(context.Background(), 9)
		var rl *RateLimitError
		if !errors.As(err, &rl) || rl.RetryAfter != time.Hour {
			t.Errorf("err = %v, want a *RateLimitError asking for an hour", err)
		}
		if rec.count() != 1 {
			t.Errorf("%d requests sent, want 1", rec.count())
		}
	})
}

// TestCancelledCallStillReportsItsReservation: a caller cancelled after its grant reports
// the attempt all the same, so that the store frees the reservation at once: the caller's
// cancellation does not reach the store's context. Record is handed the grant whole, as
// Reserve gave it.
func TestCancelledCallStillReportsItsReservation(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		granted := RateLimitGrant{OK: true, Probe: true, Window: 3, ID: "late"}
		store := &fakeStore{grant: func(int) RateLimitGrant { cancel(); return granted }}
		c, mt := setup(t, WithRateLimitStore(store))
		mt.RegisterResponder("GET", testBase+"transaction/9", respond(200, `{"id": 9}`))
		if _, err := c.Transactions.Get(ctx, 9); !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v", err)
		}
		if _, w := store.counts(); w != 1 || store.grants[0] != granted {
			t.Errorf("records %+v of grants %+v; want one record of %+v", store.records, store.grants, granted)
		}
	})
}

// TestLocalMemoryLearnsFromSharedAnswers: while the store paces, the client's own memory
// learns the window from the answers, so that it holds calls on its own when the store goes.
func TestLocalMemoryLearnsFromSharedAnswers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := &fakeStore{}
		c, mt := setup(t, WithRateLimitStore(store))
		var rec recorder
		mt.RegisterResponder("GET", testBase+"transaction/9", rec.then(respond(200, `{"id": 9}`, "RateLimit-Remaining", "0", "RateLimit-Reset", "4")))
		if _, err := c.Transactions.Get(context.Background(), 9); err != nil {
			t.Fatal(err)
		}
		store.set(true)
		start := time.Now()
		if _, err := c.Transactions.Get(context.Background(), 9); err != nil {
			t.Fatal(err)
		}
		if waited := time.Since(start); waited != 4*time.Second {
			t.Errorf("without the store the call went after %v, want the 4s the answer said", waited)
		}
	})
}

func TestAnswerOf(t *testing.T) {
	now := time.Unix(1_000_000, 0)
	tests := []struct {
		name string
		resp *http.Response
		want RateLimitAnswer
	}{
		{"none", nil, RateLimitAnswer{}},
		{"bare", answer(200, "", "", ""), RateLimitAnswer{Answered: true, Status: 200, Limit: -1, Remaining: -1, Reset: -1}},
		{"all", answer(200, "10", "3", "2"), RateLimitAnswer{Answered: true, Status: 200, Limit: 10, Remaining: 3, Reset: 2 * time.Second}},
		{"negative", answer(200, "10", "-2", ""), RateLimitAnswer{Answered: true, Status: 200, Limit: 10, Remaining: 0, Reset: -1}},
		{"429", answer(429, "10", "5", "7"), RateLimitAnswer{Answered: true, Status: 429, Limit: 10, Remaining: 0, Reset: 7 * time.Second}},
		{"bare 429", answer(429, "", "", ""), RateLimitAnswer{Answered: true, Status: 429, Limit: -1, Remaining: 0, Reset: -1}},
	}
	for _, tt := range tests {
		if got := answerOf(tt.resp, now, DefaultMaxHold); got != tt.want {
			t.Errorf("%s: %+v, want %+v", tt.name, got, tt.want)
		}
	}
	r := answer(429, "", "", "7")
	r.Header.Set("Retry-After", "2")
	if got := answerOf(r, now, DefaultMaxHold); got.Reset != 2*time.Second {
		t.Errorf("a 429's Retry-After comes first: reset %v", got.Reset)
	}
}

// TestLocalMemoryLearnsEachWindowAfresh: the answers the client learns from while the store
// paces start a new window in its own memory when the old one resets, so that an answer
// of the new window is news even if the old one's lowest was lower.
func TestLocalMemoryLearnsEachWindowAfresh(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := &fakeStore{}
		c, mt := setup(t, WithRateLimitStore(store))
		var remaining []string // what the next answers say is left
		mt.RegisterResponder("GET", testBase+"transaction/9", func(req *http.Request) (*http.Response, error) {
			r := "0"
			if len(remaining) > 0 {
				r, remaining = remaining[0], remaining[1:]
			}
			return respond(200, `{"id": 9}`, "RateLimit-Limit", "50", "RateLimit-Remaining", r, "RateLimit-Reset", "1")(req)
		})
		get := func() {
			t.Helper()
			if _, err := c.Transactions.Get(context.Background(), 9); err != nil {
				t.Fatal(err)
			}
		}
		remaining = []string{"10", "2"} // the first window: the second answer is its lowest
		get()
		get()
		time.Sleep(time.Second)
		remaining = []string{"40", "3"} // the next window: others spend fast
		get()
		get()
		// What the client's own memory would let out now, were the store to go: the 3 the
		// last answer said are left, not the 40 of the window's first answer.
		taken := takeAll(c.limits, "GET /transaction/{id}", time.Now())
		if taken != 3 {
			t.Errorf("its own memory would send %d requests, want the 3 left", taken)
		}
	})
}

// TestOneCallAtATimeTriesTheStoreAgain: after an outage, while one call tries the store
// again (and it is slow to answer), the others pace on the client's own memory rather than
// queue behind it.
func TestOneCallAtATimeTriesTheStoreAgain(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := &fakeStore{}
		c, mt := setup(t, WithRateLimitStore(store))
		mt.RegisterResponder("GET", testBase+"transaction/9", respond(200, `{"id": 9}`, "RateLimit-Remaining", "90"))
		store.set(true)
		if _, err := c.Transactions.Get(context.Background(), 9); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Second)
		gate := make(chan struct{})
		store.mu.Lock()
		store.gate, store.calls = gate, 0
		store.mu.Unlock()
		var wg sync.WaitGroup
		for range 5 {
			wg.Go(func() {
				if _, err := c.Transactions.Get(context.Background(), 9); err != nil {
					t.Error(err)
				}
			})
		}
		synctest.Wait() // all five are done or blocked: four done on their own memory
		store.mu.Lock()
		calls := store.calls
		store.mu.Unlock()
		if calls != 1 {
			t.Errorf("%d calls asked the store while it was being tried again, want 1", calls)
		}
		close(gate)
		wg.Wait()
	})
}

// TestOwnCallsInFlightCountWhenLearningFromTheStore: calls this client sent on its own memory
// (while the store was away) and still awaiting answers spend from what a store-reserved
// call's answer says is left, so that were the store to go again the client would not count
// them twice over as free.
func TestOwnCallsInFlightCountWhenLearningFromTheStore(t *testing.T) {
	now := time.Unix(1_000_000, 0)
	l := newEndpointLimits(time.Millisecond, time.Minute)
	const ep = "GET /transaction/{id}"
	for range 2 { // sent on its own memory, knowing nothing yet: both go
		if _, _, ok := l.take(ep, now); !ok {
			t.Fatal("refused while nothing is known")
		}
	}
	l.learn(ep, answer(200, "", "5", ""), now) // the store's call: 5 left
	taken := takeAll(l, ep, now)
	if taken != 3 {
		t.Errorf("its own memory lets out %d more, want 3: the 5 left less its 2 in flight", taken)
	}
}

// TestStoreRetriedUntilItAnswers: a store that fails again when tried after an outage is
// tried again a second later, and once it answers the client paces on it again.
func TestStoreRetriedUntilItAnswers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store, logs, get := storeOutageTest(t)
		store.set(true)
		get() // the outage starts
		time.Sleep(time.Second)
		get() // tried again: still failing
		store.set(false)
		time.Sleep(time.Second)
		get() // tried again: it answers
		get()
		if r, w := store.counts(); r != 2 || w != 2 {
			t.Errorf("%d reserves and %d records once the store answers, want 2 and 2", r, w)
		}
		if n := logs.Count("answers again"); n != 1 {
			t.Errorf("%d lines saying the store is back, want 1:\n%s", n, logs.String())
		}
	})
}

// recordFailing is a store whose Reserve works and whose Record fails.
type recordFailing struct{ *fakeStore }

func (recordFailing) Record(context.Context, RateLimitKey, RateLimitGrant, RateLimitAnswer) error {
	return errStoreDown
}

// TestFailingRecordIsAnOutage: a store that cannot record answers is failing as much as one
// that cannot reserve: the outage is logged, and the client paces on its own memory until
// the store is tried again a second later.
func TestFailingRecordIsAnOutage(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := &fakeStore{}
		var logs logtest.Lines
		c, mt := setup(t, WithRateLimitStore(recordFailing{store}), WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
		mt.RegisterResponder("GET", testBase+"transaction/9", respond(200, `{"id": 9}`, "RateLimit-Remaining", "90"))
		for range 3 {
			if _, err := c.Transactions.Get(context.Background(), 9); err != nil {
				t.Fatalf("call failed: %v", err)
			}
		}
		if r, _ := store.counts(); r != 1 {
			t.Errorf("%d reserves within the second after a failed record, want 1", r)
		}
		if n := logs.Count("level=WARN"); n != 1 || logs.Count("store down") != 1 {
			t.Errorf("%d warnings, want 1:\n%s", n, logs.String())
		}
	})
}

// TestStoreToldNoLimitForALimitOfZero: an answer saying the limit is 0 reaches the store as
// an answer without a limit (-1), as the client's own memory reads it.
func TestStoreToldNoLimitForALimitOfZero(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := &fakeStore{}
		c, mt := setup(t, WithRateLimitStore(store))
		mt.RegisterResponder("GET", testBase+"transaction/9", respond(200, `{"id": 9}`, "RateLimit-Limit", "0", "RateLimit-Remaining", "5"))
		if _, err := c.Transactions.Get(context.Background(), 9); err != nil {
			t.Fatal(err)
		}
		want := RateLimitAnswer{Answered: true, Status: http.StatusOK, Limit: -1, Remaining: 5, Reset: -1}
		if store.records[0] != want {
			t.Errorf("recorded %+v, want %+v", store.records[0], want)
		}
	})
}

// holdStore is a RateLimitStore that does what a shared store must of an exhausted
// endpoint: an answer with no requests remaining holds the endpoint, for every client of
// the store, until the reset the answer's client recorded.
type holdStore struct {
	mu      sync.Mutex
	until   map[string]time.Time
	answers []RateLimitAnswer
}

func (s *holdStore) Reserve(_ context.Context, key RateLimitKey) (RateLimitGrant, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if until, ok := s.until[key.Endpoint]; ok && time.Now().Before(until) {
		return RateLimitGrant{Wait: time.Until(until)}, nil
	}
	return RateLimitGrant{OK: true, ID: "h"}, nil
}

func (s *holdStore) Record(_ context.Context, key RateLimitKey, _ RateLimitGrant, a RateLimitAnswer) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.answers = append(s.answers, a)
	if a.Answered && a.Remaining == 0 && a.Reset > 0 {
		if s.until == nil {
			s.until = map[string]time.Time{}
		}
		s.until[key.Endpoint] = time.Now().Add(a.Reset)
	}
	return nil
}

// TestSharedHoldIsCutAtEachClientsMaxHold: three clients of one account share a store. A
// 429 asking for an hour reaches the one at the default hold: the store records a reset of
// 10 minutes, its hold, not the hour. A client with WithMaxHold(time.Minute) is then held
// a minute at most, and says so (RetryAfter); a client whose own hold is two hours is held
// only as long as the store holds the endpoint, 10 minutes. Neither sends a request.
func TestSharedHoldIsCutAtEachClientsMaxHold(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := &holdStore{}
		var rec recorder
		client := func(opts ...Option) *Client {
			c, mt := setup(t, append([]Option{WithRateLimitStore(store), WithMaxRetries(0)}, opts...)...)
			mt.RegisterResponder("GET", testBase+"transaction/9", rec.then(respond(429, `{}`, "Retry-After", "3600")))
			return c
		}
		atDefault, oneMinute, twoHours := client(), client(WithMaxHold(time.Minute)), client(WithMaxHold(2*time.Hour))
		var rl *RateLimitError
		if _, err := atDefault.Transactions.Get(context.Background(), 9); !errors.As(err, &rl) || rl.RetryAfter != DefaultMaxHold {
			t.Fatalf("err = %v, want a *RateLimitError of the default hold", err)
		}
		if len(store.answers) != 1 || store.answers[0].Reset != DefaultMaxHold || !store.answers[0].Capped {
			t.Fatalf("the store was told %+v, want a reset of %v, capped", store.answers, DefaultMaxHold)
		}
		for _, tt := range []struct {
			c    *Client
			want time.Duration
		}{{oneMinute, time.Minute}, {twoHours, DefaultMaxHold}} {
			if _, err := tt.c.Transactions.Get(context.Background(), 9); !errors.As(err, &rl) || rl.Response != nil || rl.RetryAfter != tt.want {
				t.Errorf("err = %v, want a *RateLimitError held back, retry after %v", err, tt.want)
			}
		}
		if rec.count() != 1 {
			t.Errorf("%d requests sent, want the first alone", rec.count())
		}
	})
}

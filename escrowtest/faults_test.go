package escrowtest

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestFaultStatus(t *testing.T) {
	w := newWorld(t)
	must(t, w.srv.InjectFault(Fault{Endpoint: "POST /transaction", Status: http.StatusServiceUnavailable}))
	r := w.b.must(http.StatusServiceUnavailable, http.MethodPost, "transaction", merchandise())
	if r.str("error") != "injected_fault" || r.header.Get("RateLimit-Remaining") == "" {
		t.Errorf("answer: %v %s", r.header, r.raw)
	}
	w.b.must(http.StatusOK, http.MethodGet, "transaction", nil) // another endpoint
	w.srv.ClearFaults()
	w.b.must(http.StatusCreated, http.MethodPost, "transaction", merchandise())
	if n := len(w.b.must(http.StatusOK, http.MethodGet, "transaction", nil).list("transactions")); n != 1 {
		t.Errorf("the faulted create made a transaction: %d", n)
	}
}

func TestFaultEndpointNames(t *testing.T) {
	for _, tc := range []struct {
		endpoint string
		hit      []string // "METHOD path" requests that fault
		miss     []string
	}{
		{"GET /transaction/{transaction_id}", []string{"GET transaction/1"}, []string{"GET transaction", "PATCH transaction/1"}},
		{"get /2017-09-01/transaction/{id}", []string{"GET transaction/1"}, []string{"GET customer/me"}},
		{"POST *", []string{"POST transaction", "POST customer/me/webhook"}, []string{"GET transaction"}},
		{"*", []string{"GET customer/me", "DELETE nothing"}, nil},
	} {
		w := newWorld(t)
		must(t, w.srv.InjectFault(Fault{Endpoint: tc.endpoint, Status: http.StatusTeapot}))
		for _, req := range tc.hit {
			method, path, _ := strings.Cut(req, " ")
			if r := w.b.do(method, path, "{}"); r.status != http.StatusTeapot {
				t.Errorf("%s: %s got %d", tc.endpoint, req, r.status)
			}
		}
		for _, req := range tc.miss {
			method, path, _ := strings.Cut(req, " ")
			if r := w.b.do(method, path, nil); r.status == http.StatusTeapot {
				t.Errorf("%s: %s faulted", tc.endpoint, req)
			}
		}
		// The control API is never faulted.
		anonymous(t, w.srv).must(http.StatusOK, http.MethodGet, "/_emulator/webhook_deliveries", nil)
	}
}

// TestFaultProbabilityIsSeeded: the same seed faults the same requests.
func TestFaultProbabilityIsSeeded(t *testing.T) {
	pattern := func(seed int64) string {
		w := newWorld(t, WithSeed(seed))
		must(t, w.srv.InjectFault(Fault{Endpoint: "GET /customer/{customer_id}", Status: 500, Probability: 0.5}))
		var s strings.Builder
		for range 40 {
			s.WriteString(map[bool]string{true: "x", false: "."}[w.b.do(http.MethodGet, "customer/me", nil).status == 500])
		}
		return s.String()
	}
	a, b, c := pattern(7), pattern(7), pattern(8)
	if a != b || a == c || !strings.Contains(a, "x") || !strings.Contains(a, ".") {
		t.Errorf("patterns\n%s\n%s\n%s", a, b, c)
	}
}

// rawDo sends one request and returns the transport error, if any.
func rawDo(t *testing.T, c *client, method, path string, payload string) (*http.Response, error) {
	t.Helper()
	req, _ := http.NewRequest(method, c.srv.URL+path, strings.NewReader(payload))
	req.SetBasicAuth(c.user, c.secret)
	resp, err := c.srv.Client().Do(req)
	if err == nil {
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	return resp, err
}

// TestFaultDrops: a connection dropped before handling changes nothing; one dropped after
// handling leaves the change made although the client never heard of it.
func TestFaultDrops(t *testing.T) {
	for drop, lookup := range map[Drop]int{DropBefore: http.StatusNotFound, DropAfter: http.StatusOK} {
		t.Run(drop.String(), func(t *testing.T) {
			w := newWorld(t)
			must(t, w.srv.InjectFault(Fault{Endpoint: "POST /transaction", Drop: drop}))
			if _, err := rawDo(t, w.b, http.MethodPost, "transaction", string(mustJSON(t, set(merchandise(), "reference", "dropped")))); err == nil {
				t.Fatal("the connection was not dropped")
			}
			w.srv.ClearFaults()
			w.b.must(lookup, http.MethodGet, "transaction/reference/dropped", nil)
		})
	}
}

func TestFaultLatency(t *testing.T) {
	w := newWorld(t)
	must(t, w.srv.InjectFault(Fault{Endpoint: "GET /customer/{customer_id}", Latency: 30 * time.Millisecond}))
	start := time.Now()
	w.b.must(http.StatusOK, http.MethodGet, "customer/me", nil)
	if d := time.Since(start); d < 30*time.Millisecond {
		t.Errorf("answered after %v", d)
	}
	// A client that gives up ends the wait.
	w.srv.ClearFaults()
	must(t, w.srv.InjectFault(Fault{Endpoint: "GET /customer/{customer_id}", Latency: time.Hour}))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, w.srv.URL+"customer/me", nil)
	req.SetBasicAuth(w.buyer.Email, w.buyer.APIKey)
	// The client gets no answer: its deadline, or the connection the emulator drops when
	// it notices the client gone first (never the empty 200 net/http would send if the
	// handler just returned).
	if resp, err := w.srv.Client().Do(req); err == nil {
		t.Errorf("answered %d while the fault waits an hour", resp.StatusCode)
		resp.Body.Close()
	}
	// Latency combines with a status; Close cuts it short (the server closes at cleanup).
	w.srv.ClearFaults()
	must(t, w.srv.InjectFault(Fault{Endpoint: "*", Latency: time.Millisecond, Status: 502}))
	w.b.must(http.StatusBadGateway, http.MethodGet, "customer/me", nil)
}

// TestFaultLatencyAfter: the request is handled before the wait, so a client that gives up
// waiting leaves the change made; the answer, when awaited, comes after the latency.
func TestFaultLatencyAfter(t *testing.T) {
	w := newWorld(t)
	must(t, w.srv.InjectFault(Fault{Endpoint: "POST /transaction", LatencyAfter: time.Hour}))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, w.srv.URL+"transaction", strings.NewReader(string(mustJSON(t, set(merchandise(), "reference", "slow")))))
	req.SetBasicAuth(w.buyer.Email, w.buyer.APIKey)
	failed := make(chan error, 1)
	go func() {
		_, err := w.srv.Client().Do(req)
		failed <- err
	}()
	// The client gives up once the change is made (and not on a timer, which a loaded
	// machine can outrun before the request even arrives).
	for deadline := time.Now().Add(10 * time.Second); w.b.do(http.MethodGet, "transaction/reference/slow", nil).status != http.StatusOK; {
		if time.Now().After(deadline) {
			t.Fatal("the transaction was never created")
		}
		time.Sleep(time.Millisecond)
	}
	select {
	case err := <-failed:
		t.Fatalf("answered before the latency: %v", err)
	default:
	}
	cancel()
	if err := <-failed; !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v", err)
	}
	w.srv.ClearFaults()
	w.b.must(http.StatusOK, http.MethodGet, "transaction/reference/slow", nil)

	must(t, w.srv.InjectFault(Fault{Endpoint: "GET /customer/{customer_id}", LatencyAfter: 30 * time.Millisecond}))
	start := time.Now()
	w.b.must(http.StatusOK, http.MethodGet, "customer/me", nil)
	if d := time.Since(start); d < 30*time.Millisecond {
		t.Errorf("answered after %v", d)
	}
	// With DropAfter, the wait comes before the drop.
	w.srv.ClearFaults()
	must(t, w.srv.InjectFault(Fault{Endpoint: "GET /customer/{customer_id}", LatencyAfter: time.Millisecond, Drop: DropAfter}))
	if _, err := rawDo(t, w.b, http.MethodGet, "customer/me", ""); err == nil {
		t.Error("not dropped")
	}
}

func TestInvalidFaults(t *testing.T) {
	w := newWorld(t)
	for _, f := range []Fault{
		{Endpoint: "transaction", Status: 500},
		{Endpoint: "", Status: 500},
		{Endpoint: "*", Status: 200},
		{Endpoint: "*", Status: 500, Probability: 1.5},
		{Endpoint: "*", Status: 500, Drop: DropAfter},
		{Endpoint: "*", Drop: Drop(7)},
		{Endpoint: "*", Latency: -time.Second},
		{Endpoint: "*"},
		{Endpoint: "WEBHOOK *", Status: 503},
		{Endpoint: "*", LatencyAfter: -time.Second},
		{Endpoint: "*", LatencyAfter: time.Second, Drop: DropBefore},
		{Endpoint: "WEBHOOK *", LatencyAfter: time.Second},
		// Endpoints that match no route would be accepted and never fire.
		{Endpoint: "GET /nope", Status: 500},
		{Endpoint: "PUT /transaction", Status: 500},
		{Endpoint: "GET /transaction/{id}/nope", Status: 500},
		{Endpoint: "FETCH *", Status: 500},
		{Endpoint: "WEBHOOK /shipped", Drop: DropBefore},
	} {
		if err := w.srv.InjectFault(f); err == nil {
			t.Errorf("%+v accepted", f)
		}
	}
	w.b.must(http.StatusOK, http.MethodGet, "customer/me", nil)
	// The same through the control API, and what it does accept.
	control := anonymous(t, w.srv)
	if r := control.must(http.StatusUnprocessableEntity, http.MethodPost, "/_emulator/faults", body{"endpoint": "GET /nope", "status": 500}); !strings.Contains(string(r.raw), "matches no route") {
		t.Errorf("control API: %s", r.raw)
	}
	for _, ok := range []string{"GET *", "PATCH /transaction/{transaction_id}/item/{item}", "WEBHOOK /payment_received", "WEBHOOK *"} {
		f := Fault{Endpoint: ok, Latency: time.Millisecond}
		if err := w.srv.InjectFault(f); err != nil {
			t.Errorf("%s refused: %v", ok, err)
		}
	}
}

// TestFaultLatencyHandlesNothingOnceABodyClientLeaves: Latency promises that a request
// whose client gives up during the wait is not handled. For a request with a body it was
// handled anyway (net/http notices a client that left only once the body is read), so a
// POST the client had given up on created a transaction after the client, having read the
// state, sent it again.
func TestFaultLatencyHandlesNothingOnceABodyClientLeaves(t *testing.T) {
	w := newWorld(t)
	const latency = 100 * time.Millisecond
	must(t, w.srv.InjectFault(Fault{Endpoint: "POST /transaction", Latency: latency}))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, w.srv.URL+"transaction", strings.NewReader(string(mustJSON(t, set(merchandise(), "reference", "gave-up")))))
	req.SetBasicAuth(w.buyer.Email, w.buyer.APIKey)
	if _, err := w.srv.Client().Do(req); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err %v", err)
	}
	// The fault stays: a server goroutine scheduled late on a loaded machine may pick the
	// request up only now, and must still find the latency (with the fault cleared it would
	// handle the request at once, which is no test of Latency). The lookup below is a GET,
	// which the fault does not touch.
	time.Sleep(3 * latency) // past the latency, when a handler that missed the leave would run
	w.b.must(http.StatusNotFound, http.MethodGet, "transaction/reference/gave-up", nil)
}

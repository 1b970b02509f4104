package escrowtest

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"
)

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

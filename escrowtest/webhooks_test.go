package escrowtest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// receiver is a webhook endpoint that records what it is sent.
type receiver struct {
	*httptest.Server
	mu     sync.Mutex
	bodies []map[string]any
	status int
}

func newReceiver(t *testing.T, status int) *receiver {
	rc := &receiver{status: status}
	rc.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var b map[string]any
		data, _ := io.ReadAll(r.Body)
		json.Unmarshal(data, &b)
		if r.Method != http.MethodPost || r.Header.Get("Content-Type") != "application/json" {
			b = map[string]any{"bad request": r.Method}
		}
		rc.mu.Lock()
		rc.bodies = append(rc.bodies, b)
		rc.mu.Unlock()
		w.WriteHeader(rc.status)
	}))
	t.Cleanup(rc.Close)
	return rc
}

func (rc *receiver) events() string {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	var es []string
	for _, b := range rc.bodies {
		es = append(es, fmt.Sprint(b["event"]))
	}
	return strings.Join(es, " ")
}

func flush(t *testing.T, srv *Server) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	must(t, srv.FlushWebhooks(ctx))
}

func TestWebhookDeliveries(t *testing.T) {
	w := newWorld(t)
	buyerHook, sellerHook, failing := newReceiver(t, http.StatusOK), newReceiver(t, http.StatusOK), newReceiver(t, http.StatusInternalServerError)
	w.b.must(http.StatusOK, http.MethodPost, "customer/me/webhook", body{"url": buyerHook.URL + "/b"})
	w.s.must(http.StatusOK, http.MethodPost, "customer/me/webhook", body{"url": sellerHook.URL + "/s"})
	failingID := w.s.must(http.StatusOK, http.MethodPost, "customer/me/webhook", body{"url": failing.URL}).id("id")
	w.x.must(http.StatusOK, http.MethodPost, "customer/me/webhook", body{"url": buyerHook.URL + "/x"}) // not a party

	id := w.at("accepted")
	w.s.must(http.StatusNoContent, http.MethodDelete, fmt.Sprintf("customer/me/webhook/%d", failingID), nil)
	w.s.must(http.StatusOK, http.MethodPost, txPath(id, "disbursement_methods"), ach())
	flush(t, w.srv)

	all := "create agree payment_received payment_approved ship receive accept payment_disbursed complete"
	if got := buyerHook.events(); got != all {
		t.Errorf("buyer's webhook: %s", got)
	}
	if got := sellerHook.events(); got != all {
		t.Errorf("seller's webhook: %s", got)
	}
	if got := failing.events(); got != "create agree payment_received payment_approved ship receive accept" {
		t.Errorf("deleted webhook: %s", got)
	}
	buyerHook.mu.Lock()
	if b := buyerHook.bodies[0]; b["event_type"] != "transaction" || b["transaction_id"] != float64(id) || len(b) != 3 {
		t.Errorf("body %v", b)
	}
	buyerHook.mu.Unlock()

	ds := w.srv.Deliveries()
	if len(ds) != 9+9+7 {
		t.Fatalf("%d deliveries", len(ds))
	}
	if d := ds[0]; d.URL != buyerHook.URL+"/b" || d.Event != "create" || d.EventType != "transaction" || d.TransactionID != id || d.StatusCode != 200 || d.Error != "" {
		t.Errorf("first delivery %+v", d)
	}
	if d := ds[2]; d.URL != failing.URL || d.StatusCode != 500 {
		t.Errorf("failing delivery %+v", d)
	}
	// No retry: the failing receiver got each event once.
	if n := strings.Count(failing.events(), "create"); n != 1 {
		t.Errorf("create delivered %d times", n)
	}
}

// TestWebhookFaults: "WEBHOOK ..." faults lose the calls they name, record them as lost,
// and leave the API alone; "*" does not reach webhook calls.
func TestWebhookFaults(t *testing.T) {
	w := newWorld(t)
	hook := newReceiver(t, http.StatusOK)
	w.b.must(http.StatusOK, http.MethodPost, "customer/me/webhook", body{"url": hook.URL})
	must(t, w.srv.InjectFault(Fault{Endpoint: "WEBHOOK /agree", Drop: DropBefore}))
	w.at("funded")
	flush(t, w.srv)
	if got := hook.events(); got != "create payment_received payment_approved" {
		t.Errorf("received %q", got)
	}
	ds := w.srv.Deliveries()
	if len(ds) != 4 || ds[1].Event != "agree" || ds[1].Error != "dropped by fault" || ds[1].StatusCode != 0 {
		t.Errorf("deliveries %+v", ds)
	}

	w.srv.ClearFaults()
	must(t, w.srv.InjectFault(Fault{Endpoint: "WEBHOOK *", Drop: DropAfter}))
	w.b.create(merchandise())
	flush(t, w.srv)
	if got := hook.events(); got != "create payment_received payment_approved" {
		t.Errorf("received %q after dropping every call", got)
	}
	if (Fault{Endpoint: "*", Drop: DropBefore}).matches("WEBHOOK /ship") {
		t.Error(`"*" faults webhook calls`)
	}
}

// TestWebhookCallsRecordLatencyAndFault: each recorded call says how long it took and
// which injected fault touched it, so that the page can show why a call was slow or lost.
func TestWebhookCallsRecordLatencyAndFault(t *testing.T) {
	w := newWorld(t)
	hook := newReceiver(t, http.StatusOK)
	w.b.must(http.StatusOK, http.MethodPost, "customer/me/webhook", body{"url": hook.URL})
	must(t, w.srv.InjectFault(Fault{Endpoint: "WEBHOOK /create", Latency: 30 * time.Millisecond}))
	must(t, w.srv.InjectFault(Fault{Endpoint: "WEBHOOK /agree", Latency: 10 * time.Millisecond, Drop: DropBefore}))
	id := w.b.create(merchandise())
	w.s.act(http.StatusOK, id, 0, action("agree"))
	must(t, w.srv.ApprovePayment(id))
	flush(t, w.srv)
	ds := w.srv.Deliveries()
	if len(ds) != 4 {
		t.Fatalf("deliveries %+v", ds)
	}
	if ds[0].Fault != "latency 30ms" || ds[0].LatencyMS < 30 || ds[0].StatusCode != http.StatusOK {
		t.Errorf("a delayed call: %+v", ds[0])
	}
	if ds[1].Fault != "latency 10ms, dropped" || ds[1].LatencyMS < 10 || ds[1].Error != "dropped by fault" {
		t.Errorf("a delayed and lost call: %+v", ds[1])
	}
	if ds[2].Fault != "" || ds[2].StatusCode != http.StatusOK {
		t.Errorf("a call no fault touched: %+v", ds[2])
	}
}

func TestWebhookFailuresAreRecorded(t *testing.T) {
	slow := make(chan struct{})
	hang := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.ReadAll(r.Body) // the server notices a client gone only once the body is read
		select {
		case <-r.Context().Done():
		case <-slow:
		}
	}))
	defer hang.Close()
	defer close(slow)
	w := newWorld(t, WithWebhookTimeout(50*time.Millisecond))
	w.b.must(http.StatusOK, http.MethodPost, "customer/me/webhook", body{"url": hang.URL})
	w.b.must(http.StatusOK, http.MethodPost, "customer/me/webhook", body{"url": "http://127.0.0.1:1/refused"})
	w.b.create(merchandise())
	flush(t, w.srv)
	ds := w.srv.Deliveries()
	if len(ds) != 2 || ds[0].StatusCode != 0 || !strings.Contains(ds[0].Error, "deadline") || ds[1].Error == "" {
		t.Errorf("deliveries %+v", ds)
	}
}

// TestCloseStopsDeliveries: Close aborts a call in flight and drops the queue, and leaves
// no goroutine (TestMain checks).
func TestCloseStopsDeliveries(t *testing.T) {
	started := make(chan struct{}, 10)
	hang := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.ReadAll(r.Body) // the server notices a client gone only once the body is read
		started <- struct{}{}
		<-r.Context().Done()
	}))
	defer hang.Close()
	srv := NewServer(WithClock(testStart))
	buyer := srv.AddCustomer("buyer@example.com")
	b := as(t, srv, buyer)
	b.must(http.StatusOK, http.MethodPost, "customer/me/webhook", body{"url": hang.URL})
	for range 3 {
		b.create(merchandise())
	}
	<-started
	done := make(chan struct{})
	go func() { srv.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not return")
	}
	if ds := srv.Deliveries(); len(ds) > 1 {
		t.Errorf("%d deliveries after Close", len(ds))
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	must(t, srv.FlushWebhooks(ctx))
}

func TestFlushWebhooksHonoursContext(t *testing.T) {
	hang := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.ReadAll(r.Body) // the server notices a client gone only once the body is read
		<-r.Context().Done()
	}))
	defer hang.Close()
	w := newWorld(t)
	w.b.must(http.StatusOK, http.MethodPost, "customer/me/webhook", body{"url": hang.URL})
	w.b.create(merchandise())
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if err := w.srv.FlushWebhooks(ctx); err == nil {
		t.Error("FlushWebhooks returned before the call ended")
	}
	w.srv.Close() // aborts the call, so the receiver can close
}

func TestWebhookWithTLSReceiver(t *testing.T) {
	got := make(chan string, 1)
	tlsHook := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		data, _ := io.ReadAll(r.Body)
		got <- string(data)
	}))
	defer tlsHook.Close()
	w := newWorld(t, WithWebhookClient(tlsHook.Client()))
	w.b.must(http.StatusOK, http.MethodPost, "customer/me/webhook", body{"url": tlsHook.URL})
	id := w.b.create(merchandise())
	if want := fmt.Sprintf(`{"event":"create","event_type":"transaction","transaction_id":%d}`, id); <-got != want {
		t.Errorf("body, want %s", want)
	}
	flush(t, w.srv)
}

// TestSlowReceiverDoesNotDelayOthers: each receiver has its own queue, so a receiver
// that hangs holds up its own calls only.
func TestSlowReceiverDoesNotDelayOthers(t *testing.T) {
	release := make(chan struct{})
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.ReadAll(r.Body)
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer slow.Close()
	fast := make(chan string, 16)
	quick := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var b map[string]any
		json.NewDecoder(r.Body).Decode(&b)
		fast <- fmt.Sprint(b["event"])
	}))
	defer quick.Close()
	w := newWorld(t)
	w.b.must(http.StatusOK, http.MethodPost, "customer/me/webhook", body{"url": slow.URL})
	w.s.must(http.StatusOK, http.MethodPost, "customer/me/webhook", body{"url": quick.URL})
	w.at("funded")
	var got []string
	for range 4 {
		select {
		case e := <-fast:
			got = append(got, e)
		case <-time.After(5 * time.Second):
			t.Fatalf("the seller's receiver got only %v while the buyer's hangs", got)
		}
	}
	if strings.Join(got, " ") != "create agree payment_received payment_approved" {
		t.Errorf("seller's receiver: %v", got)
	}
	close(release)
	flush(t, w.srv)
	// Deliveries keep the order the events happened, receiver by receiver.
	var events []string
	for _, d := range w.srv.Deliveries() {
		events = append(events, d.Event)
	}
	if strings.Join(events, " ") != "create create agree agree payment_received payment_received payment_approved payment_approved" {
		t.Errorf("deliveries: %v", events)
	}
}

// TestReceiverQueueIsBounded: a receiver that never answers holds at most
// maxQueuedPerReceiver calls; the rest are recorded as lost, and other receivers are
// not affected.
func TestReceiverQueueIsBounded(t *testing.T) {
	hanging := roundTripper(func(r *http.Request) (*http.Response, error) {
		if r.URL.Host == "hang.example" {
			<-r.Context().Done()
			return nil, r.Context().Err()
		}
		return &http.Response{StatusCode: http.StatusOK, Body: http.NoBody}, nil
	})
	d := newDispatcher(&http.Client{Transport: hanging}, time.Hour, newFaultInjector(1, apiRouter()), slog.New(slog.DiscardHandler))
	const extra = 5
	var jobs []hookJob
	for i := range maxQueuedPerReceiver + extra {
		jobs = append(jobs, hookJob{url: "http://hang.example/", event: "create", tx: int64(i)})
	}
	d.enqueue(jobs...)
	d.enqueue(hookJob{url: "http://ok.example/", event: "create", tx: 1})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for {
		ds := d.deliveries()
		full := 0
		for _, x := range ds {
			if x.Error == "queue full" {
				full++
			}
		}
		if full == extra && len(ds) == extra+1 && ds[len(ds)-1].StatusCode == http.StatusOK {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("deliveries: %d, of which %d queue full", len(ds), full)
		case <-time.After(time.Millisecond):
		}
	}
	d.mu.Lock()
	queued, receivers := len(d.queues["http://hang.example/"].jobs), len(d.queues)
	d.mu.Unlock()
	if queued != maxQueuedPerReceiver || receivers != 1 {
		t.Errorf("%d calls queued for %d receivers", queued, receivers)
	}
	d.close()
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestDeliverySecretsAreShownMasked: a receiver's URL carrying a delivery secret is a
// credential. The emulator's log and its control API (which its page reads) show it
// masked, and so does the transaction's view on its page, also where a failed call's
// error quotes it; Deliveries keeps it as registered.
func TestDeliverySecretsAreShownMasked(t *testing.T) {
	const secret = "Zq3xV9mK2pL7wR4tY8uN1b"
	closed := httptest.NewServer(http.NotFoundHandler())
	hook := closed.URL + "/escrow/webhook/" + secret
	closed.Close() // the call is refused, and its error quotes the URL
	var logs bytes.Buffer
	srv := NewServer(WithClock(testStart), WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
	defer srv.Close()
	b := as(t, srv, srv.AddCustomer("buyer@example.com"))
	b.must(http.StatusOK, http.MethodPost, "customer/me/webhook", body{"url": hook})
	b.create(merchandise())
	ctx := t.Context()
	must(t, srv.FlushWebhooks(ctx))
	raw := srv.Deliveries()
	if len(raw) == 0 || raw[0].URL != hook || !strings.Contains(raw[0].Error, secret) {
		t.Fatalf("Deliveries: %+v; want the call as registered, refused", raw)
	}
	cc, err := NewControlClient(srv.URL, srv.Client())
	if err != nil {
		t.Fatal(err)
	}
	shown, err := cc.Deliveries(ctx, false)
	if err != nil || len(shown) != len(raw) {
		t.Fatalf("control Deliveries: %d, %v; want %d", len(shown), err, len(raw))
	}
	for _, d := range shown {
		if strings.Contains(d.URL+d.Error, secret) || !strings.HasSuffix(d.URL, "/escrow/webhook/SECRET") || d.Error == "" {
			t.Errorf("control API shows %q (error %q); want the URL masked, the error kept without the secret", d.URL, d.Error)
		}
	}
	view, err := srv.inspect(raw[0].TransactionID, "") // the page's view of the transaction
	if err != nil || len(view.Deliveries) == 0 || strings.Contains(fmt.Sprint(view.Deliveries), secret) {
		t.Errorf("the transaction's view: %+v, %v; want its deliveries, masked", view.Deliveries, err)
	}
	if strings.Contains(logs.String(), secret) || !strings.Contains(logs.String(), "SECRET") {
		t.Errorf("the emulator's log shows the secret, or no masked URL:\n%s", logs.String())
	}
}

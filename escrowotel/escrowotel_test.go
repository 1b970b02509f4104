package escrowotel_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	escrow "github.com/escrowkit/escrow-go"
	"github.com/escrowkit/escrow-go/escrowotel"
	"github.com/escrowkit/escrow-go/escrowtest"
	"github.com/escrowkit/escrow-go/webhook"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

// telemetry is an Observer whose spans and metrics are kept in memory.
type telemetry struct {
	obs    *escrowotel.Observer
	tp     *sdktrace.TracerProvider
	spans  *tracetest.InMemoryExporter
	reader *sdkmetric.ManualReader
}

func newTelemetry(t *testing.T) *telemetry {
	t.Helper()
	spans := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(spans))
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	return &telemetry{
		obs: escrowotel.New(escrowotel.WithTracerProvider(tp), escrowotel.WithMeterProvider(mp)),
		tp:  tp, spans: spans, reader: reader,
	}
}

// span returns the one call span (kind internal) of that name, failing the test if there
// is not exactly one.
func (tm *telemetry) span(t *testing.T, name string) tracetest.SpanStub {
	t.Helper()
	var found []tracetest.SpanStub
	for _, s := range tm.spans.GetSpans() {
		if s.Name == name && s.SpanKind == trace.SpanKindInternal {
			found = append(found, s)
		}
	}
	if len(found) != 1 {
		t.Fatalf("%d call spans named %q among %v; want 1", len(found), name, names(tm.spans.GetSpans()))
	}
	return found[0]
}

// requests returns the client spans whose parent is the span given, in the order they
// ended.
func (tm *telemetry) requests(parent tracetest.SpanStub) []tracetest.SpanStub {
	var found []tracetest.SpanStub
	for _, s := range tm.spans.GetSpans() {
		if s.SpanKind == trace.SpanKindClient && s.Parent.SpanID() == parent.SpanContext.SpanID() {
			found = append(found, s)
		}
	}
	return found
}

// wantNoNestedClientSpans fails the test if a client span is inside another client span,
// which would count one request twice in a backend that counts client spans.
func (tm *telemetry) wantNoNestedClientSpans(t *testing.T) {
	t.Helper()
	client := map[trace.SpanID]bool{}
	for _, s := range tm.spans.GetSpans() {
		if s.SpanKind == trace.SpanKindClient {
			client[s.SpanContext.SpanID()] = true
		}
	}
	for _, s := range tm.spans.GetSpans() {
		if s.SpanKind == trace.SpanKindClient && client[s.Parent.SpanID()] {
			t.Errorf("client span %q is inside another client span", s.Name)
		}
	}
}

func names(spans tracetest.SpanStubs) []string {
	out := make([]string, len(spans))
	for i, s := range spans {
		out[i] = s.Name
	}
	return out
}

// metric returns the collected metric of that name, failing the test if there is none.
func (tm *telemetry) metric(t *testing.T, name string) metricdata.Metrics {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := tm.reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name == name {
				return m
			}
		}
	}
	t.Fatalf("no metric %q", name)
	return metricdata.Metrics{}
}

func attr(attrs []attribute.KeyValue, key string) (attribute.Value, bool) {
	for _, kv := range attrs {
		if string(kv.Key) == key {
			return kv.Value, true
		}
	}
	return attribute.Value{}, false
}

// wantAttrs checks that attrs hold each key with its value (compared as text).
func wantAttrs(t *testing.T, what string, attrs []attribute.KeyValue, want map[string]string) {
	t.Helper()
	for k, v := range want {
		got, ok := attr(attrs, k)
		if !ok || got.String() != v {
			t.Errorf("%s: %s = %q (present %v), want %q", what, k, got.String(), ok, v)
		}
	}
}

func connect(t *testing.T, srv *escrowtest.Server, a escrowtest.Account, o escrow.Observer, opts ...escrow.Option) *escrow.Client {
	t.Helper()
	c, err := escrow.NewClient(a.Email, a.APIKey, append([]escrow.Option{escrow.WithEmulator(srv), escrow.WithObserver(o)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func sale(reference string) *escrow.CreateTransactionRequest {
	return &escrow.CreateTransactionRequest{
		Currency: escrow.USD, Description: "A laptop", Reference: reference,
		Parties: []escrow.PartyInput{
			{Role: escrow.RoleBuyer, Customer: "buyer@example.com"},
			{Role: escrow.RoleSeller, Customer: escrow.Me},
		},
		Items: []escrow.ItemInput{{
			Title: "Laptop", Type: escrow.ItemGeneralMerchandise, Category: escrow.CategoryComputerHardwareAndSoftware,
			InspectionPeriod: escrow.Days(1), Quantity: 1,
			Schedule: []escrow.ScheduleInput{{Amount: escrow.MustAmount("1500.00"), PayerCustomer: "buyer@example.com", BeneficiaryCustomer: escrow.Me}},
		}},
	}
}

// TestCallIsAnInternalSpanWithAClientSpanPerRequest: each SDK call is a span of kind
// internal named "{METHOD} {route template}", a child of the caller's span; the request it
// sent is a client span inside it with the HTTP client conventions' attributes (url.full
// included, without credentials). http.client.request.duration measures the request,
// escrow.client.call.duration the call.
func TestCallIsAnInternalSpanWithAClientSpanPerRequest(t *testing.T) {
	tm := newTelemetry(t)
	srv := escrowtest.NewServer()
	t.Cleanup(srv.Close)
	acct := srv.AddCustomer("seller@example.com")
	seller := connect(t, srv, acct, tm.obs)
	srv.AddCustomer("buyer@example.com")

	ctx, checkout := tm.tp.Tracer("shop").Start(t.Context(), "checkout")
	tx, err := seller.Transactions.Create(ctx, sale(""))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := seller.Transactions.Get(ctx, tx.ID); err != nil {
		t.Fatal(err)
	}
	checkout.End()

	port := srv.URL[strings.LastIndex(srv.URL, ":")+1 : strings.Index(srv.URL, "/2017")]
	urls := map[string]string{"POST /transaction": srv.URL + "transaction", "GET /transaction/{id}": fmt.Sprintf("%stransaction/%d", srv.URL, tx.ID)}
	for name, status := range map[string]string{"POST /transaction": "201", "GET /transaction/{id}": "200"} {
		call := tm.span(t, name)
		if call.Parent.SpanID() != checkout.SpanContext().SpanID() || call.Status.Code != codes.Unset {
			t.Errorf("%s: parent %v, status %v; want a span under checkout, unset status", name, call.Parent.SpanID(), call.Status)
		}
		method, template, _ := strings.Cut(name, " ")
		want := map[string]string{
			"http.request.method": method, "url.template": template, "server.address": "127.0.0.1",
			"server.port": port, "http.response.status_code": status,
		}
		wantAttrs(t, name, call.Attributes, want)
		reqs := tm.requests(call)
		if len(reqs) != 1 || reqs[0].Name != name {
			t.Fatalf("%s: client spans %v inside; want one of the same name", name, names(reqs))
		}
		want["url.full"] = urls[name]
		wantAttrs(t, name+" request", reqs[0].Attributes, want)
		if _, ok := attr(reqs[0].Attributes, "http.request.resend_count"); ok {
			t.Errorf("%s: resend_count on a request sent once", name)
		}
		if reqs[0].StartTime.Before(call.StartTime) || reqs[0].EndTime.After(call.EndTime) {
			t.Errorf("%s: the request [%v, %v] is not within its call [%v, %v]", name, reqs[0].StartTime, reqs[0].EndTime, call.StartTime, call.EndTime)
		}
	}
	tm.wantNoNestedClientSpans(t)

	for _, name := range []string{"http.client.request.duration", "escrow.client.call.duration"} {
		h := tm.metric(t, name)
		if h.Unit != "s" {
			t.Errorf("%s: unit %q, want s", name, h.Unit)
		}
		points := h.Data.(metricdata.Histogram[float64]).DataPoints
		if len(points) != 2 {
			t.Fatalf("%s: %d series, want one per endpoint: %+v", name, len(points), points)
		}
		for _, p := range points {
			tmpl, _ := p.Attributes.Value("url.template")
			status, _ := p.Attributes.Value("http.response.status_code")
			addr, _ := p.Attributes.Value("server.address")
			if p.Count != 1 || p.Sum <= 0 || (tmpl.AsString() == "/transaction") != (status.AsInt64() == 201) || addr.AsString() != "127.0.0.1" {
				t.Errorf("%s point %v: count %d sum %v; want one positive measurement with its status and server", name, p.Attributes.ToSlice(), p.Count, p.Sum)
			}
		}
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

// TestRetriedCallHasAClientSpanPerRequest: a call that lost its first connection is one
// call span with a retry event (its reason) and the retries counter by reason; inside it,
// two client spans: the lost request (error.type transport) and the one resent
// (http.request.resend_count 1), each measured in http.client.request.duration.
func TestRetriedCallHasAClientSpanPerRequest(t *testing.T) {
	tm := newTelemetry(t)
	srv := escrowtest.NewServer()
	t.Cleanup(srv.Close)
	acct := srv.AddCustomer("buyer@example.com")
	c, err := escrow.NewClient(acct.Email, acct.APIKey, escrow.WithBaseURL(srv.URL),
		escrow.WithHTTPClient(&http.Client{Transport: &failFirst{next: srv.Client().Transport}}),
		escrow.WithObserver(tm.obs), escrow.WithMaxWait(time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Customers.Get(t.Context(), escrow.Me); err != nil {
		t.Fatal(err)
	}
	s := tm.span(t, "GET /customer/{customer_id}")
	wantAttrs(t, s.Name, s.Attributes, map[string]string{"http.response.status_code": "200", "escrow.attempts": "2"})
	if len(s.Events) != 1 || s.Events[0].Name != "retry" {
		t.Fatalf("events %+v; want one retry", s.Events)
	}
	wantAttrs(t, "retry event", s.Events[0].Attributes, map[string]string{"reason": "transport_error"})

	reqs := tm.requests(s)
	if len(reqs) != 2 {
		t.Fatalf("client spans %v; want two", names(reqs))
	}
	lost, resent := reqs[0], reqs[1]
	wantAttrs(t, "lost request", lost.Attributes, map[string]string{"error.type": "transport"})
	if _, ok := attr(lost.Attributes, "http.response.status_code"); ok || lost.Status.Code != codes.Error || lost.Status.Description != "transport" {
		t.Errorf("lost request: %v, status %+v; want no status code, status Error \"transport\"", lost.Attributes, lost.Status)
	}
	wantAttrs(t, "resent request", resent.Attributes, map[string]string{"http.request.resend_count": "1", "http.response.status_code": "200"})
	if resent.Status.Code != codes.Unset {
		t.Errorf("resent request status %+v, want unset", resent.Status)
	}

	points := tm.metric(t, "escrow.client.retries").Data.(metricdata.Sum[int64]).DataPoints
	if len(points) != 1 || points[0].Value != 1 {
		t.Fatalf("retries %+v; want one", points)
	}
	wantAttrs(t, "retries", points[0].Attributes.ToSlice(), map[string]string{"reason": "transport_error", "url.template": "/customer/{customer_id}"})
	durations := tm.metric(t, "http.client.request.duration").Data.(metricdata.Histogram[float64]).DataPoints
	if len(durations) != 2 {
		t.Fatalf("request durations %+v; want two series: the lost request and the answered one", durations)
	}
}

// TestFailedCallIsAnErrorSpan: a call answered 404 has status Error, described by its
// error.type "404" (not the error's text), and both durations carry the error type.
func TestFailedCallIsAnErrorSpan(t *testing.T) {
	tm := newTelemetry(t)
	srv := escrowtest.NewServer()
	t.Cleanup(srv.Close)
	c := connect(t, srv, srv.AddCustomer("buyer@example.com"), tm.obs)
	if _, err := c.Transactions.Get(t.Context(), 4242); !errors.Is(err, escrow.ErrNotFound) {
		t.Fatalf("Get: %v", err)
	}
	s := tm.span(t, "GET /transaction/{id}")
	if s.Status.Code != codes.Error || s.Status.Description != "404" {
		t.Errorf("status %+v, want Error \"404\"", s.Status)
	}
	wantAttrs(t, s.Name, s.Attributes, map[string]string{"error.type": "404", "http.response.status_code": "404"})
	reqs := tm.requests(s)
	if len(reqs) != 1 || reqs[0].Status.Code != codes.Error || reqs[0].Status.Description != "" {
		t.Fatalf("requests %v; want one, status Error with no description (the status code says it)", reqs)
	}
	wantAttrs(t, "request", reqs[0].Attributes, map[string]string{"error.type": "404", "http.response.status_code": "404"})
	for _, name := range []string{"http.client.request.duration", "escrow.client.call.duration"} {
		points := tm.metric(t, name).Data.(metricdata.Histogram[float64]).DataPoints
		if len(points) != 1 {
			t.Fatalf("%s: %d points, want 1", name, len(points))
		}
		wantAttrs(t, name, points[0].Attributes.ToSlice(), map[string]string{"error.type": "404"})
	}
}

// emulatorTransport serves requests from an emulator in process, with no network, so that
// a synctest bubble sees every goroutine block durably and its fake clock runs the waits.
type emulatorTransport struct{ e *escrowtest.Emulator }

func (t emulatorTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Body == nil { // a server's request always has one
		r = r.Clone(r.Context())
		r.Body = http.NoBody
	}
	rec := httptest.NewRecorder()
	t.e.ServeHTTP(rec, r)
	return rec.Result(), nil
}

// TestRateLimitWaitIsAnEventAndAMeasurement: a call held back for the endpoint's allowance
// shows the wait as a span event and in escrow.client.rate_limit.wait.
func TestRateLimitWaitIsAnEventAndAMeasurement(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tm := newTelemetry(t)
		e := escrowtest.NewEmulator(escrowtest.WithRateLimit(1, 10*time.Second))
		defer e.Close()
		acct := e.AddCustomer("buyer@example.com")
		c, err := escrow.NewClient(acct.Email, acct.APIKey, escrow.WithBaseURL("http://127.0.0.1/2017-09-01/"),
			escrow.WithHTTPClient(&http.Client{Transport: emulatorTransport{e}}), escrow.WithObserver(tm.obs))
		if err != nil {
			t.Fatal(err)
		}
		for range 2 { // the first answer says none remain for 10 s
			if _, err := c.Customers.Get(t.Context(), escrow.Me); err != nil {
				t.Fatal(err)
			}
		}
		var spans []tracetest.SpanStub
		for _, s := range tm.spans.GetSpans() {
			if s.SpanKind == trace.SpanKindInternal {
				spans = append(spans, s)
			}
		}
		if len(spans) != 2 || len(spans[0].Events) != 0 || len(spans[1].Events) != 1 || spans[1].Events[0].Name != "rate_limit.wait" {
			t.Fatalf("call spans %v; want two, the second with one rate_limit.wait event", spans)
		}
		wantAttrs(t, "wait event", spans[1].Events[0].Attributes, map[string]string{"cause": "exhausted"})
		points := tm.metric(t, "escrow.client.rate_limit.wait").Data.(metricdata.Histogram[float64]).DataPoints
		if len(points) != 1 || points[0].Count != 1 || points[0].Sum <= 0 || points[0].Sum > 10 {
			t.Fatalf("rate-limit waits %+v; want one of up to 10 s", points)
		}
	})
}

// TestSettledWriteHasItsReadInside: an action whose answer was lost is one PATCH call span
// with a settling_read event and its lost request inside; the read that settled it is a GET
// call span inside it, with its own request. No client span is inside another.
func TestSettledWriteHasItsReadInside(t *testing.T) {
	tm := newTelemetry(t)
	srv := escrowtest.NewServer()
	t.Cleanup(srv.Close)
	seller := connect(t, srv, srv.AddCustomer("seller@example.com"), nil)
	buyer := connect(t, srv, srv.AddCustomer("buyer@example.com"), tm.obs)
	tx, err := seller.Transactions.Create(t.Context(), sale(""))
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.InjectFault(escrowtest.Fault{Endpoint: "PATCH /transaction/{id}", Drop: escrowtest.DropAfter}); err != nil {
		t.Fatal(err)
	}
	if _, err := buyer.Transactions.Agree(t.Context(), tx.ID); err != nil {
		t.Fatal(err)
	}
	write, read := tm.span(t, "PATCH /transaction/{id}"), tm.span(t, "GET /transaction/{id}")
	if read.Parent.SpanID() != write.SpanContext.SpanID() {
		t.Errorf("the settling read's parent is %v, want the write %v", read.Parent.SpanID(), write.SpanContext.SpanID())
	}
	if len(write.Events) != 1 || write.Events[0].Name != "settling_read" {
		t.Fatalf("write events %+v; want one settling_read", write.Events)
	}
	wantAttrs(t, "settling read", write.Events[0].Attributes, map[string]string{"escrow.settle.outcome": "present"})
	if write.Status.Code == codes.Error {
		t.Errorf("a settled write's span is an error: %+v", write.Status)
	}
	if w, r := tm.requests(write), tm.requests(read); len(w) != 1 || len(r) != 1 {
		t.Errorf("requests inside the write %v, inside the read %v; want one each", names(w), names(r))
	}
	tm.wantNoNestedClientSpans(t)
}

// TestTelemetryHoldsNoCredential: no span name, attribute, event, status, link or metric
// label shows the API key, the Authorization token or the account's e-mail, after
// successes, retries, a rate-limited account and server errors.
func TestTelemetryHoldsNoCredential(t *testing.T) {
	tm := newTelemetry(t)
	srv := escrowtest.NewServer(escrowtest.WithRateLimit(3, time.Hour))
	t.Cleanup(srv.Close)
	acct := srv.AddCustomer("buyer@example.com")
	c := connect(t, srv, acct, tm.obs, escrow.WithMaxRetries(1), escrow.WithMaxWait(time.Millisecond))
	ctx := t.Context()
	_, _ = c.Customers.Get(ctx, escrow.Me)
	_, _ = c.Transactions.Get(ctx, 1)
	_ = c.Do(ctx, "GET", "customer/me/api_key", nil, nil)
	_, _ = c.Customers.Get(ctx, escrow.Me)
	_, _ = c.Customers.Get(ctx, escrow.Me) // spent: held back, the wait beyond the maximum
	if err := srv.InjectFault(escrowtest.Fault{Endpoint: "*", Status: 500}); err != nil {
		t.Fatal(err)
	}
	_, _ = c.Transactions.Get(ctx, 2)

	dump := tm.dump(t)
	if !strings.Contains(dump, "http.client.request.duration") || !strings.Contains(dump, "error.type") {
		t.Fatalf("the telemetry lacks what the calls should have produced:\n%s", dump)
	}
	token := base64.StdEncoding.EncodeToString([]byte(acct.Email + ":" + acct.APIKey))
	for _, secret := range []string{acct.APIKey, token, acct.Email} {
		if strings.Contains(dump, secret) {
			t.Errorf("the telemetry shows %q:\n%s", secret, dump)
		}
	}
}

// echoingServer answers every request with text that holds the account's e-mail, key and
// token, in the places a server can put text: a 401's message, a 422's field messages, a
// 5xx body, a redirect's URL, a malformed 2xx body, a malformed status line, and a
// Client.Do path's 404.
func echoingServer(t *testing.T, email, key string) *httptest.Server {
	token := base64.StdEncoding.EncodeToString([]byte(email + ":" + key))
	echo := fmt.Sprintf("%s %s %s", email, key, token)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		path := strings.TrimPrefix(r.URL.Path, "/2017-09-01")
		switch {
		case path == "/customer/me":
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprintf(w, `{"error": "invalid credentials for %s"}`, echo)
		case path == "/transaction" && r.Method == "POST":
			w.WriteHeader(http.StatusUnprocessableEntity)
			fmt.Fprintf(w, `{"errors": {"parties": [{"customer": ["%s already has an account"]}]}}`, echo)
		case path == "/transaction/1":
			http.Redirect(w, r, "/2017-09-01/moved/"+email+"?k="+key, http.StatusFound)
		case strings.HasPrefix(path, "/moved/"):
			w.WriteHeader(http.StatusInternalServerError)
			fmt.Fprintf(w, "upstream failed for %s", echo)
		case path == "/transaction/2":
			fmt.Fprintf(w, `{"id": 2, "description": "%s"`, echo)
		case path == "/transaction/3":
			conn, buf, err := w.(http.Hijacker).Hijack()
			if err != nil {
				t.Error(err)
				return
			}
			fmt.Fprintf(buf, "HTTP/1.1 %s OK\r\n\r\n", email)
			buf.Flush()
			conn.Close()
		default:
			w.WriteHeader(http.StatusNotFound)
			fmt.Fprintf(w, `{"message": "no route %s for %s"}`, r.URL.Path, echo)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestTelemetryCarriesNoServerText: whatever a server answers, echoing the account's
// e-mail, key and token wherever it can, no span name, status, attribute, event or metric
// shows them; and a Client.Do call's status does not show its path.
func TestTelemetryCarriesNoServerText(t *testing.T) {
	const email, key = "market@example.com", "kQ9zX4vbLm0pT7wE"
	token := base64.StdEncoding.EncodeToString([]byte(email + ":" + key))
	tm := newTelemetry(t)
	srv := echoingServer(t, email, key)
	c, err := escrow.NewClient(email, key, escrow.WithBaseURL(srv.URL+"/2017-09-01/"), escrow.WithObserver(tm.obs),
		escrow.WithMaxRetries(1), escrow.WithMaxWait(time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	var failures []error
	_, err = c.Customers.Get(ctx, escrow.Me)
	failures = append(failures, err)
	_, err = c.Transactions.Create(ctx, sale(""))
	failures = append(failures, err)
	for id := range int64(3) {
		_, err = c.Transactions.Get(ctx, id+1)
		failures = append(failures, err)
	}
	failures = append(failures, c.Do(ctx, "GET", "partner/private-path-4711/x", nil, nil))
	for i, err := range failures {
		if err == nil {
			t.Fatalf("call %d succeeded; every answer here is a failure", i)
		}
	}

	dump := tm.dump(t)
	for _, want := range []string{"401", "422", "500", "malformed_response", "transport", "404", "url.full"} {
		if !strings.Contains(dump, want) {
			t.Errorf("the telemetry lacks %q, which the calls should have produced:\n%s", want, dump)
		}
	}
	for _, secret := range []string{email, key, token, "%40example.com"} {
		if strings.Contains(dump, secret) {
			t.Errorf("the telemetry shows %q:\n%s", secret, dump)
		}
	}
	for _, s := range tm.spans.GetSpans() {
		if strings.Contains(s.Status.Description, "private-path") || strings.Contains(s.Name, "private-path") {
			t.Errorf("span %q has status %q: the Do path shows", s.Name, s.Status.Description)
		}
		if s.Status.Code == codes.Error && strings.ContainsAny(s.Status.Description, " :/") {
			t.Errorf("span %q has status %q, not an error type", s.Name, s.Status.Description)
		}
	}
}

// deliver hands the handler one delivery, as the API sends it.
func deliver(t *testing.T, h http.Handler, event string, id int64) {
	t.Helper()
	body := fmt.Sprintf(`{"event": %q, "event_type": "transaction", "transaction_id": %d}`, event, id)
	req := httptest.NewRequest(http.MethodPost, "/escrow", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		t.Fatalf("delivery answered %d", rec.Code)
	}
}

// TestReceiverSpansAndMetrics: a delivery has a span linked to the confirming fetch, whose
// span holds the client's GET; its replay (a create handed over before: dropped without a
// fetch) has a span of its own, a root with no link; the hand-over's span is linked to the
// fetch too; the events counter counts the one event handed over, the deliveries counter
// both deliveries by outcome, and the lag and queue depth are recorded.
func TestReceiverSpansAndMetrics(t *testing.T) {
	tm := newTelemetry(t)
	srv := escrowtest.NewServer()
	t.Cleanup(srv.Close)
	acct := srv.AddCustomer("seller@example.com")
	seller := connect(t, srv, acct, tm.obs)
	srv.AddCustomer("buyer@example.com")
	tx, err := seller.Transactions.Create(t.Context(), sale(""))
	if err != nil {
		t.Fatal(err)
	}
	h := webhook.NewHandler(seller, func(context.Context, webhook.ConfirmedEvent) error { return nil },
		webhook.Options{Observer: tm.obs, Refetch: time.Millisecond, MaxRefetch: time.Millisecond})
	defer h.Shutdown(context.Background())
	for range 2 { // the second is a replay
		deliver(t, h, "create", tx.ID)
		if err := h.Flush(t.Context()); err != nil {
			t.Fatal(err)
		}
	}

	confirms := map[trace.SpanID]bool{}
	var gets, deliveries, handovers []tracetest.SpanStub
	for _, s := range tm.spans.GetSpans() {
		switch s.Name {
		case "escrow.webhook confirm":
			confirms[s.SpanContext.SpanID()] = true
		case "GET /transaction/{id}":
			if s.SpanKind == trace.SpanKindInternal { // the call; its request is inside it
				gets = append(gets, s)
			}
		case "escrow.webhook delivery":
			deliveries = append(deliveries, s)
		case "escrow.webhook handover":
			handovers = append(handovers, s)
		}
	}
	if len(confirms) != 1 || len(gets) != 1 || len(deliveries) != 2 || len(handovers) != 1 {
		t.Fatalf("spans %v; want one confirming fetch with its GET, two deliveries, one hand-over", names(tm.spans.GetSpans()))
	}
	for _, g := range gets {
		if !confirms[g.Parent.SpanID()] {
			t.Errorf("a confirming GET is not inside a confirming fetch's span")
		}
	}
	linked := func(s tracetest.SpanStub) bool {
		return len(s.Links) == 1 && confirms[s.Links[0].SpanContext.SpanID()] && !s.Parent.IsValid()
	}
	var outcomes []string
	for i, d := range deliveries {
		v, _ := attr(d.Attributes, "outcome")
		outcomes = append(outcomes, v.AsString())
		switch {
		case i == 0 && !linked(d):
			t.Errorf("delivery span %v is not a root linked to its confirming fetch: links %v", d.Attributes, d.Links)
		case i == 1 && (len(d.Links) != 0 || d.Parent.IsValid()):
			t.Errorf("the replay's span %v is linked to a fetch that was not made: links %v", d.Attributes, d.Links)
		}
	}
	if strings.Join(outcomes, ",") != "confirmed,duplicate" {
		t.Errorf("delivery outcomes %v; want confirmed, then duplicate", outcomes)
	}
	if !linked(handovers[0]) {
		t.Errorf("the hand-over span is not a root linked to its confirming fetch: links %v", handovers[0].Links)
	}
	wantAttrs(t, "hand-over", handovers[0].Attributes, map[string]string{"escrow.event": "create", "escrow.webhook.source": "webhook"})

	events := tm.metric(t, "escrow.webhook.events").Data.(metricdata.Sum[int64]).DataPoints
	if len(events) != 1 || events[0].Value != 1 {
		t.Fatalf("events %+v; want one", events)
	}
	wantAttrs(t, "events", events[0].Attributes.ToSlice(), map[string]string{"escrow.event": "create"})
	byOutcome := map[string]int64{}
	for _, p := range tm.metric(t, "escrow.webhook.deliveries").Data.(metricdata.Sum[int64]).DataPoints {
		v, _ := p.Attributes.Value("outcome")
		byOutcome[v.AsString()] += p.Value
	}
	if byOutcome["confirmed"] != 1 || byOutcome["duplicate"] != 1 || len(byOutcome) != 2 {
		t.Errorf("deliveries by outcome %v; want one confirmed, one duplicate", byOutcome)
	}
	if lag := tm.metric(t, "escrow.webhook.handover.lag").Data.(metricdata.Histogram[float64]).DataPoints; len(lag) != 1 || lag[0].Count != 1 {
		t.Errorf("lag %+v; want one measurement", lag)
	}
	if depth := tm.metric(t, "escrow.webhook.queue.depth").Data.(metricdata.Gauge[int64]).DataPoints; len(depth) != 1 || depth[0].Value != 0 {
		t.Errorf("queue depth %+v; want 0 once flushed", depth)
	}
	token := base64.StdEncoding.EncodeToString([]byte(acct.Email + ":" + acct.APIKey))
	if dump := tm.dump(t); strings.Contains(dump, acct.APIKey) || strings.Contains(dump, token) || strings.Contains(dump, acct.Email) {
		t.Errorf("the receiver's telemetry shows a credential:\n%s", dump)
	}
}

// dump renders every span (name, attributes, status, events, links) and every metric with
// its data points, for a search of what they hold.
func (tm *telemetry) dump(t *testing.T) string {
	t.Helper()
	var b strings.Builder
	for _, s := range tm.spans.GetSpans() {
		fmt.Fprintf(&b, "%s %v %s %v %v\n", s.Name, s.Attributes, s.Status.Description, s.Events, s.Links)
	}
	var rm metricdata.ResourceMetrics
	if err := tm.reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			fmt.Fprintf(&b, "%s %+v\n", m.Name, m.Data)
		}
	}
	return b.String()
}

// oneTransaction answers every request with a small transaction, in memory, so that the
// benchmark measures the client and its observer rather than a network.
type oneTransaction struct{}

func (oneTransaction) RoundTrip(req *http.Request) (*http.Response, error) {
	doc := `{"id": 29292, "currency": "usd", "parties": [{"role": "buyer", "customer": "me", "agreed": true}], "items": []}`
	return &http.Response{
		StatusCode: http.StatusOK, Header: http.Header{"Content-Type": {"application/json"}, "Ratelimit-Remaining": {"1000"}},
		Body: io.NopCloser(bytes.NewReader([]byte(doc))), ContentLength: int64(len(doc)), Request: req,
	}, nil
}

// BenchmarkObserverCost is one Get without an observer, and with escrowotel recording a
// span (sampled, exported in batches to nowhere) and the duration histogram: the observer's cost per call.
func BenchmarkObserverCost(b *testing.B) {
	run := func(b *testing.B, opts ...escrow.Option) {
		b.ReportAllocs()
		c, err := escrow.NewClient("partner@example.com", "4171_benchmarkkey", append([]escrow.Option{
			escrow.WithBaseURL("https://api.example.test/2017-09-01/"), escrow.WithHTTPClient(&http.Client{Transport: oneTransaction{}}),
		}, opts...)...)
		if err != nil {
			b.Fatal(err)
		}
		ctx := context.Background()
		for b.Loop() {
			if _, err := c.Transactions.Get(ctx, 29292); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.Run("none", func(b *testing.B) { run(b) })
	b.Run("escrowotel", func(b *testing.B) {
		tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(discard{}))
		defer tp.Shutdown(context.Background())
		mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
		run(b, escrow.WithObserver(escrowotel.New(escrowotel.WithTracerProvider(tp), escrowotel.WithMeterProvider(mp))))
	})
}

// discard is an exporter that drops what it is given, as a fast backend would take it.
type discard struct{}

func (discard) ExportSpans(context.Context, []sdktrace.ReadOnlySpan) error { return nil }
func (discard) Shutdown(context.Context) error                             { return nil }

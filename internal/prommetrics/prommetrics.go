// Package prommetrics keeps the SDK client's and the webhook receiver's metrics in memory
// and writes them in Prometheus' text exposition format, for `escrow webhooks listen
// --metrics-addr`.
//
// Why not OpenTelemetry's Prometheus exporter or prometheus/client_golang: either would
// bring OpenTelemetry's SDK or the Prometheus client, with protobuf and their own
// dependencies, into every build of the CLI, for ten metrics. The SDK's own hooks
// (escrow.Observer, webhook.Observer) already hand over each call and each receiving step
// whole, so a few counters and histograms and a writer of the text format (version 0.0.4)
// give the same page with no dependency at all. Names follow what OpenTelemetry's
// Prometheus exporter makes of package escrowotel's instruments
// ("http.client.request.duration" in seconds is http_client_request_duration_seconds, a
// counter gains _total, dots in label names become underscores), so one dashboard reads
// either.
package prommetrics

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"

	escrow "github.com/escrowkit/escrow-go"
	"github.com/escrowkit/escrow-go/webhook"
)

// durationBuckets are OpenTelemetry's advised boundaries for HTTP client durations, in
// seconds; waitBuckets cover waits from a backoff step to a rate-limit window.
var (
	durationBuckets = []float64{0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10}
	waitBuckets     = []float64{0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 600}
)

// Metrics is an escrow.Observer and a webhook.Observer that counts what it sees. It is
// safe for concurrent use; its zero value is not: use New.
type Metrics struct {
	mu                                        sync.Mutex
	families                                  []*family // in the order written
	requestDuration, callDuration             *family
	rateLimitWait, lag                        *family
	retries, deliveries, events, webhookRetry *family
	pruned, depth                             *family
}

var (
	_ escrow.AttemptObserver = (*Metrics)(nil)
	_ webhook.Observer       = (*Metrics)(nil)
)

// New returns empty metrics.
func New() *Metrics {
	m := &Metrics{}
	add := func(f *family) *family { m.families = append(m.families, f); return f }
	m.requestDuration = add(&family{name: "http_client_request_duration_seconds", kind: "histogram", help: "Duration of HTTP client requests.", buckets: durationBuckets})
	m.callDuration = add(&family{name: "escrow_client_call_duration_seconds", kind: "histogram", help: "Duration of SDK calls, each with its retries and waits.", buckets: durationBuckets})
	m.retries = add(&family{name: "escrow_client_retries_total", kind: "counter", help: "Requests the SDK sent again, by reason."})
	m.rateLimitWait = add(&family{name: "escrow_client_rate_limit_wait_seconds", kind: "histogram", help: "Waits of SDK calls for the endpoint's rate-limit allowance.", buckets: waitBuckets})
	m.deliveries = add(&family{name: "escrow_webhook_deliveries_total", kind: "counter", help: "Webhook deliveries, by outcome."})
	m.events = add(&family{name: "escrow_webhook_events_total", kind: "counter", help: "Confirmed events handed over to the callback."})
	m.depth = add(&family{name: "escrow_webhook_queue_depth", kind: "gauge", help: "Transactions with deliveries waiting to be confirmed."})
	m.lag = add(&family{name: "escrow_webhook_handover_lag_seconds", kind: "histogram", help: "Time from a delivery to its event's hand-over.", buckets: waitBuckets})
	m.webhookRetry = add(&family{name: "escrow_webhook_retries_total", kind: "counter", help: "Batches of a transaction tried again after a failure."})
	m.pruned = add(&family{name: "escrow_webhook_pruned_total", kind: "counter", help: "Finished transactions the store's pruning forgot."})
	return m
}

// family is one metric and its series, by label set.
type family struct {
	name, kind, help string
	buckets          []float64 // histograms only
	series           map[string]*series
}

// series is one label set's value: a count or gauge, or a histogram's buckets and sum.
type series struct {
	labels string // rendered: `a="x",b="y"`
	value  float64
	counts []uint64 // per bucket, not cumulative; the last is +Inf
	sum    float64
}

// labels renders name/value pairs; values are escaped as the format asks.
func labels(kv ...string) string {
	var b strings.Builder
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] == "" {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(kv[i])
		b.WriteString(`="`)
		b.WriteString(strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(kv[i+1]))
		b.WriteByte('"')
	}
	return b.String()
}

func (f *family) get(lbl string) *series {
	if f.series == nil {
		f.series = map[string]*series{}
	}
	s := f.series[lbl]
	if s == nil {
		s = &series{labels: lbl}
		if f.buckets != nil {
			s.counts = make([]uint64, len(f.buckets)+1)
		}
		f.series[lbl] = s
	}
	return s
}

func (f *family) add(lbl string, v float64) { f.get(lbl).value += v }

func (f *family) set(lbl string, v float64) { f.get(lbl).value = v }

func (f *family) observe(lbl string, v float64) {
	s := f.get(lbl)
	i, _ := slices.BinarySearch(f.buckets, v) // a value on a boundary counts in its bucket (le)
	s.counts[i]++
	s.sum += v
}

// callLabels are the labels of a call's series, then extra name/value pairs: the request's
// method, the server, the route template.
func callLabels(method string, c *escrow.Call, extra ...string) string {
	return labels(append([]string{"http_request_method", method, "server_address", c.ServerAddress,
		"server_port", strconv.Itoa(c.ServerPort), "url_template", c.Route}, extra...)...)
}

// statusText is a status code as a label value; "" (no label) for none.
func statusText(code int) string {
	if code == 0 {
		return ""
	}
	return strconv.Itoa(code)
}

// CallStart returns ctx: calls are measured when they end.
func (m *Metrics) CallStart(ctx context.Context, _ *escrow.Call) context.Context { return ctx }

// CallEnd records a call's duration, retries and waits.
func (m *Metrics) CallEnd(_ context.Context, c *escrow.Call) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.callDuration.observe(callLabels(c.Method, c, "http_response_status_code", statusText(c.StatusCode), "error_type", c.ErrorType()), c.Duration().Seconds())
	for _, r := range c.Retries {
		m.retries.add(callLabels(c.Method, c, "reason", string(r.Reason)), 1)
	}
	for _, w := range c.RateLimitWaits {
		m.rateLimitWait.observe(callLabels(c.Method, c, "cause", string(w.Cause)), w.Wait.Seconds())
	}
}

// AttemptStart returns ctx: requests are measured when they end.
func (m *Metrics) AttemptStart(ctx context.Context, _ *escrow.Attempt) context.Context { return ctx }

// AttemptEnd records a request's duration, as http.client.request.duration.
func (m *Metrics) AttemptEnd(_ context.Context, a *escrow.Attempt) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.requestDuration.observe(callLabels(a.Method, a.Call, "http_response_status_code", statusText(a.StatusCode), "error_type", a.ErrorType()), a.Duration().Seconds())
}

// Delivery counts a delivery by outcome.
func (m *Metrics) Delivery(_ context.Context, d webhook.Delivery) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.deliveries.add(labels("outcome", string(d.Outcome)), 1)
}

// ConfirmStart returns ctx.
func (m *Metrics) ConfirmStart(ctx context.Context, _ *webhook.Confirm) context.Context { return ctx }

// ConfirmEnd does nothing: the confirming call is measured as a client call.
func (m *Metrics) ConfirmEnd(context.Context, *webhook.Confirm) {}

// HandoverStart returns ctx.
func (m *Metrics) HandoverStart(ctx context.Context, _ *webhook.Handover) context.Context {
	return ctx
}

// HandoverEnd counts an event the callback took, and its lag.
func (m *Metrics) HandoverEnd(_ context.Context, h *webhook.Handover) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if lag := h.Lag(); lag > 0 {
		m.lag.observe(labels("escrow_webhook_source", string(h.Source)), lag.Seconds())
	}
	if h.Err == nil {
		m.events.add(labels("escrow_event", string(h.Event), "escrow_webhook_source", string(h.Source)), 1)
	}
}

// Retry counts a batch tried again.
func (m *Metrics) Retry(context.Context, webhook.Retry) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.webhookRetry.add("", 1)
}

// QueueDepth sets the gauge of transactions waiting.
func (m *Metrics) QueueDepth(_ context.Context, n int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.depth.set("", float64(n))
}

// Pruned counts what pruning removed.
func (m *Metrics) Pruned(_ context.Context, p webhook.Prune) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.pruned.add("", float64(p.Removed))
}

// WriteTo writes every metric in the text exposition format (version 0.0.4), series in
// the order of their labels so that two scrapes compare line by line.
func (m *Metrics) WriteTo(w io.Writer) (int64, error) {
	cw := &countingWriter{w: w}
	bw := bufio.NewWriter(cw)
	m.mu.Lock()
	for _, f := range m.families {
		fmt.Fprintf(bw, "# HELP %s %s\n# TYPE %s %s\n", f.name, f.help, f.name, f.kind)
		keys := make([]string, 0, len(f.series))
		for k := range f.series {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			f.write(bw, f.series[k])
		}
	}
	m.mu.Unlock()
	err := bw.Flush()
	return cw.n, err
}

func (f *family) write(w io.Writer, s *series) {
	if f.buckets == nil {
		fmt.Fprintf(w, "%s%s %s\n", f.name, braces(s.labels), number(s.value))
		return
	}
	var cum uint64
	for i, c := range s.counts {
		cum += c
		le := "+Inf"
		if i < len(f.buckets) {
			le = number(f.buckets[i])
		}
		fmt.Fprintf(w, "%s_bucket%s %d\n", f.name, braces(join(s.labels, `le="`+le+`"`)), cum)
	}
	fmt.Fprintf(w, "%s_sum%s %s\n", f.name, braces(s.labels), number(s.sum))
	fmt.Fprintf(w, "%s_count%s %d\n", f.name, braces(s.labels), cum)
}

func braces(lbl string) string {
	if lbl == "" {
		return ""
	}
	return "{" + lbl + "}"
}

func join(a, b string) string {
	if a == "" {
		return b
	}
	return a + "," + b
}

func number(v float64) string {
	if math.IsInf(v, 1) {
		return "+Inf"
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// ServeHTTP serves the metrics as Prometheus scrapes them.
func (m *Metrics) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	_, _ = m.WriteTo(w)
}

// Package escrowotel reports what the escrow SDK and its webhook receiver do as
// OpenTelemetry traces and metrics. It is a module of its own, so that programs that do not
// import it never download OpenTelemetry: the SDK has only small hook interfaces
// (escrow.Observer, webhook.Observer), which an [*Observer] implements.
//
//	obs := escrowotel.New() // the global tracer and meter providers
//	client, err := escrow.NewClient(email, key, escrow.WithObserver(obs))
//	handler := webhook.NewHandler(client, onEvent, webhook.Options{Observer: obs})
//
// # Traces
//
// Spans follow OpenTelemetry's HTTP client conventions. Each SDK call is one span of kind
// internal, named "{METHOD} {route template}" ("GET /transaction/{id}") and started in
// the caller's context (so it is a child of the caller's span), whatever its retries,
// waits and settling reads. Inside it, each HTTP request the call sends is a span of kind
// client with the same name: the first, each retry, each write sent again, each redirect
// followed. So client spans never nest, and a backend that counts client spans counts
// requests, as it does for any other HTTP client. (A transport given with
// escrow.WithHTTPClient that is traced too, by otelhttp say, would add a second client span
// per request inside the first: leave it untraced.)
//
// A call's span has http.request.method, url.template, server.address, server.port,
// http.response.status_code (of the last answer), escrow.attempts, and error.type with
// status Error when it failed. Span events mark each retry (its reason), each wait for
// the rate limit and each settling read. A read that settles an ambiguous write is a call
// of its own, inside the write's span.
//
// A request's span has http.request.method, server.address, server.port, url.template,
// url.full (the request's URL, the account's e-mail, key and token removed),
// http.request.resend_count when it is not the call's first request,
// http.response.status_code, and error.type with status Error for an answer of 4xx or 5xx
// or none at all. It ends when the answer's headers arrived (or the request failed):
// reading the body belongs to the call.
//
// No span carries text the server sent: a span's status description is its error.type,
// never the error's text, the answer's body or a path Client.Do was given.
//
// The receiver has a span per confirming fetch ("escrow.webhook confirm", with the client's
// GET inside it), per delivery ("escrow.webhook delivery", from its arrival to its outcome)
// and per hand-over to the callback ("escrow.webhook handover", the callback's context);
// deliveries and hand-overs are linked to the confirming fetch that decided them.
//
// # Metrics
//
//	http.client.request.duration   histogram, s   per HTTP request: method, server.address, server.port,
//	                                              url.template, status, error.type
//	escrow.client.call.duration    histogram, s   per SDK call, its retries and waits included: the same
//	escrow.client.retries          counter        reason, method, server, url.template
//	escrow.client.rate_limit.wait  histogram, s   cause, method, server, url.template
//	escrow.webhook.deliveries      counter        outcome
//	escrow.webhook.events          counter        escrow.event, escrow.webhook.source: events handed over
//	escrow.webhook.queue.depth     gauge          transactions with deliveries waiting
//	escrow.webhook.handover.lag    histogram, s   delivery to hand-over
//	escrow.webhook.retries         counter        batches tried again
//	escrow.webhook.pruned          counter        records the store's pruning removed
//
// No attribute, event or label carries a credential or server text: the SDK hands
// observers nothing that holds a credential, error texts are never exported (error.type
// stands for them), and the callback's own errors are reported only as having failed.
package escrowotel

import (
	"context"

	escrow "github.com/escrowkit/escrow-go"
	"github.com/escrowkit/escrow-go/webhook"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
	"go.opentelemetry.io/otel/trace"
)

// ScopeName is the instrumentation scope of the tracer and the meter.
const ScopeName = "github.com/escrowkit/escrow-go/escrowotel"

// Attribute keys of this package beyond OpenTelemetry's conventions.
const (
	RetryReasonKey     = attribute.Key("reason")
	RateLimitCauseKey  = attribute.Key("cause")
	WaitKey            = attribute.Key("escrow.wait")
	SettleOutcomeKey   = attribute.Key("escrow.settle.outcome")
	ReadDurationKey    = attribute.Key("escrow.settle.read_duration")
	OutcomeKey         = attribute.Key("outcome")
	EventKey           = attribute.Key("escrow.event")
	SourceKey          = attribute.Key("escrow.webhook.source")
	TransactionIDKey   = attribute.Key("escrow.transaction.id")
	PrunedKey          = attribute.Key("escrow.webhook.pruned")
	ConfirmedEventsKey = attribute.Key("escrow.webhook.events")
	// AttemptsKey is the number of HTTP requests an SDK call sent, on the call's span.
	AttemptsKey = attribute.Key("escrow.attempts")
)

// Option configures [New].
type Option func(*config)

type config struct {
	tp trace.TracerProvider
	mp metric.MeterProvider
}

// WithTracerProvider sets where spans go; default otel.GetTracerProvider().
func WithTracerProvider(tp trace.TracerProvider) Option { return func(c *config) { c.tp = tp } }

// WithMeterProvider sets where metrics go; default otel.GetMeterProvider().
func WithMeterProvider(mp metric.MeterProvider) Option { return func(c *config) { c.mp = mp } }

// Observer reports SDK calls and webhook receiving as spans and metrics. It implements
// escrow.Observer and webhook.Observer; one Observer may serve many clients and handlers.
// It is safe for concurrent use.
type Observer struct {
	tracer trace.Tracer

	requestDuration metric.Float64Histogram
	callDuration    metric.Float64Histogram
	retries         metric.Int64Counter
	rateLimitWait   metric.Float64Histogram

	deliveries   metric.Int64Counter
	events       metric.Int64Counter
	depth        metric.Int64Gauge
	lag          metric.Float64Histogram
	batchRetries metric.Int64Counter
	pruned       metric.Int64Counter
}

var (
	_ escrow.AttemptObserver = (*Observer)(nil)
	_ webhook.Observer       = (*Observer)(nil)
)

// durationBuckets are the boundaries OpenTelemetry's HTTP conventions advise for
// http.client.request.duration, in seconds.
var durationBuckets = []float64{0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10}

// waitBuckets cover waits from a backoff step to a rate-limit window, in seconds.
var waitBuckets = []float64{0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 600}

// New returns an Observer that reports to the global providers, or those the options give.
// An instrument the meter cannot create is reported to otel.Handle and left out.
func New(opts ...Option) *Observer {
	var c config
	for _, opt := range opts {
		opt(&c)
	}
	if c.tp == nil {
		c.tp = otel.GetTracerProvider()
	}
	if c.mp == nil {
		c.mp = otel.GetMeterProvider()
	}
	m := c.mp.Meter(ScopeName, metric.WithInstrumentationVersion(escrow.Version), metric.WithSchemaURL(semconv.SchemaURL))
	o := &Observer{tracer: c.tp.Tracer(ScopeName, trace.WithInstrumentationVersion(escrow.Version), trace.WithSchemaURL(semconv.SchemaURL))}
	var err error
	keep := func(e error) {
		if e != nil && err == nil {
			err = e
		}
	}
	var e error
	o.requestDuration, e = m.Float64Histogram("http.client.request.duration", metric.WithUnit("s"),
		metric.WithDescription("Duration of HTTP client requests."), metric.WithExplicitBucketBoundaries(durationBuckets...))
	keep(e)
	o.callDuration, e = m.Float64Histogram("escrow.client.call.duration", metric.WithUnit("s"),
		metric.WithDescription("Duration of SDK calls, each with its retries and waits."), metric.WithExplicitBucketBoundaries(durationBuckets...))
	keep(e)
	o.retries, e = m.Int64Counter("escrow.client.retries", metric.WithUnit("{retry}"), metric.WithDescription("Requests the SDK sent again, by reason."))
	keep(e)
	o.rateLimitWait, e = m.Float64Histogram("escrow.client.rate_limit.wait", metric.WithUnit("s"),
		metric.WithDescription("Waits of SDK calls for the endpoint's rate-limit allowance."), metric.WithExplicitBucketBoundaries(waitBuckets...))
	keep(e)
	o.deliveries, e = m.Int64Counter("escrow.webhook.deliveries", metric.WithUnit("{delivery}"), metric.WithDescription("Webhook deliveries, by outcome."))
	keep(e)
	o.events, e = m.Int64Counter("escrow.webhook.events", metric.WithUnit("{event}"), metric.WithDescription("Confirmed events handed over to the callback."))
	keep(e)
	o.depth, e = m.Int64Gauge("escrow.webhook.queue.depth", metric.WithUnit("{transaction}"), metric.WithDescription("Transactions with deliveries waiting to be confirmed."))
	keep(e)
	o.lag, e = m.Float64Histogram("escrow.webhook.handover.lag", metric.WithUnit("s"),
		metric.WithDescription("Time from a delivery to its event's hand-over."), metric.WithExplicitBucketBoundaries(waitBuckets...))
	keep(e)
	o.batchRetries, e = m.Int64Counter("escrow.webhook.retries", metric.WithUnit("{retry}"), metric.WithDescription("Batches of a transaction tried again after a failure."))
	keep(e)
	o.pruned, e = m.Int64Counter("escrow.webhook.pruned", metric.WithUnit("{transaction}"), metric.WithDescription("Finished transactions the store's pruning forgot."))
	keep(e)
	if err != nil {
		otel.Handle(err)
	}
	return o
}

// knownMethods are the methods OpenTelemetry's conventions name; any other is "_OTHER".
var knownMethods = map[string]bool{"GET": true, "POST": true, "PUT": true, "PATCH": true, "DELETE": true, "HEAD": true, "OPTIONS": true, "CONNECT": true, "TRACE": true}

// callAttrs are the attributes a call's span starts with and its metrics carry; a
// request's span and measurements carry them too, with the request's own method.
func callAttrs(method string, c *escrow.Call) []attribute.KeyValue {
	attrs := make([]attribute.KeyValue, 0, 10)
	if knownMethods[method] {
		attrs = append(attrs, semconv.HTTPRequestMethodKey.String(method))
	} else {
		attrs = append(attrs, semconv.HTTPRequestMethodOther, semconv.HTTPRequestMethodOriginal(method))
	}
	attrs = append(attrs, semconv.ServerAddress(c.ServerAddress), semconv.ServerPort(c.ServerPort))
	if c.Route != "" {
		attrs = append(attrs, semconv.URLTemplate(c.Route))
	}
	return attrs
}

// outcomeAttrs are what an answer adds to the attributes: its status, if one came, and
// the error type, if it failed.
func outcomeAttrs(attrs []attribute.KeyValue, status int, errorType string) []attribute.KeyValue {
	if status > 0 {
		attrs = append(attrs, semconv.HTTPResponseStatusCode(status))
	}
	if errorType != "" {
		attrs = append(attrs, semconv.ErrorTypeKey.String(errorType))
	}
	return attrs
}

// spanName is "{METHOD} {route template}", or the method alone without a template, as
// the conventions ask ("HTTP" for a method they do not know).
func spanName(method string, c *escrow.Call) string {
	if !knownMethods[method] {
		method = "HTTP"
	}
	if c.Route == "" {
		return method
	}
	return method + " " + c.Route
}

// CallStart starts the call's span in ctx, so that it is a child of the caller's.
func (o *Observer) CallStart(ctx context.Context, c *escrow.Call) context.Context {
	ctx, _ = o.tracer.Start(ctx, spanName(c.Method, c), trace.WithSpanKind(trace.SpanKindInternal),
		trace.WithTimestamp(c.Start), trace.WithAttributes(callAttrs(c.Method, c)...))
	return ctx
}

// CallEnd ends the call's span, with its events, and records its metrics.
func (o *Observer) CallEnd(ctx context.Context, c *escrow.Call) {
	span := trace.SpanFromContext(ctx)
	base := callAttrs(c.Method, c)
	o.callEvents(ctx, span, base, c)
	errorType := c.ErrorType()
	end := outcomeAttrs(base, c.StatusCode, errorType)
	o.callDuration.Record(ctx, c.Duration().Seconds(), metric.WithAttributes(end...))
	if errorType != "" {
		// The SDK's classification, never the error's text: that may quote the server,
		// which may echo the account's e-mail or a path Client.Do was given.
		span.SetStatus(codes.Error, errorType)
	}
	span.SetAttributes(append(end[len(base):], AttemptsKey.Int(c.Attempts))...)
	span.End(trace.WithTimestamp(c.End))
}

// callEvents adds a call's retries, rate-limit waits and settling reads to its span, and
// counts the retries and waits.
func (o *Observer) callEvents(ctx context.Context, span trace.Span, base []attribute.KeyValue, c *escrow.Call) {
	for _, r := range c.Retries {
		ev := []attribute.KeyValue{RetryReasonKey.String(string(r.Reason)), WaitKey.Float64(r.Wait.Seconds())}
		if r.StatusCode > 0 {
			ev = append(ev, semconv.HTTPResponseStatusCode(r.StatusCode))
		}
		span.AddEvent("retry", trace.WithTimestamp(r.At), trace.WithAttributes(ev...))
		o.retries.Add(ctx, 1, metric.WithAttributes(append(base, RetryReasonKey.String(string(r.Reason)))...))
	}
	for _, w := range c.RateLimitWaits {
		span.AddEvent("rate_limit.wait", trace.WithTimestamp(w.At), trace.WithAttributes(
			RateLimitCauseKey.String(string(w.Cause)), WaitKey.Float64(w.Wait.Seconds())))
		o.rateLimitWait.Record(ctx, w.Wait.Seconds(), metric.WithAttributes(append(base, RateLimitCauseKey.String(string(w.Cause)))...))
	}
	for _, s := range c.SettlingReads {
		span.AddEvent("settling_read", trace.WithTimestamp(s.End), trace.WithAttributes(
			SettleOutcomeKey.String(string(s.Outcome)), ReadDurationKey.Float64(s.End.Sub(s.Start).Seconds())))
	}
}

// AttemptStart starts the request's client span inside the call's.
func (o *Observer) AttemptStart(ctx context.Context, a *escrow.Attempt) context.Context {
	attrs := append(callAttrs(a.Method, a.Call), semconv.URLFull(a.URL))
	if a.ResendCount > 0 {
		attrs = append(attrs, semconv.HTTPRequestResendCount(a.ResendCount))
	}
	ctx, _ = o.tracer.Start(ctx, spanName(a.Method, a.Call), trace.WithSpanKind(trace.SpanKindClient),
		trace.WithTimestamp(a.Start), trace.WithAttributes(attrs...))
	return ctx
}

// AttemptEnd ends the request's span and records http.client.request.duration.
func (o *Observer) AttemptEnd(ctx context.Context, a *escrow.Attempt) {
	span := trace.SpanFromContext(ctx)
	base := callAttrs(a.Method, a.Call)
	errorType := a.ErrorType()
	end := outcomeAttrs(base, a.StatusCode, errorType)
	o.requestDuration.Record(ctx, a.Duration().Seconds(), metric.WithAttributes(end...))
	switch {
	case errorType == "":
	case a.StatusCode > 0:
		span.SetStatus(codes.Error, "") // the conventions: the status code says why
	default:
		span.SetStatus(codes.Error, errorType)
	}
	span.SetAttributes(end[len(base):]...)
	span.End(trace.WithTimestamp(a.End))
}

// Delivery records a delivery's outcome, and a span from its arrival to its outcome.
// One decided by a confirming fetch starts a trace of its own, linked to the fetch; one
// refused or dropped as it arrived is a child of the request's span, if any.
func (o *Observer) Delivery(ctx context.Context, d webhook.Delivery) {
	o.deliveries.Add(ctx, 1, metric.WithAttributes(OutcomeKey.String(string(d.Outcome))))
	attrs := []attribute.KeyValue{OutcomeKey.String(string(d.Outcome))}
	if d.Event != "" {
		attrs = append(attrs, EventKey.String(string(d.Event)))
	}
	if d.TransactionID != 0 {
		attrs = append(attrs, TransactionIDKey.Int64(d.TransactionID))
	}
	if d.StatusCode != 0 {
		attrs = append(attrs, semconv.HTTPResponseStatusCode(d.StatusCode))
	}
	opts := []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindConsumer), trace.WithTimestamp(d.Received), trace.WithAttributes(attrs...)}
	if d.Outcome != webhook.DeliveryRefused && d.Outcome != webhook.DeliveryDropped {
		opts = append(opts, trace.WithNewRoot(), trace.WithLinks(trace.LinkFromContext(ctx)))
	}
	_, span := o.tracer.Start(ctx, "escrow.webhook delivery", opts...)
	if d.Outcome == webhook.DeliveryRefused {
		span.SetStatus(codes.Error, "refused")
	}
	span.End()
}

// ConfirmStart starts the confirming fetch's span; the client's call is made inside it.
func (o *Observer) ConfirmStart(ctx context.Context, c *webhook.Confirm) context.Context {
	ctx, _ = o.tracer.Start(ctx, "escrow.webhook confirm", trace.WithTimestamp(c.Start), trace.WithAttributes(
		TransactionIDKey.Int64(c.TransactionID), ConfirmedEventsKey.Int(len(c.Events))))
	return ctx
}

// ConfirmEnd ends the confirming fetch's span.
func (o *Observer) ConfirmEnd(ctx context.Context, c *webhook.Confirm) {
	span := trace.SpanFromContext(ctx)
	if c.Err != nil {
		span.SetStatus(codes.Error, "the confirming fetch failed")
	}
	span.End(trace.WithTimestamp(c.End))
}

// HandoverStart starts the hand-over's span, linked to the confirming fetch: the callback
// runs in it.
func (o *Observer) HandoverStart(ctx context.Context, h *webhook.Handover) context.Context {
	ctx, _ = o.tracer.Start(ctx, "escrow.webhook handover", trace.WithNewRoot(), trace.WithLinks(trace.LinkFromContext(ctx)),
		trace.WithSpanKind(trace.SpanKindConsumer), trace.WithTimestamp(h.Start), trace.WithAttributes(
			EventKey.String(string(h.Event)), TransactionIDKey.Int64(h.TransactionID), SourceKey.String(string(h.Source))))
	return ctx
}

// HandoverEnd ends the hand-over's span and counts the event when the callback took it.
func (o *Observer) HandoverEnd(ctx context.Context, h *webhook.Handover) {
	span := trace.SpanFromContext(ctx)
	if lag := h.Lag(); lag > 0 {
		span.SetAttributes(attribute.Float64("escrow.webhook.lag", lag.Seconds()))
		o.lag.Record(ctx, lag.Seconds(), metric.WithAttributes(SourceKey.String(string(h.Source))))
	}
	if h.Err != nil {
		// The callback's error is the application's: its text may hold anything.
		span.SetAttributes(semconv.ErrorTypeKey.String("callback"))
		span.SetStatus(codes.Error, "the callback failed")
	} else {
		o.events.Add(ctx, 1, metric.WithAttributes(EventKey.String(string(h.Event)), SourceKey.String(string(h.Source))))
	}
	span.End(trace.WithTimestamp(h.End))
}

// Retry counts a batch tried again.
func (o *Observer) Retry(ctx context.Context, r webhook.Retry) {
	o.batchRetries.Add(ctx, 1)
}

// QueueDepth records the transactions waiting.
func (o *Observer) QueueDepth(ctx context.Context, n int) {
	o.depth.Record(ctx, int64(n))
}

// Pruned counts what the store's pruning removed, in a span of its own.
func (o *Observer) Pruned(ctx context.Context, p webhook.Prune) {
	o.pruned.Add(ctx, p.Removed)
	_, span := o.tracer.Start(ctx, "escrow.webhook prune", trace.WithTimestamp(p.Start), trace.WithAttributes(PrunedKey.Int64(p.Removed)))
	if p.Err != nil {
		span.SetStatus(codes.Error, "pruning failed")
	}
	span.End(trace.WithTimestamp(p.End))
}

package prommetrics

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	escrow "github.com/escrowkit/escrow-go"
	"github.com/escrowkit/escrow-go/webhook"
)

// TestWriteToShowsEachSeries: calls, requests, deliveries and hand-overs appear as the
// series the text format defines: cumulative buckets, _sum and _count, _total counters, a
// gauge, labels escaped and empty labels left out; requests and calls each in their own
// duration, with the server's address and port.
func TestWriteToShowsEachSeries(t *testing.T) {
	m := New()
	ctx := context.Background()
	start := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	get := &escrow.Call{Method: "GET", Route: "/transaction/{id}", ServerAddress: "api.escrow.com", ServerPort: 443, StatusCode: 200, Start: start, End: start.Add(20 * time.Millisecond), Attempts: 2,
		Retries:        []escrow.Retry{{Reason: escrow.RetryRateLimited, StatusCode: 429, Wait: time.Second}},
		RateLimitWaits: []escrow.RateLimitWait{{Wait: time.Second, Cause: escrow.RateLimitTooManyRequests}}}
	m.AttemptEnd(ctx, &escrow.Attempt{Call: get, Method: "GET", StatusCode: 429, Start: start, End: start.Add(3 * time.Millisecond)})
	m.AttemptEnd(ctx, &escrow.Attempt{Call: get, Method: "GET", StatusCode: 200, ResendCount: 1, Start: start.Add(time.Second), End: start.Add(time.Second + 4*time.Millisecond)})
	m.CallEnd(ctx, get)
	m.CallEnd(ctx, &escrow.Call{Method: "GET", ServerAddress: "api.escrow.com", ServerPort: 443, StatusCode: 404, Err: &escrow.APIError{StatusCode: 404}, Start: start, End: start.Add(10 * time.Millisecond)})
	m.Delivery(ctx, webhook.Delivery{Outcome: webhook.DeliveryConfirmed})
	m.Delivery(ctx, webhook.Delivery{Outcome: webhook.DeliveryConfirmed})
	m.Delivery(ctx, webhook.Delivery{Outcome: webhook.DeliveryRefused})
	m.HandoverEnd(ctx, &webhook.Handover{Event: `a"b`, Source: webhook.FromWebhook, Delivered: start, Start: start.Add(3 * time.Second)})
	m.HandoverEnd(ctx, &webhook.Handover{Event: "agree", Source: webhook.FromReconcile, Err: context.Canceled})
	m.QueueDepth(ctx, 7)
	m.QueueDepth(ctx, 3)

	var b strings.Builder
	if _, err := m.WriteTo(&b); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, line := range []string{
		"# TYPE http_client_request_duration_seconds histogram",
		`http_client_request_duration_seconds_bucket{http_request_method="GET",server_address="api.escrow.com",server_port="443",url_template="/transaction/{id}",http_response_status_code="429",error_type="429",le="0.005"} 1`,
		`http_client_request_duration_seconds_sum{http_request_method="GET",server_address="api.escrow.com",server_port="443",url_template="/transaction/{id}",http_response_status_code="200"} 0.004`,
		`http_client_request_duration_seconds_count{http_request_method="GET",server_address="api.escrow.com",server_port="443",url_template="/transaction/{id}",http_response_status_code="200"} 1`,
		"# TYPE escrow_client_call_duration_seconds histogram",
		`escrow_client_call_duration_seconds_bucket{http_request_method="GET",server_address="api.escrow.com",server_port="443",url_template="/transaction/{id}",http_response_status_code="200",le="0.01"} 0`,
		`escrow_client_call_duration_seconds_bucket{http_request_method="GET",server_address="api.escrow.com",server_port="443",url_template="/transaction/{id}",http_response_status_code="200",le="0.025"} 1`,
		`escrow_client_call_duration_seconds_bucket{http_request_method="GET",server_address="api.escrow.com",server_port="443",url_template="/transaction/{id}",http_response_status_code="200",le="+Inf"} 1`,
		`escrow_client_call_duration_seconds_sum{http_request_method="GET",server_address="api.escrow.com",server_port="443",url_template="/transaction/{id}",http_response_status_code="200"} 0.02`,
		`escrow_client_call_duration_seconds_count{http_request_method="GET",server_address="api.escrow.com",server_port="443",http_response_status_code="404",error_type="404"} 1`,
		`escrow_client_retries_total{http_request_method="GET",server_address="api.escrow.com",server_port="443",url_template="/transaction/{id}",reason="rate_limited"} 1`,
		`escrow_client_rate_limit_wait_seconds_bucket{http_request_method="GET",server_address="api.escrow.com",server_port="443",url_template="/transaction/{id}",cause="too_many_requests",le="1"} 1`,
		`escrow_webhook_deliveries_total{outcome="confirmed"} 2`,
		`escrow_webhook_deliveries_total{outcome="refused"} 1`,
		`escrow_webhook_events_total{escrow_event="a\"b",escrow_webhook_source="webhook"} 1`,
		`escrow_webhook_handover_lag_seconds_sum{escrow_webhook_source="webhook"} 3`,
		"escrow_webhook_queue_depth 3",
	} {
		if !strings.Contains(out, line+"\n") {
			t.Errorf("missing line %s", line)
		}
	}
	if strings.Contains(out, `escrow_event="agree"`) {
		t.Errorf("an event the callback refused was counted as handed over:\n%s", out)
	}
	if t.Failed() {
		t.Log(out)
	}
}

// TestServeHTTPIsTheTextFormat: a scrape gets the exposition format's content type.
func TestServeHTTPIsTheTextFormat(t *testing.T) {
	m := New()
	m.Delivery(context.Background(), webhook.Delivery{Outcome: webhook.DeliveryDropped})
	rec := httptest.NewRecorder()
	m.ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	if ct := rec.Header().Get("Content-Type"); !strings.HasPrefix(ct, "text/plain; version=0.0.4") {
		t.Errorf("content type %q", ct)
	}
	if !strings.Contains(rec.Body.String(), `escrow_webhook_deliveries_total{outcome="dropped"} 1`) {
		t.Errorf("body:\n%s", rec.Body)
	}
}

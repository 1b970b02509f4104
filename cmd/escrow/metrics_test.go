package main

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	escrow "github.com/escrowkit/escrow-go"
	"github.com/escrowkit/escrow-go/webhook"
)

// freeAddr returns a loopback address no one listens on now.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(body)
}

// scrapeUntil reads url until its page holds want, or 10 s passed; it returns the last
// answer.
func scrapeUntil(t *testing.T, url, want string) (int, string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		code, page := get(t, url)
		if code != http.StatusOK || strings.Contains(page, want) || time.Now().After(deadline) {
			return code, page
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestListenServesMetricsAndHealth: after a sale delivered to the listener, /metrics shows
// the client's calls (registering, confirming) and the receiver's delivery, event and lag
// in Prometheus' text format, and /healthz says the store and the API answer.
func TestListenServesMetricsAndHealth(t *testing.T) {
	e := newEmulator(t)
	addr := freeAddr(t)
	// No reconciler: its first run, at start, could list the sale before its delivery
	// came, and hand the event over FromReconcile with the delivery a duplicate.
	l := startListener(t, e, "--json", "--register", "--reconcile", "0", "--metrics-addr", addr)
	tx := e.sale(t, "")
	var out []string
	awaitJSON(t, l, &out, tx.ID, "create")

	// The event is printed by the callback; the delivery's outcome is counted once the
	// callback returned: scrape until it is, instead of racing it.
	code, page := scrapeUntil(t, "http://"+addr+"/metrics", `escrow_webhook_deliveries_total{outcome="confirmed"} 1`)
	if code != http.StatusOK {
		t.Fatalf("/metrics answered %d", code)
	}
	base, err := url.Parse(e.srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	server := fmt.Sprintf("server_address=%q,server_port=%q", base.Hostname(), base.Port())
	for _, want := range []string{
		"# TYPE http_client_request_duration_seconds histogram",
		`http_client_request_duration_seconds_count{http_request_method="GET",` + server + `,url_template="/transaction/{id}",http_response_status_code="200"} `,
		`http_client_request_duration_seconds_count{http_request_method="POST",` + server + `,url_template="/customer/{customer_id}/webhook",http_response_status_code="200"} 1`,
		`escrow_client_call_duration_seconds_count{http_request_method="POST",` + server + `,url_template="/customer/{customer_id}/webhook",http_response_status_code="200"} 1`,
		"# TYPE escrow_webhook_queue_depth gauge",
		`escrow_webhook_deliveries_total{outcome="confirmed"} 1`,
		`escrow_webhook_events_total{escrow_event="create",escrow_webhook_source="webhook"} 1`,
		`escrow_webhook_handover_lag_seconds_count{escrow_webhook_source="webhook"} 1`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	if strings.Contains(page, e.partner.APIKey) || strings.Contains(page, e.partner.Email) {
		t.Error("/metrics shows the account's credentials")
	}
	if t.Failed() {
		t.Log(page)
	}

	code, body := get(t, "http://"+addr+"/healthz")
	if code != http.StatusOK || body != "store: ok\napi: ok\n" {
		t.Errorf("/healthz answered %d %q; want 200, both ok", code, body)
	}
	if code, _ := l.stop(); code != 0 {
		t.Errorf("exit %d", code)
	}
}

// TestHealthSaysWhichIsDown: with the API refusing the account, /healthz answers 503 and
// names the API, not the store, by the failure's kind (a 401: the credentials refused, not
// missing): no text of the server's answer, which may echo the account's e-mail.
func TestHealthSaysWhichIsDown(t *testing.T) {
	e := newEmulator(t)
	bad, err := escrow.NewClient(e.partner.Email, "not-the-key", escrow.WithBaseURL(e.srv.URL), escrow.WithHTTPClient(e.srv.Client()))
	if err != nil {
		t.Fatal(err)
	}
	h := &health{store: new(webhook.MemoryStore), client: bad}
	srv := httptest.NewServer(h)
	defer srv.Close()
	code, body := get(t, srv.URL+"/healthz")
	if code != http.StatusServiceUnavailable || body != "store: ok\napi: failing: 401 credentials refused\n" {
		t.Errorf("/healthz answered %d %q; want 503, the store ok and the API failing with a 401, the credentials refused", code, body)
	}
}

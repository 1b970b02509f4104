package escrowtest

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// TestRequestLogIsBounded: past 1000 requests the log keeps the latest 1000, numbered on,
// and a body larger than the log keeps is cut, saying how large it was.
func TestRequestLogIsBounded(t *testing.T) {
	w := newWorld(t, WithRateLimit(0, 0))
	for range maxRequests + 5 {
		w.b.must(http.StatusOK, http.MethodGet, "customer/me", nil)
	}
	w.b.must(http.StatusUnprocessableEntity, http.MethodPost, "transaction", body{"description": strings.Repeat("x", 3*maxLoggedBody)})
	got := w.srv.Requests()
	if len(got) != maxRequests || got[0].Seq != 7 || got[len(got)-1].Seq != maxRequests+6 {
		t.Fatalf("%d requests kept, from %d to %d; want %d, from 7 to %d", len(got), got[0].Seq, got[len(got)-1].Seq, maxRequests, maxRequests+6)
	}
	last := got[len(got)-1]
	if len(last.RequestBody) > maxLoggedBody+100 || !strings.HasSuffix(last.RequestBody, fmt.Sprintf("… (%d bytes in all)", 3*maxLoggedBody+18)) {
		t.Errorf("a %d-byte body is kept as %d bytes ending %q", 3*maxLoggedBody+18, len(last.RequestBody), last.RequestBody[max(0, len(last.RequestBody)-40):])
	}
}

// TestRequestLogKeepsWhatFaultsAndRefusalsDid: a dropped request (status 0), a latency,
// an unauthenticated call and a malformed body are each logged, with no caller when the
// credentials were wrong; the control API filters the log by account, path and status,
// and refuses a filter it cannot read.
func TestRequestLogKeepsWhatFaultsAndRefusalsDid(t *testing.T) {
	w := newWorld(t)
	must(t, w.srv.InjectFault(Fault{Endpoint: "DELETE *", Drop: DropBefore}))
	must(t, w.srv.InjectFault(Fault{Endpoint: "GET /customer/{customer_id}/webhook", Latency: 1}))
	w.b.do(http.MethodGet, "customer/me/webhook", nil)
	if _, err := w.srv.Client().Do(mustRequest(t, http.MethodDelete, w.srv.URL+"customer/me/webhook/601")); err == nil {
		t.Fatal("the dropped request had an answer")
	}
	w.b.must(http.StatusBadRequest, http.MethodPost, "transaction", "{not json")
	bad := *w.s
	bad.secret = "wrong"
	bad.must(http.StatusUnauthorized, http.MethodGet, "customer/me", nil)

	got := w.srv.Requests()
	if len(got) != 4 {
		t.Fatalf("%d requests logged: %+v", len(got), got)
	}
	for i, want := range []struct {
		status         int
		account, fault string
	}{{200, "buyer@example.com", "latency 1ns"}, {0, "", "dropped before handling"}, {400, "buyer@example.com", ""}, {401, "", ""}} {
		if r := got[i]; r.Status != want.status || r.Account != want.account || r.Fault != want.fault {
			t.Errorf("request %d (%s %s): %d by %q, fault %q; want %d by %q, fault %q", i, r.Method, r.Path, r.Status, r.Account, r.Fault, want.status, want.account, want.fault)
		}
	}
	if got[2].RequestBody != "{not json" || strings.Contains(got[3].ResponseBody, "wrong") {
		t.Errorf("bodies: %q, %q", got[2].RequestBody, got[3].ResponseBody)
	}

	ctl := anonymous(t, w.srv)
	for query, want := range map[string]int{
		"?account=buyer": 2, "?path=/webhook": 2, "?status=4xx": 2, "?status=dropped": 1, "?status=401": 1,
		"?after=3": 1, "?limit=1": 1, "?account=buyer&status=2xx": 1, "?account=nobody": 0,
	} {
		r := ctl.must(http.StatusOK, http.MethodGet, "/_emulator/requests"+query, nil)
		if n := len(r.list("requests")); n != want {
			t.Errorf("GET /_emulator/requests%s: %d requests, want %d", query, n, want)
		}
	}
	for _, query := range []string{"?status=teapot", "?status=600", "?after=-1", "?limit=0", "?limit=x"} {
		ctl.must(http.StatusUnprocessableEntity, http.MethodGet, "/_emulator/requests"+query, nil)
	}
	if n := len(w.srv.Requests()); n != 4 {
		t.Errorf("the control API's calls were logged: %d requests", n)
	}
}

func mustRequest(t *testing.T, method, url string) *http.Request {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	return req
}

// TestScrubBodyRemovesEveryCredentialShape: what the log keeps of a body, for each shape a
// credential takes, and for text that only looks near one.
func TestScrubBodyRemovesEveryCredentialShape(t *testing.T) {
	key := "501_ZCBMW5S7SU5IVWGLDRJQZMCCIB"
	for in, want := range map[string]string{
		`{"key":"` + key + `"}`:             `{"key":"[redacted]"}`,
		`{"password" : "a\"b", "n": 1}`:     `{"password":"[redacted]", "n": 1}`,
		`{"api_key":"x`:                     `{"api_key":"[redacted]"`,
		`{"secret": 5}`:                     `{"secret": 5}`,
		`{"keys":"open"}`:                   `{"keys":"open"}`,
		`note ` + key + `, again:` + key:    `note [redacted], again:[redacted]`,
		`x` + key:                           `x` + key, // not alone: no key
		key + `Z`:                           key + `Z`,
		`report_ZCBMW5S7SU5IVWGLDRJQZMCCIB`: `report_ZCBMW5S7SU5IVWGLDRJQZMCCIB`,
		`{"url":"https://h.example/in/Zq3xT9vLm2Rk8WpB4nYc7HdJ?x=1"}`: `{"url":"https://h.example/in/SECRET?x=1"}`,
		`see http://h.example/Zq3xT9vLm2Rk8WpB4nYc7HdJ then`:          `see http://h.example/SECRET then`,
		`{"token":"tok", "creds":"s3cret"}`:                           `{"token":"[redacted]", "creds":"[redacted]"}`,
		"":                                                            "",
	} {
		if got := scrubBody([]byte(in), [][]byte{[]byte("s3cret")}); got != want {
			t.Errorf("scrubBody(%s) = %s, want %s", in, got, want)
		}
	}
}

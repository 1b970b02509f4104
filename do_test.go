package escrow

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

// TestDoSendsThroughThePipeline: Do joins the path onto the base URL, keeps its query,
// sends credentials and As-Customer, encodes the body and decodes the answer.
func TestDoSendsThroughThePipeline(t *testing.T) {
	c, mt := setup(t)
	var rec recorder
	mt.RegisterNoResponder(rec.then(respond(http.StatusOK, `{"id": 7, "brand_new_field": "x"}`)))

	var out struct {
		ID       int64  `json:"id"`
		NewField string `json:"brand_new_field"`
	}
	err := c.Do(context.Background(), "patch", "/transaction/7?expand=timeline", map[string]string{"action": "agree"}, &out, AsCustomer("buyer@example.com"))
	if err != nil {
		t.Fatal(err)
	}
	if out.ID != 7 || out.NewField != "x" {
		t.Errorf("decoded %+v", out)
	}
	r := rec.all()[0]
	if r.Method != http.MethodPatch || r.EscapedPath != "/2017-09-01/transaction/7" || r.RawQuery != "expand=timeline" {
		t.Errorf("sent %s %s?%s", r.Method, r.EscapedPath, r.RawQuery)
	}
	if r.Header.Get("Authorization") != "Basic "+basicToken(testEmail, testKey) || r.Header.Get("As-Customer") != "buyer@example.com" {
		t.Errorf("headers %v", r.Header)
	}
	if got := compact(t, r.Body); got != `{"action":"agree"}` {
		t.Errorf("body %s", got)
	}
}

// TestDoRawBodies: a []byte or json.RawMessage body is sent as the JSON it holds, and a
// *json.RawMessage out receives the document as sent.
func TestDoRawBodies(t *testing.T) {
	c, mt := setup(t)
	var rec recorder
	mt.RegisterNoResponder(rec.then(respond(http.StatusOK, `{"a": [1, 2]}`)))
	var raw json.RawMessage
	if err := c.Do(context.Background(), http.MethodPost, "partner/reports", []byte(`{"limit": 5}`), &raw); err != nil {
		t.Fatal(err)
	}
	if string(raw) != `{"a": [1, 2]}` {
		t.Errorf("raw = %s", raw)
	}
	if got := compact(t, rec.all()[0].Body); got != `{"limit":5}` {
		t.Errorf("body %s", got)
	}
	if err := c.Do(context.Background(), http.MethodPost, "transaction/1/payment_methods/wire_transfer", (*ActionRequest)(nil), nil); err != nil {
		t.Fatal(err)
	}
	if r := rec.all()[1]; len(r.Body) != 0 || r.Header.Get("Content-Type") != "" {
		t.Errorf("a nil pointer body sent %q", r.Body)
	}
}

// TestDoRefusesBadArguments: nothing is sent for a path that could leave the base URL, a
// body that is not JSON or an out that cannot be decoded into.
func TestDoRefusesBadArguments(t *testing.T) {
	c, _ := setup(t) // any request fails the test
	var out map[string]any
	cases := []struct {
		name, method, path string
		body, out          any
	}{
		{"absolute URL", "GET", "https://evil.example/steal", nil, &out},
		{"scheme-relative URL", "GET", "//evil.example/steal", nil, &out},
		{"dot-dot", "GET", "transaction/../../admin", nil, &out},
		{"escaped dot-dot", "GET", "transaction/%2e%2e/x", nil, &out},
		{"empty segment", "GET", "transaction//7", nil, &out},
		{"empty path", "GET", "", nil, &out},
		{"fragment", "GET", "transaction#x", nil, &out},
		{"empty method", " ", "transaction", nil, &out},
		{"invalid JSON body", "POST", "transaction", []byte(`{"a":`), &out},
		{"out not a pointer", "GET", "transaction", nil, out},
		{"nil pointer out", "GET", "transaction", nil, (*map[string]any)(nil)},
	}
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			err := c.Do(context.Background(), tt.method, tt.path, tt.body, tt.out)
			if !errors.Is(err, ErrInvalidArgument) {
				t.Errorf("err = %v, want ErrInvalidArgument", err)
			}
		})
	}
}

// TestDoTypedErrorsAndRetries: Do's answers become the same typed errors, and its retries
// follow the method, as every call's do.
func TestDoTypedErrorsAndRetries(t *testing.T) {
	c, mt := setup(t, WithMaxRetries(2), WithMaxWait(time.Millisecond))
	var rec recorder
	mt.RegisterNoResponder(rec.then(respond(http.StatusServiceUnavailable, `{"error": "down"}`)))

	err := c.Do(context.Background(), http.MethodGet, "transaction/1", nil, nil)
	var ae *APIError
	if !errors.As(err, &ae) || ae.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("err = %v, want an *APIError 503", err)
	}
	if n := rec.count(); n != 3 {
		t.Errorf("GET sent %d times, want 3 (retried)", n)
	}
	err = c.Do(context.Background(), http.MethodPost, "transaction", map[string]any{}, nil)
	if !errors.As(err, &ae) {
		t.Fatalf("err = %v", err)
	}
	if n := rec.count(); n != 4 {
		t.Errorf("POST sent %d times, want 1 (never retried after a 5xx)", n-3)
	}

	mt.RegisterNoResponder(respond(http.StatusNotFound, `{"error": "not_found", "message": "no transaction 9"}`))
	if err := c.Do(context.Background(), http.MethodGet, "transaction/9", nil, nil); !errors.Is(err, ErrNotFound) {
		t.Errorf("err = %v, want ErrNotFound", err)
	}
}

// TestDoSharesTheEndpointsAllowance: a path of a known endpoint is counted under the
// typed method's endpoint, so an allowance Get spent holds Do back too.
func TestDoSharesTheEndpointsAllowance(t *testing.T) {
	c, mt := setup(t, WithMaxWait(time.Second))
	var rec recorder
	mt.RegisterNoResponder(rec.then(respond(http.StatusOK, `{"id": 1}`, "RateLimit-Remaining", "0", "RateLimit-Reset", "3600")))
	if _, err := c.Transactions.Get(context.Background(), 1); err != nil {
		t.Fatal(err)
	}
	err := c.Do(context.Background(), http.MethodGet, "transaction/2", nil, nil)
	var rl *RateLimitError
	if !errors.As(err, &rl) || rl.Endpoint != "GET /transaction/{id}" {
		t.Fatalf("err = %v, want a *RateLimitError on GET /transaction/{id}", err)
	}
	if n := rec.count(); n != 1 {
		t.Errorf("%d requests sent, want 1: Do must not spend a request on a certain 429", n)
	}
	// Another endpoint has its own allowance.
	if err := c.Do(context.Background(), http.MethodGet, "transaction/2/timeline-entries", nil, nil); err != nil {
		t.Errorf("other endpoint: %v", err)
	}
}

func TestMatchRoute(t *testing.T) {
	cases := []struct{ method, path, want string }{
		{"GET", "transaction/5", "transaction/{id}"},
		{"POST", "transaction/5/payment_methods/wire_transfer", "transaction/{id}/payment_methods/wire_transfer"},
		{"POST", "transaction/5/payment_methods/paypal", "transaction/{id}/payment_methods/{payment_method_name}"},
		{"GET", "customer/me", "customer/{customer_id}"},
		{"GET", "partner/reports/count", "partner/reports/count"},
		{"PUT", "transaction/5", ""},
		{"GET", "transaction/5/unknown", ""},
	}
	for _, tt := range cases {
		r, ok := matchRoute(tt.method, tt.path)
		if got := r.path(); ok != (tt.want != "") || got != tt.want {
			t.Errorf("matchRoute(%s %s) = %q, %v; want %q", tt.method, tt.path, got, ok, tt.want)
		}
	}
	if got := foldIDs("widget/12/part/7"); got != "widget/{id}/part/{id}" {
		t.Errorf("foldIDs = %q", got)
	}
}

// TestWithResponse: the option captures the answer's status, rate-limit headers and
// request id, on success and on failure, and says -1 for headers the answer lacks.
func TestWithResponse(t *testing.T) {
	c, mt := setup(t)
	mt.RegisterNoResponder(sequence(
		respond(http.StatusOK, `{"id": 1}`, "RateLimit-Remaining", "41", "RateLimit-Limit", "50", "RateLimit-Reset", "30", "X-Request-Id", "req-123"),
		respond(http.StatusUnprocessableEntity, `{"errors": {"currency": ["bad"]}}`, "Request-Id", "req-456"),
	))
	var r Response
	before := time.Now()
	if _, err := c.Transactions.Get(context.Background(), 1, WithResponse(&r)); err != nil {
		t.Fatal(err)
	}
	if r.StatusCode != 200 || r.RateLimit.Remaining != 41 || r.RateLimit.Limit != 50 || r.RequestID != "req-123" {
		t.Errorf("response %+v", r)
	}
	if d := r.RateLimit.Reset.Sub(before); d < 30*time.Second || d > 31*time.Second {
		t.Errorf("reset in %v, want about 30s", d)
	}
	if r.Header.Get("X-Request-Id") != "req-123" {
		t.Errorf("header not kept: %v", r.Header)
	}

	_, err := c.Transactions.Create(context.Background(), &CreateTransactionRequest{}, WithResponse(&r))
	var ve *ValidationError
	if !errors.As(err, &ve) {
		t.Fatalf("err = %v", err)
	}
	if r.StatusCode != 422 || r.RequestID != "req-456" || r.RateLimit.Remaining != -1 || r.RateLimit.Limit != -1 || !r.RateLimit.Reset.IsZero() {
		t.Errorf("response after a 422: %+v", r)
	}
}

// TestWithResponseWithoutAnswer: a call that got no answer leaves no earlier answer in the
// Response.
func TestWithResponseWithoutAnswer(t *testing.T) {
	c, mt := setup(t, WithMaxRetries(0))
	mt.RegisterNoResponder(fail(errors.New("connection reset")))
	r := Response{StatusCode: 200, RequestID: "stale"}
	if err := c.Do(context.Background(), http.MethodGet, "transaction/1", nil, nil, WithResponse(&r)); err == nil {
		t.Fatal("no error")
	}
	if r.StatusCode != 0 || r.RequestID != "" {
		t.Errorf("response %+v, want it cleared", r)
	}
}

// climbingPaths are paths that servers or proxies on the way resolve outside the base URL:
// each decodes, repeatedly, into a "." or ".." segment under one common reading (see
// safeSegment).
var climbingPaths = []string{
	"transaction/..%2f..%2fadmin",
	"..%2f",
	"transaction/a%2f..%2f..%2fx",
	"transaction/..%5c..%5cadmin",
	`transaction/a\..\..\x`,
	"transaction/..;/x",
	"transaction/..;jsessionid=1/x",
	"%252e%252e/x",
	"transaction/%25252e%25252e/x",
	"transaction/%2525252e%2525252e/x",
	"transaction/%u002e%u002e/x",
	"transaction/%c0%ae%c0%ae/x", // overlong UTF-8 for "."
	"transaction/\uff0e\uff0e/x", // full-width dots
	"transaction/%ef%bc%8e%ef%bc%8e/x",
	"transaction/a\uff0f..\uff0f..\uff0fx",
	// Every character normalisation or a lenient server folds into a dot or a separator.
	"transaction/\u2024\u2024/x",           // one-dot leaders
	"transaction/\ufe52\ufe52/x",           // small full stops
	"transaction/a\u2215..\u2215..\u2215x", // division slashes
	"transaction/a\u2044..\u2044..\u2044x", // fraction slashes
	"transaction/a\uff3c..\uff3c..\uff3cx", // full-width reverse solidus
	"transaction/a\ufe68..\ufe68..\ufe68x", // small reverse solidus
	"transaction/.. /x",
	"transaction/.../x",
	"transaction/%2e%2e%3b/x",
	"transaction/%2e/x",
}

// TestDoRefusesPathsThatClimbOutOfTheBase: nothing is sent, credentials above all, for a
// path some server would resolve outside the version prefix.
func TestDoRefusesPathsThatClimbOutOfTheBase(t *testing.T) {
	c, _ := setup(t) // any request fails the test
	for _, p := range climbingPaths {
		if err := c.Do(context.Background(), "GET", p, nil, nil); !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("Do(%q) = %v, want ErrInvalidArgument before sending", p, err)
		}
	}
}

// TestTypedCallsRefuseClimbingParameters: a string parameter of a typed method is escaped
// into one segment, but a server that decodes %2F would still climb with "a/../../x", and
// IIS reads "%u002e" (in either case) as a dot: each is refused before sending too.
func TestTypedCallsRefuseClimbingParameters(t *testing.T) {
	c, _ := setup(t)
	for _, ref := range []string{"..", "a/../../x", `a\..\..\x`, "..;", "%2e%2e", "%252e%252e", "a/%2e%2e/%2e%2e/x", "%u002e%u002e", "%U002E%U002E"} {
		if _, err := c.Transactions.GetByReference(context.Background(), ref); !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("GetByReference(%q) = %v, want ErrInvalidArgument", ref, err)
		}
	}
}

// TestDoAllowsEveryRouteOfTheTable: every route of the client's own table, with the
// parameters its methods put there (a reference with a slash, a semicolon and dots among
// them), goes through Do as it is.
func TestDoAllowsEveryRouteOfTheTable(t *testing.T) {
	c, mt := setup(t)
	params := map[string][]string{
		"{customer_id}": {"me", "1234"}, "{id}": {"42"}, "{item_id}": {"1001"}, "{key_id}": {"7"},
		"{disbursement_id}": {"9"}, "{webhook_id}": {"5"}, "{payment_method_name}": {"credit_card", "paypal"},
		"{action}": {"accept", "ship"}, "{task_id}": {"a1b2-c3d4", "task.2024.01"},
		"{reference}": {url.PathEscape("order/2024/55"), url.PathEscape("a;b"), url.PathEscape("v1.2..3"), url.PathEscape("ünï cödé"), "%2525"},
	}
	mt.RegisterNoResponder(respond(200, `{}`))
	for _, r := range routeTable() {
		for variant := range 2 {
			path := r.path()
			for name, vals := range params {
				path = strings.ReplaceAll(path, name, vals[min(variant, len(vals)-1)])
			}
			if err := c.Do(context.Background(), r.Method, path, nil, nil); err != nil {
				t.Errorf("Do(%s %s) = %v, want it sent", r.Method, path, err)
			}
		}
		if len(params["{reference}"]) > 2 && strings.Contains(r.Template, "{reference}") {
			for _, ref := range params["{reference}"][2:] {
				path := strings.ReplaceAll(r.path(), "{reference}", ref)
				if err := c.Do(context.Background(), r.Method, path, nil, nil); err != nil {
					t.Errorf("Do(%s %s) = %v, want it sent", r.Method, path, err)
				}
			}
		}
	}
	for _, ref := range []string{"order/2024/55", "a;b", "v1.2..3", "100%"} {
		mt.RegisterResponder("GET", testBase+"transaction/reference/"+url.PathEscape(ref), respond(200, `{"id": 3}`))
		if _, err := c.Transactions.GetByReference(context.Background(), ref); err != nil {
			t.Errorf("GetByReference(%q) = %v", ref, err)
		}
	}
}

// TestRefusedCallLeavesNoStaleResponse: a Response reused across calls describes the last
// call; one refused before anything is sent leaves no answer in it, not the previous one's.
func TestRefusedCallLeavesNoStaleResponse(t *testing.T) {
	c, mt := setup(t)
	mt.RegisterResponder("GET", testBase+"transaction/1", respond(200, `{"id": 1}`, "RateLimit-Remaining", "7"))
	var r Response
	if _, err := c.Transactions.Get(context.Background(), 1, WithResponse(&r)); err != nil || r.StatusCode != 200 {
		t.Fatalf("first call: %v, status %d", err, r.StatusCode)
	}
	_, err := c.Transactions.Get(context.Background(), 1, WithResponse(&r), AsCustomer("buyer@example.com\r\nX-Evil: 1"))
	if !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("As-Customer with a line break: %v, want ErrInvalidArgument", err)
	}
	if r.StatusCode != 0 || r.RateLimit.Remaining != -1 || r.Header != nil {
		t.Errorf("after a call refused before sending, Response = %+v; want no answer", r)
	}
}

// TestInvalidMethodIsRefused: Do with a method no HTTP request can carry is an
// ErrInvalidArgument, not a panic.
func TestInvalidMethodIsRefused(t *testing.T) {
	c, _ := setup(t)
	if err := c.Do(context.Background(), "GET /x", "transaction/1", nil, nil); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("Do with method %q: %v, want ErrInvalidArgument", "GET /x", err)
	}
}

// TestEmptyAnswerIntoRawMessage: Do into a json.RawMessage takes an empty success body as
// no document (nil), not as malformed JSON, and leaves nothing of an earlier call in it.
func TestEmptyAnswerIntoRawMessage(t *testing.T) {
	c, mt := setup(t)
	mt.RegisterResponder("POST", testBase+"transaction/1/undocumented", respond(200, ""))
	raw := json.RawMessage(`{"stale": true}`)
	if err := c.Do(context.Background(), "POST", "transaction/1/undocumented", nil, &raw); err != nil || raw != nil {
		t.Errorf("an empty answer: err %v, raw %q; want no error and nil", err, raw)
	}
}

// TestRequestIDFromEveryHeaderForm: the request id comes from Request-Id, a name ending in
// -Request-Id, or one ending in -RequestId, whatever the case; an empty one is passed over;
// of two, the one whose name sorts first is taken, so the same answer gives the same id.
func TestRequestIDFromEveryHeaderForm(t *testing.T) {
	for _, tt := range []struct {
		headers []string
		want    string
	}{
		{[]string{"Request-Id", "r-1"}, "r-1"},
		{[]string{"X-Amzn-Request-Id", "r-2"}, "r-2"},
		{[]string{"X-Ms-Requestid", "r-3"}, "r-3"},
		{[]string{"X-Request-Id", " ", "X-Trace-Requestid", "r-4"}, "r-4"},
		{[]string{"X-Request-Id", "later", "X-Amzn-Request-Id", "first"}, "first"},
		{[]string{"X-Request-Identity", "not-an-id"}, ""},
	} {
		c, mt := setup(t)
		mt.RegisterResponder("GET", testBase+"transaction/1", respond(http.StatusOK, `{"id": 1}`, tt.headers...))
		var r Response
		if _, err := c.Transactions.Get(context.Background(), 1, WithResponse(&r)); err != nil {
			t.Fatal(err)
		}
		if r.RequestID != tt.want {
			t.Errorf("headers %v: request id %q, want %q", tt.headers, r.RequestID, tt.want)
		}
	}
}

// TestDoSendsBodiesOfEveryKind: a struct, a pointer to one and a map are each sent as
// their JSON; only a nil pointer means no body.
func TestDoSendsBodiesOfEveryKind(t *testing.T) {
	type act struct {
		Action string `json:"action"`
	}
	for name, body := range map[string]any{
		"struct": act{"agree"}, "pointer to a struct": &act{"agree"}, "map": map[string]string{"action": "agree"},
	} {
		t.Run(name, func(t *testing.T) {
			c, mt := setup(t)
			var rec recorder
			mt.RegisterNoResponder(rec.then(respond(http.StatusOK, `{}`)))
			if err := c.Do(context.Background(), "PATCH", "transaction/7", body, nil); err != nil {
				t.Fatal(err)
			}
			if got := compact(t, rec.all()[0].Body); got != `{"action":"agree"}` {
				t.Errorf("body %s, want the action", got)
			}
		})
	}
}

// TestDoRefusesAnOutItCannotFill: out of a kind Do cannot decode into (a map or a struct
// passed by value) is refused before the request is sent, not after a write was performed.
func TestDoRefusesAnOutItCannotFill(t *testing.T) {
	c, _ := setup(t) // any request fails the test
	for name, out := range map[string]any{"map": map[string]any{"id": 1}, "struct": struct{ ID int64 }{}} {
		if err := c.Do(context.Background(), "PATCH", "transaction/7", nil, out); !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("out a %s: err = %v, want ErrInvalidArgument before sending", name, err)
		}
	}
}

// TestDoRefusesControlCharactersInAPath: a segment that decodes to a control character (a
// CR LF that a lenient server or log splits on, a NUL, a DEL) is refused before sending.
func TestDoRefusesControlCharactersInAPath(t *testing.T) {
	c, _ := setup(t) // any request fails the test
	for _, p := range []string{"transaction/7%0d%0aX-Injected:%201", "transaction/7%00", "transaction/a%7Fb", "transaction/%250a"} {
		if err := c.Do(context.Background(), "GET", p, nil, nil); !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("Do(%q) = %v, want ErrInvalidArgument before sending", p, err)
		}
	}
}

// TestReferencesThatOnlyLookEscapedAreSent: a reference of spaces only, or one whose "%" is
// not an escape ("50%2goff"), climbs nowhere and is sent as the caller wrote it.
func TestReferencesThatOnlyLookEscapedAreSent(t *testing.T) {
	for _, ref := range []string{"  ", "50%2goff", "%g0"} {
		c, mt := setup(t)
		var rec recorder
		mt.RegisterNoResponder(rec.then(respond(http.StatusOK, `{"id": 7}`)))
		if _, err := c.Transactions.GetByReference(context.Background(), ref); err != nil {
			t.Errorf("GetByReference(%q) = %v, want it sent", ref, err)
			continue
		}
		if got := rec.all()[0].EscapedPath; got != "/2017-09-01/transaction/reference/"+url.PathEscape(ref) {
			t.Errorf("GetByReference(%q) sent %s", ref, got)
		}
	}
}

// TestDoRefusalSaysWhatIsWrongWithThePath: a path Do refuses is refused for what is wrong
// with it, in words the caller can act on (not as some later step's failure, such as a
// missing parameter of a route the caller never named), and nothing is sent.
func TestDoRefusalSaysWhatIsWrongWithThePath(t *testing.T) {
	c, _ := setup(t) // any request fails the test
	for path, says := range map[string]string{
		"https://evil.example/steal": "must be relative to the base URL",
		"transaction#x":              "must not have a fragment",
		"":                           "empty path",
		"transaction/../../admin":    `".."`,
		"transaction/%zz":            "path:",
	} {
		err := c.Do(context.Background(), "GET", path, nil, nil)
		if !errors.Is(err, ErrInvalidArgument) || !strings.Contains(err.Error(), says) {
			t.Errorf("Do(%q) = %v, want ErrInvalidArgument saying %q", path, err, says)
		}
	}
}

// TestDoOnAListingPathTakesAPageAsLargeAsTheTypedListing: Do on the transactions listing's
// path is capped as that listing is (MaxListBody), not as one resource (MaxResourceBody): a
// page of 2 MB that Transactions.List decodes, Do decodes too, and a path-level
// DecodeError telling the caller to ask for smaller pages is not what it gets.
func TestDoOnAListingPathTakesAPageAsLargeAsTheTypedListing(t *testing.T) {
	c, mt := setup(t)
	page := `{"page":1,"page_count":1,"transactions":[` + strings.Repeat(`{"id":1,"description":"`+strings.Repeat("x", 1000)+`"},`, 2*MaxResourceBody/1000) + `{"id":2}]}`
	if len(page) <= MaxResourceBody || len(page) >= MaxListBody {
		t.Fatalf("the page has %d bytes, want it between the two caps", len(page))
	}
	mt.RegisterResponder(http.MethodGet, "=~^"+testBase+"transaction\\?", respond(200, page))
	if _, err := c.Transactions.List(context.Background(), &ListTransactionsOptions{Page: 1}); err != nil {
		t.Fatalf("List: %v", err)
	}
	var out struct {
		Transactions []json.RawMessage `json:"transactions"`
	}
	if err := c.Do(context.Background(), http.MethodGet, "transaction?page=1", nil, &out); err != nil || len(out.Transactions) != 2*MaxResourceBody/1000+1 {
		t.Errorf("Do = %v with %d transactions, want the whole page", err, len(out.Transactions))
	}
}

// TestDoRefusesADotDotEscapedBeyondWhatItUndoes: ".." escaped 17 times over ("%2e" with its
// '%' escaped again and again) is more nesting than the 16 rounds Do decodes; a server that
// decoded one round more would read "..", so the path is refused, not sent as a harmless
// name.
func TestDoRefusesADotDotEscapedBeyondWhatItUndoes(t *testing.T) {
	c, _ := setup(t) // any request fails the test
	seg := "%2e%2e"
	for range 16 {
		seg = strings.ReplaceAll(seg, "%", "%25")
	}
	if err := c.Do(context.Background(), http.MethodGet, "transaction/"+seg+"/admin", nil, nil); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("Do = %v, want ErrInvalidArgument before sending", err)
	}
}

// TestDoRefusesDotDotsHiddenBehindALiteralPercent: escapes a server decoding again and
// again, or decoding %2F into a separator, reads as ".." are refused even where a '%' or
// "%u" that starts no escape stands before them, once the first round is decoded:
// "%%32%65" is "%2e" decoded once more, then "."; in "%u%2f%2e%2e" the "%u" is no escape and
// "%2f" a separator before "..". A decoder that dropped the literal '%', or read "%u" with
// what follows as one character, would send them.
func TestDoRefusesDotDotsHiddenBehindALiteralPercent(t *testing.T) {
	c, _ := setup(t) // any request fails the test
	for _, seg := range []string{"%25%2532%2565%25%2532%2565", "%25u%252f%252e%252e"} {
		if err := c.Do(context.Background(), http.MethodGet, "transaction/"+seg+"/admin", nil, nil); !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("Do(%q) = %v, want ErrInvalidArgument before sending", seg, err)
		}
	}
}

package escrow

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/jarcoal/httpmock"
)

func basicToken(email, key string) string {
	return base64.StdEncoding.EncodeToString([]byte(email + ":" + key))
}

func TestNewClientDefaultsToProduction(t *testing.T) {
	c, err := NewClient(testEmail, testKey)
	if err != nil {
		t.Fatal(err)
	}
	if c.BaseURL() != ProductionURL || ProductionURL != "https://api.escrow.com/2017-09-01/" {
		t.Errorf("BaseURL = %s", c.BaseURL())
	}
	c, _ = NewClient(testEmail, testKey, WithSandbox())
	if c.BaseURL() != "https://api.escrow-sandbox.com/2017-09-01/" {
		t.Errorf("sandbox BaseURL = %s", c.BaseURL())
	}
}

func TestBaseURLMustBeHTTPSExceptLoopback(t *testing.T) {
	tests := []struct {
		in, want string // want "" means refused
	}{
		{"https://api.escrow.com/2017-09-01/", "https://api.escrow.com/2017-09-01/"},
		{"https://api.escrow.com/2017-09-01", "https://api.escrow.com/2017-09-01/"}, // slash added
		{"http://127.0.0.1:8443/2017-09-01/", "http://127.0.0.1:8443/2017-09-01/"},
		{"http://127.9.9.9/2017-09-01/", "http://127.9.9.9/2017-09-01/"},
		{"http://localhost:9/v/", "http://localhost:9/v/"},
		{"http://[::1]:9/v/", "http://[::1]:9/v/"},
		{"http://api.escrow.com/2017-09-01/", ""},
		{"http://10.0.0.1/2017-09-01/", ""},
		{"http://localhost.evil.com/", ""},
		{"ftp://api.escrow.com/", ""},
		{"https://user:pass@api.escrow.com/", ""},
		{"https://api.escrow.com/?x=1", ""},
		{"/2017-09-01/", ""},
		{"https://%zz/", ""},
	}
	for _, tt := range tests {
		c, err := NewClient(testEmail, testKey, WithBaseURL(tt.in))
		switch {
		case tt.want == "" && err == nil:
			t.Errorf("WithBaseURL(%q) accepted", tt.in)
		case tt.want == "" && !errors.Is(err, ErrInvalidArgument):
			t.Errorf("WithBaseURL(%q) error %v does not match ErrInvalidArgument", tt.in, err)
		case tt.want != "" && err != nil:
			t.Errorf("WithBaseURL(%q): %v", tt.in, err)
		case tt.want != "" && c.BaseURL() != tt.want:
			t.Errorf("WithBaseURL(%q) = %s, want %s", tt.in, c.BaseURL(), tt.want)
		}
		if err != nil && strings.Contains(err.Error(), "user:pass") {
			t.Errorf("error repeats the URL's credentials: %v", err)
		}
	}
}

func TestNewClientRefusesUnusableCredentials(t *testing.T) {
	for _, tt := range []struct{ email, key string }{
		{"", testKey}, {testEmail, ""}, {"a:b@example.com", testKey}, {"a@example.com\r\nX: y", testKey}, {testEmail, "key\n"},
	} {
		_, err := NewClient(tt.email, tt.key)
		if !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("NewClient(%q, …) = %v", tt.email, err)
		}
		if err != nil && tt.key != "" && strings.Contains(err.Error(), tt.key) {
			t.Errorf("error contains the key: %v", err)
		}
	}
	if _, err := NewClient(testEmail, testKey, WithMaxWait(0)); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("WithMaxWait(0) accepted: %v", err)
	}
}

func TestRequestHeaders(t *testing.T) {
	c, mt := setup(t, WithUserAgent("acme-market/2.1"))
	var rec recorder
	mt.RegisterResponder("PATCH", testBase+"transaction/5", rec.then(respond(200, `{"id": 5}`)))
	if _, err := c.Transactions.Agree(context.Background(), 5, AsCustomer("buyer@example.com")); err != nil {
		t.Fatal(err)
	}
	h := rec.all()[0].Header
	checks := map[string]string{
		"Authorization": "Basic " + basicToken(testEmail, testKey),
		"User-Agent":    "acme-market/2.1 escrow-go/" + Version + " (" + runtime.Version() + "; +https://github.com/escrowkit/escrow-go)",
		"Accept":        "application/json",
		"Content-Type":  "application/json",
		"As-Customer":   "buyer@example.com",
	}
	for k, want := range checks {
		if got := h.Get(k); got != want {
			t.Errorf("%s = %q, want %q", k, got, want)
		}
	}
}

func TestNoAsCustomerHeaderByDefault(t *testing.T) {
	c, mt := setup(t)
	var rec recorder
	mt.RegisterResponder("GET", testBase+"transaction/5", rec.then(respond(200, `{"id": 5}`)))
	if _, err := c.Transactions.Get(context.Background(), 5); err != nil {
		t.Fatal(err)
	}
	if h := rec.all()[0].Header; h.Get("As-Customer") != "" || h.Get("Content-Type") != "" {
		t.Errorf("headers %v", h)
	}
	if _, err := c.Transactions.Get(context.Background(), 5, AsCustomer("a@b.c\nX-Evil: 1")); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("a header-splitting As-Customer was not refused: %v", err)
	}
}

func TestPathSegmentsAreEscaped(t *testing.T) {
	c, mt := setup(t)
	var rec recorder
	mt.RegisterNoResponder(rec.then(respond(200, `{"id": 1}`)))
	ctx := context.Background()
	for ref, want := range map[string]string{
		"order/2024/55": "/2017-09-01/transaction/reference/order%2F2024%2F55",
		"a b?c#d%":      "/2017-09-01/transaction/reference/a%20b%3Fc%23d%25",
		"order-1042":    "/2017-09-01/transaction/reference/order-1042",
		"ünï/cødé":      "/2017-09-01/transaction/reference/%C3%BCn%C3%AF%2Fc%C3%B8d%C3%A9",
	} {
		if _, err := c.Transactions.GetByReference(ctx, ref); err != nil {
			t.Fatalf("GetByReference(%q): %v", ref, err)
		}
		if got := rec.all()[rec.count()-1].EscapedPath; got != want {
			t.Errorf("GetByReference(%q) requested %s, want %s", ref, got, want)
		}
	}
	before := rec.count()
	// "../customer/me" escapes to one segment, but a server that decodes %2F climbs with it.
	for _, ref := range []string{"", ".", "..", "../customer/me"} {
		if _, err := c.Transactions.GetByReference(ctx, ref); !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("GetByReference(%q) = %v, want ErrInvalidArgument", ref, err)
		}
	}
	for _, id := range []int64{0, -1} {
		if _, err := c.Transactions.Get(ctx, id); !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("Get(%d) = %v", id, err)
		}
	}
	for _, ref := range []CustomerRef{"", "you", "08", "-8", "me/../9", "8 "} {
		if _, err := c.Customers.Get(ctx, ref); !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("Get(CustomerRef(%q)) = %v", ref, err)
		}
	}
	if _, err := c.Customers.Get(ctx, CustomerID(0)); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("Get(CustomerID(0)) = %v", err)
	}
	if rec.count() != before {
		t.Errorf("refused calls sent %d requests", rec.count()-before)
	}
}

func TestRedirectToAnotherHostIsRefused(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, mt := setup(t)
		var rec recorder
		mt.RegisterResponder("GET", testBase+"transaction/1", rec.then(respond(302, ``, "Location", "https://evil.example/steal")))
		mt.RegisterResponder("GET", "https://evil.example/steal", func(*http.Request) (*http.Response, error) {
			t.Error("the redirect was followed to another host")
			return httpmock.NewStringResponse(200, `{}`), nil
		})
		_, err := c.Transactions.Get(context.Background(), 1)
		if !errors.Is(err, ErrRedirectRefused) {
			t.Fatalf("err = %v, want ErrRedirectRefused", err)
		}
		if rec.count() != 1 {
			t.Errorf("a refused redirect was retried %d times", rec.count()-1)
		}
	})
}

func TestRedirectToPlainHTTPIsRefusedAndSameHostFollowed(t *testing.T) {
	c, mt := setup(t)
	mt.RegisterResponder("GET", testBase+"transaction/1", respond(302, ``, "Location", "http://api.test/2017-09-01/transaction/1"))
	if _, err := c.Transactions.Get(context.Background(), 1); !errors.Is(err, ErrRedirectRefused) {
		t.Errorf("downgrade to http: err = %v", err)
	}
	var rec recorder
	mt.RegisterResponder("GET", testBase+"transaction/2", respond(307, ``, "Location", testBase+"transaction/3"))
	mt.RegisterResponder("GET", testBase+"transaction/3", rec.then(respond(200, `{"id": 3}`)))
	tx, err := c.Transactions.Get(context.Background(), 2)
	if err != nil || tx.ID != 3 {
		t.Fatalf("same-host redirect: %v, %v", tx, err)
	}
	if rec.all()[0].Header.Get("Authorization") == "" {
		t.Error("credentials were not kept on a same-host redirect")
	}
}

func TestWithHTTPClientIsNotModified(t *testing.T) {
	mt := httpmock.NewMockTransport()
	hc := &http.Client{Transport: mt}
	if _, err := NewClient(testEmail, testKey, WithHTTPClient(hc)); err != nil {
		t.Fatal(err)
	}
	if hc.CheckRedirect != nil || hc.Transport != mt || hc.Timeout != 0 {
		t.Error("the caller's http.Client was changed")
	}
}

// TestCredentialsNeverLeak drives every failure path with a logger at Debug level and
// checks each error string, its %+v and %#v forms, and every log line.
func TestCredentialsNeverLeak(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var logs bytes.Buffer
		logger := slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
		c, mt := setup(t, WithLogger(logger), WithMaxRetries(1))
		token := basicToken(testEmail, testKey)
		echo := func(status int) httpmock.Responder {
			return func(req *http.Request) (*http.Response, error) {
				// A careless server that echoes the request's credentials in its error body.
				body := fmt.Sprintf(`{"message": "bad key %s", "auth": %q}`, testKey, req.Header.Get("Authorization"))
				return respond(status, body)(req)
			}
		}
		mt.RegisterResponder("GET", testBase+"transaction/1", echo(401))
		mt.RegisterResponder("GET", testBase+"transaction/2", echo(429))
		mt.RegisterResponder("GET", testBase+"transaction/3", echo(500))
		mt.RegisterResponder("GET", testBase+"transaction/4", fail(fmt.Errorf("proxy said: Authorization: Basic %s", token)))
		mt.RegisterResponder("POST", testBase+"transaction", echo(422))
		mt.RegisterResponder("GET", testBase+"transaction/5", respond(200, `{"id": "not a number `+testKey+`"}`))

		ctx := context.Background()
		var errs []error
		for id := int64(1); id <= 5; id++ {
			_, err := c.Transactions.Get(ctx, id)
			errs = append(errs, err)
		}
		_, err := c.Transactions.Create(ctx, &CreateTransactionRequest{Currency: USD})
		errs = append(errs, err)
		for i, err := range errs {
			if err == nil {
				t.Fatalf("call %d did not fail", i)
			}
			mustContainNone(t, fmt.Sprintf("error %d", i), err.Error())
			mustContainNone(t, fmt.Sprintf("error %d %%+v", i), fmt.Sprintf("%+v", err))
			mustContainNone(t, fmt.Sprintf("error %d %%#v", i), fmt.Sprintf("%#v", err))
			var apiErr *APIError
			if errors.As(err, &apiErr) {
				mustContainNone(t, "APIError.Body", string(apiErr.Body))
			}
			var decErr *DecodeError
			if errors.As(err, &decErr) {
				mustContainNone(t, "DecodeError.Body", string(decErr.Body))
			}
		}
		if logs.Len() == 0 {
			t.Fatal("nothing was logged at Debug level")
		}
		mustContainNone(t, "the log", logs.String())
		mustContainNone(t, "%+v of the client", fmt.Sprintf("%+v", c))
		mustContainNone(t, "%#v of the client", fmt.Sprintf("%#v", *c))
	})
}

func TestSilentByDefault(t *testing.T) {
	c, err := NewClient(testEmail, testKey)
	if err != nil {
		t.Fatal(err)
	}
	if c.logger.Enabled(context.Background(), slog.LevelError) {
		t.Error("the default logger is enabled")
	}
}

// TestAgainstATLSServer is the contract of the core: WithBaseURL and WithHTTPClient against
// any TLS test server give typed results and typed errors.
func TestAgainstATLSServer(t *testing.T) {
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("RateLimit-Remaining", "41")
		switch r.URL.Path {
		case "/2017-09-01/transaction/29292":
			w.Write([]byte(readTestdata(t, "transaction.json")))
		case "/2017-09-01/customer/me":
			w.WriteHeader(http.StatusUnauthorized)
			w.Write([]byte(`{"error": "Invalid credentials"}`))
		default:
			w.WriteHeader(http.StatusNotFound)
		}
	}))
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the untrusting client's handshake fails on purpose
	srv.StartTLS()
	defer srv.Close()
	c, err := NewClient(testEmail, testKey, WithBaseURL(srv.URL+"/2017-09-01/"), WithHTTPClient(srv.Client()))
	if err != nil {
		t.Fatal(err)
	}
	tx, err := c.Transactions.Get(context.Background(), 29292)
	if err != nil || tx.ID != 29292 || tx.Items[0].Schedule[0].Amount.String() != "95000.00" {
		t.Fatalf("Get = %+v, %v", tx, err)
	}
	if _, err := c.Customers.Get(context.Background(), Me); !errors.Is(err, ErrUnauthorized) {
		t.Errorf("Customers.Get = %v, want ErrUnauthorized", err)
	}
	if _, err := c.Transactions.Get(context.Background(), 1); !errors.Is(err, ErrNotFound) {
		t.Errorf("Get(1) = %v, want ErrNotFound", err)
	}
	// Without the test server's certificate pool, TLS verification fails: no retry, typed.
	untrusting, _ := NewClient(testEmail, testKey, WithBaseURL(srv.URL+"/2017-09-01/"))
	_, err = untrusting.Transactions.Get(context.Background(), 29292)
	var te *TransportError
	if !errors.As(err, &te) || te.Attempts != 1 || te.OutcomeUnknown {
		t.Errorf("untrusted certificate: %#v", err)
	}
}

func TestRefusedArgumentsSendNothing(t *testing.T) {
	c, _ := setup(t) // any request fails the test
	ctx := context.Background()
	checks := map[string]error{}
	_, checks["Partner.Customer(nil)"] = c.Partner.Customer(ctx, nil)
	_, checks["Partner.Customer(empty)"] = c.Partner.Customer(ctx, &PartnerCustomerOptions{})
	_, checks["SelectDisbursementMethod(nil)"] = c.Transactions.SelectDisbursementMethod(ctx, 1, nil)
	_, checks["ChoosePaymentMethod(empty name)"] = c.Transactions.ChoosePaymentMethod(ctx, 1, "", nil)
	_, checks["WebLink(empty action)"] = c.Transactions.GetWebLink(ctx, 1, "")
	_, checks["ItemWebLink(item 0)"] = c.Transactions.GetItemWebLink(ctx, 1, 0, "receive")
	_, checks["PaymentsIn(0)"] = c.Partner.PaymentsIn(ctx, 0)
	_, checks["Customers.GetDisbursementMethod(zero ref)"] = c.Customers.GetDisbursementMethod(ctx, "", 3)
	_, checks["Webhooks.List(CustomerID(-1))"] = c.Webhooks.List(ctx, CustomerID(-1))
	for what, err := range checks {
		if !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("%s = %v, want ErrInvalidArgument", what, err)
		}
	}
}

// TestFiveRedirectsFollowedNotSix: a chain of redirects on the API's own host is followed
// five times, as the error for a longer one says ("more than 5 redirects"); the sixth is
// refused.
func TestFiveRedirectsFollowedNotSix(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, mt := setup(t)
		// transaction/1 redirects to 2, 2 to 3, ...; 6 (five redirects on) answers, and so does 13.
		for i := 1; i <= 12; i++ {
			if i == 6 {
				continue
			}
			mt.RegisterResponder("GET", fmt.Sprintf("%stransaction/%d", testBase, i),
				respond(307, ``, "Location", fmt.Sprintf("%stransaction/%d", testBase, i+1)))
		}
		mt.RegisterResponder("GET", testBase+"transaction/6", respond(200, `{"id": 6}`))
		mt.RegisterResponder("GET", testBase+"transaction/13", respond(200, `{"id": 13}`))
		if tx, err := c.Transactions.Get(context.Background(), 1); err != nil || tx.ID != 6 {
			t.Errorf("five redirects: %v, %v; want transaction 6", tx, err)
		}
		if _, err := c.Transactions.Get(context.Background(), 7); !errors.Is(err, ErrRedirectRefused) {
			t.Errorf("six redirects: err = %v, want ErrRedirectRefused", err)
		}
	})
}

// TestUserAgentKeepsAProductWithSpaces: a product such as "acme-market/2.1 (+https://…)"
// carries spaces, which are not control characters: it leads the User-Agent. One carrying
// a line break is dropped.
func TestUserAgentKeepsAProductWithSpaces(t *testing.T) {
	const product = "acme-market/2.1 (+https://acme.example)"
	if ua := userAgent(product); !strings.HasPrefix(ua, product+" escrow-go/") {
		t.Errorf("User-Agent %q, want it to start with %q", ua, product)
	}
	if ua := userAgent("acme\r\nX-Evil: 1"); !strings.HasPrefix(ua, "escrow-go/") {
		t.Errorf("User-Agent %q carries a product with a line break", ua)
	}
}

// TestLocalhostInAnyCase: plain HTTP is allowed to localhost however it is spelt.
func TestLocalhostInAnyCase(t *testing.T) {
	if _, err := NewClient(testEmail, testKey, WithBaseURL("http://LocalHost:8080/")); err != nil {
		t.Errorf("http://LocalHost:8080/ refused: %v", err)
	}
}

// TestBaseURLKeepsItsEscapesWithoutATrailingSlash: a base URL given without its trailing
// slash keeps the escapes of its path (a gateway's "%2F" stays one segment) when the slash
// is added.
func TestBaseURLKeepsItsEscapesWithoutATrailingSlash(t *testing.T) {
	var got string
	rt := httpmock.NewMockTransport()
	rt.RegisterNoResponder(func(r *http.Request) (*http.Response, error) {
		got = r.URL.EscapedPath()
		return httpmock.NewStringResponse(http.StatusOK, `{"id": 1}`), nil
	})
	c, err := NewClient(testEmail, testKey, WithBaseURL("https://gateway.example.com/escrow%2Fapi/2017-09-01"), WithHTTPClient(&http.Client{Transport: rt}))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Transactions.Get(context.Background(), 1); err != nil {
		t.Fatal(err)
	}
	if want := "/escrow%2Fapi/2017-09-01/transaction/1"; got != want {
		t.Errorf("requested %s, want %s", got, want)
	}
}

// TestStatusClassDecidesSuccess: every 2xx answer is a success, 299 included, and a 3xx the
// client did not follow (a 300 without Location) is an error on an endpoint that does not
// ask for its redirects.
func TestStatusClassDecidesSuccess(t *testing.T) {
	c, mt := setup(t)
	mt.RegisterResponder("GET", testBase+"transaction/1", respond(299, `{"id": 1}`))
	mt.RegisterResponder("GET", testBase+"transaction/2", respond(300, `{"id": 2}`))
	if tx, err := c.Transactions.Get(context.Background(), 1); err != nil || tx.ID != 1 {
		t.Errorf("a 299 answer: tx %+v, err %v; want the transaction", tx, err)
	}
	var apiErr *APIError
	if _, err := c.Transactions.Get(context.Background(), 2); !errors.As(err, &apiErr) || apiErr.StatusCode != 300 {
		t.Errorf("an unfollowed 300 answer: err %v; want an *APIError with status 300", err)
	}
}

// TestDecodeErrorShowsTheBody: a success body that does not decode is kept in the error, so
// the user can see what the server sent.
func TestDecodeErrorShowsTheBody(t *testing.T) {
	c, mt := setup(t)
	mt.RegisterResponder("GET", testBase+"transaction/1", respond(200, `<html>maintenance</html>`))
	_, err := c.Transactions.Get(context.Background(), 1)
	var de *DecodeError
	if !errors.As(err, &de) || string(de.Body) != `<html>maintenance</html>` {
		t.Errorf("err = %v; want a *DecodeError holding the body", err)
	}
}

// TestRefusedBaseURLSaysWhy: a plain-HTTP base URL is refused with the loopback exception
// named, and another scheme with the one required, so the fix is in the message.
func TestRefusedBaseURLSaysWhy(t *testing.T) {
	for raw, want := range map[string]string{
		"http://api.escrow.com/2017-09-01/": "plain HTTP is allowed only to loopback hosts",
		"ftp://api.escrow.com/2017-09-01/":  "scheme must be https",
	} {
		_, err := NewClient(testEmail, testKey, WithBaseURL(raw))
		if !errors.Is(err, ErrInvalidArgument) || !strings.Contains(err.Error(), want) {
			t.Errorf("WithBaseURL(%q): %v; want ErrInvalidArgument saying %q", raw, err, want)
		}
	}
}

// closeCounter is a response body that counts how often it is closed.
type closeCounter struct {
	io.Reader
	closed *atomic.Int32
}

func (b closeCounter) Close() error { b.closed.Add(1); return nil }

// TestAnswerBodiesAreClosed: every answer's body is closed, whatever becomes of the call (a
// success, an API error, a 429 whose hint is too long to wait for), so no connection is
// leaked.
func TestAnswerBodiesAreClosed(t *testing.T) {
	for _, tc := range []struct {
		name    string
		status  int
		headers []string
	}{
		{"success", 200, nil},
		{"API error", 404, nil},
		{"429 with too long a hint", 429, []string{"Retry-After", "3600"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, mt := setup(t)
			var closed atomic.Int32
			mt.RegisterResponder("GET", testBase+"transaction/1", func(req *http.Request) (*http.Response, error) {
				resp, err := respond(tc.status, `{"id": 1}`, tc.headers...)(req)
				if err == nil {
					resp.Body = closeCounter{resp.Body, &closed}
				}
				return resp, err
			})
			_, _ = c.Transactions.Get(context.Background(), 1)
			if n := closed.Load(); n < 1 {
				t.Errorf("the answer's body was closed %d times, want at least once", n)
			}
		})
	}
}

// TestCancelledContextEndsAZeroWait: a wait of zero after the caller cancelled reports the
// cancellation rather than going ahead.
func TestCancelledContextEndsAZeroWait(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for range 64 { // a select on a timer and the context picks either ready case at random
		if err := sleep(ctx, 0); !errors.Is(err, context.Canceled) {
			t.Fatalf("sleep(cancelled, 0) = %v, want context.Canceled", err)
		}
	}
}

// TestResourceCapIsExact: an answer of exactly MaxResourceBody bytes is read, and one byte
// more is refused as too long, even when the bytes within the cap are a whole document
// (here the extra byte is a space after it). With and without Content-Length, which decides
// how the buffer grows.
func TestResourceCapIsExact(t *testing.T) {
	doc := func(size int) string {
		head := `{"id": 1, "description": "`
		return head + strings.Repeat("x", size-len(head)-2) + `"}`
	}
	for _, withLength := range []bool{true, false} {
		for _, tc := range []struct {
			body string
			ok   bool
		}{
			{doc(MaxResourceBody), true},
			{doc(MaxResourceBody) + " ", false},
		} {
			c, mt := setup(t)
			mt.RegisterResponder("GET", testBase+"transaction/1", func(req *http.Request) (*http.Response, error) {
				resp, err := respond(200, tc.body)(req)
				if err == nil {
					resp.ContentLength = -1
					if withLength {
						resp.ContentLength = int64(len(tc.body))
					}
				}
				return resp, err
			})
			_, err := c.Transactions.Get(context.Background(), 1)
			var de *DecodeError
			switch {
			case tc.ok && err != nil:
				t.Errorf("Content-Length %v: a body of %d bytes refused: %v", withLength, len(tc.body), err)
			case !tc.ok && (!errors.As(err, &de) || !strings.Contains(err.Error(), "exceeds")):
				t.Errorf("Content-Length %v: a body of %d bytes: %v; want a DecodeError saying it exceeds the cap", withLength, len(tc.body), err)
			}
		}
	}
}

// TestAnswerWithHeadersBeyondTheBoundFailsAtOnce: an answer of 8 MiB of headers (a 200,
// read with WithResponse, which keeps and redacts every header) fails the call with a
// *TransportError that names the bound, after one request: the client's own transport
// reads no more than MaxResponseHeaderBytes of them, and the same answer would come
// again. Headers of half the bound pass.
func TestAnswerWithHeadersBeyondTheBoundFailsAtOnce(t *testing.T) {
	var requests atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		size := 8 << 20
		if strings.HasSuffix(r.URL.Path, "/8") {
			size = MaxResponseHeaderBytes / 2
		}
		for i := 0; i*1024 < size; i++ {
			w.Header().Set(fmt.Sprintf("X-Pad-%d", i), strings.Repeat("p", 1000))
		}
		_, _ = w.Write([]byte(`{"id":7}`))
	}))
	t.Cleanup(srv.Close)
	c, err := NewClient(testEmail, testKey, WithBaseURL(srv.URL+"/2017-09-01/"))
	if err != nil {
		t.Fatal(err)
	}
	var r Response
	_, err = c.Transactions.Get(t.Context(), 7, WithResponse(&r))
	var te *TransportError
	if !errors.As(err, &te) || !errors.Is(err, errHeadersTooLarge) || !strings.Contains(err.Error(), "MaxResponseHeaderBytes") {
		t.Fatalf("err = %v, want a *TransportError naming MaxResponseHeaderBytes", err)
	}
	if n := requests.Load(); n != 1 || te.Attempts != 1 {
		t.Errorf("%d requests, %d attempts; want one of each: the answer is not asked again", n, te.Attempts)
	}
	if len(r.Header) != 0 {
		t.Errorf("WithResponse kept %d headers of the refused answer", len(r.Header))
	}
	if _, err := c.Transactions.Get(t.Context(), 8, WithResponse(&r)); err != nil || len(r.Header) < 32 {
		t.Errorf("headers of half the bound: %v, %d headers", err, len(r.Header))
	}
}

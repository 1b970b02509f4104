package escrow

// Client policies that hand-applied mutants of client.go (the mechanism of scripts/mutate)
// showed unpinned.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/jarcoal/httpmock"
)

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

// TestReportDownloadHandsBackEveryRedirectAndOnlyRedirects: a report download hands back
// any 3xx with its Location, 300 included, and a 400 is an error, not a redirect.
func TestReportDownloadHandsBackEveryRedirectAndOnlyRedirects(t *testing.T) {
	c, mt := setup(t)
	const where = "https://reports.escrow-files.example/rpt_9f2c.csv"
	mt.RegisterResponder("GET", downloadPath, respond(http.StatusMultipleChoices, ``, "Location", where))
	if d, err := c.Partner.DownloadReport(context.Background(), "rpt_9f2c", nil); err != nil || d.URL != where {
		t.Errorf("300: %+v, %v; want the URL %s", d, err, where)
	}
	mt.RegisterResponder("GET", downloadPath, respond(http.StatusBadRequest, `{"error": "bad task"}`, "Location", where))
	var apiErr *APIError
	if _, err := c.Partner.DownloadReport(context.Background(), "rpt_9f2c", nil); !errors.As(err, &apiErr) || apiErr.StatusCode != 400 {
		t.Errorf("400: err = %v, want an *APIError of status 400", err)
	}
}

// TestLocalhostInAnyCase: plain HTTP is allowed to localhost however it is spelt.
func TestLocalhostInAnyCase(t *testing.T) {
	if _, err := NewClient(testEmail, testKey, WithBaseURL("http://LocalHost:8080/")); err != nil {
		t.Errorf("http://LocalHost:8080/ refused: %v", err)
	}
}

// TestNanosecondMaxWaitRetries: the shortest maximum wait a client accepts, a nanosecond,
// still lets it retry: the full-jitter draw over [0, 1ns] must not fail on the range.
func TestNanosecondMaxWaitRetries(t *testing.T) {
	mt := httpmock.NewMockTransport()
	mt.RegisterResponder("GET", testBase+"transaction/1", httpmock.ResponderFromMultipleResponses([]*http.Response{
		httpmock.NewStringResponse(http.StatusServiceUnavailable, `{"error": "down"}`),
		httpmock.NewStringResponse(http.StatusServiceUnavailable, `{"error": "down"}`),
		httpmock.NewStringResponse(http.StatusOK, `{"id": 1}`),
	}))
	c, err := NewClient(testEmail, testKey, WithBaseURL(testBase), WithHTTPClient(&http.Client{Transport: mt}), WithMaxWait(time.Nanosecond))
	if err != nil {
		t.Fatal(err)
	}
	tx, err := c.Transactions.Get(context.Background(), 1)
	if err != nil || tx.ID != 1 {
		t.Fatalf("got %v, %v; want transaction 1 on the third attempt", tx, err)
	}
	if n := mt.GetTotalCallCount(); n != 3 {
		t.Errorf("%d attempts, want 3", n)
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

// TestStatusClassDecidesSuccess: every 2xx answer is a success, 299 included, and a 3xx
// the client did not follow (a 300 without Location) is an error on an endpoint that does
// not ask for its redirects. gremlins' client.go:446:47 (> made >=) and 445:31 (&& made ||)
// lived before this test.
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
// the user can see what the server sent. gremlins' client.go:477:144 (64<<10 made 64>>10,
// an empty excerpt) lived before this test.
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
// gremlins' client.go:216:16 (== made !=: each refused with the other's reason) lived
// before this test.
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

// TestRefusedCallLeavesNoStaleResponse: a Response reused across calls describes the last
// call; one refused before anything is sent leaves no answer in it, not the previous one's.
// Our own mutants client.go:381:2 and 382:3 (the reset removed) lived before this test.
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
// ErrInvalidArgument, not a panic. Our own mutant client.go:386:2 (the error of building the
// request ignored) lived before this test.
func TestInvalidMethodIsRefused(t *testing.T) {
	c, _ := setup(t)
	if err := c.Do(context.Background(), "GET /x", "transaction/1", nil, nil); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("Do with method %q: %v, want ErrInvalidArgument", "GET /x", err)
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
// leaked. Our own mutants client.go:429:3, 430:4 and 443:2 (a Close removed) lived before
// this test.
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

// TestEmptyAnswerIntoRawMessage: Do into a json.RawMessage takes an empty success body as
// no document (nil), not as malformed JSON, and leaves nothing of an earlier call in it.
// Our own mutants client.go:492:3 and 493:4 lived before this test.
func TestEmptyAnswerIntoRawMessage(t *testing.T) {
	c, mt := setup(t)
	mt.RegisterResponder("POST", testBase+"transaction/1/undocumented", respond(200, ""))
	raw := json.RawMessage(`{"stale": true}`)
	if err := c.Do(context.Background(), "POST", "transaction/1/undocumented", nil, &raw); err != nil || raw != nil {
		t.Errorf("an empty answer: err %v, raw %q; want no error and nil", err, raw)
	}
}

// TestResourceCapIsExact: an answer of exactly MaxResourceBody bytes is read, and one byte
// more is refused as too long, even when the bytes within the cap are a whole document
// (here the extra byte is a space after it). With and without Content-Length, which decides
// how the buffer grows. Our own mutant client.go:530:5 (the byte past the cap ignored)
// lived before this test.
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

// TestCancelledContextEndsAZeroWait: a wait of zero after the caller cancelled reports the
// cancellation rather than going ahead. Our own mutant client.go:633:2 (the zero wait made a
// timer racing the context) lived before this test.
func TestCancelledContextEndsAZeroWait(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for range 64 { // the mutant's select picks either ready case at random
		if err := sleep(ctx, 0); !errors.Is(err, context.Canceled) {
			t.Fatalf("sleep(cancelled, 0) = %v, want context.Canceled", err)
		}
	}
}

package escrow

import (
	"bytes"
	"encoding/json"
	"flag"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jarcoal/httpmock"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

const (
	testEmail = "partner@example.com"
	testKey   = "4171_Zq8sEcReTkEyThAtMuStNeVeRlEaK0123456789abcdef"
	testBase  = "https://api.test/2017-09-01/"
)

// setup returns a client bound to a fresh mock transport on which any request without a
// responder fails the test. Waits are made deterministic: every jitter draw is its ceiling.
func setup(t *testing.T, opts ...Option) (*Client, *httpmock.MockTransport) {
	t.Helper()
	mt := httpmock.NewMockTransport()
	mt.RegisterNoResponder(func(req *http.Request) (*http.Response, error) {
		t.Errorf("unexpected request: %s %s", req.Method, req.URL.String())
		return httpmock.NewStringResponse(http.StatusTeapot, "no responder"), nil
	})
	base := []Option{WithBaseURL(testBase), WithHTTPClient(&http.Client{Transport: mt})}
	c, err := NewClient(testEmail, testKey, append(base, opts...)...)
	if err != nil {
		t.Fatalf("NewClient: %v", err)
	}
	c.jitter = func(d time.Duration) time.Duration { return d }
	return c, mt
}

// recorded is what a responder saw of one request.
type recorded struct {
	Method, EscapedPath, RawQuery string
	Header                        http.Header
	Body                          []byte
}

// recorder keeps every request a mock responder sees, safely across goroutines.
type recorder struct {
	mu   sync.Mutex
	reqs []recorded
}

func (r *recorder) record(req *http.Request) {
	var body []byte
	if req.Body != nil {
		body, _ = io.ReadAll(req.Body)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.reqs = append(r.reqs, recorded{req.Method, req.URL.EscapedPath(), req.URL.RawQuery, req.Header.Clone(), body})
}

func (r *recorder) all() []recorded {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]recorded(nil), r.reqs...)
}

func (r *recorder) count() int { return len(r.all()) }

// then wraps a responder so that it records each request first.
func (r *recorder) then(next httpmock.Responder) httpmock.Responder {
	return func(req *http.Request) (*http.Response, error) {
		r.record(req)
		return next(req)
	}
}

// respond answers with a status, a JSON body and header pairs ("Retry-After", "3", ...).
func respond(status int, body string, headerPairs ...string) httpmock.Responder {
	return func(req *http.Request) (*http.Response, error) {
		resp := httpmock.NewStringResponse(status, body)
		resp.Header.Set("Content-Type", "application/json")
		for i := 0; i+1 < len(headerPairs); i += 2 {
			resp.Header.Set(headerPairs[i], headerPairs[i+1])
		}
		resp.Request = req
		return resp, nil
	}
}

// sequence answers with each responder in turn, repeating the last one.
func sequence(responders ...httpmock.Responder) httpmock.Responder {
	var mu sync.Mutex
	n := 0
	return func(req *http.Request) (*http.Response, error) {
		mu.Lock()
		r := responders[min(n, len(responders)-1)]
		n++
		mu.Unlock()
		return r(req)
	}
}

// fail answers with a transport error.
func fail(err error) httpmock.Responder {
	return func(*http.Request) (*http.Response, error) { return nil, err }
}

// readTestdata returns a file of testdata/.
func readTestdata(t *testing.T, name string) string {
	t.Helper()
	b, err := readFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// golden compares a JSON document with testdata/name byte for byte after both are
// compacted, so that number formatting ("1000.00" against "1000.0") counts. With -update
// it rewrites the file, indented, instead.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		var pretty bytes.Buffer
		if err := json.Indent(&pretty, got, "", "  "); err != nil {
			t.Fatalf("golden %s: %v in %s", name, err, got)
		}
		pretty.WriteByte('\n')
		if err := os.WriteFile(path, pretty.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("golden %s: %v (run go test -update to create it)", name, err)
	}
	if c1, c2 := compact(t, got), compact(t, want); c1 != c2 {
		t.Errorf("body differs from %s\n got: %s\nwant: %s", path, c1, c2)
	}
}

func compact(t *testing.T, b []byte) string {
	t.Helper()
	var buf bytes.Buffer
	if err := json.Compact(&buf, b); err != nil {
		t.Fatalf("not JSON: %v: %s", err, b)
	}
	return buf.String()
}

// mustContainNone fails when s contains any secret of the test client.
func mustContainNone(t *testing.T, what, s string) {
	t.Helper()
	token := basicToken(testEmail, testKey)
	for _, secret := range []string{testKey, token} {
		if strings.Contains(s, secret) {
			t.Errorf("%s contains %q:\n%s", what, secret, s)
		}
	}
}

package escrow

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"runtime"
	"runtime/metrics"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jarcoal/httpmock"
)

// repeated is a body of prefix, unit repeated, and suffix, size bytes in all, generated as
// it is read so that the test itself holds none of it.
type repeated struct {
	prefix, unit, suffix string
	size, off            int64
}

func (r *repeated) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) && r.off < r.size {
		var c byte
		switch tail := r.size - int64(len(r.suffix)); {
		case r.off < int64(len(r.prefix)):
			c = r.prefix[r.off]
		case r.off >= tail:
			c = r.suffix[r.off-tail]
		default:
			c = r.unit[(r.off-int64(len(r.prefix)))%int64(len(r.unit))]
		}
		p[n] = c
		n++
		r.off++
	}
	if n == 0 {
		return 0, io.EOF
	}
	return n, nil
}

func (r *repeated) Close() error { return nil }

// hostile answers 200 with a generated body; contentLength < 0 leaves the length unknown.
func hostile(prefix, unit, suffix string, size, contentLength int64) httpmock.Responder {
	return func(req *http.Request) (*http.Response, error) {
		return &http.Response{
			StatusCode: http.StatusOK, Status: "200 OK", Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
			Header:        http.Header{"Content-Type": {"application/json"}},
			Body:          &repeated{prefix: prefix, unit: unit, suffix: suffix, size: size},
			ContentLength: contentLength, Request: req,
		}, nil
	}
}

// peakHeap runs f and returns the most heap its objects took at once beyond what was in
// use before, sampled every 200µs from runtime/metrics (which does not stop the world).
func peakHeap(f func()) uint64 {
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	read := func() uint64 { metrics.Read(sample); return sample[0].Value.Uint64() }
	runtime.GC()
	base := read()
	var peak uint64
	var mu sync.Mutex
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		tick := time.NewTicker(200 * time.Microsecond)
		defer tick.Stop()
		for {
			v := read()
			mu.Lock()
			peak = max(peak, v)
			mu.Unlock()
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
	})
	f()
	close(done)
	wg.Wait()
	peak = max(peak, read())
	if peak < base {
		return 0
	}
	return peak - base
}

// TestHostileAnswersCostBoundedMemory: answers built to blow the heap up cost at most
// 64 MiB each and fail with a *DecodeError. On main, the 16 MiB list of empty items took a
// 4.5 GB heap, a Content-Length of 64 MiB was allocated before any byte arrived, and a
// 60 MiB report decoded into a map peaked at 1.2 GB.
func TestHostileAnswersCostBoundedMemory(t *testing.T) {
	const bound = 64 << 20
	type hostileCase struct {
		name    string
		method  string
		path    string
		answer  httpmock.Responder
		call    func(c *Client) error
		decodes bool // fails with a *DecodeError
	}
	ctx := context.Background()
	get := func(c *Client) error { _, err := c.Transactions.Get(ctx, 7); return err }
	list := func(c *Client) error { _, err := c.Transactions.List(ctx, nil); return err }
	cases := []hostileCase{
		{"16 MiB of empty items", "GET", "transaction/7", hostile(`{"items":[`, `{},`, `{}]}`, 16<<20, -1), get, true},
		{"1 MiB of empty items, under the cap", "GET", "transaction/7", hostile(`{"items":[`, `{},`, `{}]}`, 1<<20-1, 1<<20-1), get, true},
		{"empty parties, list", "GET", "transaction", hostile(`{"transactions":[{"parties":[`, `{},`, `{}]}]}`, 8<<20-1, -1), list, true},
		{"empty transactions, list", "GET", "transaction", hostile(`{"transactions":[`, `{},`, `{}]}`, 8<<20-1, -1), list, true},
		{"empty strings, list", "GET", "transaction", hostile(`{"transactions":[{"parties":[{"visibility":{"hidden_from":[`, `"",`, `""]}}]}]}`, 8<<20-1, -1), list, true},
		{"amounts, list", "GET", "transaction", hostile(`{"transactions":[{"items":[{"schedule":[`, `{"amount":1},`, `{"amount":1}]}]}]}`, 8<<20-1, -1), list, true},
		{"deep nesting", "GET", "transaction/7", hostile(`{"items":`, `[`, `]`, 1<<20-1, -1), get, true},
		{"a Content-Length of 64 MiB and no body", "GET", "transaction/7", hostile(``, ` `, ``, 0, 64<<20), get, true},
		{"timeline of empty entries", "GET", "transaction/7/timeline-entries", hostile(`[`, `{},`, `{}]`, 8<<20-1, -1),
			func(c *Client) error { _, err := c.Transactions.ListTimelineEntries(ctx, 7); return err }, true},
		{"60 MiB report", "GET", "partner/reports/r1/download", hostile(`{"rows":[`, `{"a":[0,0,0,0]},`, `{}]}`, 60<<20, -1),
			func(c *Client) error { _, err := c.Partner.DownloadReport(ctx, "r1", nil); return err }, true},
		{"report of members under the cap", "GET", "partner/reports/r1/download", hostile(`{`, `"a":[0],`, `"z":0}`, 16<<20-1, -1),
			func(c *Client) error { _, err := c.Partner.DownloadReport(ctx, "r1", nil); return err }, false},
		{"payments as an object of members", "GET", "partner/customer/5/payments_in", hostile(`{`, `"a":0,`, `"z":0}`, 8<<20-1, -1),
			func(c *Client) error { _, err := c.Partner.PaymentsIn(ctx, 5); return err }, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, mt := setup(t, WithMaxRetries(0))
			mt.RegisterResponder(tc.method, testBase+tc.path, tc.answer)
			var err error
			peak := peakHeap(func() { err = tc.call(c) })
			t.Logf("peak heap %.1f MiB, err: %.200v", float64(peak)/(1<<20), err)
			if peak > bound {
				t.Errorf("peak heap %d MiB, want at most %d MiB", peak>>20, bound>>20)
			}
			var de *DecodeError
			if tc.decodes && !errors.As(err, &de) {
				t.Errorf("want a *DecodeError, got %T %v", err, err)
			}
		})
	}
}

// TestHonestDocumentsFitTheBudget: a page of real transactions, well over the size that is
// decoded without a budget, decodes; the budget refuses only what no honest page holds.
func TestHonestDocumentsFitTheBudget(t *testing.T) {
	one := strings.TrimSpace(readTestdata(t, "transaction.json"))
	n := (2 << 20) / len(one)
	body := `{"page":1,"page_count":1,"per_page":` + itoa(n) + `,"transactions":[` + strings.TrimSuffix(strings.Repeat(one+",", n), ",") + `]}`
	c, mt := setup(t)
	mt.RegisterResponder(http.MethodGet, testBase+"transaction", respond(http.StatusOK, body))
	list, err := c.Transactions.List(context.Background(), nil)
	if err != nil {
		t.Fatalf("an honest page of %d transactions (%d bytes) was refused: %v", n, len(body), err)
	}
	if len(list.Transactions) != n {
		t.Errorf("decoded %d transactions, want %d", len(list.Transactions), n)
	}
	// The same page read by Get, whose cap is 1 MiB, is refused by size, not decoded.
	mt.RegisterResponder(http.MethodGet, testBase+"transaction/7", respond(http.StatusOK, body))
	var de *DecodeError
	if _, err := c.Transactions.Get(context.Background(), 7); !errors.As(err, &de) {
		t.Errorf("a 2 MiB answer to Get: want a *DecodeError, got %v", err)
	}
}

func itoa(n int) string {
	var b [20]byte
	i := len(b)
	for {
		i--
		b[i] = byte('0' + n%10)
		if n /= 10; n == 0 {
			return string(b[i:])
		}
	}
}

// Answers whose shape the spec does not show decode in every plausible form.
func TestUndocumentedShapesDecodeLeniently(t *testing.T) {
	var docs IdentificationDocuments
	for _, b := range []string{`[{"type": "passport", "country": "AU"}]`, `{"identification_documents": [{"type": "passport", "country": "AU"}]}`, `{"documents": [{"type": "passport", "country": "AU"}]}`} {
		docs = IdentificationDocuments{}
		if err := json.Unmarshal([]byte(b), &docs); err != nil || len(docs.IdentificationDocuments) != 1 || docs.IdentificationDocuments[0].Country != "AU" {
			t.Errorf("%s: %+v %v", b, docs, err)
		}
	}
	for _, b := range []string{`7`, `{"count": 7}`} {
		var c ReportsCount
		if err := json.Unmarshal([]byte(b), &c); err != nil || c.Count != 7 {
			t.Errorf("ReportsCount %s: %+v %v", b, c, err)
		}
	}
	var r Reports
	if err := json.Unmarshal([]byte(`[{"task_id": "t1", "status": "done"}]`), &r); err != nil || r.Reports[0].TaskID != "t1" || string(r.Raw) == "" {
		t.Errorf("Reports from a list: %+v %v", r, err)
	}
	var tl Timeline
	if err := json.Unmarshal([]byte(`{"warnings": [], "timeline_entries": [{"event": "ship"}]}`), &tl); err != nil || len(tl.Entries) != 1 || tl.Entries[0].Event != "ship" {
		t.Errorf("a named list must win over another list: %+v %v", tl, err)
	}
	if err := json.Unmarshal([]byte(`{"a": [1], "b": [2]}`), &tl); err == nil {
		t.Error("an object with two unnamed lists decoded without error")
	}
	var created CreatedReport
	if err := json.Unmarshal([]byte(`{"task_id": "r-9", "sort_by": "id", "transactions": [{"id": 4}]}`), &created); err != nil ||
		created.TaskID != "r-9" || created.SortBy != "id" || created.Transactions[0].ID != 4 {
		t.Errorf("CreatedReport: %+v %v", created, err)
	}
}

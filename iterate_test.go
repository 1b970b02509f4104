package escrow

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"math"
	"net/http"
	"net/url"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/jarcoal/httpmock"
)

// endless answers every page of a listing as the server pleases, giving up after 50
// requests with a 404 so that an iterator that never stops fails the test instead of
// hanging it (as it did on main).
func endless(calls *atomic.Int64, answer func(n int64, req *http.Request) string) func(*http.Request) (*http.Response, error) {
	return func(req *http.Request) (*http.Response, error) {
		n := calls.Add(1)
		if n > 50 {
			return respond(http.StatusNotFound, `{"error":"the test's server gave up"}`)(req)
		}
		return respond(http.StatusOK, answer(n, req))(req)
	}
}

func txJSON(ids ...int64) string {
	parts := make([]string, len(ids))
	for i, id := range ids {
		parts[i] = fmt.Sprintf(`{"id":%d,"currency":"usd"}`, id)
	}
	return strings.Join(parts, ",")
}

// collect drains an iterator into ids and the errors it yielded.
func collect[T any](seq func(func(*T, error) bool), id func(*T) int64) (ids []int64, errs []error) {
	for v, err := range seq {
		if err != nil {
			errs = append(errs, err)
			continue
		}
		ids = append(ids, id(v))
	}
	return ids, errs
}

// TestAllStopsOnARepeatedPage: a server that reports an endless page_count and answers the
// same page whatever is asked: the walk yields it once and ends with ErrListingRepeats.
func TestAllStopsOnARepeatedPage(t *testing.T) {
	c, mt := setup(t)
	var calls atomic.Int64
	mt.RegisterResponder(http.MethodGet, "=~^"+testBase+"transaction\\?", endless(&calls, func(int64, *http.Request) string {
		return `{"page":1,"page_count":1000000,"per_page":2,"transactions":[` + txJSON(9, 8) + `]}`
	}))
	ids, errs := collect(c.Transactions.All(context.Background(), nil), txIDOf)
	if len(errs) != 1 || !errors.Is(errs[0], ErrListingRepeats) || fmt.Sprint(ids) != "[9 8]" || calls.Load() != 2 {
		t.Errorf("ids %v, errors %v after %d requests; want [9 8], ErrListingRepeats, after 2", ids, errs, calls.Load())
	}
}

// TestAllStopsAtThePageLimit: an endless page_count with new transactions on every page
// ends at MaxPages with ErrPageLimit, so that the listing is known to be cut.
func TestAllStopsAtThePageLimit(t *testing.T) {
	c, mt := setup(t)
	var calls atomic.Int64
	mt.RegisterResponder(http.MethodGet, "=~^"+testBase+"transaction\\?", endless(&calls, func(n int64, req *http.Request) string {
		page, _ := strconv.Atoi(req.URL.Query().Get("page"))
		return fmt.Sprintf(`{"page":%d,"page_count":1000000,"per_page":1,"transactions":[%s]}`, page, txJSON(int64(1000-page)))
	}))
	ids, errs := collect(c.Transactions.All(context.Background(), nil, MaxPages(5)), txIDOf)
	if len(ids) != 5 || calls.Load() != 5 || len(errs) != 1 || !errors.Is(errs[0], ErrPageLimit) {
		t.Errorf("ids %v, errors %v after %d requests; want 5 ids and ErrPageLimit after 5", ids, errs, calls.Load())
	}
	if got := maxPagesOf(nil); got != DefaultMaxPages {
		t.Errorf("default page limit %d, want %d", got, DefaultMaxPages)
	}
}

// TestAllStopsAtTheDocumentedDefaultLimit: without MaxPages, a listing that never ends is
// walked for 10,000 pages, as DefaultMaxPages documents, and not one more; the walk ends
// with ErrPageLimit.
func TestAllStopsAtTheDocumentedDefaultLimit(t *testing.T) {
	c, mt := setup(t)
	var calls atomic.Int64
	// A page past the limit is answered too (up to 10,010, then 404), so that a walk
	// going beyond the limit shows as more requests, not as an error.
	mt.RegisterResponder(http.MethodGet, "=~^"+testBase+"transaction\\?", func(req *http.Request) (*http.Response, error) {
		n := calls.Add(1)
		if n > 10_010 {
			return respond(http.StatusNotFound, `{"error":"the test's server gave up"}`)(req)
		}
		return respond(http.StatusOK, fmt.Sprintf(`{"page":%d,"page_count":1000000,"per_page":1,"transactions":[%s]}`, n, txJSON(n)))(req)
	})
	ids, errs := collect(c.Transactions.All(context.Background(), nil), txIDOf)
	if len(ids) != 10_000 || calls.Load() != 10_000 || len(errs) != 1 || !errors.Is(errs[0], ErrPageLimit) {
		t.Errorf("%d ids and errors %v after %d requests; want 10000 ids and ErrPageLimit after 10000", len(ids), errs, calls.Load())
	}
}

// TestAllTransactionsStopsWithoutProgress: ever-new cursors that bring the same page end the
// walk with ErrListingRepeats, an empty page ends it, and ever-new cursors with new pages
// end at the page limit.
func TestAllTransactionsStopsWithoutProgress(t *testing.T) {
	for _, tt := range []struct {
		name     string
		page     func(n int64) string
		opts     []RequestOption
		wantIDs  string
		wantReqs int64
		wantErr  error
	}{
		{"the same page under new cursors", func(n int64) string { return txJSON(50, 49) }, nil, "[50 49]", 2, ErrListingRepeats},
		{"an empty page with a new cursor", func(n int64) string {
			if n == 1 {
				return txJSON(50)
			}
			return ""
		}, nil, "[50]", 2, nil},
		{"new pages for ever", func(n int64) string { return txJSON(100 - n) }, []RequestOption{MaxPages(3)}, "[99 98 97]", 3, ErrPageLimit},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c, mt := setup(t)
			var calls atomic.Int64
			mt.RegisterResponder(http.MethodGet, "=~^"+testBase+"partner/transactions", endless(&calls, func(n int64, _ *http.Request) string {
				return fmt.Sprintf(`{"next_cursor":%d,"transactions":[%s]}`, 1000+n, tt.page(n))
			}))
			ids, errs := collect(c.Partner.AllTransactions(context.Background(), nil, tt.opts...), txIDOf)
			if fmt.Sprint(ids) != tt.wantIDs || calls.Load() != tt.wantReqs {
				t.Errorf("ids %v after %d requests, want %s after %d", ids, calls.Load(), tt.wantIDs, tt.wantReqs)
			}
			if (tt.wantErr == nil && len(errs) != 0) || (tt.wantErr != nil && (len(errs) != 1 || !errors.Is(errs[0], tt.wantErr))) {
				t.Errorf("errors %v, want %v", errs, tt.wantErr)
			}
		})
	}
}

// TestWalksNeverRepeatAnID: servers whose pages cycle, with cycles of every length, and one
// whose pages overlap. Every id is yielded once, and a cycle ends the walk with
// ErrListingRepeats on the first page that brings nothing new, whatever its length.
func TestWalksNeverRepeatAnID(t *testing.T) {
	cycle := func(length int) func(n int64) []int64 {
		return func(n int64) []int64 {
			k := (n - 1) % int64(length)
			return []int64{1000 - 2*k, 999 - 2*k}
		}
	}
	for _, tt := range []struct {
		name     string
		page     func(n int64) []int64
		wantIDs  int
		wantReqs int64
		wantErr  error
	}{
		{"A, A", cycle(1), 2, 2, ErrListingRepeats},
		{"A, B, A, B", cycle(2), 4, 3, ErrListingRepeats},
		{"a cycle of 7 pages", cycle(7), 14, 8, ErrListingRepeats},
		{"a cycle of 20 pages", cycle(20), 40, 21, ErrListingRepeats},
		// New transactions shift the pages while the walk runs: each page repeats the last
		// of the one before; the walk goes on and yields each once.
		{"overlapping pages", func(n int64) []int64 {
			if n > 4 {
				return nil
			}
			return []int64{100 - 2*n, 99 - 2*n, 98 - 2*n}
		}, 9, 5, nil},
	} {
		pages := func(n int64) string { return txJSON(tt.page(n)...) }
		check := func(t *testing.T, got []int64, errs []error, calls int64) {
			t.Helper()
			seen := map[int64]bool{}
			for _, id := range got {
				if seen[id] {
					t.Errorf("id %d yielded twice: %v", id, got)
				}
				seen[id] = true
			}
			if len(got) != tt.wantIDs || calls != tt.wantReqs {
				t.Errorf("%d ids after %d requests, want %d after %d: %v", len(got), calls, tt.wantIDs, tt.wantReqs, got)
			}
			if (tt.wantErr == nil && len(errs) != 0) || (tt.wantErr != nil && (len(errs) != 1 || !errors.Is(errs[0], tt.wantErr))) {
				t.Errorf("errors %v, want %v", errs, tt.wantErr)
			}
		}
		t.Run(tt.name+", paged", func(t *testing.T) {
			c, mt := setup(t)
			var calls atomic.Int64
			mt.RegisterResponder(http.MethodGet, "=~^"+testBase+"transaction\\?", endless(&calls, func(n int64, _ *http.Request) string {
				return fmt.Sprintf(`{"page":%d,"page_count":1000000,"per_page":3,"transactions":[%s]}`, n, pages(n))
			}))
			got, errs := collect(c.Transactions.All(context.Background(), nil), txIDOf)
			check(t, got, errs, calls.Load())
		})
		t.Run(tt.name+", cursored", func(t *testing.T) {
			c, mt := setup(t)
			var calls atomic.Int64
			mt.RegisterResponder(http.MethodGet, "=~^"+testBase+"partner/transactions", endless(&calls, func(n int64, _ *http.Request) string {
				return fmt.Sprintf(`{"next_cursor":%d,"transactions":[%s]}`, 5000+n, pages(n))
			}))
			got, errs := collect(c.Partner.AllTransactions(context.Background(), nil), txIDOf)
			check(t, got, errs, calls.Load())
		})
		t.Run(tt.name+", customers", func(t *testing.T) {
			c, mt := setup(t)
			var calls atomic.Int64
			mt.RegisterResponder(http.MethodGet, "=~^"+testBase+"partner/customers", endless(&calls, func(n int64, _ *http.Request) string {
				return fmt.Sprintf(`{"next_cursor":%d,"customers":[%s]}`, 5000+n, pages(n))
			}))
			got, errs := collect(c.Partner.AllCustomers(context.Background(), nil), func(c *Customer) int64 { return c.ID })
			check(t, got, errs, calls.Load())
		})
	}
}

// TestCursorCycleEndsWithASentinel: cursors that come back (40, 30, 40) end the walk with
// ErrListingRepeats, which the caller can tell from the end of the listing.
func TestCursorCycleEndsWithASentinel(t *testing.T) {
	c, mt := setup(t)
	var calls atomic.Int64
	mt.RegisterResponder(http.MethodGet, "=~^"+testBase+"partner/transactions", endless(&calls, func(n int64, req *http.Request) string {
		cur := req.URL.Query().Get("next_cursor")
		next := map[string]string{"": "40", "40": "30", "30": "40"}[cur]
		id := map[string]int64{"": 50, "40": 40, "30": 30}[cur]
		return fmt.Sprintf(`{"next_cursor":%s,"transactions":[%s]}`, next, txJSON(id))
	}))
	got, errs := collect(c.Partner.AllTransactions(context.Background(), nil), txIDOf)
	if fmt.Sprint(got) != "[50 40 30]" || len(errs) != 1 || !errors.Is(errs[0], ErrListingRepeats) || calls.Load() != 3 {
		t.Errorf("ids %v, errors %v after %d requests; want [50 40 30] and ErrListingRepeats after 3", got, errs, calls.Load())
	}
}

// TestIteratorsSendAPageSizeByDefault: with no page size in the caller's options, each
// iterator asks for DefaultPageSize; the emulator, like the API, would otherwise answer a
// partner listing with every record in one page, which the page cap refuses past a few
// thousand. A page size the caller gives is sent as it is.
func TestIteratorsSendAPageSizeByDefault(t *testing.T) {
	c, mt := setup(t)
	var rec recorder
	mt.RegisterResponder(http.MethodGet, "=~^"+testBase+"transaction\\?", rec.then(respond(200, `{"page":1,"page_count":1,"transactions":[`+txJSON(1)+`]}`)))
	mt.RegisterResponder(http.MethodGet, "=~^"+testBase+"partner/transactions", rec.then(respond(200, `{"next_cursor":null,"transactions":[`+txJSON(1)+`]}`)))
	mt.RegisterResponder(http.MethodGet, "=~^"+testBase+"partner/customers", rec.then(respond(200, `{"next_cursor":null,"customers":[{"id":1}]}`)))
	ctx := context.Background()
	walks := []func(){
		func() { collect(c.Transactions.All(ctx, nil), txIDOf) },
		func() { collect(c.Partner.AllTransactions(ctx, nil), txIDOf) },
		func() {
			collect(c.Partner.AllCustomers(ctx, &PartnerCustomersOptions{}), func(c *Customer) int64 { return c.ID })
		},
		func() { collect(c.Transactions.All(ctx, &ListTransactionsOptions{PerPage: 7}), txIDOf) },
		func() { collect(c.Partner.AllTransactions(ctx, &PartnerTransactionsOptions{Limit: 7}), txIDOf) },
		func() {
			collect(c.Partner.AllCustomers(ctx, &PartnerCustomersOptions{Limit: 7}), func(c *Customer) int64 { return c.ID })
		},
	}
	want := []string{"per_page=100", "limit=100", "limit=100", "per_page=7", "limit=7", "limit=7"}
	for i, walk := range walks {
		walk()
		if got := rec.all()[i].RawQuery; !strings.Contains("&"+got+"&", "&"+want[i]+"&") {
			t.Errorf("walk %d sent %q, want %s", i, got, want[i])
		}
	}
	if DefaultPageSize > 100 || DefaultPageSize*4<<10 > MaxListBody/4 {
		t.Errorf("DefaultPageSize %d: the API accepts up to 100, and a page must stay well under the cap", DefaultPageSize)
	}
}

// TestOversizedPageSaysAskForSmallerPages: a page over the listing cap fails with a
// DecodeError that tells the caller what to do about it.
func TestOversizedPageSaysAskForSmallerPages(t *testing.T) {
	c, mt := setup(t)
	big := `{"page":1,"page_count":1,"transactions":[` + strings.Repeat(`{"id":1,"description":"`+strings.Repeat("x", 1000)+`"},`, MaxListBody/1000) + `{"id":2}]}`
	mt.RegisterResponder(http.MethodGet, "=~^"+testBase+"transaction\\?", respond(200, big))
	_, errs := collect(c.Transactions.All(context.Background(), nil), txIDOf)
	var de *DecodeError
	if len(errs) != 1 || !errors.As(errs[0], &de) || !strings.Contains(de.Error(), "ask for smaller pages") {
		t.Errorf("errors %v, want a DecodeError saying to ask for smaller pages", errs)
	}
	mt.RegisterResponder(http.MethodGet, testBase+"transaction/1", respond(200, `{"id":1,"description":"`+strings.Repeat("x", MaxResourceBody)+`"}`))
	if _, err := c.Transactions.Get(context.Background(), 1); !errors.As(err, &de) || strings.Contains(de.Error(), "pages") {
		t.Errorf("a single resource over its cap: %v; want a DecodeError that does not talk of pages", err)
	}
}

// TestWalkMemoryIsBoundedByThePageLimit: a server that answers far larger pages than asked,
// each of new ids, cannot make a walk remember more ids than the page limit times the page
// size asked: the walk ends with ErrPageLimit there.
func TestWalkMemoryIsBoundedByThePageLimit(t *testing.T) {
	c, mt := setup(t)
	var calls atomic.Int64
	mt.RegisterResponder(http.MethodGet, "=~^"+testBase+"partner/transactions", endless(&calls, func(n int64, _ *http.Request) string {
		return fmt.Sprintf(`{"next_cursor":%d,"transactions":[%s]}`, 100+n, txJSON(10*n, 10*n+1, 10*n+2, 10*n+3, 10*n+4))
	}))
	got, errs := collect(c.Partner.AllTransactions(context.Background(), &PartnerTransactionsOptions{Limit: 2}, MaxPages(3)), txIDOf)
	if len(got) != 6 || len(errs) != 1 || !errors.Is(errs[0], ErrPageLimit) {
		t.Errorf("%d ids and errors %v, want 6 (3 pages of 2) and ErrPageLimit", len(got), errs)
	}
}

// TestWalkMemoryIsBoundedForPagesOfOne: the same bound holds for the smallest page a
// caller can ask for: pages of one transaction, answered five at a time, stop the walk at
// the page limit's worth of ids (3), not at the limit's worth of pages (15). A bound lifted
// for pages of one would let a server fill the caller's memory.
func TestWalkMemoryIsBoundedForPagesOfOne(t *testing.T) {
	c, mt := setup(t)
	var calls atomic.Int64
	mt.RegisterResponder(http.MethodGet, "=~^"+testBase+"transaction\\?", endless(&calls, func(n int64, _ *http.Request) string {
		return fmt.Sprintf(`{"page":%d,"page_count":1000,"transactions":[%s]}`, n, txJSON(10*n, 10*n+1, 10*n+2, 10*n+3, 10*n+4))
	}))
	got, errs := collect(c.Transactions.All(context.Background(), &ListTransactionsOptions{PerPage: 1}, MaxPages(3)), txIDOf)
	if len(got) != 3 || len(errs) != 1 || !errors.Is(errs[0], ErrPageLimit) {
		t.Errorf("%d ids and errors %v, want 3 (3 pages of 1) and ErrPageLimit", len(got), errs)
	}
}

// TestPartnerIteratorsCanBeRangedConcurrently ranges one iterator value from two goroutines,
// as a caller handing the same iter.Seq2 to two workers would. Each walk must see every
// page; under -race it also shows whether the walks share state.
func TestPartnerIteratorsCanBeRangedConcurrently(t *testing.T) {
	c, mt := setup(t)
	mt.RegisterResponder("GET", "=~^"+testBase+"partner/transactions", cursored(t, "transactions", threeCursorPages, "-"))
	mt.RegisterResponder("GET", "=~^"+testBase+"partner/customers", cursored(t, "customers", threeCursorPages, "-"))
	txs := c.Partner.AllTransactions(context.Background(), &PartnerTransactionsOptions{Limit: 2})
	customers := c.Partner.AllCustomers(context.Background(), &PartnerCustomersOptions{Limit: 2})
	want := []int64{50, 45, 40, 35, 30, 25, 20}
	var wg sync.WaitGroup
	results := make([][]yielded, 4)
	for i := range results {
		wg.Go(func() {
			if i%2 == 0 {
				results[i] = drain(txs, txID, nil)
			} else {
				results[i] = drain(customers, customerID, nil)
			}
		})
	}
	wg.Wait()
	for i, ys := range results {
		if got := ids(t, ys); !reflect.DeepEqual(got, want) {
			t.Errorf("walk %d saw %v, want %v", i, got, want)
		}
	}
}

// yielded is one pair an iterator produced.
type yielded struct {
	id  int64 // 0 with an error
	err error
}

// drain ranges over seq, calling each (when not nil) after every pair; each returns false to
// break the loop.
func drain[T any](seq iter.Seq2[*T, error], idOf func(*T) int64, each func(n int, y yielded) bool) []yielded {
	var out []yielded
	for v, err := range seq {
		y := yielded{err: err}
		if v != nil {
			y.id = idOf(v)
		}
		out = append(out, y)
		if each != nil && !each(len(out), y) {
			break
		}
	}
	return out
}

func txID(tx *Transaction) int64 { return tx.ID }

func customerID(c *Customer) int64 { return c.ID }

// ids returns the ids of the items among ys, failing the test on an error.
func ids(t *testing.T, ys []yielded) []int64 {
	t.Helper()
	var out []int64
	for _, y := range ys {
		if y.err != nil {
			t.Fatalf("unexpected error: %v", y.err)
		}
		out = append(out, y.id)
	}
	return out
}

// pagedTransactions answers GET /transaction by its page parameter: pages[n-1] holds the ids
// of page n, and page_count is len(pages). A page in failAt answers 404.
func pagedTransactions(t *testing.T, pages [][]int64, failAt int) httpmock.Responder {
	return func(req *http.Request) (*http.Response, error) {
		page, err := strconv.Atoi(req.URL.Query().Get("page"))
		if err != nil || page < 1 || page > len(pages)+1 {
			t.Errorf("page %q requested", req.URL.Query().Get("page"))
			return respond(400, `{"error": "bad page"}`)(req)
		}
		if page == failAt {
			return respond(404, `{"error": "page gone"}`)(req)
		}
		var txs []string
		if page <= len(pages) {
			for _, id := range pages[page-1] {
				txs = append(txs, fmt.Sprintf(`{"id": %d, "currency": "usd", "items": [{"schedule": [{"amount": "%d.00"}]}]}`, id, id))
			}
		}
		return respond(200, fmt.Sprintf(`{"page": %d, "page_count": %d, "per_page": 2, "transactions": [%s]}`,
			page, len(pages), strings.Join(txs, ",")))(req)
	}
}

// queries returns the parsed query of every recorded request.
func queries(t *testing.T, rec *recorder) []url.Values {
	t.Helper()
	var out []url.Values
	for _, r := range rec.all() {
		q, err := url.ParseQuery(r.RawQuery)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, q)
	}
	return out
}

func TestTransactionsAllWalksEveryPage(t *testing.T) {
	c, mt := setup(t)
	var rec recorder
	mt.RegisterResponder("GET", "=~^"+testBase+"transaction\\?", rec.then(pagedTransactions(t, [][]int64{{9, 8}, {7, 6}, {5}}, 0)))
	opt := &ListTransactionsOptions{PerPage: 2, SortBy: "id", SortDirection: SortAsc}
	before := *opt

	got := ids(t, drain(c.Transactions.All(context.Background(), opt), txID, nil))
	if want := []int64{9, 8, 7, 6, 5}; !reflect.DeepEqual(got, want) {
		t.Errorf("ids = %v, want %v", got, want)
	}
	qs := queries(t, &rec)
	if len(qs) != 3 {
		t.Fatalf("%d requests, want 3", len(qs))
	}
	for i, q := range qs {
		want := url.Values{"page": {strconv.Itoa(i + 1)}, "per_page": {"2"}, "sort_by": {"id"}, "sort_direction": {"asc"}}
		if !reflect.DeepEqual(q, want) {
			t.Errorf("request %d query = %v, want %v", i, q, want)
		}
	}
	if *opt != before {
		t.Errorf("the caller's options changed: %+v, was %+v", *opt, before)
	}
}

func TestTransactionsAllStartsAtTheGivenPage(t *testing.T) {
	c, mt := setup(t)
	var rec recorder
	mt.RegisterResponder("GET", "=~^"+testBase+"transaction\\?", rec.then(pagedTransactions(t, [][]int64{{9, 8}, {7, 6}, {5}}, 0)))
	opt := &ListTransactionsOptions{Page: 2}

	got := ids(t, drain(c.Transactions.All(context.Background(), opt), txID, nil))
	if want := []int64{7, 6, 5}; !reflect.DeepEqual(got, want) {
		t.Errorf("ids = %v, want %v", got, want)
	}
	if qs := queries(t, &rec); len(qs) != 2 || qs[0].Get("page") != "2" || qs[1].Get("page") != "3" {
		t.Errorf("queries = %v", qs)
	}
	if opt.Page != 2 {
		t.Errorf("the caller's Page became %d", opt.Page)
	}
}

func TestTransactionsAllWithoutOptionsAndAnEmptyPage(t *testing.T) {
	c, mt := setup(t)
	var rec recorder
	// page_count says 3, but page 2 is empty: the walk ends there rather than asking on.
	mt.RegisterResponder("GET", "=~^"+testBase+"transaction\\?", rec.then(pagedTransactions(t, [][]int64{{9, 8}, {}, {5}}, 0)))

	got := ids(t, drain(c.Transactions.All(context.Background(), nil), txID, nil))
	if want := []int64{9, 8}; !reflect.DeepEqual(got, want) {
		t.Errorf("ids = %v, want %v", got, want)
	}
	// With no options, the walk still asks for a page size: see DefaultPageSize.
	if qs := queries(t, &rec); len(qs) != 2 || !reflect.DeepEqual(qs[0], url.Values{"page": {"1"}, "per_page": {"100"}}) {
		t.Errorf("queries = %v", qs)
	}
}

func TestTransactionsAllEarlyBreakSendsNothingMore(t *testing.T) {
	for _, tt := range []struct {
		name     string
		breakAt  int // break after this many items
		requests int
	}{
		{"after the first item", 1, 1},
		{"at the end of page 1", 2, 1},
		{"inside page 2", 3, 2},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c, mt := setup(t)
			var rec recorder
			mt.RegisterResponder("GET", "=~^"+testBase+"transaction\\?", rec.then(pagedTransactions(t, [][]int64{{9, 8}, {7, 6}, {5}}, 0)))
			ys := drain(c.Transactions.All(context.Background(), nil), txID, func(n int, _ yielded) bool { return n < tt.breakAt })
			if len(ys) != tt.breakAt {
				t.Errorf("%d items yielded, want %d", len(ys), tt.breakAt)
			}
			if rec.count() != tt.requests {
				t.Errorf("%d requests after a break, want %d", rec.count(), tt.requests)
			}
		})
	}
}

func TestTransactionsAllErrorOnPage3(t *testing.T) {
	c, mt := setup(t)
	var rec recorder
	mt.RegisterResponder("GET", "=~^"+testBase+"transaction\\?", rec.then(pagedTransactions(t, [][]int64{{9, 8}, {7, 6}, {5, 4}, {3}}, 3)))

	ys := drain(c.Transactions.All(context.Background(), nil), txID, nil)
	checkErrorLast(t, ys, []int64{9, 8, 7, 6}, ErrNotFound)
	if rec.count() != 3 {
		t.Errorf("%d requests, want 3", rec.count())
	}
}

// checkErrorLast asserts that ys holds the items want, then exactly one error matching target.
func checkErrorLast(t *testing.T, ys []yielded, want []int64, target error) {
	t.Helper()
	if len(ys) != len(want)+1 {
		t.Fatalf("yielded %+v, want %d items and one error", ys, len(want))
	}
	if got := ids(t, ys[:len(want)]); !reflect.DeepEqual(got, want) {
		t.Errorf("items before the error = %v, want %v", got, want)
	}
	last := ys[len(want)]
	if last.id != 0 || !errors.Is(last.err, target) {
		t.Errorf("last pair = (%d, %v), want (nil, %v)", last.id, last.err, target)
	}
}

func TestTransactionsAllCancelledMidIteration(t *testing.T) {
	c, mt := setup(t)
	mt.RegisterResponder("GET", "=~^"+testBase+"transaction\\?", pagedTransactions(t, [][]int64{{9, 8}, {7, 6}, {5}}, 0))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	ys := drain(c.Transactions.All(ctx, nil), txID, func(n int, _ yielded) bool {
		if n == 2 { // the last item of page 1: the next page is asked for after the cancel
			cancel()
		}
		return true
	})
	checkErrorLast(t, ys, []int64{9, 8}, context.Canceled)
	var te *TransportError
	if !errors.As(ys[len(ys)-1].err, &te) {
		t.Errorf("error %T, want a *TransportError", ys[len(ys)-1].err)
	}
}

// cursorPage is one page of a cursored listing: its ids and the next_cursor it answers
// ("null" ends the listing).
type cursorPage struct {
	ids  []int64
	next string
}

// cursored answers a cursored listing by its next_cursor parameter ("" for the first page).
// The page for the cursor failCursor answers 404.
func cursored(t *testing.T, key string, pages map[string]cursorPage, failCursor string) httpmock.Responder {
	return func(req *http.Request) (*http.Response, error) {
		cursor := req.URL.Query().Get("next_cursor")
		if cursor == failCursor {
			return respond(404, `{"error": "cursor expired"}`)(req)
		}
		p, ok := pages[cursor]
		if !ok {
			t.Errorf("cursor %q requested", cursor)
			return respond(400, `{"error": "bad cursor"}`)(req)
		}
		var items []string
		for _, id := range p.ids {
			items = append(items, fmt.Sprintf(`{"id": %d}`, id))
		}
		return respond(200, fmt.Sprintf(`{"sort_by": "id", "sort_direction": "desc", "next_cursor": %s, "limit": 2, %q: [%s]}`,
			p.next, key, strings.Join(items, ",")))(req)
	}
}

// cursors returns the next_cursor parameter of every recorded request.
func cursors(t *testing.T, rec *recorder) []string {
	t.Helper()
	var out []string
	for _, q := range queries(t, rec) {
		out = append(out, q.Get("next_cursor"))
	}
	return out
}

var threeCursorPages = map[string]cursorPage{
	"":   {[]int64{50, 45}, "40"},
	"40": {[]int64{40, 35}, "30"},
	"30": {[]int64{30, 25}, "20"},
	"20": {[]int64{20}, "null"},
}

func TestPartnerAllTransactionsFollowsTheCursor(t *testing.T) {
	c, mt := setup(t)
	var rec recorder
	mt.RegisterResponder("GET", "=~^"+testBase+"partner/transactions", rec.then(cursored(t, "transactions", threeCursorPages, "-")))
	opt := &PartnerTransactionsOptions{Limit: 2, Status: StatusOngoing, IDs: []int64{50, 45, 40, 35, 30, 25, 20}, MinAmount: ptr(MustAmount("10"))}
	before := *opt
	beforeIDs := append([]int64(nil), opt.IDs...)

	got := ids(t, drain(c.Partner.AllTransactions(context.Background(), opt), txID, nil))
	if want := []int64{50, 45, 40, 35, 30, 25, 20}; !reflect.DeepEqual(got, want) {
		t.Errorf("ids = %v, want %v", got, want)
	}
	if got, want := cursors(t, &rec), []string{"", "40", "30", "20"}; !reflect.DeepEqual(got, want) {
		t.Errorf("cursors sent = %q, want %q", got, want)
	}
	for i, q := range queries(t, &rec) {
		if q.Get("limit") != "2" || q.Get("status") != "ongoing" || len(q["ids"]) != 7 || q.Get("min_amount") != "10.00" {
			t.Errorf("request %d lost the filters: %v", i, q)
		}
	}
	if !reflect.DeepEqual(*opt, before) || !reflect.DeepEqual(opt.IDs, beforeIDs) {
		t.Errorf("the caller's options changed: %+v", *opt)
	}
}

func TestPartnerAllTransactionsStartsAtTheCallersCursor(t *testing.T) {
	c, mt := setup(t)
	var rec recorder
	mt.RegisterResponder("GET", "=~^"+testBase+"partner/transactions", rec.then(cursored(t, "transactions", threeCursorPages, "-")))
	opt := &PartnerTransactionsOptions{NextCursor: 30}

	got := ids(t, drain(c.Partner.AllTransactions(context.Background(), opt), txID, nil))
	if want := []int64{30, 25, 20}; !reflect.DeepEqual(got, want) {
		t.Errorf("ids = %v, want %v", got, want)
	}
	if got := cursors(t, &rec); !reflect.DeepEqual(got, []string{"30", "20"}) {
		t.Errorf("cursors sent = %q", got)
	}
	if opt.NextCursor != 30 {
		t.Errorf("the caller's NextCursor became %d", opt.NextCursor)
	}
}

// TestPartnerAllTransactionsEndsOnARepeatedCursor: a cursor already followed ends the walk
// with ErrListingRepeats, after each transaction was yielded once.
func TestPartnerAllTransactionsEndsOnARepeatedCursor(t *testing.T) {
	for _, tt := range []struct {
		name    string
		pages   map[string]cursorPage
		want    []int64
		cursors []string
		loops   bool
	}{
		{"the same cursor again", map[string]cursorPage{
			"":   {[]int64{50}, "40"},
			"40": {[]int64{40}, "40"},
		}, []int64{50, 40}, []string{"", "40"}, true},
		{"a cycle", map[string]cursorPage{
			"":   {[]int64{50}, "40"},
			"40": {[]int64{40}, "30"},
			"30": {[]int64{30}, "40"},
		}, []int64{50, 40, 30}, []string{"", "40", "30"}, true},
		{"null on the first page", map[string]cursorPage{
			"": {[]int64{50, 45}, "null"},
		}, []int64{50, 45}, []string{""}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c, mt := setup(t)
			var rec recorder
			mt.RegisterResponder("GET", "=~^"+testBase+"partner/transactions", rec.then(cursored(t, "transactions", tt.pages, "-")))
			ys := drain(c.Partner.AllTransactions(context.Background(), nil), txID, nil)
			if tt.loops {
				checkErrorLast(t, ys, tt.want, ErrListingRepeats)
			} else if got := ids(t, ys); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("ids = %v, want %v", got, tt.want)
			}
			if got := cursors(t, &rec); !reflect.DeepEqual(got, tt.cursors) {
				t.Errorf("cursors sent = %q, want %q", got, tt.cursors)
			}
		})
	}
}

func TestPartnerAllTransactionsEarlyBreak(t *testing.T) {
	c, mt := setup(t)
	var rec recorder
	mt.RegisterResponder("GET", "=~^"+testBase+"partner/transactions", rec.then(cursored(t, "transactions", threeCursorPages, "-")))
	ys := drain(c.Partner.AllTransactions(context.Background(), nil), txID, func(n int, _ yielded) bool { return n < 4 })
	if got := ids(t, ys); !reflect.DeepEqual(got, []int64{50, 45, 40, 35}) {
		t.Errorf("ids = %v", got)
	}
	if rec.count() != 2 {
		t.Errorf("%d requests after breaking at the end of page 2, want 2", rec.count())
	}
}

func TestPartnerAllTransactionsErrorOnPage3(t *testing.T) {
	c, mt := setup(t)
	var rec recorder
	mt.RegisterResponder("GET", "=~^"+testBase+"partner/transactions", rec.then(cursored(t, "transactions", threeCursorPages, "30")))
	ys := drain(c.Partner.AllTransactions(context.Background(), nil), txID, nil)
	checkErrorLast(t, ys, []int64{50, 45, 40, 35}, ErrNotFound)
	if rec.count() != 3 {
		t.Errorf("%d requests, want 3", rec.count())
	}
}

func TestPartnerAllTransactionsCancelledMidIteration(t *testing.T) {
	c, mt := setup(t)
	mt.RegisterResponder("GET", "=~^"+testBase+"partner/transactions", cursored(t, "transactions", threeCursorPages, "-"))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ys := drain(c.Partner.AllTransactions(ctx, nil), txID, func(n int, _ yielded) bool {
		if n == 3 { // inside page 2: its last item is still yielded, page 3 is not fetched
			cancel()
		}
		return true
	})
	checkErrorLast(t, ys, []int64{50, 45, 40, 35}, context.Canceled)
}

func TestPartnerAllCustomersFollowsTheCursor(t *testing.T) {
	c, mt := setup(t)
	var rec recorder
	mt.RegisterResponder("GET", "=~^"+testBase+"partner/customers", rec.then(cursored(t, "customers", threeCursorPages, "-")))
	opt := &PartnerCustomersOptions{Limit: 2, Country: "AU", VerificationStatus: VerificationVerified, IDs: []int64{50, 20}}
	before := *opt

	got := ids(t, drain(c.Partner.AllCustomers(context.Background(), opt), customerID, nil))
	if want := []int64{50, 45, 40, 35, 30, 25, 20}; !reflect.DeepEqual(got, want) {
		t.Errorf("ids = %v, want %v", got, want)
	}
	if got := cursors(t, &rec); !reflect.DeepEqual(got, []string{"", "40", "30", "20"}) {
		t.Errorf("cursors sent = %q", got)
	}
	for i, q := range queries(t, &rec) {
		if q.Get("country") != "AU" || q.Get("verification_status") != "verified" || !reflect.DeepEqual(q["ids"], []string{"50", "20"}) {
			t.Errorf("request %d lost the filters: %v", i, q)
		}
	}
	if !reflect.DeepEqual(*opt, before) {
		t.Errorf("the caller's options changed: %+v", *opt)
	}
}

func TestPartnerAllCustomersRepeatedCursorBreakErrorAndCancel(t *testing.T) {
	t.Run("repeated cursor", func(t *testing.T) {
		c, mt := setup(t)
		var rec recorder
		pages := map[string]cursorPage{"": {[]int64{1}, "7"}, "7": {[]int64{2}, "7"}}
		mt.RegisterResponder("GET", "=~^"+testBase+"partner/customers", rec.then(cursored(t, "customers", pages, "-")))
		checkErrorLast(t, drain(c.Partner.AllCustomers(context.Background(), nil), customerID, nil), []int64{1, 2}, ErrListingRepeats)
		if rec.count() != 2 {
			t.Errorf("%d requests, want 2", rec.count())
		}
	})
	t.Run("early break", func(t *testing.T) {
		c, mt := setup(t)
		var rec recorder
		mt.RegisterResponder("GET", "=~^"+testBase+"partner/customers", rec.then(cursored(t, "customers", threeCursorPages, "-")))
		ys := drain(c.Partner.AllCustomers(context.Background(), nil), customerID, func(n int, _ yielded) bool { return n < 1 })
		if len(ys) != 1 || rec.count() != 1 {
			t.Errorf("%d items and %d requests after breaking at the first", len(ys), rec.count())
		}
	})
	t.Run("error on page 3", func(t *testing.T) {
		c, mt := setup(t)
		var rec recorder
		mt.RegisterResponder("GET", "=~^"+testBase+"partner/customers", rec.then(cursored(t, "customers", threeCursorPages, "30")))
		checkErrorLast(t, drain(c.Partner.AllCustomers(context.Background(), nil), customerID, nil), []int64{50, 45, 40, 35}, ErrNotFound)
		if rec.count() != 3 {
			t.Errorf("%d requests, want 3", rec.count())
		}
	})
	t.Run("cancelled", func(t *testing.T) {
		c, mt := setup(t)
		mt.RegisterResponder("GET", "=~^"+testBase+"partner/customers", cursored(t, "customers", threeCursorPages, "-"))
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		ys := drain(c.Partner.AllCustomers(ctx, nil), customerID, func(n int, _ yielded) bool {
			if n == 2 {
				cancel()
			}
			return true
		})
		checkErrorLast(t, ys, []int64{50, 45}, context.Canceled)
	})
}

// TestIteratorsCanBeRangedTwice walks each iterator value twice, the first time breaking
// part-way: an iter.Seq2 starts over each time it is ranged.
func TestIteratorsCanBeRangedTwice(t *testing.T) {
	t.Run("Transactions.All", func(t *testing.T) {
		c, mt := setup(t)
		mt.RegisterResponder("GET", "=~^"+testBase+"transaction\\?", pagedTransactions(t, [][]int64{{9, 8}, {7}}, 0))
		all := c.Transactions.All(context.Background(), nil)
		drain(all, txID, func(n int, _ yielded) bool { return n < 3 })
		if got := ids(t, drain(all, txID, nil)); !reflect.DeepEqual(got, []int64{9, 8, 7}) {
			t.Errorf("second walk = %v, want [9 8 7]", got)
		}
	})
	t.Run("Partner.AllTransactions", func(t *testing.T) {
		c, mt := setup(t)
		var rec recorder
		mt.RegisterResponder("GET", "=~^"+testBase+"partner/transactions", rec.then(cursored(t, "transactions", threeCursorPages, "-")))
		seq := c.Partner.AllTransactions(context.Background(), nil)
		drain(seq, txID, func(n int, _ yielded) bool { return n < 3 })
		if got := ids(t, drain(seq, txID, nil)); !reflect.DeepEqual(got, []int64{50, 45, 40, 35, 30, 25, 20}) {
			t.Errorf("second walk = %v, want it to start over at 50 (cursors sent: %q)", got, cursors(t, &rec))
		}
	})
	t.Run("Partner.AllCustomers", func(t *testing.T) {
		c, mt := setup(t)
		mt.RegisterResponder("GET", "=~^"+testBase+"partner/customers", cursored(t, "customers", threeCursorPages, "-"))
		seq := c.Partner.AllCustomers(context.Background(), nil)
		drain(seq, customerID, nil)
		if got := ids(t, drain(seq, customerID, nil)); !reflect.DeepEqual(got, []int64{50, 45, 40, 35, 30, 25, 20}) {
			t.Errorf("second walk = %v, want it to start over at 50", got)
		}
	})
}

// TestMaxPagesOptionsAsGiven: the last MaxPages given counts (as every option's last value
// does), MaxPages(0) means the default, and MaxPages(math.MaxInt), a limit no walk reaches,
// walks a three-page listing whole rather than failing at its first element.
func TestMaxPagesOptionsAsGiven(t *testing.T) {
	for _, tt := range []struct {
		name      string
		opts      []RequestOption
		wantPages int
		wantLimit bool
	}{
		{"the last of two", []RequestOption{MaxPages(1), MaxPages(2)}, 2, true},
		{"zero: the default", []RequestOption{MaxPages(0)}, 3, false},
		{"the largest int", []RequestOption{MaxPages(math.MaxInt)}, 3, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c, mt := setup(t)
			var calls atomic.Int64
			mt.RegisterResponder(http.MethodGet, "=~^"+testBase+"transaction\\?", endless(&calls, func(n int64, req *http.Request) string {
				page, _ := strconv.Atoi(req.URL.Query().Get("page"))
				return fmt.Sprintf(`{"page":%d,"page_count":3,"per_page":1,"transactions":[%s]}`, page, txJSON(int64(1000-page)))
			}))
			ids, errs := collect(c.Transactions.All(context.Background(), nil, tt.opts...), txIDOf)
			cut := len(errs) == 1 && errors.Is(errs[0], ErrPageLimit)
			if len(ids) != tt.wantPages || cut != tt.wantLimit || (!tt.wantLimit && len(errs) != 0) {
				t.Errorf("ids %v, errors %v; want %d pages, cut by the limit: %v", ids, errs, tt.wantPages, tt.wantLimit)
			}
		})
	}
}

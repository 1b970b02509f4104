package escrow

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
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

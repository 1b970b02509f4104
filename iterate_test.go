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
// same page whatever is asked. On main, All asked for ever.
func TestAllStopsOnARepeatedPage(t *testing.T) {
	c, mt := setup(t)
	var calls atomic.Int64
	mt.RegisterResponder(http.MethodGet, "=~^"+testBase+"transaction\\?", endless(&calls, func(int64, *http.Request) string {
		return `{"page":1,"page_count":1000000,"per_page":2,"transactions":[` + txJSON(9, 8) + `]}`
	}))
	ids, errs := collect(c.Transactions.All(context.Background(), nil), txIDOf)
	if len(errs) != 0 || fmt.Sprint(ids) != "[9 8]" || calls.Load() != 2 {
		t.Errorf("ids %v, errors %v after %d requests; want [9 8], none, after 2", ids, errs, calls.Load())
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

// TestAllTransactionsStopsWithoutProgress: ever-new cursors that bring the same page, or an
// empty one, end the walk; ever-new cursors with new pages end at the page limit. On main
// each of these asked until the server gave up.
func TestAllTransactionsStopsWithoutProgress(t *testing.T) {
	for _, tt := range []struct {
		name     string
		page     func(n int64) string
		opts     []RequestOption
		wantIDs  string
		wantReqs int64
		limitErr bool
	}{
		{"the same page under new cursors", func(n int64) string { return txJSON(50, 49) }, nil, "[50 49]", 2, false},
		{"an empty page with a new cursor", func(n int64) string {
			if n == 1 {
				return txJSON(50)
			}
			return ""
		}, nil, "[50]", 2, false},
		{"new pages for ever", func(n int64) string { return txJSON(100 - n) }, []RequestOption{MaxPages(3)}, "[99 98 97]", 3, true},
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
			if tt.limitErr != (len(errs) == 1 && errors.Is(errs[0], ErrPageLimit)) || (!tt.limitErr && len(errs) != 0) {
				t.Errorf("errors %v, want ErrPageLimit: %v", errs, tt.limitErr)
			}
		})
	}
}

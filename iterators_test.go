package escrow

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"net/http"
	"net/url"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/jarcoal/httpmock"
)

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

func txID(tx *Transaction) int64   { return tx.ID }
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

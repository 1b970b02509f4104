package escrow

import (
	"errors"
	"fmt"
	"math"
)

// DefaultMaxPages is how many pages an iterator (TransactionsService.All,
// PartnerService.AllTransactions, PartnerService.AllCustomers) fetches at most unless
// [MaxPages] says otherwise. It is far beyond any honest account at the API's page sizes;
// it is there so that a server reporting an endless page_count, or ever-new cursors, cannot
// keep a loop going for ever.
const DefaultMaxPages = 10_000

// ErrPageLimit is yielded, last, by an iterator that stopped at its page limit while the
// server still offered more pages: the listing it yielded is incomplete.
var ErrPageLimit = errors.New("escrow: listing stopped at the page limit")

// MaxPages caps the pages an iterator fetches (default [DefaultMaxPages]). When the cap
// stops a listing that has more, the iterator yields an error matching [ErrPageLimit], so
// that a cut listing is never mistaken for a whole one. Calls other than iterators ignore it.
func MaxPages(n int) RequestOption {
	return func(o *requestOptions) { o.maxPages = n }
}

func maxPagesOf(opts []RequestOption) int {
	var ro requestOptions
	for _, opt := range opts {
		opt(&ro)
	}
	if ro.maxPages <= 0 {
		return DefaultMaxPages
	}
	return ro.maxPages
}

// DefaultPageSize is the page size an iterator asks for when the caller's options set none:
// per_page for [TransactionsService.All], limit for [PartnerService.AllTransactions] and
// [PartnerService.AllCustomers]. Without it the partner listings answer every record in
// one page, which [MaxListBody] refuses past a few thousand transactions, so a growing
// account's sync would one day fail. 100 is the largest per_page the API accepts (the
// emulator enforces 1 to 100; limit accepts up to 1000) and keeps a page of transactions
// near 300 KB, far under the cap.
const DefaultPageSize = 100

// ErrListingRepeats is yielded, last, by an iterator whose listing came back to what it had
// already yielded: a page of nothing but elements already seen, or a cursor already
// followed. A server that loops (pages A, B, A, B, or cursors that cycle) would otherwise
// keep a walk going to the page limit; the walk ends within a page of the loop closing,
// whatever its length. The elements yielded before are each yielded once.
var ErrListingRepeats = errors.New("escrow: the listing came back to elements already yielded")

// pageGuard keeps a walk honest: it yields no element twice, ends the walk on a page that
// brings nothing new, and stops it at the page limit. It remembers the id of every element
// yielded, at most the page limit times the page size asked for (a server that answers
// larger pages than asked reaches the bound sooner, with ErrPageLimit): some 40 MB at the
// defaults, for a walk of a million elements, whatever the server sends.
type pageGuard struct {
	limit, fetched int
	maxIDs         int
	seen           map[int64]struct{}
}

func newPageGuard(opts []RequestOption, pageSize int) *pageGuard {
	limit := maxPagesOf(opts)
	maxIDs := math.MaxInt
	if pageSize > 0 && limit <= math.MaxInt/pageSize {
		maxIDs = limit * pageSize
	}
	return &pageGuard{limit: limit, maxIDs: maxIDs, seen: make(map[int64]struct{})}
}

// yieldPage yields the elements of a fetched page that the walk has not yielded yet. It
// returns false when the walk ends: the loop broke, the page was empty (the listing is
// over) or it brought nothing new (ErrListingRepeats, yielded).
func yieldPage[T any](g *pageGuard, items []T, id func(*T) int64, yield func(*T, error) bool) bool {
	g.fetched++
	fresh := 0
	for i := range items {
		k := id(&items[i])
		if _, dup := g.seen[k]; dup {
			continue
		}
		if len(g.seen) >= g.maxIDs {
			yield(nil, fmt.Errorf("%w (%d elements: more than %d pages of the size asked hold)", ErrPageLimit, len(g.seen), g.limit))
			return false
		}
		g.seen[k] = struct{}{}
		fresh++
		if !yield(&items[i], nil) {
			return false
		}
	}
	if fresh == 0 && len(items) > 0 {
		yield(nil, fmt.Errorf("%w (page %d of the walk)", ErrListingRepeats, g.fetched))
	}
	return fresh > 0
}

// more reports whether another page may be fetched; when not, it returns the error the
// iterator yields last.
func (g *pageGuard) more() (bool, error) {
	if g.fetched >= g.limit {
		return false, fmt.Errorf("%w (%d pages)", ErrPageLimit, g.limit)
	}
	return true, nil
}

func txIDOf(t *Transaction) int64 { return t.ID }

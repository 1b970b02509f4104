package escrow

import (
	"errors"
	"fmt"
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

// pageGuard ends an iteration that makes no progress: an empty page, a page that repeats
// the one before it (a server ignoring the page or cursor asked for), or the page limit.
type pageGuard struct {
	limit, fetched int
	prev           pageSignature
}

// pageSignature tells one page from the next without keeping its elements.
type pageSignature struct {
	n           int
	first, last int64
}

func signature[T any](items []T, id func(*T) int64) pageSignature {
	if len(items) == 0 {
		return pageSignature{}
	}
	return pageSignature{n: len(items), first: id(&items[0]), last: id(&items[len(items)-1])}
}

func newPageGuard(opts []RequestOption) *pageGuard { return &pageGuard{limit: maxPagesOf(opts)} }

// progress records a fetched page and reports whether its elements are new: false for an
// empty page, or one with the same elements as the page before it.
func (g *pageGuard) progress(sig pageSignature) bool {
	g.fetched++
	if sig.n == 0 || sig == g.prev {
		return false
	}
	g.prev = sig
	return true
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

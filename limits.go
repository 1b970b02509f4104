package escrow

import "bytes"

// Caps on the body of a successful answer, per kind of endpoint. A server that answers
// more is refused with a *DecodeError instead of being read to the end: with the decoding
// budget (internal/jsonbudget) they bound what one call can cost in memory, whatever the
// server sends.
const (
	// MaxResourceBody caps an answer that is one resource: a transaction, a customer, a
	// webhook, a landing page. The largest honest one, a transaction with many items,
	// is tens of kilobytes.
	MaxResourceBody = 1 << 20
	// MaxListBody caps a page of a listing (transactions, partner listings, timelines,
	// statistics, payments, reports). At about 3 KB a transaction, it holds some 2,500 of
	// them; ask for smaller pages (Limit, PerPage) when an account has more.
	MaxListBody = 8 << 20
	// MaxReportBody caps a report downloaded in the answer itself (rather than through
	// the address the API usually redirects to).
	MaxReportBody = 16 << 20
)

// Preallocation.
const (
	// maxPrealloc bounds what is allocated for a body before its bytes arrive: a
	// Content-Length header is a claim, not bytes, and a hostile one would otherwise cost
	// its full size at once.
	maxPrealloc = 64 << 10
)

// keepBody returns a body a decoder keeps: a copy when the client will reuse its buffer,
// else the buffer itself, so that a report of MaxReportBody bytes is not held twice.
func keepBody(body []byte) []byte {
	if cap(body) <= maxPooledBody {
		return bytes.Clone(body)
	}
	return body
}

// growBody doubles a read buffer, up to limit: append's gentler growth for large slices
// leaves more discarded buffers behind, and a body near its cap would cost several times
// its size before the collector runs.
func growBody(body []byte, limit int64) []byte {
	n := max(min(max(2*int64(cap(body)), 512), limit), int64(cap(body))+1)
	nb := make([]byte, len(body), n)
	copy(nb, body)
	return nb
}

package webhook

import (
	"context"
	"log/slog"
	"sync"
	"time"

	escrow "github.com/escrowkit/escrow-go"
)

// account is the handler's view of the API it confirms with: whether the account is a
// partner, which ids it answered 404 or 403 for lately, and how much of each rate-limit
// window the handler may spend: never past the application's reserve (Options.Reserve),
// and, of what it wastes, no more than the never-seen ids' share (Options.UnseenShare)
// and the claims' share (Options.ClaimShare). Its lock is taken after the scheduler's,
// never before.
type account struct {
	client  *escrow.Client
	reserve int
	log     *slog.Logger

	mu      sync.Mutex
	partner *bool       // whether the account answers the partner listing; nil: not yet known
	paused  time.Time   // no confirming fetch before this: the allowance left is the application's
	neg     *idCache    // ids the API answered 404 or 403 lately
	unseen  shareBudget // never-seen ids' wasted fetches in this rate-limit window
	claims  shareBudget // fetches for claims tried before that found nothing new
}

func newAccount(client *escrow.Client, opt *Options, log *slog.Logger) *account {
	return &account{
		client: client, reserve: opt.Reserve, log: log,
		neg:    newIDCache(time.Minute, 100_000),
		unseen: shareBudget{share: opt.UnseenShare},
		claims: shareBudget{share: opt.ClaimShare},
	}
}

// get fetches a transaction within the allowance: it waits while the rate-limit window is
// down to the application's reserve, and notes from each answer when that is so.
func (a *account) get(ctx context.Context, id int64) (*escrow.Transaction, error) {
	a.mu.Lock()
	wait := time.Until(a.paused)
	a.mu.Unlock()
	if wait > 0 {
		a.log.Debug("escrow webhook: waiting for the rate-limit window, leaving the rest to the application", "wait", wait)
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		}
	}
	var resp escrow.Response
	tx, err := a.client.Transactions.Get(ctx, id, escrow.WithResponse(&resp))
	a.observe(resp.RateLimit)
	return tx, err
}

// observe notes an answer's rate-limit headers: the window the shares are counted in,
// and a pause once no more than the reserve remains.
func (a *account) observe(rl escrow.RateLimit) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.unseen.observe(rl)
	a.claims.observe(rl)
	if rl.Remaining < 0 || rl.Reset.IsZero() {
		return
	}
	reserve := a.reserve
	if reserve == 0 && rl.Limit > 0 {
		reserve = rl.Limit / 10
	}
	if rl.Remaining <= reserve && rl.Reset.After(a.paused) {
		a.paused = rl.Reset
	}
}

// listIDs lists the partner's transactions among ids, in one call.
func (a *account) listIDs(ctx context.Context, ids []int64) (*escrow.TransactionCursorList, error) {
	return a.client.Partner.Transactions(ctx, &escrow.PartnerTransactionsOptions{IDs: ids, Limit: len(ids)})
}

// isPartner reports what is known of the account's partnership: nil before the first
// answer of a partner listing.
func (a *account) isPartner() *bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.partner
}

// mayList reports whether the account may be a partner: not found not to be.
func (a *account) mayList() bool {
	p := a.isPartner()
	return p == nil || *p
}

func (a *account) setPartner(v bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.partner = &v
}

// unreadable notes an id the API answered 404 or 403: deliveries naming it are dropped
// without a fetch for a while, and a never-seen one wastes the never-seen share.
func (a *account) unreadable(id int64, kind qkind) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.neg.add(id, time.Now())
	if kind != kindKnown {
		a.unseen.waste()
	}
}

// refused reports whether the API answered 404 or 403 for id lately.
func (a *account) refused(id int64, now time.Time) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.neg.has(id, now)
}

// unseenAllows reports whether the never-seen share allows another fetch now; if not,
// it returns when to ask again.
func (a *account) unseenAllows(now time.Time) (bool, time.Time) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.unseen.allows(now)
}

// takeClaim counts a claim's fetch against the claims' share, if the share allows one
// now; if not, it returns when to ask again. Counted before the fetch, so that workers
// at once take no more than the share.
func (a *account) takeClaim(now time.Time) (bool, time.Time) {
	a.mu.Lock()
	defer a.mu.Unlock()
	ok, retry := a.claims.allows(now)
	if ok {
		a.claims.waste()
	}
	return ok, retry
}

// refundClaim gives back a claim's share that found something new, or was not spent.
func (a *account) refundClaim() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.claims.refund()
}

// listRecent lists a page of the account's transactions, newest first, n a page.
func (a *account) listRecent(ctx context.Context, page, n int) (*escrow.TransactionList, error) {
	return a.client.Transactions.List(ctx, &escrow.ListTransactionsOptions{Page: page, PerPage: n, SortBy: escrow.SortByID, SortDirection: escrow.SortDesc})
}

package webhook

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"time"

	escrow "github.com/escrowkit/escrow-go"
)

// Reconcile compares with what was handed over the account's ongoing transactions, the
// transactions created since the previous reconciliation (ended ones too: every delivery
// of a short-lived transaction may have been lost) and every transaction the store holds as
// unfinished, and queues the events of whatever is missing. It returns once they are
// queued; [Handler.Flush] waits for them.
//
// Where the previous look ended (the newest transaction id seen) is kept in the Store, so
// that with a durable store a restart misses nothing: transactions created and ended while
// no receiver ran are found. The very first reconciliation over an empty store first notes
// the account's newest transaction as the mark: transactions that ended before it are
// history, not missed events; the ongoing ones and those created after it are handed
// over. Noted before the walk, the mark outlives a process killed during it: what is
// created later is found after a restart. What it cannot know is a transaction that was
// ongoing when the walk began, ended while no receiver ran, and had nothing handed over
// yet: to the next process it is history too. Reconcile once at startup (RunReconciler
// does) before counting on restarts.
func (h *Handler) Reconcile(ctx context.Context) error {
	mark, started, err := h.opt.Store.Mark(ctx)
	if err != nil {
		return fmt.Errorf("reading the reconciler's mark: %w", err)
	}
	if !started {
		if mark, err = h.noteHistory(ctx); err != nil {
			return err
		}
	}
	seen := make(map[int64]bool)
	var found []*escrow.Transaction
	collect := func(tx *escrow.Transaction) error {
		if !seen[tx.ID] {
			seen[tx.ID] = true
			found = append(found, tx)
		}
		return nil
	}
	newest, err := h.eachToCheck(ctx, mark, collect)
	if err != nil {
		return err
	}
	// What was found is tracked in the store before the mark moves past it: if this
	// process dies with the work still queued, the next reconciliation (here or in a
	// replica) re-reads those transactions as unfinished instead of missing them.
	ids := make([]int64, len(found))
	for i, tx := range found {
		ids[i] = tx.ID
	}
	if err := h.opt.Store.Track(ctx, ids); err != nil {
		return fmt.Errorf("tracking transactions: %w", err)
	}
	for _, tx := range found {
		if err := h.sched.reconciled(tx); err != nil {
			return err
		}
	}
	if err := h.opt.Store.AdvanceMark(ctx, newest); err != nil {
		return fmt.Errorf("recording the reconciler's mark: %w", err)
	}
	// Transactions that ended since the last look are no longer "ongoing", but their last
	// events may still be missing.
	unfinished, err := h.opt.Store.Unfinished(ctx)
	if err != nil {
		return err
	}
	for _, id := range unfinished {
		if seen[id] {
			continue
		}
		// A worker fetches it, coalesced with any delivery for it, never beside another.
		if err := h.sched.recheck(id); err != nil {
			return err
		}
	}
	return nil
}

// eachToCheck calls fn for each ongoing transaction and each transaction newer than
// mark, and returns the newest id it saw. Partners are read from the partner
// listing (learnt from the first try), others from the paged list.
func (h *Handler) eachToCheck(ctx context.Context, mark int64, fn func(*escrow.Transaction) error) (newest int64, err error) {
	partner := h.acct.isPartner()
	if partner == nil || *partner {
		err := each(h.acct.client.Partner.AllTransactions(ctx, &escrow.PartnerTransactionsOptions{Status: escrow.StatusOngoing}), func(tx *escrow.Transaction) error {
			newest = max(newest, tx.ID)
			return fn(tx)
		})
		switch {
		case err == nil:
			h.acct.setPartner(true)
			return h.eachNewer(ctx, mark, newest, fn)
		case partner != nil || !errors.Is(err, escrow.ErrForbidden):
			return 0, err
		}
		h.acct.setPartner(false) // not a partner: use the paged list from now on
	}
	err = each(h.acct.client.Transactions.All(ctx, nil), func(tx *escrow.Transaction) error {
		newest = max(newest, tx.ID)
		if terminal(tx) && tx.ID <= mark {
			return nil
		}
		return fn(tx)
	})
	return newest, err
}

// noteHistory records the account's newest transaction as the mark, before the first
// reconciliation walks the account, and returns it.
func (h *Handler) noteHistory(ctx context.Context) (int64, error) {
	mark, err := h.newestID(ctx)
	if err != nil {
		return 0, err
	}
	if err := h.opt.Store.AdvanceMark(ctx, mark); err != nil {
		return 0, fmt.Errorf("recording the reconciler's mark: %w", err)
	}
	return mark, nil
}

// newestID reads the id of the account's newest transaction (0 if it has none) with one
// request: from the partner listing or, for an account that is not a partner, the paged
// list, both sorted newest first.
func (h *Handler) newestID(ctx context.Context) (int64, error) {
	partner := h.acct.isPartner()
	if partner == nil || *partner {
		list, err := h.acct.client.Partner.Transactions(ctx, &escrow.PartnerTransactionsOptions{Limit: 1, SortBy: escrow.SortByID, SortDirection: escrow.SortDesc})
		switch {
		case err == nil:
			h.acct.setPartner(true)
			return newest(list.Transactions), nil
		case partner != nil || !errors.Is(err, escrow.ErrForbidden):
			return 0, err
		}
		h.acct.setPartner(false)
	}
	list, err := h.acct.client.Transactions.List(ctx, &escrow.ListTransactionsOptions{PerPage: 1, SortBy: escrow.SortByID, SortDirection: escrow.SortDesc})
	if err != nil {
		return 0, err
	}
	return newest(list.Transactions), nil
}

// newest returns the highest id of txs, 0 for none: a listing's sort is not trusted.
func newest(txs []escrow.Transaction) int64 {
	var id int64
	for _, tx := range txs {
		id = max(id, tx.ID)
	}
	return id
}

// eachNewer walks a partner's transactions newest first down to mark, calling fn for each
// newer one, and returns the newest id seen (at least newest).
func (h *Handler) eachNewer(ctx context.Context, mark int64, newest int64, fn func(*escrow.Transaction) error) (int64, error) {
	opt := &escrow.PartnerTransactionsOptions{SortBy: "id", SortDirection: escrow.SortDesc}
	for tx, err := range h.acct.client.Partner.AllTransactions(ctx, opt) {
		if err != nil {
			return 0, err
		}
		newest = max(newest, tx.ID)
		if tx.ID <= mark {
			break
		}
		if err := fn(tx); err != nil {
			return 0, err
		}
	}
	return newest, nil
}

// each calls fn for every transaction of seq, stopping at the first error.
func each(seq iter.Seq2[*escrow.Transaction, error], fn func(*escrow.Transaction) error) error {
	for tx, err := range seq {
		if err != nil {
			return err
		}
		if err := fn(tx); err != nil {
			return err
		}
	}
	return nil
}

// RunReconciler reconciles at once and then every interval until ctx ends or the
// handler shuts down, and prunes the Store (Options.Retention) when it is due. A failed
// reconciliation is logged and tried again at the next tick.
func (h *Handler) RunReconciler(ctx context.Context, every time.Duration) error {
	if err := h.Reconcile(ctx); err != nil && ctx.Err() == nil {
		h.log.Error("escrow webhook: reconciliation failed", "error", err)
	}
	h.prune(ctx)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-h.sched.ctx.Done():
			return nil
		case <-t.C:
			if err := h.Reconcile(ctx); err != nil {
				h.log.Error("escrow webhook: reconciliation failed", "error", err)
			}
			h.prune(ctx)
		}
	}
}

// pruneLease is the lease id under which one replica at a time prunes the Store (no
// transaction has id 0).
const pruneLease = 0

// pruneEvery is how often the Store is pruned: a tenth of the retention, at most hourly.
func pruneEvery(retention time.Duration) time.Duration {
	return min(retention/10, time.Hour)
}

// prune deletes what the Store keeps of transactions finished longer than Retention
// ago, if this replica takes the prune lease: it is held, never yielded, for
// pruneEvery, so that the replicas prune in turn and not more often than that.
func (h *Handler) prune(ctx context.Context) {
	if h.opt.Retention < 0 {
		return
	}
	now := h.opt.Now()
	l := Lease{TransactionID: pruneLease, Holder: h.opt.Replica, Expires: now.Add(pruneEvery(h.opt.Retention))}
	h.pruneMu.Lock()
	due := !now.Before(h.pruneNext)
	h.pruneMu.Unlock()
	if !due {
		return
	}
	turn, err := h.opt.Store.Acquire(ctx, l, nil, now)
	if err != nil {
		h.log.Error("escrow webhook: pruning failed", "error", err)
		return
	}
	h.pruneMu.Lock()
	h.pruneNext = l.Expires // whoever holds it, nobody prunes before then
	h.pruneMu.Unlock()
	if !turn.Granted {
		return
	}
	n, err := h.observedPrune(ctx, now.Add(-h.opt.Retention))
	if err != nil {
		h.log.Error("escrow webhook: pruning failed", "error", err)
		return
	}
	h.log.Info("escrow webhook: pruned the store", "transactions", n, "finished_before", now.Add(-h.opt.Retention))
}

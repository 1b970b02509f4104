package webhook

import (
	"context"
	"errors"
	"iter"
	"time"

	escrow "github.com/escrowkit/escrow-go"
)

// Reconcile compares the account's ongoing transactions, and every transaction the store
// holds as unfinished, with what was handed over, and queues the events of whatever is
// missing. It returns once they are queued; [Handler.Flush] waits for them.
func (h *Handler) Reconcile(ctx context.Context) error {
	seen := make(map[int64]bool)
	queue := func(tx *escrow.Transaction) error {
		seen[tx.ID] = true
		return h.enqueue(job{ev: escrow.Event{EventType: escrow.EventTypeTransaction, TransactionID: tx.ID}, tx: tx, source: FromReconcile})
	}
	if err := h.eachOngoing(ctx, queue); err != nil {
		return err
	}
	// Transactions that ended since the last look are no longer "ongoing", but their last
	// events may still be missing.
	ids, err := h.opt.Store.Unfinished(ctx)
	if err != nil {
		return err
	}
	for _, id := range ids {
		if seen[id] {
			continue
		}
		tx, err := h.client.Transactions.Get(ctx, id)
		switch {
		case errors.Is(err, escrow.ErrNotFound) || errors.Is(err, escrow.ErrForbidden):
			h.log.Warn("escrow webhook: no longer readable; no longer tracked", "transaction_id", id)
			if err := h.opt.Store.Record(ctx, id, nil, true); err != nil {
				return err
			}
			continue
		case err != nil:
			return err
		}
		if err := queue(tx); err != nil {
			return err
		}
	}
	return nil
}

// eachOngoing calls fn for each ongoing transaction: from the partner listing when the
// account may read it (learnt from the first try), else from the paged list.
func (h *Handler) eachOngoing(ctx context.Context, fn func(*escrow.Transaction) error) error {
	h.mu.Lock()
	partner := h.partner
	h.mu.Unlock()
	if partner == nil || *partner {
		err := each(h.client.Partner.AllTransactions(ctx, &escrow.PartnerTransactionsOptions{Status: escrow.StatusOngoing}), fn)
		switch {
		case err == nil:
			h.setPartner(true)
			return nil
		case partner != nil || !errors.Is(err, escrow.ErrForbidden):
			return err
		}
		h.setPartner(false) // not a partner: use the paged list from now on
	}
	return each(h.client.Transactions.All(ctx, nil), func(tx *escrow.Transaction) error {
		if terminal(factsOf(tx)) {
			return nil
		}
		return fn(tx)
	})
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

func (h *Handler) setPartner(v bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.partner = &v
}

// RunReconciler reconciles every interval until ctx ends or the handler shuts down. A failed
// reconciliation is logged and tried again at the next tick.
func (h *Handler) RunReconciler(ctx context.Context, every time.Duration) error {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-h.ctx.Done():
			return nil
		case <-t.C:
			if err := h.Reconcile(ctx); err != nil {
				h.log.Error("escrow webhook: reconciliation failed", "error", err)
			}
		}
	}
}

package webhook

import (
	"context"
	"errors"
	"slices"
	"sync"
	"time"
)

// Claim is a handler's hold on the facts one ConfirmedEvent hands over. A Store grants a
// claim to one owner at a time, until it is done, released, or its lease expires (the
// owner died mid-callback); a claim that is done is never granted again.
type Claim struct {
	TransactionID int64
	// Facts are the keys of the facts the event hands over ("ship:300001", "complete").
	Facts []string
	// Owner names the handler holding the claim (Options.Replica).
	Owner string
	// Expires ends the lease: after it another owner may take the claim over.
	Expires time.Time
}

// ErrClaimLost is returned when a claim was taken over by another owner after its lease
// expired, before its facts were recorded as done.
var ErrClaimLost = errors.New("webhook: claim lost: its lease expired and another replica took it over")

// Store remembers, per transaction, which facts were handed over and who is handing what
// over right now, and where the reconciler's look at the account's history ended. Every
// method is safe for concurrent use, also by several processes sharing one database
// (package sqlstore); [MemoryStore] keeps it in one process's memory.
type Store interface {
	// Handed returns the keys of the transaction's facts recorded as done.
	Handed(ctx context.Context, transactionID int64) (map[string]bool, error)
	// Claim grants c, atomically and for all its facts or none: it reports false when
	// one of them is done, or claimed by another owner whose lease has not expired at
	// now. The owner of a live claim may claim again (its lease is renewed). Claiming
	// makes the transaction known as unfinished.
	Claim(ctx context.Context, c Claim, now time.Time) (bool, error)
	// Done records c's facts as handed over. It returns ErrClaimLost when c is no longer
	// the owner's.
	Done(ctx context.Context, c Claim) error
	// Release gives up c without recording its facts (the callback failed).
	Release(ctx context.Context, c Claim) error
	// Track makes transactions known as unfinished, those not known yet; it leaves
	// finished ones finished.
	Track(ctx context.Context, transactionIDs []int64) error
	// Finish marks a transaction finished: every fact of its terminal state was handed
	// over, so the reconciler no longer re-reads it.
	Finish(ctx context.Context, transactionID int64) error
	// Unfinished lists the known transactions not finished, by id.
	Unfinished(ctx context.Context) ([]int64, error)
	// Mark returns the newest transaction id the reconciler has seen; ok is false before
	// the first reconciliation.
	Mark(ctx context.Context) (mark int64, ok bool, err error)
	// AdvanceMark raises the mark to id, never lowers it.
	AdvanceMark(ctx context.Context, id int64) error
}

// MemoryStore is a Store in memory, safe for concurrent use: it holds for one process
// and forgets everything when it exits. The zero value is ready.
type MemoryStore struct {
	mu      sync.Mutex
	records map[int64]*record
	mark    int64
	marked  bool
	kv      settingsMap // Settings, in settings.go
}

type record struct {
	facts    map[string]claimState
	finished bool
}

type claimState struct {
	owner   string
	expires time.Time
	done    bool
}

func (m *MemoryStore) record(id int64) *record {
	if m.records == nil {
		m.records = make(map[int64]*record)
	}
	r := m.records[id]
	if r == nil {
		r = &record{facts: make(map[string]claimState)}
		m.records[id] = r
	}
	return r
}

// Handed returns the keys recorded as done.
func (m *MemoryStore) Handed(_ context.Context, transactionID int64) (map[string]bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make(map[string]bool)
	if r := m.records[transactionID]; r != nil {
		for k, s := range r.facts {
			if s.done {
				out[k] = true
			}
		}
	}
	return out, nil
}

// Claim grants c if none of its facts is done or held by another owner's live lease.
func (m *MemoryStore) Claim(_ context.Context, c Claim, now time.Time) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	r := m.record(c.TransactionID)
	for _, k := range c.Facts {
		s, ok := r.facts[k]
		if ok && (s.done || (s.owner != c.Owner && now.Before(s.expires))) {
			return false, nil
		}
	}
	for _, k := range c.Facts {
		r.facts[k] = claimState{owner: c.Owner, expires: c.Expires}
	}
	return true, nil
}

// Done records c's facts as handed over.
func (m *MemoryStore) Done(_ context.Context, c Claim) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	r := m.record(c.TransactionID)
	for _, k := range c.Facts {
		if s, ok := r.facts[k]; !ok || s.owner != c.Owner {
			return ErrClaimLost
		}
	}
	for _, k := range c.Facts {
		s := r.facts[k]
		s.done = true
		r.facts[k] = s
	}
	return nil
}

// Release forgets c's facts that are still claimed by c's owner and not done.
func (m *MemoryStore) Release(_ context.Context, c Claim) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	r := m.record(c.TransactionID)
	for _, k := range c.Facts {
		if s, ok := r.facts[k]; ok && s.owner == c.Owner && !s.done {
			delete(r.facts, k)
		}
	}
	return nil
}

// Track makes the transactions known, as unfinished unless already finished.
func (m *MemoryStore) Track(_ context.Context, transactionIDs []int64) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, id := range transactionIDs {
		m.record(id)
	}
	return nil
}

// Finish marks the transaction finished.
func (m *MemoryStore) Finish(_ context.Context, transactionID int64) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.record(transactionID).finished = true
	return nil
}

// Unfinished lists the known transactions not finished, by id.
func (m *MemoryStore) Unfinished(context.Context) ([]int64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var ids []int64
	for id, r := range m.records {
		if !r.finished {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	return ids, nil
}

// Mark returns the reconciler's mark.
func (m *MemoryStore) Mark(context.Context) (int64, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.mark, m.marked, nil
}

// AdvanceMark raises the mark to id.
func (m *MemoryStore) AdvanceMark(_ context.Context, id int64) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.mark, m.marked = max(m.mark, id), true
	return nil
}

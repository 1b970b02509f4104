package webhook

import (
	"context"
	"maps"
	"slices"
	"sync"
)

// Store remembers what has been handed over, per transaction, so that nothing is handed
// over twice and the reconciler knows which transactions to re-read. Implement it over a
// database to survive restarts; [MemoryStore] keeps it in memory.
type Store interface {
	// Handed returns the keys recorded for a transaction. The caller does not modify it.
	Handed(ctx context.Context, transactionID int64) (map[string]bool, error)
	// Record adds keys to a transaction's record; finished marks it complete or cancelled.
	Record(ctx context.Context, transactionID int64, keys []string, finished bool) error
	// Unfinished lists the transactions with a record that is not finished.
	Unfinished(ctx context.Context) ([]int64, error)
}

// MemoryStore is a Store in memory, safe for concurrent use. The zero value is ready.
type MemoryStore struct {
	mu      sync.Mutex
	records map[int64]*record
}

type record struct {
	keys     map[string]bool
	finished bool
}

// Handed returns a copy of the keys recorded for the transaction.
func (m *MemoryStore) Handed(_ context.Context, transactionID int64) (map[string]bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if r := m.records[transactionID]; r != nil {
		return maps.Clone(r.keys), nil
	}
	return map[string]bool{}, nil
}

// Record adds the keys to the transaction's record.
func (m *MemoryStore) Record(_ context.Context, transactionID int64, keys []string, finished bool) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.records == nil {
		m.records = make(map[int64]*record)
	}
	r := m.records[transactionID]
	if r == nil {
		r = &record{keys: make(map[string]bool)}
		m.records[transactionID] = r
	}
	for _, k := range keys {
		r.keys[k] = true
	}
	r.finished = r.finished || finished
	return nil
}

// Unfinished lists the recorded transactions not yet complete or cancelled, by id.
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

package webhook

// Entries counts what m keeps: records, lease states and tombstones, for tests that
// check a store keeps nothing for ids that never existed.
func (m *MemoryStore) Entries() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.records) + len(m.leases) + len(m.tombstones)
}

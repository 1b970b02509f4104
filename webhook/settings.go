package webhook

import (
	"context"
	"sync"
)

var _ Settings = (*MemoryStore)(nil)

// settingsMap is MemoryStore's Settings. The zero value is ready.
type settingsMap struct {
	mu sync.Mutex
	m  map[string]string
}

// Setting returns the value kept under key.
func (m *MemoryStore) Setting(_ context.Context, key string) (string, bool, error) {
	m.kv.mu.Lock()
	defer m.kv.mu.Unlock()
	v, ok := m.kv.m[key]
	return v, ok, nil
}

// InitSetting keeps value under key unless it has one, and returns the value kept.
func (m *MemoryStore) InitSetting(_ context.Context, key, value string) (string, error) {
	m.kv.mu.Lock()
	defer m.kv.mu.Unlock()
	if v, ok := m.kv.m[key]; ok {
		return v, nil
	}
	if m.kv.m == nil {
		m.kv.m = make(map[string]string)
	}
	m.kv.m[key] = value
	return value, nil
}

// PutSetting keeps value under key.
func (m *MemoryStore) PutSetting(_ context.Context, key, value string) error {
	m.kv.mu.Lock()
	defer m.kv.mu.Unlock()
	if m.kv.m == nil {
		m.kv.m = make(map[string]string)
	}
	m.kv.m[key] = value
	return nil
}

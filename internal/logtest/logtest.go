// Package logtest collects what a logger writes, for tests that assert on log lines while
// the code under test logs from several goroutines.
package logtest

import (
	"strings"
	"sync"
)

// Lines is the output of a log handler, safe for concurrent use: pass its address as the
// handler's writer and read it back with String.
type Lines struct {
	mu  sync.Mutex
	buf strings.Builder
}

// Write appends p; it never fails.
func (l *Lines) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

// String returns everything written so far.
func (l *Lines) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// Count returns how many times substr occurs in what was written.
func (l *Lines) Count(substr string) int { return strings.Count(l.String(), substr) }

package escrowtest

import "sync"

// changes tells watchers (the page's event stream) that the emulator may have changed:
// an API request was served, a control endpoint changed something, a webhook call ended.
// It carries no detail; a watcher reads what it shows again. A counter rather than a
// list of events keeps it bounded however fast requests arrive and however slowly a
// watcher reads.
type changes struct {
	mu      sync.Mutex
	version uint64
	ch      chan struct{} // closed at the next change
}

func newChanges() *changes { return &changes{ch: make(chan struct{})} }

// notify records a change and wakes every watcher.
func (c *changes) notify() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.version++
	close(c.ch)
	c.ch = make(chan struct{})
}

// next returns the current version and a channel closed at the next change.
func (c *changes) next() (uint64, <-chan struct{}) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.version, c.ch
}

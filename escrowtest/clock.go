package escrowtest

import (
	"sync"
	"time"
)

// clock is the emulator's time. Frozen at a start time (WithClock) it moves only when
// Advance is called, which makes tests deterministic; otherwise it follows the wall clock,
// shifted by every Advance, so that a long-running `escrow emulator` still ages.
type clock struct {
	mu     sync.Mutex
	wall   func() time.Time // nil when frozen
	start  time.Time
	offset time.Duration
}

func newClock(start time.Time, frozen bool) *clock {
	c := &clock{start: start.UTC().Round(0)}
	if !frozen {
		c.wall = func() time.Time { return time.Now().UTC().Round(0) }
	}
	return c
}

// now returns the emulator's current time, in UTC.
func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	base := c.start
	if c.wall != nil {
		base = c.wall()
	}
	return base.Add(c.offset)
}

// advance moves the clock forward by d.
func (c *clock) advance(d time.Duration) time.Time {
	c.mu.Lock()
	c.offset += d
	c.mu.Unlock()
	return c.now()
}

// reset undoes every advance.
func (c *clock) reset() {
	c.mu.Lock()
	c.offset = 0
	c.mu.Unlock()
}

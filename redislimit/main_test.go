package redislimit_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package when a test leaves a goroutine behind: a round trip that never
// ended, a Redis client or an emulator that a test forgot to close.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

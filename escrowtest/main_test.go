package escrowtest

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package when a test leaves a goroutine behind: the emulator's
// webhook worker, listeners and connections must all stop on Close.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

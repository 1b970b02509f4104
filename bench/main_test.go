package bench

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package when a harness leaves a goroutine behind: a client's connection
// or a server that a run forgot to close.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

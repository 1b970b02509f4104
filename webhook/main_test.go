package webhook_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package when a test leaves a goroutine behind: a Handler must not.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

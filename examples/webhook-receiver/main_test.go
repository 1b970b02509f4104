package main

import (
	"strings"
	"testing"
)

// TestRun: the example completes every sale once in the order system, though the emulator
// loses some webhook calls, and recovers at least one event by reconciliation.
func TestRun(t *testing.T) {
	var out strings.Builder
	if err := run(t.Context(), &out); err != nil {
		t.Fatalf("run: %v\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "(from reconcile)") {
		t.Errorf("nothing was recovered:\n%s", out.String())
	}
	if strings.Count(out.String(), "complete ") != 3 {
		t.Errorf("want three completions:\n%s", out.String())
	}
}

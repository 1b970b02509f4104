package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/escrowkit/escrow-go/escrowtest"
)

// TestEmulatorHelpListsControlEndpoints: `escrow emulator -h` prints the control API's
// endpoints, from the list the emulator dispatches on.
func TestEmulatorHelpListsControlEndpoints(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), []string{"emulator", "-h"}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	for _, ep := range escrowtest.ControlEndpoints() {
		if !strings.Contains(stderr.String(), ep.Method) || !strings.Contains(stderr.String(), ep.Path+" ") {
			t.Errorf("-h does not list %s %s:\n%s", ep.Method, ep.Path, stderr.String())
		}
	}
}

package main

import (
	"os"
	"strings"
	"testing"

	escrow "github.com/escrowkit/escrow-go"
)

// TestChangelogHasTheVersion: the version 'escrow version' prints has its section in
// CHANGELOG.md, so that a user can read what it holds.
func TestChangelogHasTheVersion(t *testing.T) {
	data, err := os.ReadFile("../../CHANGELOG.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), "\n## "+escrow.Version+" ") && !strings.Contains(string(data), "\n## "+escrow.Version+"\n") {
		t.Errorf("CHANGELOG.md has no section \"## %s\"", escrow.Version)
	}
}

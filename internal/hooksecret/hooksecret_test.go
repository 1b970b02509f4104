package hooksecret

import (
	"strings"
	"testing"
)

// TestMaskURLMasksWhatProblemAccepts: a path segment is masked exactly when Problem finds
// nothing wrong with it, for every shape a secret can take (generated, words and hyphens,
// lower-case letters, digits, '-' and '_' alone) and for segments one character too short
// or too long, or holding one character outside the alphabet.
func TestMaskURLMasksWhatProblemAccepts(t *testing.T) {
	for _, seg := range []string{
		"kQ9-zXvb_Lm0pRaT77wEqAbC1", "correct-horse-battery-staple-xyz", "abcdefghijklmnopqrstuvwxyz",
		"3141592653589793238462643383", "_-_-_-_-_-_-_-_-_-_-_-_-", strings.Repeat("a", MaxLen),
		strings.Repeat("a", MinLen-1), strings.Repeat("a", MaxLen+1), "correct-horse-battery.staple", "webhook",
	} {
		u := "https://shop.example/hooks/" + seg + "?x=1"
		masked := MaskURL(u) == "https://shop.example/hooks/SECRET?x=1"
		if accepted := Problem(seg) == ""; masked != accepted {
			t.Errorf("%q: accepted %v, masked %v; want both or neither", seg, accepted, masked)
		}
		if !masked && MaskURL(u) != u {
			t.Errorf("MaskURL(%q) = %q, want it unchanged", u, MaskURL(u))
		}
	}
}

package main

import (
	"strings"
	"testing"
)

// TestAsNeedsAnEmulator: --as says why it cannot work against the live API, and what to
// use there instead.
func TestAsNeedsAnEmulator(t *testing.T) {
	t.Setenv(envBaseURL, "")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"customers", "me", "--as", "b@example.com"}, "--as works against an emulator only"},
		{[]string{"customers", "me", "--as", "b@example.com", "--sandbox"}, "set ESCROW_EMAIL and ESCROW_API_KEY"},
		{[]string{"customers", "me", "--as", "b@example.com", "--base-url", "https://api.example.com/2017-09-01/"}, "not on a loopback address"},
		{[]string{"transactions", "act", "1", "agree", "--as", "b@example.com", "--as-customer", "c@example.com", "--base-url", "https://127.0.0.1:1/2017-09-01/"}, "--as and --as-customer do not go together"},
	} {
		code, _, errOut := cli(t, c.args...)
		if code != exitUsage || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: exit %d, want %q in %s", c.args, code, c.want, errOut)
		}
	}
}

package main

import (
	"strings"
	"testing"
)

// TestFlagErrorsSayWhatToUse: every kind of flag error names what to type instead.
func TestFlagErrorsSayWhatToUse(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"transactions", "pay", "wire", "1", "--as-customer", "b@example.com"}, "run this command as the party itself, with --as EMAIL"},
		{[]string{"transactions", "list", "--jsn"}, "no flag --jsn here: did you mean --json?"},
		{[]string{"emulator", "fault", "*", "--probabilty", "0.5"}, "did you mean --probability?"},
		{[]string{"emulator", "fault", "*", "--latency", "long"}, `--latency "long": want a duration such as 90s`},
		{[]string{"emulator", "fault", "*", "--status", "five"}, `--status "five": want a whole number`},
		{[]string{"emulator", "fault", "*", "--probability", "half"}, `--probability "half": want a number such as 0.5`},
		{[]string{"emulator", "rate-limit", "5", "--window"}, "--window needs a value: want a duration"},
		{[]string{"transactions", "list", "--json=maybe"}, `--json "maybe": want true or false`},
		{[]string{"emulator", "reset", "--as", "b@example.com"}, "the emulator's control commands need no account"},
		{[]string{"emulator", "reset", "--zzzzzzzz"}, "its flags are --base-url, --ca-cert, --json"},
	} {
		code, _, errOut := cli(t, c.args...)
		if code != exitUsage || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: exit %d, want %q in %s", c.args, code, c.want, errOut)
		}
	}
	if d := editDistance("probabilty", "probability"); d != 1 {
		t.Errorf("editDistance = %d", d)
	}
}

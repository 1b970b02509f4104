package main

import (
	"flag"
	"fmt"
	"strings"
)

// The flag package's errors say what went wrong ("flag provided but not defined: -x") but
// not why or what to type instead. explainFlagError rewrites them as usage errors that do:
// an unknown flag names the command's flags and the nearest one, a flag that exists
// elsewhere says where and what to use here, and a bad value says what kind of value the
// flag takes, with an example.

// flagElsewhere explains flags that some commands take and others do not, for the commands
// that do not.
var flagElsewhere = map[string]string{
	"as-customer": "the API takes As-Customer only on the actions a partner may do for a party and on the buyer's payment steps (spec part 5), not here: " +
		"run this command as the party itself, with --as EMAIL against an emulator, or with the party's own " + envEmail + " and " + envAPIKey,
	"as":      "--as is a flag of the API commands (escrow transactions …, escrow customers me); the emulator's control commands need no account",
	"partner": "--partner goes with 'escrow emulator --env FILE' (the partner its shell settings are for) and with 'escrow emulator customer EMAIL'",
}

// explainFlagError turns a parse error of fs into a *usageError that says why and what to
// use instead.
func explainFlagError(fs *flag.FlagSet, err error) error {
	msg := err.Error()
	if name, ok := strings.CutPrefix(msg, "flag provided but not defined: -"); ok {
		return usagef("%s", unknownFlag(fs, name))
	}
	if name, ok := strings.CutPrefix(msg, "flag needs an argument: -"); ok {
		return usagef("--%s needs a value: %s", name, flagKind(fs, name))
	}
	for _, prefix := range []string{"invalid value ", "invalid boolean value "} {
		if rest, ok := strings.CutPrefix(msg, prefix); ok {
			// rest is `"VALUE" for flag -NAME: reason` (or `for -NAME` for booleans).
			value, rest, _ := strings.Cut(rest, " for ")
			rest = strings.TrimPrefix(rest, "flag ")
			name, _, _ := strings.Cut(strings.TrimPrefix(rest, "-"), ":")
			return usagef("--%s %s: %s", name, value, flagKind(fs, name))
		}
	}
	return usagef("%s", msg)
}

// unknownFlag explains a flag the command does not take.
func unknownFlag(fs *flag.FlagSet, name string) string {
	name = strings.TrimLeft(name, "-")
	var names []string
	fs.VisitAll(func(f *flag.Flag) { names = append(names, "--"+f.Name) })
	msg := fmt.Sprintf("no flag --%s here", name)
	if why, ok := flagElsewhere[name]; ok {
		return msg + ": " + why
	}
	if near := nearest(fs, name); near != "" {
		return msg + ": did you mean --" + near + "?"
	}
	if len(names) == 0 {
		return msg + ": it takes no flag"
	}
	return msg + ": its flags are " + strings.Join(names, ", ")
}

// nearest returns the command's flag closest to name (a prefix of it, or at most two
// edits away), or "".
func nearest(fs *flag.FlagSet, name string) string {
	best, bestDist := "", 3
	fs.VisitAll(func(f *flag.Flag) {
		d := editDistance(name, f.Name)
		if strings.HasPrefix(f.Name, name) && len(name) >= 3 {
			d = min(d, 1)
		}
		if d < bestDist {
			best, bestDist = f.Name, d
		}
	})
	return best
}

// editDistance is the Levenshtein distance between a and b.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}

// flagKind says what kind of value a flag takes, with an example, from its type.
func flagKind(fs *flag.FlagSet, name string) string {
	f := fs.Lookup(name)
	if f == nil {
		return "see -h"
	}
	kind := "see -h for what it takes"
	switch fmt.Sprintf("%T", f.Value) {
	case "*flag.durationValue":
		kind = "want a duration such as 90s, 5m or 1h30m"
	case "*flag.intValue", "*flag.int64Value", "*flag.uintValue", "*flag.uint64Value":
		kind = "want a whole number such as 10"
	case "*flag.float64Value":
		kind = "want a number such as 0.5"
	case "*flag.boolValue":
		kind = "want true or false (or the flag alone for true)"
	case "*flag.stringValue", "flag.funcValue", "*flag.funcValue":
		kind = "want " + strings.TrimSpace(f.Usage)
	}
	return kind
}

package escrow

import (
	"regexp"
	"slices"
	"strings"
)

// The spec's validation shape reports a party entry as a whole: "parties": {"0": [messages]}
// (spec part 7). Where a message names the party's field first ("customer: … is not an
// e-mail address", as the emulator writes them), the field error is moved to that field,
// parties[0].customer, so that every error is at its leaf, as for items. A message that
// names no field of a party stays at the entry.

// partyEntry matches the path of a party entry: "parties[0]".
var partyEntry = regexp.MustCompile(`^parties\[\d+\]$`)

// partyFields are the fields of a party entry that a message may name first.
var partyFields = []string{"role", "customer", "visibility", "agreed", "initiator"}

// leafFields moves the messages at party entries that name one of the party's fields to
// that field; the order of the fields is kept.
func leafFields(fields []FieldError) []FieldError {
	out := make([]FieldError, 0, len(fields))
	for _, f := range fields {
		if !partyEntry.MatchString(f.Path) {
			out = append(out, f)
			continue
		}
		var entry []FieldError // the entry and its fields, in the order first named
		for _, m := range f.Messages {
			path, msg := f.Path, m
			if field, rest, ok := strings.Cut(m, ": "); ok && slices.Contains(partyFields, strings.SplitN(field, ".", 2)[0]) {
				path, msg = f.Path+"."+field, rest
			}
			entry = addMessage(entry, path, msg)
		}
		out = append(out, entry...)
	}
	return out
}

// addMessage adds msg to the field at path in fields, or a new field at the end.
func addMessage(fields []FieldError, path, msg string) []FieldError {
	if i := slices.IndexFunc(fields, func(f FieldError) bool { return f.Path == path }); i >= 0 {
		fields[i].Messages = append(fields[i].Messages, msg)
		return fields
	}
	return append(fields, FieldError{Path: path, Messages: []string{msg}})
}

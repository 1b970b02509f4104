package escrow

import (
	"errors"
	"slices"
	"testing"
)

// TestPartyMessagesNamingAFieldAreAtTheField: in the spec's shape a party entry holds a
// list of messages; one that names a field of the party first ("customer: …") is reported
// at that field, one that names none stays at the entry, and other paths are untouched.
func TestPartyMessagesNamingAFieldAreAtTheField(t *testing.T) {
	err := answerError(422, "POST", "/2017-09-01/transaction", `{"errors": {
		"parties": {"0": ["customer: \"a b@example.com\" is not an e-mail address", "Unknown party.", "visibility.hidden_from: x is not a party"],
		            "1": ["note: something"]},
		"items": {"0": {"category": ["customer: not a party field here"]}}}}`)
	var ve *ValidationError
	if !errors.As(err, &ve) {
		t.Fatalf("err = %v", err)
	}
	want := []FieldError{
		{Path: "parties[0].customer", Messages: []string{`"a b@example.com" is not an e-mail address`}},
		{Path: "parties[0]", Messages: []string{"Unknown party."}},
		{Path: "parties[0].visibility.hidden_from", Messages: []string{"x is not a party"}},
		{Path: "parties[1]", Messages: []string{"note: something"}},
		{Path: "items[0].category", Messages: []string{"customer: not a party field here"}},
	}
	if got := ve.Fields(); !slices.EqualFunc(got, want, func(a, b FieldError) bool { return a.Path == b.Path && slices.Equal(a.Messages, b.Messages) }) {
		t.Errorf("fields %v, want %v", got, want)
	}
}

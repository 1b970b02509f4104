package redact

import "testing"

// TestRedactorKeepsOtherText: only the secret is replaced, and near misses are left alone.
func TestRedactorKeepsOtherText(t *testing.T) {
	r := &Redactor{secrets: []string{"7777_abc"}}
	for in, want := range map[string]string{
		"key 7777_abc!":                    "key [REDACTED]!",
		`k=\u0037777\u005fabc;`:            "k=[REDACTED];",
		"&#55;&#x37;&#X0037;7&lowbar;abc.": "[REDACTED].",
		"7777_ab":                          "7777_ab",
		"&&&% \\u00 &#;&#x;%4":             "&&&% \\u00 &#;&#x;%4",
		"7777_abc7777_abc":                 "[REDACTED][REDACTED]",
	} {
		if got := r.String(in); got != want {
			t.Errorf("redact(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestNilRedactorRedactsNothing: a client without a credential hands text back as it is.
func TestNilRedactorRedactsNothing(t *testing.T) {
	var r *Redactor
	if got := r.String("4171_key"); got != "4171_key" {
		t.Errorf("nil String = %q", got)
	}
	if got := r.Bytes([]byte("x")); string(got) != "x" {
		t.Errorf("nil Bytes = %q", got)
	}
}

// TestHeaderRedactsNamesInAnyCase: a header named after the key, in the case Go gives it,
// goes, and its values are kept under the redacted name.
func TestHeaderRedactsNamesInAnyCase(t *testing.T) {
	r := New("shop@example.com", "4171_abcdefghijklmnop")
	h := r.Header(map[string][]string{"4171_abcdefghijklmnop": {"v"}, "X-Other": {"4171_abcdefghijklmnop"}})
	if len(h[Redacted]) != 1 || h[Redacted][0] != "v" || h["X-Other"][0] != Redacted {
		t.Errorf("Header = %v", h)
	}
}

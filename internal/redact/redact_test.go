package redact

import (
	"strings"
	"testing"
)

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

// TestNamedEntitiesOfEveryKeyCharacterAreRedacted: a key holding one of the characters
// that have an HTML name, echoed with that character written as its named entity (the
// key's "/" as "&sol;"), is redacted whole, for every name of the table. A name left out
// would leak such a key through any error body an HTML-escaping server writes. The key
// has the character every two letters, so that no plain piece of it is long enough to be
// caught another way.
func TestNamedEntitiesOfEveryKeyCharacterAreRedacted(t *testing.T) {
	for name, c := range map[string]string{
		"sol": "/", "plus": "+", "equals": "=", "lowbar": "_", "UnderBar": "_", "colon": ":",
		"period": ".", "commat": "@", "hyphen": "-", "dash": "-", "amp": "&", "num": "#",
		"bsol": `\`, "percnt": "%", "quot": `"`, "semi": ";",
	} {
		t.Run(name, func(t *testing.T) {
			key := strings.Join([]string{"4A", "bC", "dE", "fG", "hI", "jK", "lM"}, c)
			r := New("shop@example.com", key)
			echo := strings.ReplaceAll(key, c, "&"+name+";")
			if got := r.String("key=" + echo + "."); got != "key="+Redacted+"." {
				t.Errorf("the key %q echoed as %q: %q, want it redacted", key, echo, got)
			}
		})
	}
}

package escrow_test

// Money policies that mutation testing (scripts/mutate) found unpinned. They go through the
// exported API and encoding/json only, so they hold however money.go is arranged inside.

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	escrow "github.com/escrowkit/escrow-go"
)

// TestAmountDecodesEveryLeadingDigit: a JSON number may start with any digit or a minus
// sign; 9 and 0 are the edges of the digit range.
func TestAmountDecodesEveryLeadingDigit(t *testing.T) {
	for _, lit := range []string{"0.50", "1.00", "5.25", "9.99", "99999.00", "-9.10"} {
		var a escrow.Amount
		if err := json.Unmarshal([]byte(lit), &a); err != nil {
			t.Errorf("%s: %v", lit, err)
			continue
		}
		if got := a.String(); got != lit {
			t.Errorf("%s decoded as %s", lit, got)
		}
	}
	// Not numbers, though "/" and ":" sit either side of the digits in ASCII.
	for _, lit := range []string{`"/1"`, `":1"`, `true`, `{}`} {
		var a escrow.Amount
		if err := json.Unmarshal([]byte(`{"a":`+lit+`}`), &struct{ A *escrow.Amount }{&a}); err == nil {
			t.Errorf("%s decoded as %s", lit, a)
		}
	}
}

// TestSplitNullLeavesValue: a null split, as a partner listing may send for a fee without
// one, keeps what the field held, as a null amount does.
func TestSplitNullLeavesValue(t *testing.T) {
	s := escrow.SplitHalf
	if err := json.Unmarshal([]byte(`null`), &s); err != nil || s != escrow.SplitHalf {
		t.Errorf("null: %v, split %v; want no error and 0.5 kept", err, s)
	}
	var fee struct {
		Split escrow.Split `json:"split"`
	}
	fee.Split = escrow.SplitWhole
	if err := json.Unmarshal([]byte(`{"split": null}`), &fee); err != nil || fee.Split != escrow.SplitWhole {
		t.Errorf("null in an object: %v, split %v", err, fee.Split)
	}
	if err := json.Unmarshal([]byte(`{"split": "half"}`), &fee); err == nil {
		t.Error(`"half" decoded as a split`)
	}
}

// TestAmountLiteralLimits: the bounds that keep a hostile response from making an Amount
// costly hold exactly at their values: 64 characters and an exponent of ±30 are decoded,
// one more is refused. ParseAmount, which takes no exponent, keeps the length bound and
// refuses what would not fit it once formatted.
func TestAmountLiteralLimits(t *testing.T) {
	long, tooLong := "1"+strings.Repeat("0", 63), "1"+strings.Repeat("0", 64)
	tests := []struct {
		lit string
		ok  bool
	}{
		{long, true},
		{tooLong, false},
		{"1e30", true},
		{"1e31", false},
		{"1e-30", true},
		{"1e-31", false},
	}
	for _, tc := range tests {
		for _, form := range []string{tc.lit, `"` + tc.lit + `"`} {
			var a escrow.Amount
			err := json.Unmarshal([]byte(form), &a)
			if (err == nil) != tc.ok {
				t.Errorf("JSON %.24s…: %v; want ok %v", form, err, tc.ok)
			}
			if err != nil && !errors.Is(err, escrow.ErrInvalidAmount) {
				t.Errorf("JSON %.24s…: %v is not ErrInvalidAmount", form, err)
			}
		}
	}
	// ParseAmount takes what it can give back: a literal of at most 64 characters whose
	// value, written with its sign and two decimals, fits 64 too: 60 digits before the point.
	widest := "-" + strings.Repeat("9", 60) + ".99"
	for _, lit := range []string{widest, strings.Repeat("0", 60) + "1.50"} {
		a, err := escrow.ParseAmount(lit)
		text, _ := a.MarshalText()
		if back, berr := escrow.ParseAmount(string(text)); err != nil || berr != nil || back.Cmp(a) != 0 {
			t.Errorf("ParseAmount(%q) = %s, %v; parsed back: %v", lit, text, err, berr)
		}
	}
	for _, lit := range []string{tooLong, strings.Repeat("0", 61) + "1.50", "1" + strings.Repeat("0", 60), long} {
		if _, err := escrow.ParseAmount(lit); !errors.Is(err, escrow.ErrInvalidAmount) {
			t.Errorf("ParseAmount(%q): %v, want ErrInvalidAmount", lit, err)
		}
	}
	// Space around a string's number is not part of the literal.
	var a escrow.Amount
	if err := json.Unmarshal([]byte(`" `+long+` "`), &a); err != nil {
		t.Errorf("64 digits with spaces around: %v", err)
	}
}

// TestAmountErrorsStayShort: the message of a refused literal quotes at most its first 64
// characters, so an error log line cannot be flooded by a response.
func TestAmountErrorsStayShort(t *testing.T) {
	huge := strings.Repeat("9", 10_000)
	for _, in := range []string{huge, `"` + huge + `"`, "[" + huge + "]"} {
		var a escrow.Amount
		err := json.Unmarshal([]byte(`{"a":`+in+`}`), &struct{ A *escrow.Amount }{&a})
		if err == nil {
			t.Fatalf("a %d-character literal decoded", len(in))
		}
		if len(err.Error()) > 200 {
			t.Errorf("error of %d characters: %.80s…", len(err.Error()), err)
		}
	}
	_, err := escrow.ParseAmount(huge)
	if err == nil || len(err.Error()) > 200 || !strings.Contains(err.Error(), strings.Repeat("9", 64)) {
		t.Errorf("ParseAmount of 10000 digits: %.120v", err)
	}
}

// TestTimestampTextDecodedAsJSONDoes: the text a Timestamp keeps (Raw) is the JSON string
// exactly as encoding/json decodes it: escapes resolved (even a string of nothing but
// backslashes), invalid UTF-8 replaced, the edges of printable ASCII kept.
func TestTimestampTextDecodedAsJSONDoes(t *testing.T) {
	for _, tok := range []string{
		`"\\"`, `"\\\\"`, `"2024-01-02\u0054"`, `"\""`, `"é"`, "\"\xff\"", "\"\xff\xfe\"",
		`" "`, `"~"`, `"!"`, `"2024-01-02"`, `""`,
	} {
		var want string
		if err := json.Unmarshal([]byte(tok), &want); err != nil {
			t.Fatalf("%s: %v", tok, err)
		}
		var doc struct{ D escrow.Timestamp }
		if err := json.Unmarshal([]byte(`{"D":`+tok+`}`), &doc); err != nil {
			t.Errorf("%s: %v", tok, err)
			continue
		}
		if doc.D.Raw() != want {
			t.Errorf("%s: Raw() = %q, want %q", tok, doc.D.Raw(), want)
		}
	}
}

// TestUnmarshalJSONRefusesWhatIsNotJSON: UnmarshalJSON is public, and decoders other than
// encoding/json call it with whatever bytes they hold. A token that is not a JSON number,
// string or null is refused, not read as the nearest thing that parses.
func TestUnmarshalJSONRefusesWhatIsNotJSON(t *testing.T) {
	for _, in := range []string{`+5`, `.5`, `Inf`, `"12`, `12"`, `"""`, "\"\x01\"", `'1'`} {
		var a escrow.Amount
		if err := a.UnmarshalJSON([]byte(in)); err == nil {
			t.Errorf("Amount %q decoded as %s", in, a)
		}
		var s escrow.Split
		if err := s.UnmarshalJSON([]byte(in)); err == nil {
			t.Errorf("Split %q decoded as %v", in, s)
		}
	}
	for _, in := range []string{`"2024-01-02`, `2024-01-02"`, `"""`, "\"\x01\"", `x"`} {
		var ts escrow.Timestamp
		if err := ts.UnmarshalJSON([]byte(in)); err == nil {
			t.Errorf("Timestamp %q decoded as %v (raw %q)", in, ts.Time, ts.Raw())
		}
	}
}

// TestAmountErrorQuotesAShortLiteralWhole: a refused literal of up to 64 characters is
// quoted whole, with no ellipsis claiming something was cut.
func TestAmountErrorQuotesAShortLiteralWhole(t *testing.T) {
	lit := "1" + strings.Repeat("0", 62) + "x" // 64 characters
	_, err := escrow.ParseAmount(lit)
	if err == nil || !strings.Contains(err.Error(), `"`+lit+`"`) || strings.Contains(err.Error(), "…") {
		t.Errorf("ParseAmount(%d characters): %v", len(lit), err)
	}
	var a escrow.Amount
	err = a.UnmarshalJSON([]byte(lit))
	if err == nil || !strings.Contains(err.Error(), lit) || strings.Contains(err.Error(), "…") {
		t.Errorf("UnmarshalJSON(%d characters): %v", len(lit), err)
	}
}

// TestUnmarshalJSONTakesSpaceAroundAToken: JSON allows white space around a value, and a
// decoder calling UnmarshalJSON may pass it along.
func TestUnmarshalJSONTakesSpaceAroundAToken(t *testing.T) {
	for _, in := range []string{" 12.50", "12.50\n", "\t\"12.50\" "} {
		var a escrow.Amount
		if err := a.UnmarshalJSON([]byte(in)); err != nil || a.String() != "12.50" {
			t.Errorf("Amount %q: %v, %s", in, err, a)
		}
		var s escrow.Split
		if err := s.UnmarshalJSON([]byte(strings.Replace(in, "12.50", "0.5", 1))); err != nil || s != escrow.SplitHalf {
			t.Errorf("Split %q: %v, %v", in, err, s)
		}
	}
	a, s := escrow.MustAmount("3.00"), escrow.SplitWhole
	if err := a.UnmarshalJSON([]byte(" null ")); err != nil || a.String() != "3.00" {
		t.Errorf("Amount \" null \": %v, %s", err, a)
	}
	if err := s.UnmarshalJSON([]byte(" null\n")); err != nil || s != escrow.SplitWhole {
		t.Errorf("Split \" null\": %v, %v", err, s)
	}
}

// TestTimestampNullBothWays: the zero time encodes as null, and null decodes to the zero
// time whatever the field held before (a due date the server has since removed).
func TestTimestampNullBothWays(t *testing.T) {
	b, err := json.Marshal(struct{ Due escrow.Timestamp }{})
	if err != nil || string(b) != `{"Due":null}` {
		t.Errorf("zero time: %s, %v; want null", b, err)
	}
	ts, err := escrow.ParseTimestamp("2026-01-02T03:04:05Z")
	if err != nil {
		t.Fatal(err)
	}
	doc := struct{ Due escrow.Timestamp }{ts}
	if err := json.Unmarshal([]byte(`{"Due": null}`), &doc); err != nil || !doc.Due.IsZero() || doc.Due.Raw() != "" {
		t.Errorf("null over %v: %v, %v (raw %q); want the zero time", ts.Time, err, doc.Due.Time, doc.Due.Raw())
	}
}

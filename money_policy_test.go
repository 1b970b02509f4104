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
// one more is refused. ParseAmount, which takes no exponent, keeps the length bound.
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
	if _, err := escrow.ParseAmount(long); err != nil {
		t.Errorf("ParseAmount of 64 digits: %v", err)
	}
	if _, err := escrow.ParseAmount(tooLong); !errors.Is(err, escrow.ErrInvalidAmount) {
		t.Errorf("ParseAmount of 65 digits: %v, want ErrInvalidAmount", err)
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

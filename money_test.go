package escrow

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/go-querystring/query"
)

func TestAmountDecodesNumbersAndStrings(t *testing.T) {
	tests := []struct {
		in   string
		want string
	}{
		{`"1000.00"`, "1000.00"},
		{`1000.0`, "1000.00"},
		{`210`, "210.00"},
		{`"17.875"`, "17.875"}, // sub-cent digits are kept, never rounded away
		{`"0.10"`, "0.10"},
		{`-5.5`, "-5.50"},
		{`"1e3"`, "1000.00"},
		{` "32.50" `, "32.50"},
	}
	for _, tt := range tests {
		var a Amount
		if err := json.Unmarshal([]byte(tt.in), &a); err != nil {
			t.Errorf("Unmarshal(%s): %v", tt.in, err)
			continue
		}
		if got := a.String(); got != tt.want {
			t.Errorf("Unmarshal(%s) = %s, want %s", tt.in, got, tt.want)
		}
	}
}

func TestAmountRefusesWhatIsNotMoney(t *testing.T) {
	for _, in := range []string{`"abc"`, `""`, `true`, `{}`, `[]`, `"1e99999"`, `"NaN"`, `"Infinity"`, `1e40`,
		`"` + strings.Repeat("1", 100) + `"`} {
		var a Amount
		err := json.Unmarshal([]byte(in), &a)
		if err == nil {
			t.Errorf("Unmarshal(%.20s) = %v, want an error", in, a)
			continue
		}
		if !errors.Is(err, ErrInvalidAmount) {
			t.Errorf("Unmarshal(%.20s) error %v does not match ErrInvalidAmount", in, err)
		}
	}
}

func TestAmountNullLeavesValue(t *testing.T) {
	a := MustAmount("3.00")
	if err := json.Unmarshal([]byte("null"), &a); err != nil || a.String() != "3.00" {
		t.Errorf("after null: %v, %v", a, err)
	}
	var p *Amount
	if err := json.Unmarshal([]byte("null"), &p); err != nil || p != nil {
		t.Errorf("null into *Amount: %v, %v", p, err)
	}
}

func TestAmountEncodesNumberWithTwoDecimals(t *testing.T) {
	for in, want := range map[string]string{"1000": "1000.00", "0.5": "0.50", "17.88": "17.88", "1.000": "1.00", "-2": "-2.00"} {
		got, err := json.Marshal(MustAmount(in))
		if err != nil || string(got) != want {
			t.Errorf("Marshal(%s) = %s, %v; want %s", in, got, err, want)
		}
	}
}

func TestAmountRefusesToRoundSubCentOnTheWire(t *testing.T) {
	_, err := json.Marshal(struct{ A Amount }{decodedAmount(t, "10.005")})
	if !errors.Is(err, ErrInvalidAmount) {
		t.Fatalf("Marshal(10.005) error = %v, want ErrInvalidAmount", err)
	}
}

func TestAmountFormatting(t *testing.T) {
	a := MustAmount("1000")
	if got := fmt.Sprintf("%v|%s|%.1f|%8v", a, a, a, a); got != "1000.00|1000.00|1000.0| 1000.00" {
		t.Errorf("formatted %q", got)
	}
	if c, exact := MustAmount("12.34").Cents(); c != 1234 || !exact {
		t.Errorf("Cents(12.34) = %d, %v", c, exact)
	}
	if _, exact := decodedAmount(t, "12.345").Cents(); exact {
		t.Error("Cents(12.345) reported exact")
	}
	if got := AmountFromCents(1050).String(); got != "10.50" {
		t.Errorf("AmountFromCents(1050) = %s", got)
	}
	sum := MustAmount("0.10").Add(MustAmount("0.20"))
	if sum.Cmp(MustAmount("0.30")) != 0 {
		t.Errorf("0.10 + 0.20 = %v, want exactly 0.30", sum)
	}
}

func TestMustAmountPanicsOnMalformedLiteral(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("no panic")
		}
	}()
	MustAmount("ten dollars")
}

func TestAmountEncodesInQueries(t *testing.T) {
	min := MustAmount("100")
	v, err := query.Values(struct {
		Min *Amount `url:"min_amount,omitempty"`
		Max *Amount `url:"max_amount,omitempty"`
	}{Min: &min})
	if err != nil {
		t.Fatal(err)
	}
	if got := v.Encode(); got != (url.Values{"min_amount": {"100.00"}}).Encode() {
		t.Errorf("query = %s", got)
	}
}

func TestSplitDecodesNumberAndString(t *testing.T) {
	for in, want := range map[string]Split{`"1.0"`: SplitWhole, `0.5`: SplitHalf, `1`: SplitWhole, `"0.5"`: SplitHalf} {
		var s Split
		if err := json.Unmarshal([]byte(in), &s); err != nil || s != want {
			t.Errorf("Unmarshal(%s) = %v, %v", in, s, err)
		}
	}
	var s Split
	if err := json.Unmarshal([]byte(`"half"`), &s); err == nil {
		t.Error(`Unmarshal("half") succeeded`)
	}
	if b, _ := json.Marshal(SplitWhole); string(b) != "1.0" {
		t.Errorf("Marshal(1) = %s", b)
	}
	if b, _ := json.Marshal(SplitHalf); string(b) != "0.5" {
		t.Errorf("Marshal(0.5) = %s", b)
	}
}

func TestTimestampDecodesEveryFormSeen(t *testing.T) {
	tests := []struct {
		in   string
		want time.Time
	}{
		{`"2019-04-03T11:01:38.880000+00:00"`, time.Date(2019, 4, 3, 11, 1, 38, 880000000, time.UTC)},
		{`"2019-04-03T11:01:38Z"`, time.Date(2019, 4, 3, 11, 1, 38, 0, time.UTC)},
		{`"2019-04-03T13:01:38.1+02:00"`, time.Date(2019, 4, 3, 11, 1, 38, 100000000, time.UTC)},
		{`"1982-03-10T00:00:00"`, time.Date(1982, 3, 10, 0, 0, 0, 0, time.UTC)}, // no offset
		{`"2019-04-03 11:01:38.123456"`, time.Date(2019, 4, 3, 11, 1, 38, 123456000, time.UTC)},
		{`"2019-04-03 13:01:38+02:00"`, time.Date(2019, 4, 3, 11, 1, 38, 0, time.UTC)}, // a space, an offset
		{`"2019-04-03"`, time.Date(2019, 4, 3, 0, 0, 0, 0, time.UTC)},
	}
	for _, tt := range tests {
		var ts Timestamp
		if err := json.Unmarshal([]byte(tt.in), &ts); err != nil {
			t.Errorf("Unmarshal(%s): %v", tt.in, err)
			continue
		}
		if !ts.Equal(tt.want) {
			t.Errorf("Unmarshal(%s) = %v, want %v", tt.in, ts.Time, tt.want)
		}
	}
}

func TestTimestampNeverFailsAResponseOverItsText(t *testing.T) {
	var doc struct {
		A, B Timestamp
		C    string
	}
	if err := json.Unmarshal([]byte(`{"A": "last tuesday", "B": null, "C": "kept"}`), &doc); err != nil {
		t.Fatalf("Unmarshal: %v", err)
	}
	if !doc.A.IsZero() || doc.A.Raw() != "last tuesday" || !doc.B.IsZero() || doc.C != "kept" {
		t.Errorf("decoded %+v", doc)
	}
	var ts Timestamp
	if err := json.Unmarshal([]byte(`12345`), &ts); err == nil {
		t.Error("a number decoded as a timestamp")
	}
}

func TestTimestampEncodes(t *testing.T) {
	b, _ := json.Marshal(struct {
		Due  Timestamp `json:"due,omitzero"`
		When Timestamp `json:"when"`
	}{When: Timestamp{Time: time.Date(2026, 1, 2, 3, 4, 5, 0, time.FixedZone("x", 3600))}})
	if string(b) != `{"when":"2026-01-02T03:04:05+01:00"}` { // the caller's zone is kept
		t.Errorf("Marshal = %s", b)
	}
}

func TestSecondsAndDays(t *testing.T) {
	if Days(3) != 259200 || Days(3).Duration() != 72*time.Hour {
		t.Errorf("Days(3) = %d", Days(3))
	}
}

// decodedAmount decodes an amount as a response carries it, which is the only way to get
// one with sub-cent digits.
func decodedAmount(t *testing.T, s string) Amount {
	t.Helper()
	var a Amount
	if err := json.Unmarshal([]byte(`"`+s+`"`), &a); err != nil {
		t.Fatal(err)
	}
	return a
}

func TestParseAmount(t *testing.T) {
	for in, want := range map[string]string{
		"1000": "1000.00", "1000.5": "1000.50", "1000.50": "1000.50", "1000.500": "1000.50",
		"0": "0.00", "-5": "-5.00", "0.01": "0.01", "007.10": "7.10",
	} {
		a, err := ParseAmount(in)
		if err != nil || a.String() != want {
			t.Errorf("ParseAmount(%q) = %v, %v; want %s", in, a, err, want)
		}
	}
	for _, in := range []string{"12.345", "0.001", "1e3", "1E3", "NaN", "Inf", "-Inf", "Infinity", "+5", ".5", "5.", "",
		" 5", "5 ", "1,000.00", "0x10", "--5", strings.Repeat("9", 100)} {
		if a, err := ParseAmount(in); !errors.Is(err, ErrInvalidAmount) {
			t.Errorf("ParseAmount(%q) = %v, %v; want ErrInvalidAmount", in, a, err)
		}
	}
}

func TestAmountArithmetic(t *testing.T) {
	a, b := MustAmount("10.25"), MustAmount("0.75")
	for _, c := range []struct {
		name string
		got  Amount
		want string
	}{
		{"add", a.Add(b), "11.00"}, {"sub", b.Sub(a), "-9.50"}, {"mul", a.Mul(3), "30.75"},
		{"mul by zero", a.Mul(0), "0.00"}, {"sum", SumAmounts(a, b, a), "21.25"}, {"empty sum", SumAmounts(), "0.00"},
	} {
		if c.got.String() != c.want {
			t.Errorf("%s = %s, want %s", c.name, c.got, c.want)
		}
	}
	if a.Cmp(b) != 1 || b.Cmp(a) != -1 || MustAmount("1.5").Cmp(MustAmount("1.50")) != 0 {
		t.Error("Cmp orders wrongly")
	}
	if !MustAmount("0.00").IsZero() || a.IsZero() || !b.Sub(a).IsNegative() || a.IsNegative() || (Amount{}).IsNegative() {
		t.Error("IsZero or IsNegative wrong")
	}
	if !(Amount{}).IsZero() || (Amount{}).String() != "0.00" {
		t.Errorf("zero value %s", Amount{})
	}
}

// TestAmountDecimalIsACopy: what a caller does with the decimal cannot reach the Amount.
func TestAmountDecimalIsACopy(t *testing.T) {
	a := MustAmount("12.34")
	d := a.Decimal()
	d.Coefficient().SetInt64(99) // Coefficient is itself a copy; try the decimal's own
	_ = d.Add(d)
	if a.String() != "12.34" || d.String() != "12.34" {
		t.Errorf("a = %s, d = %s", a, d)
	}
	if a.Decimal().Cmp(d) != 0 {
		t.Error("Decimal differs from the amount")
	}
}

func TestAmountText(t *testing.T) {
	b, err := MustAmount("7.5").MarshalText()
	if err != nil || string(b) != "7.50" {
		t.Errorf("MarshalText = %s, %v", b, err)
	}
	if _, err := decodedAmount(t, "7.505").MarshalText(); !errors.Is(err, ErrInvalidAmount) {
		t.Errorf("MarshalText(7.505) error %v", err)
	}
	var a Amount
	if err := a.UnmarshalText([]byte("19.99")); err != nil || a.String() != "19.99" {
		t.Errorf("UnmarshalText = %s, %v", a, err)
	}
	if err := a.UnmarshalText([]byte("1e2")); !errors.Is(err, ErrInvalidAmount) || a.String() != "19.99" {
		t.Errorf("UnmarshalText(1e2) = %s, %v; want refused, unchanged", a, err)
	}
}

// TestNegativeAmountsAreRefusedWhereTheAPIRefusesThem: prices and filters are checked
// before anything is sent.
func TestNegativeAmountsAreRefusedWhereTheAPIRefusesThem(t *testing.T) {
	c, _ := setup(t) // any request fails the test
	neg := MustAmount("-1.00")
	_, err := c.Transactions.Create(t.Context(), &CreateTransactionRequest{Items: []ItemInput{{Schedule: []ScheduleInput{{Amount: MustAmount("5")}, {Amount: neg}}}}})
	if !errors.Is(err, ErrInvalidAmount) || !errors.Is(err, ErrInvalidArgument) || !strings.Contains(err.Error(), "items[0].schedule[1].amount") {
		t.Errorf("Create: %v", err)
	}
	if _, err := c.Partner.Transactions(t.Context(), &PartnerTransactionsOptions{MaxAmount: &neg}); !errors.Is(err, ErrInvalidAmount) {
		t.Errorf("Transactions: %v", err)
	}
	if _, err := c.Partner.CreateReport(t.Context(), &PartnerTransactionsOptions{MinAmount: &neg}); !errors.Is(err, ErrInvalidAmount) {
		t.Errorf("CreateReport: %v", err)
	}
}

func TestSubCentQueryAmountIsRefused(t *testing.T) {
	c, mt := setup(t)
	var rec recorder
	mt.RegisterNoResponder(rec.then(respond(200, `{}`)))
	min := decodedAmount(t, "99.994") // only a response can carry sub-cent digits
	_, err := c.Partner.Transactions(context.Background(), &PartnerTransactionsOptions{MinAmount: &min})
	if !errors.Is(err, ErrInvalidAmount) || !errors.Is(err, ErrInvalidArgument) || rec.count() != 0 {
		t.Fatalf("err = %v after %d requests", err, rec.count())
	}
}

// TestAmountDecodesEveryLeadingDigit: a JSON number may start with any digit or a minus
// sign; 9 and 0 are the edges of the digit range.
func TestAmountDecodesEveryLeadingDigit(t *testing.T) {
	for _, lit := range []string{"0.50", "1.00", "5.25", "9.99", "99999.00", "-9.10"} {
		var a Amount
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
		var a Amount
		if err := json.Unmarshal([]byte(`{"a":`+lit+`}`), &struct{ A *Amount }{&a}); err == nil {
			t.Errorf("%s decoded as %s", lit, a)
		}
	}
}

// TestSplitNullLeavesValue: a null split, as a partner listing may send for a fee without
// one, keeps what the field held, as a null amount does.
func TestSplitNullLeavesValue(t *testing.T) {
	s := SplitHalf
	if err := json.Unmarshal([]byte(`null`), &s); err != nil || s != SplitHalf {
		t.Errorf("null: %v, split %v; want no error and 0.5 kept", err, s)
	}
	var fee struct {
		Split Split `json:"split"`
	}
	fee.Split = SplitWhole
	if err := json.Unmarshal([]byte(`{"split": null}`), &fee); err != nil || fee.Split != SplitWhole {
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
			var a Amount
			err := json.Unmarshal([]byte(form), &a)
			if (err == nil) != tc.ok {
				t.Errorf("JSON %.24s…: %v; want ok %v", form, err, tc.ok)
			}
			if err != nil && !errors.Is(err, ErrInvalidAmount) {
				t.Errorf("JSON %.24s…: %v is not ErrInvalidAmount", form, err)
			}
		}
	}
	// ParseAmount takes what it can give back: a literal of at most 64 characters whose
	// value, written with its sign and two decimals, fits 64 too: 60 digits before the point.
	widest := "-" + strings.Repeat("9", 60) + ".99"
	for _, lit := range []string{widest, strings.Repeat("0", 60) + "1.50"} {
		a, err := ParseAmount(lit)
		text, _ := a.MarshalText()
		if back, berr := ParseAmount(string(text)); err != nil || berr != nil || back.Cmp(a) != 0 {
			t.Errorf("ParseAmount(%q) = %s, %v; parsed back: %v", lit, text, err, berr)
		}
	}
	for _, lit := range []string{tooLong, strings.Repeat("0", 61) + "1.50", "1" + strings.Repeat("0", 60), long} {
		if _, err := ParseAmount(lit); !errors.Is(err, ErrInvalidAmount) {
			t.Errorf("ParseAmount(%q): %v, want ErrInvalidAmount", lit, err)
		}
	}
	// Space around a string's number is not part of the literal.
	var a Amount
	if err := json.Unmarshal([]byte(`" `+long+` "`), &a); err != nil {
		t.Errorf("64 digits with spaces around: %v", err)
	}
}

// TestAmountErrorsStayShort: the message of a refused literal quotes at most its first 64
// characters, so an error log line cannot be flooded by a response.
func TestAmountErrorsStayShort(t *testing.T) {
	huge := strings.Repeat("9", 10_000)
	for _, in := range []string{huge, `"` + huge + `"`, "[" + huge + "]"} {
		var a Amount
		err := json.Unmarshal([]byte(`{"a":`+in+`}`), &struct{ A *Amount }{&a})
		if err == nil {
			t.Fatalf("a %d-character literal decoded", len(in))
		}
		if len(err.Error()) > 200 {
			t.Errorf("error of %d characters: %.80s…", len(err.Error()), err)
		}
	}
	_, err := ParseAmount(huge)
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
		var doc struct{ D Timestamp }
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
		var a Amount
		if err := a.UnmarshalJSON([]byte(in)); err == nil {
			t.Errorf("Amount %q decoded as %s", in, a)
		}
		var s Split
		if err := s.UnmarshalJSON([]byte(in)); err == nil {
			t.Errorf("Split %q decoded as %v", in, s)
		}
	}
	for _, in := range []string{`"2024-01-02`, `2024-01-02"`, `"""`, "\"\x01\"", `x"`} {
		var ts Timestamp
		if err := ts.UnmarshalJSON([]byte(in)); err == nil {
			t.Errorf("Timestamp %q decoded as %v (raw %q)", in, ts.Time, ts.Raw())
		}
	}
}

// TestAmountErrorQuotesAShortLiteralWhole: a refused literal of up to 64 characters is
// quoted whole, with no ellipsis claiming something was cut.
func TestAmountErrorQuotesAShortLiteralWhole(t *testing.T) {
	lit := "1" + strings.Repeat("0", 62) + "x" // 64 characters
	_, err := ParseAmount(lit)
	if err == nil || !strings.Contains(err.Error(), `"`+lit+`"`) || strings.Contains(err.Error(), "…") {
		t.Errorf("ParseAmount(%d characters): %v", len(lit), err)
	}
	var a Amount
	err = a.UnmarshalJSON([]byte(lit))
	if err == nil || !strings.Contains(err.Error(), lit) || strings.Contains(err.Error(), "…") {
		t.Errorf("UnmarshalJSON(%d characters): %v", len(lit), err)
	}
}

// TestUnmarshalJSONTakesSpaceAroundAToken: JSON allows white space around a value, and a
// decoder calling UnmarshalJSON may pass it along.
func TestUnmarshalJSONTakesSpaceAroundAToken(t *testing.T) {
	for _, in := range []string{" 12.50", "12.50\n", "\t\"12.50\" "} {
		var a Amount
		if err := a.UnmarshalJSON([]byte(in)); err != nil || a.String() != "12.50" {
			t.Errorf("Amount %q: %v, %s", in, err, a)
		}
		var s Split
		if err := s.UnmarshalJSON([]byte(strings.Replace(in, "12.50", "0.5", 1))); err != nil || s != SplitHalf {
			t.Errorf("Split %q: %v, %v", in, err, s)
		}
	}
	a, s := MustAmount("3.00"), SplitWhole
	if err := a.UnmarshalJSON([]byte(" null ")); err != nil || a.String() != "3.00" {
		t.Errorf("Amount \" null \": %v, %s", err, a)
	}
	if err := s.UnmarshalJSON([]byte(" null\n")); err != nil || s != SplitWhole {
		t.Errorf("Split \" null\": %v, %v", err, s)
	}
}

// TestTimestampNullBothWays: the zero time encodes as null, and null decodes to the zero
// time whatever the field held before (a due date the server has since removed).
func TestTimestampNullBothWays(t *testing.T) {
	b, err := json.Marshal(struct{ Due Timestamp }{})
	if err != nil || string(b) != `{"Due":null}` {
		t.Errorf("zero time: %s, %v; want null", b, err)
	}
	ts, err := ParseTimestamp("2026-01-02T03:04:05Z")
	if err != nil {
		t.Fatal(err)
	}
	doc := struct{ Due Timestamp }{ts}
	if err := json.Unmarshal([]byte(`{"Due": null}`), &doc); err != nil || !doc.Due.IsZero() || doc.Due.Raw() != "" {
		t.Errorf("null over %v: %v, %v (raw %q); want the zero time", ts.Time, err, doc.Due.Time, doc.Due.Raw())
	}
}

// TestNonNumberNamedInItsError: an amount or a split that is no number (true, an object)
// fails with an error that names what was there, so a caller can tell which field of
// which response broke.
func TestNonNumberNamedInItsError(t *testing.T) {
	for _, in := range []string{`true`, `{"x":1}`} {
		var a Amount
		if err := a.UnmarshalJSON([]byte(in)); err == nil || !errors.Is(err, ErrInvalidAmount) || !strings.Contains(err.Error(), in) {
			t.Errorf("Amount from %s: %v; want ErrInvalidAmount naming it", in, err)
		}
		var s Split
		if err := s.UnmarshalJSON([]byte(in)); err == nil || !strings.Contains(err.Error(), in) {
			t.Errorf("Split from %s: %v; want an error naming it", in, err)
		}
	}
}

// TestAmountLiteralLongerThan64Refused: ParseAmount refuses a literal longer than 64
// characters whatever its value (leading zeros and 1000.50), so that no input makes the
// parser work on text of any size; 64 characters are still read.
func TestAmountLiteralLongerThan64Refused(t *testing.T) {
	long := strings.Repeat("0", 58) + "1000.50"
	if _, err := ParseAmount(long); !errors.Is(err, ErrInvalidAmount) {
		t.Errorf("ParseAmount of %d characters: %v; want ErrInvalidAmount", len(long), err)
	}
	if a, err := ParseAmount(long[1:]); err != nil || a.String() != "1000.50" {
		t.Errorf("ParseAmount of %d characters = %v, %v; want 1000.50", len(long[1:]), a, err)
	}
}

package escrow

import (
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

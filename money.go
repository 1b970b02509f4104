package escrow

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/shopspring/decimal"
)

// Amount is an exact decimal sum of money. It is a closed value: build one with
// [ParseAmount], [MustAmount] or [AmountFromCents], do arithmetic with its methods, and
// compare with [Amount.Cmp] (not ==, which compares representations). The zero value is 0.00.
//
// On requests an Amount is encoded as a JSON number with two decimals (1000.00); from
// responses it is decoded from a number (210.0) or a decimal string ("1000.00"), as the API
// sends both. An Amount never passes through float64.
//
// Negative amounts are values like any other (Sub may produce one), but the API refuses
// them as prices and filters: [TransactionsService.Create] refuses a negative schedule
// amount, and the partner listing a negative MinAmount or MaxAmount, before sending.
type Amount struct{ d decimal.Decimal }

// Bounds that keep a hostile or broken response from making an Amount expensive to format:
// decimal happily parses "1e9999", whose fixed-point string has ten thousand digits.
const (
	maxAmountLiteral  = 64
	maxAmountExponent = 30
	// maxAmountWholeDigits keeps what ParseAmount accepts printable within maxAmountLiteral
	// once written with its sign and two decimals, so that the text an Amount marshals to
	// parses back.
	maxAmountWholeDigits = maxAmountLiteral - len("-.00")
)

// ErrInvalidAmount reports a value that cannot be a sum of money: not a decimal number, too
// large, more precise than cents, or negative where the API refuses it.
var ErrInvalidAmount = errors.New("escrow: invalid amount")

// ParseAmount parses a decimal sum written as digits with an optional sign and at most two
// decimals that are not zero: "1000", "-5", "1000.5", "1000.50" and "1000.500" parse;
// "12.345", "1e3", "NaN", "Inf", "+5", ".5" and "" do not, nor does a literal longer than
// 64 characters or with more than 60 digits before the point. Every refusal matches
// [ErrInvalidAmount].
func ParseAmount(s string) (Amount, error) {
	if !plainDecimal(s) {
		return Amount{}, fmt.Errorf("%w: %q is not a decimal number such as 1000.50", ErrInvalidAmount, truncate(s, maxAmountLiteral))
	}
	if whole, _, _ := strings.Cut(strings.TrimLeft(strings.TrimPrefix(s, "-"), "0"), "."); len(whole) > maxAmountWholeDigits {
		return Amount{}, fmt.Errorf("%w: %q has more than %d digits before the point", ErrInvalidAmount, truncate(s, maxAmountLiteral), maxAmountWholeDigits)
	}
	a, err := parseLenient(s)
	if err != nil {
		return Amount{}, err
	}
	if !a.wholeCents() {
		return Amount{}, fmt.Errorf("%w: %q has more than two decimals", ErrInvalidAmount, s)
	}
	a.d = a.d.Round(2) // "1000.500" is 1000.50: trailing zeros do not make sub-cent digits
	return a, nil
}

// plainDecimal reports whether s is -?digits(.digits)?, within the length bound.
func plainDecimal(s string) bool {
	if len(s) == 0 || len(s) > maxAmountLiteral {
		return false
	}
	s = strings.TrimPrefix(s, "-")
	whole, frac, hasPoint := strings.Cut(s, ".")
	digits := func(p string) bool { return p != "" && strings.Trim(p, "0123456789") == "" }
	return digits(whole) && (!hasPoint || digits(frac))
}

// parseLenient parses any decimal form a response may carry (210.0, "1000.00", 1e3),
// within bounds on length and exponent.
func parseLenient(s string) (Amount, error) {
	s = strings.TrimSpace(s)
	if s == "" || len(s) > maxAmountLiteral {
		return Amount{}, fmt.Errorf("%w: %q", ErrInvalidAmount, truncate(s, maxAmountLiteral))
	}
	d, err := decimal.NewFromString(s)
	if err != nil || d.Exponent() > maxAmountExponent || d.Exponent() < -maxAmountExponent {
		return Amount{}, fmt.Errorf("%w: %q", ErrInvalidAmount, s)
	}
	return Amount{d}, nil
}

// MustAmount is like [ParseAmount] but panics on a malformed literal. It is meant for
// constants in source code, as regexp.MustCompile is, never for input.
func MustAmount(s string) Amount {
	a, err := ParseAmount(s)
	if err != nil {
		panic(err)
	}
	return a
}

// AmountFromCents returns the amount of the given number of cents: AmountFromCents(1050) is 10.50.
func AmountFromCents(cents int64) Amount { return Amount{decimal.New(cents, -2)} }

// SumAmounts adds amounts up; it is 0.00 for none.
func SumAmounts(amounts ...Amount) Amount {
	var sum decimal.Decimal
	for _, a := range amounts {
		sum = sum.Add(a.d)
	}
	return Amount{sum}
}

// Add returns a + b.
func (a Amount) Add(b Amount) Amount { return Amount{a.d.Add(b.d)} }

// Sub returns a - b.
func (a Amount) Sub(b Amount) Amount { return Amount{a.d.Sub(b.d)} }

// Mul returns a × n, such as a unit price times a quantity.
func (a Amount) Mul(n int64) Amount { return Amount{a.d.Mul(decimal.NewFromInt(n))} }

// Cmp compares a and b: -1 if a < b, 0 if they are equal (1.5 equals 1.50), +1 if a > b.
func (a Amount) Cmp(b Amount) int { return a.d.Cmp(b.d) }

// IsZero reports whether a is 0.
func (a Amount) IsZero() bool { return a.d.IsZero() }

// IsNegative reports whether a is below 0.
func (a Amount) IsNegative() bool { return a.d.IsNegative() }

// Decimal returns the amount as a shopspring decimal, for arithmetic this type does not
// offer. It is a copy: nothing done to it changes a.
func (a Amount) Decimal() decimal.Decimal {
	return decimal.NewFromBigInt(a.d.Coefficient(), a.d.Exponent())
}

// String formats the amount with two decimals, or more when it has sub-cent digits (only a
// response can carry them), so that nothing the server sent is hidden by rounding.
func (a Amount) String() string {
	places := int32(2)
	if e := a.d.Exponent(); -e > places {
		places = -e
	}
	return a.d.StringFixed(places)
}

// Format makes fmt's %v and %s use [Amount.String]; other verbs (%f with a precision, say)
// format the decimal.
func (a Amount) Format(f fmt.State, verb rune) {
	if verb == 'v' || verb == 's' {
		fmt.Fprintf(f, fmt.FormatString(f, verb), a.String())
		return
	}
	a.d.Format(f, verb)
}

// Cents returns the amount in whole cents and whether it was exact (no sub-cent digits).
func (a Amount) Cents() (int64, bool) {
	c := a.d.Shift(2)
	return c.IntPart(), c.Equal(c.Truncate(0))
}

// wholeCents reports whether the amount has no sub-cent digits.
func (a Amount) wholeCents() bool { return a.d.Equal(a.d.Round(2)) }

// MarshalText writes the amount with exactly two decimals ("1000.00"). An amount with
// sub-cent digits is refused with [ErrInvalidAmount] rather than silently rounded.
func (a Amount) MarshalText() ([]byte, error) {
	if !a.wholeCents() {
		return nil, fmt.Errorf("%w: %s has more than two decimals", ErrInvalidAmount, a.String())
	}
	return []byte(a.d.StringFixed(2)), nil
}

// UnmarshalText parses text as [ParseAmount] does: at most two decimals, no exponent.
func (a *Amount) UnmarshalText(b []byte) error {
	v, err := ParseAmount(string(b))
	if err != nil {
		return err
	}
	*a = v
	return nil
}

// MarshalJSON encodes the amount as a JSON number with two decimals, refusing sub-cent
// digits as MarshalText does.
func (a Amount) MarshalJSON() ([]byte, error) { return a.MarshalText() }

// UnmarshalJSON decodes a JSON number or a decimal string in any form the API sends
// (1000, 210.0, "1000.00"); a response's sub-cent digits are kept, never rounded away.
// null leaves the amount unchanged.
func (a *Amount) UnmarshalJSON(b []byte) error {
	lit, isNull, err := numericLiteral(b)
	if err != nil || isNull {
		return err
	}
	v, err := parseLenient(lit)
	if err != nil {
		return err
	}
	*a = v
	return nil
}

// EncodeValues encodes the amount in a query string with two decimals (go-querystring).
// Amounts in queries are filters, which the API takes as positive: a negative one is
// refused, as are sub-cent digits.
func (a Amount) EncodeValues(key string, v *url.Values) error {
	if a.IsNegative() {
		return fmt.Errorf("%w: %s is negative", ErrInvalidAmount, a)
	}
	b, err := a.MarshalText()
	if err != nil {
		return err
	}
	v.Set(key, string(b))
	return nil
}

// numericLiteral returns the number inside a JSON number or string token.
func numericLiteral(b []byte) (lit string, isNull bool, err error) {
	b = bytes.TrimSpace(b)
	switch {
	case len(b) == 0:
		return "", false, fmt.Errorf("%w: empty", ErrInvalidAmount)
	case string(b) == "null":
		return "", true, nil
	case b[0] == '"':
		s, err := jsonString(b)
		if err != nil {
			return "", false, fmt.Errorf("%w: %v", ErrInvalidAmount, err)
		}
		return s, false, nil
	case b[0] == '-' || (b[0] >= '0' && b[0] <= '9'):
		return string(b), false, nil
	}
	return "", false, fmt.Errorf("%w: %s is not a number", ErrInvalidAmount, truncate(string(b), maxAmountLiteral))
}

// Split is the share of the escrow fee one payer carries: 0.5 or 1. The API takes it as a
// number and returns it as a string ("1.0") in partner listings; both decode.
type Split float64

// The split values the API allows.
const (
	SplitHalf  Split = 0.5
	SplitWhole Split = 1
)

// MarshalJSON encodes the split as a JSON number with at least one decimal.
func (s Split) MarshalJSON() ([]byte, error) {
	return strconv.AppendFloat(nil, float64(s), 'f', 1, 64), nil
}

// UnmarshalJSON decodes a number or a numeric string. null leaves the split unchanged.
func (s *Split) UnmarshalJSON(b []byte) error {
	lit, isNull, err := numericLiteral(b)
	if err != nil || isNull {
		return err
	}
	f, err := strconv.ParseFloat(strings.TrimSpace(lit), 64)
	if err != nil {
		return fmt.Errorf("escrow: invalid split %q", truncate(lit, maxAmountLiteral))
	}
	*s = Split(f)
	return nil
}

// Seconds is a duration as the API counts it: whole seconds. Inspection periods are Seconds
// and must be whole days; use [Days] to build one.
type Seconds int64

// Days returns n days in seconds.
func Days(n int) Seconds { return Seconds(n) * 86400 }

// Duration converts to a time.Duration.
func (s Seconds) Duration() time.Duration { return time.Duration(s) * time.Second }

// Timestamp is a point in time as the API sends it. It decodes RFC 3339 with or without a
// zone offset (no offset means UTC), with any fraction of a second, a bare date, and null.
// A string in none of those forms decodes to the zero time with [Timestamp.Raw] keeping the
// text: one odd timestamp never fails a whole response.
type Timestamp struct {
	time.Time
	raw string
}

// timestampLayouts are tried in order; the fractional-second element accepts any precision.
var timestampLayouts = [...]string{
	time.RFC3339Nano,
	"2006-01-02T15:04:05.999999999",
	"2006-01-02 15:04:05.999999999Z07:00",
	"2006-01-02 15:04:05.999999999",
	"2006-01-02",
}

// ParseTimestamp parses s in any of the forms [Timestamp] accepts.
func ParseTimestamp(s string) (Timestamp, error) {
	for _, layout := range timestampLayouts {
		if t, err := time.Parse(layout, s); err == nil {
			return Timestamp{Time: t, raw: s}, nil
		}
	}
	return Timestamp{raw: s}, fmt.Errorf("escrow: unrecognised timestamp %q", truncate(s, 64))
}

// Raw returns the text the timestamp was decoded from, or "" when it was built in Go.
func (t Timestamp) Raw() string { return t.raw }

// MarshalJSON encodes RFC 3339 with nanoseconds in the time's own zone, so that a due date
// at midnight local time keeps its calendar day; null for the zero time.
func (t Timestamp) MarshalJSON() ([]byte, error) {
	if t.IsZero() {
		return []byte("null"), nil
	}
	return json.Marshal(t.Format(time.RFC3339Nano))
}

// UnmarshalJSON decodes a string or null. Only a JSON value that is neither is an error.
func (t *Timestamp) UnmarshalJSON(b []byte) error {
	if string(bytes.TrimSpace(b)) == "null" {
		*t = Timestamp{}
		return nil
	}
	s, err := jsonString(bytes.TrimSpace(b))
	if err != nil {
		return fmt.Errorf("escrow: timestamp is not a string: %s", truncate(string(b), 64))
	}
	*t, _ = ParseTimestamp(s) // unknown forms keep the raw text; see the type's doc
	return nil
}

// jsonString decodes a JSON string token. Amounts and timestamps are plain ASCII, which
// is read directly; anything else (escapes, other bytes) goes through encoding/json, which
// a full decode per field would otherwise cost every time.
func jsonString(b []byte) (string, error) {
	if len(b) >= 2 && b[0] == '"' && b[len(b)-1] == '"' && plainASCII(b[1:len(b)-1]) {
		return string(b[1 : len(b)-1]), nil
	}
	var s string
	err := json.Unmarshal(b, &s)
	return s, err
}

// plainASCII reports whether the inside of a JSON string token reads as it is: printable
// ASCII with no quote and no escape.
func plainASCII(inner []byte) bool {
	for _, c := range inner {
		if c < 0x20 || c > 0x7e || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}

// truncate shortens s for inclusion in an error message.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

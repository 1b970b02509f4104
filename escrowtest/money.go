package escrowtest

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// cents is an amount of money in hundredths of the currency unit. Every amount the
// emulator stores or computes is a cents value, so sums, fees and splits are exact.
type cents int64

// maxAmount bounds every amount a request may give, so that sums and fee arithmetic
// stay far from int64 overflow.
const maxAmount cents = 1_000_000_000_00

// String renders the amount the way the API returns money: a decimal string with two
// decimals ("1000.00").
func (c cents) String() string {
	sign := ""
	if c < 0 {
		sign, c = "-", -c
	}
	return fmt.Sprintf("%s%d.%02d", sign, c/100, c%100)
}

// number is an amount rendered as a JSON number with two decimals (210.00), the form the
// API uses for payment and disbursement totals.
type number cents

// MarshalJSON renders the amount as a JSON number.
func (n number) MarshalJSON() ([]byte, error) { return []byte(cents(n).String()), nil }

// decimalPattern is the text of a decimal number as JSON writes it: digits, an optional
// fraction and an optional short exponent. The exponent is limited to three digits so that
// "1e999999999" cannot make the emulator build a billion-digit number.
var decimalPattern = regexp.MustCompile(`^(-?)(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d{1,3}))?$`)

// wholeCents drops the zeros after the cents of digits × 10^shift cents, refusing a
// value with more than two decimal places; the shift it returns is not negative.
func wholeCents(digits string, shift int) (string, int, error) {
	if shift >= 0 {
		return digits, shift, nil
	}
	cut := len(digits) + shift
	if cut <= 0 || strings.Trim(digits[cut:], "0") != "" {
		return "", 0, errors.New("must have at most two decimal places")
	}
	return digits[:cut], 0, nil
}

// parseCents reads a positive amount with at most two significant decimals, given as the
// text of a JSON number or of a numeric string. Trailing zeros do not count as decimals:
// 1000.000 is 1000.00, while 0.1+0.2 written as 0.30000000000000004 is refused.
func parseCents(text string) (cents, error) {
	digits, shift, err := positiveDecimal(text)
	if err != nil {
		return 0, err
	}
	digits, shift, err = wholeCents(digits, shift)
	if err != nil {
		return 0, err
	}
	return centsOf(digits, shift)
}

// positiveDecimal reads text as a positive decimal number: its value is digits × 10^shift
// cents, digits without leading zeros.
func positiveDecimal(text string) (digits string, shift int, err error) {
	m := decimalPattern.FindStringSubmatch(text)
	if len(text) > 64 || m == nil {
		return "", 0, errors.New("must be a number such as 1000.00, given as a JSON number or a numeric string")
	}
	exp := 0
	if m[4] != "" {
		exp, _ = strconv.Atoi(m[4]) // the pattern guarantees a small integer
	}
	digits = strings.TrimLeft(m[2]+m[3], "0")
	if digits == "" || m[1] == "-" {
		return "", 0, errors.New("must be greater than 0")
	}
	return digits, exp - len(m[3]) + 2, nil
}

// centsOf is digits × 10^shift cents, refusing more than maxAmount.
func centsOf(digits string, shift int) (cents, error) {
	if len(digits)+shift > len(strconv.FormatInt(int64(maxAmount), 10)) {
		return 0, fmt.Errorf("must be at most %s", maxAmount)
	}
	n, _ := strconv.ParseInt(digits+strings.Repeat("0", shift), 10, 64)
	if cents(n) > maxAmount {
		return 0, fmt.Errorf("must be at most %s", maxAmount)
	}
	return cents(n), nil
}

// applyRate returns c × num / den rounded half up to the cent. Callers keep c below
// maxAmount and num below 10^7, so the product fits in an int64.
func applyRate(c cents, num, den int64) cents {
	return cents((int64(c)*num + den/2) / den)
}

package money

import (
	"fmt"
	"sort"
	"strings"

	"github.com/loyalty-platform/platform/shared/platform/apierr"
)

// Currency is an ISO 4217 currency and the number of its minor-unit digits
// (GBP 2: pence; JPY 0; BHD 3: fils).
type Currency struct {
	Code   string
	Digits int
}

// GBP is the currency of a tenant that set none.
var GBP = Currency{Code: "GBP", Digits: 2}

// digits are the minor-unit digits of the currencies a tenant may set
// (ISO 4217). A code not listed here is refused when set.
var digits = map[string]int{
	// Two digits.
	"GBP": 2, "EUR": 2, "USD": 2, "CAD": 2, "AUD": 2, "NZD": 2, "CHF": 2,
	"SEK": 2, "NOK": 2, "DKK": 2, "PLN": 2, "CZK": 2, "HUF": 2, "RON": 2,
	"BGN": 2, "TRY": 2, "ILS": 2, "AED": 2, "SAR": 2, "QAR": 2, "INR": 2,
	"CNY": 2, "HKD": 2, "SGD": 2, "MYR": 2, "THB": 2, "PHP": 2, "IDR": 2,
	"TWD": 2, "ZAR": 2, "MXN": 2, "BRL": 2, "ARS": 2, "COP": 2, "PEN": 2,
	"EGP": 2, "NGN": 2, "KES": 2, "MAD": 2,
	// No minor unit.
	"JPY": 0, "KRW": 0, "CLP": 0, "ISK": 0, "VND": 0, "UGX": 0, "XOF": 0, "XAF": 0,
	// Three digits.
	"BHD": 3, "KWD": 3, "OMR": 3, "JOD": 3, "TND": 3, "LYD": 3, "IQD": 3,
}

// Lookup returns the currency of an ISO 4217 code the platform knows.
func Lookup(code string) (Currency, bool) {
	d, ok := digits[code]
	return Currency{Code: code, Digits: d}, ok
}

// Codes returns the known currency codes, sorted.
func Codes() []string {
	out := make([]string, 0, len(digits))
	for c := range digits {
		out = append(out, c)
	}
	sort.Strings(out)
	return out
}

// Of returns the currency of a tenant's setting: GBP when empty. An
// unknown code (settings are validated when set, so only a corrupt item
// has one) is an error.
func Of(code string) (Currency, error) {
	if code == "" {
		return GBP, nil
	}
	c, ok := Lookup(code)
	if !ok {
		return Currency{}, fmt.Errorf("unknown currency %q", code)
	}
	return c, nil
}

// ValidateCode checks a currency setting (field names it in the error): an
// ISO 4217 code the platform knows, or empty (GBP).
func ValidateCode(field, code string) error {
	if code == "" {
		return nil
	}
	if _, ok := Lookup(code); !ok {
		return apierr.Invalid(field, "must be an ISO 4217 currency code the platform knows (such as GBP, EUR, USD, JPY, BHD), not %q", clip(code))
	}
	return nil
}

func clip(s string) string {
	if len(s) > 16 {
		s = s[:16]
	}
	return strings.ToValidUTF8(s, "")
}

// Amount returns a, exact, with exactly the currency's digits (12.5 in GBP
// is 12.50, 1250 pence). An amount with more decimal places than the
// currency has, or one that does not fit, is VALIDATION_FAILED naming
// field: "totalPrice: at most 2 decimal places (GBP)".
func (c Currency) Amount(field string, a Amount) (Amount, error) {
	out, err := a.In(c)
	switch {
	case err == nil:
		return out, nil
	case err == ErrPrecision && c.Digits == 0:
		return Amount{}, apierr.Invalid(field, "must be a whole amount: %s has no minor unit", c.Code)
	case err == ErrPrecision:
		return Amount{}, apierr.Invalid(field, "at most %d decimal places (%s)", c.Digits, c.Code)
	default:
		return Amount{}, apierr.Invalid(field, "is too large")
	}
}

// Minor returns units minor units of the currency (150 in GBP is 1.50).
func (c Currency) Minor(units int64) Amount { return Amount{units: units, scale: uint8(c.Digits)} }

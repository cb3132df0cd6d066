// Package money is exact money: an Amount is an integer count of
// 10^-scale units (int64), so 0.1 + 0.2 is 0.3 and ten payments of 0.10
// are 1.00, never a float64's nearest binary fraction.
//
// The scale of an amount a client sends is the decimal places it wrote
// (trailing zeros dropped); Currency.Amount then makes it exactly the
// tenant currency's minor-unit digits, refusing more places than the
// currency has. An amount read back from DynamoDB keeps the places it was
// stored with (so an item an older version wrote with more places still
// reads exactly).
//
// On the wire an amount is a JSON number, written exactly and as short as
// it goes: 12.50 is written 12.5, 100.00 is 100 (the text a float64 gave
// before, so the contract does not change). In DynamoDB it is an N
// attribute holding the same decimal text; DynamoDB's number arithmetic
// (ADD) is exact decimal, so a balance changed with ADD stays exact.
//
// Arithmetic checks overflow: an amount never silently wraps.
package money

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/big"
	"math/bits"
	"reflect"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// MaxScale is the most decimal places an Amount holds.
const MaxScale = 18

// Errors of parsing and arithmetic.
var (
	// ErrSyntax: the text is not a JSON number.
	ErrSyntax = errors.New("money: not a decimal number")
	// ErrPrecision: more decimal places than allowed (MaxScale, or the
	// currency's digits).
	ErrPrecision = errors.New("money: too many decimal places")
	// ErrRange: the amount does not fit (an int64 count of its units).
	ErrRange = errors.New("money: amount out of range")
)

// Amount is an exact decimal amount: units × 10^-scale. The zero value is
// 0. An Amount decoded from JSON that cannot be held exactly (1e-100,
// 1e400) is kept as invalid, so that validation names its field: Valid
// and Currency.Amount report it, and it can be neither stored nor written.
type Amount struct {
	units int64
	scale uint8
	bad   uint8 // 0, or why the JSON number it was decoded from cannot be held
}

const (
	badPrecision = 1
	badRange     = 2
)

var pow10 [19]int64

func init() {
	pow10[0] = 1
	for i := 1; i < len(pow10); i++ {
		pow10[i] = pow10[i-1] * 10
	}
}

// Parse reads a JSON number exactly ("12.50", "-3", "1e2", "0.000001").
// It fails with ErrSyntax for anything else, ErrPrecision for more than
// MaxScale decimal places (after trailing zeros) and ErrRange for an
// amount beyond an int64 of its units.
func Parse(s string) (Amount, error) {
	neg, coef, exp, ok := scan(s)
	if !ok {
		return Amount{}, ErrSyntax
	}
	return fromParts(neg, coef, exp)
}

// MustParse is Parse for constants and tests; it panics on an error.
func MustParse(s string) Amount {
	a, err := Parse(s)
	if err != nil {
		panic(fmt.Sprintf("money.MustParse(%q): %v", s, err))
	}
	return a
}

// scan splits a JSON number into its sign, its significant digits (no
// leading or trailing zeros; "" for zero) and the power of ten they are
// multiplied by. An exponent beyond ±1e6 is clamped (a value that far
// out is refused anyway).
func scan(s string) (neg bool, coef string, exp int, ok bool) {
	i := 0
	if i < len(s) && s[i] == '-' {
		neg, i = true, i+1
	}
	start := i
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	intPart := s[start:i]
	if intPart == "" || len(intPart) > 1 && intPart[0] == '0' {
		return false, "", 0, false
	}
	frac := ""
	if i < len(s) && s[i] == '.' {
		i++
		fs := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		if frac = s[fs:i]; frac == "" {
			return false, "", 0, false
		}
	}
	e := 0
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		eneg := false
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			eneg, i = s[i] == '-', i+1
		}
		es := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			if e < 1_000_000 {
				e = e*10 + int(s[i]-'0')
			}
			i++
		}
		if i == es {
			return false, "", 0, false
		}
		if eneg {
			e = -e
		}
	}
	if i != len(s) {
		return false, "", 0, false
	}
	digits := strings.TrimLeft(intPart+frac, "0")
	trimmed := strings.TrimRight(digits, "0")
	exp = e - len(frac) + len(digits) - len(trimmed)
	return neg, trimmed, exp, true
}

// fromParts makes the amount (-1)^neg × coef × 10^exp.
func fromParts(neg bool, coef string, exp int) (Amount, error) {
	if coef == "" {
		return Amount{}, nil
	}
	scale := 0
	if exp < 0 {
		scale = -exp
		if scale > MaxScale {
			return Amount{}, ErrPrecision
		}
		exp = 0
	}
	if len(coef)+exp > 19 {
		return Amount{}, ErrRange
	}
	u, err := strconv.ParseUint(coef, 10, 64)
	if err != nil || u > math.MaxInt64 {
		return Amount{}, ErrRange
	}
	v := int64(u)
	for ; exp > 0; exp-- {
		if v > math.MaxInt64/10 {
			return Amount{}, ErrRange
		}
		v *= 10
	}
	if neg {
		v = -v
	}
	return Amount{units: v, scale: uint8(scale)}, nil
}

// Valid reports why an amount decoded from JSON cannot be held exactly
// (ErrPrecision, ErrRange), or nil.
func (a Amount) Valid() error {
	switch a.bad {
	case badPrecision:
		return ErrPrecision
	case badRange:
		return ErrRange
	}
	return nil
}

// Units and Scale return the amount as units × 10^-scale.
func (a Amount) Units() int64 { return a.units }

// Scale returns the amount's decimal places (see Units).
func (a Amount) Scale() int { return int(a.scale) }

// Sign returns -1, 0 or +1.
func (a Amount) Sign() int {
	switch {
	case a.units < 0:
		return -1
	case a.units > 0:
		return 1
	}
	return 0
}

// IsZero reports whether the amount is 0.
func (a Amount) IsZero() bool { return a.units == 0 }

// Neg returns -a. The one amount whose negation does not fit (units
// math.MinInt64) cannot be made by Parse or the arithmetic here.
func (a Amount) Neg() Amount { a.units = -a.units; return a }

// rescale returns a with scale s >= a.scale, exactly.
func (a Amount) rescale(s uint8) (Amount, error) {
	if s < a.scale {
		return Amount{}, ErrPrecision
	}
	if s > MaxScale {
		return Amount{}, ErrRange
	}
	m := pow10[s-a.scale]
	hi, lo := bits.Mul64(uint64(abs(a.units)), uint64(m))
	if hi != 0 || lo > math.MaxInt64 {
		return Amount{}, ErrRange
	}
	v := int64(lo)
	if a.units < 0 {
		v = -v
	}
	return Amount{units: v, scale: s}, nil
}

func abs(v int64) int64 {
	if v < 0 {
		return -v
	}
	return v
}

// In returns a with exactly the currency's digits: ErrPrecision when it
// has more decimal places (12.345 in GBP), ErrRange when it does not fit.
func (a Amount) In(c Currency) (Amount, error) {
	if err := a.Valid(); err != nil {
		return Amount{}, err
	}
	d := uint8(c.Digits)
	if a.scale > d {
		// Trailing zeros may be dropped: 1.50 at scale 3 (1500) is 1.50.
		t := a.trim()
		if t.scale > d {
			return Amount{}, ErrPrecision
		}
		a = t
	}
	return a.rescale(d)
}

// trim drops the trailing zeros of the units.
func (a Amount) trim() Amount {
	for a.scale > 0 && a.units%10 == 0 {
		a.units /= 10
		a.scale--
	}
	return a
}

// align returns a and b at the same scale (the larger of theirs).
func align(a, b Amount) (Amount, Amount, error) {
	if err := errors.Join(a.Valid(), b.Valid()); err != nil {
		return Amount{}, Amount{}, err
	}
	if a.scale == b.scale {
		return a, b, nil
	}
	if a.scale < b.scale {
		x, err := a.rescale(b.scale)
		return x, b, err
	}
	y, err := b.rescale(a.scale)
	return a, y, err
}

// Add returns a + b exactly, or ErrRange when it does not fit.
func (a Amount) Add(b Amount) (Amount, error) {
	x, y, err := align(a, b)
	if err != nil {
		return Amount{}, err
	}
	s := x.units + y.units
	if (x.units > 0 && y.units > 0 && s < 0) || (x.units < 0 && y.units < 0 && s >= 0) || s == math.MinInt64 {
		return Amount{}, ErrRange
	}
	return Amount{units: s, scale: x.scale}, nil
}

// Sub returns a - b exactly, or ErrRange when it does not fit.
func (a Amount) Sub(b Amount) (Amount, error) { return a.Add(b.Neg()) }

// rat returns a as a fraction.
func (a Amount) rat() *big.Rat {
	return new(big.Rat).SetFrac(big.NewInt(a.units), big.NewInt(pow10[a.scale]))
}

// Cmp returns -1, 0 or +1 as a is less than, equal to or greater than b.
func (a Amount) Cmp(b Amount) int {
	if x, y, err := align(a, b); err == nil {
		switch {
		case x.units < y.units:
			return -1
		case x.units > y.units:
			return 1
		}
		return 0
	}
	return a.rat().Cmp(b.rat())
}

// Int returns the amount as an integer when it is a whole number.
func (a Amount) Int() (int64, bool) {
	if a.bad != 0 {
		return 0, false
	}
	t := a.trim()
	if t.scale != 0 {
		return 0, false
	}
	return t.units, true
}

// String returns the amount exactly, as short as it goes: "12.5", "100",
// "-0.03". An invalid amount is "NaN".
func (a Amount) String() string {
	if a.bad != 0 {
		return "NaN"
	}
	t := a.trim()
	s := strconv.FormatUint(uint64(abs(t.units)), 10)
	if t.scale > 0 {
		if len(s) <= int(t.scale) {
			s = strings.Repeat("0", int(t.scale)-len(s)+1) + s
		}
		s = s[:len(s)-int(t.scale)] + "." + s[len(s)-int(t.scale):]
	}
	if t.units < 0 {
		s = "-" + s
	}
	return s
}

// Fixed returns the amount with exactly the currency's digits ("12.50"),
// or the amount's own places when it has more.
func (a Amount) Fixed(c Currency) string {
	s := a.String()
	d := c.Digits
	if a.bad != 0 || d == 0 {
		return s
	}
	i := strings.IndexByte(s, '.')
	if i < 0 {
		return s + "." + strings.Repeat("0", d)
	}
	if places := len(s) - i - 1; places < d {
		s += strings.Repeat("0", d-places)
	}
	return s
}

// Number returns the amount as a json.Number, for free-form maps (action
// metadata): it is written as a JSON number and stored as a DynamoDB N.
func (a Amount) Number() json.Number { return json.Number(a.String()) }

// MarshalJSON writes the amount as a JSON number (see String).
func (a Amount) MarshalJSON() ([]byte, error) {
	if err := a.Valid(); err != nil {
		return nil, err
	}
	return []byte(a.String()), nil
}

var float64Type = reflect.TypeFor[float64]()

// UnmarshalJSON reads a JSON number exactly from its text, never through
// a float64. A number that cannot be held exactly (1e-100, 1e400) leaves
// an invalid Amount (see Amount) rather than failing, so that validation
// names the field; anything but a number is a type error.
func (a *Amount) UnmarshalJSON(b []byte) error {
	s := string(b)
	neg, coef, exp, ok := scan(s)
	if !ok {
		return &json.UnmarshalTypeError{Value: jsonKind(s), Type: float64Type}
	}
	v, err := fromParts(neg, coef, exp)
	switch {
	case errors.Is(err, ErrPrecision):
		*a = Amount{bad: badPrecision}
	case err != nil:
		*a = Amount{bad: badRange}
	default:
		*a = v
	}
	return nil
}

func jsonKind(s string) string {
	switch {
	case strings.HasPrefix(s, `"`):
		return "string"
	case s == "true" || s == "false":
		return "bool"
	case strings.HasPrefix(s, "{"):
		return "object"
	case strings.HasPrefix(s, "["):
		return "array"
	}
	return "number " + clip(s)
}

// MarshalDynamoDBAttributeValue stores the amount as an N attribute with
// its exact decimal text.
func (a Amount) MarshalDynamoDBAttributeValue() (types.AttributeValue, error) {
	if err := a.Valid(); err != nil {
		return nil, err
	}
	return &types.AttributeValueMemberN{Value: a.String()}, nil
}

// UnmarshalDynamoDBAttributeValue reads an N attribute exactly (a NULL is
// 0).
func (a *Amount) UnmarshalDynamoDBAttributeValue(av types.AttributeValue) error {
	switch v := av.(type) {
	case *types.AttributeValueMemberNULL:
		*a = Amount{}
		return nil
	case *types.AttributeValueMemberN:
		x, err := Parse(v.Value)
		if err != nil {
			return fmt.Errorf("money: read %q: %w", clip(v.Value), err)
		}
		*a = x
		return nil
	}
	return fmt.Errorf("money: an amount is stored as a number, not %T", av)
}

// AttributeValue returns the amount as an N attribute, for expressions.
// It panics on an invalid amount: validate first.
func (a Amount) AttributeValue() types.AttributeValue {
	if err := a.Valid(); err != nil {
		panic("money: AttributeValue of an invalid amount")
	}
	return &types.AttributeValueMemberN{Value: a.String()}
}

// FromAny reads an amount from a free-form value (action metadata, as
// recorded or as read back): an Amount, a json.Number, an integer, or a
// float64 (taken as the shortest decimal that reads back as it, which is
// the decimal that was stored).
func FromAny(v any) (Amount, bool) {
	var a Amount
	var err error
	switch x := v.(type) {
	case Amount:
		return x, x.bad == 0
	case json.Number:
		a, err = Parse(string(x))
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return Amount{}, false
		}
		a, err = Parse(strconv.FormatFloat(x, 'g', -1, 64))
	case int:
		return Amount{units: int64(x)}, true
	case int64:
		return Amount{units: x}, true
	default:
		return Amount{}, false
	}
	return a, err == nil
}

// MulFloor returns floor(a × rate), exactly (rate taken as the shortest
// decimal that reads back as it: 1.5 is 3/2), clamped to ±math.MaxInt.
// The rules' pointsPerUnit: 1.5 points per unit on 9.99 is 14.
func (a Amount) MulFloor(rate float64) int {
	if a.bad != 0 || math.IsNaN(rate) || math.IsInf(rate, 0) {
		return 0
	}
	r, ok := new(big.Rat).SetString(strconv.FormatFloat(rate, 'g', -1, 64))
	if !ok {
		return 0
	}
	return floorInt(r.Mul(r, a.rat()))
}

// ShareFloor returns floor(n × part / whole) exactly, at most n (n itself
// when whole is not positive): the share of n points that part of whole
// is.
func ShareFloor(n int, part, whole Amount) int {
	if whole.Sign() <= 0 || part.Cmp(whole) >= 0 {
		return n
	}
	if part.Sign() <= 0 {
		return 0
	}
	r := new(big.Rat).Quo(part.rat(), whole.rat())
	return floorInt(r.Mul(r, new(big.Rat).SetInt64(int64(n))))
}

func floorInt(r *big.Rat) int {
	// DivMod is Euclidean: with a positive denominator q is the floor.
	q, _ := new(big.Int).DivMod(r.Num(), r.Denom(), new(big.Int))
	switch {
	case q.Cmp(big.NewInt(math.MaxInt)) > 0:
		return math.MaxInt
	case q.Cmp(big.NewInt(math.MinInt)) < 0:
		return math.MinInt
	}
	return int(q.Int64())
}

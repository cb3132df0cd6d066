package money_test

import (
	"encoding/json"
	"errors"
	"math"
	"math/big"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/loyalty-platform/platform/shared/domain/money"
	"github.com/loyalty-platform/platform/shared/platform/apierr"
)

func TestParse(t *testing.T) {
	tests := []struct {
		name, in, want string
		err            error
	}{
		{"Integer", "12", "12", nil},
		{"Decimal", "12.50", "12.5", nil},
		{"Zero", "0", "0", nil},
		{"NegativeZero", "-0.00", "0", nil},
		{"Negative", "-0.03", "-0.03", nil},
		{"Exponent", "1e2", "100", nil},
		{"ExponentPlus", "1.5E+3", "1500", nil},
		{"NegativeExponent", "15e-1", "1.5", nil},
		{"Tiny", "1e-15", "0.000000000000001", nil},
		{"MaxScale", "0.000000000000000001", "0.000000000000000001", nil},
		{"TrailingZerosPastMaxScale", "1.0000000000000000000000", "1", nil},
		{"ZeroHugeExponent", "0e999999999999", "0", nil},
		{"MaxInt64", "9223372036854775807", "9223372036854775807", nil},
		{"MaxInt64Cents", "92233720368547758.07", "92233720368547758.07", nil},
		{"TooPrecise", "1e-100", "", money.ErrPrecision},
		{"TooPreciseByOne", "0.0000000000000000001", "", money.ErrPrecision},
		{"TooLarge", "9223372036854775808", "", money.ErrRange},
		{"TooLargeExponent", "1e400", "", money.ErrRange},
		{"HugeExponent", "1e99999999999999999999", "", money.ErrRange},
		{"Empty", "", "", money.ErrSyntax},
		{"LeadingZero", "01", "", money.ErrSyntax},
		{"LeadingDot", ".5", "", money.ErrSyntax},
		{"TrailingDot", "5.", "", money.ErrSyntax},
		{"Plus", "+5", "", money.ErrSyntax},
		{"String", `"5"`, "", money.ErrSyntax},
		{"NaN", "NaN", "", money.ErrSyntax},
		{"Space", " 5", "", money.ErrSyntax},
		{"BareExponent", "1e", "", money.ErrSyntax},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a, err := money.Parse(tc.in)
			if !errors.Is(err, tc.err) {
				t.Fatalf("Parse(%q) error = %v, want %v", tc.in, err, tc.err)
			}
			if err == nil && a.String() != tc.want {
				t.Errorf("Parse(%q) = %s, want %s", tc.in, a, tc.want)
			}
		})
	}
}

func TestIn(t *testing.T) {
	jpy, _ := money.Lookup("JPY")
	bhd, _ := money.Lookup("BHD")
	tests := []struct {
		name  string
		in    string
		cur   money.Currency
		units int64
		err   string
	}{
		{"Pounds", "12.5", money.GBP, 1250, ""},
		{"Pence", "0.01", money.GBP, 1, ""},
		{"TrailingZeros", "1.500", money.GBP, 150, ""},
		{"Yen", "1500", jpy, 1500, ""},
		{"Fils", "1.234", bhd, 1234, ""},
		{"TooManyPlaces", "12.345", money.GBP, 0, "totalPrice: at most 2 decimal places (GBP)"},
		{"Tiny", "1e-15", money.GBP, 0, "totalPrice: at most 2 decimal places (GBP)"},
		{"Tinier", "1e-100", money.GBP, 0, "totalPrice: at most 2 decimal places (GBP)"},
		{"HalfYen", "1.5", jpy, 0, "totalPrice: must be a whole amount: JPY has no minor unit"},
		{"FourPlacesInBHD", "0.0001", bhd, 0, "totalPrice: at most 3 decimal places (BHD)"},
		{"TooLarge", "1e400", money.GBP, 0, "totalPrice: is too large"},
		{"TooLargeInCents", "92233720368547758.08", money.GBP, 0, "totalPrice: is too large"},
		{"OverflowWhenScaled", "922337203685477581", money.GBP, 0, "totalPrice: is too large"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var a money.Amount
			if err := json.Unmarshal([]byte(tc.in), &a); err != nil {
				t.Fatalf("unmarshal %s: %v", tc.in, err)
			}
			got, err := tc.cur.Amount("totalPrice", a)
			if tc.err != "" {
				e, ok := apierr.As(err)
				if !ok || e.Code != apierr.ValidationFailed || e.Message != tc.err {
					t.Fatalf("Amount(%s) error = %v, want VALIDATION_FAILED %q", tc.in, err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Units() != tc.units || got.Scale() != tc.cur.Digits {
				t.Errorf("Amount(%s) = %d × 10^-%d, want %d × 10^-%d", tc.in, got.Units(), got.Scale(), tc.units, tc.cur.Digits)
			}
		})
	}
}

func TestArithmetic(t *testing.T) {
	p := money.MustParse
	tests := []struct {
		name string
		a, b string
		sum  string
		err  error
	}{
		{"PointOnePlusPointTwo", "0.1", "0.2", "0.3", nil},
		{"Scales", "100", "-0.000000000000001", "99.999999999999999", nil},
		{"ToZero", "1.5", "-1.50", "0", nil},
		{"Overflow", "9223372036854775807", "1", "", money.ErrRange},
		{"NegativeOverflow", "-9223372036854775807", "-1", "", money.ErrRange},
		{"OverflowWhenAligned", "92233720368547759", "0.01", "", money.ErrRange},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := p(tc.a).Add(p(tc.b))
			if !errors.Is(err, tc.err) {
				t.Fatalf("%s + %s error = %v, want %v", tc.a, tc.b, err, tc.err)
			}
			if err == nil && got.String() != tc.sum {
				t.Errorf("%s + %s = %s, want %s", tc.a, tc.b, got, tc.sum)
			}
		})
	}
	t.Run("TenDimes", func(t *testing.T) {
		sum := money.Amount{}
		for range 10 {
			var err error
			if sum, err = sum.Add(p("0.10")); err != nil {
				t.Fatal(err)
			}
		}
		if sum.Cmp(p("1")) != 0 || sum.Fixed(money.GBP) != "1.00" {
			t.Errorf("10 × 0.10 = %s, want 1.00", sum.Fixed(money.GBP))
		}
	})
	t.Run("Cmp", func(t *testing.T) {
		for _, c := range []struct {
			a, b string
			want int
		}{{"1", "1.00", 0}, {"0.1", "0.09", 1}, {"-1", "0", -1}, {"9223372036854775807", "0.000000000000000001", 1}, {"-9223372036854775807", "0.5", -1}} {
			if got := p(c.a).Cmp(p(c.b)); got != c.want {
				t.Errorf("Cmp(%s, %s) = %d, want %d", c.a, c.b, got, c.want)
			}
		}
	})
	t.Run("MulFloor", func(t *testing.T) {
		for _, c := range []struct {
			a    string
			rate float64
			want int
		}{{"9.99", 1.5, 14}, {"10", 0.1, 1}, {"0.3", 10, 3}, {"24", 1, 24}, {"1000000000", 1000000, 1_000_000_000_000_000}} {
			if got := p(c.a).MulFloor(c.rate); got != c.want {
				t.Errorf("%s × %v = %d, want %d", c.a, c.rate, got, c.want)
			}
		}
	})
	t.Run("ShareFloor", func(t *testing.T) {
		for _, c := range []struct {
			n           int
			part, whole string
			want        int
		}{{10, "0.1", "0.3", 3}, {9, "1", "3", 3}, {9, "3", "3", 9}, {9, "4", "3", 9}, {9, "1", "0", 9}, {9, "0", "3", 0}, {7, "0.7", "1", 4}} {
			if got := money.ShareFloor(c.n, p(c.part), p(c.whole)); got != c.want {
				t.Errorf("ShareFloor(%d, %s, %s) = %d, want %d", c.n, c.part, c.whole, got, c.want)
			}
		}
	})
	t.Run("Int", func(t *testing.T) {
		if v, ok := p("5.000").Int(); !ok || v != 5 {
			t.Errorf("Int(5.000) = %d, %v", v, ok)
		}
		if _, ok := p("5.5").Int(); ok {
			t.Error("Int(5.5) is whole")
		}
	})
}

func TestRoundTrip(t *testing.T) {
	for _, s := range []string{"0", "12.5", "-0.03", "1000000000", "99.999999999999999", "0.000000000000000001", "9223372036854775807"} {
		t.Run(s, func(t *testing.T) {
			a := money.MustParse(s)
			b, err := json.Marshal(struct {
				A money.Amount  `json:"a"`
				P *money.Amount `json:"p"`
			}{a, &a})
			if err != nil {
				t.Fatal(err)
			}
			if want := `{"a":` + s + `,"p":` + s + `}`; string(b) != want {
				t.Errorf("JSON = %s, want %s", b, want)
			}
			var back struct{ A, P money.Amount }
			if err := json.Unmarshal(b, &back); err != nil || back.A.Cmp(a) != 0 || back.P.Cmp(a) != 0 {
				t.Errorf("JSON back = %v %v (%v), want %s", back.A, back.P, err, s)
			}
			av, err := attributevalue.Marshal(a)
			if err != nil {
				t.Fatal(err)
			}
			if n, ok := av.(*types.AttributeValueMemberN); !ok || n.Value != s {
				t.Errorf("attribute = %#v, want N %s", av, s)
			}
			var got money.Amount
			if err := attributevalue.Unmarshal(av, &got); err != nil || got.Cmp(a) != 0 {
				t.Errorf("attribute back = %v (%v), want %s", got, err, s)
			}
		})
	}
	t.Run("Fixed", func(t *testing.T) {
		jpy, _ := money.Lookup("JPY")
		for _, c := range []struct {
			a    string
			cur  money.Currency
			want string
		}{{"12.5", money.GBP, "12.50"}, {"3", money.GBP, "3.00"}, {"3", jpy, "3"}, {"0.001", money.GBP, "0.001"}} {
			if got := money.MustParse(c.a).Fixed(c.cur); got != c.want {
				t.Errorf("Fixed(%s, %s) = %s, want %s", c.a, c.cur.Code, got, c.want)
			}
		}
	})
	t.Run("NotANumber", func(t *testing.T) {
		for _, in := range []string{`"12.5"`, `true`, `{}`, `[]`} {
			var a money.Amount
			var te *json.UnmarshalTypeError
			if err := json.Unmarshal([]byte(in), &a); !errors.As(err, &te) {
				t.Errorf("Unmarshal(%s) error = %v, want a type error", in, err)
			}
		}
	})
	t.Run("InvalidIsNotWritten", func(t *testing.T) {
		var a money.Amount
		if err := json.Unmarshal([]byte("1e-100"), &a); err != nil {
			t.Fatal(err)
		}
		if !errors.Is(a.Valid(), money.ErrPrecision) {
			t.Errorf("Valid = %v, want ErrPrecision", a.Valid())
		}
		if _, err := json.Marshal(a); err == nil {
			t.Error("an invalid amount was written as JSON")
		}
		if _, err := attributevalue.Marshal(a); err == nil {
			t.Error("an invalid amount was stored")
		}
		if _, err := a.Add(money.MustParse("1")); err == nil {
			t.Error("an invalid amount was added")
		}
	})
	t.Run("FromAny", func(t *testing.T) {
		for _, c := range []struct {
			v    any
			want string
		}{{0.1, "0.1"}, {9.99, "9.99"}, {1e21, "1000000000000000000000"}, {json.Number("2.50"), "2.5"}, {3, "3"}, {money.MustParse("4.2"), "4.2"}} {
			a, ok := money.FromAny(c.v)
			if c.want == "1000000000000000000000" {
				if ok {
					t.Errorf("FromAny(%v) = %s, want out of range", c.v, a)
				}
				continue
			}
			if !ok || a.String() != c.want {
				t.Errorf("FromAny(%v) = %s, %v, want %s", c.v, a, ok, c.want)
			}
		}
		if _, ok := money.FromAny(math.NaN()); ok {
			t.Error("FromAny(NaN) is an amount")
		}
		if _, ok := money.FromAny("1"); ok {
			t.Error("FromAny(string) is an amount")
		}
	})
}

func TestCurrency(t *testing.T) {
	tests := []struct {
		code   string
		digits int
		err    bool
	}{{"", 2, false}, {"GBP", 2, false}, {"EUR", 2, false}, {"JPY", 0, false}, {"KRW", 0, false}, {"BHD", 3, false}, {"KWD", 3, false}, {"XXX", 0, true}, {"gbp", 0, true}}
	for _, tc := range tests {
		t.Run("Code"+tc.code, func(t *testing.T) {
			c, err := money.Of(tc.code)
			if (err != nil) != tc.err {
				t.Fatalf("Of(%q) error = %v", tc.code, err)
			}
			if err == nil && c.Digits != tc.digits {
				t.Errorf("Of(%q).Digits = %d, want %d", tc.code, c.Digits, tc.digits)
			}
			if verr := money.ValidateCode("settings.currency", tc.code); (verr != nil) != tc.err {
				t.Errorf("ValidateCode(%q) = %v", tc.code, verr)
			}
		})
	}
}

// FuzzParse: Parse never panics; what it accepts is exactly the decimal
// math/big reads from the same text, and its String reads back as the same
// amount; JSON decoding agrees with Parse for every number.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"0", "12.50", "-0.03", "1e-15", "1e-100", "1e400", "9223372036854775807", "9223372036854775808",
		"0.000000000000000001", "1.5E+3", "-0", "01", ".5", "5.", "1e", `"1"`, "1e-99999999999999999999", "100.000000000000000000001"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		a, err := money.Parse(s)
		var u money.Amount
		jerr := json.Unmarshal([]byte(s), &u)
		if err != nil {
			if !errors.Is(err, money.ErrSyntax) && !errors.Is(err, money.ErrPrecision) && !errors.Is(err, money.ErrRange) {
				t.Fatalf("Parse(%q): unexpected error %v", s, err)
			}
			if errors.Is(err, money.ErrSyntax) {
				return
			}
			// A well-formed number that cannot be held decodes as an
			// invalid amount, without an error.
			if jerr != nil || u.Valid() == nil {
				t.Fatalf("Unmarshal(%q) = %v, %v; Parse said %v", s, u, jerr, err)
			}
			return
		}
		if jerr != nil || u.Cmp(a) != 0 {
			t.Fatalf("Unmarshal(%q) = %v, %v; Parse gave %s", s, u, jerr, a)
		}
		// math/big refuses exponents it cannot hold (0e9227000000000000000):
		// then only the round trip is checked.
		if want, ok := new(big.Rat).SetString(s); ok {
			got, _ := new(big.Rat).SetString(a.String())
			if got.Cmp(want) != 0 {
				t.Fatalf("Parse(%q) = %s, want %s", s, a, want.FloatString(20))
			}
		} else if !strings.ContainsAny(s, "eE") {
			t.Fatalf("Parse(%q) = %s but math/big cannot read it", s, a)
		}
		back, err := money.Parse(a.String())
		if err != nil || back.Cmp(a) != 0 || back.String() != a.String() {
			t.Fatalf("String %s of %q reads back as %v, %v", a, s, back, err)
		}
		if strings.HasSuffix(a.String(), "0") && strings.Contains(a.String(), ".") {
			t.Fatalf("String %s is not trimmed", a)
		}
	})
}

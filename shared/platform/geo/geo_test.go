package geo

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/loyalty-platform/platform/shared/platform/apierr"
)

// wantInvalid checks that err is a VALIDATION_FAILED error naming field.
func wantInvalid(t *testing.T, err error, field string) {
	t.Helper()
	e, ok := apierr.As(err)
	if !ok || e.Code != apierr.ValidationFailed || e.Field != field {
		t.Fatalf("error = %v, want VALIDATION_FAILED naming field %q", err, field)
	}
}

func TestValidateText(t *testing.T) {
	tests := []struct {
		name, text string
		ok         bool
	}{
		{"three characters", "abc", true},
		{"trimmed to two", "  ab  ", false},
		{"empty", "", false},
		{"two hundred characters", strings.Repeat("a", 200), true},
		{"two hundred and one characters", strings.Repeat("a", 201), false},
		{"two hundred multibyte characters", strings.Repeat("é", 200), true},
		{"control character", "ab\x00c", false},
		{"newline", "10 Downing\nStreet", false},
		{"invalid UTF-8", "\xff\xfeabc", false},
		{"unicode letters", "Zürich", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := ValidateText("address", tt.text)
			if tt.ok {
				if err != nil {
					t.Fatalf("ValidateText(%q) = %v, want nil", tt.text, err)
				}
				return
			}
			wantInvalid(t, err, "address")
		})
	}
}

func TestValidatePosition(t *testing.T) {
	tests := []struct {
		name string
		pos  []float64
		ok   bool
	}{
		{"origin", []float64{0, 0}, true},
		{"south-west corner", []float64{-180, -90}, true},
		{"north-east corner", []float64{180, 90}, true},
		{"London", []float64{-0.1278, 51.5074}, true},
		{"longitude too large", []float64{180.0001, 0}, false},
		{"longitude too small", []float64{-181, 0}, false},
		{"latitude too large", []float64{0, 90.5}, false},
		{"latitude too small", []float64{0, -90.1}, false},
		{"latitude and longitude swapped out of range", []float64{51.5, -120}, false},
		{"nil", nil, false},
		{"empty", []float64{}, false},
		{"one number", []float64{1}, false},
		{"three numbers", []float64{1, 2, 3}, false},
		{"not a number", []float64{math.NaN(), 0}, false},
		{"infinite", []float64{0, math.Inf(1)}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := ValidatePosition("position", tt.pos)
			if tt.ok {
				if err != nil {
					t.Fatalf("ValidatePosition(%v) = %v, want nil", tt.pos, err)
				}
				return
			}
			wantInvalid(t, err, "position")
		})
	}
}

func TestAddressValidate(t *testing.T) {
	full := Address{Line1: "10 Downing Street", City: "London", PostalCode: "SW1A 2AA", Country: "GB"}
	tests := []struct {
		name      string
		a         Address
		locatable bool   // ValidateLocatable instead of Validate
		field     string // "" when valid
	}{
		{"full address", full, true, ""},
		{"empty address is well formed", Address{}, false, ""},
		{"country by alpha-3", Address{Line1: "x", City: "y", Country: "GBR"}, true, ""},
		{"country by name", Address{Line1: "x", City: "y", Country: "United Kingdom"}, true, ""},
		{"unknown country", Address{Country: "Narnia"}, false, "address.country"},
		{"line2 too long", Address{Line2: strings.Repeat("x", 201)}, false, "address.line2"},
		{"region of 200 characters", Address{Region: strings.Repeat("é", 200)}, false, ""},
		{"control character in city", Address{City: "Lon\tdon"}, false, "address.city"},
		{"invalid UTF-8 in postal code", Address{PostalCode: "\xff"}, false, "address.postalCode"},
		{"missing line1", Address{City: "London", Country: "GB"}, true, "address.line1"},
		{"blank city", Address{Line1: "x", City: "  ", Country: "GB"}, true, "address.city"},
		{"missing country", Address{Line1: "x", City: "London"}, true, "address.country"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var err error
			if tt.locatable {
				err = tt.a.ValidateLocatable("address.")
			} else {
				err = tt.a.Validate("address.")
			}
			if tt.field == "" {
				if err != nil {
					t.Fatalf("got %v, want nil", err)
				}
				return
			}
			wantInvalid(t, err, tt.field)
		})
	}
}

func TestAddressNormalized(t *testing.T) {
	got := Address{Line1: " 10 Downing Street ", City: "London ", Country: " uk "}.Normalized()
	want := Address{Line1: "10 Downing Street", City: "London", Country: "GB"}
	if got != want {
		t.Fatalf("Normalized() = %+v, want %+v", got, want)
	}
	if got := (Address{Country: "Narnia"}).Normalized(); got.Country != "Narnia" {
		t.Fatalf("unknown country normalized to %q, want it kept", got.Country)
	}
}

func TestLookupCountry(t *testing.T) {
	tests := []struct {
		in, want string // want "" when unknown
	}{
		{"GB", "GB"}, {"gb", "GB"}, {"GBR", "GB"}, {"United Kingdom", "GB"}, {"UK", "GB"},
		{"U.K.", "GB"}, {"Great Britain", "GB"}, {"england", "GB"}, {"united kingdom.", "GB"},
		{"US", "US"}, {"USA", "US"}, {"U.S.A.", "US"}, {"United States of America", "US"},
		{"FR", "FR"}, {"FRA", "FR"}, {"France", "FR"},
		{"DEU", "DE"}, {"Germany", "DE"},
		{"Côte d'Ivoire", "CI"}, {"Cote dIvoire", "CI"}, {"Ivory Coast", "CI"},
		{"Åland Islands", "AX"}, {"aland islands", "AX"},
		{"South Korea", "KR"}, {"Korea, Republic of", "KR"}, {"North Korea", "KP"},
		{"Netherlands", "NL"}, {"Holland", "NL"},
		{"", ""}, {"XX", ""}, {"Narnia", ""}, {"G B", ""},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			c, ok := LookupCountry(tt.in)
			if tt.want == "" {
				if ok {
					t.Fatalf("LookupCountry(%q) = %+v, want unknown", tt.in, c)
				}
				return
			}
			if !ok || c.Alpha2 != tt.want {
				t.Fatalf("LookupCountry(%q) = %+v, %v; want %s", tt.in, c, ok, tt.want)
			}
		})
	}
}

func TestCountryData(t *testing.T) {
	idx, err := parseCountries(countriesCSV)
	if err != nil {
		t.Fatal(err)
	}
	if len(idx.byAlpha2) != 249 || len(idx.byAlpha3) != 249 {
		t.Fatalf("%d alpha-2 and %d alpha-3 codes, want the 249 of ISO 3166-1", len(idx.byAlpha2), len(idx.byAlpha3))
	}
	if gb := idx.byAlpha3["GBR"]; gb.Alpha2 != "GB" || gb.Name != "United Kingdom" {
		t.Fatalf("GBR = %+v", gb)
	}
}

func TestFold(t *testing.T) {
	tests := []struct{ in, want string }{
		{"Zürich", "zurich"},
		{"Straße", "strasse"},
		{"St. John's", "st johns"},
		{"Washington, D.C.", "washington dc"},
		{"ÅLAND", "aland"},
		{"Cafe\u0301", "cafe"},
		{"São Paulo", "sao paulo"},
		{"Łódź", "lodz"},
		{"  many   spaces, and - dashes ", "many spaces and dashes"},
		{"İstanbul", "istanbul"},
		{"София", "софия"},
		{"!!!", ""},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			if got := fold(tt.in); got != tt.want {
				t.Fatalf("fold(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestCanonical(t *testing.T) {
	tests := []struct{ a, b string }{
		{"350 Fifth Avenue", "350 5th Ave"},
		{"1600 Pennsylvania Avenue NW", "1600 Pennsylvania Ave. N.W."},
		{"1600 Pennsylvania Avenue Northwest", "1600 pennsylvania ave nw"},
		{"10 Downing Street", "10 downing st."},
		{"One Apple Park Way", "1 Apple Park Way"},
		{"The Hague", "Hague"},
	}
	for _, tt := range tests {
		t.Run(tt.a, func(t *testing.T) {
			if ca, cb := canonical(tt.a), canonical(tt.b); ca != cb {
				t.Fatalf("canonical(%q) = %q, canonical(%q) = %q; want equal", tt.a, ca, tt.b, cb)
			}
		})
	}
}

func TestPostalMatches(t *testing.T) {
	tests := []struct {
		a, b string
		want bool
	}{
		{"SW1A 2AA", "sw1a2aa", true},
		{"SW1A", "SW1A 2AA", true},
		{"20500-0003", "20500", true},
		{"", "75007", true},
		{"SW1A 9ZZ", "SW1A 2AA", false},
		{"75008", "75007", false},
	}
	for _, tt := range tests {
		t.Run(tt.a+" vs "+tt.b, func(t *testing.T) {
			if got := postalMatches(tt.a, tt.b); got != tt.want {
				t.Fatalf("postalMatches(%q, %q) = %v, want %v", tt.a, tt.b, got, tt.want)
			}
		})
	}
}

func TestHaversine(t *testing.T) {
	london, paris := []float64{-0.1278, 51.5074}, []float64{2.3522, 48.8566}
	if d := haversine(london, paris); d < 340 || d > 345 {
		t.Fatalf("London-Paris = %.1f km, want about 343.5", d)
	}
	if d := haversine(paris, paris); d != 0 {
		t.Fatalf("Paris-Paris = %v, want 0", d)
	}
	ny, la := []float64{-74.0060, 40.7128}, []float64{-118.2437, 34.0522}
	if d := haversine(ny, la); d < 3930 || d > 3950 {
		t.Fatalf("New York-Los Angeles = %.1f km, want about 3936", d)
	}
}

func TestSuggestLimit(t *testing.T) {
	for in, want := range map[int]int{-1: DefaultSuggestions, 0: DefaultSuggestions, 1: 1, 15: 15, 16: MaxSuggestions, 1000: MaxSuggestions} {
		if got := SuggestLimit(in); got != want {
			t.Errorf("SuggestLimit(%d) = %d, want %d", in, got, want)
		}
	}
}

func TestErrNotResolved(t *testing.T) {
	if ErrNotResolved.Code.Status() != 422 || ErrNotResolved.Message != "the address could not be resolved" {
		t.Fatalf("ErrNotResolved = %+v (status %d)", ErrNotResolved, ErrNotResolved.Code.Status())
	}
	wrapped := errors.Join(errors.New("context"), ErrNotResolved)
	if !errors.Is(wrapped, ErrNotResolved) {
		t.Fatal("errors.Is does not find a wrapped ErrNotResolved")
	}
}

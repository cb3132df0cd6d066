// Package geo turns addresses into coordinates and partial address text into
// suggestions, behind one Geocoder interface with two providers:
//
//   - Location, an adapter for an Amazon Location Service place index
//     (aws-sdk-go-v2 service/location), used when GEOCODER=aws;
//   - Gazetteer, an offline provider over a small embedded list of real
//     cities and street-level landmarks, used by the local stack and the
//     tests, which need no account.
//
// Positions are always [longitude, latitude], as in GeoJSON and in the API.
// Countries in returned addresses are ISO 3166-1 alpha-2 codes; inputs may
// name a country by alpha-2 or alpha-3 code or by its English name.
package geo

import (
	"context"
	"errors"
	"math"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/loyalty-platform/platform/shared/platform/apierr"
)

// Limits of the inputs.
const (
	// MinTextLength and MaxTextLength bound the text of a suggestion
	// search, in characters, after trimming spaces.
	MinTextLength = 3
	MaxTextLength = 200
	// MaxFieldLength bounds each field of an Address, in characters.
	MaxFieldLength = 200
	// DefaultSuggestions is the number of suggestions when max is 0;
	// MaxSuggestions is the most one search returns (the Amazon Location
	// suggestions API allows 15).
	DefaultSuggestions = 5
	MaxSuggestions     = 15
)

// ErrNotResolved says that a provider found no place for an address. It is
// a client error (422): the address is well formed but unknown.
var ErrNotResolved = apierr.New(apierr.ValidationFailed, "the address could not be resolved")

// Address is a postal address as the API carries it.
type Address struct {
	Line1      string `json:"line1"`
	Line2      string `json:"line2"`
	City       string `json:"city"`
	Region     string `json:"region"`
	PostalCode string `json:"postalCode"`
	Country    string `json:"country"`
}

// Suggestion is one place that matches a partial address text.
type Suggestion struct {
	// Text is the place's one-line label, for display.
	Text    string  `json:"text"`
	Address Address `json:"address"`
	// Position is [longitude, latitude].
	Position []float64 `json:"position"`
	// PlaceID identifies the place at its provider.
	PlaceID string `json:"placeId"`
}

// Geocoder finds places.
type Geocoder interface {
	// Suggest returns up to max places (DefaultSuggestions when max is 0,
	// at most MaxSuggestions) that match the partial address text, best
	// first; bias, if not nil, is a [longitude, latitude] position that
	// nearer places are preferred to. No match is an empty list, not an
	// error.
	Suggest(ctx context.Context, text string, bias []float64, max int) ([]Suggestion, error)
	// Locate returns the [longitude, latitude] position of an address
	// (line1, city and country required), or ErrNotResolved.
	Locate(ctx context.Context, a Address) ([]float64, error)
}

// Offline returns the offline Gazetteer, parsed on its first use.
func Offline() Geocoder { return lazyGazetteer{} }

// Unconfigured returns the geocoder of a deployment that asks for Amazon
// Location without naming its place index: every call fails with an
// internal error that names the missing setting (PLACE_INDEX_NAME).
func Unconfigured() Geocoder { return unconfigured{} }

// lazyGazetteer is the offline geocoder parsed on its first use rather
// than at a cold start (parsing the embedded places takes tens of
// milliseconds, which every cold start of the users function would pay
// though most never geocode).
type lazyGazetteer struct{}

// Suggest implements Geocoder.
func (lazyGazetteer) Suggest(ctx context.Context, text string, bias []float64, max int) ([]Suggestion, error) {
	return gazetteer().Suggest(ctx, text, bias, max)
}

// Locate implements Geocoder.
func (lazyGazetteer) Locate(ctx context.Context, a Address) ([]float64, error) {
	return gazetteer().Locate(ctx, a)
}

// ValidateText checks the text of a suggestion search: 3 to 200
// characters after trimming, no control characters. field names the input
// in the error.
func ValidateText(field, text string) error {
	t := strings.TrimSpace(text)
	n := utf8.RuneCountInString(t)
	if !utf8.ValidString(t) {
		return apierr.Invalid(field, "must be valid UTF-8 text")
	}
	if n < MinTextLength || n > MaxTextLength {
		return apierr.Invalid(field, "must be %d to %d characters", MinTextLength, MaxTextLength)
	}
	if hasControl(t) {
		return apierr.Invalid(field, "must not contain control characters")
	}
	return nil
}

// ValidatePosition checks a [longitude, latitude] position: exactly two
// finite numbers, longitude in -180..180 and latitude in -90..90. field
// names the input in the error.
func ValidatePosition(field string, p []float64) error {
	if len(p) != 2 {
		return apierr.Invalid(field, "must be exactly two numbers: [longitude, latitude]")
	}
	lon, lat := p[0], p[1]
	if math.IsNaN(lon) || math.IsInf(lon, 0) || lon < -180 || lon > 180 {
		return apierr.Invalid(field, "longitude (first number) must be between -180 and 180")
	}
	if math.IsNaN(lat) || math.IsInf(lat, 0) || lat < -90 || lat > 90 {
		return apierr.Invalid(field, "latitude (second number) must be between -90 and 90")
	}
	return nil
}

// Validate checks the fields of an address: each at most MaxFieldLength
// characters without control characters, and country, when given, a
// country LookupCountry knows. prefix is put before each field name in the
// error ("address." gives "address.city").
func (a Address) Validate(prefix string) error {
	for _, f := range a.fields() {
		if !utf8.ValidString(f.value) {
			return apierr.Invalid(prefix+f.name, "must be valid UTF-8 text")
		}
		if utf8.RuneCountInString(f.value) > MaxFieldLength {
			return apierr.Invalid(prefix+f.name, "must be at most %d characters", MaxFieldLength)
		}
		if hasControl(f.value) {
			return apierr.Invalid(prefix+f.name, "must not contain control characters")
		}
	}
	if strings.TrimSpace(a.Country) != "" {
		if _, ok := LookupCountry(a.Country); !ok {
			return apierr.Invalid(prefix+"country", "must be an ISO 3166-1 alpha-2 or alpha-3 code or an English country name")
		}
	}
	return nil
}

// ValidateLocatable is Validate plus the fields Locate needs: line1, city
// and country.
func (a Address) ValidateLocatable(prefix string) error {
	if err := a.Validate(prefix); err != nil {
		return err
	}
	for _, f := range []struct{ name, value string }{{"line1", a.Line1}, {"city", a.City}, {"country", a.Country}} {
		if strings.TrimSpace(f.value) == "" {
			return apierr.Invalid(prefix+f.name, "is required")
		}
	}
	return nil
}

// Normalized returns the address with its fields trimmed and its country
// as an ISO 3166-1 alpha-2 code when it is known.
func (a Address) Normalized() Address {
	out := Address{
		Line1:      strings.TrimSpace(a.Line1),
		Line2:      strings.TrimSpace(a.Line2),
		City:       strings.TrimSpace(a.City),
		Region:     strings.TrimSpace(a.Region),
		PostalCode: strings.TrimSpace(a.PostalCode),
		Country:    strings.TrimSpace(a.Country),
	}
	if c, ok := LookupCountry(out.Country); ok {
		out.Country = c.Alpha2
	}
	return out
}

func (a Address) fields() []struct{ name, value string } {
	return []struct{ name, value string }{
		{"line1", a.Line1}, {"line2", a.Line2}, {"city", a.City},
		{"region", a.Region}, {"postalCode", a.PostalCode}, {"country", a.Country},
	}
}

// SuggestLimit turns the max argument of Suggest into a result count.
func SuggestLimit(max int) int {
	switch {
	case max <= 0:
		return DefaultSuggestions
	case max > MaxSuggestions:
		return MaxSuggestions
	}
	return max
}

// CheckSuggest validates the inputs of Suggest, for the providers.
func CheckSuggest(text string, bias []float64) error {
	if err := ValidateText("address", text); err != nil {
		return err
	}
	if bias != nil {
		return ValidatePosition("position", bias)
	}
	return nil
}

func hasControl(s string) bool {
	return strings.IndexFunc(s, unicode.IsControl) >= 0
}

// haversine returns the great-circle distance in kilometres between two
// [longitude, latitude] positions.
func haversine(a, b []float64) float64 {
	const earthRadiusKm = 6371.0088
	rad := math.Pi / 180
	lat1, lat2 := a[1]*rad, b[1]*rad
	dLat := lat2 - lat1
	dLon := (b[0] - a[0]) * rad
	h := math.Sin(dLat/2)*math.Sin(dLat/2) + math.Cos(lat1)*math.Cos(lat2)*math.Sin(dLon/2)*math.Sin(dLon/2)
	return 2 * earthRadiusKm * math.Asin(math.Min(1, math.Sqrt(h)))
}

// unconfigured is the geocoder of GEOCODER=aws without PLACE_INDEX_NAME:
// a deployment mistake, so every call is an internal error.
type unconfigured struct{}

func (unconfigured) Suggest(context.Context, string, []float64, int) ([]Suggestion, error) {
	return nil, errUnconfigured
}

func (unconfigured) Locate(context.Context, Address) ([]float64, error) {
	return nil, errUnconfigured
}

var errUnconfigured = errors.New("geo: GEOCODER=aws needs PLACE_INDEX_NAME")

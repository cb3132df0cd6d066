package directory_test

import (
	"math"
	"strings"
	"testing"

	ts "github.com/loyalty-platform/platform/shared/testkit"
)

func TestGeocoding(t *testing.T) {
	h := ts.New(t)
	_, token, _ := h.ActiveUser(t, "Geo", "Coder")
	auth := ts.Token(token)
	t.Run("Coordinates", func(t *testing.T) {
		tests := []struct {
			name     string
			body     map[string]any
			lon, lat float64
		}{
			{"Landmark", map[string]any{"line1": "10 Downing Street", "city": "London", "postalCode": "SW1A 2AA", "country": "GB"}, -0.1276, 51.5034},
			{"CityLevel", map[string]any{"line1": "1 Unknown Road", "city": "Paris", "country": "France"}, 2.3522, 48.8566},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				var out struct{ Position []float64 }
				h.Do("POST", "/addresses/coordinates", tc.body, auth).Expect(t, 200, "").JSON(t, &out)
				if len(out.Position) != 2 || math.Abs(out.Position[0]-tc.lon) > 0.01 || math.Abs(out.Position[1]-tc.lat) > 0.01 {
					t.Errorf("position = %v, want about [%v %v]", out.Position, tc.lon, tc.lat)
				}
			})
		}
	})
	t.Run("CoordinatesRejected", func(t *testing.T) {
		tests := []struct {
			name string
			body any
		}{
			{"Unresolvable", map[string]any{"line1": "1 Nowhere Lane", "city": "Atlantis", "country": "GB"}},
			{"MissingLine1", map[string]any{"city": "London", "country": "GB"}},
			{"MissingCity", map[string]any{"line1": "1 High St", "country": "GB"}},
			{"MissingCountry", map[string]any{"line1": "1 High St", "city": "London"}},
			{"UnknownCountry", map[string]any{"line1": "1 High St", "city": "London", "country": "Narnia"}},
			{"UnknownField", map[string]any{"line1": "1 High St", "city": "London", "country": "GB", "planet": "Earth"}},
			{"WrongType", map[string]any{"line1": 1, "city": "London", "country": "GB"}},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				h.Do("POST", "/addresses/coordinates", tc.body, auth).Expect(t, 422, "VALIDATION_FAILED")
			})
		}
		h.Do("POST", "/addresses/coordinates", map[string]any{"line1": "x", "city": "London", "country": "GB"}, h.Anon()).Expect(t, 401, "UNAUTHORIZED")
	})
	t.Run("Suggestions", func(t *testing.T) {
		var out struct{ Items []map[string]any }
		h.Do("POST", "/addresses/suggestions", map[string]any{"address": "Downing"}, auth).Expect(t, 200, "").JSON(t, &out)
		if len(out.Items) == 0 || !strings.Contains(out.Items[0]["label"].(string), "Downing") {
			t.Fatalf("items = %v", out.Items)
		}
		h.Do("POST", "/addresses/suggestions", map[string]any{"address": "zzzzqqq"}, auth).Expect(t, 200, "").JSON(t, &out)
		if len(out.Items) != 0 {
			t.Errorf("nonsense matched %v", out.Items)
		}
		for name, body := range map[string]any{
			"TooShort":    map[string]any{"address": "ab"},
			"Missing":     map[string]any{"position": []float64{0, 0}},
			"BadPosition": map[string]any{"address": "London", "position": []float64{0, 95}},
			"OneNumber":   map[string]any{"address": "London", "position": []float64{0}},
		} {
			t.Run(name, func(t *testing.T) {
				h.Do("POST", "/addresses/suggestions", body, auth).Expect(t, 422, "VALIDATION_FAILED")
			})
		}
	})
}

package location_test

import (
	"sync/atomic"
	"testing"

	ts "github.com/loyalty-platform/platform/shared/testkit"
)

var seq atomic.Int64

// Known city coordinates ([longitude, latitude]) and the great-circle
// distances between them on a sphere of the Earth's mean radius.
var (
	london  = []float64{-0.1278, 51.5074}
	paris   = []float64{2.3522, 48.8566}
	newYork = []float64{-74.0060, 40.7128}
	sydney  = []float64{151.2093, -33.8688}
)

// minimal returns the smallest valid create body.
func minimal(title string) map[string]any {
	return map[string]any{"title": title, "geo": london}
}

// full returns a create body with every field set.
func full(title string) map[string]any {
	return map[string]any{
		"title":           title,
		"description":     "Our flagship.\nOpen late.",
		"state":           "PENDING",
		"mainImageUrl":    "https://img.example.com/main.jpg",
		"listingImageUrl": "https://img.example.com/list.jpg",
		"mapPinImageUrl":  "https://img.example.com/pin.png",
		"openingHours": map[string]any{
			"monday": "08:00-22:00", "tuesday": "08:00-22:00", "wednesday": "08:00-22:00", "thursday": "08:00-22:00",
			"friday": "08:00-23:00", "saturday": "09:00-23:00", "sunday": "closed",
		},
		"alternativeOpeningHoursText": "<p>Open <b>late</b></p>",
		"facilities":                  []string{"wifi", "toilets"},
		"services":                    map[string]any{"checkins": true, "pre_order": true, "delivery": false, "dine_in": true},
		"buttons": []map[string]any{
			{"title": "Order ahead", "style": "PRIMARY", "action": "PREORDER", "properties": map[string]any{"url": "app://preorder"}},
		},
		"links": map[string]any{
			"deliveroo": map[string]any{"title": "Deliveroo", "parameters": "id=123", "enabled": true},
			"opentable": map[string]any{"title": "Book", "parameters": "rid=9", "enabled": false},
		},
		"VATnumber": "GB123456789",
		"address": map[string]any{
			"address": "1 High Street", "address2": "Soho", "town": "London", "country": "GB", "postcode": "W1 1AA",
			"summary": "1 High Street, London", "fullAddress": "1 High Street, Soho, London W1 1AA", "googleMapsShortUrl": "https://goo.gl/maps/abc",
			"line1": "1 High Street", "line2": "Soho", "city": "London", "region": "Greater London", "postalCode": "W1 1AA",
		},
		"contacts": map[string]any{"email": "soho@example.com", "phone": "+44 20 7946 0958"},
		"beacons":  []map[string]any{{"enabled": "true", "minor": "1", "major": "2", "uuid": "f7826da6-4fa2-4e98-8024-bc5b71e0893e"}},
		"ordering": map[string]any{"extendedFields": map[string]any{
			"PREORDER":       map[string]any{"note": []map[string]any{{"title": "Allergies", "description": "Tell us"}}},
			"ORDER_TO_TABLE": map[string]any{"note": []map[string]any{{"title": "Table note"}}},
		}},
		"geo":                []float64{-0.1337, 51.5136},
		"regions":            []string{"London", "UK"},
		"tags":               []string{"flagship", "late"},
		"timezone":           "Europe/London",
		"zones":              map[string]any{"terrace": map[string]any{"name": "Terrace", "tables": []string{"T1", "T2"}}},
		"extended":           map[string]any{"posId": "A-17", "seats": 40.0, "nested": map[string]any{"a": []any{1.0, "b"}}},
		"deliveryBoundaries": map[string]any{"type": "Polygon", "coordinates": []any{[]any{[]any{-0.2, 51.4}, []any{0.0, 51.4}, []any{0.0, 51.6}, []any{-0.2, 51.4}}}},
	}
}

// create posts a location as admin and returns it.
func create(t *testing.T, h *ts.Harness, body map[string]any) map[string]any {
	t.Helper()
	return h.Do("POST", "/locations", body, h.Admin()).Expect(t, 201, "").Map(t)
}

// createAt creates an ACTIVE location with a title and geo, plus extra
// fields, and returns its id.
func createAt(t *testing.T, h *ts.Harness, title string, geo []float64, extra map[string]any) string {
	t.Helper()
	b := map[string]any{"title": title, "geo": geo}
	for k, v := range extra {
		b[k] = v
	}
	return create(t, h, b)["_id"].(string)
}

// activeUser creates and activates a user and returns its id and a session
// token.
func activeUser(t *testing.T, h *ts.Harness) (id, token string) {
	t.Helper()
	id, token, _ = h.ActiveUser(t, "Ada", "Tester")
	return id, token
}

// locList is the body of GET /locations.
type locList struct {
	Items []map[string]any `json:"items"`
	Page  struct {
		Limit    int    `json:"limit"`
		Count    int    `json:"count"`
		StartKey string `json:"startKey"`
		NextKey  string `json:"nextKey"`
	} `json:"page"`
}

func (l locList) titles() []string {
	out := make([]string, 0, len(l.Items))
	for _, it := range l.Items {
		out = append(out, it["title"].(string))
	}
	return out
}

func list(t *testing.T, h *ts.Harness, query string, headers ...ts.Headers) locList {
	t.Helper()
	var l locList
	h.Do("GET", "/locations"+query, nil, headers...).Expect(t, 200, "").JSON(t, &l)
	return l
}

// otherTenant returns the admin headers of a second tenant.
func otherTenant(h *ts.Harness) ts.Headers {
	other, key := h.NewTenant(h.Tenant.Settings)
	return ts.Headers{"x-service-auth-token", key, "x-application-id", other.ID}
}

package pos_test

import (
	"testing"
	"time"

	ts "github.com/loyalty-platform/platform/shared/testkit"
)

// TestOrderRedemptionWindowInLocationZone: an order's redemptions are
// completed by the POS (an admin) at the order's location, so a perk's
// dateTimeRestriction is evaluated in that location's zone; an order
// without a location uses the tenant's (Europe/London by default).
func TestOrderRedemptionWindowInLocationZone(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	// 12:00 UTC: Europe/London on day D, Pacific/Kiritimati on D+1.
	now := h.Clock.Now()
	at := now.Truncate(24 * time.Hour).Add(12 * time.Hour)
	for !at.After(now) {
		at = at.Add(24 * time.Hour)
	}
	h.Clock.Advance(at.Sub(now))
	london, err := time.LoadLocation("Europe/London")
	if err != nil {
		t.Fatal(err)
	}
	tomorrow := at.In(london).AddDate(0, 0, 1).Format(time.DateOnly)
	far := h.Do("POST", "/locations", map[string]any{"title": "Kiritimati", "geo": []float64{-157.4, 1.9}, "state": "ACTIVE",
		"timezone": "Pacific/Kiritimati", "services": map[string]any{"checkins": true}}, h.Admin()).Expect(t, 201, "").Map(t)["_id"].(string)
	near := shop(t, h, "Soho")
	uid := shopper(t, h, "Oona")
	perk := newPerk(t, h, map[string]any{"dateTimeRestriction": map[string]any{"startDate": tomorrow}})
	creditPoints(t, h, uid, perk, 100)

	tests := []struct {
		name     string
		location string
		status   int
		code     string
	}{
		{"FarLocationItsDateIsTomorrow", far, 200, ""},
		{"LondonLocation", near, 422, "OUTSIDE_REDEMPTION_WINDOW"},
		{"NoLocationTenantZone", "", 422, "OUTSIDE_REDEMPTION_WINDOW"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			body := map[string]any{"redemptions": []map[string]any{{"awardId": uid + "-" + perk, "value": 1}}}
			if tc.location != "" {
				body["locationId"] = tc.location
			}
			oid := h.Do("POST", "/users/"+uid+"/orders", body, h.Admin()).Expect(t, 201, "").Map(t)["_id"].(string)
			h.Do("PUT", "/orders/"+oid, map[string]any{"state": "COMPLETED"}, h.Admin()).Expect(t, tc.status, tc.code)
		})
	}
}

package award_test

import (
	"testing"
	"time"

	"github.com/loyalty-platform/platform/shared/domain/tenant"
	ts "github.com/loyalty-platform/platform/shared/testkit"
)

// advanceToUTC moves h's clock on to the next hour:00 UTC and returns
// that instant (the clock then runs on from it with real time).
func advanceToUTC(h *ts.Harness, hour int) time.Time {
	now := h.Clock.Now()
	at := now.Truncate(24 * time.Hour).Add(time.Duration(hour) * time.Hour)
	for !at.After(now) {
		at = at.Add(24 * time.Hour)
	}
	h.Clock.Advance(at.Sub(now))
	return at
}

// checkinShop creates an ACTIVE location offering check-ins in time zone
// tz and returns its id.
func checkinShop(t *testing.T, h *ts.Harness, title, tz string) string {
	t.Helper()
	return h.Do("POST", "/locations", map[string]any{"title": title, "geo": []float64{-0.13, 51.51}, "state": "ACTIVE",
		"timezone": tz, "services": map[string]any{"checkins": true}}, h.Admin()).Expect(t, 201, "").Map(t)["_id"].(string)
}

func zone(t *testing.T, name string) *time.Location {
	t.Helper()
	z, err := time.LoadLocation(name)
	if err != nil {
		t.Fatal(err)
	}
	return z
}

// TestRedeemWindowZone: a perk's dateTimeRestriction is evaluated in the
// zone of the location a redemption names only when the redemption is
// known to happen there (the caller is an admin, the location's POS, or
// the user is checked in there); otherwise in the tenant's zone
// (Europe/London by default). A user naming a far location
// (Pacific/Kiritimati, UTC+14) cannot redeem a perk valid from tomorrow
// today.
func TestRedeemWindowZone(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	// 12:00 UTC: Europe/London is on day D (12:00 or 13:00),
	// Pacific/Kiritimati already on D+1 (02:00).
	at := advanceToUTC(h, 12)
	today := at.In(zone(t, "Europe/London")).Format(time.DateOnly)
	tomorrow := at.In(zone(t, "Europe/London")).AddDate(0, 0, 1).Format(time.DateOnly)
	if got := at.In(zone(t, "Pacific/Kiritimati")).Format(time.DateOnly); got != tomorrow {
		t.Fatalf("Kiritimati's date at %v is %s, want %s", at, got, tomorrow)
	}
	soho := checkinShop(t, h, "Soho", "Europe/London")
	kiritimati := checkinShop(t, h, "Kiritimati", "Pacific/Kiritimati")
	uid, token, _ := h.ActiveUser(t, "Tim", "Zone")
	h.Do("PUT", "/users/"+uid+"/avatar", ts.JPEG(), h.Admin(), ts.Headers{"Content-Type", "image/jpeg"}).Expect(t, 200, "")

	fromTomorrow := newPerk(t, h, map[string]any{"dateTimeRestriction": map[string]any{"startDate": tomorrow}})
	untilToday := newPerk(t, h, map[string]any{"dateTimeRestriction": map[string]any{"endDate": today}})
	sohoFromTomorrow := newPerk(t, h, map[string]any{"locationIds": []string{soho}, "dateTimeRestriction": map[string]any{"startDate": tomorrow}})
	for _, p := range []string{fromTomorrow, untilToday, sohoFromTomorrow} {
		grant(t, h, p, uid, 100)
	}

	user := ts.Token(token)
	adminSession := ts.Token(h.Do("POST", "/sessions", nil, h.Admin()).Expect(t, 201, "").Map(t)["_id"].(string))
	checkedInAt := ""
	checkIn := func(t *testing.T, loc string) {
		t.Helper()
		if loc == checkedInAt {
			return
		}
		if loc == "" {
			h.Do("DELETE", "/users/"+uid+"/checkins", nil, user).Expect(t, 204, "")
		} else {
			h.Do("POST", "/users/"+uid+"/checkins", map[string]any{"locationId": loc}, user).Expect(t, 201, "")
		}
		checkedInAt = loc
	}
	tests := []struct {
		name      string
		perk      string
		location  string // named in the body
		checkedIn string // where the user is checked in ("" nowhere)
		headers   ts.Headers
		status    int
		code      string
	}{
		// The attack: a far location named by a user who is not there.
		{"UserNamesFarLocationNotCheckedIn", fromTomorrow, kiritimati, "", user, 422, "OUTSIDE_REDEMPTION_WINDOW"},
		{"UserNamesFarLocationNotCheckedInTenantZoneToday", untilToday, kiritimati, "", user, 200, ""},
		{"UserNamesFarLocationCheckedInElsewhere", fromTomorrow, kiritimati, soho, user, 422, "OUTSIDE_REDEMPTION_WINDOW"},
		{"UserWithoutLocation", fromTomorrow, "", "", user, 422, "OUTSIDE_REDEMPTION_WINDOW"},
		{"UserWithoutLocationCheckedInFar", fromTomorrow, "", kiritimati, user, 422, "OUTSIDE_REDEMPTION_WINDOW"},
		// The user is there: the location's zone.
		{"UserCheckedInAtFarLocation", fromTomorrow, kiritimati, kiritimati, user, 200, ""},
		{"UserCheckedInAtFarLocationItsDateIsTomorrow", untilToday, kiritimati, kiritimati, user, 422, "OUTSIDE_REDEMPTION_WINDOW"},
		{"CheckedInButNotInLocationIds", sohoFromTomorrow, kiritimati, kiritimati, user, 422, "LOCATION_NOT_ALLOWED"},
		// The location's POS (an admin: the service key or an admin
		// session): the location's zone.
		{"ServiceKeyNamesFarLocation", fromTomorrow, kiritimati, "", h.Admin(), 200, ""},
		{"ServiceKeyNamesFarLocationItsDateIsTomorrow", untilToday, kiritimati, "", h.Admin(), 422, "OUTSIDE_REDEMPTION_WINDOW"},
		{"ServiceKeyWithoutLocation", fromTomorrow, "", "", h.Admin(), 422, "OUTSIDE_REDEMPTION_WINDOW"},
		{"ServiceKeyNamesLondonLocation", fromTomorrow, soho, "", h.Admin(), 422, "OUTSIDE_REDEMPTION_WINDOW"},
		{"AdminSessionNamesFarLocation", fromTomorrow, kiritimati, "", adminSession, 200, ""},
		{"AdminSessionWithoutLocation", fromTomorrow, "", "", adminSession, 422, "OUTSIDE_REDEMPTION_WINDOW"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			checkIn(t, tc.checkedIn)
			body := map[string]any{"valueToRedeem": 1}
			if tc.location != "" {
				body["locationId"] = tc.location
			}
			h.Do("POST", redeemPath(uid, tc.perk), body, tc.headers).Expect(t, tc.status, tc.code)
		})
	}
	// A check-in lasts 30 minutes: after it, the user is there no more.
	t.Run("CheckInExpired", func(t *testing.T) {
		checkIn(t, kiritimati)
		body := map[string]any{"valueToRedeem": 1, "locationId": kiritimati}
		h.Do("POST", redeemPath(uid, fromTomorrow), body, user).Expect(t, 200, "")
		h.Clock.Advance(31 * time.Minute)
		h.Do("POST", redeemPath(uid, fromTomorrow), body, user).Expect(t, 422, "OUTSIDE_REDEMPTION_WINDOW")
	})
}

// TestRedeemWindowInTenantZone: without a location, a perk's hours are
// the tenant's (settings.timezone): at 12:00 UTC a window opening at
// London's hour is open for a tenant in Europe/London (the default) and
// closed for one in America/New_York, and the other way round.
func TestRedeemWindowInTenantZone(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		timezone string // the tenant's setting ("" none)
		open     string // the zone whose hour's window is open
		closed   string
	}{
		{"LondonByDefault", "", "Europe/London", "America/New_York"},
		{"London", "Europe/London", "Europe/London", "America/New_York"},
		{"NewYork", "America/New_York", "America/New_York", "Europe/London"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := ts.New(t)
			if tc.timezone != "" {
				h.SetSettings(tenant.Settings{Timezone: tc.timezone})
			}
			at := advanceToUTC(h, 12)
			// A window of one hour starting exactly at the zone's hour now
			// (the boundary: startTime is inclusive).
			window := func(z string) string {
				hr := at.In(zone(t, z)).Hour()
				return newPerk(t, h, map[string]any{"dateTimeRestriction": map[string]any{"startTime": hr * 100, "endTime": (hr + 1) * 100}})
			}
			open, closed := window(tc.open), window(tc.closed)
			uid, token, _ := h.ActiveUser(t, "Hour", "Window")
			for _, p := range []string{open, closed} {
				grant(t, h, p, uid, 10)
			}
			for _, caller := range []struct {
				name    string
				headers ts.Headers
			}{{"User", ts.Token(token)}, {"ServiceKey", h.Admin()}} {
				t.Run(caller.name, func(t *testing.T) {
					h.Do("POST", redeemPath(uid, open), map[string]any{"valueToRedeem": 1}, caller.headers).Expect(t, 200, "")
					h.Do("POST", redeemPath(uid, closed), map[string]any{"valueToRedeem": 1}, caller.headers).Expect(t, 422, "OUTSIDE_REDEMPTION_WINDOW")
				})
			}
		})
	}
}

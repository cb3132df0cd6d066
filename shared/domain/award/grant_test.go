package award_test

import (
	"testing"

	ts "github.com/loyalty-platform/platform/shared/testkit"
)

func TestGrant(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	uid := h.AdminUser(t, "Gus", "Granted")
	perkID := newPerk(t, h, map[string]any{"points": map[string]any{"initial": 5, "max": 20}})

	a := grant(t, h, perkID, uid, nil)
	if got, want := available(t, a), 5; got != want {
		t.Errorf("first grant (default points.initial): available = %d, want %d", got, want)
	}
	if a["_id"] != uid+"-"+perkID || a["perkId"] != perkID || a["userId"] != uid || a["title"] != "Card" {
		t.Errorf("award = %v", a)
	}
	a = grant(t, h, perkID, uid, 3)
	if got, want := available(t, a), 8; got != want {
		t.Errorf("second grant: available = %d, want %d", got, want)
	}
	a = h.Do("POST", "/perks/"+perkID+"/awards", map[string]any{"userId": uid, "points": 100}, h.Admin()).Expect(t, 200, "").Map(t)
	if got, want := available(t, a), 20; got != want {
		t.Errorf("grant beyond max: available = %d, want %d (clamped)", got, want)
	}
	if got := pts(a)["totalGranted"]; got != 20.0 {
		t.Errorf("totalGranted = %v, want 20", got)
	}
	awards := pointAwards(t, h, uid, "", h.Admin())
	if len(awards) != 1 {
		t.Fatalf("user holds %d awards, want 1 (one award per user and perk)", len(awards))
	}
	granted := actionsOf(t, h, uid, "AWARD_GRANTED")
	if len(granted) != 3 {
		t.Fatalf("AWARD_GRANTED actions = %d, want 3", len(granted))
	}
	if got := granted[0].Metadata["pointsGranted"]; got != 12.0 {
		t.Errorf("clamped grant's pointsGranted = %v, want 12", got)
	}
	if got := granted[0].Context.User; got == nil || got.ID != uid || got.Name != "Gus Granted" {
		t.Errorf("action user = %+v", got)
	}
}

func TestGrantGlobalPerk(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	uid := h.AdminUser(t, "Gail", "Global")
	perkID := newPerk(t, h, map[string]any{"isGlobal": true, "template": "PSEUDO_CURRENCY", "points": map[string]any{"initial": 7}})
	awards := pointAwards(t, h, uid, "", h.Admin())
	if len(awards) != 1 || available(t, awards[0].(map[string]any)) != 7 {
		t.Fatalf("a new user's awards = %v, want the global perk's with 7 points", awards)
	}
	if got := available(t, grant(t, h, perkID, uid, 3)); got != 10 {
		t.Errorf("grant on a global award: available = %d, want 10", got)
	}
	other := h.AdminUser(t, "Otto", "Other")
	if got := available(t, pointAwards(t, h, other, "", h.Admin())[0].(map[string]any)); got != 7 {
		t.Errorf("another user's global award = %d, want 7 (no fan-out, untouched)", got)
	}
}

func TestGrantErrors(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	uid, token, _ := h.ActiveUser(t, "Una", "User")
	perkID := newPerk(t, h, nil)
	disabled := newPerk(t, h, map[string]any{"enabled": false})
	other, key := h.NewTenant(h.Tenant.Settings)
	foreign := ts.Headers{"x-service-auth-token", key, "x-application-id", other.ID}
	tests := []struct {
		name    string
		path    string
		body    any
		headers ts.Headers
		status  int
		code    string
	}{
		{"UserIsNotAdmin", "/pointperks/" + perkID + "/awards", map[string]any{"userId": uid}, ts.Token(token), 401, "UNAUTHORIZED"},
		{"Anonymous", "/pointperks/" + perkID + "/awards", map[string]any{"userId": uid}, h.Anon(), 401, "UNAUTHORIZED"},
		{"MissingUserID", "/pointperks/" + perkID + "/awards", map[string]any{"points": 1}, h.Admin(), 422, "VALIDATION_FAILED"},
		{"NegativePoints", "/pointperks/" + perkID + "/awards", map[string]any{"userId": uid, "points": -1}, h.Admin(), 422, "VALIDATION_FAILED"},
		{"FractionPoints", "/pointperks/" + perkID + "/awards", map[string]any{"userId": uid, "points": 1.5}, h.Admin(), 422, "VALIDATION_FAILED"},
		{"UnknownField", "/pointperks/" + perkID + "/awards", map[string]any{"userId": uid, "extra": 1}, h.Admin(), 422, "VALIDATION_FAILED"},
		{"UnknownUser", "/pointperks/" + perkID + "/awards", map[string]any{"userId": "5f1c0a9b2d3e4f5a6b7c8d9e"}, h.Admin(), 404, "NOT_FOUND"},
		{"UnknownPerk", "/pointperks/5f1c0a9b2d3e4f5a6b7c8d9e/awards", map[string]any{"userId": uid}, h.Admin(), 404, "NOT_FOUND"},
		{"UnknownLocation", "/pointperks/" + perkID + "/awards", map[string]any{"userId": uid, "locationId": "5f1c0a9b2d3e4f5a6b7c8d9e"}, h.Admin(), 422, "VALIDATION_FAILED"},
		{"ErrPerkDisabled", "/pointperks/" + disabled + "/awards", map[string]any{"userId": uid}, h.Admin(), 422, "PERK_DISABLED"},
		{"OtherTenantsPerk", "/pointperks/" + perkID + "/awards", map[string]any{"userId": uid}, foreign, 404, "NOT_FOUND"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h.Do("POST", tc.path, tc.body, tc.headers).Expect(t, tc.status, tc.code)
		})
	}
	if n := len(pointAwards(t, h, uid, "?includeDisabled=true", h.Admin())); n != 0 {
		t.Errorf("refused grants left %d awards", n)
	}
	if n := len(actionsOf(t, h, uid, "AWARD_GRANTED")); n != 0 {
		t.Errorf("refused grants recorded %d actions", n)
	}
}

func TestLegacyGrantToUser(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	uid := h.AdminUser(t, "Leo", "Legacy")
	perkID := newPerk(t, h, map[string]any{"points": map[string]any{"initial": 2}})
	a := h.Do("POST", "/perks/"+perkID+"/grant", map[string]any{"userId": uid}, h.Admin()).Expect(t, 200, "").Map(t)
	if a["_id"] != perkID || a["awardId"] != uid+"-"+perkID || available(t, a) != 2 {
		t.Errorf("legacy grant answer = %v, want the perk-shaped award", a)
	}
	h.Do("POST", "/perks/"+perkID+"/grant", map[string]any{}, h.Admin()).Expect(t, 422, "VALIDATION_FAILED")
	h.Do("POST", "/perks/"+perkID+"/grant", map[string]any{"userId": uid, "segmentId": "x"}, h.Admin()).Expect(t, 422, "VALIDATION_FAILED")
}

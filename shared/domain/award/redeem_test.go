package award_test

import (
	"fmt"
	"sync"
	"testing"
	"time"

	ts "github.com/loyalty-platform/platform/shared/testkit"
)

func redeemPath(uid, perkID string) string {
	return "/users/" + uid + "/pointawards/" + uid + "-" + perkID + "/redeem"
}

func TestRedeemConcurrently(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	uid := h.AdminUser(t, "Cora", "Current")
	perkID := newPerk(t, h, map[string]any{"template": "PSEUDO_CURRENCY"})
	grant(t, h, perkID, uid, 100)

	const n = 25
	statuses := make([]int, n)
	codes := make([]string, n)
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := h.Do("POST", redeemPath(uid, perkID), map[string]any{"valueToRedeem": 10}, h.Admin())
			statuses[i] = r.Status
			if r.Status != 200 {
				var e struct{ Code string }
				r.JSON(t, &e)
				codes[i] = e.Code
			}
		}()
	}
	wg.Wait()
	ok, insufficient := 0, 0
	for i, s := range statuses {
		switch {
		case s == 200:
			ok++
		case s == 422 && codes[i] == "INSUFFICIENT_POINTS":
			insufficient++
		default:
			t.Errorf("redeem %d: status %d code %q", i, s, codes[i])
		}
	}
	if ok != 10 || insufficient != 15 {
		t.Errorf("of %d redeems of 10 from 100: %d succeeded, %d INSUFFICIENT_POINTS; want 10 and 15", n, ok, insufficient)
	}
	a := pointAwards(t, h, uid, "", h.Admin())[0].(map[string]any)
	if got := available(t, a); got != 0 {
		t.Errorf("available = %d, want 0", got)
	}
	if got := len(actionsOf(t, h, uid, "AWARD_REDEEMED")); got != 10 {
		t.Errorf("AWARD_REDEEMED actions = %d, want 10 (one per redemption, none for the refused)", got)
	}
}

func TestRedeemRules(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	uid, token, _ := h.ActiveUser(t, "Rita", "Rules")
	other, otherToken, _ := h.ActiveUser(t, "Olga", "Other")
	loc := h.Do("POST", "/locations", map[string]any{"title": "Soho", "geo": []float64{-0.13, 51.51}, "timezone": "Europe/London"}, h.Admin()).Expect(t, 201, "").Map(t)["_id"].(string)
	elsewhere := h.Do("POST", "/locations", map[string]any{"title": "Leeds", "geo": []float64{-1.5, 53.8}}, h.Admin()).Expect(t, 201, "").Map(t)["_id"].(string)

	plain := newPerk(t, h, map[string]any{"points": map[string]any{"min": 5}})
	limited := newPerk(t, h, map[string]any{"points": map[string]any{"maxTotalRedemptions": 2}})
	located := newPerk(t, h, map[string]any{"locationIds": []string{loc}})
	// Allowed only on a day that is never today: the day after today in
	// the tenant's zone (Europe/London by default).
	london, err := time.LoadLocation("Europe/London")
	if err != nil {
		t.Fatal(err)
	}
	tomorrow := 1 << ((int(h.Clock.Now().In(london).Weekday()) + 7) % 7) // Monday=1 ... Sunday=64, shifted one day on
	windowed := newPerk(t, h, map[string]any{"dateTimeRestriction": map[string]any{"daysOfWeek": tomorrow}})
	future := newPerk(t, h, map[string]any{"dateTimeRestriction": map[string]any{"startDate": "2099-01-01"}})
	disabled := newPerk(t, h, nil)
	for _, p := range []string{plain, limited, located, windowed, future, disabled} {
		grant(t, h, p, uid, 20)
	}
	h.Do("DELETE", "/perks/"+disabled, nil, h.Admin()).Expect(t, 204, "")
	grant(t, h, plain, other, 20)

	body := func(v int, loc string) map[string]any {
		b := map[string]any{"valueToRedeem": v}
		if loc != "" {
			b["locationId"] = loc
		}
		return b
	}
	user := ts.Token(token)
	tests := []struct {
		name    string
		path    string
		body    any
		headers ts.Headers
		status  int
		code    string
	}{
		{"OwnAward", redeemPath(uid, plain), body(5, ""), user, 200, ""},
		{"ErrInsufficientPoints", redeemPath(uid, plain), body(11, ""), user, 422, "INSUFFICIENT_POINTS"}, // 15 left, floor 5
		{"DownToMin", redeemPath(uid, plain), body(10, ""), user, 200, ""},
		{"BelowMin", redeemPath(uid, plain), body(1, ""), user, 422, "INSUFFICIENT_POINTS"},
		{"ZeroValue", redeemPath(uid, plain), body(0, ""), user, 422, "VALIDATION_FAILED"},
		{"MissingValue", redeemPath(uid, plain), map[string]any{}, user, 422, "VALIDATION_FAILED"},
		{"FractionValue", redeemPath(uid, plain), map[string]any{"valueToRedeem": 0.5}, user, 422, "VALIDATION_FAILED"},
		{"AnotherUsersAward", redeemPath(other, plain), body(1, ""), user, 404, "NOT_FOUND"},
		{"AwardOfAnotherUserInPath", "/users/" + uid + "/pointawards/" + other + "-" + plain + "/redeem", body(1, ""), user, 404, "NOT_FOUND"},
		{"OtherUserRedeemsMine", redeemPath(uid, limited), body(1, ""), ts.Token(otherToken), 404, "NOT_FOUND"},
		{"UnknownAward", redeemPath(uid, "5f1c0a9b2d3e4f5a6b7c8d9e"), body(1, ""), user, 404, "NOT_FOUND"},
		{"NeverGranted", redeemPath(other, limited), body(1, ""), h.Admin(), 404, "NOT_FOUND"},
		{"MalformedAwardID", "/users/" + uid + "/pointawards/nonsense/redeem", body(1, ""), user, 404, "NOT_FOUND"},
		{"Limited1", redeemPath(uid, limited), body(1, ""), user, 200, ""},
		{"Limited2", redeemPath(uid, limited), body(1, ""), user, 200, ""},
		{"ErrRedemptionLimit", redeemPath(uid, limited), body(1, ""), user, 422, "REDEMPTION_LIMIT_REACHED"},
		{"LocationMissing", redeemPath(uid, located), body(1, ""), user, 422, "LOCATION_NOT_ALLOWED"},
		{"LocationElsewhere", redeemPath(uid, located), body(1, elsewhere), user, 422, "LOCATION_NOT_ALLOWED"},
		{"LocationUnknown", redeemPath(uid, located), body(1, "5f1c0a9b2d3e4f5a6b7c8d9e"), user, 422, "VALIDATION_FAILED"},
		{"LocationAllowed", redeemPath(uid, located), body(1, loc), user, 200, ""},
		{"OutsideDays", redeemPath(uid, windowed), body(1, ""), user, 422, "OUTSIDE_REDEMPTION_WINDOW"},
		{"BeforeStartDate", redeemPath(uid, future), body(1, ""), user, 422, "OUTSIDE_REDEMPTION_WINDOW"},
		{"ErrPerkDisabled", redeemPath(uid, disabled), body(1, ""), user, 422, "PERK_DISABLED"},
		{"Anonymous", redeemPath(uid, plain), body(1, ""), h.Anon(), 401, "UNAUTHORIZED"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h.Do("POST", tc.path, tc.body, tc.headers).Expect(t, tc.status, tc.code)
		})
	}
	got := map[string]int{}
	for _, a := range pointAwards(t, h, uid, "", user) {
		m := a.(map[string]any)
		got[m["perkId"].(string)] = available(t, m)
	}
	want := map[string]int{plain: 5, limited: 18, located: 19, windowed: 20, future: 20}
	for p, w := range want {
		if got[p] != w {
			t.Errorf("award of %s: available = %d, want %d", p, got[p], w)
		}
	}
	redeemed := actionsOf(t, h, uid, "AWARD_REDEEMED")
	if len(redeemed) != 5 {
		t.Errorf("AWARD_REDEEMED actions = %d, want 5", len(redeemed))
	}
	if l := redeemed[0].Context.Location; l == nil || l.ID != loc || redeemed[0].Metadata["locationId"] != loc {
		t.Errorf("the located redemption's action does not name its location: %+v", redeemed[0])
	}
}

func TestLegacyRedeemAnswersOlderSchema(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	uid := h.AdminUser(t, "Lea", "Legacy")
	perkID := newPerk(t, h, nil)
	grant(t, h, perkID, uid, 10)
	a := h.Do("POST", fmt.Sprintf("/users/%s/awards/%s-%s/redeem", uid, uid, perkID), map[string]any{"valueToRedeem": 4}, h.Admin()).Expect(t, 200, "").Map(t)
	if a["_id"] != perkID || a["awardId"] != uid+"-"+perkID || available(t, a) != 6 {
		t.Errorf("legacy redeem answer = %v", a)
	}
}

func TestRefund(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	uid, token, _ := h.ActiveUser(t, "Ray", "Refund")
	perkID := newPerk(t, h, map[string]any{"points": map[string]any{"max": 50}})
	grant(t, h, perkID, uid, 50)
	h.Do("POST", redeemPath(uid, perkID), map[string]any{"valueToRedeem": 30}, ts.Token(token)).Expect(t, 200, "")
	refund := "/users/" + uid + "/pointawards/" + uid + "-" + perkID + "/refund"

	h.Do("POST", refund, map[string]any{"value": 20}, ts.Token(token)).Expect(t, 401, "UNAUTHORIZED")
	a := h.Do("POST", refund, map[string]any{"value": 20}, h.Admin()).Expect(t, 200, "").Map(t)
	if got := available(t, a); got != 40 {
		t.Errorf("after refunding 20: available = %d, want 40", got)
	}
	h.Do("POST", refund, map[string]any{"value": 11}, h.Admin()).Expect(t, 422, "REFUND_EXCEEDS_REDEEMED")
	a = h.Do("POST", "/users/"+uid+"/awards/"+uid+"-"+perkID+"/refund", map[string]any{"value": 10}, h.Admin()).Expect(t, 200, "").Map(t)
	if got := available(t, a); got != 50 || a["_id"] != perkID {
		t.Errorf("legacy refund: available = %d (want 50), _id %v (want the perk's)", got, a["_id"])
	}
	h.Do("POST", refund, map[string]any{"value": 1}, h.Admin()).Expect(t, 422, "REFUND_EXCEEDS_REDEEMED")
	h.Do("POST", refund, map[string]any{}, h.Admin()).Expect(t, 422, "VALIDATION_FAILED")
	other := h.AdminUser(t, "Never", "Granted")
	h.Do("POST", "/users/"+other+"/pointawards/"+other+"-"+perkID+"/refund", map[string]any{"value": 1}, h.Admin()).Expect(t, 404, "NOT_FOUND")
	if got := len(actionsOf(t, h, uid, "AWARD_REFUNDED")); got != 2 {
		t.Errorf("AWARD_REFUNDED actions = %d, want 2", got)
	}
}

func TestSetPoints(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	uid, token, _ := h.ActiveUser(t, "Sam", "Setter")
	perkID := newPerk(t, h, map[string]any{"points": map[string]any{"max": 100}})
	global := newPerk(t, h, map[string]any{"isGlobal": true, "points": map[string]any{"initial": 3}})
	grant(t, h, perkID, uid, 10)
	path := "/pointawards/" + uid + "-" + perkID

	r := h.Do("PUT", path, map[string]any{"points": map[string]any{"available": 40}}, h.Admin()).Expect(t, 200, "")
	if len(r.Body) != 0 {
		t.Errorf("PUT /pointawards answered a body: %s", r.Body)
	}
	h.Do("PUT", "/pointawards/"+uid+"-"+global, map[string]any{"points": map[string]any{"available": 9}}, h.Admin()).Expect(t, 200, "")
	got := map[string]int{}
	for _, a := range pointAwards(t, h, uid, "", ts.Token(token)) {
		m := a.(map[string]any)
		got[m["perkId"].(string)] = available(t, m)
	}
	if got[perkID] != 40 || got[global] != 9 {
		t.Errorf("after PUT: %v, want 40 and 9", got)
	}
	if n := len(actionsOf(t, h, uid, "AWARD_GRANTED")); n != 1 {
		t.Errorf("PUT recorded actions: %d AWARD_GRANTED, want only the grant's 1", n)
	}
	other := h.AdminUser(t, "No", "Award")
	tests := []struct {
		name    string
		path    string
		body    any
		headers ts.Headers
		status  int
		code    string
	}{
		{"AboveMax", path, map[string]any{"points": map[string]any{"available": 101}}, h.Admin(), 422, "VALIDATION_FAILED"},
		{"Negative", path, map[string]any{"points": map[string]any{"available": -1}}, h.Admin(), 422, "VALIDATION_FAILED"},
		{"MissingAvailable", path, map[string]any{"points": map[string]any{}}, h.Admin(), 422, "VALIDATION_FAILED"},
		{"OtherField", path, map[string]any{"points": map[string]any{"available": 1, "max": 3}}, h.Admin(), 422, "VALIDATION_FAILED"},
		{"UserIsNotAdmin", path, map[string]any{"points": map[string]any{"available": 1}}, ts.Token(token), 401, "UNAUTHORIZED"},
		{"NotHeld", "/pointawards/" + other + "-" + perkID, map[string]any{"points": map[string]any{"available": 1}}, h.Admin(), 404, "NOT_FOUND"},
		{"UnknownUserGlobal", "/pointawards/5f1c0a9b2d3e4f5a6b7c8d9e-" + global, map[string]any{"points": map[string]any{"available": 1}}, h.Admin(), 404, "NOT_FOUND"},
		{"Malformed", "/pointawards/xyz", map[string]any{"points": map[string]any{"available": 1}}, h.Admin(), 404, "NOT_FOUND"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h.Do("PUT", tc.path, tc.body, tc.headers).Expect(t, tc.status, tc.code)
		})
	}
	t.Run("PointsNotEditableOnUser", func(t *testing.T) {
		h.Do("PUT", "/users/"+uid, map[string]any{"points": 5}, h.Admin()).Expect(t, 422, "POINTS_NOT_EDITABLE")
	})
}

package audience_test

import (
	"testing"

	ts "github.com/loyalty-platform/platform/shared/testkit"
)

// clubAwards returns the user's awards of perkID from GET
// /users/{userId}/pointawards.
func clubAwards(t *testing.T, h *ts.Harness, uid, perkID string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, a := range h.Do("GET", "/users/"+uid+"/pointawards", nil, h.Admin()).Expect(t, 200, "").Map(t)["awards"].([]any) {
		if m := a.(map[string]any); m["perkId"] == perkID {
			out = append(out, m)
		}
	}
	return out
}

func TestClubPerkHeldWhileMember(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	seg := newSegment(t, h, "PERSISTENT", "")
	club := h.Do("POST", "/perks", map[string]any{"title": "VIP", "template": "CLUB", "segmentId": seg, "points": map[string]any{"initial": 2}}, h.Admin()).Expect(t, 201, "").Map(t)["_id"].(string)
	u := h.AdminUser(t, "Vera", "VIP")
	grant := func(status int, code string) {
		h.Do("POST", "/pointperks/"+club+"/awards", map[string]any{"userId": u, "points": 5}, h.Admin()).Expect(t, status, code)
	}

	if got := clubAwards(t, h, u, club); len(got) != 0 {
		t.Fatalf("a non-member holds the CLUB perk: %v", got)
	}
	grant(422, "AWARD_NOT_HELD")
	h.Do("POST", "/segments/"+seg+"/members", map[string]any{"userIds": []string{u}}, h.Admin()).Expect(t, 200, "")
	got := clubAwards(t, h, u, club)
	if len(got) != 1 || got[0]["points"].(map[string]any)["available"] != 2.0 {
		t.Fatalf("a new member's CLUB award = %v, want one with points.initial 2", got)
	}
	joined := actionsOf(t, h, u, "AWARD_GRANTED")
	if len(joined) != 1 || joined[0].Metadata["source"] != "SEGMENT" || joined[0].Metadata["perkId"] != club {
		t.Errorf("joining recorded %+v, want one AWARD_GRANTED of the CLUB perk from SEGMENT", joined)
	}
	grant(200, "")
	h.Do("POST", "/users/"+u+"/pointawards/"+u+"-"+club+"/redeem", map[string]any{"valueToRedeem": 3}, h.Admin()).Expect(t, 200, "")

	h.Do("DELETE", "/segments/"+seg+"/members/"+u, nil, h.Admin()).Expect(t, 204, "")
	if got := clubAwards(t, h, u, club); len(got) != 0 {
		t.Errorf("a former member still holds the CLUB perk: %v", got)
	}
	if revoked := actionsOf(t, h, u, "AWARD_REVOKED"); len(revoked) != 1 || revoked[0].Metadata["reason"] != "REMOVED" {
		t.Errorf("AWARD_REVOKED = %+v", revoked)
	}
	h.Do("POST", "/users/"+u+"/pointawards/"+u+"-"+club+"/redeem", map[string]any{"valueToRedeem": 1}, h.Admin()).Expect(t, 422, "AWARD_NOT_HELD")
	h.Do("PUT", "/pointawards/"+u+"-"+club, map[string]any{"points": map[string]any{"available": 1}}, h.Admin()).Expect(t, 422, "AWARD_NOT_HELD")

	h.Do("POST", "/segments/"+seg+"/members", map[string]any{"userIds": []string{u}}, h.Admin()).Expect(t, 200, "")
	got = clubAwards(t, h, u, club)
	if len(got) != 1 || got[0]["points"].(map[string]any)["available"] != 4.0 {
		t.Errorf("rejoined: %v, want the stored award back with 4 points (2+5-3)", got)
	}
	user := h.Do("GET", "/users/"+u+"?include=points", nil, h.Admin()).Expect(t, 200, "").Map(t)
	if user["points"] != 4.0 {
		t.Errorf("include=points = %v, want 4", user["points"])
	}

	h.Do("DELETE", "/segments/"+seg, nil, h.Admin()).Expect(t, 409, "CONFLICT")
	h.Do("DELETE", "/perks/"+club, nil, h.Admin()).Expect(t, 204, "")
	h.Do("DELETE", "/segments/"+seg, nil, h.Admin()).Expect(t, 204, "")
	h.Do("PUT", "/perks/"+club, map[string]any{"enabled": true}, h.Admin()).Expect(t, 422, "VALIDATION_FAILED")
}

func TestLegacyGrantToSegment(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	seg := newSegment(t, h, "PERSISTENT", "")
	perk := h.Do("POST", "/perks", map[string]any{"title": "Promo", "template": "AD_HOC"}, h.Admin()).Expect(t, 201, "").Map(t)["_id"].(string)
	a, b := h.AdminUser(t, "A", "One"), h.AdminUser(t, "B", "Two")
	h.Do("POST", "/segments/"+seg+"/members", map[string]any{"userIds": []string{a, b}}, h.Admin()).Expect(t, 200, "")
	op := h.Do("POST", "/perks/"+perk+"/grant", map[string]any{"segmentId": seg, "points": 3}, h.Admin()).Expect(t, 202, "").Map(t)
	if res := h.WaitOperation(op["_id"].(string)); res["status"] != "DONE" || res["result"].(map[string]any)["granted"] != 2.0 {
		t.Errorf("segment grant = %v, want 2 granted", res)
	}
	for _, u := range []string{a, b} {
		if got := clubAwards(t, h, u, perk); len(got) != 1 || got[0]["points"].(map[string]any)["available"] != 3.0 {
			t.Errorf("award of %s = %v", u, got)
		}
	}
	h.Do("POST", "/perks/"+perk+"/grant", map[string]any{"segmentId": "5f1c0a9b2d3e4f5a6b7c8d9e"}, h.Admin()).Expect(t, 422, "VALIDATION_FAILED")
}

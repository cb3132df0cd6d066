package idempotency_test

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"

	ts "github.com/loyalty-platform/platform/shared/testkit"
)

// key returns the Idempotency-Key header.
func key(k string) ts.Headers { return ts.Headers{"Idempotency-Key", k} }

// shopper is an ACTIVE user with a profile photo (check-ins need one).
func shopper(t *testing.T, h *ts.Harness, first string) string {
	t.Helper()
	id := h.AdminUser(t, first, "Shopper")
	h.Do("PUT", "/users/"+id+"/avatar", ts.JPEG(), h.Admin(), ts.Headers{"Content-Type", "image/jpeg"}).Expect(t, 200, "")
	return id
}

// shop is an ACTIVE location offering check-ins.
func shop(t *testing.T, h *ts.Harness, title string) string {
	t.Helper()
	return h.Do("POST", "/locations", map[string]any{"title": title, "geo": []float64{-0.13, 51.51}, "state": "ACTIVE",
		"timezone": "Europe/London", "services": map[string]any{"checkins": true}}, h.Admin()).Expect(t, 201, "").Map(t)["_id"].(string)
}

// pointsPerk is a PSEUDO_CURRENCY perk (no initial points, a high max).
func pointsPerk(t *testing.T, h *ts.Harness) string {
	t.Helper()
	return h.Do("POST", "/perks", map[string]any{"title": "Points", "template": "PSEUDO_CURRENCY",
		"points": map[string]any{"initial": 0, "max": 1000000}}, h.Admin()).Expect(t, 201, "").Map(t)["_id"].(string)
}

// grantPoints grants points of perkID to uid without a key.
func grantPoints(t *testing.T, h *ts.Harness, perkID, uid string, points int) {
	t.Helper()
	h.Do("POST", "/pointperks/"+perkID+"/awards", map[string]any{"userId": uid, "points": points}, h.Admin()).Expect(t, 200, "")
}

// redeemPath is the redeem route of uid's award of perkID.
func redeemPath(uid, perkID string) string {
	return "/users/" + uid + "/pointawards/" + uid + "-" + perkID + "/redeem"
}

// points returns points.available of each of the user's awards, by perk.
func points(t *testing.T, h *ts.Harness, uid string) map[string]int {
	t.Helper()
	out := map[string]int{}
	for _, a := range h.Do("GET", "/users/"+uid+"/pointawards", nil, h.Admin()).Expect(t, 200, "").Map(t)["awards"].([]any) {
		m := a.(map[string]any)
		out[m["perkId"].(string)] = int(m["points"].(map[string]any)["available"].(float64))
	}
	return out
}

// balance returns the user's app balance.
func balance(t *testing.T, h *ts.Harness, uid string) float64 {
	t.Helper()
	return h.Do("GET", "/users/"+uid, nil, h.Admin()).Expect(t, 200, "").Map(t)["balance"].(float64)
}

// actionCounts counts the user's actions by type.
func actionCounts(t *testing.T, h *ts.Harness, uid string) map[string]int {
	t.Helper()
	all, err := h.Deps.Actions.ByUser(context.Background(), h.Tenant.ID, uid, 10000)
	if err != nil {
		t.Fatalf("actions: %v", err)
	}
	out := map[string]int{}
	for _, a := range all {
		out[a.Type]++
	}
	return out
}

// state summarises everything a request could change for a user: the
// actions by type, the points by perk, the app balance and the live
// check-ins.
func state(t *testing.T, h *ts.Harness, uid string) string {
	t.Helper()
	var parts []string
	for k, v := range actionCounts(t, h, uid) {
		parts = append(parts, fmt.Sprintf("action %s=%d", k, v))
	}
	for k, v := range points(t, h, uid) {
		parts = append(parts, fmt.Sprintf("points %s=%d", k, v))
	}
	sort.Strings(parts)
	checkins := h.Do("GET", "/users/"+uid+"/checkins", nil, h.Admin()).Expect(t, 200, "").Map(t)["checkins"].([]any)
	parts = append(parts, fmt.Sprintf("balance=%v", balance(t, h, uid)), fmt.Sprintf("checkins=%d", len(checkins)))
	return strings.Join(parts, "; ")
}

package pos_test

import (
	"context"
	"testing"

	"github.com/loyalty-platform/platform/shared/domain/action"
	ts "github.com/loyalty-platform/platform/shared/testkit"
)

// shopper is a user with a profile photo (check-ins need one).
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

// pointsRule creates a rule: ORDER_COMPLETED at loc grants perPerUnit
// points per unit of the order value of perkID.
func pointsRule(t *testing.T, h *ts.Harness, loc, perkID string, perUnit float64) string {
	t.Helper()
	return h.Do("POST", "/rules", map[string]any{
		"title": "Points per pound", "trigger": "ORDER_COMPLETED",
		"conditions": []map[string]any{{"path": "context.location._id", "operator": "EQ", "value": loc}},
		"effects":    []map[string]any{{"type": "GRANT_PERK", "perkId": perkID, "pointsPerUnit": perUnit}},
	}, h.Admin()).Expect(t, 201, "").Map(t)["_id"].(string)
}

func newPerk(t *testing.T, h *ts.Harness, body map[string]any) string {
	t.Helper()
	b := map[string]any{"title": "Points", "template": "PSEUDO_CURRENCY"}
	for k, v := range body {
		b[k] = v
	}
	return h.Do("POST", "/perks", b, h.Admin()).Expect(t, 201, "").Map(t)["_id"].(string)
}

// available returns the points of the user's award of perkID (0 when
// they hold none).
func available(t *testing.T, h *ts.Harness, uid, perkID string) int {
	t.Helper()
	for _, a := range h.Do("GET", "/users/"+uid+"/pointawards", nil, h.Admin()).Expect(t, 200, "").Map(t)["awards"].([]any) {
		m := a.(map[string]any)
		if m["perkId"] == perkID {
			return int(m["points"].(map[string]any)["available"].(float64))
		}
	}
	return 0
}

func actionsOf(t *testing.T, h *ts.Harness, uid, typ string) []action.Action {
	t.Helper()
	all, err := h.Deps.Actions.ByUser(context.Background(), h.Tenant.ID, uid, 1000)
	if err != nil {
		t.Fatal(err)
	}
	var out []action.Action
	for _, a := range all {
		if a.Type == typ {
			out = append(out, a)
		}
	}
	return out
}

func balance(t *testing.T, h *ts.Harness, uid string) float64 {
	t.Helper()
	return h.Do("GET", "/users/"+uid, nil, h.Admin()).Expect(t, 200, "").Map(t)["balance"].(float64)
}

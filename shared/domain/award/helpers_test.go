package award_test

import (
	"context"
	"testing"

	"github.com/loyalty-platform/platform/shared/domain/action"
	ts "github.com/loyalty-platform/platform/shared/testkit"
)

// newPerk creates a perk through POST /perks (a STAMP_CARD with a
// visualisation unless body says otherwise) and returns its id.
func newPerk(t *testing.T, h *ts.Harness, body map[string]any) string {
	t.Helper()
	b := map[string]any{"title": "Card", "template": "STAMP_CARD", "visualisation": map[string]any{"titleText": "Card"}}
	for k, v := range body {
		if v == nil {
			delete(b, k)
			continue
		}
		b[k] = v
	}
	return h.Do("POST", "/perks", b, h.Admin()).Expect(t, 201, "").Map(t)["_id"].(string)
}

func pts(m map[string]any) map[string]any { return m["points"].(map[string]any) }

// available returns points.available of an award body.
func available(t *testing.T, m map[string]any) int {
	t.Helper()
	v, ok := pts(m)["available"].(float64)
	if !ok {
		t.Fatalf("no points.available in %v", m)
	}
	return int(v)
}

// grant grants points (nil: the perk's default) and returns the award.
func grant(t *testing.T, h *ts.Harness, perkID, userID string, points any) map[string]any {
	t.Helper()
	body := map[string]any{"userId": userID}
	if points != nil {
		body["points"] = points
	}
	return h.Do("POST", "/pointperks/"+perkID+"/awards", body, h.Admin()).Expect(t, 200, "").Map(t)
}

// actionsOf returns the user's actions of a type, newest first.
func actionsOf(t *testing.T, h *ts.Harness, userID, typ string) []action.Action {
	t.Helper()
	all, err := h.Deps.Actions.ByUser(context.Background(), h.Tenant.ID, userID, 1000)
	if err != nil {
		t.Fatalf("actions: %v", err)
	}
	var out []action.Action
	for _, a := range all {
		if a.Type == typ {
			out = append(out, a)
		}
	}
	return out
}

// pointAwards returns GET /users/{userId}/pointawards as the caller.
func pointAwards(t *testing.T, h *ts.Harness, userID, query string, caller ts.Headers) []any {
	t.Helper()
	return h.Do("GET", "/users/"+userID+"/pointawards"+query, nil, caller).Expect(t, 200, "").Map(t)["awards"].([]any)
}

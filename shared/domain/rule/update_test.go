package rule_test

import (
	"testing"

	ts "github.com/loyalty-platform/platform/shared/testkit"
)

// TestUpdateRuleOfDeletedSegment checks that a rule whose segment was
// deleted can still be disabled and renamed (its perks and segments are
// checked when its effects change), while new effects naming the deleted
// segment are refused.
func TestUpdateRuleOfDeletedSegment(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	seg := newSegment(t, h)
	id := newRule(t, h, ruleBody("ORDER_COMPLETED", []map[string]any{{"type": "ADD_TO_SEGMENT", "segmentId": seg}}))
	h.Do("DELETE", "/segments/"+seg, nil, h.Admin()).Expect(t, 204, "")
	for _, c := range []struct {
		name   string
		body   map[string]any
		status int
		code   string
	}{
		{"Disable", map[string]any{"enabled": false}, 200, ""},
		{"Rename", map[string]any{"title": "Old VIP rule"}, 200, ""},
		{"EffectsNamingTheDeletedSegment", map[string]any{"effects": []map[string]any{{"type": "REMOVE_FROM_SEGMENT", "segmentId": seg}}}, 422, "VALIDATION_FAILED"},
	} {
		t.Run(c.name, func(t *testing.T) {
			h.Do("PUT", "/rules/"+id, c.body, h.Admin()).Expect(t, c.status, c.code)
		})
	}
	got := h.Do("GET", "/rules/"+id, nil, h.Admin()).Expect(t, 200, "").Map(t)
	if got["enabled"] != false || got["title"] != "Old VIP rule" {
		t.Errorf("rule = %v", got)
	}
}

package rule_test

import (
	"strings"
	"testing"

	ts "github.com/loyalty-platform/platform/shared/testkit"
)

func TestRuleValidation(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	perk := newPerk(t, h, h.Admin(), nil)
	seg := newSegment(t, h)
	other, key := h.NewTenant(h.Tenant.Settings)
	theirPerk := newPerk(t, h, ts.Headers{"x-service-auth-token", key, "x-application-id", other.ID}, nil)
	const unknownID = "5f1c0a9b2d3e4f5a6b7c8d9e"

	valid := func() map[string]any {
		return map[string]any{"title": "Valid", "trigger": "ORDER_COMPLETED", "effects": []any{grant(perk, 1)}}
	}
	with := func(k string, v any) map[string]any {
		b := valid()
		b[k] = v
		return b
	}
	without := func(k string) map[string]any {
		b := valid()
		delete(b, k)
		return b
	}
	conds := func(c ...any) map[string]any { return with("conditions", c) }
	effects := func(e ...any) map[string]any { return with("effects", e) }
	many := func(n int, x any) []any {
		out := make([]any, n)
		for i := range out {
			out[i] = x
		}
		return out
	}
	tests := []struct {
		name  string
		body  map[string]any
		field string
	}{
		{"MissingTitle", without("title"), "title: is required"},
		{"BlankTitle", with("title", "   "), "title"},
		{"LongTitle", with("title", strings.Repeat("x", 256)), "title: must be 1 to"},
		{"TitleNotString", with("title", 5), "title"},
		{"NullTitle", with("title", nil), "title"},
		{"MissingTrigger", without("trigger"), "trigger"},
		{"LowerCaseTrigger", with("trigger", "order_completed"), "trigger"},
		{"TriggerWithSpace", with("trigger", "ORDER COMPLETED"), "trigger"},
		{"TriggerDoubleUnderscore", with("trigger", "ORDER__COMPLETED"), "trigger"},
		{"LongTrigger", with("trigger", strings.Repeat("A", 65)), "trigger"},
		{"UnknownTriggerOf64", with("trigger", strings.Repeat("A", 64)), "trigger"},
		{"TriggerTypo", with("trigger", "ORDER_COMPLETE"), "trigger"},
		{"TriggerOfBudgetExceeded", with("trigger", "RULES_BUDGET_EXCEEDED"), "trigger"},
		{"TriggerAliasLowerCase", with("trigger", "checkin"), "trigger"},
		{"NoEffects", without("effects"), "effects"},
		{"EmptyEffects", effects(), "effects"},
		{"TooManyEffects", with("effects", many(11, grant(perk, 1))), "effects"},
		{"TooManyConditions", with("conditions", many(21, cond("metadata.value", "GT", 1))), "conditions"},
		{"UnknownRoot", conds(cond("user._id", "EQ", "x")), "conditions[0].path"},
		{"EmptyPath", conds(cond("", "EQ", "x")), "conditions[0].path"},
		{"EmptySegment", conds(cond("metadata..value", "EQ", 1)), "conditions[0].path"},
		{"TrailingDot", conds(cond("metadata.", "EQ", 1)), "conditions[0].path"},
		{"ArrayIndex", conds(cond("metadata.basket[0]", "EQ", 1)), "conditions[0].path"},
		{"LongPath", conds(cond("metadata."+strings.Repeat("a", 200), "EQ", 1)), "conditions[0].path"},
		{"SecondConditionBad", conds(cond("metadata.value", "GT", 1), cond("metadata.value", "MATCHES", 1)), "conditions[1].operator"},
		{"UnknownOperator", conds(cond("metadata.value", "MATCHES", 1)), "conditions[0].operator"},
		{"LowerCaseOperator", conds(cond("metadata.value", "eq", 1)), "conditions[0].operator"},
		{"MissingValue", conds(cond("metadata.value", "EQ", nil)), "conditions[0].value"},
		{"NullValue", conds(map[string]any{"path": "metadata.value", "operator": "EQ", "value": nil}), "conditions[0].value"},
		{"NullInArray", conds(cond("metadata.value", "IN", []any{1, nil})), "conditions[0].value[1]"},
		{"INNotArray", conds(cond("metadata.value", "IN", 5)), "conditions[0].value"},
		{"NINNotArray", conds(cond("metadata.value", "NIN", "a")), "conditions[0].value"},
		{"GTBoolean", conds(cond("metadata.value", "GT", true)), "conditions[0].value"},
		{"LTEArray", conds(cond("metadata.value", "LTE", []int{1})), "conditions[0].value"},
		{"EXISTSString", conds(cond("metadata.value", "EXISTS", "yes")), "conditions[0].value"},
		{"EXISTSNumber", conds(cond("metadata.value", "EXISTS", 1)), "conditions[0].value"},
		{"HugeValue", conds(cond("metadata.value", "EQ", strings.Repeat("x", 4100))), "conditions[0].value"},
		{"UnknownConditionField", conds(map[string]any{"path": "metadata.value", "operator": "EQ", "value": 1, "negate": true}), "conditions[0].negate"},
		{"GrantWithoutPerk", effects(map[string]any{"type": "GRANT_PERK", "points": 1}), "effects[0].perkId"},
		{"GrantWithoutAmount", effects(map[string]any{"type": "GRANT_PERK", "perkId": perk}), "effects[0]"},
		{"GrantPointsAndPerUnit", effects(map[string]any{"type": "GRANT_PERK", "perkId": perk, "points": 1, "pointsPerUnit": 1}), "effects[0]"},
		{"GrantPerUnitAndPerItem", effects(map[string]any{"type": "GRANT_PERK", "perkId": perk, "pointsPerUnit": 1, "pointsPerItem": 1}), "effects[0]"},
		{"GrantZeroPoints", effects(map[string]any{"type": "GRANT_PERK", "perkId": perk, "points": 0}), "effects[0].points"},
		{"GrantNegativePoints", effects(map[string]any{"type": "GRANT_PERK", "perkId": perk, "points": -5}), "effects[0].points"},
		{"GrantFractionalPoints", effects(map[string]any{"type": "GRANT_PERK", "perkId": perk, "points": 1.5}), "effects[0].points"},
		{"GrantTooManyPoints", effects(map[string]any{"type": "GRANT_PERK", "perkId": perk, "points": 1_000_000_001}), "effects[0].points"},
		{"GrantZeroPerUnit", effects(map[string]any{"type": "GRANT_PERK", "perkId": perk, "pointsPerUnit": 0}), "effects[0].pointsPerUnit"},
		{"GrantZeroPerItem", effects(map[string]any{"type": "GRANT_PERK", "perkId": perk, "pointsPerItem": 0}), "effects[0].pointsPerItem"},
		{"GrantWithSegment", effects(map[string]any{"type": "GRANT_PERK", "perkId": perk, "points": 1, "segmentId": seg}), "effects[0].segmentId"},
		{"GrantUnknownPerk", effects(grant(unknownID, 1)), "effects[0].perkId"},
		{"GrantPerkOfAnotherTenant", effects(grant(theirPerk, 1)), "effects[0].perkId"},
		{"SecondEffectUnknownPerk", effects(grant(perk, 1), grant(unknownID, 1)), "effects[1].perkId"},
		{"AddWithoutSegment", effects(map[string]any{"type": "ADD_TO_SEGMENT"}), "effects[0].segmentId"},
		{"RemoveWithoutSegment", effects(map[string]any{"type": "REMOVE_FROM_SEGMENT"}), "effects[0].segmentId"},
		{"SegmentWithPoints", effects(map[string]any{"type": "ADD_TO_SEGMENT", "segmentId": seg, "points": 1}), "effects[0]"},
		{"SegmentWithPerk", effects(map[string]any{"type": "REMOVE_FROM_SEGMENT", "segmentId": seg, "perkId": perk}), "effects[0]"},
		{"UnknownSegment", effects(map[string]any{"type": "ADD_TO_SEGMENT", "segmentId": unknownID}), "effects[0].segmentId"},
		{"MissingEffectType", effects(map[string]any{"perkId": perk, "points": 1}), "effects[0].type"},
		{"UnknownEffectType", effects(map[string]any{"type": "SEND_EMAIL", "perkId": perk, "points": 1}), "effects[0].type"},
		{"UnknownEffectField", effects(map[string]any{"type": "GRANT_PERK", "perkId": perk, "points": 1, "bonus": 1}), "effects[0].bonus"},
		{"UnknownField", with("priority", 1), "priority"},
		{"EnabledNotBoolean", with("enabled", "true"), "enabled"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			msg := h.Do("POST", "/rules", tc.body, h.Admin()).Expect(t, 422, "VALIDATION_FAILED").Map(t)["message"].(string)
			want := tc.field // a field, or a field with the start of its message
			if !strings.Contains(want, ":") {
				want += ":"
			}
			if !strings.HasPrefix(msg, want) {
				t.Errorf("message = %q, want it to start %q", msg, want)
			}
		})
	}
	for _, body := range []string{"", "[]", "{", `{"title":"x"} {}`} {
		h.Do("POST", "/rules", body, h.Admin()).Expect(t, 422, "VALIDATION_FAILED")
	}
	huge := `{"title":"` + strings.Repeat("x", 1<<20) + `","trigger":"ORDER_COMPLETED"}`
	h.Do("POST", "/rules", huge, h.Admin()).Expect(t, 413, "PAYLOAD_TOO_LARGE")
	if items := h.Do("GET", "/rules", nil, h.Admin()).Expect(t, 200, "").Map(t)["items"].([]any); len(items) != 0 {
		t.Fatalf("refused rules were stored: %v", items)
	}
	// The valid body the cases start from is accepted (the cases fail for
	// their own reason), and so are the limits themselves.
	t.Run("Limits", func(t *testing.T) {
		for name, body := range map[string]map[string]any{
			"Base":           valid(),
			"TitleOf255":     with("title", strings.Repeat("x", 255)),
			"TriggerAlias":   with("trigger", "CHECKIN"),
			"TenEffects":     with("effects", many(10, grant(perk, 1))),
			"TwentyConds":    with("conditions", many(20, cond("metadata.value", "GT", 1))),
			"ExistsNoValue":  conds(cond("metadata.value", "EXISTS", nil)),
			"ExistsFalse":    conds(cond("metadata.value", "EXISTS", false)),
			"GTString":       conds(cond("when.timestamp", "GT", "2024-01-01")),
			"EQObject":       conds(cond("context.location", "EQ", map[string]any{"a": 1})),
			"Segments":       effects(map[string]any{"type": "ADD_TO_SEGMENT", "segmentId": seg}, map[string]any{"type": "REMOVE_FROM_SEGMENT", "segmentId": seg}),
			"MaxPoints":      effects(map[string]any{"type": "GRANT_PERK", "perkId": perk, "points": 1_000_000_000}),
			"SmallPerUnit":   effects(map[string]any{"type": "GRANT_PERK", "perkId": perk, "pointsPerUnit": 0.01}),
			"ReadOnlyFields": with("_id", "x"),
		} {
			t.Run(name, func(t *testing.T) {
				h.Do("POST", "/rules", body, h.Admin()).Expect(t, 201, "")
			})
		}
	})
}

func TestRuleAccess(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	uid, token, _ := h.ActiveUser(t, "Ursula", "User")
	user := ts.Token(token)
	h.Do("GET", "/users/"+uid, nil, user).Expect(t, 200, "") // the session works
	perk := newPerk(t, h, h.Admin(), nil)
	body := ruleBody("CHECKIN_CREATED", []map[string]any{grant(perk, 10)})
	id := newRule(t, h, body)
	stored := h.Do("GET", "/rules/"+id, nil, h.Admin()).Expect(t, 200, "").Map(t)

	t.Run("User", func(t *testing.T) {
		for _, c := range []struct {
			name, method, path string
			body               any
		}{
			{"Create", "POST", "/rules", body},
			{"CreateInvalid", "POST", "/rules", map[string]any{}},
			{"List", "GET", "/rules", nil},
			{"Get", "GET", "/rules/" + id, nil},
			{"GetUnknown", "GET", "/rules/5f1c0a9b2d3e4f5a6b7c8d9e", nil},
			{"Update", "PUT", "/rules/" + id, map[string]any{"enabled": false}},
			{"Delete", "DELETE", "/rules/" + id, nil},
		} {
			t.Run(c.name, func(t *testing.T) {
				h.Do(c.method, c.path, c.body, user).Expect(t, 401, "UNAUTHORIZED")
			})
		}
	})

	t.Run("Anonymous", func(t *testing.T) {
		h.Do("GET", "/rules", nil, h.Anon()).Expect(t, 401, "UNAUTHORIZED")
		h.Do("POST", "/rules", body, h.Anon()).Expect(t, 401, "UNAUTHORIZED")
	})

	other, key := h.NewTenant(h.Tenant.Settings)
	foreign := ts.Headers{"x-service-auth-token", key, "x-application-id", other.ID}
	t.Run("OtherTenant", func(t *testing.T) {
		h.Do("GET", "/rules/"+id, nil, foreign).Expect(t, 404, "NOT_FOUND")
		h.Do("PUT", "/rules/"+id, map[string]any{"enabled": false}, foreign).Expect(t, 404, "NOT_FOUND")
		h.Do("PUT", "/rules/"+id, stored, foreign).Expect(t, 404, "NOT_FOUND")
		h.Do("DELETE", "/rules/"+id, nil, foreign).Expect(t, 404, "NOT_FOUND")
		if items := h.Do("GET", "/rules", nil, foreign).Expect(t, 200, "").Map(t)["items"].([]any); len(items) != 0 {
			t.Errorf("the other tenant lists %v", items)
		}
		// This tenant's service key with the other tenant's id is refused.
		h.Do("GET", "/rules", nil, ts.Headers{"x-service-auth-token", h.ServiceKey, "x-application-id", other.ID}).Expect(t, 401, "")
		if got := h.Do("GET", "/rules/"+id, nil, h.Admin()).Expect(t, 200, "").Map(t); got["updatedAt"] != stored["updatedAt"] || got["enabled"] != true {
			t.Errorf("the rule changed: %v", got)
		}
	})

	t.Run("NeverRunsOnAnotherTenant", func(t *testing.T) {
		theirs := shopper(t, h, foreign, "Theo")
		theirLoc := shop(t, h, foreign, "Their shop")
		ours := shopper(t, h, h.Admin(), "Olive")
		ourLoc := shop(t, h, h.Admin(), "Our shop")
		checkIn(t, h, foreign, other.ID, theirs, theirLoc)
		checkIn(t, h, h.Admin(), h.Tenant.ID, ours, ourLoc)
		h.WaitStreams()
		if got := points(t, h, h.Admin(), ours); got[perk] != 10 {
			t.Errorf("our user's points = %v, want 10 of %s", got, perk)
		}
		if got := actionsOf(t, h, other.ID, theirs, "AWARD_GRANTED"); len(got) != 0 {
			t.Errorf("the rule ran on the other tenant's check-in: %+v", got)
		}
		if got := points(t, h, foreign, theirs); len(got) != 0 {
			t.Errorf("the other tenant's user holds %v", got)
		}
	})
}

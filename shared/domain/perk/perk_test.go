package perk_test

import (
	"strings"
	"testing"

	ts "github.com/loyalty-platform/platform/shared/testkit"
)

// stampCard is a valid perk body.
func stampCard() map[string]any {
	return map[string]any{
		"title": "Coffee card", "template": "STAMP_CARD",
		"points":        map[string]any{"initial": 0, "max": 10, "step": 1, "redemption": 10},
		"visualisation": map[string]any{"titleText": "Coffee", "backgroundOverlayOpacity": 0.5, "wallet": map[string]any{"enabled": true}},
		"discount":      map[string]any{"value": 3.5, "type": "VALUE", "maxCount": 2, "scope": "ITEM", "scopeMatchCode": []any{[]any{"a", "b"}, []any{"c"}}, "combinationRule": nil},
	}
}

func with(base map[string]any, key string, v any) map[string]any {
	out := map[string]any{}
	for k, x := range base {
		out[k] = x
	}
	out[key] = v
	return out
}

func TestCreatePerk(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	p := h.Do("POST", "/perks", stampCard(), h.Admin()).Expect(t, 201, "").Map(t)
	for k, want := range map[string]any{"title": "Coffee card", "template": "STAMP_CARD", "enabled": true, "loyaltyProvider": "INTERNAL", "tenantId": h.Tenant.ID, "isGlobal": false} {
		if got := p[k]; got != want {
			t.Errorf("%s = %v, want %v", k, got, want)
		}
	}
	id := p["_id"].(string)
	if len(id) != 24 {
		t.Errorf("_id = %q, want 24 hex characters", id)
	}
	got := h.Do("GET", "/perks/"+id, nil, h.Admin()).Expect(t, 200, "").Map(t)
	if got["discount"].(map[string]any)["scopeMatchCode"].([]any)[0].([]any)[1] != "b" {
		t.Errorf("scopeMatchCode did not round-trip: %v", got["discount"])
	}
	if _, ok := got["discount"].(map[string]any)["combinationRule"]; ok {
		t.Errorf("a null combinationRule should be stored as absent: %v", got["discount"])
	}
	h.Do("GET", "/pointperks/"+id, nil, h.Admin()).Expect(t, 200, "")
}

func TestCreatePerkValidation(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	base := stampCard()
	disc := func(k string, v any) map[string]any {
		d := map[string]any{"value": 1}
		d[k] = v
		return with(base, "discount", d)
	}
	vis := func(k string, v any) map[string]any { return with(base, "visualisation", map[string]any{k: v}) }
	tests := []struct {
		name  string
		body  any
		field string
	}{
		{"MissingTitle", with(base, "title", ""), "title: is required"},
		{"LongTitle", with(base, "title", strings.Repeat("x", 256)), "title: must be 1 to"},
		{"MissingTemplate", with(base, "template", ""), "template"},
		{"UnknownTemplate", with(base, "template", "COUPON"), "template"},
		{"MaxCountZero", disc("maxCount", 0), "discount.maxCount"},
		{"MaxCount21", disc("maxCount", 21), "discount.maxCount"},
		{"DiscountExtraProperty", disc("colour", "red"), "discount.colour"},
		{"DiscountBadScope", disc("scope", "SHOP"), "discount.scope"},
		{"DiscountBadRule", disc("rule", "RANDOM"), "discount.rule"},
		{"DiscountNegativeValue", disc("value", -1), "discount.value"},
		{"DiscountCharges4", disc("discountCharges", 4), "discount.discountCharges"},
		{"ScopeMatchCodeNumber", disc("scopeMatchCode", 5), "discount.scopeMatchCode"},
		{"ScopeMatchCodeTooDeep", disc("scopeMatchCode", []any{[]any{[]any{"x"}}}), "discount.scopeMatchCode"},
		{"OpacityAboveOne", vis("backgroundOverlayOpacity", 1.5), "visualisation.backgroundOverlayOpacity"},
		{"OpacityNegative", vis("backgroundOverlayOpacity", -0.1), "visualisation.backgroundOverlayOpacity"},
		{"VisualisationExtraProperty", vis("font", "Comic Sans"), "visualisation.font"},
		{"VisualisationBadAlignment", vis("textAlignment", "MIDDLE"), "visualisation.textAlignment"},
		{"WalletExtraProperty", vis("wallet", map[string]any{"colour": "x"}), "visualisation.wallet.colour"},
		{"PointsExtraProperty", with(base, "points", map[string]any{"bonus": 1}), "points.bonus"},
		{"PointsNegative", with(base, "points", map[string]any{"initial": -1}), "points.initial"},
		{"PointsFraction", with(base, "points", map[string]any{"initial": 1.5}), "points.initial"},
		{"InitialAboveMax", with(base, "points", map[string]any{"initial": 11, "max": 10}), "points.initial"},
		{"BadStartTime", with(base, "dateTimeRestriction", map[string]any{"startTime": 1260}), "dateTimeRestriction.startTime"},
		{"BadDays", with(base, "dateTimeRestriction", map[string]any{"daysOfWeek": 128}), "dateTimeRestriction.daysOfWeek"},
		{"EmptyTimeWindow", with(base, "dateTimeRestriction", map[string]any{"startTime": 900, "endTime": 900}), "dateTimeRestriction.endTime"},
		{"EmptyTimeWindowAtMidnight", with(base, "dateTimeRestriction", map[string]any{"startTime": 0, "endTime": 0}), "dateTimeRestriction.endTime"},
		{"EndBeforeStart", with(base, "dateTimeRestriction", map[string]any{"startDate": "2026-02-01", "endDate": "2026-01-01"}), "dateTimeRestriction.endDate"},
		{"BadBasketScope", with(base, "basketQualification", map[string]any{"scope": "X"}), "basketQualification.scope"},
		{"ClubWithoutSegment", with(base, "template", "CLUB"), "segmentId"},
		{"SegmentOnStampCard", with(base, "segmentId", "5f1c0a9b2d3e4f5a6b7c8d9e"), "segmentId"},
		{"UnknownSegment", with(with(base, "template", "LEVEL"), "segmentId", "5f1c0a9b2d3e4f5a6b7c8d9e"), "segmentId"},
		{"BadLocationID", with(base, "locationIds", []any{"a b"}), "locationIds"},
		{"NullTitle", with(base, "title", nil), "title"},
		{"UnknownField", with(base, "colour", "red"), "colour"},
		{"WrongType", with(base, "isGlobal", "yes"), "isGlobal"},
		{"ForeignProvider", with(base, "loyaltyProvider", "OTHER"), "loyaltyProvider"},
		{"BadExpiry", with(base, "points", map[string]any{"expiry": map[string]any{"policy": "SOMETIMES"}}), "points.expiry.policy"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := h.Do("POST", "/perks", tc.body, h.Admin()).Expect(t, 422, "VALIDATION_FAILED")
			if msg := r.Map(t)["message"].(string); !strings.HasPrefix(msg, tc.field) {
				t.Errorf("message = %q, want it to name %s", msg, tc.field)
			}
		})
	}
	list := h.Do("GET", "/perks", nil, h.Admin()).Expect(t, 200, "").Map(t)
	if n := len(list["items"].([]any)); n != 0 {
		t.Errorf("refused perks were stored: %d perks", n)
	}
}

func TestPerkAccess(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	_, token, _ := h.ActiveUser(t, "Ada", "Reader")
	user := ts.Token(token)
	enabled := h.Do("POST", "/perks", stampCard(), h.Admin()).Expect(t, 201, "").Map(t)["_id"].(string)
	disabled := h.Do("POST", "/perks", with(stampCard(), "enabled", false), h.Admin()).Expect(t, 201, "").Map(t)["_id"].(string)

	t.Run("UserCannotWrite", func(t *testing.T) {
		h.Do("POST", "/perks", stampCard(), user).Expect(t, 401, "UNAUTHORIZED")
		h.Do("PUT", "/perks/"+enabled, map[string]any{"title": "x"}, user).Expect(t, 401, "UNAUTHORIZED")
		h.Do("DELETE", "/perks/"+enabled, nil, user).Expect(t, 401, "UNAUTHORIZED")
	})
	t.Run("UserReadsEnabledOnly", func(t *testing.T) {
		h.Do("GET", "/perks/"+enabled, nil, user).Expect(t, 200, "")
		h.Do("GET", "/perks/"+disabled, nil, user).Expect(t, 404, "NOT_FOUND")
		items := h.Do("GET", "/perks", nil, user).Expect(t, 200, "").Map(t)["items"].([]any)
		if len(items) != 1 || items[0].(map[string]any)["_id"] != enabled {
			t.Errorf("user list = %v, want only %s", items, enabled)
		}
		h.Do("GET", "/perks?enabled=false", nil, user).Expect(t, 401, "UNAUTHORIZED")
	})
	t.Run("AdminFilters", func(t *testing.T) {
		items := h.Do("GET", "/perks?enabled=false", nil, h.Admin()).Expect(t, 200, "").Map(t)["items"].([]any)
		if len(items) != 1 || items[0].(map[string]any)["_id"] != disabled {
			t.Errorf("enabled=false list = %v", items)
		}
		if n := len(h.Do("GET", "/perks?template=CLUB", nil, h.Admin()).Expect(t, 200, "").Map(t)["items"].([]any)); n != 0 {
			t.Errorf("template=CLUB listed %d perks", n)
		}
		h.Do("GET", "/perks?template=NOPE", nil, h.Admin()).Expect(t, 422, "VALIDATION_FAILED")
	})
	t.Run("Anonymous", func(t *testing.T) {
		h.Do("GET", "/perks", nil, h.Anon()).Expect(t, 401, "UNAUTHORIZED")
	})
	t.Run("OtherTenant", func(t *testing.T) {
		other, key := h.NewTenant(h.Tenant.Settings)
		admin := ts.Headers{"x-service-auth-token", key, "x-application-id", other.ID}
		h.Do("GET", "/perks/"+enabled, nil, admin).Expect(t, 404, "NOT_FOUND")
		h.Do("PUT", "/perks/"+enabled, map[string]any{"title": "mine"}, admin).Expect(t, 404, "NOT_FOUND")
		h.Do("DELETE", "/perks/"+enabled, nil, admin).Expect(t, 404, "NOT_FOUND")
		if n := len(h.Do("GET", "/perks", nil, admin).Expect(t, 200, "").Map(t)["items"].([]any)); n != 0 {
			t.Errorf("the other tenant lists %d perks", n)
		}
	})
}

func TestUpdatePerk(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	p := h.Do("POST", "/perks", stampCard(), h.Admin()).Expect(t, 201, "").Map(t)
	id := p["_id"].(string)

	t.Run("Partial", func(t *testing.T) {
		got := h.Do("PUT", "/perks/"+id, map[string]any{"title": "Tea card", "points": map[string]any{"max": 12}}, h.Admin()).Expect(t, 200, "").Map(t)
		if got["title"] != "Tea card" || got["template"] != "STAMP_CARD" {
			t.Errorf("after PUT: %v", got)
		}
		if pts := got["points"].(map[string]any); pts["max"] != 12.0 || pts["initial"] != nil {
			t.Errorf("points replaced as a whole: got %v", pts)
		}
		if got["visualisation"] == nil {
			t.Errorf("an absent field changed: visualisation is gone")
		}
	})
	t.Run("NullRemoves", func(t *testing.T) {
		got := h.Do("PUT", "/perks/"+id, map[string]any{"visualisation": nil}, h.Admin()).Expect(t, 200, "").Map(t)
		if _, ok := got["visualisation"]; ok {
			t.Errorf("visualisation was not removed: %v", got)
		}
	})
	t.Run("GetBodyBack", func(t *testing.T) {
		cur := h.Do("GET", "/perks/"+id, nil, h.Admin()).Expect(t, 200, "").Map(t)
		cur["terms"] = "New terms"
		got := h.Do("PUT", "/perks/"+id, cur, h.Admin()).Expect(t, 200, "").Map(t)
		if got["terms"] != "New terms" {
			t.Errorf("terms = %v", got["terms"])
		}
	})
	tests := []struct {
		name  string
		body  any
		field string
	}{
		{"ChangedID", map[string]any{"_id": "abc"}, "_id"},
		{"NullTemplate", map[string]any{"template": nil}, "template"},
		{"NullEnabled", map[string]any{"enabled": nil}, "enabled"},
		{"BadOpacity", map[string]any{"visualisation": map[string]any{"backgroundOverlayOpacity": 2}}, "visualisation.backgroundOverlayOpacity"},
		{"ClubWithoutSegment", map[string]any{"template": "CLUB"}, "segmentId"},
		{"EmptyTimeWindow", map[string]any{"dateTimeRestriction": map[string]any{"startTime": 1130, "endTime": 1130}}, "dateTimeRestriction.endTime"},
		{"Empty", map[string]any{}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := h.Do("PUT", "/perks/"+id, tc.body, h.Admin()).Expect(t, 422, "VALIDATION_FAILED")
			if msg := r.Map(t)["message"].(string); !strings.HasPrefix(msg, tc.field) {
				t.Errorf("message = %q, want it to name %s", msg, tc.field)
			}
		})
	}
	t.Run("RefusedChangedNothing", func(t *testing.T) {
		if got := h.Do("GET", "/perks/"+id, nil, h.Admin()).Expect(t, 200, "").Map(t); got["dateTimeRestriction"] != nil || got["template"] != "STAMP_CARD" {
			t.Errorf("a refused PUT changed the perk: %v", got)
		}
	})
	t.Run("UnknownPerk", func(t *testing.T) {
		h.Do("PUT", "/perks/5f1c0a9b2d3e4f5a6b7c8d9e", map[string]any{"title": "x"}, h.Admin()).Expect(t, 404, "NOT_FOUND")
	})
}

func TestDeleteDisables(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	id := h.Do("POST", "/perks", stampCard(), h.Admin()).Expect(t, 201, "").Map(t)["_id"].(string)
	h.Do("DELETE", "/pointperks/"+id, nil, h.Admin()).Expect(t, 204, "")
	h.Do("DELETE", "/perks/"+id, nil, h.Admin()).Expect(t, 204, "")
	got := h.Do("GET", "/perks/"+id, nil, h.Admin()).Expect(t, 200, "").Map(t)
	if got["enabled"] != false {
		t.Errorf("enabled = %v after DELETE", got["enabled"])
	}
	got = h.Do("PUT", "/perks/"+id, map[string]any{"enabled": true}, h.Admin()).Expect(t, 200, "").Map(t)
	if got["enabled"] != true {
		t.Errorf("enabled = %v after PUT enabled:true", got["enabled"])
	}
	h.Do("DELETE", "/perks/5f1c0a9b2d3e4f5a6b7c8d9e", nil, h.Admin()).Expect(t, 404, "NOT_FOUND")
}

func TestListPaging(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	var ids []string
	for i := 0; i < 5; i++ {
		ids = append(ids, h.Do("POST", "/perks", with(stampCard(), "enabled", i%2 == 0), h.Admin()).Expect(t, 201, "").Map(t)["_id"].(string))
	}
	var got []string
	next := ""
	for page := 0; page < 10; page++ {
		path := "/perks?limit=2"
		if next != "" {
			path += "&startKey=" + next
		}
		m := h.Do("GET", path, nil, h.Admin()).Expect(t, 200, "").Map(t)
		for _, it := range m["items"].([]any) {
			got = append(got, it.(map[string]any)["_id"].(string))
		}
		pg := m["page"].(map[string]any)
		n, _ := pg["nextKey"].(string)
		if n == "" {
			break
		}
		next = n
	}
	if strings.Join(got, ",") != strings.Join(ids, ",") {
		t.Errorf("paged ids = %v, want creation order %v", got, ids)
	}
	h.Do("GET", "/perks?startKey=forged", nil, h.Admin()).Expect(t, 422, "VALIDATION_FAILED")
}

package enrichment_test

import (
	"context"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/loyalty-platform/platform/shared/platform/clock"
	ts "github.com/loyalty-platform/platform/shared/testkit"
)

// full is a valid enrichment body of an external reward with every field.
func full() map[string]any {
	return map[string]any{
		"loyaltyProvider": "PUNCHH", "loyaltyRewardId": "reward-42",
		"title": "Coffee card", "token": "COFFEE", "template": "STAMP_CARD",
		"basketQualification": map[string]any{"matchCode": []any{"sku-1", "sku-2"}, "minimumItems": 2, "scope": "ITEM"},
		"dateTimeRestriction": map[string]any{"startTime": 700, "endTime": 1130, "daysOfWeek": 31},
		"points":              map[string]any{"initial": 0, "min": 0, "max": 10, "step": 1, "redemption": 10, "maxTotalRedemptions": 3},
		"discount":            map[string]any{"value": 3.5, "type": "VALUE", "maxCount": 2, "scope": "ITEM", "scopeMatchCode": []any{[]any{"a", "b"}, []any{"c"}}, "combinationRule": nil},
		"visualisation":       map[string]any{"titleText": "Coffee", "terms": "One per visit", "priority": 2, "backgroundOverlayOpacity": 0.5},
		"visualisationOnCurrentStamp": map[string]any{
			"3": map[string]any{"titleText": "Halfway", "stampColour": "#6F4E37", "stampImageUrlPerStamp": map[string]any{"1": "https://example.com/1.png"}},
			"9": map[string]any{"subtitleText": "One more", "awardsScreenShape": "SMALL_SQUARE"},
		},
		"excludeDiscountIds": []any{"summer-sale", "staff"},
	}
}

// minimal is the smallest valid body.
func minimal() map[string]any {
	return map[string]any{"loyaltyProvider": "COMO", "loyaltyRewardId": "r-1"}
}

func with(base map[string]any, key string, v any) map[string]any {
	out := map[string]any{}
	for k, x := range base {
		out[k] = x
	}
	out[key] = v
	return out
}

func without(base map[string]any, key string) map[string]any {
	out := with(base, key, nil)
	delete(out, key)
	return out
}

var hex24 = regexp.MustCompile(`^[0-9a-f]{24}$`)

// newPerk creates a perk of the harness tenant and returns its id.
func newPerk(t *testing.T, h *ts.Harness) string {
	t.Helper()
	return h.Do("POST", "/perks", map[string]any{"title": "Card", "template": "STAMP_CARD"}, h.Admin()).Expect(t, 201, "").Map(t)["_id"].(string)
}

// create posts an enrichment and returns it.
func create(t *testing.T, h *ts.Harness, body any) map[string]any {
	t.Helper()
	return h.Do("POST", "/awardenrichments", body, h.Admin()).Expect(t, 201, "").Map(t)
}

func TestCreateEnrichment(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	perkID := newPerk(t, h)
	tests := []struct {
		name string
		body map[string]any
	}{
		{"EveryField", full()},
		{"Minimal", minimal()},
		{"Internal", map[string]any{"loyaltyProvider": "INTERNAL", "loyaltyRewardId": perkID, "title": "Perk extra"}},
		{"NullIsAbsent", with(with(minimal(), "title", nil), "visualisation", nil)},
		{"ReadOnlyIgnored", with(with(with(minimal(), "_id", "mine"), "created", "2001-01-01T00:00:00.000Z"), "tenantId", "other")},
	}
	for _, provider := range []string{"PAYTRONIX", "OLO", "EXTERNAL"} {
		tests = append(tests, struct {
			name string
			body map[string]any
		}{"Provider" + provider, with(minimal(), "loyaltyProvider", provider)})
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := create(t, h, tc.body)
			id, _ := got["_id"].(string)
			if !hex24.MatchString(id) {
				t.Errorf("_id = %q, want 24 hex characters", id)
			}
			created, _ := got["created"].(string)
			if _, err := time.Parse(clock.Format, created); err != nil || got["updated"] != created {
				t.Errorf("created = %v, updated = %v: want one ISO 8601 UTC timestamp", got["created"], got["updated"])
			}
			if got["tenantId"] != h.Tenant.ID {
				t.Errorf("tenantId = %v, want %s", got["tenantId"], h.Tenant.ID)
			}
			for k, v := range tc.body {
				switch k {
				case "_id", "created", "tenantId":
					continue
				}
				if v == nil {
					if _, ok := got[k]; ok {
						t.Errorf("%s was sent null and should be absent: %v", k, got[k])
					}
					continue
				}
				if _, ok := got[k]; !ok {
					t.Errorf("%s is missing from the response", k)
				}
			}
			if got["loyaltyProvider"] != tc.body["loyaltyProvider"] || got["loyaltyRewardId"] != tc.body["loyaltyRewardId"] {
				t.Errorf("reward = %v/%v, want %v/%v", got["loyaltyProvider"], got["loyaltyRewardId"], tc.body["loyaltyProvider"], tc.body["loyaltyRewardId"])
			}
			back := h.Do("GET", "/awardenrichments/"+id, nil, h.Admin()).Expect(t, 200, "").Map(t)
			if !reflect.DeepEqual(back, got) {
				t.Errorf("GET = %v\nwant the created enrichment %v", back, got)
			}
		})
	}
	t.Run("Shapes", func(t *testing.T) {
		got := create(t, h, full())
		d := got["discount"].(map[string]any)
		if d["scopeMatchCode"].([]any)[0].([]any)[1] != "b" {
			t.Errorf("scopeMatchCode did not round-trip: %v", d)
		}
		if _, ok := d["combinationRule"]; ok {
			t.Errorf("a null combinationRule should be stored as absent: %v", d)
		}
		stamp := got["visualisationOnCurrentStamp"].(map[string]any)["3"].(map[string]any)
		if stamp["stampColour"] != "#6F4E37" || stamp["stampImageUrlPerStamp"].(map[string]any)["1"] != "https://example.com/1.png" {
			t.Errorf("visualisationOnCurrentStamp.3 = %v", stamp)
		}
		if got["points"].(map[string]any)["maxTotalRedemptions"] != 3.0 {
			t.Errorf("points = %v", got["points"])
		}
		if ids := got["excludeDiscountIds"].([]any); len(ids) != 2 || ids[1] != "staff" {
			t.Errorf("excludeDiscountIds = %v", ids)
		}
	})
	t.Run("EmptyCollectionsKept", func(t *testing.T) {
		got := create(t, h, with(with(minimal(), "excludeDiscountIds", []any{}), "visualisationOnCurrentStamp", map[string]any{}))
		if ids, ok := got["excludeDiscountIds"].([]any); !ok || len(ids) != 0 {
			t.Errorf("excludeDiscountIds = %#v, want []", got["excludeDiscountIds"])
		}
		if m, ok := got["visualisationOnCurrentStamp"].(map[string]any); !ok || len(m) != 0 {
			t.Errorf("visualisationOnCurrentStamp = %#v, want {}", got["visualisationOnCurrentStamp"])
		}
	})
}

func TestCreateEnrichmentValidation(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	base := minimal()
	long := strings.Repeat("x", 256)
	disc := func(k string, v any) map[string]any {
		d := map[string]any{"value": 1}
		d[k] = v
		return with(base, "discount", d)
	}
	vis := func(k string, v any) map[string]any { return with(base, "visualisation", map[string]any{k: v}) }
	stamp := func(k string, v any) map[string]any {
		return with(base, "visualisationOnCurrentStamp", map[string]any{"3": map[string]any{k: v}})
	}
	many := map[string]any{}
	for i := 0; i < 201; i++ {
		many[strings.Repeat("k", 1+i%60)+string(rune('a'+i/60))] = map[string]any{}
	}
	manyIDs := make([]any, 201)
	for i := range manyIDs {
		manyIDs[i] = "d"
	}
	tests := []struct {
		name  string
		body  any
		field string
	}{
		{"MissingProvider", without(base, "loyaltyProvider"), "loyaltyProvider"},
		{"EmptyProvider", with(base, "loyaltyProvider", ""), "loyaltyProvider"},
		{"UnknownProvider", with(base, "loyaltyProvider", "SQUARE"), "loyaltyProvider"},
		{"LowerCaseProvider", with(base, "loyaltyProvider", "como"), "loyaltyProvider"},
		{"NullProvider", with(base, "loyaltyProvider", nil), "loyaltyProvider"},
		{"ProviderNotString", with(base, "loyaltyProvider", 1), "loyaltyProvider"},
		{"MissingRewardID", without(base, "loyaltyRewardId"), "loyaltyRewardId"},
		{"EmptyRewardID", with(base, "loyaltyRewardId", ""), "loyaltyRewardId"},
		{"LongRewardID", with(base, "loyaltyRewardId", long), "loyaltyRewardId"},
		{"ControlInRewardID", with(base, "loyaltyRewardId", "r\u0001"), "loyaltyRewardId"},
		{"NullRewardID", with(base, "loyaltyRewardId", nil), "loyaltyRewardId"},
		{"EmptyTitle", with(base, "title", ""), "title"},
		{"LongTitle", with(base, "title", long), "title"},
		{"TitleNotString", with(base, "title", 5), "title"},
		{"EmptyToken", with(base, "token", ""), "token"},
		{"LongToken", with(base, "token", long), "token"},
		{"UnknownTemplate", with(base, "template", "COUPON"), "template"},
		{"BasketBadScope", with(base, "basketQualification", map[string]any{"scope": "SHOP"}), "basketQualification.scope"},
		{"BasketExtraProperty", with(base, "basketQualification", map[string]any{"colour": "red"}), "basketQualification.colour"},
		{"BasketNegativeItems", with(base, "basketQualification", map[string]any{"minimumItems": -1}), "basketQualification.minimumItems"},
		{"BadStartTime", with(base, "dateTimeRestriction", map[string]any{"startTime": 1260}), "dateTimeRestriction.startTime"},
		{"DaysOfWeekString", with(base, "dateTimeRestriction", map[string]any{"daysOfWeek": "MON"}), "dateTimeRestriction.daysOfWeek"},
		{"BadDays", with(base, "dateTimeRestriction", map[string]any{"daysOfWeek": 128}), "dateTimeRestriction.daysOfWeek"},
		{"EmptyTimeWindow", with(base, "dateTimeRestriction", map[string]any{"startTime": 700, "endTime": 700}), "dateTimeRestriction.endTime"},
		{"PointsNegative", with(base, "points", map[string]any{"initial": -1}), "points.initial"},
		{"PointsFraction", with(base, "points", map[string]any{"step": 1.5}), "points.step"},
		{"PointsExtraProperty", with(base, "points", map[string]any{"bonus": 1}), "points.bonus"},
		{"PointsNull", with(base, "points", map[string]any{"max": nil}), "points.max"},
		{"DiscountNullValue", disc("value", nil), "discount.value"},
		{"DiscountExtraProperty", disc("colour", "red"), "discount.colour"},
		{"DiscountMaxCount21", disc("maxCount", 21), "discount.maxCount"},
		{"DiscountBadRule", disc("rule", "RANDOM"), "discount.rule"},
		{"VisualisationWallet", vis("wallet", map[string]any{"enabled": true}), "visualisation.wallet"},
		{"VisualisationExtraProperty", vis("font", "Comic Sans"), "visualisation.font"},
		{"VisualisationBadOpacity", vis("backgroundOverlayOpacity", 1.5), "visualisation.backgroundOverlayOpacity"},
		{"VisualisationEmptyText", vis("titleText", ""), "visualisation.titleText"},
		{"VisualisationNull", vis("titleText", nil), "visualisation.titleText"},
		{"StampTerms", stamp("terms", "x"), "visualisationOnCurrentStamp.3.terms"},
		{"StampDescription", stamp("description", "x"), "visualisationOnCurrentStamp.3.description"},
		{"StampPriority", stamp("priority", 1), "visualisationOnCurrentStamp.3.priority"},
		{"StampSubtitleTwoText", stamp("subtitleTwoText", "x"), "visualisationOnCurrentStamp.3.subtitleTwoText"},
		{"StampWallet", stamp("wallet", map[string]any{}), "visualisationOnCurrentStamp.3.wallet"},
		{"StampBadAlignment", stamp("textAlignment", "MIDDLE"), "visualisationOnCurrentStamp.3.textAlignment"},
		{"StampBadOpacity", stamp("backgroundOverlayOpacity", -0.1), "visualisationOnCurrentStamp.3.backgroundOverlayOpacity"},
		{"StampNullValue", stamp("titleText", nil), "visualisationOnCurrentStamp.3.titleText"},
		{"StampNotObject", with(base, "visualisationOnCurrentStamp", map[string]any{"3": "x"}), "visualisationOnCurrentStamp.3"},
		{"StampNull", with(base, "visualisationOnCurrentStamp", map[string]any{"3": nil}), "visualisationOnCurrentStamp.3"},
		{"StampEmptyKey", with(base, "visualisationOnCurrentStamp", map[string]any{"": map[string]any{}}), "visualisationOnCurrentStamp"},
		{"StampLongKey", with(base, "visualisationOnCurrentStamp", map[string]any{strings.Repeat("k", 65): map[string]any{}}), "visualisationOnCurrentStamp"},
		{"StampTooMany", with(base, "visualisationOnCurrentStamp", many), "visualisationOnCurrentStamp"},
		{"ExcludeTooMany", with(base, "excludeDiscountIds", manyIDs), "excludeDiscountIds"},
		{"ExcludeEmptyItem", with(base, "excludeDiscountIds", []any{""}), "excludeDiscountIds[0]"},
		{"ExcludeLongItem", with(base, "excludeDiscountIds", []any{"ok", long}), "excludeDiscountIds[1]"},
		{"ExcludeNullItem", with(base, "excludeDiscountIds", []any{nil}), "excludeDiscountIds[0]"},
		{"ExcludeNotArray", with(base, "excludeDiscountIds", "summer-sale"), "excludeDiscountIds"},
		{"UnknownField", with(base, "colour", "red"), "colour"},
		{"DuplicateKey", `{"loyaltyProvider":"COMO","loyaltyRewardId":"r","title":"a","title":"b"}`, "title"},
		{"EmptyBody", "", ""},
		{"NullBody", "null", ""},
		{"ArrayBody", "[]", ""},
		{"MalformedBody", `{"loyaltyProvider":`, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := h.Do("POST", "/awardenrichments", tc.body, h.Admin()).Expect(t, 422, "VALIDATION_FAILED")
			if msg := r.Map(t)["message"].(string); !strings.HasPrefix(msg, tc.field) {
				t.Errorf("message = %q, want it to start with %s", msg, tc.field)
			}
		})
	}
	list := h.Do("GET", "/awardenrichments", nil, h.Admin()).Expect(t, 200, "").Map(t)
	if n := len(list["items"].([]any)); n != 0 {
		t.Errorf("refused enrichments were stored: %d enrichments", n)
	}
}

func TestUpdateEnrichment(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	e := create(t, h, full())
	id := e["_id"].(string)
	path := "/awardenrichments/" + id

	t.Run("Partial", func(t *testing.T) {
		h.Clock.Advance(time.Second)
		got := h.Do("PUT", path, map[string]any{"title": "Tea card", "points": map[string]any{"max": 12}}, h.Admin()).Expect(t, 200, "").Map(t)
		if got["title"] != "Tea card" || got["token"] != "COFFEE" || got["template"] != "STAMP_CARD" {
			t.Errorf("after PUT: %v", got)
		}
		if pts := got["points"].(map[string]any); pts["max"] != 12.0 || pts["initial"] != nil {
			t.Errorf("points should be replaced as a whole: got %v", pts)
		}
		if got["visualisation"] == nil || got["visualisationOnCurrentStamp"] == nil || got["discount"] == nil {
			t.Errorf("an absent field changed: %v", got)
		}
		if got["created"] != e["created"] || !(got["updated"].(string) > e["updated"].(string)) {
			t.Errorf("created %v -> %v, updated %v -> %v: want created kept and updated later", e["created"], got["created"], e["updated"], got["updated"])
		}
		if back := h.Do("GET", path, nil, h.Admin()).Expect(t, 200, "").Map(t); !reflect.DeepEqual(back, got) {
			t.Errorf("GET after PUT = %v\nwant %v", back, got)
		}
	})
	t.Run("NullRemoves", func(t *testing.T) {
		got := h.Do("PUT", path, map[string]any{"token": nil, "visualisationOnCurrentStamp": nil, "excludeDiscountIds": nil}, h.Admin()).Expect(t, 200, "").Map(t)
		for _, k := range []string{"token", "visualisationOnCurrentStamp", "excludeDiscountIds"} {
			if _, ok := got[k]; ok {
				t.Errorf("%s was not removed: %v", k, got[k])
			}
		}
		if got["title"] != "Tea card" {
			t.Errorf("title changed: %v", got["title"])
		}
	})
	t.Run("ReplaceObject", func(t *testing.T) {
		got := h.Do("PUT", path, map[string]any{"visualisationOnCurrentStamp": map[string]any{"5": map[string]any{"stampColour": "red"}}}, h.Admin()).Expect(t, 200, "").Map(t)
		m := got["visualisationOnCurrentStamp"].(map[string]any)
		if len(m) != 1 || m["5"].(map[string]any)["stampColour"] != "red" {
			t.Errorf("visualisationOnCurrentStamp = %v", m)
		}
	})
	t.Run("GetBodyBack", func(t *testing.T) {
		cur := h.Do("GET", path, nil, h.Admin()).Expect(t, 200, "").Map(t)
		cur["token"] = "TEA"
		got := h.Do("PUT", path, cur, h.Admin()).Expect(t, 200, "").Map(t)
		if got["token"] != "TEA" {
			t.Errorf("token = %v", got["token"])
		}
	})
	t.Run("ReadOnlyUnchanged", func(t *testing.T) {
		body := map[string]any{"loyaltyProvider": "PUNCHH", "loyaltyRewardId": "reward-42", "_id": id, "tenantId": h.Tenant.ID, "title": "Same reward"}
		got := h.Do("PUT", path, body, h.Admin()).Expect(t, 200, "").Map(t)
		if got["title"] != "Same reward" || got["loyaltyRewardId"] != "reward-42" {
			t.Errorf("after PUT: %v", got)
		}
	})
	tests := []struct {
		name  string
		body  any
		field string
	}{
		{"ChangedRewardID", map[string]any{"loyaltyRewardId": "reward-43"}, "loyaltyRewardId"},
		{"ChangedProvider", map[string]any{"loyaltyProvider": "COMO"}, "loyaltyProvider"},
		{"ChangedID", map[string]any{"_id": "abc"}, "_id"},
		{"ChangedTenant", map[string]any{"tenantId": "other"}, "tenantId"},
		{"ChangedCreated", map[string]any{"created": "2001-01-01T00:00:00.000Z"}, "created"},
		{"ChangedUpdated", map[string]any{"updated": "2001-01-01T00:00:00.000Z"}, "updated"},
		{"NullRewardID", map[string]any{"loyaltyRewardId": nil}, "loyaltyRewardId"},
		{"NullProvider", map[string]any{"loyaltyProvider": nil}, "loyaltyProvider"},
		{"NullInsideDiscount", map[string]any{"discount": map[string]any{"value": nil}}, "discount.value"},
		{"EmptyTitle", map[string]any{"title": ""}, "title"},
		{"BadTemplate", map[string]any{"template": "COUPON"}, "template"},
		{"BadPoints", map[string]any{"points": map[string]any{"initial": 5, "max": 4}}, "points.initial"},
		{"VisualisationWallet", map[string]any{"visualisation": map[string]any{"wallet": map[string]any{}}}, "visualisation.wallet"},
		{"StampTerms", map[string]any{"visualisationOnCurrentStamp": map[string]any{"3": map[string]any{"terms": "x"}}}, "visualisationOnCurrentStamp.3.terms"},
		{"ExcludeEmptyItem", map[string]any{"excludeDiscountIds": []any{""}}, "excludeDiscountIds[0]"},
		{"UnknownField", map[string]any{"colour": "red"}, "colour"},
		{"Empty", map[string]any{}, ""},
		{"EmptyBody", "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := h.Do("GET", path, nil, h.Admin()).Expect(t, 200, "").Map(t)
			r := h.Do("PUT", path, tc.body, h.Admin()).Expect(t, 422, "VALIDATION_FAILED")
			if msg := r.Map(t)["message"].(string); !strings.HasPrefix(msg, tc.field) {
				t.Errorf("message = %q, want it to start with %s", msg, tc.field)
			}
			if after := h.Do("GET", path, nil, h.Admin()).Expect(t, 200, "").Map(t); !reflect.DeepEqual(after, before) {
				t.Errorf("a refused PUT changed the enrichment: %v", after)
			}
		})
	}
	t.Run("UnknownEnrichment", func(t *testing.T) {
		h.Do("PUT", "/awardenrichments/5f1c0a9b2d3e4f5a6b7c8d9e", map[string]any{"title": "x"}, h.Admin()).Expect(t, 404, "NOT_FOUND")
	})
}

func TestDeleteEnrichment(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	id := create(t, h, minimal())["_id"].(string)
	keep := create(t, h, minimal())["_id"].(string)
	path := "/awardenrichments/" + id
	h.Do("DELETE", path, nil, h.Admin()).Expect(t, 204, "")
	h.Do("GET", path, nil, h.Admin()).Expect(t, 404, "NOT_FOUND")
	h.Do("PUT", path, map[string]any{"title": "back"}, h.Admin()).Expect(t, 404, "NOT_FOUND")
	h.Do("DELETE", path, nil, h.Admin()).Expect(t, 404, "NOT_FOUND")
	h.Do("DELETE", "/awardenrichments/5f1c0a9b2d3e4f5a6b7c8d9e", nil, h.Admin()).Expect(t, 404, "NOT_FOUND")
	h.Do("GET", "/awardenrichments/"+keep, nil, h.Admin()).Expect(t, 200, "")
	items := h.Do("GET", "/awardenrichments", nil, h.Admin()).Expect(t, 200, "").Map(t)["items"].([]any)
	if len(items) != 1 || items[0].(map[string]any)["_id"] != keep {
		t.Errorf("list after DELETE = %v, want only %s", items, keep)
	}
}

func TestListPaging(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	var ids []string
	for i := 0; i < 5; i++ {
		ids = append(ids, create(t, h, with(minimal(), "loyaltyRewardId", ts.Sprintf("r-%d", i)))["_id"].(string))
	}
	var got []string
	next, pages := "", 0
	for ; pages < 10; pages++ {
		path := "/awardenrichments?limit=2"
		if next != "" {
			path += "&startKey=" + next
		}
		m := h.Do("GET", path, nil, h.Admin()).Expect(t, 200, "").Map(t)
		items := m["items"].([]any)
		pg := m["page"].(map[string]any)
		if pg["limit"] != 2.0 || pg["count"] != float64(len(items)) {
			t.Errorf("page = %v with %d items", pg, len(items))
		}
		for _, it := range items {
			got = append(got, it.(map[string]any)["_id"].(string))
		}
		n, _ := pg["nextKey"].(string)
		if n == "" {
			break
		}
		next = n
	}
	if strings.Join(got, ",") != strings.Join(ids, ",") {
		t.Errorf("paged ids = %v, want creation order %v", got, ids)
	}
	if pages != 2 {
		t.Errorf("%d pages after the first, want 2 (2+2+1 items)", pages)
	}
	all := h.Do("GET", "/awardenrichments", nil, h.Admin()).Expect(t, 200, "").Map(t)
	if pg := all["page"].(map[string]any); pg["limit"] != 100.0 || pg["count"] != 5.0 || pg["nextKey"] != nil {
		t.Errorf("default page = %v", pg)
	}
	tests := []struct {
		name, query, field string
	}{
		{"ForgedStartKey", "startKey=forged", "startKey"},
		{"TamperedStartKey", "startKey=" + next + "x", "startKey"},
		{"LimitZero", "limit=0", "limit"},
		{"LimitTooLarge", "limit=1001", "limit"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := h.Do("GET", "/awardenrichments?"+tc.query, nil, h.Admin()).Expect(t, 422, "VALIDATION_FAILED")
			if msg := r.Map(t)["message"].(string); !strings.HasPrefix(msg, tc.field) {
				t.Errorf("message = %q, want it to start with %s", msg, tc.field)
			}
		})
	}
	t.Run("OtherTenantsStartKey", func(t *testing.T) {
		other, key := h.NewTenant(h.Tenant.Settings)
		admin := ts.Headers{"x-service-auth-token", key, "x-application-id", other.ID}
		h.Do("GET", "/awardenrichments?startKey="+next, nil, admin).Expect(t, 422, "VALIDATION_FAILED")
	})
}

func TestEnrichmentAccess(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	_, token, _ := h.ActiveUser(t, "Ada", "X")
	e := create(t, h, full())
	id := e["_id"].(string)
	path := "/awardenrichments/" + id
	type call struct {
		method, path string
		body         any
	}
	calls := []call{
		{"POST", "/awardenrichments", minimal()},
		{"GET", "/awardenrichments", nil},
		{"GET", path, nil},
		{"PUT", path, map[string]any{"title": "x"}},
		{"DELETE", path, nil},
	}
	for _, who := range []struct {
		name    string
		headers ts.Headers
	}{{"User", ts.Token(token)}, {"Anonymous", h.Anon()}} {
		t.Run(who.name, func(t *testing.T) {
			for _, c := range calls {
				h.Do(c.method, c.path, c.body, who.headers).Expect(t, 401, "UNAUTHORIZED")
			}
		})
	}
	t.Run("OtherTenant", func(t *testing.T) {
		other, key := h.NewTenant(h.Tenant.Settings)
		admin := ts.Headers{"x-service-auth-token", key, "x-application-id", other.ID}
		h.Do("GET", path, nil, admin).Expect(t, 404, "NOT_FOUND")
		h.Do("PUT", path, map[string]any{"title": "mine"}, admin).Expect(t, 404, "NOT_FOUND")
		h.Do("DELETE", path, nil, admin).Expect(t, 404, "NOT_FOUND")
		if n := len(h.Do("GET", "/awardenrichments", nil, admin).Expect(t, 200, "").Map(t)["items"].([]any)); n != 0 {
			t.Errorf("the other tenant lists %d enrichments", n)
		}
	})
	t.Run("Unchanged", func(t *testing.T) {
		got := h.Do("GET", path, nil, h.Admin()).Expect(t, 200, "").Map(t)
		if !reflect.DeepEqual(got, e) {
			t.Errorf("refused callers changed the enrichment: %v", got)
		}
		if n := len(h.Do("GET", "/awardenrichments", nil, h.Admin()).Expect(t, 200, "").Map(t)["items"].([]any)); n != 1 {
			t.Errorf("%d enrichments, want 1", n)
		}
	})
	t.Run("BadID", func(t *testing.T) {
		h.Do("GET", "/awardenrichments/not%20an%20id", nil, h.Admin()).Expect(t, 404, "NOT_FOUND")
	})
}

func TestInternal(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	ctx := context.Background()
	perkA, perkB := newPerk(t, h), newPerk(t, h)
	internal := func(perkID, title string) string {
		h.Clock.Advance(time.Second)
		return create(t, h, map[string]any{"loyaltyProvider": "INTERNAL", "loyaltyRewardId": perkID, "title": title})["_id"].(string)
	}
	a1 := internal(perkA, "A first")
	a2 := internal(perkA, "A second")
	b1 := internal(perkB, "B")
	create(t, h, map[string]any{"loyaltyProvider": "COMO", "loyaltyRewardId": perkA, "title": "external"})

	check := func(t *testing.T, want map[string]string) {
		t.Helper()
		got, err := h.Deps.Enrichments.Internal(ctx, h.Tenant.ID)
		if err != nil {
			t.Fatalf("Internal: %v", err)
		}
		if len(got) != len(want) {
			t.Errorf("Internal returned %d perks, want %d: %v", len(got), len(want), got)
		}
		for perkID, id := range want {
			e, ok := got[perkID]
			if !ok || e.ID != id || e.LoyaltyProvider != "INTERNAL" || e.LoyaltyRewardID != perkID || e.TenantID != h.Tenant.ID {
				t.Errorf("Internal()[%s] = %+v, want enrichment %s", perkID, e, id)
			}
		}
	}
	t.Run("NewestCreated", func(t *testing.T) {
		check(t, map[string]string{perkA: a2, perkB: b1})
	})
	t.Run("NewestUpdated", func(t *testing.T) {
		h.Clock.Advance(time.Second)
		h.Do("PUT", "/awardenrichments/"+a1, map[string]any{"title": "A updated"}, h.Admin()).Expect(t, 200, "")
		check(t, map[string]string{perkA: a1, perkB: b1})
		got, _ := h.Deps.Enrichments.Internal(ctx, h.Tenant.ID)
		if title := got[perkA].Title; title == nil || *title != "A updated" {
			t.Errorf("Internal()[perkA].Title = %v, want the updated title", title)
		}
	})
	t.Run("Deleted", func(t *testing.T) {
		h.Do("DELETE", "/awardenrichments/"+a1, nil, h.Admin()).Expect(t, 204, "")
		check(t, map[string]string{perkA: a2, perkB: b1})
	})
	t.Run("OtherTenant", func(t *testing.T) {
		other, _ := h.NewTenant(h.Tenant.Settings)
		got, err := h.Deps.Enrichments.Internal(ctx, other.ID)
		if err != nil || len(got) != 0 {
			t.Errorf("Internal(other tenant) = %v, %v; want none", got, err)
		}
	})
}

// TestInternalRewardMustExist needs the enrichment service wired with the
// perk domain (app: `Perks: d.Perks`).
func TestInternalRewardMustExist(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	if h.Deps.Enrichments.Perks == nil {
		t.Fatal("enrichment.Service.Perks is not wired: add `Perks: d.Perks` to the enrichment.Service of app.wireLoyalty")
	}
	other, key := h.NewTenant(h.Tenant.Settings)
	otherAdmin := ts.Headers{"x-service-auth-token", key, "x-application-id", other.ID}
	foreignPerk := h.Do("POST", "/perks", map[string]any{"title": "Theirs", "template": "AD_HOC"}, otherAdmin).Expect(t, 201, "").Map(t)["_id"].(string)
	disabled := newPerk(t, h)
	h.Do("DELETE", "/perks/"+disabled, nil, h.Admin()).Expect(t, 204, "")

	for _, tc := range []struct{ name, rewardID string }{
		{"UnknownPerk", "5f1c0a9b2d3e4f5a6b7c8d9e"},
		{"NotAPerkID", "not a perk"},
		{"OtherTenantsPerk", foreignPerk},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := h.Do("POST", "/awardenrichments", map[string]any{"loyaltyProvider": "INTERNAL", "loyaltyRewardId": tc.rewardID}, h.Admin()).Expect(t, 422, "VALIDATION_FAILED")
			if msg := r.Map(t)["message"].(string); !strings.HasPrefix(msg, "loyaltyRewardId") {
				t.Errorf("message = %q, want it to start with loyaltyRewardId", msg)
			}
		})
	}
	t.Run("DisabledPerk", func(t *testing.T) {
		create(t, h, map[string]any{"loyaltyProvider": "INTERNAL", "loyaltyRewardId": disabled})
	})
	t.Run("ExternalNeedsNoPerk", func(t *testing.T) {
		create(t, h, map[string]any{"loyaltyProvider": "EXTERNAL", "loyaltyRewardId": "5f1c0a9b2d3e4f5a6b7c8d9e"})
	})
	if n := len(h.Do("GET", "/awardenrichments", nil, h.Admin()).Expect(t, 200, "").Map(t)["items"].([]any)); n != 2 {
		t.Errorf("%d enrichments stored, want the 2 accepted ones", n)
	}
}

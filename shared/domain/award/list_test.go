package award_test

import (
	"net/url"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	ts "github.com/loyalty-platform/platform/shared/testkit"
)

// v8 asks GET /awards for the current {items, page} shape.
var v8 = ts.Headers{"x-api-version", "8"}

// listed is a decoded award list: its items (current or legacy) and page.
type listed struct {
	items []map[string]any
	page  map[string]any
	raw   map[string]any
}

// decodeList reads a 200 list body: {items, page}, {awards, page} or
// {awards}.
func decodeList(t *testing.T, r *ts.Resp) listed {
	t.Helper()
	m := r.Expect(t, 200, "").Map(t)
	var l listed
	l.raw = m
	key := "items"
	if _, ok := m[key]; !ok {
		key = "awards"
	}
	arr, ok := m[key].([]any)
	if !ok {
		t.Fatalf("no %s array in %v", key, m)
	}
	for _, it := range arr {
		l.items = append(l.items, it.(map[string]any))
	}
	if p, ok := m["page"].(map[string]any); ok {
		l.page = p
	}
	return l
}

// awardsList returns GET /awards+query as the caller (200 expected).
func awardsList(t *testing.T, h *ts.Harness, query string, headers ...ts.Headers) listed {
	t.Helper()
	return decodeList(t, h.Do("GET", "/awards"+query, nil, headers...))
}

// userList returns GET path (a per-user list, 200 expected).
func userList(t *testing.T, h *ts.Harness, path string, headers ...ts.Headers) listed {
	t.Helper()
	return decodeList(t, h.Do("GET", path, nil, headers...))
}

// field returns the string field key of each item, in order.
func field(items []map[string]any, key string) []string {
	out := make([]string, 0, len(items))
	for _, it := range items {
		s, _ := it[key].(string)
		out = append(out, s)
	}
	return out
}

// awardIDs returns the award ids of current-shape items.
func awardIDs(items []map[string]any) []string { return field(items, "_id") }

// perkIDs returns the perk ids of items of either shape.
func perkIDs(items []map[string]any) []string {
	out := make([]string, 0, len(items))
	for _, it := range items {
		if p, ok := it["perkId"].(string); ok {
			out = append(out, p)
			continue
		}
		out = append(out, it["_id"].(string)) // legacy: _id is the perk's
	}
	return out
}

func sorted(s []string) []string {
	c := slices.Clone(s)
	sort.Strings(c)
	return c
}

func aid(uid, perkID string) string { return uid + "-" + perkID }

// TestListAwardsCallers: who gets which awards from GET /awards (v8).
func TestListAwardsCallers(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	alice, token, _ := h.ActiveUser(t, "Alice", "Lister")
	bob := h.AdminUser(t, "Bob", "Lister")
	p1 := newPerk(t, h, nil)
	p2 := newPerk(t, h, nil)
	global := newPerk(t, h, map[string]any{"isGlobal": true, "points": map[string]any{"initial": 2}})
	grant(t, h, p1, alice, 1)
	h.Clock.Advance(time.Minute)
	grant(t, h, p2, bob, 1)
	h.Clock.Advance(time.Minute)
	grant(t, h, p2, alice, 1)

	user := ts.Token(token)
	tests := []struct {
		name    string
		query   string
		headers ts.Headers
		status  int
		code    string
		want    []string // award ids, in order
	}{
		{"UserGetsOwn", "", user, 200, "", []string{aid(alice, p1), aid(alice, p2), aid(alice, global)}},
		{"UserPassingOwnUserID", "?userId=" + alice, user, 200, "", []string{aid(alice, p1), aid(alice, p2), aid(alice, global)}},
		{"AdminTenantNewestFirst", "", h.Admin(), 200, "", []string{aid(alice, p2), aid(bob, p2), aid(alice, p1)}},
		{"AdminOneUser", "?userId=" + bob, h.Admin(), 200, "", []string{aid(bob, p2), aid(bob, global)}},
		{"AdminUnknownUser", "?userId=5f1c0a9b2d3e4f5a6b7c8d9e", h.Admin(), 404, "NOT_FOUND", nil},
		{"AdminMalformedUser", "?userId=" + url.QueryEscape("not a user"), h.Admin(), 404, "NOT_FOUND", nil},
		{"UserAsksAnotherUser", "?userId=" + bob, user, 401, "UNAUTHORIZED", nil},
		{"Anonymous", "", h.Anon(), 401, "UNAUTHORIZED", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := h.Do("GET", "/awards"+tc.query, nil, tc.headers, v8)
			if tc.status != 200 {
				r.Expect(t, tc.status, tc.code)
				return
			}
			l := decodeList(t, r)
			if _, legacy := l.raw["awards"]; legacy || l.page == nil {
				t.Fatalf("body = %v, want {items, page}", l.raw)
			}
			if got := awardIDs(l.items); !slices.Equal(got, tc.want) {
				t.Errorf("awards = %v, want %v", got, tc.want)
			}
			if got := l.page["count"]; got != float64(len(tc.want)) {
				t.Errorf("page.count = %v, want %d", got, len(tc.want))
			}
			for _, it := range l.items {
				if it["perkId"] == "" || it["userId"] == "" || it["tenantId"] != h.Tenant.ID {
					t.Errorf("item = %v", it)
				}
			}
		})
	}
}

// TestListAwardsLegacyShape: without x-api-version 8, GET /awards answers
// the perk-shaped {awards, page}.
func TestListAwardsLegacyShape(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	uid, token, _ := h.ActiveUser(t, "Lena", "Legacy")
	perkID := newPerk(t, h, nil)
	grant(t, h, perkID, uid, 3)

	tests := []struct {
		name    string
		query   string
		headers []ts.Headers
	}{
		{"NoHeaderAdmin", "", []ts.Headers{h.Admin()}},
		{"NoHeaderAdminUser", "?userId=" + uid, []ts.Headers{h.Admin()}},
		{"NoHeaderUser", "", []ts.Headers{ts.Token(token)}},
		{"Version7", "", []ts.Headers{h.Admin(), {"x-api-version", "7"}}},
		{"Version7User", "", []ts.Headers{ts.Token(token), {"x-api-version", "7"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l := awardsList(t, h, tc.query, tc.headers...)
			if _, current := l.raw["items"]; current || l.page == nil {
				t.Fatalf("body = %v, want {awards, page}", l.raw)
			}
			if len(l.items) != 1 {
				t.Fatalf("awards = %v, want one", l.items)
			}
			a := l.items[0]
			if a["_id"] != perkID || a["awardId"] != aid(uid, perkID) || a["userId"] != uid || available(t, a) != 3 {
				t.Errorf("legacy award = %v, want _id the perk, awardId, userId and 3 points", a)
			}
			if _, ok := a["perkId"]; ok {
				t.Errorf("legacy award has perkId: %v", a)
			}
		})
	}
	t.Run("VersionNotANumber", func(t *testing.T) {
		h.Do("GET", "/awards", nil, h.Admin(), ts.Headers{"x-api-version", "abc"}).Expect(t, 422, "VALIDATION_FAILED")
	})
	t.Run("VersionZero", func(t *testing.T) {
		h.Do("GET", "/awards", nil, h.Admin(), ts.Headers{"x-api-version", "0"}).Expect(t, 422, "VALIDATION_FAILED")
	})
}

// TestListAwardsFields: fields narrows each item (v8).
func TestListAwardsFields(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	uid, token, _ := h.ActiveUser(t, "Fay", "Fields")
	perkID := newPerk(t, h, nil)
	grant(t, h, perkID, uid, 2)

	tests := []struct {
		name    string
		query   string
		headers ts.Headers
		status  int
		want    []string // keys of each item
	}{
		{"TenantList", "?fields=_id,points", h.Admin(), 200, []string{"_id", "points"}},
		{"OneUser", "?fields=_id,points&userId=" + uid, h.Admin(), 200, []string{"_id", "points"}},
		{"OwnAwards", "?fields=_id,points", ts.Token(token), 200, []string{"_id", "points"}},
		{"Repeated", "?fields=perkId&fields=updatedAt", h.Admin(), 200, []string{"perkId", "updatedAt"}},
		{"Every", "?fields=_id,tenantId,userId,loyaltyProvider,perkId,points,updatedAt", h.Admin(), 200,
			[]string{"_id", "loyaltyProvider", "perkId", "points", "tenantId", "updatedAt", "userId"}},
		{"UnknownField", "?fields=_id,nope", h.Admin(), 422, nil},
		{"NotNarrowable", "?fields=title", h.Admin(), 422, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := h.Do("GET", "/awards"+tc.query, nil, tc.headers, v8)
			if tc.status != 200 {
				r.Expect(t, tc.status, "VALIDATION_FAILED")
				return
			}
			l := decodeList(t, r)
			if len(l.items) != 1 {
				t.Fatalf("items = %v, want one", l.items)
			}
			var keys []string
			for k := range l.items[0] {
				keys = append(keys, k)
			}
			if got := sorted(keys); !slices.Equal(got, sorted(tc.want)) {
				t.Errorf("keys = %v, want %v", got, sorted(tc.want))
			}
			if v, ok := l.items[0]["_id"]; ok && v != aid(uid, perkID) {
				t.Errorf("_id = %v", v)
			}
			if _, ok := l.items[0]["points"]; ok && available(t, l.items[0]) != 2 {
				t.Errorf("points = %v", l.items[0]["points"])
			}
		})
	}
}

// TestListAwardsIncludeDisabled: a disabled perk's awards are hidden
// unless includeDisabled=true.
func TestListAwardsIncludeDisabled(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	uid := h.AdminUser(t, "Dee", "Disabled")
	kept := newPerk(t, h, nil)
	gone := newPerk(t, h, nil)
	grant(t, h, kept, uid, 1)
	grant(t, h, gone, uid, 1)
	h.Do("DELETE", "/perks/"+gone, nil, h.Admin()).Expect(t, 204, "")

	lists := []struct {
		name    string
		path    string
		headers []ts.Headers
	}{
		{"TenantList", "/awards", []ts.Headers{h.Admin(), v8}},
		{"TenantListLegacy", "/awards", []ts.Headers{h.Admin()}},
		{"OneUser", "/awards?userId=" + uid, []ts.Headers{h.Admin(), v8}},
		{"UserAwards", "/users/" + uid + "/awards", []ts.Headers{h.Admin()}},
		{"UserPointAwards", "/users/" + uid + "/pointawards", []ts.Headers{h.Admin()}},
	}
	for _, l := range lists {
		for _, tc := range []struct {
			name  string
			param string
			want  []string
		}{
			{"Default", "", []string{kept}},
			{"False", "includeDisabled=false", []string{kept}},
			{"True", "includeDisabled=true", []string{kept, gone}},
		} {
			t.Run(l.name+"/"+tc.name, func(t *testing.T) {
				got := perkIDs(userList(t, h, withParam(l.path, tc.param), l.headers...).items)
				if !slices.Equal(sorted(got), sorted(tc.want)) {
					t.Errorf("perks = %v, want %v", got, tc.want)
				}
				if tc.param == "includeDisabled=true" {
					for _, it := range userList(t, h, withParam(l.path, tc.param), l.headers...).items {
						if it["enabled"] != (perkIDs([]map[string]any{it})[0] == kept) {
							t.Errorf("enabled = %v for %v", it["enabled"], it)
						}
					}
				}
			})
		}
	}
	t.Run("NotABoolean", func(t *testing.T) {
		h.Do("GET", "/awards?includeDisabled=maybe", nil, h.Admin(), v8).Expect(t, 422, "VALIDATION_FAILED")
	})
}

// withParam appends a query parameter to path.
func withParam(path, param string) string {
	if param == "" {
		return path
	}
	if strings.Contains(path, "?") {
		return path + "&" + param
	}
	return path + "?" + param
}

// TestListAwardsUnvisualised: includeUnvisualisedAwards=false drops the
// awards of perks without a visualisation.
func TestListAwardsUnvisualised(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	uid := h.AdminUser(t, "Vic", "Visual")
	shown := newPerk(t, h, nil)
	plain := newPerk(t, h, map[string]any{"visualisation": nil})
	grant(t, h, shown, uid, 1)
	grant(t, h, plain, uid, 1)

	lists := []struct {
		name    string
		path    string
		headers []ts.Headers
	}{
		{"TenantList", "/awards", []ts.Headers{h.Admin(), v8}},
		{"OneUser", "/awards?userId=" + uid, []ts.Headers{h.Admin(), v8}},
		{"OneUserLegacy", "/awards?userId=" + uid, []ts.Headers{h.Admin()}},
		{"UserAwards", "/users/" + uid + "/awards", []ts.Headers{h.Admin()}},
		{"UserPointAwards", "/users/" + uid + "/pointawards", []ts.Headers{h.Admin()}},
	}
	for _, l := range lists {
		for _, tc := range []struct {
			name  string
			param string
			want  []string
		}{
			{"Default", "", []string{shown, plain}},
			{"True", "includeUnvisualisedAwards=true", []string{shown, plain}},
			{"False", "includeUnvisualisedAwards=false", []string{shown}},
		} {
			t.Run(l.name+"/"+tc.name, func(t *testing.T) {
				got := perkIDs(userList(t, h, withParam(l.path, tc.param), l.headers...).items)
				if !slices.Equal(sorted(got), sorted(tc.want)) {
					t.Errorf("perks = %v, want %v", got, tc.want)
				}
			})
		}
	}
}

// TestListAwardsLocation: locationId keeps awards whose perk is valid
// there.
func TestListAwardsLocation(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	uid := h.AdminUser(t, "Lou", "Located")
	here := h.Do("POST", "/locations", map[string]any{"title": "Here", "geo": []float64{-0.13, 51.51}}, h.Admin()).Expect(t, 201, "").Map(t)["_id"].(string)
	there := h.Do("POST", "/locations", map[string]any{"title": "There", "geo": []float64{-1.5, 53.8}}, h.Admin()).Expect(t, 201, "").Map(t)["_id"].(string)
	atHere := newPerk(t, h, map[string]any{"locationIds": []string{here}})
	everywhere := newPerk(t, h, nil)
	grant(t, h, atHere, uid, 1)
	grant(t, h, everywhere, uid, 1)

	lists := []struct {
		name    string
		path    string
		headers []ts.Headers
	}{
		{"TenantList", "/awards", []ts.Headers{h.Admin(), v8}},
		{"OneUser", "/awards?userId=" + uid, []ts.Headers{h.Admin(), v8}},
		{"UserAwards", "/users/" + uid + "/awards", []ts.Headers{h.Admin()}},
		{"UserPointAwards", "/users/" + uid + "/pointawards", []ts.Headers{h.Admin()}},
	}
	for _, l := range lists {
		for _, tc := range []struct {
			name   string
			param  string
			status int
			want   []string
		}{
			{"NoLocation", "", 200, []string{atHere, everywhere}},
			{"ItsLocation", "locationId=" + here, 200, []string{atHere, everywhere}},
			{"AnotherLocation", "locationId=" + there, 200, []string{everywhere}},
			{"UnknownLocation", "locationId=5f1c0a9b2d3e4f5a6b7c8d9e", 200, []string{everywhere}},
			{"Malformed", "locationId=" + url.QueryEscape("a b"), 422, nil},
		} {
			t.Run(l.name+"/"+tc.name, func(t *testing.T) {
				r := h.Do("GET", withParam(l.path, tc.param), nil, l.headers...)
				if tc.status != 200 {
					r.Expect(t, tc.status, "VALIDATION_FAILED")
					return
				}
				got := perkIDs(decodeList(t, r).items)
				if !slices.Equal(sorted(got), sorted(tc.want)) {
					t.Errorf("perks = %v, want %v", got, tc.want)
				}
			})
		}
	}
}

// TestListAwardsUpdatedAt: the updatedAt conditions on the tenant list and
// on one user's list.
func TestListAwardsUpdatedAt(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	uid := h.AdminUser(t, "Tim", "Times")
	other := h.AdminUser(t, "Oda", "Other")
	perks := []string{newPerk(t, h, nil), newPerk(t, h, nil), newPerk(t, h, nil)}
	h.Clock.Advance(time.Minute)
	for _, p := range perks {
		grant(t, h, p, uid, 1)
		h.Clock.Advance(time.Minute)
	}
	// Another user's award, changed last: only the tenant list shows it.
	grant(t, h, perks[2], other, 1)

	stamps := map[string]string{} // award id -> updatedAt
	for _, it := range awardsList(t, h, "", h.Admin(), v8).items {
		stamps[it["_id"].(string)] = it["updatedAt"].(string)
	}
	a1, a2, a3, o3 := aid(uid, perks[0]), aid(uid, perks[1]), aid(uid, perks[2]), aid(other, perks[2])
	if len(stamps) != 4 {
		t.Fatalf("tenant list = %v, want 4 awards", stamps)
	}
	t1, t2, t3, to := stamps[a1], stamps[a2], stamps[a3], stamps[o3]
	if !(t1 < t2 && t2 < t3 && t3 < to) {
		t.Fatalf("updatedAt not increasing: %s %s %s %s", t1, t2, t3, to)
	}
	inT2 := func() string { // t2 written in +01:00
		tt, err := time.Parse(time.RFC3339Nano, t2)
		if err != nil {
			t.Fatal(err)
		}
		return tt.In(time.FixedZone("", 3600)).Format(time.RFC3339Nano)
	}()
	q := url.QueryEscape
	tests := []struct {
		name   string
		param  string
		tenant []string // newest first
		user   []string // perk order
	}{
		{"Gt", "updatedAt.gt=" + q(t1), []string{o3, a3, a2}, []string{a2, a3}},
		{"GtLast", "updatedAt.gt=" + q(to), []string{}, []string{}},
		{"Lte", "updatedAt.lte=" + q(t2), []string{a2, a1}, []string{a1, a2}},
		{"LteFirst", "updatedAt.lte=" + q(t1), []string{a1}, []string{a1}},
		{"Eq", "updatedAt.eq=" + q(t2), []string{a2}, []string{a2}},
		{"Neq", "updatedAt.neq=" + q(t2), []string{o3, a3, a1}, []string{a1, a3}},
		{"Bare", "updatedAt=" + q(t2), []string{a2}, []string{a2}},
		{"BareOtherOffset", "updatedAt=" + q(inT2), []string{a2}, []string{a2}},
		{"GtAndLte", "updatedAt.gt=" + q(t1) + "&updatedAt.lte=" + q(t3), []string{a3, a2}, []string{a2, a3}},
		{"GtAndNeq", "updatedAt.gt=" + q(t1) + "&updatedAt.neq=" + q(t3), []string{o3, a2}, []string{a2}},
		{"EqAndGt", "updatedAt.eq=" + q(t2) + "&updatedAt.gt=" + q(t1), []string{a2}, []string{a2}},
		{"EmptyRange", "updatedAt.gt=" + q(t3) + "&updatedAt.lte=" + q(t1), []string{}, []string{}},
		{"SameBounds", "updatedAt.gt=" + q(t2) + "&updatedAt.lte=" + q(t2), []string{}, []string{}},
		{"SecondsOnly", "updatedAt.lte=" + q("2000-01-01T00:00:00Z"), []string{}, []string{}},
	}
	for _, tc := range tests {
		t.Run("Tenant/"+tc.name, func(t *testing.T) {
			got := awardIDs(awardsList(t, h, "?"+tc.param, h.Admin(), v8).items)
			if !slices.Equal(got, tc.tenant) {
				t.Errorf("tenant list = %v, want %v", got, tc.tenant)
			}
		})
		t.Run("User/"+tc.name, func(t *testing.T) {
			got := awardIDs(awardsList(t, h, "?userId="+uid+"&"+tc.param, h.Admin(), v8).items)
			if !slices.Equal(got, tc.user) {
				t.Errorf("user list = %v, want %v", got, tc.user)
			}
		})
	}
	t.Run("ChangeMovesAwardToFront", func(t *testing.T) {
		h.Clock.Advance(time.Minute)
		h.Do("POST", redeemPath(uid, perks[0]), map[string]any{"valueToRedeem": 1}, h.Admin()).Expect(t, 200, "")
		items := awardsList(t, h, "", h.Admin(), v8).items
		if got, want := awardIDs(items), []string{a1, o3, a3, a2}; !slices.Equal(got, want) {
			t.Fatalf("tenant list = %v, want %v (the changed award first, listed once)", got, want)
		}
		newest := items[0]["updatedAt"].(string)
		if newest <= to {
			t.Errorf("updatedAt = %s after the change, want after %s", newest, to)
		}
		for _, path := range []string{"/awards?updatedAt.gt=" + q(to), "/awards?userId=" + uid + "&updatedAt.gt=" + q(to)} {
			if got := awardIDs(userList(t, h, path, h.Admin(), v8).items); !slices.Equal(got, []string{a1}) {
				t.Errorf("%s = %v, want [%s]", path, got, a1)
			}
		}
		if got := awardIDs(awardsList(t, h, "?updatedAt="+q(t1), h.Admin(), v8).items); len(got) != 0 {
			t.Errorf("the old updatedAt still matches %v", got)
		}
	})
	for _, tc := range []struct{ name, param string }{
		{"MalformedDate", "updatedAt.gt=yesterday"},
		{"DateOnly", "updatedAt=" + q("2024-05-01")},
		{"MalformedNeq", "updatedAt.neq=2024-13-01T00:00:00Z"},
		{"AfterYear9999InUTC", "updatedAt.lte=" + q("9999-12-31T23:59:59-05:00")},
		{"BeforeYear0000InUTC", "updatedAt.gt=" + q("0000-01-01T00:00:00+01:00")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h.Do("GET", "/awards?"+tc.param, nil, h.Admin(), v8).Expect(t, 422, "VALIDATION_FAILED")
			h.Do("GET", "/awards?userId="+uid+"&"+tc.param, nil, h.Admin(), v8).Expect(t, 422, "VALIDATION_FAILED")
		})
	}
}

// TestListAwardsPaging: following nextKey visits every award once, in
// order; keys are bound to their query.
func TestListAwardsPaging(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	uid, token, _ := h.ActiveUser(t, "Pam", "Pages")
	for i := 0; i < 5; i++ {
		grant(t, h, newPerk(t, h, nil), uid, 1)
		h.Clock.Advance(time.Minute)
	}
	// idOf is an item's award id, in either shape.
	idOf := func(it map[string]any) string {
		if a, ok := it["awardId"].(string); ok {
			return a
		}
		return it["_id"].(string)
	}
	walk := func(t *testing.T, query string, headers ...ts.Headers) (seen []string, firstNext string) {
		t.Helper()
		start := ""
		for pages := 0; ; pages++ {
			if pages > 10 {
				t.Fatalf("more than 10 pages: %v", seen)
			}
			qq := withParam(query, "limit=2")
			if start != "" {
				qq += "&startKey=" + url.QueryEscape(start)
			}
			l := awardsList(t, h, qq, headers...)
			if len(l.items) > 2 {
				t.Fatalf("page of %d items with limit 2", len(l.items))
			}
			if l.page["count"] != float64(len(l.items)) || l.page["limit"] != 2.0 {
				t.Errorf("page = %v for %d items", l.page, len(l.items))
			}
			if start != "" && l.page["startKey"] != start {
				t.Errorf("page.startKey = %v, want %s", l.page["startKey"], start)
			}
			for _, it := range l.items {
				seen = append(seen, idOf(it))
			}
			next, _ := l.page["nextKey"].(string)
			if firstNext == "" {
				firstNext = next
			}
			if next == "" {
				if len(l.items) == 0 && pages > 0 {
					t.Errorf("an empty last page after a nextKey")
				}
				return seen, firstNext
			}
			start = next
		}
	}
	lists := []struct {
		name    string
		query   string
		headers []ts.Headers
	}{
		{"Tenant", "", []ts.Headers{h.Admin(), v8}},
		{"TenantLegacy", "", []ts.Headers{h.Admin()}},
		{"OneUser", "?userId=" + uid, []ts.Headers{h.Admin(), v8}},
		{"OwnAwards", "", []ts.Headers{ts.Token(token), v8}},
	}
	keys := map[string]string{}
	for _, l := range lists {
		t.Run(l.name, func(t *testing.T) {
			var all []string
			for _, it := range awardsList(t, h, l.query, l.headers...).items {
				all = append(all, idOf(it))
			}
			if len(all) != 5 {
				t.Fatalf("list = %v, want 5 awards", all)
			}
			got, next := walk(t, l.query, l.headers...)
			if !slices.Equal(got, all) {
				t.Errorf("paged = %v, want %v", got, all)
			}
			if next == "" {
				t.Errorf("no nextKey on the first page")
			}
			keys[l.name] = next
		})
	}
	tests := []struct {
		name    string
		query   string
		headers []ts.Headers
	}{
		{"Forged", "?startKey=" + url.QueryEscape("eyJvIjoiTjoyIn0.AAAAAAAAAAAAAAAAAAAAAAAA"), []ts.Headers{h.Admin(), v8}},
		{"ForgedUser", "?userId=" + uid + "&startKey=garbage", []ts.Headers{h.Admin(), v8}},
		{"TenantKeyOnUserList", "?userId=" + uid + "&startKey=" + url.QueryEscape(keys["Tenant"]), []ts.Headers{h.Admin(), v8}},
		{"UserKeyOnTenantList", "?startKey=" + url.QueryEscape(keys["OneUser"]), []ts.Headers{h.Admin(), v8}},
		{"TenantKeyOtherFilter", "?includeDisabled=true&startKey=" + url.QueryEscape(keys["Tenant"]), []ts.Headers{h.Admin(), v8}},
		{"CurrentKeyOnLegacy", "?startKey=" + url.QueryEscape(keys["Tenant"]), []ts.Headers{h.Admin()}},
		{"LimitZero", "?limit=0", []ts.Headers{h.Admin(), v8}},
		{"LimitTooLarge", "?userId=" + uid + "&limit=1001", []ts.Headers{h.Admin(), v8}},
		{"LimitNotANumber", "?limit=two", []ts.Headers{ts.Token(token), v8}},
		{"AdminUserKeyForUser", "?startKey=" + url.QueryEscape(keys["OneUser"]), []ts.Headers{ts.Token(token), v8}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h.Do("GET", "/awards"+tc.query, nil, tc.headers...).Expect(t, 422, "VALIDATION_FAILED")
		})
	}
	t.Run("OtherTenant", func(t *testing.T) {
		other, key := h.NewTenant(h.Tenant.Settings)
		h.Do("GET", "/awards?startKey="+url.QueryEscape(keys["Tenant"]), nil,
			ts.Headers{"x-service-auth-token", key, "x-application-id", other.ID}, v8).Expect(t, 422, "VALIDATION_FAILED")
	})
}

// TestUserAwardsTiers: of the tier perks a user holds, only the highest
// priority is presented; the lists are highest priority first.
func TestUserAwardsTiers(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	uid, token, _ := h.ActiveUser(t, "Tia", "Tiers")
	plain := newPerk(t, h, nil) // created first: priority orders, not creation
	tier := map[int]string{}
	for _, p := range []int{1, 5, 3} {
		tier[p] = newPerk(t, h, map[string]any{"isTier": true, "priority": p})
	}
	for _, p := range []string{plain, tier[1], tier[5], tier[3]} {
		grant(t, h, p, uid, 1)
	}
	want := []string{tier[5], plain}
	lists := []struct {
		name    string
		path    string
		headers []ts.Headers
	}{
		{"PointAwards", "/users/" + uid + "/pointawards", []ts.Headers{ts.Token(token)}},
		{"PointAwardsAdmin", "/users/" + uid + "/pointawards", []ts.Headers{h.Admin()}},
		{"LegacyAwards", "/users/" + uid + "/awards", []ts.Headers{h.Admin()}},
		{"OwnList", "/awards", []ts.Headers{ts.Token(token), v8}},
		{"OneUserList", "/awards?userId=" + uid, []ts.Headers{h.Admin(), v8}},
	}
	for _, l := range lists {
		t.Run(l.name, func(t *testing.T) {
			got := perkIDs(userList(t, h, l.path, l.headers...).items)
			if !slices.Equal(got, want) {
				t.Errorf("perks = %v, want %v (the priority-5 tier, then the non-tier perk)", got, want)
			}
		})
	}
	t.Run("TieKeepsNewestPerk", func(t *testing.T) {
		other := h.AdminUser(t, "Tod", "Tie")
		older := newPerk(t, h, map[string]any{"isTier": true, "priority": 7})
		newer := newPerk(t, h, map[string]any{"isTier": true, "priority": 7})
		grant(t, h, newer, other, 1)
		grant(t, h, older, other, 1)
		got := perkIDs(userList(t, h, "/users/"+other+"/pointawards", h.Admin()).items)
		if !slices.Equal(got, []string{newer}) {
			t.Errorf("perks = %v, want only the newer of two tiers of equal priority (%s)", got, newer)
		}
	})
	t.Run("TopTierDisabled", func(t *testing.T) {
		h.Do("DELETE", "/perks/"+tier[5], nil, h.Admin()).Expect(t, 204, "")
		got := perkIDs(userList(t, h, "/users/"+uid+"/pointawards", h.Admin()).items)
		if w := []string{tier[3], plain}; !slices.Equal(got, w) {
			t.Errorf("perks = %v, want %v (the next tier once the top one is disabled)", got, w)
		}
	})
}

// TestListAwardsGlobalPerk: a global perk's award is virtual in the user
// lists and absent from the tenant list until its first change.
func TestListAwardsGlobalPerk(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	global := newPerk(t, h, map[string]any{"isGlobal": true, "points": map[string]any{"initial": 4}})
	uid, token, _ := h.ActiveUser(t, "Gil", "Global")

	find := func(items []map[string]any) map[string]any {
		for _, it := range items {
			if perkIDs([]map[string]any{it})[0] == global {
				return it
			}
		}
		return nil
	}
	lists := []struct {
		name    string
		path    string
		headers []ts.Headers
	}{
		{"PointAwards", "/users/" + uid + "/pointawards", []ts.Headers{ts.Token(token)}},
		{"LegacyAwards", "/users/" + uid + "/awards", []ts.Headers{h.Admin()}},
		{"OwnList", "/awards", []ts.Headers{ts.Token(token), v8}},
		{"OneUserList", "/awards?userId=" + uid, []ts.Headers{h.Admin(), v8}},
	}
	for _, l := range lists {
		t.Run("Virtual/"+l.name, func(t *testing.T) {
			a := find(userList(t, h, l.path, l.headers...).items)
			if a == nil {
				t.Fatalf("no award of the global perk")
			}
			if available(t, a) != 4 || pts(a)["totalGranted"] != 0.0 {
				t.Errorf("virtual award = %v, want 4 available and nothing granted", a)
			}
		})
	}
	t.Run("VirtualDatedByPerk", func(t *testing.T) {
		perkAt := h.Do("GET", "/perks/"+global, nil, h.Admin()).Expect(t, 200, "").Map(t)["updatedAt"].(string)
		items := awardsList(t, h, "?userId="+uid+"&updatedAt="+url.QueryEscape(perkAt), h.Admin(), v8).items
		if got := awardIDs(items); !slices.Equal(got, []string{aid(uid, global)}) {
			t.Errorf("awards changed at the perk's updatedAt = %v, want the virtual award", got)
		}
		items = awardsList(t, h, "?userId="+uid+"&updatedAt.gt="+url.QueryEscape(perkAt), h.Admin(), v8).items
		if len(items) != 0 {
			t.Errorf("awards changed after the perk = %v, want none", items)
		}
	})
	t.Run("NotInTenantList", func(t *testing.T) {
		if l := awardsList(t, h, "", h.Admin(), v8); len(l.items) != 0 {
			t.Errorf("tenant list = %v, want empty (the global award is virtual)", l.items)
		}
	})
	t.Run("StoredAfterFirstChange", func(t *testing.T) {
		grant(t, h, global, uid, 1)
		items := awardsList(t, h, "", h.Admin(), v8).items
		if got := awardIDs(items); !slices.Equal(got, []string{aid(uid, global)}) {
			t.Fatalf("tenant list = %v, want the materialised award", got)
		}
		if available(t, items[0]) != 5 {
			t.Errorf("available = %d, want 5", available(t, items[0]))
		}
		if a := find(userList(t, h, "/users/"+uid+"/pointawards", ts.Token(token)).items); a == nil || available(t, a) != 5 {
			t.Errorf("user's award = %v, want 5 available", a)
		}
	})
}

// TestListAwardsEnrichment: an INTERNAL enrichment overlays its perk's
// awards in the lists, until it is deleted.
func TestListAwardsEnrichment(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	uid, token, _ := h.ActiveUser(t, "Eve", "Enriched")
	perkID := newPerk(t, h, nil)
	grant(t, h, perkID, uid, 1)
	enr := h.Do("POST", "/awardenrichments", map[string]any{
		"loyaltyRewardId": perkID, "loyaltyProvider": "INTERNAL", "title": "Enriched", "excludeDiscountIds": []string{"d1"},
	}, h.Admin()).Expect(t, 201, "").Map(t)["_id"].(string)

	lists := []struct {
		name    string
		path    string
		headers []ts.Headers
		current bool
	}{
		{"PointAwards", "/users/" + uid + "/pointawards", []ts.Headers{ts.Token(token)}, true},
		{"OwnList", "/awards", []ts.Headers{ts.Token(token), v8}, true},
		{"TenantList", "/awards", []ts.Headers{h.Admin(), v8}, true},
		{"LegacyAwards", "/users/" + uid + "/awards", []ts.Headers{h.Admin()}, false},
	}
	for _, l := range lists {
		t.Run("Enriched/"+l.name, func(t *testing.T) {
			items := userList(t, h, l.path, l.headers...).items
			if len(items) != 1 {
				t.Fatalf("items = %v", items)
			}
			a := items[0]
			if a["title"] != "Enriched" {
				t.Errorf("title = %v, want Enriched", a["title"])
			}
			if !l.current {
				return
			}
			if a["enrichmentId"] != enr {
				t.Errorf("enrichmentId = %v, want %s", a["enrichmentId"], enr)
			}
			if ex, _ := a["excludeDiscountIds"].([]any); len(ex) != 1 || ex[0] != "d1" {
				t.Errorf("excludeDiscountIds = %v, want [d1]", a["excludeDiscountIds"])
			}
		})
	}
	h.Do("DELETE", "/awardenrichments/"+enr, nil, h.Admin()).Expect(t, 204, "")
	for _, l := range lists {
		t.Run("Deleted/"+l.name, func(t *testing.T) {
			a := userList(t, h, l.path, l.headers...).items[0]
			if a["title"] != "Card" {
				t.Errorf("title = %v, want the perk's own (Card)", a["title"])
			}
			for _, k := range []string{"enrichmentId", "excludeDiscountIds"} {
				if v, ok := a[k]; ok {
					t.Errorf("%s = %v after the enrichment was deleted", k, v)
				}
			}
		})
	}
}

// TestListAwardsEnrichmentFields: every presentation field an INTERNAL
// enrichment carries shows on the awards (and answers the contract).
func TestListAwardsEnrichmentFields(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	uid := h.AdminUser(t, "Rich", "Fields")
	perkID := newPerk(t, h, map[string]any{"points": map[string]any{"initial": 1, "max": 30}})
	grant(t, h, perkID, uid, 2)
	enr := h.Do("POST", "/awardenrichments", map[string]any{
		"loyaltyRewardId": perkID, "loyaltyProvider": "INTERNAL", "title": "Rich", "token": "tok",
		"points":                      map[string]any{"initial": 0, "max": 10},
		"visualisation":               map[string]any{"titleText": "Rich card", "stampColour": "#C0A080"},
		"visualisationOnCurrentStamp": map[string]any{"3": map[string]any{"titleText": "Three"}},
		"excludeDiscountIds":          []string{"d1", "d2"},
	}, h.Admin()).Expect(t, 201, "").Map(t)["_id"].(string)
	lists := []struct {
		name    string
		path    string
		headers []ts.Headers
	}{
		{"PointAwards", "/users/" + uid + "/pointawards", []ts.Headers{h.Admin()}},
		{"OneUser", "/awards?userId=" + uid, []ts.Headers{h.Admin(), v8}},
		{"TenantList", "/awards", []ts.Headers{h.Admin(), v8}},
		{"TenantListLegacy", "/awards", []ts.Headers{h.Admin()}},
		{"LegacyAwards", "/users/" + uid + "/awards", []ts.Headers{h.Admin()}},
	}
	for _, l := range lists {
		t.Run(l.name, func(t *testing.T) {
			items := userList(t, h, l.path, l.headers...).items
			if len(items) != 1 {
				t.Fatalf("items = %v", items)
			}
			a := items[0]
			vis, _ := a["visualisation"].(map[string]any)
			if a["title"] != "Rich" || a["token"] != "tok" || vis["titleText"] != "Rich card" {
				t.Errorf("award = %v, want the enrichment's title, token and visualisation", a)
			}
			if p := pts(a); p["max"] != 10.0 || p["available"] != 2.0 {
				t.Errorf("points = %v, want the enrichment's rules (max 10) and the award's 2 available", p)
			}
			if _, legacy := a["awardId"]; legacy {
				return
			}
			if a["enrichmentId"] != enr {
				t.Errorf("enrichmentId = %v, want %s", a["enrichmentId"], enr)
			}
			if st, _ := a["visualisationOnCurrentStamp"].(map[string]any); st == nil || st["3"] == nil {
				t.Errorf("visualisationOnCurrentStamp = %v", a["visualisationOnCurrentStamp"])
			}
		})
	}
}

// TestListAwardsOtherTenant: a tenant sees nothing of another's users and
// awards.
func TestListAwardsOtherTenant(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	uid := h.AdminUser(t, "Tara", "Tenant")
	grant(t, h, newPerk(t, h, nil), uid, 1)
	other, key := h.NewTenant(h.Tenant.Settings)
	foreign := ts.Headers{"x-service-auth-token", key, "x-application-id", other.ID}

	tests := []struct {
		name    string
		path    string
		headers []ts.Headers
		status  int
	}{
		{"OneUser", "/awards?userId=" + uid, []ts.Headers{foreign, v8}, 404},
		{"OneUserLegacy", "/awards?userId=" + uid, []ts.Headers{foreign}, 404},
		{"PointAwards", "/users/" + uid + "/pointawards", []ts.Headers{foreign}, 404},
		{"LegacyAwards", "/users/" + uid + "/awards", []ts.Headers{foreign}, 404},
		{"TenantList", "/awards", []ts.Headers{foreign, v8}, 200},
		{"TenantListLegacy", "/awards", []ts.Headers{foreign}, 200},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := h.Do("GET", tc.path, nil, tc.headers...)
			if tc.status != 200 {
				r.Expect(t, tc.status, "NOT_FOUND")
				return
			}
			if l := decodeList(t, r); len(l.items) != 0 {
				t.Errorf("other tenant's list = %v, want empty", l.items)
			}
		})
	}
}

// TestUserAwardsAccess: who may read GET /users/{userId}/awards and
// /pointawards.
func TestUserAwardsAccess(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	uid, token, _ := h.ActiveUser(t, "Ada", "Access")
	other := h.AdminUser(t, "Ola", "Other")
	perkID := newPerk(t, h, nil)
	grant(t, h, perkID, uid, 1)
	grant(t, h, perkID, other, 1)

	for _, path := range []string{"awards", "pointawards"} {
		tests := []struct {
			name    string
			user    string
			headers ts.Headers
			status  int
			code    string
		}{
			{"Own", uid, ts.Token(token), 200, ""},
			{"Admin", other, h.Admin(), 200, ""},
			{"AnotherUsersAsUser", other, ts.Token(token), 404, "NOT_FOUND"},
			{"UnknownUserAsAdmin", "5f1c0a9b2d3e4f5a6b7c8d9e", h.Admin(), 404, "NOT_FOUND"},
			{"UnknownUserAsUser", "5f1c0a9b2d3e4f5a6b7c8d9e", ts.Token(token), 404, "NOT_FOUND"},
			{"MalformedUser", "not_a-user!", h.Admin(), 404, "NOT_FOUND"},
			{"Anonymous", uid, h.Anon(), 401, "UNAUTHORIZED"},
			{"MalformedLocation", uid, h.Admin(), 422, "VALIDATION_FAILED"},
		}
		for _, tc := range tests {
			t.Run(path+"/"+tc.name, func(t *testing.T) {
				p := "/users/" + url.PathEscape(tc.user) + "/" + path
				if tc.name == "MalformedLocation" {
					p += "?locationId=" + url.QueryEscape("a b")
				}
				r := h.Do("GET", p, nil, tc.headers)
				if tc.status != 200 {
					r.Expect(t, tc.status, tc.code)
					return
				}
				items := decodeList(t, r).items
				if len(items) != 1 || items[0]["userId"] != tc.user {
					t.Errorf("awards = %v, want the one of %s", items, tc.user)
				}
			})
		}
	}
}

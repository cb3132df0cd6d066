package actionlog_test

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"testing"
	"time"

	"github.com/loyalty-platform/platform/shared/domain/action"
	"github.com/loyalty-platform/platform/shared/domain/tenant"
	ts "github.com/loyalty-platform/platform/shared/testkit"
)

// seed records n actions for the tenant, one second apart going back from
// base: types alternate A_ONE/A_TWO, every third is at loc, every fourth
// has paymentType APP, and every action is the user's. It returns their
// ids newest first.
func seed(t *testing.T, h *ts.Harness, n int, base time.Time, userID, loc string) []string {
	t.Helper()
	var ids []string
	for i := 0; i < n; i++ {
		a := action.Action{
			TenantID: h.Tenant.ID, Type: []string{"A_ONE", "A_TWO"}[i%2],
			When:     action.WhenAt(base.Add(-time.Duration(i)*time.Second), nil),
			Metadata: map[string]any{"i": i},
			Context:  action.Context{User: &action.UserRef{ID: userID, Name: "Seed User"}},
		}
		if i%3 == 0 {
			a.Context.Location = &action.LocationRef{ID: loc, Title: "Seed place"}
		}
		if i%4 == 0 {
			a.Metadata["paymentType"] = "APP"
		}
		a.ID = fmt.Sprintf("act%03d%s", i, action.NewID()[:8])
		if err := h.Deps.Actions.Put(context.Background(), a); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, a.ID)
	}
	return ids
}

// all pages through a list and returns the action ids in order.
func all(t *testing.T, h *ts.Harness, path string, limit int, caller ts.Headers) []string {
	t.Helper()
	var out []string
	next := ""
	for page := 0; page < 200; page++ {
		u, _ := url.Parse(path)
		q := u.Query()
		q.Set("limit", fmt.Sprint(limit))
		if next != "" {
			q.Set("startKey", next)
		}
		u.RawQuery = q.Encode()
		m := h.Do("GET", u.String(), nil, caller).Expect(t, 200, "").Map(t)
		items := m["actions"].([]any)
		if len(items) > limit {
			t.Fatalf("page of %d items for limit %d", len(items), limit)
		}
		for _, it := range items {
			out = append(out, it.(map[string]any)["_id"].(string))
		}
		n, _ := m["page"].(map[string]any)["nextKey"].(string)
		if n == "" {
			return out
		}
		if len(items) == 0 {
			t.Fatalf("an empty page with a nextKey: %v", m)
		}
		next = n
	}
	t.Fatal("too many pages")
	return nil
}

func TestTenantListMergesShardsNewestFirst(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	base := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	want := seed(t, h, 40, base, "u1", "l1")
	for _, limit := range []int{1, 3, 7, 40, 100} {
		t.Run(fmt.Sprint("Limit", limit), func(t *testing.T) {
			if got := all(t, h, "/actions", limit, h.Admin()); !slices.Equal(got, want) {
				t.Errorf("ids = %v\nwant %v", got, want)
			}
		})
	}
}

// place creates a location of the harness tenant and returns its id.
func place(t *testing.T, h *ts.Harness, title string, admin ts.Headers) string {
	t.Helper()
	return h.Do("POST", "/locations", map[string]any{"title": title, "geo": []float64{-0.13, 51.51}}, admin).Expect(t, 201, "").Map(t)["_id"].(string)
}

func TestListFilters(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	base := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	l1 := place(t, h, "Seed place", h.Admin())
	ids := seed(t, h, 24, base, "u1", l1)
	pick := func(keep func(i int) bool) []string {
		var out []string
		for i, id := range ids {
			if keep(i) {
				out = append(out, id)
			}
		}
		return out
	}
	ts10 := base.Add(-10 * time.Second).Format(time.RFC3339)
	tests := []struct {
		name string
		path string
		want []string
	}{
		{"TypeIn", "/actions?type.in=A_ONE", pick(func(i int) bool { return i%2 == 0 })},
		{"TypeBare", "/actions?type=A_TWO", pick(func(i int) bool { return i%2 == 1 })},
		{"TypeNin", "/actions?type.nin=A_ONE", pick(func(i int) bool { return i%2 == 1 })},
		{"PaymentTypeIn", "/actions?paymentType.in=APP", pick(func(i int) bool { return i%4 == 0 })},
		{"PaymentTypeNin", "/actions?paymentType.nin=APP", pick(func(i int) bool { return i%4 != 0 })},
		{"WhenGt", "/actions?when.timestamp.gt=" + ts10, pick(func(i int) bool { return i < 10 })},
		{"WhenLte", "/actions?when.timestamp.lte=" + ts10, pick(func(i int) bool { return i >= 10 })},
		{"WhenEq", "/actions?when.timestamp.eq=" + ts10, pick(func(i int) bool { return i == 10 })},
		{"WhenNeq", "/actions?when.timestamp.neq=" + ts10, pick(func(i int) bool { return i != 10 })},
		{"Location", "/actions?locationId=" + l1, pick(func(i int) bool { return i%3 == 0 })},
		{"LocationPath", "/locations/" + l1 + "/actions", pick(func(i int) bool { return i%3 == 0 })},
		{"LocationAndType", "/actions?locationId=" + l1 + "&type=A_ONE", pick(func(i int) bool { return i%6 == 0 })},
		{"UnknownLocation", "/actions?locationId=nowhere", nil},
		{"Combined", "/actions?type.in=A_ONE&when.timestamp.lte=" + ts10, pick(func(i int) bool { return i%2 == 0 && i >= 10 })},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := all(t, h, tc.path, 5, h.Admin()); !slices.Equal(got, tc.want) {
				t.Errorf("%s: ids = %v\nwant %v", tc.path, got, tc.want)
			}
		})
	}
	bad := []struct{ name, path string }{
		{"BadTime", "/actions?when.timestamp.gt=yesterday"},
		{"BadType", "/actions?type=lower"},
		{"BadPaymentType", "/actions?paymentType=BITCOIN"},
		{"BadVersion", "/actions?limit=1"},
		{"ForgedKey", "/actions?startKey=abc"},
		{"BadLocation", "/actions?locationId=a%20b"},
	}
	for _, tc := range bad {
		t.Run(tc.name, func(t *testing.T) {
			hdr := h.Admin()
			if tc.name == "BadVersion" {
				hdr = append(hdr, "x-api-version", "nine")
			}
			h.Do("GET", tc.path, nil, hdr).Expect(t, 422, "VALIDATION_FAILED")
		})
	}
	t.Run("KeyOfAnotherQuery", func(t *testing.T) {
		m := h.Do("GET", "/actions?limit=2", nil, h.Admin()).Expect(t, 200, "").Map(t)
		key := m["page"].(map[string]any)["nextKey"].(string)
		h.Do("GET", "/actions?type=A_ONE&limit=2&startKey="+url.QueryEscape(key), nil, h.Admin()).Expect(t, 422, "VALIDATION_FAILED")
	})
}

// TestLocationListNeedsTheLocation: a location's list of an unknown
// location, or of another tenant's, is 404 NOT_FOUND (as GET
// /locations/{locationId} is), even where actions name the id; a location
// of the tenant answers its list, empty or not.
func TestLocationListNeedsTheLocation(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	base := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	own := place(t, h, "Own place", h.Admin())
	quiet := place(t, h, "Quiet place", h.Admin())
	other, otherKey := h.NewTenant(tenant.Settings{})
	otherAdmin := ts.Headers{"x-service-auth-token", otherKey, "x-application-id", other.ID}
	foreign := place(t, h, "Foreign place", otherAdmin)
	const unknown = "5f1c0a9b2d3e4f5a6b7c8d9e"
	seed(t, h, 6, base, "u1", own)     // actions at own: 0, 3
	seed(t, h, 3, base, "u1", unknown) // actions naming an id with no location
	for _, tc := range []struct {
		name, id string
		status   int
		count    int
	}{
		{"Own", own, 200, 2},
		{"OwnWithoutActions", quiet, 200, 0},
		{"Unknown", unknown, 404, 0},
		{"OtherTenants", foreign, 404, 0},
		{"Malformed", "a%20b", 404, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code := ""
			if tc.status == 404 {
				code = "NOT_FOUND"
			}
			r := h.Do("GET", "/locations/"+tc.id+"/actions", nil, h.Admin()).Expect(t, tc.status, code)
			if tc.status != 200 {
				return
			}
			if n := len(r.Map(t)["actions"].([]any)); n != tc.count {
				t.Errorf("%d actions, want %d", n, tc.count)
			}
		})
	}
	t.Run("OtherTenantsOwn", func(t *testing.T) {
		// The other tenant's admin reads its own location's list.
		h.Do("GET", "/locations/"+foreign+"/actions", nil, otherAdmin).Expect(t, 200, "")
	})
}

func TestActionsThroughTheAPI(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	uid, token, email := h.ActiveUser(t, "Ana", "Actions")
	other, otherToken, _ := h.ActiveUser(t, "Otto", "Other")
	perk := h.Do("POST", "/perks", map[string]any{"title": "Card", "template": "AD_HOC"}, h.Admin()).Expect(t, 201, "").Map(t)["_id"].(string)
	for _, u := range []string{uid, other} {
		h.Do("POST", "/pointperks/"+perk+"/awards", map[string]any{"userId": u, "points": 3}, h.Admin()).Expect(t, 200, "")
	}
	t.Run("OwnList", func(t *testing.T) {
		m := h.Do("GET", "/users/"+uid+"/actions?type=AWARD_GRANTED", nil, ts.Token(token)).Expect(t, 200, "").Map(t)
		list := m["actions"].([]any)
		if len(list) != 1 {
			t.Fatalf("own AWARD_GRANTED = %v", list)
		}
		a := list[0].(map[string]any)
		if a["tenantId"] != h.Tenant.ID || a["context"].(map[string]any)["user"].(map[string]any)["_id"] != uid {
			t.Errorf("action = %v", a)
		}
	})
	t.Run("AnotherUsersList", func(t *testing.T) {
		h.Do("GET", "/users/"+other+"/actions", nil, ts.Token(token)).Expect(t, 404, "NOT_FOUND")
	})
	t.Run("TenantListIsAdminOnly", func(t *testing.T) {
		h.Do("GET", "/actions", nil, ts.Token(otherToken)).Expect(t, 401, "UNAUTHORIZED")
		h.Do("GET", "/locations/l1/actions", nil, ts.Token(otherToken)).Expect(t, 401, "UNAUTHORIZED")
		h.Do("GET", "/actions", nil, h.Anon()).Expect(t, 401, "UNAUTHORIZED")
	})
	t.Run("CredentialID", func(t *testing.T) {
		got := all(t, h, "/actions?type=AWARD_GRANTED&credentialId="+url.QueryEscape(email), 10, h.Admin())
		if len(got) != 1 {
			t.Errorf("actions of %s = %v, want 1", email, got)
		}
		if got := all(t, h, "/actions?credentialId=nobody%40example.com", 10, h.Admin()); len(got) != 0 {
			t.Errorf("actions of an unknown credential = %v", got)
		}
	})
	t.Run("OtherTenant", func(t *testing.T) {
		ot, key := h.NewTenant(h.Tenant.Settings)
		admin := ts.Headers{"x-service-auth-token", key, "x-application-id", ot.ID}
		if got := all(t, h, "/actions", 10, admin); len(got) != 0 {
			t.Errorf("another tenant sees %v", got)
		}
		h.Do("GET", "/users/"+uid+"/actions", nil, admin).Expect(t, 404, "NOT_FOUND")
	})
}

package checkin_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/loyalty-platform/platform/shared/domain/action"
	"github.com/loyalty-platform/platform/shared/domain/checkin"
	ts "github.com/loyalty-platform/platform/shared/testkit"
)

// TestLifecycle walks the API's check-in lifecycle table row by row.
func TestLifecycle(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	tid := h.Tenant.ID
	cafe := addLocation(t, h, h.Admin(), "Cafe")
	bar := addLocation(t, h, h.Admin(), "Bar")

	t.Run("NoProfilePhoto", func(t *testing.T) {
		id, token := activeUser(t, h, "Nora", "Nophoto")
		h.Do("POST", "/users/"+id+"/checkins", map[string]any{"locationId": cafe}, ts.Token(token)).Expect(t, 422, "PROFILE_PHOTO_REQUIRED")
		if got := userCheckins(t, h, id); len(got) != 0 {
			t.Errorf("check-ins after a refused check-in = %v", got)
		}
		if got := actions(t, h, id); len(got) != 0 {
			t.Errorf("actions after a refused check-in = %v", got)
		}
	})

	id, token := photoUser(t, h, "Ada", "Lovelace")
	var first map[string]any

	t.Run("FirstCheckin", func(t *testing.T) {
		before := h.Clock.Now().Add(-time.Second)
		first = h.Do("POST", "/users/"+id+"/checkins", map[string]any{"locationId": cafe, "type": "MANUAL", "trigger": "CODE"}, ts.Token(token)).Expect(t, 201, "").Map(t)
		want := map[string]any{
			"tenantId": tid, "userId": id, "locationId": cafe, "locationTitle": "Cafe",
			"userFullName": "Ada Lovelace", "type": "MANUAL", "trigger": "CODE",
		}
		for k, v := range want {
			if first[k] != v {
				t.Errorf("%s = %v, want %v", k, first[k], v)
			}
		}
		created, err := time.Parse(time.RFC3339, first["created"].(string))
		if err != nil || created.Before(before) || first["updated"] != first["created"] {
			t.Errorf("created %v, updated %v", first["created"], first["updated"])
		}
		if _, ok := first["expiresAt"]; ok {
			t.Errorf("expiresAt is internal but was returned")
		}
		if got := userCheckins(t, h, id); len(got) != 1 || got[0] != first["_id"] {
			t.Errorf("user's check-ins = %v, want [%v]", got, first["_id"])
		}
		if got := locationCheckins(t, h, cafe); len(got) != 1 || got[0] != first["_id"] {
			t.Errorf("cafe's check-ins = %v, want [%v]", got, first["_id"])
		}
		as := actions(t, h, id)
		if len(as) != 1 {
			t.Fatalf("actions = %+v, want one CHECKIN_CREATED", as)
		}
		a := as[0]
		london := action.WhenAt(created, action.Zone("Europe/London"))
		if a.Type != action.CheckinCreated || a.TenantID != tid || a.Environment != "PRODUCTION" || a.ID == "" ||
			a.When.Timestamp != first["created"] || a.When.Daypart != london.Daypart || a.When.DayOfWeek != london.DayOfWeek {
			t.Errorf("action = %+v", a)
		}
		if a.Metadata["checkinId"] != first["_id"] || a.Metadata["type"] != "MANUAL" || a.Metadata["trigger"] != "CODE" || a.Metadata["replacedCheckinId"] != nil {
			t.Errorf("metadata = %v", a.Metadata)
		}
		c := a.Context
		if c.Tenant.ID != tid || c.Tenant.Title != h.Tenant.Title || c.User == nil || c.User.ID != id || c.User.Name != "Ada Lovelace" || c.User.PrimaryPlatform != "UNKNOWN" {
			t.Errorf("context tenant/user = %+v %+v", c.Tenant, c.User)
		}
		if l := c.Location; l == nil || l.ID != cafe || l.Title != "Cafe" || len(l.Geo) != 2 || l.Geo[1] != 51.5072 || l.Regions[0] != "london" || l.Tags[0] != "flagship" || c.Tags == nil {
			t.Errorf("context location = %+v, tags %v", c.Location, c.Tags)
		}
	})

	t.Run("SameLocationAgain", func(t *testing.T) {
		h.Do("POST", "/users/"+id+"/checkins", map[string]any{"locationId": cafe}, ts.Token(token)).Expect(t, 409, "ALREADY_CHECKED_IN")
		if got := userCheckins(t, h, id); len(got) != 1 || got[0] != first["_id"] {
			t.Errorf("user's check-ins after 409 = %v, want the first only", got)
		}
	})

	t.Run("OtherLocationReplaces", func(t *testing.T) {
		second := h.Do("POST", "/users/"+id+"/checkins", map[string]any{"locationId": bar, "type": "AUTO", "trigger": "GEO"}, ts.Token(token)).Expect(t, 201, "").Map(t)
		if second["_id"] == first["_id"] || second["locationId"] != bar {
			t.Fatalf("second check-in = %v", second)
		}
		if got := userCheckins(t, h, id); len(got) != 1 || got[0] != second["_id"] {
			t.Errorf("user's check-ins = %v, want only the new one", got)
		}
		if got := locationCheckins(t, h, cafe); len(got) != 0 {
			t.Errorf("cafe still lists %v", got)
		}
		if got := locationCheckins(t, h, bar); len(got) != 1 || got[0] != second["_id"] {
			t.Errorf("bar's check-ins = %v", got)
		}
		as := actions(t, h, id)
		if len(as) != 3 {
			t.Fatalf("actions = %d, want CHECKIN_CREATED, CHECKOUT, CHECKIN_CREATED", len(as))
		}
		var out, in *action.Action
		for i := range as {
			switch {
			case as[i].Type == action.Checkout:
				out = &as[i]
			case as[i].Type == action.CheckinCreated && as[i].Metadata["checkinId"] == second["_id"]:
				in = &as[i]
			}
		}
		if out == nil || out.Metadata["checkinId"] != first["_id"] || out.Metadata["reason"] != checkin.ReasonCheckedInElsewhere || out.Context.Location.ID != cafe {
			t.Errorf("checkout action = %+v", out)
		}
		if in == nil || in.Metadata["replacedCheckinId"] != first["_id"] || in.Context.Location.ID != bar {
			t.Errorf("check-in action = %+v", in)
		}
	})

	t.Run("UnknownLocation", func(t *testing.T) {
		h.Do("POST", "/users/"+id+"/checkins", map[string]any{"locationId": "no-such-location"}, ts.Token(token)).Expect(t, 404, "NOT_FOUND")
	})

	refused := []struct {
		name string
		opt  func(map[string]any)
	}{
		{"PendingLocation", func(b map[string]any) { b["state"] = "PENDING" }},
		{"RetiredLocation", func(b map[string]any) { b["state"] = "RETIRED" }},
		{"CheckinsServiceOff", func(b map[string]any) { b["services"] = map[string]any{"checkins": false, "pre_order": true} }},
		{"NoServices", func(b map[string]any) { delete(b, "services") }},
	}
	for _, tc := range refused {
		t.Run(tc.name, func(t *testing.T) {
			loc := addLocation(t, h, h.Admin(), tc.name, tc.opt)
			r := h.Do("POST", "/users/"+id+"/checkins", map[string]any{"locationId": loc}, ts.Token(token)).Expect(t, 422, "VALIDATION_FAILED")
			if msg := r.Map(t)["message"].(string); !strings.HasPrefix(msg, "locationId:") {
				t.Errorf("message %q does not name locationId", msg)
			}
			if got := locationCheckins(t, h, loc); len(got) != 0 {
				t.Errorf("refused location lists %v", got)
			}
		})
	}
	if got := userCheckins(t, h, id); len(got) != 1 {
		t.Errorf("refused check-ins changed the user's check-in: %v", got)
	}
}

// TestBadInput sends malformed, mistyped, unknown, missing and oversized
// input; nothing is ever created.
func TestBadInput(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	loc := addLocation(t, h, h.Admin(), "Cafe")
	id, token := photoUser(t, h, "Bea", "Bad")
	path := "/users/" + id + "/checkins"
	tests := []struct {
		name   string
		body   any
		status int
		code   string
	}{
		{"MalformedJSON", `{"locationId": "` + loc + `"`, 422, "VALIDATION_FAILED"},
		{"NotAnObject", `["` + loc + `"]`, 422, "VALIDATION_FAILED"},
		{"EmptyBody", "", 422, "VALIDATION_FAILED"},
		{"TwoObjects", `{"locationId":"` + loc + `"}{}`, 422, "VALIDATION_FAILED"},
		{"LocationIdNumber", map[string]any{"locationId": 12}, 422, "VALIDATION_FAILED"},
		{"TypeNumber", map[string]any{"locationId": loc, "type": 1}, 422, "VALIDATION_FAILED"},
		{"UnknownField", map[string]any{"locationId": loc, "userId": id}, 422, "VALIDATION_FAILED"},
		{"MissingLocationId", map[string]any{"type": "MANUAL"}, 422, "VALIDATION_FAILED"},
		{"BlankLocationId", map[string]any{"locationId": "  "}, 422, "VALIDATION_FAILED"},
		{"LocationIdWithSpace", map[string]any{"locationId": "a b"}, 422, "VALIDATION_FAILED"},
		{"LocationIdTooLong", map[string]any{"locationId": strings.Repeat("x", 201)}, 422, "VALIDATION_FAILED"},
		{"BadType", map[string]any{"locationId": loc, "type": "WALK_IN"}, 422, "VALIDATION_FAILED"},
		{"LowerCaseType", map[string]any{"locationId": loc, "type": "manual"}, 422, "VALIDATION_FAILED"},
		{"BadTrigger", map[string]any{"locationId": loc, "trigger": "NFC"}, 422, "VALIDATION_FAILED"},
		{"NullTrigger", `{"locationId":"` + loc + `","trigger":false}`, 422, "VALIDATION_FAILED"},
		{"Oversize", `{"locationId":"` + loc + `","type":"` + strings.Repeat("A", 1<<20) + `"}`, 413, "PAYLOAD_TOO_LARGE"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h.Do("POST", path, tc.body, ts.Token(token)).Expect(t, tc.status, tc.code)
		})
	}
	if got := userCheckins(t, h, id); len(got) != 0 {
		t.Errorf("bad input created %v", got)
	}
	if got := actions(t, h, id); len(got) != 0 {
		t.Errorf("bad input recorded %d actions", len(got))
	}

	paging := []string{"per_page=0", "per_page=101", "per_page=abc", "per_page=2.5", "page=0", "page=-1", "page=x", "page=10001"}
	for _, q := range paging {
		t.Run("UserList_"+q, func(t *testing.T) {
			h.Do("GET", path+"?"+q, nil, ts.Token(token)).Expect(t, 422, "VALIDATION_FAILED")
		})
		t.Run("LocationList_"+q, func(t *testing.T) {
			h.Do("GET", "/locations/"+loc+"/checkins?"+q, nil, h.Admin()).Expect(t, 422, "VALIDATION_FAILED")
		})
	}
	t.Run("LocationIdTooLongInPath", func(t *testing.T) {
		h.Do("GET", "/locations/"+strings.Repeat("x", 201)+"/checkins", nil, h.Admin()).Expect(t, 422, "VALIDATION_FAILED")
	})
}

// TestAccess checks who may do what: users act only on themselves, admins
// on the tenant's users, nobody across tenants.
func TestAccess(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	loc := addLocation(t, h, h.Admin(), "Cafe")
	id, token := photoUser(t, h, "Ann", "Owner")
	otherID, otherToken := photoUser(t, h, "Oli", "Other")
	h.Do("POST", "/users/"+id+"/checkins", map[string]any{"locationId": loc}, ts.Token(token)).Expect(t, 201, "")

	// A second tenant with its own admin and location.
	t2, key2 := h.NewTenant(h.Tenant.Settings)
	admin2 := ts.Headers{"x-service-auth-token", key2, "x-application-id", t2.ID}
	loc2 := addLocation(t, h, admin2, "Elsewhere")

	body := map[string]any{"locationId": loc}
	tests := []struct {
		name    string
		method  string
		path    string
		body    any
		headers ts.Headers
		status  int
		code    string
	}{
		{"CreateAnonymous", "POST", "/users/" + id + "/checkins", body, h.Anon(), 401, "UNAUTHORIZED"},
		{"CreateNoTenant", "POST", "/users/" + id + "/checkins", body, nil, 401, "UNAUTHORIZED"},
		{"CreateForAnotherUser", "POST", "/users/" + id + "/checkins", body, ts.Token(otherToken), 404, "NOT_FOUND"},
		{"ListAnotherUsers", "GET", "/users/" + id + "/checkins", nil, ts.Token(otherToken), 404, "NOT_FOUND"},
		{"CheckoutAnotherUser", "DELETE", "/users/" + id + "/checkins", nil, ts.Token(otherToken), 404, "NOT_FOUND"},
		{"ListAnonymous", "GET", "/users/" + id + "/checkins", nil, h.Anon(), 401, "UNAUTHORIZED"},
		{"CheckoutAnonymous", "DELETE", "/users/" + id + "/checkins", nil, h.Anon(), 401, "UNAUTHORIZED"},
		{"UserListsLocation", "GET", "/locations/" + loc + "/checkins", nil, ts.Token(token), 401, "UNAUTHORIZED"},
		{"AnonymousListsLocation", "GET", "/locations/" + loc + "/checkins", nil, h.Anon(), 401, "UNAUTHORIZED"},
		{"BadToken", "GET", "/users/" + id + "/checkins", nil, ts.Token(h.Tenant.ID + ".nope"), 401, "UNAUTHORIZED"},
		{"TokenOfAnotherTenantHeader", "GET", "/users/" + id + "/checkins", nil, append(ts.Token(token), "x-application-id", t2.ID), 401, "UNAUTHORIZED"},
		{"OtherTenantAdminCreates", "POST", "/users/" + id + "/checkins", body, admin2, 404, "NOT_FOUND"},
		{"OtherTenantAdminLists", "GET", "/users/" + id + "/checkins", nil, admin2, 404, "NOT_FOUND"},
		{"OtherTenantAdminChecksOut", "DELETE", "/users/" + id + "/checkins", nil, admin2, 404, "NOT_FOUND"},
		{"OtherTenantAdminListsLocation", "GET", "/locations/" + loc + "/checkins", nil, admin2, 404, "NOT_FOUND"},
		{"AdminListsOtherTenantsLocation", "GET", "/locations/" + loc2 + "/checkins", nil, h.Admin(), 404, "NOT_FOUND"},
		{"CheckinAtOtherTenantsLocation", "POST", "/users/" + id + "/checkins", map[string]any{"locationId": loc2}, h.Admin(), 404, "NOT_FOUND"},
		{"AdminUnknownUser", "POST", "/users/nobody/checkins", body, h.Admin(), 404, "NOT_FOUND"},
		{"AdminListsUnknownUser", "GET", "/users/nobody/checkins", nil, h.Admin(), 404, "NOT_FOUND"},
		{"AdminListsUnknownLocation", "GET", "/locations/nowhere/checkins", nil, h.Admin(), 404, "NOT_FOUND"},
		{"OwnListOK", "GET", "/users/" + id + "/checkins", nil, ts.Token(token), 200, ""},
		{"AdminListsUserOK", "GET", "/users/" + id + "/checkins", nil, h.Admin(), 200, ""},
		{"AdminListsLocationOK", "GET", "/locations/" + loc + "/checkins", nil, h.Admin(), 200, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h.Do(tc.method, tc.path, tc.body, tc.headers).Expect(t, tc.status, tc.code)
		})
	}
	if got := userCheckins(t, h, id); len(got) != 1 {
		t.Errorf("the user's check-in changed: %v", got)
	}
	if got := userCheckins(t, h, otherID); len(got) != 0 {
		t.Errorf("the other user got check-ins: %v", got)
	}
	t.Run("AdminChecksInOnBehalf", func(t *testing.T) {
		c := h.Do("POST", "/users/"+otherID+"/checkins", map[string]any{"locationId": loc, "trigger": "POS"}, h.Admin()).Expect(t, 201, "").Map(t)
		if c["userId"] != otherID || c["trigger"] != "POS" {
			t.Errorf("check-in = %v", c)
		}
	})
	t.Run("OtherTenantSeesNothingAtItsLocation", func(t *testing.T) {
		l := getList(t, h, "/locations/"+loc2+"/checkins", admin2)
		if l.Summary.Total != 0 || len(l.Checkins) != 0 {
			t.Errorf("other tenant's location lists %+v", l)
		}
	})
}

// TestExpiry moves the clock: a check-in lives 30 minutes.
func TestExpiry(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	loc := addLocation(t, h, h.Admin(), "Cafe")
	id, token := photoUser(t, h, "Eve", "Expiry")
	c := h.Do("POST", "/users/"+id+"/checkins", map[string]any{"locationId": loc}, ts.Token(token)).Expect(t, 201, "").Map(t)

	h.Clock.Advance(29 * time.Minute)
	if got := userCheckins(t, h, id); len(got) != 1 || got[0] != c["_id"] {
		t.Fatalf("after 29 minutes: %v", got)
	}
	h.Do("POST", "/users/"+id+"/checkins", map[string]any{"locationId": loc}, ts.Token(token)).Expect(t, 409, "ALREADY_CHECKED_IN")

	h.Clock.Advance(90 * time.Second)
	t.Run("GoneFromEveryRead", func(t *testing.T) {
		if got := userCheckins(t, h, id); len(got) != 0 {
			t.Errorf("user list after 30 minutes: %v", got)
		}
		l := getList(t, h, "/locations/"+loc+"/checkins", h.Admin())
		if len(l.Checkins) != 0 || l.Summary.Total != 0 {
			t.Errorf("location list after 30 minutes: %+v", l)
		}
		u := h.Do("GET", "/users/"+id+"?include=checkin", nil, ts.Token(token)).Expect(t, 200, "").Map(t)
		if v, ok := u["checkin"]; !ok || v != nil {
			t.Errorf("include=checkin after 30 minutes = %v (present %v), want null", v, ok)
		}
		h.Do("DELETE", "/users/"+id+"/checkins", nil, ts.Token(token)).Expect(t, 404, "NOT_FOUND")
	})
	t.Run("CheckInAgain", func(t *testing.T) {
		again := h.Do("POST", "/users/"+id+"/checkins", map[string]any{"locationId": loc}, ts.Token(token)).Expect(t, 201, "").Map(t)
		if again["_id"] == c["_id"] {
			t.Errorf("the expired check-in came back")
		}
		for _, a := range actions(t, h, id) {
			if a.Type == action.Checkout {
				t.Errorf("expiry or a check-in after it recorded a CHECKOUT: %+v", a.Metadata)
			}
			if a.Metadata["replacedCheckinId"] != nil {
				t.Errorf("a check-in after expiry claims to replace %v", a.Metadata["replacedCheckinId"])
			}
		}
	})
}

// TestCheckout ends a check-in with DELETE.
func TestCheckout(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	loc := addLocation(t, h, h.Admin(), "Cafe")
	id, token := photoUser(t, h, "Carl", "Checkout")

	t.Run("NotCheckedIn", func(t *testing.T) {
		h.Do("DELETE", "/users/"+id+"/checkins", nil, ts.Token(token)).Expect(t, 404, "NOT_FOUND")
	})
	c := h.Do("POST", "/users/"+id+"/checkins", map[string]any{"locationId": loc}, ts.Token(token)).Expect(t, 201, "").Map(t)
	h.Clock.Advance(10 * time.Minute)
	t.Run("ByTheUser", func(t *testing.T) {
		r := h.Do("DELETE", "/users/"+id+"/checkins", nil, ts.Token(token)).Expect(t, 204, "")
		if len(r.Body) != 0 {
			t.Errorf("204 with a body: %s", r.Body)
		}
		if got := userCheckins(t, h, id); len(got) != 0 {
			t.Errorf("still checked in: %v", got)
		}
		if got := locationCheckins(t, h, loc); len(got) != 0 {
			t.Errorf("location still lists %v", got)
		}
		as := actions(t, h, id)
		if len(as) != 2 || as[0].Type != action.Checkout {
			t.Fatalf("actions = %+v, want CHECKOUT newest", as)
		}
		m := as[0].Metadata
		if m["checkinId"] != c["_id"] || m["reason"] != checkin.ReasonRequested || m["durationSeconds"].(float64) < 600 || m["checkedInAt"] != c["created"] {
			t.Errorf("checkout metadata = %v", m)
		}
	})
	t.Run("Twice", func(t *testing.T) {
		h.Do("DELETE", "/users/"+id+"/checkins", nil, ts.Token(token)).Expect(t, 404, "NOT_FOUND")
	})
	t.Run("ByAnAdmin", func(t *testing.T) {
		h.Do("POST", "/users/"+id+"/checkins", map[string]any{"locationId": loc}, ts.Token(token)).Expect(t, 201, "")
		h.Do("DELETE", "/users/"+id+"/checkins", nil, h.Admin()).Expect(t, 204, "")
		if got := userCheckins(t, h, id); len(got) != 0 {
			t.Errorf("still checked in: %v", got)
		}
	})
	t.Run("SameLocationAfterCheckout", func(t *testing.T) {
		h.Do("POST", "/users/"+id+"/checkins", map[string]any{"locationId": loc}, ts.Token(token)).Expect(t, 201, "")
	})
	t.Run("RemoveForRedaction", func(t *testing.T) {
		n := len(actions(t, h, id))
		for i := 0; i < 2; i++ { // removing nothing is fine too
			if err := h.Deps.Checkins.Remove(context.Background(), h.Tenant.ID, id); err != nil {
				t.Fatalf("remove: %v", err)
			}
		}
		if got := userCheckins(t, h, id); len(got) != 0 {
			t.Errorf("still checked in: %v", got)
		}
		if got := locationCheckins(t, h, loc); len(got) != 0 {
			t.Errorf("location still lists %v", got)
		}
		if got := len(actions(t, h, id)); got != n {
			t.Errorf("remove recorded %d actions", got-n)
		}
	})
}

// TestIncludeCheckin reads the current check-in through GET /users/{userId}.
func TestIncludeCheckin(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	loc := addLocation(t, h, h.Admin(), "Cafe")
	id, token := photoUser(t, h, "Ian", "Include")

	u := h.Do("GET", "/users/"+id+"?include=checkin", nil, ts.Token(token)).Expect(t, 200, "").Map(t)
	if v, ok := u["checkin"]; !ok || v != nil {
		t.Errorf("checkin before checking in = %v (present %v), want null", v, ok)
	}
	c := h.Do("POST", "/users/"+id+"/checkins", map[string]any{"locationId": loc, "type": "CFD"}, ts.Token(token)).Expect(t, 201, "").Map(t)
	for _, hs := range []ts.Headers{ts.Token(token), h.Admin()} {
		u = h.Do("GET", "/users/"+id+"?include=checkin", nil, hs).Expect(t, 200, "").Map(t)
		got, _ := u["checkin"].(map[string]any)
		for k, v := range c {
			if got[k] != v {
				t.Errorf("include=checkin %s = %v, want %v", k, got[k], v)
			}
		}
	}
	u = h.Do("GET", "/users/"+id, nil, ts.Token(token)).Expect(t, 200, "").Map(t)
	if _, ok := u["checkin"]; ok {
		t.Errorf("checkin returned without include")
	}
}

// TestConcurrentCheckins races two check-ins of one user: a user is at one
// location at a time whatever the interleaving.
func TestConcurrentCheckins(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	race := func(t *testing.T, id string, locs ...string) []int {
		t.Helper()
		statuses := make([]int, len(locs))
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i, loc := range locs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				statuses[i] = h.Do("POST", "/users/"+id+"/checkins", map[string]any{"locationId": loc}, h.Admin()).Status
			}()
		}
		close(start)
		wg.Wait()
		return statuses
	}
	for round := 0; round < 5; round++ {
		t.Run("DifferentLocations", func(t *testing.T) {
			id := adminUser(t, h, "Rita", "Race")
			givePhoto(t, h, id)
			a, b := addLocation(t, h, h.Admin(), "A"), addLocation(t, h, h.Admin(), "B")
			st := race(t, id, a, b)
			for _, s := range st {
				if s != 201 && s != 409 {
					t.Fatalf("statuses = %v", st)
				}
			}
			got := userCheckins(t, h, id)
			if len(got) != 1 {
				t.Fatalf("check-ins after the race = %v, want exactly one", got)
			}
			atA, atB := locationCheckins(t, h, a), locationCheckins(t, h, b)
			if len(atA)+len(atB) != 1 {
				t.Errorf("locations list %v and %v, want one check-in in all", atA, atB)
			}
			// Every check-in that lost its place was recorded as checked out.
			created, out := 0, 0
			for _, x := range actions(t, h, id) {
				switch x.Type {
				case action.CheckinCreated:
					created++
				case action.Checkout:
					out++
					if x.Metadata["checkinId"] == got[0] {
						t.Errorf("the current check-in was recorded as checked out")
					}
				}
			}
			if created-out != 1 {
				t.Errorf("%d created and %d checked out, want one left", created, out)
			}
		})
		t.Run("SameLocation", func(t *testing.T) {
			id := adminUser(t, h, "Sam", "Same")
			givePhoto(t, h, id)
			loc := addLocation(t, h, h.Admin(), "Same")
			st := race(t, id, loc, loc)
			if !(st[0] == 201 && st[1] == 409 || st[0] == 409 && st[1] == 201) {
				t.Errorf("statuses = %v, want one 201 and one 409", st)
			}
			if got := userCheckins(t, h, id); len(got) != 1 {
				t.Errorf("check-ins = %v", got)
			}
		})
	}
}

// TestLocationList pages through a location's check-ins.
func TestLocationList(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	loc := addLocation(t, h, h.Admin(), "Busy")
	var want []string
	for i := 0; i < 23; i++ {
		id := adminUser(t, h, "Guest", "Number")
		givePhoto(t, h, id)
		c := h.Do("POST", "/users/"+id+"/checkins", map[string]any{"locationId": loc}, h.Admin()).Expect(t, 201, "").Map(t)
		want = append([]string{c["_id"].(string)}, want...) // newest first
		h.Clock.Advance(time.Second)
	}
	tests := []struct {
		name  string
		query string
		ids   []string
		pages int
		page  int
	}{
		{"Defaults", "", want[:20], 2, 1},
		{"SecondPage", "?page=2", want[20:], 2, 2},
		{"PastTheEnd", "?page=3", nil, 2, 3},
		{"PerPage5Page3", "?per_page=5&page=3", want[10:15], 5, 3},
		{"PerPage100", "?per_page=100", want, 1, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l := getList(t, h, "/locations/"+loc+"/checkins"+tc.query, h.Admin())
			got := ids(l)
			if strings.Join(got, ",") != strings.Join(tc.ids, ",") {
				t.Errorf("ids = %v, want %v", got, tc.ids)
			}
			if l.Summary.Total != 23 || l.Summary.Count != len(tc.ids) || l.Summary.Pages != tc.pages || l.Summary.Page != tc.page {
				t.Errorf("summary = %+v", l.Summary)
			}
		})
	}
	t.Run("ExpiredDropOut", func(t *testing.T) {
		// The check-ins were made at least a second apart; 10 seconds
		// before the newest one expires, the oldest ones have expired.
		h.Clock.Advance(checkin.Lifetime - 10*time.Second)
		l := getList(t, h, "/locations/"+loc+"/checkins?per_page=100", h.Admin())
		if l.Summary.Total == 0 || l.Summary.Total >= 23 || len(l.Checkins) != l.Summary.Total {
			t.Errorf("summary %+v for %d items", l.Summary, len(l.Checkins))
		}
		if got := ids(l); strings.Join(got, ",") != strings.Join(want[:len(got)], ",") {
			t.Errorf("live ids %v are not the newest", got)
		}
	})
	t.Run("UserListShape", func(t *testing.T) {
		id := adminUser(t, h, "Una", "User")
		l := getList(t, h, "/users/"+id+"/checkins", h.Admin())
		if l.Checkins == nil || len(l.Checkins) != 0 || l.Summary.Total != 0 || l.Summary.Pages != 0 || l.Summary.Page != 1 {
			t.Errorf("empty user list = %+v", l)
		}
		givePhoto(t, h, id)
		h.Do("POST", "/users/"+id+"/checkins", map[string]any{"locationId": loc}, h.Admin()).Expect(t, 201, "")
		l = getList(t, h, "/users/"+id+"/checkins", h.Admin())
		if len(l.Checkins) != 1 || l.Summary.Total != 1 || l.Summary.Count != 1 || l.Summary.Pages != 1 {
			t.Errorf("user list = %+v", l)
		}
		l = getList(t, h, "/users/"+id+"/checkins?page=2&per_page=1", h.Admin())
		if len(l.Checkins) != 0 || l.Summary.Total != 1 || l.Summary.Count != 0 || l.Summary.Page != 2 {
			t.Errorf("user list page 2 = %+v", l)
		}
	})
}

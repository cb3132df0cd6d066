package location_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	ts "github.com/loyalty-platform/platform/shared/testkit"
)

func TestGetLocation(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	_, token := activeUser(t, h)
	active := createAt(t, h, "Active", london, nil)
	pending := createAt(t, h, "Pending", london, map[string]any{"state": "PENDING"})
	retired := createAt(t, h, "Retired", london, map[string]any{"state": "RETIRED"})
	other := otherTenant(h)
	foreign := h.Do("POST", "/locations", minimal("Foreign"), other).Expect(t, 201, "").Map(t)["_id"].(string)

	for _, tc := range []struct {
		name    string
		id      string
		headers ts.Headers
		status  int
	}{
		{"AdminActive", active, h.Admin(), 200},
		{"AdminPending", pending, h.Admin(), 200},
		{"AdminRetired", retired, h.Admin(), 200},
		{"AnonymousActive", active, h.Anon(), 200},
		{"UserActive", active, ts.Token(token), 200},
		{"AnonymousPendingHidden", pending, h.Anon(), 404},
		{"UserRetiredHidden", retired, ts.Token(token), 404},
		{"Unknown", "5f1c0a9b2d3e4f5a6b7c8d9e", h.Admin(), 404},
		{"WeirdID", "a%23b", h.Admin(), 404},
		{"LongID", strings.Repeat("a", 300), h.Admin(), 404},
		{"OtherTenantsLocation", foreign, h.Admin(), 404},
		{"OwnLocationFromOtherTenant", active, other, 404},
		{"NoTenant", active, nil, 401},
		{"UnknownTenant", active, ts.Headers{"x-application-id", "no-such-tenant"}, 401},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := h.Do("GET", "/locations/"+tc.id, nil, tc.headers)
			code := map[int]string{200: "", 401: "UNAUTHORIZED", 404: "NOT_FOUND"}[tc.status]
			r.Expect(t, tc.status, code)
			if tc.status == 200 && r.Map(t)["_id"] != tc.id {
				t.Errorf("got %s", r.Body)
			}
		})
	}
}

func TestUpdateLocation(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	orig := create(t, h, full("Soho"))
	id := orig["_id"].(string)
	put := func(t *testing.T, body any) map[string]any {
		t.Helper()
		return h.Do("PUT", "/locations/"+id, body, h.Admin()).Expect(t, 200, "").Map(t)
	}

	t.Run("UnspecifiedFieldsUnchanged", func(t *testing.T) {
		h.Clock.Advance(time.Second)
		got := put(t, map[string]any{"description": "New words"})
		if got["description"] != "New words" {
			t.Errorf("description = %v", got["description"])
		}
		for k, v := range orig {
			if k == "description" || k == "updated" {
				continue
			}
			if !reflect.DeepEqual(got[k], v) {
				t.Errorf("%s changed: %v, was %v", k, got[k], v)
			}
		}
		if got["updated"] == orig["updated"] {
			t.Errorf("updated not moved: %v", got["updated"])
		}
	})
	t.Run("MapReplacedWhole", func(t *testing.T) {
		got := put(t, map[string]any{"services": map[string]any{"tab": true}, "openingHours": map[string]any{"monday": "closed"}})
		if s, _ := json.Marshal(got["services"]); string(s) != `{"tab":true}` {
			t.Errorf("services = %s", s)
		}
		if s, _ := json.Marshal(got["openingHours"]); string(s) != `{"monday":"closed"}` {
			t.Errorf("openingHours = %s", s)
		}
	})
	t.Run("ArrayReplacedWhole", func(t *testing.T) {
		got := put(t, map[string]any{"tags": []string{"new"}, "geo": paris})
		if s, _ := json.Marshal(got["tags"]); string(s) != `["new"]` {
			t.Errorf("tags = %s", s)
		}
		if s, _ := json.Marshal(got["geo"]); string(s) != `[2.3522,48.8566]` {
			t.Errorf("geo = %s", s)
		}
	})
	t.Run("ObjectReplacedWhole", func(t *testing.T) {
		got := put(t, map[string]any{"address": map[string]any{"town": "Paris"}})
		if s, _ := json.Marshal(got["address"]); string(s) != `{"town":"Paris"}` {
			t.Errorf("address = %s", s)
		}
	})
	t.Run("NullClears", func(t *testing.T) {
		got := put(t, map[string]any{"description": nil, "zones": nil, "deliveryBoundaries": nil})
		for _, k := range []string{"description", "zones", "deliveryBoundaries"} {
			if _, ok := got[k]; ok {
				t.Errorf("%s not cleared: %v", k, got[k])
			}
		}
	})
	t.Run("EmptyBodyChangesNothing", func(t *testing.T) {
		before := h.Do("GET", "/locations/"+id, nil, h.Admin()).Expect(t, 200, "").Map(t)
		got := put(t, map[string]any{})
		delete(before, "updated")
		delete(got, "updated")
		if !reflect.DeepEqual(got, before) {
			t.Errorf("got %v, want %v", got, before)
		}
	})
	t.Run("StoredAsReturned", func(t *testing.T) {
		got := put(t, map[string]any{"title": "Soho Square"})
		read := h.Do("GET", "/locations/"+id, nil, h.Admin()).Expect(t, 200, "").Map(t)
		if !reflect.DeepEqual(read, got) {
			t.Errorf("GET = %v\nPUT = %v", read, got)
		}
		if l := list(t, h, "?title=soho%20square", h.Admin()); len(l.Items) != 1 {
			t.Errorf("renamed location not found by its new title: %v", l.titles())
		}
		if l := list(t, h, "?title=soho", h.Admin()); len(l.Items) != 0 {
			t.Errorf("renamed location still found by its old title: %v", l.titles())
		}
	})
}

func TestUpdateLocationStateTransitions(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	for _, tc := range []struct {
		from, to string
		ok       bool
	}{
		{"PENDING", "ACTIVE", true},
		{"ACTIVE", "RETIRED", true},
		{"RETIRED", "ACTIVE", true},
		{"PENDING", "PENDING", true},
		{"ACTIVE", "ACTIVE", true},
		{"RETIRED", "RETIRED", true},
		{"PENDING", "RETIRED", false},
		{"ACTIVE", "PENDING", false},
		{"RETIRED", "PENDING", false},
	} {
		t.Run(tc.from+"To"+tc.to, func(t *testing.T) {
			id := createAt(t, h, "T "+tc.from+tc.to, london, map[string]any{"state": tc.from})
			r := h.Do("PUT", "/locations/"+id, map[string]any{"state": tc.to}, h.Admin())
			if tc.ok {
				if got := r.Expect(t, 200, "").Map(t)["state"]; got != tc.to {
					t.Errorf("state = %v", got)
				}
				return
			}
			r.Expect(t, 422, "VALIDATION_FAILED")
			if got := h.Do("GET", "/locations/"+id, nil, h.Admin()).Expect(t, 200, "").Map(t)["state"]; got != tc.from {
				t.Errorf("state after refused change = %v, want %s", got, tc.from)
			}
		})
	}
	t.Run("NullStateRefused", func(t *testing.T) {
		// A state has no value to remove: null is refused, not read as
		// "unchanged".
		id := createAt(t, h, "Keep", london, map[string]any{"state": "PENDING"})
		h.Do("PUT", "/locations/"+id, map[string]any{"state": nil}, h.Admin()).Expect(t, 422, "VALIDATION_FAILED")
		if got := h.Do("GET", "/locations/"+id, nil, h.Admin()).Expect(t, 200, "").Map(t)["state"]; got != "PENDING" {
			t.Errorf("state = %v", got)
		}
	})
}

func TestUpdateLocationRejects(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	_, token := activeUser(t, h)
	id := createAt(t, h, "Target", london, map[string]any{"tags": []string{"keep"}})
	other := otherTenant(h)
	foreign := h.Do("POST", "/locations", minimal("Foreign"), other).Expect(t, 201, "").Map(t)["_id"].(string)

	for _, tc := range []struct {
		name    string
		id      string
		body    any
		headers ts.Headers
		status  int
		code    string
	}{
		{"Anonymous", id, map[string]any{"title": "x"}, h.Anon(), 401, "UNAUTHORIZED"},
		{"User", id, map[string]any{"title": "x"}, ts.Token(token), 401, "UNAUTHORIZED"},
		{"Unknown", "5f1c0a9b2d3e4f5a6b7c8d9e", map[string]any{"title": "x"}, h.Admin(), 404, "NOT_FOUND"},
		{"OtherTenantsLocation", foreign, map[string]any{"title": "x"}, h.Admin(), 404, "NOT_FOUND"},
		{"FromOtherTenant", id, map[string]any{"title": "x"}, other, 404, "NOT_FOUND"},
		{"MalformedJSON", id, `{"title":`, h.Admin(), 422, "VALIDATION_FAILED"},
		{"EmptyBody", id, ``, h.Admin(), 422, "VALIDATION_FAILED"},
		{"ArrayBody", id, `[]`, h.Admin(), 422, "VALIDATION_FAILED"},
		{"UnknownField", id, map[string]any{"colour": "red"}, h.Admin(), 422, "VALIDATION_FAILED"},
		{"UnknownNestedField", id, map[string]any{"address": map[string]any{"street": "x"}}, h.Admin(), 422, "VALIDATION_FAILED"},
		{"ChangedID", id, map[string]any{"_id": foreign}, h.Admin(), 422, "VALIDATION_FAILED"},
		{"ChangedTenant", id, map[string]any{"tenantId": "other"}, h.Admin(), 422, "VALIDATION_FAILED"},
		{"WrongType", id, map[string]any{"tags": "one"}, h.Admin(), 422, "VALIDATION_FAILED"},
		{"TitleNull", id, map[string]any{"title": nil}, h.Admin(), 422, "VALIDATION_FAILED"},
		{"TitleEmpty", id, map[string]any{"title": ""}, h.Admin(), 422, "VALIDATION_FAILED"},
		{"GeoNull", id, map[string]any{"geo": nil}, h.Admin(), 422, "VALIDATION_FAILED"},
		{"GeoOutOfRange", id, map[string]any{"geo": []float64{0, 91}}, h.Admin(), 422, "VALIDATION_FAILED"},
		{"BadState", id, map[string]any{"state": "CLOSED"}, h.Admin(), 422, "VALIDATION_FAILED"},
		{"BadService", id, map[string]any{"services": map[string]any{"valet": true}}, h.Admin(), 422, "VALIDATION_FAILED"},
		{"BadTimezone", id, map[string]any{"timezone": "Europe/Nowhere"}, h.Admin(), 422, "VALIDATION_FAILED"},
		{"TooLarge", id, `{"description":"` + strings.Repeat("x", 1<<20) + `"}`, h.Admin(), 413, "PAYLOAD_TOO_LARGE"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h.Do("PUT", "/locations/"+tc.id, tc.body, tc.headers).Expect(t, tc.status, tc.code)
		})
	}
	t.Run("NothingChanged", func(t *testing.T) {
		got := h.Do("GET", "/locations/"+id, nil, h.Admin()).Expect(t, 200, "").Map(t)
		if got["title"] != "Target" || got["updated"] != got["created"] {
			t.Errorf("location changed by rejected updates: %v", got)
		}
		if f := h.Do("GET", "/locations/"+foreign, nil, other).Expect(t, 200, "").Map(t); f["title"] != "Foreign" {
			t.Errorf("other tenant's location changed: %v", f)
		}
	})
}

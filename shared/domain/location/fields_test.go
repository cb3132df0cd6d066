package location_test

import (
	"reflect"
	"strings"
	"testing"

	ts "github.com/loyalty-platform/platform/shared/testkit"
)

// clone returns a shallow copy of a body with changes applied (a nil value
// removes the key).
func clone(body map[string]any, changes map[string]any) map[string]any {
	out := make(map[string]any, len(body))
	for k, v := range body {
		out[k] = v
	}
	for k, v := range changes {
		if v == nil {
			delete(out, k)
			continue
		}
		out[k] = v
	}
	return out
}

// TestUpdateLocationWithGetBody: a client may PUT back the body GET
// returned with some fields changed. _id and tenantId are accepted when
// they equal the addressed location's (else 422 "cannot be changed");
// created, updated and distance are ignored whatever their value.
func TestUpdateLocationWithGetBody(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	id := create(t, h, full("Round trip"))["_id"].(string)
	other := otherTenant(h)
	foreign := h.Do("POST", "/locations", minimal("Foreign"), other).Expect(t, 201, "").Map(t)["_id"].(string)
	get := func(t *testing.T) map[string]any {
		t.Helper()
		return h.Do("GET", "/locations/"+id, nil, h.Admin()).Expect(t, 200, "").Map(t)
	}
	for _, tc := range []struct {
		name    string
		changes map[string]any
		headers ts.Headers
		path    string // default: the location
		status  int
		message string
	}{
		{"OneFieldChanged", map[string]any{"description": "Changed"}, h.Admin(), "", 200, ""},
		{"TitleChanged", map[string]any{"title": "Round trip renamed"}, h.Admin(), "", 200, ""},
		{"WithoutIdentity", map[string]any{"_id": nil, "tenantId": nil, "description": "No ids"}, h.Admin(), "", 200, ""},
		{"CreatedAnyValue", map[string]any{"created": "1999-01-01T00:00:00.000Z"}, h.Admin(), "", 200, ""},
		{"UpdatedWrongType", map[string]any{"updated": 42}, h.Admin(), "", 200, ""},
		{"DistanceAnyValue", map[string]any{"distance": "far"}, h.Admin(), "", 200, ""},
		{"DistanceObject", map[string]any{"distance": map[string]any{"m": 1}}, h.Admin(), "", 200, ""},
		{"ChangedID", map[string]any{"_id": foreign}, h.Admin(), "", 422, "_id: cannot be changed"},
		{"IDNumber", map[string]any{"_id": 12}, h.Admin(), "", 422, "_id: cannot be changed"},
		{"IDEmpty", map[string]any{"_id": ""}, h.Admin(), "", 422, "_id: cannot be changed"},
		{"IDOtherCase", map[string]any{"_id": strings.ToUpper(id)}, h.Admin(), "", 422, "_id: cannot be changed"},
		{"ChangedTenant", map[string]any{"tenantId": "someone-else"}, h.Admin(), "", 422, "tenantId: cannot be changed"},
		{"TenantArray", map[string]any{"tenantId": []string{h.Tenant.ID}}, h.Admin(), "", 422, "tenantId: cannot be changed"},
		{"BodyOfAnotherLocation", nil, h.Admin(), "/locations/" + foreign, 404, "location not found"},
		{"UnknownFieldStill422", map[string]any{"colour": "red"}, h.Admin(), "", 422, "colour: unknown field"},
		{"WrongCaseIdentity", map[string]any{"TenantId": "x"}, h.Admin(), "", 422, "TenantId: unknown field"},
		{"OtherTenantsAdmin", map[string]any{"tenantId": nil}, other, "", 404, "location not found"},
		{"OtherTenantsAdminWithOurTenantID", nil, other, "", 404, "location not found"},
		{"User", nil, ts.Token(func() string { _, tok := activeUser(t, h); return tok }()), "", 401, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := get(t)
			h.Clock.Advance(1e9)
			path := tc.path
			if path == "" {
				path = "/locations/" + id
			}
			r := h.Do("PUT", path, clone(before, tc.changes), tc.headers)
			code := map[int]string{200: "", 401: "UNAUTHORIZED", 404: "NOT_FOUND", 422: "VALIDATION_FAILED"}[tc.status]
			r.Expect(t, tc.status, code)
			after := get(t)
			if tc.status != 200 {
				if msg := r.Map(t)["message"]; tc.message != "" && msg != tc.message {
					t.Errorf("message = %q, want %q", msg, tc.message)
				}
				if !reflect.DeepEqual(after, before) {
					t.Errorf("a refused update changed the location:\n%v\n%v", before, after)
				}
				return
			}
			got := r.Map(t)
			if !reflect.DeepEqual(got, after) {
				t.Errorf("PUT answered %v, GET reads %v", got, after)
			}
			if got["_id"] != id || got["tenantId"] != h.Tenant.ID || got["created"] != before["created"] {
				t.Errorf("identity or created changed: %v", got)
			}
			if got["updated"] == before["updated"] {
				t.Errorf("updated did not move: %v", got["updated"])
			}
			if _, ok := got["distance"]; ok {
				t.Errorf("distance stored: %v", got["distance"])
			}
			for k, v := range tc.changes {
				if v != nil && k != "created" && k != "updated" && k != "distance" && !reflect.DeepEqual(got[k], v) {
					t.Errorf("%s = %v, want %v", k, got[k], v)
				}
			}
		})
	}
}

// TestCreateLocationServerFields: POST /locations accepts the caller's
// tenantId and ignores created, updated and distance; an _id is 422 (the
// server assigns ids) and another tenantId is 422.
func TestCreateLocationServerFields(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	existing := create(t, h, minimal("Existing"))
	for _, tc := range []struct {
		name    string
		changes map[string]any
		status  int
		message string
	}{
		{"OwnTenant", map[string]any{"tenantId": h.Tenant.ID}, 201, ""},
		{"ServerFieldsIgnored", map[string]any{"created": "1999-01-01T00:00:00.000Z", "updated": 7, "distance": "near"}, 201, ""},
		{"GetBodyWithoutID", clone(existing, map[string]any{"_id": nil, "title": "Copy"}), 201, ""},
		{"ID", map[string]any{"_id": "0123456789abcdef01234567"}, 422, "_id: is assigned by the server; leave it out"},
		{"IDOfExisting", map[string]any{"_id": existing["_id"]}, 422, "_id: is assigned by the server; leave it out"},
		{"OtherTenant", map[string]any{"tenantId": "someone-else"}, 422, "tenantId: must be the tenant of the request (x-application-id) or left out"},
		{"TenantNull", map[string]any{"tenantId": false}, 422, "tenantId: must be the tenant of the request (x-application-id) or left out"},
		{"UnknownField", map[string]any{"colour": "red"}, 422, "colour: unknown field"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			title := "Create " + tc.name
			body := clone(minimal(title), tc.changes)
			if _, ok := tc.changes["title"]; ok {
				title = tc.changes["title"].(string)
			}
			h.Clock.Advance(1e9)
			r := h.Do("POST", "/locations", body, h.Admin())
			if tc.status != 201 {
				r.Expect(t, tc.status, "VALIDATION_FAILED")
				if msg := r.Map(t)["message"]; msg != tc.message {
					t.Errorf("message = %q, want %q", msg, tc.message)
				}
				if l := list(t, h, "?title="+strings.ReplaceAll(title, " ", "%20"), h.Admin()); len(l.Items) != 0 {
					t.Errorf("a refused create stored %v", l.titles())
				}
				return
			}
			got := r.Expect(t, 201, "").Map(t)
			if got["_id"] == existing["_id"] || got["tenantId"] != h.Tenant.ID || got["title"] != title {
				t.Errorf("created %v", got)
			}
			if got["created"] == "1999-01-01T00:00:00.000Z" || got["created"] != got["updated"] || got["created"] == existing["created"] {
				t.Errorf("timestamps not the server's: %v / %v", got["created"], got["updated"])
			}
			if _, ok := got["distance"]; ok {
				t.Errorf("distance stored: %v", got["distance"])
			}
		})
	}
}

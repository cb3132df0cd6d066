package location_test

import (
	"strings"
	"testing"

	ts "github.com/loyalty-platform/platform/shared/testsupport"
)

func TestTagGroups(t *testing.T) {
	h := ts.New(t)
	_, token := activeUser(t, h)
	var groups struct {
		Items []map[string]any `json:"items"`
	}
	titles := func(t *testing.T, headers ts.Headers) string {
		t.Helper()
		h.Do("GET", "/locations/taggroups", nil, headers).Expect(t, 200, "").JSON(t, &groups)
		var out []string
		for _, g := range groups.Items {
			out = append(out, g["title"].(string))
		}
		return strings.Join(out, ",")
	}

	t.Run("EmptyList", func(t *testing.T) {
		if got := titles(t, h.Anon()); got != "" {
			t.Errorf("groups = %s", got)
		}
		if string(h.Do("GET", "/locations/taggroups", nil, h.Anon()).Body) != `{"items":[]}` {
			t.Errorf("empty list is not {\"items\":[]}")
		}
	})
	cuisine := h.Do("POST", "/locations/taggroups", map[string]any{"title": "Cuisine", "sort": 2, "tags": []string{"pizza", " burgers ", "pizza"}}, h.Admin()).Expect(t, 201, "").Map(t)
	h.Do("POST", "/locations/taggroups", map[string]any{"title": "Area"}, h.Admin()).Expect(t, 201, "")
	h.Do("POST", "/locations/taggroups", map[string]any{"title": "Amenities", "sort": 2}, h.Admin()).Expect(t, 201, "")
	id := cuisine["id"].(string)

	t.Run("Created", func(t *testing.T) {
		if cuisine["sort"] != 2.0 || cuisine["created"] == "" || strings.Join(toStrings(cuisine["tags"]), ",") != "pizza,burgers" {
			t.Errorf("created %v", cuisine)
		}
	})
	t.Run("OrderedBySortThenTitle", func(t *testing.T) {
		for _, headers := range []ts.Headers{h.Anon(), ts.Token(token), h.Admin()} {
			if got := titles(t, headers); got != "Area,Amenities,Cuisine" {
				t.Errorf("groups = %s", got)
			}
		}
	})
	t.Run("Update", func(t *testing.T) {
		g := h.Do("PUT", "/locations/taggroups/"+id, map[string]any{"tags": []string{"sushi"}, "sort": -1}, h.Admin()).Expect(t, 200, "").Map(t)
		if g["title"] != "Cuisine" || g["sort"] != -1.0 || strings.Join(toStrings(g["tags"]), ",") != "sushi" {
			t.Errorf("updated %v", g)
		}
		if got := titles(t, h.Anon()); got != "Cuisine,Area,Amenities" {
			t.Errorf("groups = %s", got)
		}
	})
	t.Run("OtherTenantSeesNone", func(t *testing.T) {
		if got := titles(t, otherTenant(h)); got != "" {
			t.Errorf("groups = %s", got)
		}
	})

	other := otherTenant(h)
	for _, tc := range []struct {
		name    string
		method  string
		path    string
		body    any
		headers ts.Headers
		status  int
		code    string
	}{
		{"ListNoTenant", "GET", "/locations/taggroups", nil, nil, 401, "UNAUTHORIZED"},
		{"CreateAnonymous", "POST", "/locations/taggroups", map[string]any{"title": "x"}, h.Anon(), 401, "UNAUTHORIZED"},
		{"CreateUser", "POST", "/locations/taggroups", map[string]any{"title": "x"}, ts.Token(token), 401, "UNAUTHORIZED"},
		{"CreateNoTitle", "POST", "/locations/taggroups", map[string]any{"sort": 1}, h.Admin(), 422, "VALIDATION_FAILED"},
		{"CreateBlankTitle", "POST", "/locations/taggroups", map[string]any{"title": " "}, h.Admin(), 422, "VALIDATION_FAILED"},
		{"CreateTitleTooLong", "POST", "/locations/taggroups", map[string]any{"title": strings.Repeat("t", 201)}, h.Admin(), 422, "VALIDATION_FAILED"},
		{"CreateUnknownField", "POST", "/locations/taggroups", map[string]any{"title": "x", "colour": "red"}, h.Admin(), 422, "VALIDATION_FAILED"},
		{"CreateSortNotInteger", "POST", "/locations/taggroups", map[string]any{"title": "x", "sort": 1.5}, h.Admin(), 422, "VALIDATION_FAILED"},
		{"CreateSortOutOfRange", "POST", "/locations/taggroups", map[string]any{"title": "x", "sort": 10000000}, h.Admin(), 422, "VALIDATION_FAILED"},
		{"CreateTagsNotArray", "POST", "/locations/taggroups", map[string]any{"title": "x", "tags": "a"}, h.Admin(), 422, "VALIDATION_FAILED"},
		{"CreateEmptyTag", "POST", "/locations/taggroups", map[string]any{"title": "x", "tags": []string{""}}, h.Admin(), 422, "VALIDATION_FAILED"},
		{"CreateMalformed", "POST", "/locations/taggroups", `{"title":`, h.Admin(), 422, "VALIDATION_FAILED"},
		{"CreateEmptyBody", "POST", "/locations/taggroups", ``, h.Admin(), 422, "VALIDATION_FAILED"},
		{"CreateTooLarge", "POST", "/locations/taggroups", `{"title":"` + strings.Repeat("x", 1<<20) + `"}`, h.Admin(), 413, "PAYLOAD_TOO_LARGE"},
		{"UpdateUser", "PUT", "/locations/taggroups/" + id, map[string]any{"title": "x"}, ts.Token(token), 401, "UNAUTHORIZED"},
		{"UpdateUnknown", "PUT", "/locations/taggroups/5f1c0a9b2d3e4f5a6b7c8d9e", map[string]any{"title": "x"}, h.Admin(), 404, "NOT_FOUND"},
		{"UpdateFromOtherTenant", "PUT", "/locations/taggroups/" + id, map[string]any{"title": "x"}, other, 404, "NOT_FOUND"},
		{"UpdateBlankTitle", "PUT", "/locations/taggroups/" + id, map[string]any{"title": ""}, h.Admin(), 422, "VALIDATION_FAILED"},
		{"UpdateUnknownField", "PUT", "/locations/taggroups/" + id, map[string]any{"id": "x"}, h.Admin(), 422, "VALIDATION_FAILED"},
		{"UpdateWrongType", "PUT", "/locations/taggroups/" + id, map[string]any{"tags": map[string]any{}}, h.Admin(), 422, "VALIDATION_FAILED"},
		{"DeleteAnonymous", "DELETE", "/locations/taggroups/" + id, nil, h.Anon(), 401, "UNAUTHORIZED"},
		{"DeleteUser", "DELETE", "/locations/taggroups/" + id, nil, ts.Token(token), 401, "UNAUTHORIZED"},
		{"DeleteFromOtherTenant", "DELETE", "/locations/taggroups/" + id, nil, other, 404, "NOT_FOUND"},
		{"DeleteUnknown", "DELETE", "/locations/taggroups/nope", nil, h.Admin(), 404, "NOT_FOUND"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h.Do(tc.method, tc.path, tc.body, tc.headers).Expect(t, tc.status, tc.code)
		})
	}
	t.Run("RejectedChangesNothing", func(t *testing.T) {
		if got := titles(t, h.Anon()); got != "Cuisine,Area,Amenities" {
			t.Errorf("groups = %s", got)
		}
	})
	t.Run("Delete", func(t *testing.T) {
		h.Do("DELETE", "/locations/taggroups/"+id, nil, h.Admin()).Expect(t, 204, "")
		if got := titles(t, h.Anon()); got != "Area,Amenities" {
			t.Errorf("groups = %s", got)
		}
		h.Do("DELETE", "/locations/taggroups/"+id, nil, h.Admin()).Expect(t, 404, "NOT_FOUND")
		h.Do("PUT", "/locations/taggroups/"+id, map[string]any{"title": "back"}, h.Admin()).Expect(t, 404, "NOT_FOUND")
	})
	t.Run("AtMost100", func(t *testing.T) {
		h := ts.New(t)
		for i := 0; i < 100; i++ {
			h.Do("POST", "/locations/taggroups", map[string]any{"title": "g"}, h.Admin()).Expect(t, 201, "")
		}
		h.Do("POST", "/locations/taggroups", map[string]any{"title": "one too many"}, h.Admin()).Expect(t, 422, "VALIDATION_FAILED")
	})
}

func toStrings(v any) []string {
	var out []string
	for _, x := range v.([]any) {
		out = append(out, x.(string))
	}
	return out
}

package access_test

import (
	"encoding/json"
	"maps"
	"sort"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/loyalty-platform/platform/shared/contract/openapi"
	ts "github.com/loyalty-platform/platform/shared/testkit"
)

// TestNullRefused: the known cases through HTTP. A null where the OpenAPI
// document does not allow one is 422 VALIDATION_FAILED naming the field,
// however deep; the fields whose null means something still accept it.
func TestNullRefused(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	uid, _, _ := h.ActiveUser(t, "Nora", "Null")
	seg := idFrom(t, h.Do("POST", "/segments", map[string]any{"title": "Nulls", "type": "SCHEDULED", "expiryHorizon": "P30D", "description": "d"}, h.Admin()).Expect(t, 201, ""))
	loc := idFrom(t, h.Do("POST", "/locations", map[string]any{"title": "Null Cafe", "geo": []float64{0, 0}, "description": "d"}, h.Admin()).Expect(t, 201, ""))
	nonce := ts.Headers{"x-platform-req-nonce", ts.Nonce()}
	tests := []struct {
		name         string
		method, path string
		body         string
		headers      ts.Headers
		status       int
		field        string // the field the 422 names
	}{
		{"GuestFirstName", "POST", "/guests", `{"firstName":null}`, h.Anon(), 422, "firstName"},
		{"GuestBirthdate", "POST", "/guests", `{"birthdate":null}`, h.Anon(), 422, "birthdate"},
		{"ExportFiltersAndLimit", "POST", "/locations/exports", `{"filters":{"tags":null},"limit":null}`, append(h.Admin(), nonce...), 422, "filters.tags"},
		{"ExportLimit", "POST", "/locations/exports", `{"limit":null}`, append(h.Admin(), nonce...), 422, "limit"},
		{"SignUpNestedCredential", "POST", "/users", `{"firstName":"A","lastName":"B","credentials":[{"provider":"EMAIL","id":null}]}`, h.Anon(), 422, "credentials[0].id"},
		{"ArrayItem", "POST", "/segments/" + seg + "/members", `{"userIds":["` + uid + `",null]}`, h.Admin(), 422, "userIds[1]"},
		{"UserUpdateNotClearable", "PUT", "/users/" + uid, `{"firstName":null}`, h.Admin(), 422, "firstName"},
		{"UserUpdateClears", "PUT", "/users/" + uid, `{"birthdate":null,"gender":null}`, h.Admin(), 200, ""},
		{"SegmentUpdateClears", "PUT", "/segments/" + seg, `{"description":null}`, h.Admin(), 200, ""},
		{"SegmentUpdateTitle", "PUT", "/segments/" + seg, `{"title":null}`, h.Admin(), 422, "title"},
		{"LocationUpdateClears", "PUT", "/locations/" + loc, `{"description":null}`, h.Admin(), 200, ""},
		{"LocationUpdateRequired", "PUT", "/locations/" + loc, `{"title":null}`, h.Admin(), 422, "title"},
		{"LocationCreateNoValue", "POST", "/locations", `{"title":"X","geo":[0,0],"description":null}`, h.Admin(), 201, ""},
		{"LocationCreateState", "POST", "/locations", `{"title":"X","geo":[0,0],"state":null}`, h.Admin(), 422, "state"},
		{"LocationCreateNested", "POST", "/locations", `{"title":"X","geo":[0,0],"address":{"town":null}}`, h.Admin(), 422, "address.town"},
		{"PerkCreateNested", "POST", "/perks", `{"title":"X","template":"AD_HOC","points":{"max":null}}`, h.Admin(), 422, "points.max"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := h.Do(tt.method, tt.path, tt.body, tt.headers)
			if r.Status != tt.status {
				t.Fatalf("%s %s %s = %d, want %d: %s", tt.method, tt.path, tt.body, r.Status, tt.status, trim(r.Body))
			}
			if tt.field == "" {
				return
			}
			var e struct{ Code, Message string }
			r.JSON(t, &e)
			if e.Code != "VALIDATION_FAILED" || !strings.HasPrefix(e.Message, tt.field+":") {
				t.Errorf("got %s %q, want VALIDATION_FAILED naming %s", e.Code, e.Message, tt.field)
			}
		})
	}
	// The clears took effect.
	var u map[string]any
	h.Do("GET", "/users/"+uid, nil, h.Admin()).Expect(t, 200, "").JSON(t, &u)
	if _, ok := u["birthdate"]; ok {
		t.Errorf("birthdate still set after PUT null: %v", u["birthdate"])
	}
	var l map[string]any
	h.Do("GET", "/locations/"+loc, nil, h.Admin()).Expect(t, 200, "").JSON(t, &l)
	if _, ok := l["description"]; ok {
		t.Errorf("location description still set after PUT null: %v", l["description"])
	}
}

// TestNullTable sends every create and update route of template.yaml (POST
// and PUT with a JSON body) a plausible body with one top-level field of
// its OpenAPI request schema set to null, once per field, as the tenant's
// admin: a field the document does not mark nullable must be refused with
// 422 VALIDATION_FAILED naming it; a nullable one must not be refused for
// being null. Read-only fields (which the server ignores) are left out.
func TestNullTable(t *testing.T) {
	t.Parallel()
	doc, err := openapi.Load()
	if err != nil {
		t.Fatal(err)
	}
	h := ts.New(t)
	f := newFixture(t, h)
	fields := 0
	for _, fn := range h.Template.Functions {
		for _, r := range fn.Routes {
			if r.Method != "POST" && r.Method != "PUT" || bodyLimits[r.Key()] != "" {
				continue
			}
			props := requestProperties(doc.Spec(), r.Method, r.Path)
			names := make([]string, 0, len(props))
			for n := range props {
				names = append(names, n)
			}
			sort.Strings(names)
			for _, name := range names {
				nullable := props[name]
				fields++
				t.Run(r.Key()+"/"+name, func(t *testing.T) {
					base, _ := f.body(t, r.Method, r.Path)
					if b, ok := nullTableBodies[r.Key()]; ok {
						base = b
					}
					body := map[string]any{}
					if m, ok := base.(map[string]any); ok {
						maps.Copy(body, m)
					}
					body[name] = nil
					resp := h.Do(r.Method, f.path(t, r.Path)+query(r.Method, r.Path), body, h.Admin(), ts.Headers{"x-platform-req-nonce", ts.Nonce()})
					var e struct{ Code, Message string }
					_ = json.Unmarshal(resp.Body, &e)
					refused := resp.Status == 422 && e.Code == "VALIDATION_FAILED" && strings.HasPrefix(e.Message, name+":")
					switch {
					case !nullable && !refused:
						t.Errorf("%s {%q: null} = %d %s, want 422 VALIDATION_FAILED naming %s", r.Key(), name, resp.Status, trim(resp.Body), name)
					case nullable && refused && strings.Contains(e.Message, "null"):
						t.Errorf("%s {%q: null} = %d %s, but the document marks it nullable", r.Key(), name, resp.Status, trim(resp.Body))
					}
				})
			}
		}
	}
	t.Logf("%d fields of create and update bodies sent as null", fields)
}

// nullTableBodies are valid bodies of the routes for which the access
// matrix's plausible body is not one (it needs only the routes' refusals).
var nullTableBodies = map[string]any{
	"POST /users/{userId}/credentials/{credentialId}/verify": map[string]any{"verificationCode": "123456"},
	"POST /users/{userId}/awards/{awardId}/refund":           map[string]any{"value": 1},
	"POST /users/{userId}/pointawards/{awardId}/refund":      map[string]any{"value": 1},
}

// requestProperties returns the top-level properties of an operation's
// JSON request body (allOf, oneOf and anyOf members included) and whether
// each accepts null (nullable, or no type at all); read-only properties are
// left out.
func requestProperties(doc *openapi3.T, method, path string) map[string]bool {
	item := doc.Paths.Find(path)
	if item == nil {
		return nil
	}
	op := item.GetOperation(method)
	if op == nil || op.RequestBody == nil || op.RequestBody.Value == nil {
		return nil
	}
	mt := op.RequestBody.Value.Content.Get("application/json")
	if mt == nil || mt.Schema == nil {
		return nil
	}
	out := map[string]bool{}
	var walk func(s *openapi3.SchemaRef)
	walk = func(s *openapi3.SchemaRef) {
		if s == nil || s.Value == nil {
			return
		}
		for name, p := range s.Value.Properties {
			if p.Value == nil || p.Value.ReadOnly {
				continue
			}
			// A property without a type takes any value, null included
			// (the server-managed fields a body may carry back).
			anyValue := p.Value.Type == nil || len(*p.Value.Type) == 0
			out[name] = out[name] || p.Value.Nullable || anyValue && len(p.Value.AllOf) == 0
		}
		for _, list := range [][]*openapi3.SchemaRef{s.Value.AllOf, s.Value.OneOf, s.Value.AnyOf} {
			for _, m := range list {
				walk(m)
			}
		}
	}
	walk(mt.Schema)
	return out
}

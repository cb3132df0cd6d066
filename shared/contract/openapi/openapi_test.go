package openapi_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/loyalty-platform/platform/shared/contract/openapi"
	"github.com/loyalty-platform/platform/shared/contract/sam"
	"github.com/loyalty-platform/platform/shared/domain/account"
	"github.com/loyalty-platform/platform/shared/domain/directory"
	"github.com/loyalty-platform/platform/shared/domain/user"
	"github.com/loyalty-platform/platform/shared/platform/apierr"
	"github.com/loyalty-platform/platform/shared/platform/web"
	"github.com/loyalty-platform/platform/shared/wire/whole"
)

func load(t *testing.T) *openapi.Doc {
	t.Helper()
	d, err := openapi.Load()
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	return d
}

// TestDocumentLoads checks that the embedded document parses and validates
// as OpenAPI 3.0.3 and that every operation carries what the project
// requires of it.
func TestDocumentLoads(t *testing.T) {
	t.Parallel()
	raw, err := openapi.Document()
	if err != nil {
		t.Fatalf("merge document: %v", err)
	}
	if !strings.Contains(string(raw), `"openapi": "3.0.3"`) {
		t.Fatalf("document is not openapi 3.0.3")
	}
	d := load(t)
	if d.Spec().Info == nil || d.Spec().Info.Version != "1.0.0" || d.Spec().Info.Description == "" {
		t.Errorf("info: want version 1.0.0 and a description")
	}
	for _, name := range []string{"User", "LegacyUser", "Credential", "Session", "AdminSession", "Page", "Error", "UserList", "LegacyUserList"} {
		if d.Spec().Components.Schemas[name] == nil {
			t.Errorf("components.schemas.%s is missing", name)
		}
	}
	for _, name := range []string{"auth-token", "bearer-auth-token", "x-service-auth-token", "basic"} {
		if d.Spec().Components.SecuritySchemes[name] == nil {
			t.Errorf("components.securitySchemes.%s is missing", name)
		}
	}
	ids := map[string]string{}
	for path, item := range d.Spec().Paths.Map() {
		for method, op := range item.Operations() {
			key := method + " " + path
			if op.OperationID == "" || op.Summary == "" || op.Description == "" {
				t.Errorf("%s: operationId, summary and description are required", key)
			}
			if other, dup := ids[op.OperationID]; dup {
				t.Errorf("%s: operationId %q is also used by %s", key, op.OperationID, other)
			}
			ids[op.OperationID] = key
			hasTenant := false
			for _, p := range append(slices.Clone(item.Parameters), op.Parameters...) {
				if p.Value != nil && p.Value.In == "header" && p.Value.Name == web.HeaderTenant {
					hasTenant = p.Ref == "#/components/parameters/ApplicationId"
				}
			}
			if !hasTenant {
				t.Errorf("%s: the x-application-id parameter ($ref ApplicationId) is missing", key)
			}
			// The spec: every endpoint can return 401, 404, 422 and 500.
			for _, status := range []int{401, 404, 422, 500} {
				if op.Responses.Status(status) == nil {
					t.Errorf("%s: response %d is not documented", key, status)
				}
			}
		}
	}
}

// servedRoutes returns the routes each API function serves, by function
// name. It builds the platform's services without any AWS client (nothing is
// called), so a new function added to whole.Deps.Routes is checked here
// without changing this test.
func servedRoutes() map[string][]web.Route {
	d := &whole.Deps{}
	if err := d.Wire(); err != nil {
		panic(err)
	}
	return d.Routes()
}

// TestRoutesAgree proves that the three route lists agree: the routes the
// handlers serve, the HttpApi events of template.yaml, and the operations of
// the OpenAPI document; and that each route is served by the function the
// template sends it to.
func TestRoutesAgree(t *testing.T) {
	t.Parallel()
	served := map[string]string{} // "METHOD /path" -> function
	for fn, routes := range servedRoutes() {
		for _, r := range routes {
			key := r.Method + " " + r.Path
			if other, dup := served[key]; dup {
				t.Errorf("%s is served by both %s and %s", key, other, fn)
			}
			served[key] = fn
		}
	}
	tpl, err := sam.Load(sam.Path())
	if err != nil {
		t.Fatalf("template: %v", err)
	}
	events := map[string]string{} // "METHOD /path" -> function
	for _, f := range tpl.Functions {
		for _, r := range f.Routes {
			key := r.Key()
			if other, dup := events[key]; dup {
				t.Errorf("template: %s is an event of both %s and %s", key, other, f.Name)
			}
			events[key] = f.Name
		}
	}
	documented := map[string]bool{}
	for _, p := range load(t).Paths() {
		documented[p] = true
	}

	all := map[string]bool{}
	for k := range served {
		all[k] = true
	}
	for k := range events {
		all[k] = true
	}
	for k := range documented {
		all[k] = true
	}
	keys := make([]string, 0, len(all))
	for k := range all {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fn, isServed := served[k]
		tfn, isEvent := events[k]
		switch {
		case !isServed:
			t.Errorf("%s: no handler serves it (template function %q, documented %v)", k, tfn, documented[k])
		case !isEvent:
			t.Errorf("%s: served by %s but not an HttpApi event in template.yaml", k, fn)
		case fn != tfn:
			t.Errorf("%s: served by function %s but the template sends it to %s", k, fn, tfn)
		}
		if !documented[k] {
			t.Errorf("%s: not in the OpenAPI document", k)
		}
	}
	if len(served) == 0 {
		t.Fatal("no routes served")
	}
}

// TestIdempotencyKeyDocumented checks that exactly the routes marked
// Idempotent document the IdempotencyKey header parameter, and that each of
// them documents what the header brings: 409 (IDEMPOTENCY_IN_PROGRESS), 422
// (IDEMPOTENCY_KEY_REUSED) and the Idempotent-Replayed header on its
// success response.
func TestIdempotencyKeyDocumented(t *testing.T) {
	t.Parallel()
	want := map[string]bool{}
	for _, routes := range servedRoutes() {
		for _, r := range routes {
			if r.Idempotent {
				want[r.Method+" "+r.Path] = true
			}
		}
	}
	if len(want) == 0 {
		t.Fatal("no route is marked Idempotent")
	}
	d := load(t)
	got := map[string]bool{}
	for path, item := range d.Spec().Paths.Map() {
		for method, op := range item.Operations() {
			key := method + " " + path
			documented := false
			for _, p := range append(slices.Clone(item.Parameters), op.Parameters...) {
				if p.Value != nil && p.Value.In == "header" && strings.EqualFold(p.Value.Name, "Idempotency-Key") {
					if p.Ref != "#/components/parameters/IdempotencyKey" {
						t.Errorf("%s: the Idempotency-Key parameter is not the $ref IdempotencyKey", key)
					}
					documented = true
				}
			}
			if !documented {
				continue
			}
			got[key] = true
			for _, status := range []int{409, 422} {
				if op.Responses.Status(status) == nil {
					t.Errorf("%s: takes Idempotency-Key but does not document %d", key, status)
				}
			}
			replayed := false
			for code, resp := range op.Responses.Map() {
				if strings.HasPrefix(code, "2") && resp.Value != nil && resp.Value.Headers["Idempotent-Replayed"] != nil {
					replayed = true
				}
			}
			if !replayed {
				t.Errorf("%s: its success response does not document the Idempotent-Replayed header", key)
			}
		}
	}
	for k := range want {
		if !got[k] {
			t.Errorf("%s is Idempotent but does not document the IdempotencyKey parameter", k)
		}
	}
	for k := range got {
		if !want[k] {
			t.Errorf("%s documents the IdempotencyKey parameter but its route is not Idempotent", k)
		}
	}
}

// TestErrorCodes checks the Error.code enum against apierr.Codes() and each
// code's status against the per-status error responses of the document.
func TestErrorCodes(t *testing.T) {
	t.Parallel()
	d := load(t)
	var want []string
	for _, c := range apierr.Codes() {
		want = append(want, string(c))
	}
	sort.Strings(want)
	if got := d.ErrorCodes(); !slices.Equal(got, want) {
		t.Errorf("Error.code enum = %v\napierr.Codes() = %v", got, want)
	}

	// components.responses by status: each lists, in its allOf, the codes
	// of that status.
	byStatus := map[int]string{
		401: "Unauthorized", 404: "NotFound", 409: "Conflict",
		413: "PayloadTooLarge", 415: "UnsupportedMediaType", 422: "Unprocessable", 429: "TooManyAttempts", 500: "Internal",
	}
	listed := map[string]int{} // code -> status of the response listing it
	for status, name := range byStatus {
		ref := d.Spec().Components.Responses[name]
		if ref == nil || ref.Value == nil {
			t.Errorf("components.responses.%s is missing", name)
			continue
		}
		mt := ref.Value.Content.Get("application/json")
		if mt == nil || mt.Schema == nil || mt.Schema.Value == nil {
			t.Errorf("components.responses.%s has no JSON schema", name)
			continue
		}
		for _, sub := range mt.Schema.Value.AllOf {
			// Skip the $ref to Error: its enum is every code.
			if sub.Ref != "" || sub.Value == nil || sub.Value.Properties["code"] == nil {
				continue
			}
			for _, v := range sub.Value.Properties["code"].Value.Enum {
				code := fmt.Sprint(v)
				if prev, dup := listed[code]; dup {
					t.Errorf("code %s is listed for both %d and %d", code, prev, status)
				}
				listed[code] = status
			}
		}
	}
	for _, c := range apierr.Codes() {
		status, ok := listed[string(c)]
		if !ok {
			t.Errorf("code %s (status %d) is in no error response", c, c.Status())
			continue
		}
		if status != c.Status() {
			t.Errorf("code %s: the document answers it with %d, apierr with %d", c, status, c.Status())
		}
	}
}

// request returns a request to an httptest-like host, as the integration
// harness sends them.
func request(method, target string, header ...string) *http.Request {
	r := httptest.NewRequest(method, "http://127.0.0.1:54321"+target, nil)
	for i := 0; i+1 < len(header); i += 2 {
		r.Header.Set(header[i], header[i+1])
	}
	return r
}

var jsonCT = http.Header{"Content-Type": []string{"application/json"}}

// checkinJSON is a check-in as the checkins function returns it.
const checkinJSON = `{"_id":"c1","tenantId":"t1","userId":"u1","locationId":"l1","locationTitle":"Shop","userFullName":"Ada Tester",` +
	`"type":"MANUAL","trigger":"CODE","created":"2024-05-01T12:30:00.000Z","updated":"2024-05-01T12:30:00.000Z"}`

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// sampleUser is a user as the service builds it, with every include extra.
func sampleUser(extras bool) user.User {
	u := user.User{
		ID: "u1", TenantID: "t1", FirstName: "Ada", LastName: "Tester", FullName: "Ada Tester",
		State: user.StateActive, Roles: []string{"USER"}, PrimaryPlatform: user.PlatformUnknown,
		AdditionalInformation: []user.NameValue{{Name: "birthdate", Value: "1 May 1990"}},
		Birthdate:             "1990-05-01", Gender: "FEMALE",
		Tokens:     &user.Tokens{Activation: "1234"},
		DefaultTip: &user.Tip{Scheme: "PERCENTAGE", Amount: 12.5},
		Contacts:   map[string]any{"phone": "+4470000000"},
		UpdatedAt:  "2024-05-01T12:30:00.000Z", Created: "2024-05-01T12:30:00.000Z",
	}
	if extras {
		locs, prods, segIDs := []string{"l1"}, []string{}, []string{}
		ext := map[string]any{}
		points := 5
		creds := []user.Credential{{ID: "c1", Identifier: "ada@example.com", Provider: user.ProviderEmail, IsVerified: true, IsPrimary: true, Created: "2024-05-01T12:30:00.000Z"}}
		var checkin any
		segs := []user.SegmentRef{{ID: "s1", Title: "VIP", Included: true}}
		u.FavouriteLocations, u.FavouriteProducts, u.SegmentIDs = &locs, &prods, &segIDs
		u.Extended, u.Points, u.Credentials, u.Checkin, u.Segments = &ext, &points, &creds, &checkin, &segs
	}
	return u
}

func TestValidateResponse(t *testing.T) {
	t.Parallel()
	d := load(t)
	u := sampleUser(true)
	session := account.Session{
		ID: "t1.secret", UserID: "u1", TenantID: "t1", TenantTitle: "Tenant", ExpiresAt: "2024-05-31T12:30:00.000Z",
		FirstName: "Ada", LastName: "Tester", FullName: "Ada Tester", State: user.StateActive,
		IsPrimary: true, Roles: []string{"USER"}, User: &u,
	}
	admin := account.Session{ID: "t1.secret", UserID: account.ServiceUserID, TenantID: "t1", TenantTitle: "Tenant", ExpiresAt: "2024-05-01T23:59:59.000Z", Roles: []string{"ADMIN"}}
	page := web.Page{Limit: 2, Count: 1, NextKey: "abc.def"}
	legacy := map[string]any{"items": []directory.LegacyUser{{LegacyID: "u1", Name: "Ada Tester", User: sampleUser(false)}}, "page": page}
	current := map[string]any{"items": []user.User{sampleUser(false)}, "page": page}
	errBody := func(code, msg string) []byte {
		return mustJSON(t, web.ErrorBody{Code: code, Message: msg})
	}

	cases := []struct {
		name   string
		req    *http.Request
		status int
		header http.Header
		body   []byte
		ok     bool
	}{
		{"422 error", request("POST", "/users"), 422, jsonCT, errBody("VALIDATION_FAILED", "firstName: is required"), true},
		{"422 business code", request("PUT", "/users/u1"), 422, jsonCT, errBody("POINTS_NOT_EDITABLE", "no"), true},
		{"error without code", request("POST", "/users"), 422, jsonCT, []byte(`{"message":"firstName: is required"}`), false},
		{"error with extra field", request("POST", "/users"), 422, jsonCT, []byte(`{"code":"VALIDATION_FAILED","message":"x","field":"a"}`), false},
		{"unknown code", request("POST", "/users"), 422, jsonCT, errBody("NOPE", "x"), false},
		{"code of another status", request("POST", "/users"), 422, jsonCT, errBody("UNAUTHORIZED", "x"), false},
		{"500 leaks details", request("GET", "/users/u1"), 500, jsonCT, errBody("INTERNAL", "dynamodb: boom"), false},
		{"500", request("GET", "/users/u1"), 500, jsonCT, errBody("INTERNAL", "internal error"), true},
		{"undocumented status", request("GET", "/users"), 418, jsonCT, errBody("INTERNAL", "x"), false},
		{"status undocumented for this operation", request("GET", "/users"), 409, jsonCT, errBody("CONFLICT", "x"), false},
		{"undocumented route", request("GET", "/nowhere"), 404, jsonCT, errBody("NOT_FOUND", "x"), false},
		{"undocumented method", request("PATCH", "/users/u1"), 200, jsonCT, mustJSON(t, u), false},
		{"no content type", request("GET", "/users/u1"), 200, http.Header{}, mustJSON(t, u), false},
		{"user with every extra", request("GET", "/users/u1?include=checkin"), 200, jsonCT, mustJSON(t, u), true},
		{"user without extras", request("GET", "/users/u1"), 200, jsonCT, mustJSON(t, sampleUser(false)), true},
		{"user with an undocumented field", request("GET", "/users/u1"), 200, jsonCT, []byte(strings.Replace(string(mustJSON(t, u)), `{`, `{"secret":1,`, 1)), false},
		{"user with a null string", request("GET", "/users/u1"), 200, jsonCT, []byte(strings.Replace(string(mustJSON(t, u)), `"firstName":"Ada"`, `"firstName":null`, 1)), false},
		{"user with a null object", request("GET", "/users/u1"), 200, jsonCT, []byte(strings.Replace(string(mustJSON(t, u)), `"defaultTip":{"scheme":"PERCENTAGE","amount":12.5}`, `"defaultTip":null`, 1)), false},
		{"user with a null list", request("GET", "/users/u1?include=segments"), 200, jsonCT, []byte(strings.Replace(string(mustJSON(t, u)), `"segments":[{"_id":"s1","title":"VIP","included":true}]`, `"segments":null`, 1)), false},
		{"user with a percentage tip over 100", request("GET", "/users/u1"), 200, jsonCT, []byte(strings.Replace(string(mustJSON(t, u)), `"amount":12.5`, `"amount":120`, 1)), false},
		{"user with an absolute tip over 100", request("GET", "/users/u1"), 200, jsonCT, []byte(strings.Replace(string(mustJSON(t, u)), `{"scheme":"PERCENTAGE","amount":12.5}`, `{"scheme":"ABSOLUTE","amount":120}`, 1)), true},
		{"user checked in", request("GET", "/users/u1?include=checkin"), 200, jsonCT, []byte(strings.Replace(string(mustJSON(t, u)), `"checkin":null`, `"checkin":`+checkinJSON, 1)), true},
		{"user with a check-in missing a field", request("GET", "/users/u1?include=checkin"), 200, jsonCT, []byte(strings.Replace(string(mustJSON(t, u)), `"checkin":null`, `"checkin":{"_id":"c1"}`, 1)), false},
		{"user missing a required field", request("GET", "/users/u1"), 200, jsonCT, []byte(strings.Replace(string(mustJSON(t, u)), `"id":"u1",`, ``, 1)), false},
		{"created user", request("POST", "/users?autoActivate=true"), 201, jsonCT, mustJSON(t, sampleUser(false)), true},
		{"created user as 200", request("POST", "/users"), 200, jsonCT, mustJSON(t, sampleUser(false)), false},
		{"current list", request("GET", "/users", "x-api-version", "4"), 200, jsonCT, mustJSON(t, current), true},
		{"legacy list", request("GET", "/users"), 200, jsonCT, mustJSON(t, legacy), true},
		{"empty list", request("GET", "/users"), 200, jsonCT, []byte(`{"items":[],"page":{"limit":100,"count":0}}`), true},
		{"lookup returns the current shape only", request("POST", "/users/lookup"), 200, jsonCT, mustJSON(t, legacy), false},
		{"login session", request("GET", "/users/login"), 200, jsonCT, mustJSON(t, session), true},
		{"guest session", request("POST", "/guests"), 201, jsonCT, mustJSON(t, session), true},
		{"activation session", request("POST", "/users/activate"), 200, jsonCT, mustJSON(t, session), true},
		{"activation resent", request("POST", "/users/activate"), 200, jsonCT, []byte(`{"state":"PENDING","message":"a new activation code was sent"}`), true},
		{"admin session", request("POST", "/sessions"), 201, jsonCT, mustJSON(t, admin), true},
		{"admin session with a user", request("POST", "/sessions"), 201, jsonCT, mustJSON(t, session), false},
		{"logout without body", request("GET", "/users/logout?userId=u1"), 200, http.Header{}, nil, true},
		{"logout with a body", request("GET", "/users/logout?userId=u1"), 200, jsonCT, []byte(`{}`), false},
		{"reset without body", request("POST", "/users/reset"), 200, http.Header{}, nil, true},
		{"delete sessions without body", request("DELETE", "/sessions/u1"), 200, http.Header{}, nil, true},
		{"401 with WWW-Authenticate", request("GET", "/users"), 401, http.Header{"Content-Type": {"application/json"}, "Www-Authenticate": {`Token realm="platform"`}}, errBody("UNAUTHORIZED", "an admin session or service key is required"), true},
		{"413", request("PUT", "/users/u1"), 413, jsonCT, errBody("PAYLOAD_TOO_LARGE", "too large"), true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := d.ValidateResponse(c.req, c.status, c.header, c.body)
			if c.ok && err != nil {
				t.Errorf("want valid, got %v", err)
			}
			if !c.ok {
				switch {
				case err == nil:
					t.Errorf("want an error, got none")
				case strings.Contains(c.name, "null") && !strings.Contains(err.Error(), "not nullable"):
					t.Errorf("want the null refused, got %v", err)
				default:
					t.Logf("rejected as expected: %v", err)
				}
			}
		})
	}
}

package access_test

import (
	"bytes"
	"fmt"
	"mime/multipart"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/loyalty-platform/platform/shared/platform/callcount"
	ts "github.com/loyalty-platform/platform/shared/testkit"
)

// A class says what a caller may legitimately reach.
type class int

const (
	// anonymous callers hold no credentials, or credentials that do not
	// hold: only public routes answer them.
	anonymous class = iota
	// member callers are a USER or guest session of the victim's tenant:
	// they reach the tenant's catalogue and their own data, never the
	// victim's.
	member
	// self is the victim's own session, tried only on routes that do not
	// name a user: it must not pass admin routes.
	self
	// foreign callers hold credentials of another tenant. On a route that
	// names an id they get 4xx; on a collection route (no id in the path)
	// they act on their own tenant, and the answer must not reveal the
	// victim's tenant.
	foreign
	// crossed callers hold a credential of the victim's tenant with
	// another tenant's x-application-id: every route refuses them.
	crossed
)

// caller is one kind of client of the matrix.
type caller struct {
	name    string
	class   class
	headers ts.Headers
}

// allowed lists the routes on which a caller of the victim's tenant may
// get a success (2xx): public routes (sign-up, guest sessions), the
// tenant's catalogue, and routes that answer the caller's own data. Such a
// success must still not reveal the victim (see fixture.reveals) nor change
// their data (see fixture.snapshot). Any other route answers 4xx to the
// matrix's callers. Foreign and crossed callers are never listed (see
// their classes).
var allowed = map[string][]class{
	"POST /users":                 {anonymous, member, self}, // sign-up: a new user, never the victim
	"POST /guests":                {anonymous, member, self}, // a new guest session
	"GET /locations":              {anonymous, member, self},
	"GET /locations/{locationId}": {anonymous, member, self},
	"GET /locations/taggroups":    {anonymous, member, self},
	"GET /perks":                  {member, self},
	"GET /perks/{perkId}":         {member, self},
	"GET /pointperks/{perkId}":    {member, self},
	"GET /awards":                 {member, self}, // the caller's own awards
	"GET /credentials":            {member, self}, // the caller's own credentials
	"POST /addresses/suggestions": {member, self}, // geocoding, no stored data
	"POST /addresses/coordinates": {member, self},
	"GET /orders/{orderId}":       {self}, // the victim's own order
	// The API's public description.
	"GET /openapi.json": {anonymous, member, self},
}

// filters lists the routes whose path id only filters the caller's own
// tenant's records, so that another tenant's caller gets its own tenant's
// (empty) list for the victim's id. The answer must still reveal nothing
// of the victim's tenant. None today: GET /locations/{locationId}/actions
// was one until it read the location (another tenant's is 404 now).
var filters = map[string]bool{}

// static lists the routes whose answer is the same text for every caller
// and holds no stored data (the OpenAPI document, whose examples may use
// any name): their bodies are not searched for the victim's identifiers.
var static = map[string]bool{
	"GET /openapi.json": true,
}

// fixture is the victim's tenant: one user with data of every kind, so the
// paths of the matrix hold real ids.
type fixture struct {
	h        *ts.Harness
	ids      map[string]string // path parameter -> the victim's id
	byPath   map[string]map[string]string
	secrets  []string // strings no foreign or member answer may contain
	tenantID string
	email    string
}

// namesID reports whether a route's path names a stored item (any path
// parameter but the SSO provider's name).
func namesID(route string) bool {
	for _, m := range paramRe.FindAllStringSubmatch(route, -1) {
		if m[1] != "ssoProvider" {
			return true
		}
	}
	return false
}

// idFrom returns the "_id" (or "id") of a JSON object answer.
func idFrom(t *testing.T, r *ts.Resp) string {
	t.Helper()
	m := r.Map(t)
	id, _ := m["_id"].(string)
	if id == "" {
		id, _ = m["id"].(string)
	}
	if id == "" {
		t.Fatalf("no _id in %s", r.Body)
	}
	return id
}

func multipartCSV(t *testing.T, content string) ([]byte, string) {
	t.Helper()
	var b bytes.Buffer
	w := multipart.NewWriter(&b)
	part, err := w.CreateFormFile("file", "a.csv")
	if err != nil {
		t.Fatal(err)
	}
	_, _ = part.Write([]byte(content))
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes(), w.FormDataContentType()
}

// newFixture creates the victim and its data through the API, as the
// tenant's admin and as the victim.
func newFixture(t *testing.T, h *ts.Harness) *fixture {
	t.Helper()
	admin := h.Admin()
	uid, token, email := h.ActiveUser(t, "Vera", "Victim")
	h.Do("PUT", "/users/"+uid+"/avatar", ts.JPEG(), admin, ts.Headers{"Content-Type", "image/jpeg"}).Expect(t, 200, "")
	cred := idFrom(t, h.Do("POST", "/users/"+uid+"/credentials", map[string]any{"id": ts.UniqueMobile(), "provider": "MOBILE"}, ts.Token(token)).Expect(t, 201, ""))
	var addrs []map[string]any
	h.Do("POST", "/users/"+uid+"/addresses", map[string]any{"address": map[string]any{"line1": "1 Main St", "city": "London", "country": "GB"}, "coordinates": []float64{-0.1, 51.5}}, ts.Token(token)).Expect(t, 201, "").JSON(t, &addrs)
	if len(addrs) == 0 {
		t.Fatal("no address")
	}
	addr := addrs[0]["_id"].(string)
	loc := idFrom(t, h.Do("POST", "/locations", map[string]any{"title": "Corner Cafe", "geo": []float64{-0.13, 51.51}, "state": "ACTIVE",
		"timezone": "Europe/London", "services": map[string]any{"checkins": true}}, admin).Expect(t, 201, ""))
	tags := idFrom(t, h.Do("POST", "/locations/taggroups", map[string]any{"title": "Cuisine", "tags": []string{"pizza"}}, admin).Expect(t, 201, ""))
	points := idFrom(t, h.Do("POST", "/perks", map[string]any{"title": "Points", "template": "PSEUDO_CURRENCY"}, admin).Expect(t, 201, ""))
	stamps := idFrom(t, h.Do("POST", "/perks", map[string]any{"title": "Card", "template": "STAMP_CARD"}, admin).Expect(t, 201, ""))
	h.Do("POST", "/pointperks/"+points+"/awards", map[string]any{"userId": uid, "points": 50}, admin).Expect(t, 200, "")
	h.Do("POST", "/perks/"+stamps+"/awards", map[string]any{"userId": uid, "points": 3}, admin).Expect(t, 200, "")
	enr := idFrom(t, h.Do("POST", "/awardenrichments", map[string]any{"loyaltyProvider": "COMO", "loyaltyRewardId": "r-1"}, admin).Expect(t, 201, ""))
	seg := idFrom(t, h.Do("POST", "/segments", map[string]any{"title": "Regulars", "type": "PERSISTENT"}, admin).Expect(t, 201, ""))
	h.Do("POST", "/segments/"+seg+"/members", map[string]any{"userIds": []string{uid}}, admin).Expect(t, 200, "")
	rule := idFrom(t, h.Do("POST", "/rules", map[string]any{"title": "Points per pound", "trigger": "ORDER_COMPLETED",
		"effects": []map[string]any{{"type": "GRANT_PERK", "perkId": points, "pointsPerUnit": 1}}}, admin).Expect(t, 201, ""))
	h.Do("POST", "/users/"+uid+"/checkins", map[string]any{"locationId": loc, "type": "MANUAL", "trigger": "CODE"}, admin).Expect(t, 201, "")
	order := idFrom(t, h.Do("POST", "/users/"+uid+"/orders", map[string]any{"locationId": loc, "totalPrice": 12}, admin).Expect(t, 201, ""))
	hook := idFrom(t, h.Do("POST", "/webhooks/endpoints", map[string]any{"url": "https://hooks.example.com/victim"}, admin).Expect(t, 201, ""))
	txn := idFrom(t, h.Do("POST", "/users/"+uid+"/transactions", map[string]any{"shortCode": "V-1", "totalPrice": 12, "paymentType": "CARD_AT_POS", "orderId": order, "locationId": loc}, admin).Expect(t, 201, ""))

	nonce := ts.Headers{"x-platform-req-nonce", ts.Nonce()}
	body, ct := multipartCSV(t, "title,geo_longitude,geo_latitude\nImported,-0.1,51.5\n")
	locImport := idFrom(t, h.Do("POST", "/locations/imports", body, admin, nonce, ts.Headers{"Content-Type", ct}).Expect(t, 202, ""))
	body, ct = multipartCSV(t, "user_id,perk_id\n"+uid+","+points+"\n")
	awardImport := idFrom(t, h.Do("POST", "/awards/imports", body, admin, ts.Headers{"x-platform-req-nonce", ts.Nonce(), "Content-Type", ct}).Expect(t, 202, ""))
	locExport := idFrom(t, h.Do("POST", "/locations/exports", nil, admin, ts.Headers{"x-platform-req-nonce", ts.Nonce()}).Expect(t, 202, ""))
	actExport := idFrom(t, h.Do("POST", "/actions/exports", map[string]any{"from": "2020-01-01T00:00:00Z", "to": "2100-01-01T00:00:00Z", "types": []string{"CHECKIN_CREATED"}},
		admin, ts.Headers{"x-platform-req-nonce", ts.Nonce()}).Expect(t, 202, ""))
	liabExport := idFrom(t, h.Do("POST", "/reports/points-liability/exports", nil, admin, ts.Headers{"x-platform-req-nonce", ts.Nonce()}).Expect(t, 202, ""))
	for _, op := range []string{locImport, awardImport, locExport, actExport, liabExport} {
		if got := h.WaitOperation(op); got["status"] != "DONE" {
			t.Fatalf("operation %s = %v", op, got)
		}
	}

	f := &fixture{
		h: h, tenantID: h.Tenant.ID, email: email,
		ids: map[string]string{
			"userId": uid, "credentialId": cred, "addressId": addr, "locationId": loc, "tagGroupId": tags,
			"perkId": stamps, "awardId": uid + "-" + stamps, "enrichmentId": enr, "segmentId": seg, "ruleId": rule,
			"orderId": order, "transactionId": txn, "operationId": locExport, "ssoProvider": "google",
			"endpointId": hook,
		},
		byPath: map[string]map[string]string{
			"/pointperks/":                       {"perkId": points},
			"/users/{userId}/pointawards/":       {"awardId": uid + "-" + points},
			"/pointawards/":                      {"awardId": uid + "-" + points},
			"/locations/imports/":                {"fileId": locImport},
			"/locations/exports/":                {"fileId": locExport},
			"/awards/imports/":                   {"fileId": awardImport},
			"/actions/exports/":                  {"fileId": actExport},
			"/reports/points-liability/exports/": {"fileId": liabExport},
		},
	}
	f.secrets = []string{uid, email, addr, cred, order, txn, uid + "-" + stamps, uid + "-" + points, "Victim", hook}
	return f
}

var paramRe = regexp.MustCompile(`\{([A-Za-z]+)\}`)

// path fills the route's path parameters with the victim's ids.
func (f *fixture) path(t *testing.T, route string) string {
	return paramRe.ReplaceAllStringFunc(route, func(m string) string {
		name := m[1 : len(m)-1]
		for prefix, ids := range f.byPath {
			if strings.HasPrefix(route, prefix) {
				if v, ok := ids[name]; ok {
					return v
				}
			}
		}
		v, ok := f.ids[name]
		if !ok {
			t.Fatalf("%s: no victim id for path parameter %s: add one to the fixture", route, name)
		}
		return v
	})
}

// body returns a plausible request body for the route: what its owner or
// an admin would send, naming the victim's data.
func (f *fixture) body(t *testing.T, method, route string) (any, ts.Headers) {
	id := f.ids
	switch method + " " + route {
	case "POST /users":
		return map[string]any{"firstName": "Ivan", "lastName": "Intruder", "password": ts.Password,
			"credentials": []map[string]any{{"provider": "EMAIL", "id": ts.UniqueEmail("intruder")}}}, nil
	case "PUT /users/{userId}":
		return map[string]any{"firstName": "Hijacked"}, nil
	case "POST /users/lookup":
		return map[string]any{"userIds": []string{id["userId"]}}, nil
	case "POST /users/activate":
		return map[string]any{"id": f.email, "token": "123456"}, nil
	case "POST /users/reset":
		return map[string]any{"username": f.email, "token": "123456", "password": "hijacked-pass-1"}, nil
	case "POST /guests":
		return map[string]any{"firstName": "Gus"}, nil
	case "PUT /users/{userId}/avatar":
		return ts.JPEG(), ts.Headers{"Content-Type", "image/jpeg"}
	case "POST /users/{ssoProvider}/sso":
		return map[string]any{"idToken": "not.a.jwt"}, nil
	case "POST /addresses/suggestions":
		return map[string]any{"address": "Downing"}, nil
	case "POST /addresses/coordinates":
		return map[string]any{"line1": "10 Downing St", "city": "London", "country": "GB"}, nil
	case "POST /users/{userId}/credentials":
		return map[string]any{"id": ts.UniqueMobile(), "provider": "MOBILE", "skipVerification": true}, nil
	case "POST /users/{userId}/credentials/{credentialId}/verify":
		return map[string]any{"token": "123456"}, nil
	case "POST /users/{userId}/addresses", "PUT /users/{userId}/addresses/{addressId}":
		return map[string]any{"address": map[string]any{"line1": "2 Side St"}, "coordinates": []float64{1, 2}}, nil
	case "POST /users/{userId}/checkins":
		return map[string]any{"locationId": id["locationId"], "type": "MANUAL", "trigger": "CODE"}, nil
	case "POST /locations/imports":
		b, ct := multipartCSV(t, "title,geo_longitude,geo_latitude\nIntruder,-0.1,51.5\n")
		return b, ts.Headers{"Content-Type", ct}
	case "POST /awards/imports":
		b, ct := multipartCSV(t, "user_id,perk_id\n"+id["userId"]+","+f.byPath["/pointperks/"]["perkId"]+"\n")
		return b, ts.Headers{"Content-Type", ct}
	case "POST /locations/exports":
		return map[string]any{}, nil
	case "POST /locations", "PUT /locations/{locationId}":
		return map[string]any{"title": "Taken over", "geo": []float64{0, 0}}, nil
	case "POST /locations/taggroups", "PUT /locations/taggroups/{tagGroupId}":
		return map[string]any{"title": "Taken over"}, nil
	case "POST /perks", "PUT /perks/{perkId}", "PUT /pointperks/{perkId}":
		return map[string]any{"title": "Taken over", "template": "PSEUDO_CURRENCY"}, nil
	case "POST /pointperks/{perkId}/awards", "POST /perks/{perkId}/awards", "POST /perks/{perkId}/grant":
		return map[string]any{"userId": id["userId"], "points": 1}, nil
	case "POST /users/{userId}/awards/{awardId}/redeem", "POST /users/{userId}/pointawards/{awardId}/redeem",
		"POST /users/{userId}/awards/{awardId}/refund", "POST /users/{userId}/pointawards/{awardId}/refund":
		return map[string]any{"valueToRedeem": 1}, nil
	case "PUT /pointawards/{awardId}":
		return map[string]any{"points": 1000}, nil
	case "POST /awardenrichments", "PUT /awardenrichments/{enrichmentId}":
		return map[string]any{"loyaltyProvider": "COMO", "loyaltyRewardId": "taken-over"}, nil
	case "POST /segments", "PUT /segments/{segmentId}":
		return map[string]any{"title": "Taken over", "type": "PERSISTENT"}, nil
	case "POST /segments/{segmentId}/members":
		return map[string]any{"userIds": []string{id["userId"]}}, nil
	case "POST /rules", "PUT /rules/{ruleId}":
		return map[string]any{"title": "Taken over", "trigger": "ORDER_COMPLETED",
			"effects": []map[string]any{{"type": "GRANT_PERK", "perkId": f.byPath["/pointperks/"]["perkId"], "pointsPerUnit": 100}}}, nil
	case "POST /actions/exports":
		return map[string]any{"from": "2020-01-01T00:00:00Z", "to": "2100-01-01T00:00:00Z", "types": []string{"CHECKIN_CREATED"}}, nil
	case "POST /users/{userId}/credits":
		return map[string]any{"amount": 100}, nil
	case "PUT /tenant":
		return map[string]any{"title": "Taken over", "settings": map[string]any{"initialPoints": 1000}}, nil
	case "POST /webhooks/endpoints":
		return map[string]any{"url": "https://hooks.example.com/taken-over"}, nil
	case "PUT /webhooks/endpoints/{endpointId}":
		return map[string]any{"url": "https://hooks.example.com/taken-over", "enabled": true}, nil
	case "POST /webhooks/endpoints/{endpointId}/replay":
		return map[string]any{"from": time.Now().Add(-time.Hour).UTC().Format(time.RFC3339), "to": time.Now().UTC().Format(time.RFC3339)}, nil
	case "POST /users/{userId}/orders":
		return map[string]any{"locationId": id["locationId"], "totalPrice": 1}, nil
	case "PUT /orders/{orderId}":
		return map[string]any{"state": "COMPLETED"}, nil
	case "POST /users/{userId}/transactions", "POST /transactions":
		return map[string]any{"shortCode": "X-1", "totalPrice": 1, "paymentType": "CASH_AT_POS", "userId": id["userId"]}, nil
	}
	if method == "POST" || method == "PUT" {
		return map[string]any{}, nil
	}
	return nil, nil
}

// query adds what a route needs to reach the victim's data.
func query(method, route string) string {
	switch method + " " + route {
	case "GET /users":
		return "?name=Vic"
	case "GET /users/{userId}":
		return "?include=credentials,points,checkin"
	case "GET /transactions":
		return "?shortCode=V-1"
	case "PUT /transactions/{transactionId}":
		return "?refund=true"
	}
	return ""
}

// snapshot reads, as the tenant's admin, the victim's data and the
// tenant's catalogue (which only its admins change). The user list is left
// out: the public sign-up and guest routes add users.
func (f *fixture) snapshot(t *testing.T) map[string]string {
	t.Helper()
	uid := f.ids["userId"]
	reads := []string{
		"/users/" + uid + "?include=credentials,points,checkin",
		"/users/" + uid + "/addresses",
		"/users/" + uid + "/checkins",
		"/users/" + uid + "/awards",
		"/users/" + uid + "/pointawards",
		"/users/" + uid + "/actions",
		"/orders/" + f.ids["orderId"],
		"/transactions?shortCode=V-1",
		"/locations/" + f.ids["locationId"],
		"/locations",
		"/locations/taggroups",
		"/perks",
		"/pointperks/" + f.byPath["/pointperks/"]["perkId"],
		"/perks/" + f.ids["perkId"],
		"/awardenrichments",
		"/segments",
		"/segments/" + f.ids["segmentId"] + "/members",
		"/rules",
		"/awards",
		"/tenant",
		"/webhooks/endpoints",
		"/webhooks/endpoints/" + f.ids["endpointId"],
	}
	out := map[string]string{}
	for _, p := range reads {
		r := f.h.Do("GET", p, nil, f.h.Admin())
		out[p] = fmt.Sprintf("%d %s", r.Status, r.Body)
	}
	return out
}

// reveals returns the victim's secret a successful answer holds, if any.
func (f *fixture) reveals(body []byte, c caller) string {
	if c.class == self {
		return ""
	}
	s := string(body)
	for _, x := range f.secrets {
		if strings.Contains(s, x) {
			return x
		}
	}
	if (c.class == foreign || c.class == crossed) && strings.Contains(s, f.tenantID) {
		return f.tenantID
	}
	return ""
}

// TestAccessMatrix sends every route of template.yaml, with the victim's
// ids in its path and a plausible body, as every caller that must not reach
// the victim's data. A leak is a 2xx answer that reveals or changes the
// victim's data: any 2xx on a route the allowed table does not open to the
// caller's class, a 2xx whose body holds one of the victim's identifiers
// (or, for another tenant, the victim's tenant id), or a change to what the
// tenant's admin reads before and after. No answer may be a 5xx.
func TestAccessMatrix(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	f := newFixture(t, h)

	// Another user of the same tenant, and a guest.
	_, peerToken, _ := h.ActiveUser(t, "Pete", "Peer")
	guest := idFrom(t, h.Do("POST", "/guests", map[string]any{"firstName": "Gus"}, h.Anon()).Expect(t, 201, ""))
	// The victim's own session, for the admin routes.
	selfToken := idFrom(t, h.Do("GET", "/users/login", nil, h.Basic(f.email, ts.Password, "")).Expect(t, 200, ""))

	// Another tenant with a user and its service key; h2 serves the same
	// storage, so its tokens are valid platform-wide.
	h2 := ts.New(t)
	_, foreignToken, _ := h2.ActiveUser(t, "Fred", "Foreign")
	other := h2.Tenant.ID

	callers := []caller{
		{name: "NoCredentials", class: anonymous},
		{name: "AnonymousOfTenant", class: anonymous, headers: h.Anon()},
		{name: "GarbageToken", class: anonymous, headers: ts.Headers{"Authorization", "Token not-a-real-token", "x-application-id", f.tenantID}},
		{name: "GarbageServiceKey", class: anonymous, headers: ts.Headers{"x-service-auth-token", "not-a-real-key", "x-application-id", f.tenantID}},
		{name: "PeerUser", class: member, headers: ts.Token(peerToken)},
		{name: "Guest", class: member, headers: ts.Token(guest)},
		{name: "ForeignUser", class: foreign, headers: ts.Token(foreignToken)},
		{name: "ForeignServiceKey", class: foreign, headers: h2.Admin()},
		{name: "ServiceKeyWithForeignTenant", class: crossed, headers: ts.Headers{"x-service-auth-token", h.ServiceKey, "x-application-id", other}},
		{name: "VictimTokenWithForeignTenant", class: crossed, headers: append(ts.Token(selfToken), "x-application-id", other)},
		{name: "VictimOnAdminRoutes", class: self, headers: ts.Token(selfToken)},
	}

	type route struct{ method, path string }
	var routes []route
	byRoute := map[string]string{} // route key -> function name
	for _, fn := range h.Template.Functions {
		for _, r := range fn.Routes {
			routes = append(routes, route{r.Method, r.Path})
			byRoute[r.Key()] = fn.Name
		}
	}
	// Routes that end sessions or delete run last, so that a leak there
	// does not hide the rest of the matrix.
	rank := func(r route) int {
		switch {
		case r.path == "/users/logout" || strings.HasPrefix(r.path, "/sessions/"):
			return 2
		case r.method == "DELETE":
			return 1
		}
		return 0
	}
	known := map[string]bool{}
	for _, r := range routes {
		known[r.method+" "+r.path] = true
	}
	for k := range allowed {
		if !known[k] {
			t.Errorf("allowed names %s, which is not a route of the template", k)
		}
	}
	for k := range static {
		if !known[k] {
			t.Errorf("static names %s, which is not a route of the template", k)
		}
	}
	for k := range filters {
		if !known[k] {
			t.Errorf("filters names %s, which is not a route of the template", k)
		}
	}
	sort.SliceStable(routes, func(i, j int) bool { return rank(routes[i]) < rank(routes[j]) })
	if len(routes) == 0 {
		t.Fatal("the template has no routes")
	}

	before := f.snapshot(t)
	sent := 0
	got := calls{}
	for _, r := range routes {
		key := r.method + " " + r.path
		for _, c := range callers {
			if c.class == self && strings.Contains(r.path, "{userId}") {
				continue
			}
			t.Run(key+"/"+c.name, func(t *testing.T) {
				body, extra := f.body(t, r.method, r.path)
				hs := append(ts.Headers{"x-platform-req-nonce", ts.Nonce()}, c.headers...)
				// The refusals' DynamoDB calls, checked against the
				// functions' policies below (see TestPoliciesAllowCalls).
				rec := callcount.NewRecording()
				resp := h.DoInto(rec, r.method, f.path(t, r.path)+query(r.method, r.path), body, hs, extra)
				got.add(byRoute[key], key+" as "+c.name, rec)
				sent++
				if resp.Status < 200 || resp.Status > 299 {
					return
				}
				if !isAllowed(key, c.class) && !(c.class == foreign && (!namesID(r.path) || filters[key])) {
					t.Errorf("%s as %s: %d, want 4xx: %s", key, c.name, resp.Status, trim(resp.Body))
					return
				}
				if static[key] {
					return
				}
				if s := f.reveals(resp.Body, c); s != "" {
					t.Errorf("%s as %s: %d reveals %q: %s", key, c.name, resp.Status, s, trim(resp.Body))
				}
			})
		}
	}
	after := f.snapshot(t)
	for p, b := range before {
		if after[p] != b {
			t.Errorf("the matrix changed GET %s:\nbefore %s\nafter  %s", p, trim([]byte(b)), trim([]byte(after[p])))
		}
	}
	t.Logf("access matrix: %d routes × %d callers = %d requests", len(routes), len(callers), sent)
	check(t, h.Template, logicalTables(t, h), got, false)
}

func isAllowed(key string, c class) bool {
	for _, a := range allowed[key] {
		if a == c {
			return true
		}
	}
	return false
}

func trim(b []byte) string {
	s := string(b)
	if len(s) > 300 {
		s = s[:300] + "..."
	}
	return s
}

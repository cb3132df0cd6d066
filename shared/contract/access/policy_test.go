package access_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"sort"
	"strings"
	"testing"
	"time"

	awsevents "github.com/aws/aws-lambda-go/events"
	"github.com/loyalty-platform/platform/shared/contract/sam"
	"github.com/loyalty-platform/platform/shared/domain/audience"
	"github.com/loyalty-platform/platform/shared/domain/tenant"
	"github.com/loyalty-platform/platform/shared/platform/actor"
	"github.com/loyalty-platform/platform/shared/platform/callcount"
	"github.com/loyalty-platform/platform/shared/platform/idempotency"
	"github.com/loyalty-platform/platform/shared/platform/job"
	"github.com/loyalty-platform/platform/shared/platform/sso"
	"github.com/loyalty-platform/platform/shared/platform/sso/ssotest"
	ts "github.com/loyalty-platform/platform/shared/testkit"
)

// calls are the DynamoDB accesses the functions made: by function name,
// each access with what made it (a route, or an event of a function
// without routes).
type calls map[string]map[callcount.Access][]string

// add records the accesses c recorded, made by function fn on source.
func (cs calls) add(fn, source string, c *callcount.Counter) {
	if cs[fn] == nil {
		cs[fn] = map[callcount.Access][]string{}
	}
	for a := range c.Accesses() {
		if srcs := cs[fn][a]; len(srcs) == 0 || srcs[len(srcs)-1] != source {
			cs[fn][a] = append(srcs, source)
		}
	}
}

// run calls f with a context that records its DynamoDB accesses, and adds
// them to function fn's as made by source.
func (cs calls) run(fn, source string, f func(ctx context.Context) error) error {
	c := callcount.NewRecording()
	err := f(callcount.With(context.Background(), c))
	cs.add(fn, source, c)
	return err
}

// logicalTables maps the physical table names the functions call to the
// template's logical ids: each table variable of the template's global
// environment (TENANTS_TABLE: !Ref TenantsTable), or of the functions'
// own (WEBHOOKS_TABLE: !Ref WebhooksTable, for the webhook functions
// alone), names the table its value holds here (its logical id when
// unset). Every table of the configuration must be one of them.
func logicalTables(t *testing.T, h *ts.Harness) map[string]string {
	t.Helper()
	isTable := map[string]bool{}
	for _, tb := range h.Template.Tables {
		isTable[tb.LogicalID] = true
	}
	out := map[string]string{}
	envs := []map[string]any{h.Template.GlobalEnv}
	for _, fn := range h.Template.Functions {
		envs = append(envs, fn.Env)
	}
	for _, vars := range envs {
		for env, v := range vars {
			m, _ := v.(map[string]any)
			id, _ := m["Ref"].(string)
			if !isTable[id] {
				continue
			}
			name := os.Getenv(env)
			if name == "" {
				name = id
			}
			out[name] = id
		}
	}
	c := h.Deps.Config.Tables
	for _, name := range []string{c.Tenants, c.Users, c.Sessions, c.Locations, c.Checkins, c.Loyalty, c.Audiences, c.Pos, c.Actions, c.Operations, c.Webhooks} {
		if out[name] == "" {
			t.Fatalf("table %q of the configuration is named by no table variable of the template's environments", name)
		}
	}
	return out
}

// request is one request of a route.
type request struct {
	method  string // the route's when empty
	path    string
	body    any
	headers ts.Headers
	// replay sends the request again with the same Idempotency-Key: the
	// replay reads the key's record.
	replay bool
}

// policyFixture is what the successful requests need beyond the access
// matrix's fixture.
type policyFixture struct {
	*fixture
	idempotent  map[string]bool // route keys that take Idempotency-Key
	google      *ssotest.Issuer
	pending     string // e-mail of a user signed up, not activated
	resetUser   string // e-mail of an active user whose password is reset
	resetUserID string
	logout      string // a session of the victim, ended by logout
	mobile      string // a MOBILE credential of the victim, not verified
	mobileID    string
	location    string // a location the victim is not checked in at
	// windowed is a perk with a dateTimeRestriction the victim holds,
	// redeemed by the victim (victimToken) naming location: the loyalty
	// function reads where the victim is checked in.
	windowed    string
	victimToken string
	points      string // the PSEUDO_CURRENCY perk
	club        string // a PERSISTENT segment
	clubPerk    string // a CLUB perk of club
	// adminSession is an admin session of the tenant.
	adminSession string
}

const googleClient = "client-policy.apps.googleusercontent.com"

// TestPoliciesAllowCalls runs the platform with every DynamoDB call
// recorded as the IAM action and table it needs, and checks that the
// policy of the function that made it (template.yaml) allows it: in AWS a
// call the policy does not allow is an AccessDenied, a 500, that no other
// local test sees. It sends a successful request to every route (as the
// tenant's admin with an admin session, and with the service key for a
// GET; as the user the route serves; anonymously where a route allows it;
// a replay with the same Idempotency-Key), each as a container's first (no
// tenant or rules cached), and a request that releases its Idempotency-Key
// in every function that takes one. It runs real location and award
// imports, both exports, and a run that dies, resumes, yields and
// continues, a failure-queue record and an operator's commands in the jobs
// function; the rules
// function on the actions the requests record (on a check-in's path, and
// on an order whose request did not see a new rule); the expiry function
// on a segment whose member expired; the tenants function's direct
// invocations; and the webhook functions on the fixture's events and a
// replay.
func TestPoliciesAllowCalls(t *testing.T) {
	// Not parallel: it counts the stream-triggered and S3-triggered runs
	// of every tenant (CountFunction).
	h := ts.New(t)
	tables := logicalTables(t, h)
	got := calls{}

	// The functions that S3 and the Actions table's stream invoke.
	events := map[string]*callcount.Counter{}
	source := map[string]string{} // what invokes them
	for _, fn := range h.Template.Functions {
		if len(fn.S3Events) > 0 || len(fn.Streams) > 0 || len(fn.QueueEvents) > 0 {
			events[fn.Name] = callcount.NewRecording()
			h.CountFunction(fn.Name, events[fn.Name])
			source[fn.Name] = "its stream records"
			switch {
			case len(fn.S3Events) > 0:
				source[fn.Name] = "its S3 events"
			case len(fn.QueueEvents) > 0:
				source[fn.Name] = "its SQS messages"
			}
		}
	}

	// The tenant signs in with Google tokens of a local issuer.
	google := ssotest.NewIssuer(t)
	h.Deps.Accounts.SSO = sso.NewVerifier(sso.Config{Issuers: map[string]string{"google": google.URL()}}, h.Clock)
	h.SetSettings(tenant.Settings{SSOClientIDs: map[string][]string{"google": {googleClient}}})

	// The fixture's imports and exports run in the jobs function.
	pf := newPolicyFixture(t, h, google)
	rulesOnStream(t, h, pf)
	imports(t, h, pf)

	var routes []sam.Route
	byRoute := map[string]string{} // route key -> function name
	for _, fn := range h.Template.Functions {
		for _, r := range fn.Routes {
			routes = append(routes, r)
			byRoute[r.Key()] = fn.Name
		}
	}
	sort.SliceStable(routes, func(i, j int) bool { return policyRank(routes[i]) < policyRank(routes[j]) })
	released(t, h, pf, routes, byRoute, got)
	var started []string // the operations the requests started
	for _, r := range routes {
		key := r.Key()
		for i, req := range pf.requests(t, r.Method, r.Path) {
			sends := 1
			if req.replay {
				sends = 2
			}
			for range sends {
				// Each request as a container's first: in AWS each function
				// has its own containers, and their caches of tenants,
				// service keys and rules.
				h.Deps.TenantCache.Clear()
				c := callcount.NewRecording()
				method := r.Method
				if req.method != "" {
					method = req.method
				}
				resp := h.DoInto(c, method, req.path, req.body, req.headers)
				got.add(byRoute[key], key, c)
				if resp.Status < 200 || resp.Status > 299 {
					t.Errorf("%s (request %d): %d, want a success: %s", key, i+1, resp.Status, trim(resp.Body))
				}
				if resp.Status == 202 && bytes.Contains(resp.Body, []byte(`"namespace"`)) {
					started = append(started, idFrom(t, resp)) // an Operation (a test event is not)
				}
			}
		}
	}

	for _, id := range started {
		if op := h.WaitOperation(id); op["status"] != "DONE" {
			t.Errorf("operation %s = %v", id, op)
		}
	}
	recovery(t, h, pf, got)
	expiry(t, h, got)
	tenants(t, h, got)
	webhooks(t, h)
	h.WaitStreams()
	h.WaitQueues()
	for fn, c := range events {
		got.add(fn, source[fn], c)
	}
	check(t, h.Template, tables, got, true)
}

// policyRank orders the routes: deletions after the rest, the deeper
// paths first (a segment's member before the segment); then the routes
// that end sessions, the avatar's deletion (which ends the user's
// check-in) and the user's own deletion at the very end.
func policyRank(r sam.Route) int {
	switch {
	case r.Method == "DELETE" && r.Path == "/users/{userId}":
		return 30
	case r.Method == "DELETE" && r.Path == "/users/{userId}/avatar":
		return 29
	case strings.HasPrefix(r.Path, "/sessions/"):
		return 28
	case r.Path == "/users/logout":
		return 27
	case r.Method == "DELETE":
		return 20 - strings.Count(r.Path, "/")
	}
	return 0
}

// newPolicyFixture builds the access matrix's fixture and what the
// successful requests of the routes need beyond it.
func newPolicyFixture(t *testing.T, h *ts.Harness, google *ssotest.Issuer) *policyFixture {
	t.Helper()
	f := newFixture(t, h)
	pf := &policyFixture{fixture: f, google: google, idempotent: map[string]bool{}, points: f.byPath["/pointperks/"]["perkId"]}
	for _, rs := range h.Deps.Routes() {
		for _, r := range rs {
			if r.Idempotent {
				pf.idempotent[r.Pattern()] = true
			}
		}
	}
	pf.adminSession = idFrom(t, h.Do("POST", "/sessions", nil, h.Admin()).Expect(t, 201, ""))
	pf.pending = ts.UniqueEmail("pending")
	h.Do("POST", "/users", map[string]any{"firstName": "Pat", "lastName": "Pending", "password": ts.Password,
		"credentials": []map[string]any{{"provider": "EMAIL", "id": pf.pending}}}, h.Anon()).Expect(t, 201, "")
	pf.resetUserID, _, pf.resetUser = h.ActiveUser(t, "Rita", "Reset")
	victim := func() string {
		return idFrom(t, h.Do("GET", "/users/login", nil, h.Basic(f.email, ts.Password, "")).Expect(t, 200, ""))
	}
	pf.logout = victim()
	pf.mobile = ts.UniqueMobile()
	pf.mobileID = idFrom(t, h.Do("POST", "/users/"+f.ids["userId"]+"/credentials", map[string]any{"id": pf.mobile, "provider": "MOBILE"},
		ts.Token(victim())).Expect(t, 201, ""))
	pf.location = idFrom(t, h.Do("POST", "/locations", map[string]any{"title": "Second Cafe", "geo": []float64{-0.12, 51.52}, "state": "ACTIVE",
		"timezone": "Europe/London", "services": map[string]any{"checkins": true}}, h.Admin()).Expect(t, 201, ""))
	pf.windowed = idFrom(t, h.Do("POST", "/perks", map[string]any{"title": "Any day", "template": "PSEUDO_CURRENCY",
		"dateTimeRestriction": map[string]any{"daysOfWeek": 127}}, h.Admin()).Expect(t, 201, ""))
	h.Do("POST", "/pointperks/"+pf.windowed+"/awards", map[string]any{"userId": f.ids["userId"], "points": 100}, h.Admin()).Expect(t, 200, "")
	pf.victimToken = victim()
	return pf
}

// requests returns the requests of a route that succeed, in order.
func (pf *policyFixture) requests(t *testing.T, method, route string) []request {
	h, uid := pf.h, pf.ids["userId"]
	body, extra := pf.body(t, method, route)
	req := request{path: pf.path(t, route) + query(method, route), body: body,
		headers: append(append(ts.Headers{"x-platform-req-nonce", ts.Nonce()}, h.Admin()...), extra...)}
	switch method + " " + route {
	case "POST /users/activate":
		req.body, req.headers = map[string]any{"id": pf.pending, "token": h.LastCode(t, pf.pending)}, h.Anon()
	case "GET /users/login":
		req.headers = h.Basic(pf.email, ts.Password, "")
	case "GET /users/logout":
		// The caller's own session; then an admin ends another user's.
		own := request{path: req.path + "?userId=" + uid, headers: ts.Token(pf.logout)}
		req.path += "?userId=" + pf.resetUserID
		return []request{own, req}
	case "POST /users/reset":
		ask := request{path: req.path, body: map[string]any{"id": pf.resetUser}, headers: h.Anon()}
		// The code is read once the first request sent it.
		return []request{ask, {path: req.path, headers: h.Anon(), body: lazy(func() any {
			return map[string]any{"username": pf.resetUser, "token": h.LastCode(t, pf.resetUser), "password": "a-new-password-42"}
		})}}
	case "POST /users/{ssoProvider}/sso":
		req.body, req.headers = map[string]any{"idToken": pf.google.Token(pf.google.Claims(googleClient, "g-"+ts.Nonce())),
			"firstName": "Gina", "lastName": "Google"}, h.Anon()
	case "POST /users/{userId}/credentials/{credentialId}/verify":
		req.path = "/users/" + uid + "/credentials/" + pf.mobileID + "/verify"
		req.body = map[string]any{"verificationCode": h.LastCode(t, pf.mobile)}
	case "POST /users/{userId}/checkins":
		req.body = map[string]any{"locationId": pf.location, "type": "MANUAL", "trigger": "CODE"}
	case "POST /perks":
		// Its locationIds are checked in one batch read of the locations.
		req.body = map[string]any{"title": "Here only", "template": "PSEUDO_CURRENCY", "locationIds": []string{pf.location}}
	case "DELETE /users/{userId}/checkins":
		// Paying for an order ended the victim's check-in: a new one.
		checkIn := request{method: "POST", path: "/users/" + uid + "/checkins", headers: req.headers,
			body: map[string]any{"locationId": pf.location, "type": "MANUAL", "trigger": "CODE"}}
		return []request{checkIn, req}
	case "POST /users/{userId}/pointawards/{awardId}/redeem":
		// The user naming a location, for a perk with a window: is the
		// user checked in there (the Checkins table)?
		own := request{path: "/users/" + uid + "/pointawards/" + uid + "-" + pf.windowed + "/redeem",
			body: map[string]any{"valueToRedeem": 1, "locationId": pf.location}, headers: ts.Token(pf.victimToken)}
		return pf.keyed(t, method, route, req, own)
	case "POST /users/{userId}/awards/{awardId}/refund", "POST /users/{userId}/pointawards/{awardId}/refund":
		req.body = map[string]any{"value": 1}
	case "PUT /pointawards/{awardId}":
		req.body = map[string]any{"points": map[string]any{"available": 40}}
	case "PUT /awardenrichments/{enrichmentId}":
		req.body = map[string]any{"title": "Renamed"}
	case "PUT /tenant":
		// A change: the tenant with its TENANT_UPDATED action.
		req.body = map[string]any{"settings": map[string]any{"initialPoints": 5}}
	case "POST /users/{userId}/credits":
		points := req
		req.body = map[string]any{"type": "BALANCE", "amount": 5.5}
		points.body = map[string]any{"type": "POINTS", "amount": 20, "perkId": pf.points}
		return pf.keyed(t, method, route, req, points)
	}
	return pf.keyed(t, method, route, req)
}

// keyed gives the requests of an idempotent route an Idempotency-Key
// each, sent twice (the second a replay). The admin's requests are sent
// with an admin session (the sessions table authenticates them); a GET
// is sent with the service key too, and a route open to anonymous
// callers as one of them too (an allowance per address, counted in the
// sessions table).
func (pf *policyFixture) keyed(t *testing.T, method, route string, reqs ...request) []request {
	var out []request
	for _, req := range reqs {
		if pf.idempotent[method+" "+route] {
			req.headers = append(req.headers, "Idempotency-Key", ts.Nonce())
			req.replay = true
		}
		if !pf.byAdmin(req) || method+" "+route == "POST /sessions" { // only from the service key
			out = append(out, req)
			continue
		}
		session := req
		session.headers = append(append(ts.Headers{}, req.headers...), "x-service-auth-token", "", "Authorization", "Token "+pf.adminSession)
		out = append(out, session)
		if method == "GET" {
			out = append(out, req)
		}
		if isAllowed(method+" "+route, anonymous) {
			anon := req
			anon.body, _ = pf.body(t, method, route) // a new user or guest
			anon.headers = append(append(ts.Headers{}, req.headers...), "x-service-auth-token", "")
			out = append(out, anon)
		}
	}
	return out
}

// byAdmin reports whether req is sent with the tenant's service key.
func (pf *policyFixture) byAdmin(req request) bool {
	for i := 0; i+1 < len(req.headers); i += 2 {
		if req.headers[i] == "x-service-auth-token" && req.headers[i+1] == pf.h.ServiceKey {
			return true
		}
	}
	return false
}

// lazy is a request body made when it is sent.
type lazy func() any

func (l lazy) MarshalJSON() ([]byte, error) { return json.Marshal(l()) }

// rulesOnStream makes the rules function apply rules: a rule on
// check-ins (whose effects only the stream applies; the check-in route
// runs below), and a rule on completed orders created while the POS
// function's container had the tenant's rules cached, so that the order's
// request does not apply it and the stream does (and records its points on
// the order).
func rulesOnStream(t *testing.T, h *ts.Harness, pf *policyFixture) {
	t.Helper()
	admin := h.Admin()
	club := idFrom(t, h.Do("POST", "/segments", map[string]any{"title": "Club", "type": "PERSISTENT"}, admin).Expect(t, 201, ""))
	clubPerk := idFrom(t, h.Do("POST", "/perks", map[string]any{"title": "Club", "template": "CLUB", "segmentId": club}, admin).Expect(t, 201, ""))
	pf.club, pf.clubPerk = club, clubPerk
	passing := idFrom(t, h.Do("POST", "/segments", map[string]any{"title": "Passing", "type": "PERSISTENT"}, admin).Expect(t, 201, ""))
	h.Do("POST", "/rules", map[string]any{"title": "On check-in", "trigger": "CHECKIN_CREATED", "effects": []map[string]any{
		{"type": "ADD_TO_SEGMENT", "segmentId": club},
		{"type": "GRANT_PERK", "perkId": pf.points, "points": 5},
		{"type": "GRANT_PERK", "perkId": clubPerk, "points": 5},
		{"type": "ADD_TO_SEGMENT", "segmentId": passing},
		{"type": "REMOVE_FROM_SEGMENT", "segmentId": passing},
	}}, admin).Expect(t, 201, "")

	shopper := h.AdminUser(t, "Olga", "Orders")
	complete := func() {
		order := idFrom(t, h.Do("POST", "/users/"+shopper+"/orders", map[string]any{"totalPrice": 5}, admin).Expect(t, 201, ""))
		h.Do("PUT", "/orders/"+order, map[string]any{"state": "COMPLETED"}, admin).Expect(t, 200, "")
	}
	complete() // the tenant's rules are now cached
	other := *h.Deps.Rules
	other.Cache = tenant.NewCache()
	body, err := json.Marshal(map[string]any{"title": "Late", "trigger": "ORDER_COMPLETED",
		"effects": []map[string]any{{"type": "GRANT_PERK", "perkId": pf.points, "points": 3}, {"type": "ADD_TO_SEGMENT", "segmentId": club}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := other.Create(context.Background(), actor.Actor{TenantID: h.Tenant.ID, Service: true}, body); err != nil {
		t.Fatal(err)
	}
	complete() // applied by the stream only
}

// imports runs a location import and an award import for real (the
// routes' own requests are dry runs): a new location and an edited one;
// grants of points, of a stamp card and of a CLUB perk to its segment's
// member, each recording its AWARD_GRANTED action.
func imports(t *testing.T, h *ts.Harness, pf *policyFixture) {
	t.Helper()
	member := h.AdminUser(t, "Mia", "Member")
	h.Do("POST", "/segments/"+pf.club+"/members", map[string]any{"userIds": []string{member}}, h.Admin()).Expect(t, 200, "")
	for _, imp := range []struct{ path, csv string }{
		{"/locations/imports", "_id,title,geo_longitude,geo_latitude\n,Brand New,-0.1,51.5\n" + pf.ids["locationId"] + ",Corner Cafe Renamed,-0.13,51.51\n"},
		{"/awards/imports", "user_id,perk_id,points\n" + member + "," + pf.points + ",7\n" + member + "," + pf.ids["perkId"] + ",2\n" + member + "," + pf.clubPerk + ",1\n"},
	} {
		body, ct := multipartCSV(t, imp.csv)
		op := idFrom(t, h.Do("POST", imp.path+"?dryRun=false&suppressEvents=false", body, h.Admin(),
			ts.Headers{"x-platform-req-nonce", ts.Nonce(), "Content-Type", ct}).Expect(t, 202, ""))
		if got := h.WaitOperation(op); got["status"] != "DONE" {
			t.Fatalf("%s: %v", imp.path, got)
		}
	}
}

// released sends each route that takes an Idempotency-Key as another
// user of the tenant, whom the admin routes answer 401, and a check-in
// where the victim is checked in already (409): such an answer (like a
// 429 or a 5xx) releases the key's record rather than storing it. Every
// function with such routes must have released one.
func released(t *testing.T, h *ts.Harness, pf *policyFixture, routes []sam.Route, byRoute map[string]string, got calls) {
	t.Helper()
	_, peer, _ := h.ActiveUser(t, "Pete", "Peer")
	did := map[string]bool{}
	for _, r := range routes {
		key := r.Key()
		if !pf.idempotent[key] {
			continue
		}
		body, extra := pf.body(t, r.Method, r.Path)
		caller := ts.Token(peer)
		if key == "POST /users/{userId}/checkins" {
			caller = h.Admin()
		}
		c := callcount.NewRecording()
		resp := h.DoInto(c, r.Method, pf.path(t, r.Path)+query(r.Method, r.Path), body, caller, extra,
			ts.Headers{"x-platform-req-nonce", ts.Nonce(), "Idempotency-Key", ts.Nonce()})
		got.add(byRoute[key], key+" (released)", c)
		fn := byRoute[key]
		did[fn] = did[fn] || !idempotency.Stored(resp.Status)
	}
	for fn, ok := range did {
		if !ok {
			t.Errorf("function %s: no request released its Idempotency-Key", fn)
		}
	}
}

// errDied is the fault recovery injects in a run of the jobs function.
var errDied = errors.New("injected: the run died between its direct writes and its transaction")

// recovery runs the jobs function's recovery and continuation paths on
// location imports (with the harness's own jobs service and clock): a run
// that died between a chunk's direct writes and its transaction, then the
// run that resumes it once its lease expired; runs that yield and
// continue; a run that died whose operation the failure queue's record
// then sets FAILED; and an operator's describe, resume and fail of an
// operation a run that died left.
func recovery(t *testing.T, h *ts.Harness, pf *policyFixture, got calls) {
	t.Helper()
	c := h.CaptureS3("jobs")
	jobs := h.Deps.Jobs
	t.Cleanup(func() { jobs.AfterDirect, jobs.MaxRowsPerRun = nil, 0 })
	start := func(rows ...string) (string, awsevents.S3Event) {
		body, ct := multipartCSV(t, "title,geo_longitude,geo_latitude\n"+strings.Join(rows, ""))
		op := idFrom(t, h.Do("POST", "/locations/imports?dryRun=false", body, h.Admin(),
			ts.Headers{"x-platform-req-nonce", ts.Nonce(), "Content-Type", ct}).Expect(t, 202, ""))
		return op, c.Next(t)
	}
	die := func(ev awsevents.S3Event) {
		jobs.AfterDirect = func(context.Context) error { return errDied }
		defer func() { jobs.AfterDirect = nil }()
		if err := got.run("jobs", "a run that died", func(ctx context.Context) error { return jobs.HandleS3(ctx, ev) }); !errors.Is(err, errDied) {
			t.Fatalf("run = %v, want it to die", err)
		}
		h.Clock.Advance(job.DefaultLease + time.Second)
	}

	resumed, ev := start("Recovered,-0.1,51.5\n")
	die(ev)
	if err := got.run("jobs", "a resumed run", func(ctx context.Context) error { return jobs.HandleS3(ctx, ev) }); err != nil {
		t.Fatalf("resumed run: %v", err)
	}
	if op := h.WaitOperation(resumed); op["status"] != "DONE" {
		t.Fatalf("resumed operation = %v", op)
	}

	// A run that yields after each row; each next run continues from
	// the object the last one left.
	jobs.MaxRowsPerRun = 1
	continued, ev := start("First,-0.1,51.5\n", "Second,-0.1,51.5\n", "Third,-0.1,51.5\n")
	for runs := 1; ; runs++ {
		if err := got.run("jobs", "a continued run", func(ctx context.Context) error { return jobs.HandleS3(ctx, ev) }); err != nil {
			t.Fatalf("continued run: %v", err)
		}
		if op := h.Do("GET", "/operations/"+continued, nil, h.Admin()).Expect(t, 200, "").Map(t); op["status"] == "DONE" {
			if runs < 3 {
				t.Fatalf("done after %d runs: the runs did not yield", runs)
			}
			break
		}
		if runs > 10 {
			t.Fatal("not done after 10 runs")
		}
		ev = c.Next(t)
	}
	jobs.MaxRowsPerRun = 0

	failed, ev := start("Failed,-0.1,51.5\n")
	die(ev)
	payload, err := json.Marshal(ev)
	if err != nil {
		t.Fatal(err)
	}
	record, err := json.Marshal(map[string]any{"version": "1.0", "requestPayload": json.RawMessage(payload),
		"requestContext": map[string]any{"condition": "RetriesExhausted", "approximateInvokeCount": 3}})
	if err != nil {
		t.Fatal(err)
	}
	raw, err := json.Marshal(awsevents.SQSEvent{Records: []awsevents.SQSMessage{{MessageId: "m-1", Body: string(record), EventSource: "aws:sqs"}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := got.run("jobs", "its failure queue", func(ctx context.Context) error {
		resp, err := jobs.HandleEvent(ctx, raw)
		if err == nil && (resp == nil || len(resp.BatchItemFailures) != 0) {
			err = fmt.Errorf("batch response %+v", resp)
		}
		return err
	}); err != nil {
		t.Fatalf("failure record: %v", err)
	}
	if op := h.WaitOperation(failed); op["status"] != "FAILED" {
		t.Fatalf("operation after its failure record = %v", op)
	}

	// An operator's commands on an operation a run that died left
	// RUNNING: describe, resume (its continue object is not run here),
	// fail.
	operated, ev := start("Operated,-0.1,51.5\n")
	die(ev)
	for _, action := range []string{job.ActionDescribe, job.ActionResume, job.ActionFail} {
		if err := got.run("jobs", "an operator's "+action, func(ctx context.Context) error {
			_, err := jobs.Operate(ctx, job.OperatorRequest{Action: action, TenantID: h.Tenant.ID, OperationID: operated})
			return err
		}); err != nil {
			t.Fatalf("operator's %s: %v", action, err)
		}
	}
	c.Pending()
	if op := h.WaitOperation(operated); op["status"] != "FAILED" {
		t.Fatalf("operation after the operator's fail = %v", op)
	}
}

// expiry runs the expiry function on the harness's tenant, with a member
// of a segment whose horizon has passed, and its run over every tenant,
// cut off after the first one's title (a run never changes another test's
// tenant).
func expiry(t *testing.T, h *ts.Harness, got calls) {
	t.Helper()
	seg := idFrom(t, h.Do("POST", "/segments", map[string]any{"title": "Hourly", "type": "SCHEDULED", "expiryHorizon": "PT1H"}, h.Admin()).Expect(t, 201, ""))
	u := h.AdminUser(t, "Eve", "Expiring")
	h.Do("POST", "/segments/"+seg+"/members", map[string]any{"userIds": []string{u}}, h.Admin()).Expect(t, 200, "")
	h.Clock.Advance(49 * time.Hour)
	var rep audience.ExpiryReport
	if err := got.run("expiry", "a tenant's expiry", func(ctx context.Context) (err error) {
		rep, err = h.Deps.Audiences.ExpireTenant(ctx, h.Tenant.ID)
		return err
	}); err != nil {
		t.Fatalf("expiry: %v", err)
	}
	if rep.Removed != 1 {
		t.Errorf("expiry removed %d members, want 1", rep.Removed)
	}
	err := got.run("expiry", "the list of tenants", func(ctx context.Context) error {
		ctx, cancel := context.WithTimeout(ctx, 5*time.Second) // under the run's margin: it stops at once
		defer cancel()
		_, err := h.Deps.Audiences.Expire(ctx)
		return err
	})
	if err != nil && !errors.Is(err, audience.ErrCutOff) {
		t.Fatalf("expiry over every tenant: %v", err)
	}
}

// tenants runs the tenants function's direct invocations on a new tenant
// with an admin session (which rotating its key ends).
func tenants(t *testing.T, h *ts.Harness, got calls) {
	t.Helper()
	svc := h.Deps.Tenants
	var created tenant.Response
	if err := got.run("tenants", "create", func(ctx context.Context) (err error) {
		created, err = svc.Handle(ctx, tenant.Request{Action: "create", Title: "Policy " + t.Name()})
		return err
	}); err != nil {
		t.Fatalf("create tenant: %v", err)
	}
	id := created.Tenant.ID
	h.Do("POST", "/sessions", nil, ts.Headers{"x-service-auth-token", created.ServiceKey, "x-application-id", id}).Expect(t, 201, "")
	for _, req := range []tenant.Request{
		{Action: "rotateKey", TenantID: id},
		{Action: "updateSettings", TenantID: id, Settings: &tenant.Settings{InitialPoints: 10}},
		{Action: "get", TenantID: id},
	} {
		if err := got.run("tenants", req.Action, func(ctx context.Context) error {
			_, err := svc.Handle(ctx, req)
			return err
		}); err != nil {
			t.Fatalf("%s: %v", req.Action, err)
		}
	}
}

// check fails the test for every access recorded that the policy of the
// function that made it does not allow, and, when every function ran, for
// every function of the template that made none.
func check(t *testing.T, tpl *sam.Template, tables map[string]string, got calls, every bool) {
	t.Helper()
	for _, fn := range tpl.Functions {
		accesses := got[fn.Name]
		if len(accesses) == 0 {
			if every {
				t.Errorf("function %s: no DynamoDB call recorded", fn.Name)
			}
			continue
		}
		grants, unread := tpl.DynamoDBGrants(fn)
		for _, u := range unread {
			t.Errorf("function %s: cannot read its policy's %s", fn.Name, u)
		}
		keys := make([]callcount.Access, 0, len(accesses))
		for a := range accesses {
			keys = append(keys, a)
		}
		sort.Slice(keys, func(i, j int) bool {
			if keys[i].Table != keys[j].Table {
				return keys[i].Table < keys[j].Table
			}
			return keys[i].Action < keys[j].Action
		})
		var seen []string
		for _, a := range keys {
			name, index, _ := strings.Cut(a.Table, "/index/")
			table := tables[name]
			if table == "" {
				t.Errorf("function %s: dynamodb:%s on %q, not a table of the template (%s)", fn.Name, a.Action, a.Table, sources(accesses[a]))
				continue
			}
			where := table
			if index != "" {
				where += "/index/" + index
			}
			seen = append(seen, where+" "+a.Action)
			allowed := false
			for _, g := range grants {
				if g.Allows("dynamodb:"+a.Action, table, index) {
					allowed = true
					break
				}
			}
			if !allowed {
				t.Errorf("function %s: dynamodb:%s on %s not in its policy (%s)", fn.Name, a.Action, where, sources(accesses[a]))
			}
		}
		t.Logf("function %s: %s", fn.Name, strings.Join(seen, ", "))
	}
}

// sources names at most three of what made an access.
func sources(s []string) string {
	if len(s) > 3 {
		return strings.Join(s[:3], "; ") + fmt.Sprintf("; and %d more", len(s)-3)
	}
	return strings.Join(s, "; ")
}

// webhooks makes the webhook functions do what they do: the fan-out sends
// the fixture's actions to an endpoint that answers (a receiver on
// 127.0.0.1) and to the fixture's endpoint, whose name does not resolve
// (failed attempts: a delivery PENDING, the endpoint's failure streak);
// the sender delivers them and runs a replay.
func webhooks(t *testing.T, h *ts.Harness) {
	t.Helper()
	rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(204) }))
	t.Cleanup(rcv.Close)
	ep := idFrom(t, h.Do("POST", "/webhooks/endpoints", map[string]any{"url": rcv.URL}, h.Admin()).Expect(t, 201, ""))
	from := time.Now().Add(-time.Minute).UTC().Format(time.RFC3339)
	h.ActiveUser(t, "Web", "Hook")
	h.WaitStreams()
	h.WaitQueues()
	op := idFrom(t, h.Do("POST", "/webhooks/endpoints/"+ep+"/replay", map[string]any{"from": from, "to": time.Now().UTC().Format(time.RFC3339)}, h.Admin()).Expect(t, 202, ""))
	if got := h.WaitOperation(op); got["status"] != "DONE" {
		t.Errorf("replay %s = %v", op, got)
	}
}

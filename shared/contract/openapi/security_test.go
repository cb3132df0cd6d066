package openapi_test

import (
	"net/url"
	"regexp"

	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/loyalty-platform/platform/shared/contract/openapi"
	"github.com/loyalty-platform/platform/shared/platform/web"
	"github.com/loyalty-platform/platform/shared/testkit"
)

func TestMain(m *testing.M) { testkit.Main(m) }

// access is what a route lets each kind of caller do, as the running
// handlers answer a probe: a route that is not 401 for a caller accepts it.
type access struct {
	anonymous, user, adminSession, serviceKey bool
}

// declared is what a route's declared web.Access lets each kind of caller
// do, and false for a route that declares none.
func declared(a web.Access) (access, bool) {
	switch a {
	case web.Public, web.Anonymous:
		return access{anonymous: true, user: true, adminSession: true, serviceKey: true}, true
	case web.Authenticated, web.Self:
		return access{user: true, adminSession: true, serviceKey: true}, true
	case web.Admin:
		return access{adminSession: true, serviceKey: true}, true
	}
	return access{}, false
}

// pathParam matches a path parameter of a route pattern.
var pathParam = regexp.MustCompile(`\{[^}]+\}`)

// probeAccess sends each served route four requests (anonymous with the
// tenant header, a USER session, an ADMIN session, the service key) with
// placeholder path parameters, the required query parameters the document
// names (with a placeholder value) and an empty JSON object as body, and
// records which of them are not answered 401. Every route checks its caller
// before it reads ids or the body, so the placeholders decide nothing.
func probeAccess(t *testing.T, d *openapi.Doc) map[string]access {
	h := testkit.New(t)
	// The probes' answers (404 for a placeholder id, 422 for an empty
	// body) are not what this test checks.
	h.SkipContract = true
	_, userToken, _ := h.ActiveUser(t, "Probe", "User")
	admin := h.Do("POST", "/sessions", nil, h.Admin()).Expect(t, 201, "").Map(t)
	adminToken, _ := admin["_id"].(string)
	callers := []testkit.Headers{h.Anon(), append(testkit.Token(userToken), h.Anon()...), append(testkit.Token(adminToken), h.Anon()...), h.Admin()}

	out := map[string]access{}
	for _, routes := range servedRoutes() {
		for _, r := range routes {
			path := pathParam.ReplaceAllString(r.Path, "probe0000")
			if q := requiredQuery(d, r.Method, r.Path); q != "" {
				path += "?" + q
			}
			var body any
			if r.Method != "GET" && r.Method != "DELETE" {
				body = map[string]any{}
			}
			var ok [4]bool
			for i, hs := range callers {
				ok[i] = h.Do(r.Method, path, body, hs).Status != 401
			}
			out[r.Method+" "+r.Path] = access{anonymous: ok[0], user: ok[1], adminSession: ok[2], serviceKey: ok[3]}
		}
	}
	return out
}

// TestSecurityMatchesRoutes proves that each route answers as its
// declared web.Access says, and that each operation's `security` says who
// the route accepts (its Access; for a route that declares none, what the
// probe found): `{}` exactly where an anonymous caller is served,
// the session schemes (auth-token and bearer-auth-token) exactly where a
// session is, x-service-auth-token exactly where the service key is; an
// operation a USER session is refused but an ADMIN session served says so in
// its description. GET /users/login, the HTTP Basic login, documents `basic`
// alone.
func TestSecurityMatchesRoutes(t *testing.T) {
	t.Parallel()
	d := load(t)
	probed := probeAccess(t, d)
	for _, routes := range servedRoutes() {
		for _, r := range routes {
			key := r.Method + " " + r.Path
			want, ok := declared(r.Access)
			if !ok {
				continue
			}
			if got := probed[key]; got != want {
				t.Errorf("%s: declares Access %s, which accepts %+v, but answers %+v", key, r.Access, want, got)
			}
			probed[key] = want
		}
	}
	if len(d.Spec().Security) != 0 {
		t.Errorf("the document has a global security; each operation states its own")
	}
	keys := make([]string, 0, len(probed))
	for k := range probed {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, key := range keys {
		a := probed[key]
		method, path, _ := strings.Cut(key, " ")
		item := d.Spec().Paths.Value(path)
		if item == nil || item.GetOperation(method) == nil {
			continue // TestRoutesAgree reports it.
		}
		op := item.GetOperation(method)
		if op.Security == nil {
			t.Errorf("%s: no security of its own", key)
			continue
		}
		var got []string
		if len(*op.Security) == 0 {
			got = append(got, "{}") // `security: []` is anonymous too.
		}
		for _, req := range *op.Security {
			if len(req) > 1 {
				t.Errorf("%s: a security requirement names %d schemes at once; each alternative is one scheme", key, len(req))
			}
			names := make([]string, 0, len(req))
			for name := range req {
				names = append(names, name)
			}
			if len(names) == 0 {
				names = append(names, "{}")
			}
			got = append(got, names...)
		}
		sort.Strings(got)
		var want []string
		if key == "GET /users/login" {
			want = []string{"basic"}
		} else {
			if a.anonymous {
				want = append(want, "{}")
			}
			if a.user || a.adminSession {
				want = append(want, "auth-token", "bearer-auth-token")
			}
			if a.serviceKey {
				want = append(want, "x-service-auth-token")
			}
			sort.Strings(want)
		}
		// An operation open to anonymous callers may leave out the
		// schemes it accepts but has no use for (a token sent to the
		// password reset changes nothing).
		if a.anonymous && slices.Contains(got, "{}") && isSubset(got, want) {
			got = want
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s: security = %v, the route accepts %v (anonymous %v, user %v, admin session %v, service key %v)",
				key, got, want, a.anonymous, a.user, a.adminSession, a.serviceKey)
		}
		adminOnly := !a.anonymous && !a.user && (a.adminSession || a.serviceKey)
		if adminOnly && !strings.Contains(strings.ToLower(op.Description), "admin") {
			t.Errorf("%s: only an admin may call it, but its description does not say so", key)
		}
	}
	if len(probed) == 0 {
		t.Fatal("no route probed")
	}
}

// requiredQuery returns the required query parameters of an operation of
// the document, each with a placeholder value, as a query string.
func requiredQuery(d *openapi.Doc, method, path string) string {
	item := d.Spec().Paths.Value(path)
	if item == nil || item.GetOperation(method) == nil {
		return ""
	}
	q := url.Values{}
	for _, p := range append(slices.Clone(item.Parameters), item.GetOperation(method).Parameters...) {
		if p.Value != nil && p.Value.In == "query" && p.Value.Required {
			q.Set(p.Value.Name, "probe0000")
		}
	}
	return q.Encode()
}

// isSubset reports whether every element of a is in b.
func isSubset(a, b []string) bool {
	for _, x := range a {
		if !slices.Contains(b, x) {
			return false
		}
	}
	return true
}

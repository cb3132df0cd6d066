package budget_test

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/loyalty-platform/platform/shared/contract/budget"
	"github.com/loyalty-platform/platform/shared/platform/callcount"
	ts "github.com/loyalty-platform/platform/shared/testkit"
)

func TestMain(m *testing.M) { ts.Main(m) }

// call is the request a case measures, with the status it must answer.
type call struct {
	method, path string
	body         any
	headers      []ts.Headers
	status       int
	code         string
}

// fixture is what every case of one tenant shares: an ACTIVE location
// offering check-ins and a points perk.
type fixture struct {
	h          *ts.Harness
	loc, perk  string
	v8, v9, v4 ts.Headers
}

// shopper registers and activates a user through the API, gives them a
// profile photo and returns their id and session token.
func (f *fixture) shopper(t *testing.T, first string) (id, token, email string) {
	t.Helper()
	id, token, email = f.h.ActiveUser(t, first, "Budget")
	f.h.Do("PUT", "/users/"+id+"/avatar", ts.JPEG(), ts.Token(token), ts.Headers{"Content-Type", "image/jpeg"}).Expect(t, 200, "")
	return id, token, email
}

func signUp(email string) map[string]any {
	return map[string]any{
		"firstName": "Sam", "lastName": "Budget", "password": ts.Password,
		"credentials": []map[string]any{{"provider": "EMAIL", "id": email}},
	}
}

// scenarios set up each route of budget.Routes and return the request to
// measure. The setup makes requests of the same kind first (the same
// tenant, the same kind of credentials), as the requests before it in a
// warm container would.
var scenarios = map[string]func(t *testing.T, f *fixture) call{
	"GET /tenant (service key)": func(t *testing.T, f *fixture) call {
		f.h.Do("GET", "/tenant", nil, f.h.Admin()).Expect(t, 200, "")
		return call{method: "GET", path: "/tenant", headers: []ts.Headers{f.h.Admin()}, status: 200}
	},
	"PUT /tenant (service key)": func(t *testing.T, f *fixture) call {
		f.h.Do("GET", "/tenant", nil, f.h.Admin()).Expect(t, 200, "")
		return call{method: "PUT", path: "/tenant", body: map[string]any{"settings": map[string]any{"initialPoints": int(f.h.Clock.Now().UnixNano()%1000) + 1}},
			headers: []ts.Headers{f.h.Admin()}, status: 200}
	},
	"GET /users/{id} (user token)": func(t *testing.T, f *fixture) call {
		id, token, _ := f.shopper(t, "Tess")
		return call{method: "GET", path: "/users/" + id, headers: []ts.Headers{ts.Token(token)}, status: 200}
	},
	"GET /users/{id} (service key)": func(t *testing.T, f *fixture) call {
		id := f.h.AdminUser(t, "Kay", "Budget")
		return call{method: "GET", path: "/users/" + id, headers: []ts.Headers{f.h.Admin()}, status: 200}
	},
	"GET /users/{id} (admin session)": func(t *testing.T, f *fixture) call {
		id := f.h.AdminUser(t, "Sid", "Budget")
		s := f.h.Do("POST", "/sessions", nil, f.h.Admin()).Expect(t, 201, "").Map(t)["_id"].(string)
		return call{method: "GET", path: "/users/" + id, headers: []ts.Headers{ts.Token(s)}, status: 200}
	},
	"POST /users (sign-up)": func(t *testing.T, f *fixture) call {
		f.h.Do("POST", "/users", signUp(ts.UniqueEmail("warm")), f.h.Anon()).Expect(t, 201, "")
		return call{method: "POST", path: "/users", body: signUp(ts.UniqueEmail("sam")), headers: []ts.Headers{f.h.Anon()}, status: 201}
	},
	"POST /users (taken e-mail)": func(t *testing.T, f *fixture) call {
		email := ts.UniqueEmail("taken")
		f.h.Do("POST", "/users", signUp(email), f.h.Anon()).Expect(t, 201, "")
		return call{method: "POST", path: "/users", body: signUp(email), headers: []ts.Headers{f.h.Anon()}, status: 422, code: "CREDENTIAL_EXISTS"}
	},
	"POST /users/activate": func(t *testing.T, f *fixture) call {
		email := ts.UniqueEmail("act")
		f.h.Do("POST", "/users", signUp(email), f.h.Anon()).Expect(t, 201, "")
		return call{method: "POST", path: "/users/activate", body: map[string]any{"id": email, "token": f.h.LastCode(t, email)}, headers: []ts.Headers{f.h.Anon()}, status: 200}
	},
	"GET /users/login (Basic)": func(t *testing.T, f *fixture) call {
		_, _, email := f.h.ActiveUser(t, "Lou", "Budget")
		f.h.Do("GET", "/users/login", nil, f.h.Basic(email, ts.Password, "EMAIL")).Expect(t, 200, "")
		return call{method: "GET", path: "/users/login", headers: []ts.Headers{f.h.Basic(email, ts.Password, "EMAIL")}, status: 200}
	},
	"POST /users/{id}/checkins": func(t *testing.T, f *fixture) call {
		id, token, _ := f.shopper(t, "Cher")
		return call{method: "POST", path: "/users/" + id + "/checkins", body: map[string]any{"locationId": f.loc, "type": "MANUAL", "trigger": "CODE"}, headers: []ts.Headers{ts.Token(token)}, status: 201}
	},
	"POST /users/{id}/checkins (already checked in)": func(t *testing.T, f *fixture) call {
		id, token, _ := f.shopper(t, "Rea")
		body := map[string]any{"locationId": f.loc, "type": "MANUAL", "trigger": "CODE"}
		f.h.Do("POST", "/users/"+id+"/checkins", body, ts.Token(token)).Expect(t, 201, "")
		return call{method: "POST", path: "/users/" + id + "/checkins", body: body, headers: []ts.Headers{ts.Token(token)}, status: 409, code: "ALREADY_CHECKED_IN"}
	},
	"DELETE /users/{id}/checkins (checkout)": func(t *testing.T, f *fixture) call {
		id, token, _ := f.shopper(t, "Otto")
		f.h.Do("POST", "/users/"+id+"/checkins", map[string]any{"locationId": f.loc, "type": "MANUAL", "trigger": "CODE"}, ts.Token(token)).Expect(t, 201, "")
		return call{method: "DELETE", path: "/users/" + id + "/checkins", headers: []ts.Headers{ts.Token(token)}, status: 204}
	},
	"POST /pointperks/{id}/awards (grant)": func(t *testing.T, f *fixture) call {
		id := f.h.AdminUser(t, "Gus", "Budget")
		f.h.Do("POST", "/pointperks/"+f.perk+"/awards", map[string]any{"userId": id, "points": 5}, f.h.Admin()).Expect(t, 200, "")
		return call{method: "POST", path: "/pointperks/" + f.perk + "/awards", body: map[string]any{"userId": id, "points": 3}, headers: []ts.Headers{f.h.Admin()}, status: 200}
	},
	"POST /users/{id}/pointawards/{id}/redeem": func(t *testing.T, f *fixture) call {
		id, token, _ := f.shopper(t, "Rex")
		f.h.Do("POST", "/pointperks/"+f.perk+"/awards", map[string]any{"userId": id, "points": 10}, f.h.Admin()).Expect(t, 200, "")
		f.h.Do("GET", "/users/"+id+"/pointawards", nil, ts.Token(token)).Expect(t, 200, "")
		return call{method: "POST", path: "/users/" + id + "/pointawards/" + id + "-" + f.perk + "/redeem", body: map[string]any{"valueToRedeem": 4}, headers: []ts.Headers{ts.Token(token)}, status: 200}
	},
	"POST /users/{id}/pointawards/{id}/redeem (a user at a location, a perk with a window)": func(t *testing.T, f *fixture) call {
		id, token, _ := f.shopper(t, "Wanda")
		perkID := f.h.Do("POST", "/perks", map[string]any{"title": "Any day", "template": "PSEUDO_CURRENCY",
			"dateTimeRestriction": map[string]any{"daysOfWeek": 127}}, f.h.Admin()).Expect(t, 201, "").Map(t)["_id"].(string)
		f.h.Do("POST", "/pointperks/"+perkID+"/awards", map[string]any{"userId": id, "points": 10}, f.h.Admin()).Expect(t, 200, "")
		f.h.Do("POST", "/users/"+id+"/checkins", map[string]any{"locationId": f.loc}, ts.Token(token)).Expect(t, 201, "")
		f.h.Do("GET", "/users/"+id+"/pointawards", nil, ts.Token(token)).Expect(t, 200, "")
		return call{method: "POST", path: "/users/" + id + "/pointawards/" + id + "-" + perkID + "/redeem",
			body: map[string]any{"valueToRedeem": 4, "locationId": f.loc}, headers: []ts.Headers{ts.Token(token)}, status: 200}
	},
	"GET /awards": func(t *testing.T, f *fixture) call {
		id := f.h.AdminUser(t, "Ava", "Budget")
		f.h.Do("POST", "/pointperks/"+f.perk+"/awards", map[string]any{"userId": id, "points": 5}, f.h.Admin()).Expect(t, 200, "")
		return call{method: "GET", path: "/awards?userId=" + id, headers: []ts.Headers{f.h.Admin(), f.v8}, status: 200}
	},
	"POST /users/{id}/credits": func(t *testing.T, f *fixture) call {
		id := f.h.AdminUser(t, "Cy", "Budget")
		return call{method: "POST", path: "/users/" + id + "/credits", body: map[string]any{"type": "BALANCE", "amount": 10, "reason": "goodwill"}, headers: []ts.Headers{f.h.Admin()}, status: 200}
	},
	"POST /transactions (APP payment)": func(t *testing.T, f *fixture) call {
		id := f.h.AdminUser(t, "Pam", "Budget")
		f.h.Do("POST", "/users/"+id+"/credits", map[string]any{"type": "BALANCE", "amount": 10}, f.h.Admin()).Expect(t, 200, "")
		return call{method: "POST", path: "/transactions", body: map[string]any{"userId": id, "shortCode": "B-" + id, "totalPrice": 3.5, "paymentType": "APP"}, headers: []ts.Headers{f.h.Admin()}, status: 201}
	},
	"POST /users/{id}/orders": func(t *testing.T, f *fixture) call {
		id := f.h.AdminUser(t, "Ora", "Budget")
		return call{method: "POST", path: "/users/" + id + "/orders", body: map[string]any{"locationId": f.loc}, headers: []ts.Headers{f.h.Admin()}, status: 201}
	},
	"PUT /orders/{id} (complete)": func(t *testing.T, f *fixture) call {
		id := f.h.AdminUser(t, "Cole", "Budget")
		oid := f.h.Do("POST", "/users/"+id+"/orders", map[string]any{"locationId": f.loc, "totalPrice": 12}, f.h.Admin()).Expect(t, 201, "").Map(t)["_id"].(string)
		return call{method: "PUT", path: "/orders/" + oid, body: map[string]any{"state": "COMPLETED"}, headers: []ts.Headers{f.h.Admin()}, status: 200}
	},
	"GET /locations": func(t *testing.T, f *fixture) call {
		f.h.Do("GET", "/locations", nil, f.h.Anon()).Expect(t, 200, "")
		return call{method: "GET", path: "/locations", headers: []ts.Headers{f.h.Anon()}, status: 200}
	},
	"GET /actions": func(t *testing.T, f *fixture) call {
		f.h.Do("GET", "/actions?limit=10", nil, f.h.Admin(), f.v9).Expect(t, 200, "")
		return call{method: "GET", path: "/actions?limit=10", headers: []ts.Headers{f.h.Admin(), f.v9}, status: 200}
	},
}

func newFixture(t *testing.T) *fixture {
	h := ts.New(t)
	f := &fixture{h: h, v4: ts.Headers{"x-api-version", "4"}, v8: ts.Headers{"x-api-version", "8"}, v9: ts.Headers{"x-api-version", "9"}}
	f.loc = h.Do("POST", "/locations", map[string]any{"title": "Budget Cafe", "geo": []float64{-0.13, 51.51}, "state": "ACTIVE",
		"timezone": "Europe/London", "services": map[string]any{"checkins": true}}, h.Admin()).Expect(t, 201, "").Map(t)["_id"].(string)
	f.perk = h.Do("POST", "/perks", map[string]any{"title": "Points", "template": "PSEUDO_CURRENCY"}, h.Admin()).Expect(t, 201, "").Map(t)["_id"].(string)
	return f
}

// measure sends c and returns its storage calls; cold empties the
// container's caches first, as a cold start does.
func measure(t *testing.T, f *fixture, c call, cold bool) *callcount.Counter {
	t.Helper()
	if cold {
		f.h.Deps.TenantCache.Clear()
	}
	r, calls := f.h.DoCounted(c.method, c.path, c.body, c.headers...)
	r.Expect(t, c.status, c.code)
	return calls
}

// TestBudgets sends every route of budget.Routes twice, each time after
// its own setup: in a warm container (its caches filled by the requests
// before), where it may make budget.Route.DynamoDB calls, and in a cold
// one (the caches emptied), where it may make Cold more. It fails when a
// route exceeds its budget, and prints every count (go test -v).
func TestBudgets(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	var report strings.Builder
	for _, b := range budget.Routes {
		t.Run(b.Name, func(t *testing.T) {
			sc, ok := scenarios[b.Name]
			if !ok {
				t.Fatalf("no scenario for budget %q", b.Name)
			}
			warm := measure(t, f, sc(t, f), false)
			cold := measure(t, f, sc(t, f), true)
			w, c := warm.Service(callcount.DynamoDB), cold.Service(callcount.DynamoDB)
			fmt.Fprintf(&report, "%-48s warm %2d cold %2d (budget %2d, cold +%d)  %s\n", b.Name, w, c, b.DynamoDB, b.Cold, warm)
			if w > b.DynamoDB {
				t.Errorf("warm: %d DynamoDB calls, budget %d: %s", w, b.DynamoDB, warm)
			}
			if c > b.DynamoDB+b.Cold {
				t.Errorf("cold: %d DynamoDB calls, budget %d: %s", c, b.DynamoDB+b.Cold, cold)
			}
		})
	}
	t.Run("EveryScenarioHasABudget", func(t *testing.T) {
		for name := range scenarios {
			if _, ok := budget.Find(name); !ok {
				t.Errorf("scenario %q has no budget", name)
			}
		}
	})
	t.Logf("DynamoDB calls per request:\n%s", report.String())
}

// TestREADMETable: the README's table of storage calls lists the budgets
// of Routes, in order.
func TestREADMETable(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("../../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(b), "## Storage calls per request")
	if !ok {
		t.Fatal("README has no section \"Storage calls per request\"")
	}
	section, _, _ = strings.Cut(section, "\n## ")
	var rows [][2]string
	for _, line := range strings.Split(section, "\n") {
		cells := strings.Split(strings.Trim(line, "| "), " | ")
		if len(cells) != 3 || strings.HasPrefix(cells[0], "route") || strings.HasPrefix(cells[0], "-") {
			continue
		}
		rows = append(rows, [2]string{cells[1], cells[2]})
	}
	if len(rows) != len(budget.Routes) {
		t.Fatalf("README lists %d routes, the table %d", len(rows), len(budget.Routes))
	}
	for i, r := range budget.Routes {
		want := [2]string{fmt.Sprint(r.DynamoDB), fmt.Sprint(r.Cold)}
		if rows[i] != want {
			t.Errorf("README row %d (%s) = %v, want %v", i+1, r.Name, rows[i], want)
		}
	}
}

package award_test

import (
	"encoding/csv"
	"fmt"
	"net/url"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/loyalty-platform/platform/shared/domain/award"
	"github.com/loyalty-platform/platform/shared/platform/clock"
	ts "github.com/loyalty-platform/platform/shared/testkit"
)

// liability is GET /reports/points-liability as the admin: outstanding
// and expiring (month -> points, months with points only) by perk.
type liability struct {
	asOf        string
	outstanding map[string]int
	expiring    map[string]map[string]int
	months      []string
}

func readLiability(t *testing.T, h *ts.Harness, query string) liability {
	t.Helper()
	path := "/reports/points-liability"
	if query != "" {
		path += "?" + query
	}
	m := h.Do("GET", path, nil, h.Admin()).Expect(t, 200, "").Map(t)
	out := liability{asOf: m["asOf"].(string), outstanding: map[string]int{}, expiring: map[string]map[string]int{}}
	for _, p := range m["perks"].([]any) {
		pm := p.(map[string]any)
		id := pm["perkId"].(string)
		out.outstanding[id] = int(pm["outstanding"].(float64))
		out.expiring[id] = map[string]int{}
		var months []string
		for _, e := range pm["expiring"].([]any) {
			em := e.(map[string]any)
			months = append(months, em["month"].(string))
			if n := int(em["points"].(float64)); n != 0 {
				out.expiring[id][em["month"].(string)] = n
			}
		}
		out.months = months
	}
	return out
}

// expectedLiability sums the users' awards of perk as the award reads
// show them at asOf: available (lots expired at asOf left out) and the
// lots' remaining points by the month of their last valid day (London,
// the tenant's zone), within the report's months. The ledger answer shows
// a stored award's lots whether or not it has entries (an award stored
// before the ledger holds its points in a lot that never expires); an
// award never stored has none.
func expectedLiability(t *testing.T, h *ts.Harness, perkID string, users []string, asOf time.Time, months []string) (int, map[string]int) {
	t.Helper()
	london, _ := time.LoadLocation("Europe/London")
	at := clock.Stamp(asOf)
	outstanding, expiring := 0, map[string]int{}
	for _, uid := range users {
		page := h.Do("GET", "/users/"+uid+"/pointawards/"+uid+"-"+perkID+"/ledger", nil, h.Admin()).Expect(t, 200, "").Map(t)
		for _, l := range page["lots"].([]any) {
			lm := l.(map[string]any)
			n := int(lm["remaining"].(float64))
			exp, _ := lm["expiresAt"].(string)
			if exp != "" && exp <= at {
				continue
			}
			outstanding += n
			if exp == "" {
				continue
			}
			e, _ := time.Parse(time.RFC3339, exp)
			month := e.In(london).Add(-time.Nanosecond).Format("2006-01")
			for _, m := range months {
				if m == month {
					expiring[month] += n
				}
			}
		}
	}
	return outstanding, expiring
}

// checkLiability checks the report of perk at asOf ("" now) against the
// users' awards.
func checkLiability(t *testing.T, h *ts.Harness, perkID string, users []string, asOf string) {
	t.Helper()
	q := url.Values{"perkId": {perkID}}
	at := h.Clock.Now()
	if asOf != "" {
		q.Set("asOf", asOf)
		at, _ = time.Parse(time.RFC3339, asOf)
	}
	got := readLiability(t, h, q.Encode())
	if len(got.months) != 12 {
		t.Fatalf("months = %v, want 12", got.months)
	}
	out, exp := expectedLiability(t, h, perkID, users, at, got.months)
	if got.outstanding[perkID] != out {
		t.Errorf("outstanding = %d, want %d (the awards' sum)", got.outstanding[perkID], out)
	}
	if !reflect.DeepEqual(got.expiring[perkID], exp) {
		t.Errorf("expiring = %v, want %v", got.expiring[perkID], exp)
	}
}

// TestLiabilityEqualsAwards checks after grants (some dated in the past,
// so lots expire in several months), redemptions, refunds, an admin's
// setting and the expiry run that the report equals the sum of the
// awards, now and at a later asOf.
func TestLiabilityEqualsAwards(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	perk := expiringPerk(t, h, map[string]any{"policy": "AFTER_EARN", "duration": "P12M"})
	plain := newPerk(t, h, map[string]any{"template": "PSEUDO_CURRENCY"})
	var users []string
	for i := range 3 {
		users = append(users, h.AdminUser(t, "Li", fmt.Sprintf("Ab%d", i)))
	}
	now := h.Clock.Now()
	later := now.Add(200 * day).UTC().Format(time.RFC3339)
	steps := []struct {
		name string
		do   func(t *testing.T)
	}{
		{"Grants", func(t *testing.T) {
			for i, uid := range users {
				grantAt(t, h, perk, uid, 100+i, "")
				grantAt(t, h, perk, uid, 50, now.AddDate(0, -11, 0).Format(time.RFC3339))
				grantAt(t, h, perk, uid, 30, now.AddDate(0, -6, -i*7).Format(time.RFC3339))
				grantAt(t, h, plain, uid, 70, "")
			}
		}},
		{"Redeems", func(t *testing.T) {
			for _, uid := range users {
				h.Do("POST", "/users/"+uid+"/pointawards/"+uid+"-"+perk+"/redeem", map[string]any{"valueToRedeem": 60}, h.Admin()).Expect(t, 200, "")
				h.Do("POST", "/users/"+uid+"/pointawards/"+uid+"-"+plain+"/redeem", map[string]any{"valueToRedeem": 5}, h.Admin()).Expect(t, 200, "")
			}
		}},
		{"Refunds", func(t *testing.T) {
			h.Do("POST", "/users/"+users[0]+"/pointawards/"+users[0]+"-"+perk+"/refund", map[string]any{"value": 25}, h.Admin()).Expect(t, 200, "")
			h.Do("POST", "/users/"+users[1]+"/pointawards/"+users[1]+"-"+plain+"/refund", map[string]any{"value": 5}, h.Admin()).Expect(t, 200, "")
		}},
		{"AdminSettings", func(t *testing.T) {
			h.Do("PUT", "/pointawards/"+users[2]+"-"+perk, map[string]any{"points": map[string]any{"available": 40}}, h.Admin()).Expect(t, 200, "")
			h.Do("PUT", "/pointawards/"+users[1]+"-"+perk, map[string]any{"points": map[string]any{"available": 400}}, h.Admin()).Expect(t, 200, "")
		}},
		{"ExpiredNotWrittenOff", func(t *testing.T) { h.Clock.Advance(40 * day) }},
		{"ExpiryRun", func(t *testing.T) { runExpiry(t, h) }},
		{"GrantAfterExpiry", func(t *testing.T) { grantAt(t, h, perk, users[0], 9, "") }},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			st.do(t)
			checkLiability(t, h, perk, users, "")
			checkLiability(t, h, perk, users, later)
			checkLiability(t, h, plain, users, "")
		})
	}
	t.Run("EveryPerk", func(t *testing.T) {
		all := readLiability(t, h, "")
		one := readLiability(t, h, "perkId="+perk)
		if all.outstanding[perk] != one.outstanding[perk] || all.outstanding[plain] == 0 {
			t.Errorf("every perk = %v, one perk = %v", all.outstanding, one.outstanding)
		}
	})
}

// TestLiabilityExpiredLots checks that lots expired at asOf are not
// outstanding, before the expiry run wrote them off and after.
func TestLiabilityExpiredLots(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	perk := expiringPerk(t, h, map[string]any{"policy": "AFTER_EARN", "duration": "P12M"})
	uid := h.AdminUser(t, "Ex", "Lots")
	grantAt(t, h, perk, uid, 100, "")
	a := grantAt(t, h, perk, uid, 40, h.Clock.Now().AddDate(0, -12, 2).Format(time.RFC3339))
	exp := pts(a)["expiring"].([]any)[0].(map[string]any)
	expiresAt, _ := time.Parse(time.RFC3339, exp["expiresAt"].(string))
	if got := readLiability(t, h, "perkId="+perk).outstanding[perk]; got != 140 {
		t.Fatalf("outstanding = %d, want 140", got)
	}
	at := expiresAt.Format(time.RFC3339)
	if got := readLiability(t, h, "perkId="+perk+"&asOf="+url.QueryEscape(at)).outstanding[perk]; got != 100 {
		t.Errorf("outstanding at the lot's expiry = %d, want 100", got)
	}
	h.Clock.Advance(expiresAt.Sub(h.Clock.Now()) + time.Minute)
	if got := readLiability(t, h, "perkId="+perk).outstanding[perk]; got != 100 {
		t.Errorf("after the expiry, before the run: outstanding = %d, want 100", got)
	}
	runExpiry(t, h)
	if got := readLiability(t, h, "perkId="+perk).outstanding[perk]; got != 100 {
		t.Errorf("after the run: outstanding = %d, want 100", got)
	}
}

// TestLiabilityConcurrentGrants grants one perk from 8 writers at once and
// checks the report is exact.
func TestLiabilityConcurrentGrants(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	perk := expiringPerk(t, h, map[string]any{"policy": "AFTER_EARN", "duration": "P12M"})
	const writers, each = 8, 6
	users := make([]string, writers)
	for i := range users {
		users[i] = h.AdminUser(t, "Con", fmt.Sprintf("Current%d", i))
	}
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				body := map[string]any{"userId": users[(w+i)%writers], "points": 1 + i}
				if r := h.Do("POST", "/pointperks/"+perk+"/awards", body, h.Admin()); r.Status != 200 && r.Status != 409 {
					t.Errorf("grant: %d %s", r.Status, r.Body)
				}
			}
		}()
	}
	wg.Wait()
	checkLiability(t, h, perk, users, "")
}

// TestLiabilityRequests checks who may read the report and what it
// accepts.
func TestLiabilityRequests(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	perk := newPerk(t, h, map[string]any{"template": "PSEUDO_CURRENCY"})
	_, token, _ := h.ActiveUser(t, "Us", "Er")
	other, key := h.NewTenant(h.Tenant.Settings)
	foreign := h.Do("POST", "/perks", map[string]any{"title": "Other", "template": "PSEUDO_CURRENCY"},
		ts.Headers{"x-application-id", other.ID, "x-service-auth-token", key}).Expect(t, 201, "").Map(t)["_id"].(string)
	now := h.Clock.Now().UTC().Truncate(time.Second)
	tests := []struct {
		name   string
		query  string
		caller ts.Headers
		status int
		code   string
	}{
		{"Admin", "", h.Admin(), 200, ""},
		{"OnePerk", "perkId=" + perk, h.Admin(), 200, ""},
		// The clock runs on while the test runs, so "now" itself is
		// checked by TestParseAsOf; a minute ahead is as good here.
		{"AsOfSoon", "asOf=" + url.QueryEscape(now.Add(time.Minute).Format(time.RFC3339)), h.Admin(), 200, ""},
		{"AsOfLater", "asOf=" + url.QueryEscape(now.AddDate(1, 0, 0).Format(time.RFC3339)), h.Admin(), 200, ""},
		{"AsOfPast", "asOf=" + url.QueryEscape(now.Add(-time.Second).Format(time.RFC3339)), h.Admin(), 422, "VALIDATION_FAILED"},
		{"AsOfNotADate", "asOf=tomorrow", h.Admin(), 422, "VALIDATION_FAILED"},
		{"UnknownParameter", "from=2027-01-01", h.Admin(), 422, "VALIDATION_FAILED"},
		{"UnknownPerk", "perkId=5f1c0a9b2d3e4f5a6b7c8d9e", h.Admin(), 404, "NOT_FOUND"},
		{"ForeignPerk", "perkId=" + foreign, h.Admin(), 404, "NOT_FOUND"},
		{"MalformedPerk", "perkId=" + url.QueryEscape("a b"), h.Admin(), 404, "NOT_FOUND"},
		{"User", "", ts.Token(token), 401, "UNAUTHORIZED"},
		{"Anonymous", "", h.Anon(), 401, "UNAUTHORIZED"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h.Do("GET", "/reports/points-liability?"+tc.query, nil, tc.caller).Expect(t, tc.status, tc.code)
		})
	}
}

// TestLiabilityExport exports the report to CSV through the job pipeline
// and checks the file against GET /reports/points-liability.
func TestLiabilityExport(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	perk := expiringPerk(t, h, map[string]any{"policy": "AFTER_EARN", "duration": "P12M"})
	uid := h.AdminUser(t, "Ex", "Port")
	grantAt(t, h, perk, uid, 100, "")
	grantAt(t, h, perk, uid, 40, h.Clock.Now().AddDate(0, -10, 0).Format(time.RFC3339))
	asOf := h.Clock.Now().Add(time.Hour).UTC().Truncate(time.Second).Format(time.RFC3339)
	nonce := ts.Nonce()
	start := func(body map[string]any, caller ts.Headers, n string) *ts.Resp {
		return h.Do("POST", "/reports/points-liability/exports", body, caller, ts.Headers{"x-platform-req-nonce", n})
	}
	op := start(map[string]any{"asOf": asOf, "perkId": perk}, h.Admin(), nonce).Expect(t, 202, "").Map(t)
	again := start(map[string]any{"asOf": asOf, "perkId": perk}, h.Admin(), nonce).Expect(t, 202, "").Map(t)
	if again["_id"] != op["_id"] {
		t.Errorf("a repeated nonce started operation %v, want %v", again["_id"], op["_id"])
	}
	done := h.WaitOperation(op["_id"].(string))
	if done["status"] != "DONE" {
		t.Fatalf("operation = %v", done)
	}
	href := done["result"].(map[string]any)["href"].(string)
	if want := "/reports/points-liability/exports/" + op["_id"].(string); href != want {
		t.Errorf("href = %s, want %s", href, want)
	}
	rows, err := csv.NewReader(strings.NewReader(string(h.Do("GET", href, nil, h.Admin()).Expect(t, 200, "").Body))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	rep := h.Do("GET", "/reports/points-liability?perkId="+perk+"&asOf="+url.QueryEscape(asOf), nil, h.Admin()).Expect(t, 200, "").Map(t)
	p := rep["perks"].([]any)[0].(map[string]any)
	header := []string{"asOf", "perkId", "title", "outstanding"}
	line := []string{asOf, perk, p["title"].(string), fmt.Sprint(p["outstanding"])}
	for _, e := range p["expiring"].([]any) {
		header = append(header, e.(map[string]any)["month"].(string))
		line = append(line, fmt.Sprint(e.(map[string]any)["points"]))
	}
	if want := [][]string{header, line}; !reflect.DeepEqual(rows, want) {
		t.Errorf("file = %v, want %v", rows, want)
	}
	_, token, _ := h.ActiveUser(t, "Us", "Er")
	tests := []struct {
		name   string
		body   map[string]any
		caller ts.Headers
		status int
		code   string
	}{
		{"EveryPerk", map[string]any{}, h.Admin(), 202, ""},
		{"AsOfPast", map[string]any{"asOf": "2020-01-01T00:00:00Z"}, h.Admin(), 422, "VALIDATION_FAILED"},
		{"UnknownField", map[string]any{"from": "x"}, h.Admin(), 422, "VALIDATION_FAILED"},
		{"UnknownPerk", map[string]any{"perkId": "5f1c0a9b2d3e4f5a6b7c8d9e"}, h.Admin(), 404, "NOT_FOUND"},
		{"User", map[string]any{}, ts.Token(token), 401, "UNAUTHORIZED"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			start(tc.body, tc.caller, ts.Nonce()).Expect(t, tc.status, tc.code)
		})
	}
	t.Run("UserFile", func(t *testing.T) {
		h.Do("GET", href, nil, ts.Token(token)).Expect(t, 401, "UNAUTHORIZED")
	})
}

// TestParseAsOf checks the report's asOf against a fixed now: now itself
// (to the second) and later are accepted, the second before is not.
func TestParseAsOf(t *testing.T) {
	now := time.Date(2027, 3, 1, 12, 0, 0, 500_000_000, time.UTC)
	tests := []struct {
		name, asOf string
		want       time.Time
		err        bool
	}{
		{"Empty", "", now.Truncate(time.Second), false},
		{"Now", "2027-03-01T12:00:00Z", now.Truncate(time.Second), false},
		{"NowWithFraction", "2027-03-01T12:00:00.1Z", now.Truncate(time.Second), false},
		{"OtherZone", "2027-03-01T13:00:00+01:00", now.Truncate(time.Second), false},
		{"Later", "2028-01-01T00:00:00Z", time.Date(2028, 1, 1, 0, 0, 0, 0, time.UTC), false},
		{"SecondBefore", "2027-03-01T11:59:59Z", time.Time{}, true},
		{"NotADate", "tomorrow", time.Time{}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := award.ParseAsOf(tc.asOf, now)
			if (err != nil) != tc.err {
				t.Fatalf("ParseAsOf(%q) error = %v, want error %v", tc.asOf, err, tc.err)
			}
			if !got.Equal(tc.want) {
				t.Errorf("ParseAsOf(%q) = %v, want %v", tc.asOf, got, tc.want)
			}
		})
	}
}

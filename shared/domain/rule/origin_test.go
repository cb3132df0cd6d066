package rule_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/loyalty-platform/platform/shared/domain/rule"
	"github.com/loyalty-platform/platform/shared/domain/tenant"
	ts "github.com/loyalty-platform/platform/shared/testkit"
)

// grants is n GRANT_PERK effects of 1 point of perk.
func grants(perk string, n int) []map[string]any {
	out := make([]map[string]any, n)
	for i := range out {
		out[i] = grant(perk, 1)
	}
	return out
}

// grantedByPerk counts a user's AWARD_GRANTED actions by perk id, read
// through GET /users/{userId}/actions.
func grantedByPerk(t *testing.T, h *ts.Harness, uid string) map[string]int {
	t.Helper()
	out := map[string]int{}
	for _, a := range listActions(t, h, uid, "AWARD_GRANTED") {
		out[a["metadata"].(map[string]any)["perkId"].(string)]++
	}
	return out
}

// TestOncePerOrigin: each rule applies at most once in the chain of one
// originating action, on the request's path (a grant) and on the
// stream's (a check-in), however the chain reaches it again; the actions
// of the chain name their origin.
func TestOncePerOrigin(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	loc := shop(t, h, h.Admin(), "Origin")

	// Two rules on AWARD_GRANTED of 10 grants each turned one grant into
	// 2,220 grants (each rule's grants triggering the other, 3 deep): now
	// one grant makes at most 20 more.
	t.Run("TwoRulesOfTenGrants", func(t *testing.T) {
		uid := shopper(t, h, h.Admin(), "Twenty")
		p0, p1, p2 := newPerk(t, h, h.Admin(), nil), newPerk(t, h, h.Admin(), nil), newPerk(t, h, h.Admin(), nil)
		mine := cond("context.user._id", "EQ", uid)
		newRule(t, h, ruleBody("AWARD_GRANTED", grants(p1, 10), mine))
		newRule(t, h, ruleBody("AWARD_GRANTED", grants(p2, 10), mine))
		start := time.Now()
		h.Do("POST", "/pointperks/"+p0+"/awards", map[string]any{"userId": uid, "points": 1}, h.Admin()).Expect(t, 200, "")
		took := time.Since(start)
		h.WaitStreams()
		if got, want := grantedByPerk(t, h, uid), map[string]int{p0: 1, p1: 10, p2: 10}; fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("AWARD_GRANTED by perk = %v, want %v", got, want)
		}
		if got, want := points(t, h, h.Admin(), uid), map[string]int{p0: 1, p1: 10, p2: 10}; fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("points = %v, want %v", got, want)
		}
		if n := len(listActions(t, h, uid, rule.ActionBudgetExceeded)); n != 0 {
			t.Errorf("RULES_BUDGET_EXCEEDED = %d within the budget", n)
		}
		t.Logf("the grant answered in %v", took)
	})

	// A -> B -> A: A grants PA on the grant of P0 or PB, B grants PB on
	// the grant of PA; the second A (at depth 2, within MaxDepth) is the
	// same rule in the same chain and does not apply.
	t.Run("ABA", func(t *testing.T) {
		uid := shopper(t, h, h.Admin(), "Aba")
		p0, pa, pb := newPerk(t, h, h.Admin(), nil), newPerk(t, h, h.Admin(), nil), newPerk(t, h, h.Admin(), nil)
		mine := cond("context.user._id", "EQ", uid)
		a := newRule(t, h, ruleBody("AWARD_GRANTED", []map[string]any{grant(pa, 1)}, mine, cond("metadata.perkId", "IN", []string{p0, pb})))
		b := newRule(t, h, ruleBody("AWARD_GRANTED", []map[string]any{grant(pb, 1)}, mine, cond("metadata.perkId", "EQ", pa)))
		h.Do("POST", "/pointperks/"+p0+"/awards", map[string]any{"userId": uid, "points": 1}, h.Admin()).Expect(t, 200, "")
		h.WaitStreams()
		if got, want := grantedByPerk(t, h, uid), map[string]int{p0: 1, pa: 1, pb: 1}; fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("AWARD_GRANTED by perk = %v, want %v", got, want)
		}
		var origin string
		for _, g := range listActions(t, h, uid, "AWARD_GRANTED") {
			m := g["metadata"].(map[string]any)
			switch m["perkId"] {
			case p0:
				origin = g["_id"].(string)
			case pa:
				if m["ruleId"] != a {
					t.Errorf("PA granted by %v, want rule A", m["ruleId"])
				}
			case pb:
				if m["ruleId"] != b {
					t.Errorf("PB granted by %v, want rule B", m["ruleId"])
				}
			}
		}
		for _, g := range listActions(t, h, uid, "AWARD_GRANTED") {
			m := g["metadata"].(map[string]any)
			if m["perkId"] != p0 && (m["originActionId"] != origin || m["originActionType"] != "AWARD_GRANTED") {
				t.Errorf("a rule's grant names origin %v %v, want %s AWARD_GRANTED", m["originActionId"], m["originActionType"], origin)
			}
		}
	})

	// The same on the stream's path: a check-in's rule grants 10 of P1,
	// and a rule on the grants of P1 grants 10 of P2 once, not 10 times;
	// delivering each action of the chain again changes nothing.
	t.Run("Stream", func(t *testing.T) {
		uid := shopper(t, h, h.Admin(), "Streamer")
		p1, p2 := newPerk(t, h, h.Admin(), nil), newPerk(t, h, h.Admin(), nil)
		mine := cond("context.user._id", "EQ", uid)
		newRule(t, h, ruleBody("CHECKIN_CREATED", grants(p1, 10), mine))
		newRule(t, h, ruleBody("AWARD_GRANTED", grants(p2, 10), mine, cond("metadata.perkId", "EQ", p1)))
		in := checkIn(t, h, h.Admin(), h.Tenant.ID, uid, loc)
		h.WaitStreams()
		want := map[string]int{p1: 10, p2: 10}
		if got := grantedByPerk(t, h, uid); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("AWARD_GRANTED by perk = %v, want %v", got, want)
		}
		for _, g := range listActions(t, h, uid, "AWARD_GRANTED") {
			if m := g["metadata"].(map[string]any); m["originActionId"] != in.ID || m["originActionType"] != "CHECKIN_CREATED" {
				t.Errorf("a rule's grant names origin %v %v, want %s CHECKIN_CREATED", m["originActionId"], m["originActionType"], in.ID)
			}
			deliver(t, h, streamEvent(t, h, h.Tenant.ID, g["_id"].(string)), 2)
		}
		deliver(t, h, streamEvent(t, h, h.Tenant.ID, in.ID), 4)
		if got := grantedByPerk(t, h, uid); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("after the deliveries again: AWARD_GRANTED by perk = %v, want %v", got, want)
		}
	})
}

// exceeded checks a user's one RULES_BUDGET_EXCEEDED action.
func exceeded(t *testing.T, h *ts.Harness, uid, originID, originType string, budget, applied, skipped int, rules []string) {
	t.Helper()
	got := listActions(t, h, uid, rule.ActionBudgetExceeded)
	if len(got) != 1 {
		t.Fatalf("RULES_BUDGET_EXCEEDED = %d, want 1", len(got))
	}
	m := got[0]["metadata"].(map[string]any)
	var ids []string
	for _, id := range m["ruleIdsSkipped"].([]any) {
		ids = append(ids, id.(string))
	}
	slices.Sort(ids)
	rules = slices.Sorted(slices.Values(rules))
	if m["originActionId"] != originID || m["originActionType"] != originType || m["budget"] != float64(budget) ||
		m["effectsApplied"] != float64(applied) || m["effectsSkipped"] != float64(skipped) || !slices.Equal(ids, rules) {
		t.Errorf("RULES_BUDGET_EXCEEDED metadata = %v; want origin %s %s, budget %d, applied %d, skipped %d, rules %v",
			m, originID, originType, budget, applied, skipped, rules)
	}
}

// TestRulesBudget: the effects of one originating action's chain stop at
// the tenant's rulesBudget, 100 by default; the rest are skipped and one
// RULES_BUDGET_EXCEEDED tells what.
func TestRulesBudget(t *testing.T) {
	t.Parallel()
	h := ts.New(t)

	t.Run("Default", func(t *testing.T) {
		uid := shopper(t, h, h.Admin(), "Hundred")
		p0, p := newPerk(t, h, h.Admin(), nil), newPerk(t, h, h.Admin(), nil)
		var ids []string
		for range 11 {
			ids = append(ids, newRule(t, h, ruleBody("AWARD_GRANTED", grants(p, 10), cond("context.user._id", "EQ", uid), cond("metadata.perkId", "EQ", p0))))
		}
		h.Do("POST", "/pointperks/"+p0+"/awards", map[string]any{"userId": uid, "points": 1}, h.Admin()).Expect(t, 200, "")
		h.WaitStreams()
		if got := grantedByPerk(t, h, uid)[p]; got != 100 {
			t.Errorf("grants by the rules = %d, want 100", got)
		}
		var origin string
		for _, g := range listActions(t, h, uid, "AWARD_GRANTED") {
			if g["metadata"].(map[string]any)["perkId"] == p0 {
				origin = g["_id"].(string)
			}
		}
		// Which rule was skipped depends on which path got where first:
		// one rule's 10 effects in all.
		got := listActions(t, h, uid, rule.ActionBudgetExceeded)
		if len(got) != 1 {
			t.Fatalf("RULES_BUDGET_EXCEEDED = %d, want 1", len(got))
		}
		skipped := got[0]["metadata"].(map[string]any)["ruleIdsSkipped"].([]any)
		if len(skipped) != 1 || !slices.Contains(ids, skipped[0].(string)) {
			t.Fatalf("ruleIdsSkipped = %v, want one of %v", skipped, ids)
		}
		exceeded(t, h, uid, origin, "AWARD_GRANTED", 100, 100, 10, []string{skipped[0].(string)})
	})

}

// TestRulesBudgetSetting: a tenant's rulesBudget bounds the effects of a
// chain, on the request's path and on the stream's. (The tenant is made
// with the setting: a change applies within the tenant cache's 30
// seconds in the other functions, the rules function among them.)
func TestRulesBudgetSetting(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	h.Tenant, h.ServiceKey = h.NewTenant(tenant.Settings{RulesBudget: ptr(5)})
	loc := shop(t, h, h.Admin(), "Budget")

	t.Run("Request", func(t *testing.T) {
		uid := shopper(t, h, h.Admin(), "Five")
		p0, p := newPerk(t, h, h.Admin(), nil), newPerk(t, h, h.Admin(), nil)
		id := newRule(t, h, ruleBody("AWARD_GRANTED", grants(p, 10), cond("context.user._id", "EQ", uid), cond("metadata.perkId", "EQ", p0)))
		h.Do("POST", "/pointperks/"+p0+"/awards", map[string]any{"userId": uid, "points": 1}, h.Admin()).Expect(t, 200, "")
		h.WaitStreams()
		if got, want := points(t, h, h.Admin(), uid), map[string]int{p0: 1, p: 5}; fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("points = %v, want %v", got, want)
		}
		origin := listActions(t, h, uid, "AWARD_GRANTED")
		exceeded(t, h, uid, origin[len(origin)-1]["_id"].(string), "AWARD_GRANTED", 5, 5, 5, []string{id})
	})

	t.Run("Stream", func(t *testing.T) {
		uid := shopper(t, h, h.Admin(), "Stream")
		p1, p2 := newPerk(t, h, h.Admin(), nil), newPerk(t, h, h.Admin(), nil)
		mine := cond("context.user._id", "EQ", uid)
		newRule(t, h, ruleBody("CHECKIN_CREATED", grants(p1, 3), mine))
		r2 := newRule(t, h, ruleBody("AWARD_GRANTED", grants(p2, 10), mine, cond("metadata.perkId", "EQ", p1)))
		in := checkIn(t, h, h.Admin(), h.Tenant.ID, uid, loc)
		h.WaitStreams()
		want := map[string]int{p1: 3, p2: 2}
		if got := grantedByPerk(t, h, uid); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("AWARD_GRANTED by perk = %v, want %v", got, want)
		}
		for _, g := range listActions(t, h, uid, "AWARD_GRANTED") {
			deliver(t, h, streamEvent(t, h, h.Tenant.ID, g["_id"].(string)), 3)
		}
		deliver(t, h, streamEvent(t, h, h.Tenant.ID, in.ID), 4)
		if got := grantedByPerk(t, h, uid); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("after the deliveries again: AWARD_GRANTED by perk = %v, want %v", got, want)
		}
		exceeded(t, h, uid, in.ID, "CHECKIN_CREATED", 5, 5, 8, []string{r2})
	})
}

func ptr[T any](v T) *T { return &v }

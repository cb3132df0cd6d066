package rule_test

import (
	"fmt"
	"net/url"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/loyalty-platform/platform/shared/platform/clock"
	ts "github.com/loyalty-platform/platform/shared/testkit"
)

func TestRuleCRUD(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	perk := newPerk(t, h, h.Admin(), nil)
	other := newPerk(t, h, h.Admin(), nil)
	seg := newSegment(t, h)

	// The read-only fields are ignored on create; the title is trimmed and
	// the condition values are stored compacted.
	created := h.Do("POST", "/rules", `{
		"title": "  Lunch points  ", "trigger": "ORDER_COMPLETED",
		"conditions": [{"path": "metadata.value", "operator": "GTE", "value": 10},
			{"path": "when.daypart", "operator": "IN", "value": [ "morning" , "afternoon" ]}],
		"effects": [{"type": "GRANT_PERK", "perkId": "`+perk+`", "pointsPerUnit": 1}],
		"_id": "mine", "tenantId": "someone-else", "created": "2000-01-01T00:00:00.000Z", "updatedAt": "2000-01-01T00:00:00.000Z"
	}`, h.Admin()).Expect(t, 201, "")
	if !strings.Contains(string(created.Body), `"value":["morning","afternoon"]`) {
		t.Errorf("condition value not compacted: %s", created.Body)
	}
	r := created.Map(t)
	id, _ := r["_id"].(string)
	if len(id) != 24 || id == "mine" {
		t.Errorf("_id = %q, want a new 24-character id", id)
	}
	if r["tenantId"] != h.Tenant.ID || r["title"] != "Lunch points" || r["trigger"] != "ORDER_COMPLETED" || r["enabled"] != true {
		t.Errorf("created = %v", r)
	}
	c, err := time.Parse(clock.Format, fmt.Sprint(r["created"]))
	if err != nil || time.Since(c).Abs() > time.Minute || r["updatedAt"] != r["created"] {
		t.Errorf("created %v, updatedAt %v: want now, both the same", r["created"], r["updatedAt"])
	}
	if got := h.Do("GET", "/rules/"+id, nil, h.Admin()).Expect(t, 200, "").Map(t); !reflect.DeepEqual(got, r) {
		t.Errorf("GET = %v\nwant  %v", got, r)
	}

	t.Run("DisabledWithoutConditions", func(t *testing.T) {
		r := h.Do("POST", "/rules", map[string]any{"title": "Off", "trigger": "CHECKIN_CREATED", "enabled": false,
			"effects": []map[string]any{{"type": "ADD_TO_SEGMENT", "segmentId": seg}}}, h.Admin()).Expect(t, 201, "").Map(t)
		if r["enabled"] != false || fmt.Sprint(r["conditions"]) != "[]" {
			t.Errorf("created = %v, want disabled with conditions []", r)
		}
		h.Do("DELETE", "/rules/"+r["_id"].(string), nil, h.Admin()).Expect(t, 204, "")
	})

	t.Run("Update", func(t *testing.T) {
		h.Clock.Advance(time.Minute)
		cur := h.Do("GET", "/rules/"+id, nil, h.Admin()).Expect(t, 200, "").Map(t)
		steps := []struct {
			name   string
			body   map[string]any
			change func(m map[string]any)
		}{
			{"Title", map[string]any{"title": " Renamed "}, func(m map[string]any) { m["title"] = "Renamed" }},
			{"Trigger", map[string]any{"trigger": "TRANSACTION_CREATED"}, func(m map[string]any) { m["trigger"] = "TRANSACTION_CREATED" }},
			{"ConditionsAsAWhole", map[string]any{"conditions": []any{cond("metadata.paymentType", "EQ", "CARD")}}, func(m map[string]any) {
				m["conditions"] = []any{map[string]any{"path": "metadata.paymentType", "operator": "EQ", "value": "CARD"}}
			}},
			{"EffectsAsAWhole", map[string]any{"effects": []any{grant(other, 3), map[string]any{"type": "REMOVE_FROM_SEGMENT", "segmentId": seg}}}, func(m map[string]any) {
				m["effects"] = []any{map[string]any{"type": "GRANT_PERK", "perkId": other, "points": 3.0}, map[string]any{"type": "REMOVE_FROM_SEGMENT", "segmentId": seg}}
			}},
			{"Disable", map[string]any{"enabled": false}, func(m map[string]any) { m["enabled"] = false }},
			{"NoConditions", map[string]any{"conditions": []any{}}, func(m map[string]any) { m["conditions"] = []any{} }},
			{"Enable", map[string]any{"enabled": true}, func(m map[string]any) { m["enabled"] = true }},
		}
		for _, s := range steps {
			t.Run(s.name, func(t *testing.T) {
				got := h.Do("PUT", "/rules/"+id, s.body, h.Admin()).Expect(t, 200, "").Map(t)
				want := cur
				s.change(want)
				if got["updatedAt"] == r["created"] {
					t.Errorf("updatedAt did not move: %v", got["updatedAt"])
				}
				want["updatedAt"] = got["updatedAt"]
				if !reflect.DeepEqual(got, want) {
					t.Errorf("PUT %v =\n %v\nwant\n %v", s.body, got, want)
				}
				if stored := h.Do("GET", "/rules/"+id, nil, h.Admin()).Expect(t, 200, "").Map(t); !reflect.DeepEqual(stored, got) {
					t.Errorf("GET after PUT = %v, want %v", stored, got)
				}
				cur = got
			})
		}
		// The list's trigger filter follows the stored trigger.
		for trig, want := range map[string]int{"TRANSACTION_CREATED": 1, "ORDER_COMPLETED": 0} {
			if n := len(h.Do("GET", "/rules?trigger="+trig, nil, h.Admin()).Expect(t, 200, "").Map(t)["items"].([]any)); n != want {
				t.Errorf("rules of %s = %d, want %d", trig, n, want)
			}
		}
		// A rule sent back whole, read-only fields unchanged, is accepted.
		cur["title"] = "Round trip"
		got := h.Do("PUT", "/rules/"+id, cur, h.Admin()).Expect(t, 200, "").Map(t)
		if got["title"] != "Round trip" || got["created"] != r["created"] || got["_id"] != id {
			t.Errorf("round trip = %v", got)
		}
	})

	t.Run("UpdateRefused", func(t *testing.T) {
		before := h.Do("GET", "/rules/"+id, nil, h.Admin()).Expect(t, 200, "").Map(t)
		for _, c := range []struct {
			name  string
			body  any
			field string
		}{
			{"UnknownField", map[string]any{"title": "x", "priority": 1}, "priority"},
			{"UnknownEffectField", map[string]any{"effects": []any{map[string]any{"type": "GRANT_PERK", "perkId": perk, "points": 1, "bonus": 2}}}, "effects[0].bonus"},
			{"Empty", map[string]any{}, ""},
			{"NullTitle", map[string]any{"title": nil}, "title"},
			{"NullEnabled", map[string]any{"enabled": nil}, "enabled"},
			{"BlankTitle", map[string]any{"title": "  "}, "title"},
			{"BadTrigger", map[string]any{"trigger": "checkin_created"}, "trigger"},
			{"NoEffects", map[string]any{"effects": []any{}}, "effects"},
			{"UnknownPerk", map[string]any{"effects": []any{grant("5f1c0a9b2d3e4f5a6b7c8d9e", 1)}}, "effects[0].perkId"},
			{"ChangedID", map[string]any{"_id": "5f1c0a9b2d3e4f5a6b7c8d9e"}, "_id"},
			{"ChangedTenant", map[string]any{"tenantId": "other"}, "tenantId"},
			{"ChangedCreated", map[string]any{"created": "2000-01-01T00:00:00.000Z"}, "created"},
			{"ChangedUpdatedAt", map[string]any{"updatedAt": "2000-01-01T00:00:00.000Z"}, "updatedAt"},
			{"EnabledNotBoolean", map[string]any{"enabled": "yes"}, "enabled"},
		} {
			t.Run(c.name, func(t *testing.T) {
				msg := h.Do("PUT", "/rules/"+id, c.body, h.Admin()).Expect(t, 422, "VALIDATION_FAILED").Map(t)["message"].(string)
				if c.field != "" && !strings.HasPrefix(msg, c.field+":") {
					t.Errorf("message = %q, want it to name %s", msg, c.field)
				}
			})
		}
		if after := h.Do("GET", "/rules/"+id, nil, h.Admin()).Expect(t, 200, "").Map(t); !reflect.DeepEqual(after, before) {
			t.Errorf("a refused PUT changed the rule:\n %v\nwas\n %v", after, before)
		}
	})

	t.Run("Delete", func(t *testing.T) {
		h.Do("DELETE", "/rules/"+id, nil, h.Admin()).Expect(t, 204, "")
		h.Do("GET", "/rules/"+id, nil, h.Admin()).Expect(t, 404, "NOT_FOUND")
		h.Do("PUT", "/rules/"+id, map[string]any{"enabled": true}, h.Admin()).Expect(t, 404, "NOT_FOUND")
		h.Do("DELETE", "/rules/"+id, nil, h.Admin()).Expect(t, 404, "NOT_FOUND")
		if items := h.Do("GET", "/rules", nil, h.Admin()).Expect(t, 200, "").Map(t)["items"].([]any); len(items) != 0 {
			t.Errorf("rules left = %v", items)
		}
	})

	t.Run("UnknownID", func(t *testing.T) {
		for _, id := range []string{"5f1c0a9b2d3e4f5a6b7c8d9e", "not.an.id"} {
			h.Do("GET", "/rules/"+id, nil, h.Admin()).Expect(t, 404, "NOT_FOUND")
			h.Do("PUT", "/rules/"+id, map[string]any{"title": "x"}, h.Admin()).Expect(t, 404, "NOT_FOUND")
			h.Do("DELETE", "/rules/"+id, nil, h.Admin()).Expect(t, 404, "NOT_FOUND")
		}
	})
}

func TestRuleList(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	perk := newPerk(t, h, h.Admin(), nil)
	triggers := []string{"ORDER_COMPLETED", "CHECKIN_CREATED", "ORDER_COMPLETED", "CHECKIN_CREATED", "ORDER_COMPLETED"}
	var all, checkins []string
	for i, trig := range triggers {
		body := ruleBody(trig, []map[string]any{grant(perk, 1)})
		body["enabled"] = i != 1 // disabled rules are listed too
		id := newRule(t, h, body)
		all = append(all, id)
		if trig == "CHECKIN_CREATED" {
			checkins = append(checkins, id)
		}
	}
	ids := func(items []any) []string {
		var out []string
		for _, it := range items {
			out = append(out, it.(map[string]any)["_id"].(string))
		}
		return out
	}
	// pages reads every page of query with limit, following nextKey.
	pages := func(t *testing.T, query string, limit int) (got []string, n int) {
		t.Helper()
		start := ""
		for n = 1; ; n++ {
			q := fmt.Sprintf("/rules?limit=%d%s", limit, query)
			if start != "" {
				q += "&startKey=" + url.QueryEscape(start)
			}
			body := h.Do("GET", q, nil, h.Admin()).Expect(t, 200, "").Map(t)
			items := body["items"].([]any)
			page := body["page"].(map[string]any)
			if page["count"] != float64(len(items)) || page["limit"] != float64(limit) || len(items) > limit {
				t.Fatalf("page %d = %v with %d items", n, page, len(items))
			}
			got = append(got, ids(items)...)
			next, _ := page["nextKey"].(string)
			if next == "" {
				return got, n
			}
			if n > 10 {
				t.Fatalf("paging does not end: %v", got)
			}
			start = next
		}
	}
	tests := []struct {
		name  string
		query string
		limit int
		want  []string
		pages int
	}{
		{"All", "", 100, all, 1},
		{"ByTwo", "", 2, all, 3},
		{"ByOne", "", 1, all, 5},
		{"ExactPages", "", 5, all, 1},
		{"Trigger", "&trigger=CHECKIN_CREATED", 100, checkins, 1},
		{"TriggerByOne", "&trigger=CHECKIN_CREATED", 1, checkins, 2},
		{"TriggerNone", "&trigger=AWARD_REDEEMED", 10, nil, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, n := pages(t, tc.query, tc.limit)
			if !reflect.DeepEqual(got, tc.want) || n != tc.pages {
				t.Errorf("got %v in %d pages, want %v in %d", got, n, tc.want, tc.pages)
			}
		})
	}

	first := h.Do("GET", "/rules?limit=2", nil, h.Admin()).Expect(t, 200, "").Map(t)["page"].(map[string]any)["nextKey"].(string)
	byTrigger := h.Do("GET", "/rules?limit=1&trigger=CHECKIN_CREATED", nil, h.Admin()).Expect(t, 200, "").Map(t)["page"].(map[string]any)["nextKey"].(string)
	other, key := h.NewTenant(h.Tenant.Settings)
	foreign := ts.Headers{"x-service-auth-token", key, "x-application-id", other.ID}
	theirPerk := newPerk(t, h, foreign, nil)
	for range 2 {
		h.Do("POST", "/rules", ruleBody("ORDER_COMPLETED", []map[string]any{grant(theirPerk, 1)}), foreign).Expect(t, 201, "")
	}
	theirs := h.Do("GET", "/rules?limit=1", nil, foreign).Expect(t, 200, "").Map(t)["page"].(map[string]any)["nextKey"].(string)
	tampered := []byte(first)
	tampered[len(tampered)/3] ^= 1
	for _, c := range []struct {
		name, query, field string
	}{
		{"TamperedKey", "limit=2&startKey=" + url.QueryEscape(string(tampered)), "startKey"},
		{"GarbageKey", "startKey=abc", "startKey"},
		{"KeyOfAnotherTrigger", "limit=2&startKey=" + url.QueryEscape(byTrigger), "startKey"},
		{"KeyOfAnotherTenant", "limit=2&startKey=" + url.QueryEscape(theirs), "startKey"},
		{"LowerCaseTrigger", "trigger=checkin_created", "trigger"},
		{"LongTrigger", "trigger=" + strings.Repeat("A", 65), "trigger"},
		{"ZeroLimit", "limit=0", "limit"},
		{"HugeLimit", "limit=1001", "limit"},
	} {
		t.Run(c.name, func(t *testing.T) {
			msg := h.Do("GET", "/rules?"+c.query, nil, h.Admin()).Expect(t, 422, "VALIDATION_FAILED").Map(t)["message"].(string)
			if !strings.HasPrefix(msg, c.field+":") {
				t.Errorf("message = %q, want it to name %s", msg, c.field)
			}
		})
	}
	// The key of the first page still works.
	rest := h.Do("GET", "/rules?limit=2&startKey="+url.QueryEscape(first), nil, h.Admin()).Expect(t, 200, "").Map(t)["items"].([]any)
	if got := ids(rest); !reflect.DeepEqual(got, all[2:4]) {
		t.Errorf("second page = %v, want %v", got, all[2:4])
	}
}

// TestRuleConcurrentUpdates: PUTs of different fields racing on one rule
// are serialised: every change answered 200 is in the stored rule.
func TestRuleConcurrentUpdates(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	perk := newPerk(t, h, h.Admin(), nil)
	id := newRule(t, h, ruleBody("ORDER_COMPLETED", []map[string]any{grant(perk, 1)}))
	changes := []map[string]any{
		{"title": "Raced"},
		{"trigger": "CHECKIN_CREATED"},
		{"enabled": false},
		{"conditions": []any{cond("metadata.value", "GT", 1)}},
		{"effects": []any{grant(perk, 2)}},
	}
	status := make([]int, len(changes))
	var wg sync.WaitGroup
	for i, c := range changes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			status[i] = h.Do("PUT", "/rules/"+id, c, h.Admin()).Status
		}()
	}
	wg.Wait()
	if status[0] != 200 && status[1] != 200 && status[2] != 200 && status[3] != 200 && status[4] != 200 {
		t.Errorf("every PUT lost: %v", status)
	}
	got := h.Do("GET", "/rules/"+id, nil, h.Admin()).Expect(t, 200, "").Map(t)
	for i, c := range changes {
		switch status[i] {
		case 200:
			for k, v := range c {
				if fmt.Sprint(got[k]) != fmt.Sprint(v) {
					t.Errorf("PUT %v answered 200 but the rule has %s = %v", c, k, got[k])
				}
			}
		case 409:
		default:
			t.Errorf("PUT %v: status %d", c, status[i])
		}
	}
}

package rule_test

import (
	"fmt"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/loyalty-platform/platform/shared/domain/action"
	"github.com/loyalty-platform/platform/shared/domain/rule"
	ts "github.com/loyalty-platform/platform/shared/testkit"
)

// listActions returns a user's actions of type typ through GET
// /users/{userId}/actions, newest first.
func listActions(t *testing.T, h *ts.Harness, uid, typ string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, a := range h.Do("GET", "/users/"+uid+"/actions?limit=1000&type="+typ, nil, h.Admin(), ts.Headers{"x-api-version", "9"}).Expect(t, 200, "").Map(t)["actions"].([]any) {
		out = append(out, a.(map[string]any))
	}
	return out
}

// TestPointsClamp: an effect computing more than 1e9 points grants 1e9,
// and its AWARD_GRANTED says it was clamped and what was computed; on the
// request's path (orders at the POS's largest value and basket) and on the
// stream's (an action whose value no request could record, which used to
// overflow int).
func TestPointsClamp(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	loc := shop(t, h, h.Admin(), "Big")
	const max = rule.MaxEffectPoints
	var basket []any
	for i := range 200 {
		basket = append(basket, map[string]any{"id": fmt.Sprint("item-", i), "quantity": 1000})
	}
	tests := []struct {
		name     string
		effect   func(perk string) map[string]any
		order    map[string]any // nil: a synthetic CHECKIN_CREATED delivered by the stream
		value    float64        // that action's metadata.value
		want     int
		computed string // "" when not clamped
	}{
		{"PerUnitBelow", func(p string) map[string]any {
			return map[string]any{"type": "GRANT_PERK", "perkId": p, "pointsPerUnit": 1}
		},
			map[string]any{"totalPrice": 1e9}, 0, max, ""},
		{"PerUnitAbove", func(p string) map[string]any {
			return map[string]any{"type": "GRANT_PERK", "perkId": p, "pointsPerUnit": 1000000}
		},
			map[string]any{"totalPrice": 1e9}, 0, max, "1000000000000000"},
		{"PerItemAbove", func(p string) map[string]any {
			return map[string]any{"type": "GRANT_PERK", "perkId": p, "pointsPerItem": 1000000}
		},
			map[string]any{"totalPrice": 1, "basket": basket}, 0, max, "200000000000"},
		{"FixedMax", func(p string) map[string]any { return grant(p, max) }, map[string]any{"totalPrice": 1}, 0, max, ""},
		{"StreamPerUnitHuge", func(p string) map[string]any {
			return map[string]any{"type": "GRANT_PERK", "perkId": p, "pointsPerUnit": 1000000}
		},
			nil, 9e125, max, "9e+131"},
		{"StreamPerUnitBelow", func(p string) map[string]any {
			return map[string]any{"type": "GRANT_PERK", "perkId": p, "pointsPerUnit": 2}
		},
			nil, 499999999.5, 999999999, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			uid := shopper(t, h, h.Admin(), tc.name)
			p := newPerk(t, h, h.Admin(), map[string]any{"title": tc.name})
			body := ruleBody("ORDER_COMPLETED", []map[string]any{tc.effect(p)}, cond("context.user._id", "EQ", uid))
			if tc.order == nil {
				body = ruleBody("CHECKIN_CREATED", []map[string]any{tc.effect(p)}, cond("context.user._id", "EQ", uid), cond("metadata.synthetic", "EQ", true))
			}
			newRule(t, h, body)
			if tc.order != nil {
				body := map[string]any{"locationId": loc}
				for k, v := range tc.order {
					body[k] = v
				}
				completeOrder(t, h, uid, body)
			} else {
				deliverSynthetic(t, h, uid, loc, map[string]events.DynamoDBAttributeValue{"value": events.NewNumberAttribute(fmt.Sprint(tc.value))})
			}
			h.WaitStreams()
			if got := points(t, h, h.Admin(), uid)[p]; got != tc.want {
				t.Errorf("points = %d, want %d", got, tc.want)
			}
			grants := listActions(t, h, uid, "AWARD_GRANTED")
			if len(grants) != 1 {
				t.Fatalf("AWARD_GRANTED = %d, want 1", len(grants))
			}
			m := grants[0]["metadata"].(map[string]any)
			if m["points"] != float64(tc.want) {
				t.Errorf("metadata.points = %v, want %d", m["points"], tc.want)
			}
			if tc.computed == "" {
				if _, ok := m["clamped"]; ok {
					t.Errorf("metadata = %v: clamped without a clamp", m)
				}
				return
			}
			if m["clamped"] != true || m["pointsComputed"] != tc.computed {
				t.Errorf("metadata clamped %v pointsComputed %v, want true %s", m["clamped"], m["pointsComputed"], tc.computed)
			}
		})
	}
}

// deliverSynthetic delivers to the rules function a CHECKIN_CREATED of
// uid at loc that no request recorded: a real check-in's stored item with
// a new id, metadata.synthetic true and meta added. It
// returns the action's id. Rules meant for it only hold on
// metadata.synthetic EQ true (the real check-in has none).
func deliverSynthetic(t *testing.T, h *ts.Harness, uid, loc string, meta map[string]events.DynamoDBAttributeValue) string {
	t.Helper()
	in := checkIn(t, h, h.Admin(), h.Tenant.ID, uid, loc)
	h.WaitStreams()
	ev := streamEvent(t, h, h.Tenant.ID, in.ID)
	img := ev.Records[0].Change.NewImage
	id := action.NewID()
	img["id"] = events.NewStringAttribute(id)
	img["pk"] = events.NewStringAttribute(h.Tenant.ID + "#ACTION#" + id)
	m := map[string]events.DynamoDBAttributeValue{}
	for k, v := range img["metadata"].Map() {
		m[k] = v
	}
	for k, v := range meta {
		m[k] = v
	}
	m["synthetic"] = events.NewBooleanAttribute(true)
	img["metadata"] = events.NewMapAttribute(m)
	deliver(t, h, ev, 1)
	return id
}

package rule_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/loyalty-platform/platform/shared/domain/action"
	"github.com/loyalty-platform/platform/shared/domain/rule"
	ts "github.com/loyalty-platform/platform/shared/testkit"
)

// ruleMeta checks the metadata rules put on the actions their effects
// record.
func ruleMeta(t *testing.T, a action.Action, ruleID, triggerID string, depth int) {
	t.Helper()
	m := a.Metadata
	if m["ruleId"] != ruleID || m["triggerActionId"] != triggerID || m["ruleDepth"] != float64(depth) {
		t.Errorf("%s metadata = ruleId %v triggerActionId %v ruleDepth %v; want %s %s %d", a.Type, m["ruleId"], m["triggerActionId"], m["ruleDepth"], ruleID, triggerID, depth)
	}
}

// TestStreamRunsRules: a check-in is recorded by a function that does not
// run rules; the rules function's stream handler runs them, once per
// (rule, action) however often and however concurrently the action is
// delivered; disabled rules and rules whose conditions do not hold do not
// run.
func TestStreamRunsRules(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	uid := shopper(t, h, h.Admin(), "Sam")
	loc, elsewhere := shop(t, h, h.Admin(), "Here"), shop(t, h, h.Admin(), "Elsewhere")
	pHere, pOff, pElsewhere := newPerk(t, h, h.Admin(), nil), newPerk(t, h, h.Admin(), nil), newPerk(t, h, h.Admin(), nil)
	here := newRule(t, h, ruleBody("CHECKIN_CREATED", []map[string]any{grant(pHere, 10)}, cond("context.location._id", "EQ", loc)))
	off := newRule(t, h, ruleBody("CHECKIN_CREATED", []map[string]any{grant(pOff, 7)}))
	h.Do("PUT", "/rules/"+off, map[string]any{"enabled": false}, h.Admin()).Expect(t, 200, "")
	newRule(t, h, ruleBody("CHECKIN_CREATED", []map[string]any{grant(pElsewhere, 3)}, cond("context.location._id", "EQ", elsewhere)))
	newRule(t, h, ruleBody("CHECKOUT", []map[string]any{grant(pElsewhere, 3)})) // another trigger

	in := checkIn(t, h, h.Admin(), h.Tenant.ID, uid, loc)
	h.WaitStreams()
	want := map[string]int{pHere: 10}
	check := func(t *testing.T, grants int) {
		t.Helper()
		if got := points(t, h, h.Admin(), uid); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("points = %v, want %v", got, want)
		}
		if got := actionsOf(t, h, h.Tenant.ID, uid, "AWARD_GRANTED"); len(got) != grants {
			t.Errorf("AWARD_GRANTED = %d, want %d", len(got), grants)
		}
	}
	check(t, 1)
	all := actionsOf(t, h, h.Tenant.ID, uid, "AWARD_GRANTED")
	if len(all) == 0 {
		t.Fatal("the stream did not run the rule")
	}
	granted := all[0]
	if granted.Metadata["source"] != rule.SourceRule || granted.Metadata["perkId"] != pHere || granted.Metadata["pointsGranted"] != 10.0 {
		t.Errorf("AWARD_GRANTED metadata = %v", granted.Metadata)
	}
	ruleMeta(t, granted, here, in.ID, 1)
	if _, ok := granted.Metadata["orderId"]; ok {
		t.Errorf("a check-in's grant names an order: %v", granted.Metadata)
	}

	ev := streamEvent(t, h, h.Tenant.ID, in.ID)
	t.Run("DeliveredAgain", func(t *testing.T) {
		deliver(t, h, ev, 1)
		check(t, 1)
	})
	t.Run("DeliveredConcurrently", func(t *testing.T) {
		deliver(t, h, ev, 8)
		check(t, 1)
	})
	// Enabled again, the rule runs on the action delivered from then on
	// (which shows the hand-built deliveries do reach the rules): once,
	// however many deliveries race.
	t.Run("EnabledAgain", func(t *testing.T) {
		h.Do("PUT", "/rules/"+off, map[string]any{"enabled": true}, h.Admin()).Expect(t, 200, "")
		deliver(t, h, ev, 8)
		want[pOff] = 7
		check(t, 2)
		deliver(t, h, ev, 2)
		check(t, 2)
	})
	t.Run("Deleted", func(t *testing.T) {
		h.Do("DELETE", "/rules/"+here, nil, h.Admin()).Expect(t, 204, "")
		other := shopper(t, h, h.Admin(), "Del")
		checkIn(t, h, h.Admin(), h.Tenant.ID, other, loc)
		h.WaitStreams()
		if got := points(t, h, h.Admin(), other); got[pHere] != 0 || got[pOff] != 7 {
			t.Errorf("after the delete, a check-in earned %v; want only %d of the enabled rule", got, 7)
		}
		check(t, 2) // what the deleted rule did stays
	})
}

// completedOrder is the document the rules match an ORDER_COMPLETED
// action on (the action's JSON, as the engine makes it): an order of 25 at
// location "here" with shortCode VIP-42 and one latte in its basket.
func completedOrder(t *testing.T) map[string]any {
	t.Helper()
	a := action.Action{
		ID: "a1", Type: "ORDER_COMPLETED", TenantID: "t-1",
		Metadata: map[string]any{"orderId": "o1", "value": 25, "totalPrice": 25, "shortCode": "VIP-42",
			"basket": []any{map[string]any{"id": "latte", "category": "coffee", "quantity": 2}}},
		Context: action.Context{User: &action.UserRef{ID: "u1"}, Location: &action.LocationRef{ID: "here"}},
	}
	b, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	return doc
}

// conditions decodes condition bodies (cond) as a rule stores them.
func conditions(t *testing.T, bodies ...map[string]any) []rule.Condition {
	t.Helper()
	b, err := json.Marshal(bodies)
	if err != nil {
		t.Fatal(err)
	}
	var out []rule.Condition
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestConditionOperators checks which conditions hold on a completed
// order (rule.Matches on the action's document): no storage, the
// operators' table alone. TestConditionsOnACompletedOrder checks that a
// real order's action has the paths the table reads.
func TestConditionOperators(t *testing.T) {
	t.Parallel()
	doc := completedOrder(t)
	const loc, elsewhere = "here", "elsewhere"
	latte := map[string]any{"id": "latte", "category": "coffee", "quantity": 2}
	tests := []struct {
		name  string
		conds []map[string]any
		want  bool
	}{
		{"None", nil, true},
		{"EQNumber", []map[string]any{cond("metadata.value", "EQ", 25)}, true},
		{"EQNumberInOtherForm", []map[string]any{cond("metadata.totalPrice", "EQ", json.RawMessage("2.5e1"))}, true},
		{"EQOtherNumber", []map[string]any{cond("metadata.value", "EQ", 24)}, false},
		{"EQNumberAsString", []map[string]any{cond("metadata.value", "EQ", "25")}, false},
		{"EQLocation", []map[string]any{cond("context.location._id", "EQ", loc)}, true},
		{"EQOtherLocation", []map[string]any{cond("context.location._id", "EQ", elsewhere)}, false},
		{"EQType", []map[string]any{cond("type", "EQ", "ORDER_COMPLETED")}, true},
		{"EQAbsent", []map[string]any{cond("metadata.nope", "EQ", 1)}, false},
		{"NEQSame", []map[string]any{cond("metadata.value", "NEQ", 25)}, false},
		{"NEQOther", []map[string]any{cond("metadata.value", "NEQ", 30)}, true},
		{"NEQAbsent", []map[string]any{cond("metadata.nope", "NEQ", 1)}, true},
		{"GTBelow", []map[string]any{cond("metadata.value", "GT", 24.99)}, true},
		{"GTEqual", []map[string]any{cond("metadata.value", "GT", 25)}, false},
		{"GTEEqual", []map[string]any{cond("metadata.value", "GTE", 25)}, true},
		{"GTEAbove", []map[string]any{cond("metadata.value", "GTE", 25.01)}, false},
		{"LTEqual", []map[string]any{cond("metadata.value", "LT", 25)}, false},
		{"LTAbove", []map[string]any{cond("metadata.value", "LT", 100)}, true},
		{"LTEEqual", []map[string]any{cond("metadata.value", "LTE", 25)}, true},
		{"LTEBelow", []map[string]any{cond("metadata.value", "LTE", 24)}, false},
		{"GTString", []map[string]any{cond("metadata.shortCode", "GT", "VIP-41")}, true},
		{"LTString", []map[string]any{cond("metadata.shortCode", "LT", "VIP-41")}, false},
		{"GTNumberVsString", []map[string]any{cond("metadata.value", "GT", "1")}, false},
		{"LTAbsent", []map[string]any{cond("metadata.nope", "LT", 1)}, false},
		{"INListed", []map[string]any{cond("metadata.value", "IN", []any{10, 25})}, true},
		{"INStrings", []map[string]any{cond("context.location._id", "IN", []any{elsewhere, loc})}, true},
		{"INNotListed", []map[string]any{cond("metadata.value", "IN", []any{10, 20})}, false},
		{"INEmpty", []map[string]any{cond("metadata.value", "IN", []any{})}, false},
		{"INAbsent", []map[string]any{cond("metadata.nope", "IN", []any{1})}, false},
		{"NINNotListed", []map[string]any{cond("metadata.value", "NIN", []any{10, 20})}, true},
		{"NINListed", []map[string]any{cond("metadata.value", "NIN", []any{25})}, false},
		{"NINAbsent", []map[string]any{cond("metadata.nope", "NIN", []any{1})}, true},
		{"CONTAINSSubstring", []map[string]any{cond("metadata.shortCode", "CONTAINS", "IP-4")}, true},
		{"CONTAINSOtherSubstring", []map[string]any{cond("metadata.shortCode", "CONTAINS", "GOLD")}, false},
		{"CONTAINSItem", []map[string]any{cond("metadata.basket", "CONTAINS", latte)}, true},
		{"CONTAINSOtherItem", []map[string]any{cond("metadata.basket", "CONTAINS", map[string]any{"id": "latte"})}, false},
		{"CONTAINSNumber", []map[string]any{cond("metadata.value", "CONTAINS", 25)}, false},
		{"CONTAINSAbsent", []map[string]any{cond("metadata.nope", "CONTAINS", "x")}, false},
		{"EXISTSPresent", []map[string]any{cond("metadata.shortCode", "EXISTS", nil)}, true},
		{"EXISTSTruePresent", []map[string]any{cond("metadata.orderId", "EXISTS", true)}, true},
		{"EXISTSAbsent", []map[string]any{cond("metadata.nope", "EXISTS", nil)}, false},
		{"EXISTSFalseAbsent", []map[string]any{cond("metadata.nope", "EXISTS", false)}, true},
		{"EXISTSFalsePresent", []map[string]any{cond("metadata.value", "EXISTS", false)}, false},
		{"EXISTSThroughScalar", []map[string]any{cond("metadata.value.x", "EXISTS", nil)}, false},
		{"AllHold", []map[string]any{cond("metadata.value", "GTE", 10), cond("context.location._id", "EQ", loc)}, true},
		{"OneFails", []map[string]any{cond("metadata.value", "GTE", 10), cond("context.location._id", "EQ", elsewhere)}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := rule.Matches(conditions(t, tc.conds...), doc); got != tc.want {
				t.Errorf("Matches = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestConditionsOnACompletedOrder completes one order: a rule whose
// conditions read every path TestConditionOperators reads grants, one
// whose location is another does not.
func TestConditionsOnACompletedOrder(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	uid := shopper(t, h, h.Admin(), "Opal")
	loc, elsewhere := shop(t, h, h.Admin(), "Here"), shop(t, h, h.Admin(), "Elsewhere")
	latte := map[string]any{"id": "latte", "category": "coffee", "quantity": 2}
	every := []map[string]any{
		cond("type", "EQ", "ORDER_COMPLETED"), cond("metadata.value", "EQ", 25), cond("metadata.totalPrice", "EQ", 25),
		cond("metadata.shortCode", "EQ", "VIP-42"), cond("metadata.basket", "CONTAINS", latte), cond("metadata.orderId", "EXISTS", true),
	}
	held := newPerk(t, h, h.Admin(), map[string]any{"title": "Held"})
	newRule(t, h, ruleBody("ORDER_COMPLETED", []map[string]any{grant(held, 1)}, append(every, cond("context.location._id", "EQ", loc))...))
	other := newPerk(t, h, h.Admin(), map[string]any{"title": "Elsewhere"})
	newRule(t, h, ruleBody("ORDER_COMPLETED", []map[string]any{grant(other, 1)}, append(every, cond("context.location._id", "EQ", elsewhere))...))
	completeOrder(t, h, uid, map[string]any{"locationId": loc, "totalPrice": 25, "shortCode": "VIP-42", "basket": []any{latte}})
	h.WaitStreams()
	got := points(t, h, h.Admin(), uid)
	if got[held] != 1 || got[other] != 0 {
		t.Errorf("points = %v, want 1 of %s (the order's paths hold) and none of %s (another location)", got, held, other)
	}
}

// TestPointsFor: pointsPerUnit of the order value rounded down;
// pointsPerItem per basket item (by quantity) matching the perk's
// basketQualification.
func TestPointsFor(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	uid := shopper(t, h, h.Admin(), "Pia")
	loc := shop(t, h, h.Admin(), "Till")
	bq := func(scope string, codes any) map[string]any {
		q := map[string]any{"matchCode": codes}
		if scope != "" {
			q["scope"] = scope
		}
		return map[string]any{"basketQualification": q}
	}
	tests := []struct {
		name  string
		perk  map[string]any
		key   string
		per   any
		order int // which order: 0 (value 9.99) or 1 (value 100, the basket)
		want  int
	}{
		{"PerUnitRoundsDown", nil, "pointsPerUnit", 1.5, 0, 14},         // 14.985
		{"PerUnitBelowOne", nil, "pointsPerUnit", 0.05, 0, 0},           // 0.4995: nothing
		{"PerUnitWhole", nil, "pointsPerUnit", 1, 0, 9},                 // 9.99
		{"PerUnitFloatNoise", nil, "pointsPerUnit", 0.29, 1, 29},        // 0.29*100 is 28.999999999999996 in floats
		{"PerUnitFraction", nil, "pointsPerUnit", 0.07, 1, 7},           // 7.000000000000001
		{"PerItemNoQualification", nil, "pointsPerItem", 1, 1, 7},       // 2+1+3+1
		{"PerItemItem", bq("ITEM", "latte"), "pointsPerItem", 5, 1, 10}, // 2 lattes
		{"PerItemNoScope", bq("", []string{"muffin", "latte"}), "pointsPerItem", 1, 1, 5},
		{"PerItemCategory", bq("CATEGORY", "coffee"), "pointsPerItem", 1, 1, 3},
		{"PerItemCategoryIsNotID", bq("CATEGORY", "latte"), "pointsPerItem", 1, 1, 0},
		{"PerItemItemIsNotCategory", bq("ITEM", "coffee"), "pointsPerItem", 1, 1, 0},
		{"PerItemItemOrCategory", bq("ITEM_OR_CATEGORY", []string{"muffin", "tea"}), "pointsPerItem", 2, 1, 8},
		{"PerItemChildItem", bq("CHILD_ITEM", "green"), "pointsPerItem", 1, 1, 1},
		{"PerItemBasket", bq("BASKET", "nothing"), "pointsPerItem", 1, 1, 7},
		{"PerItemNoMatch", bq("ITEM", "scone"), "pointsPerItem", 1, 1, 0},
	}
	perks := make([]string, len(tests))
	for i, tc := range tests {
		p := map[string]any{"title": tc.name}
		for k, v := range tc.perk {
			p[k] = v
		}
		perks[i] = newPerk(t, h, h.Admin(), p)
		newRule(t, h, ruleBody("ORDER_COMPLETED", []map[string]any{{"type": "GRANT_PERK", "perkId": perks[i], tc.key: tc.per}},
			cond("metadata.shortCode", "EQ", fmt.Sprint("ORDER-", tc.order))))
	}
	// An action without metadata.value (a transaction) counts its
	// metadata.totalPrice.
	txn := newPerk(t, h, h.Admin(), map[string]any{"title": "Transactions"})
	newRule(t, h, ruleBody("TRANSACTION_CREATED", []map[string]any{{"type": "GRANT_PERK", "perkId": txn, "pointsPerUnit": 2}}))
	h.Do("POST", "/users/"+uid+"/transactions", map[string]any{"shortCode": "TX-1", "totalPrice": 12.75, "paymentType": "CASH_AT_POS"}, h.Admin()).Expect(t, 201, "")
	completeOrder(t, h, uid, map[string]any{"locationId": loc, "totalPrice": 9.99, "shortCode": "ORDER-0",
		"basket": []any{map[string]any{"id": "latte", "category": "coffee", "quantity": 5}}})
	completeOrder(t, h, uid, map[string]any{"locationId": loc, "totalPrice": 100, "shortCode": "ORDER-1", "basket": []any{
		map[string]any{"id": "latte", "category": "coffee", "quantity": 2},
		map[string]any{"id": "flat-white", "category": "coffee"},
		map[string]any{"id": "muffin", "category": "food", "quantity": 3},
		map[string]any{"id": "green", "category": "tea"},
	}})
	h.WaitStreams()
	got := points(t, h, h.Admin(), uid)
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got[perks[i]] != tc.want {
				t.Errorf("points = %d, want %d", got[perks[i]], tc.want)
			}
		})
	}
	if got[txn] != 25 {
		t.Errorf("points of the transaction = %d, want 25 (2 per unit of 12.75)", got[txn])
	}
	// Zero points grant nothing: no award, no AWARD_GRANTED.
	grants := 1 // the transaction's
	for _, tc := range tests {
		if tc.want > 0 {
			grants++
		}
	}
	if n := len(actionsOf(t, h, h.Tenant.ID, uid, "AWARD_GRANTED")); n != grants {
		t.Errorf("AWARD_GRANTED = %d, want %d", n, grants)
	}
}

// TestChainDepth: CHECKIN_CREATED (depth 0) -A-> SEGMENT_JOINED (1)
// -B-> AWARD_GRANTED of P (2) -C-> AWARD_GRANTED of Q (3); rules do not
// run on actions at depth 3, so D never grants R. The same rules run from
// a grant made by a request (depth 0) do reach R.
func TestChainDepth(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	if rule.MaxDepth != 3 {
		t.Fatalf("MaxDepth = %d; this test walks a chain of 3", rule.MaxDepth)
	}
	uid := shopper(t, h, h.Admin(), "Cid")
	loc := shop(t, h, h.Admin(), "Chain")
	seg := newSegment(t, h)
	p := newPerk(t, h, h.Admin(), map[string]any{"title": "P"})
	q := newPerk(t, h, h.Admin(), map[string]any{"title": "Q"})
	r := newPerk(t, h, h.Admin(), map[string]any{"title": "R"})
	a := newRule(t, h, ruleBody("CHECKIN_CREATED", []map[string]any{{"type": "ADD_TO_SEGMENT", "segmentId": seg}}))
	b := newRule(t, h, ruleBody("SEGMENT_JOINED", []map[string]any{grant(p, 10)}, cond("metadata.segmentId", "EQ", seg)))
	c := newRule(t, h, ruleBody("AWARD_GRANTED", []map[string]any{grant(q, 20)}, cond("metadata.perkId", "EQ", p)))
	d := newRule(t, h, ruleBody("AWARD_GRANTED", []map[string]any{grant(r, 30)}, cond("metadata.perkId", "EQ", q)))

	in := checkIn(t, h, h.Admin(), h.Tenant.ID, uid, loc)
	h.WaitStreams()
	if got := members(t, h, seg); len(got) != 1 || got[0] != uid {
		t.Errorf("members = %v, want [%s]", got, uid)
	}
	if got, want := points(t, h, h.Admin(), uid), map[string]int{p: 10, q: 20}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("points = %v, want %v (R never: its rule would run at depth 3)", got, want)
	}
	joined := actionsOf(t, h, h.Tenant.ID, uid, "SEGMENT_JOINED")
	if len(joined) != 1 {
		t.Fatalf("SEGMENT_JOINED = %d, want 1", len(joined))
	}
	ruleMeta(t, joined[0], a, in.ID, 1)
	byPerk := map[string][]action.Action{}
	for _, g := range actionsOf(t, h, h.Tenant.ID, uid, "AWARD_GRANTED") {
		id, _ := g.Metadata["perkId"].(string)
		byPerk[id] = append(byPerk[id], g)
	}
	if len(byPerk[p]) != 1 || len(byPerk[q]) != 1 || len(byPerk) != 2 {
		t.Fatalf("AWARD_GRANTED by perk = %v, want one of P and one of Q", byPerk)
	}
	ruleMeta(t, byPerk[p][0], b, joined[0].ID, 2)
	ruleMeta(t, byPerk[q][0], c, byPerk[p][0].ID, 3)

	// Delivered again, the depth-3 grant still runs nothing.
	deliver(t, h, streamEvent(t, h, h.Tenant.ID, byPerk[q][0].ID), 1)
	if got := points(t, h, h.Admin(), uid); got[r] != 0 {
		t.Errorf("R = %d after the depth-3 action was delivered again", got[r])
	}

	t.Run("FromARequest", func(t *testing.T) {
		other := shopper(t, h, h.Admin(), "Req")
		h.Do("POST", "/pointperks/"+p+"/awards", map[string]any{"userId": other, "points": 1}, h.Admin()).Expect(t, 200, "")
		h.WaitStreams()
		if got, want := points(t, h, h.Admin(), other), map[string]int{p: 1, q: 20, r: 30}; fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("points = %v, want %v", got, want)
		}
		grants := actionsOf(t, h, h.Tenant.ID, other, "AWARD_GRANTED")
		if len(grants) != 3 {
			t.Fatalf("AWARD_GRANTED = %d, want 3", len(grants))
		}
		byPerk := map[string]action.Action{}
		for _, g := range grants {
			byPerk[g.Metadata["perkId"].(string)] = g
		}
		if m := byPerk[p].Metadata; m["ruleId"] != nil || m["ruleDepth"] != nil || m["source"] == rule.SourceRule {
			t.Errorf("the request's grant = %v", m)
		}
		ruleMeta(t, byPerk[q], c, byPerk[p].ID, 1)
		ruleMeta(t, byPerk[r], d, byPerk[q].ID, 2)
	})
}

// TestSelfTriggeringRule: a rule on AWARD_GRANTED granting the same perk
// applies once per grant made by a request, never on its own grants.
func TestSelfTriggeringRule(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	uid := shopper(t, h, h.Admin(), "Selma")
	p := newPerk(t, h, h.Admin(), nil)
	self := newRule(t, h, ruleBody("AWARD_GRANTED", []map[string]any{grant(p, 5)}, cond("metadata.perkId", "EQ", p)))
	for i, want := range []int{15, 31} {
		h.Do("POST", "/pointperks/"+p+"/awards", map[string]any{"userId": uid, "points": 10 + i}, h.Admin()).Expect(t, 200, "")
		h.WaitStreams()
		if got := points(t, h, h.Admin(), uid)[p]; got != want {
			t.Fatalf("after grant %d: points = %d, want %d", i+1, got, want)
		}
	}
	byRule := 0
	for _, g := range actionsOf(t, h, h.Tenant.ID, uid, "AWARD_GRANTED") {
		if g.Metadata["ruleId"] == self {
			byRule++
			if g.Metadata["ruleDepth"] != 1.0 {
				t.Errorf("the rule's grant at depth %v, want 1", g.Metadata["ruleDepth"])
			}
		}
	}
	if byRule != 2 {
		t.Errorf("grants by the rule = %d, want 2", byRule)
	}
}

// TestRemoveFromSegment: the rule removes a member (SEGMENT_LEFT, reason
// RULE) and leaves a non-member as is.
func TestRemoveFromSegment(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	loc := shop(t, h, h.Admin(), "Exit")
	seg := newSegment(t, h)
	member, stranger := shopper(t, h, h.Admin(), "Mem"), shopper(t, h, h.Admin(), "Stra")
	h.Do("POST", "/segments/"+seg+"/members", map[string]any{"userIds": []string{member}}, h.Admin()).Expect(t, 200, "")
	id := newRule(t, h, ruleBody("CHECKIN_CREATED", []map[string]any{{"type": "REMOVE_FROM_SEGMENT", "segmentId": seg}}))
	in := checkIn(t, h, h.Admin(), h.Tenant.ID, member, loc)
	checkIn(t, h, h.Admin(), h.Tenant.ID, stranger, loc)
	h.WaitStreams()
	if got := members(t, h, seg); len(got) != 0 {
		t.Errorf("members = %v, want none", got)
	}
	left := actionsOf(t, h, h.Tenant.ID, member, "SEGMENT_LEFT")
	if len(left) != 1 {
		t.Fatalf("SEGMENT_LEFT = %d, want 1", len(left))
	}
	if left[0].Metadata["reason"] != "RULE" || left[0].Metadata["segmentId"] != seg {
		t.Errorf("SEGMENT_LEFT metadata = %v", left[0].Metadata)
	}
	ruleMeta(t, left[0], id, in.ID, 1)
	if got := actionsOf(t, h, h.Tenant.ID, stranger, "SEGMENT_LEFT"); len(got) != 0 {
		t.Errorf("a non-member left: %+v", got)
	}
}

// TestNullValues: a null at a path counts as absent for EXISTS and is a
// value like any other for the other operators. Real actions carry no
// nulls, so the action is delivered by hand: a check-in's stored item
// with a new id and metadata.note null.
func TestNullValues(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	uid := shopper(t, h, h.Admin(), "Nell")
	loc := shop(t, h, h.Admin(), "Null")
	tests := []struct {
		name string
		cond map[string]any
		want bool
	}{
		{"EXISTSFalse", cond("metadata.note", "EXISTS", false), true},
		{"EXISTS", cond("metadata.note", "EXISTS", nil), false},
		{"EQ", cond("metadata.note", "EQ", "x"), false},
		{"NEQ", cond("metadata.note", "NEQ", "x"), true},
		{"IN", cond("metadata.note", "IN", []any{"x", 0, false}), false},
		{"NIN", cond("metadata.note", "NIN", []any{"x", 0, false}), true},
		{"GTE", cond("metadata.note", "GTE", 0), false},
		{"LT", cond("metadata.note", "LT", "z"), false},
		{"CONTAINS", cond("metadata.note", "CONTAINS", "x"), false},
	}
	perks := make([]string, len(tests))
	for i, tc := range tests {
		perks[i] = newPerk(t, h, h.Admin(), map[string]any{"title": tc.name})
		newRule(t, h, ruleBody("CHECKIN_CREATED", []map[string]any{grant(perks[i], 1)}, cond("metadata.synthetic", "EQ", true), tc.cond))
	}
	// The real check-in is not synthetic: no rule holds on it.
	id := deliverSynthetic(t, h, uid, loc, map[string]events.DynamoDBAttributeValue{"note": events.NewNullAttribute()})

	got := points(t, h, h.Admin(), uid)
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if held := got[perks[i]] == 1; held != tc.want {
				t.Errorf("granted = %v, want %v", held, tc.want)
			}
		})
	}
	for _, g := range actionsOf(t, h, h.Tenant.ID, uid, "AWARD_GRANTED") {
		if g.Metadata["triggerActionId"] != id {
			t.Errorf("a grant on action %v, want only on the synthetic %s", g.Metadata["triggerActionId"], id)
		}
	}
}

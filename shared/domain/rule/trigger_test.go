package rule_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/loyalty-platform/platform/shared/contract/openapi"
	"github.com/loyalty-platform/platform/shared/domain/action"
	"github.com/loyalty-platform/platform/shared/domain/audience"
	"github.com/loyalty-platform/platform/shared/domain/award"
	"github.com/loyalty-platform/platform/shared/domain/locationcsv"
	"github.com/loyalty-platform/platform/shared/domain/pos"
	"github.com/loyalty-platform/platform/shared/domain/rule"
	"github.com/loyalty-platform/platform/shared/domain/tenant"
	"github.com/loyalty-platform/platform/shared/domain/user"
	"github.com/loyalty-platform/platform/shared/domain/webhook"
	ts "github.com/loyalty-platform/platform/shared/testkit"
)

// TestActionTypes: action.Types holds every domain's action type
// constant, the OpenAPI document's ActionType enum lists exactly them (a
// webhook endpoint's eventTypes name them), and its RuleTrigger enum lists
// exactly the types a rule may name (all but RULES_BUDGET_EXCEEDED) and
// the short names.
func TestActionTypes(t *testing.T) {
	t.Parallel()
	domains := []string{
		action.CheckinCreated, action.Checkout, user.ActionCreated, user.ActionActivated,
		award.ActionGranted, award.ActionRedeemed, award.ActionRefunded, award.ActionRevoked, award.ActionReversed,
		audience.ActionJoined, audience.ActionLeft,
		pos.ActionOrderCompleted, pos.ActionTransactionCreated, pos.ActionTransactionRefunded, pos.ActionBalanceCredited,
		locationcsv.ActionLocationCreated, locationcsv.ActionLocationUpdated, tenant.ActionUpdated, rule.ActionBudgetExceeded,
		webhook.ActionExhausted, webhook.ActionEndpointDisabled,
	}
	if got, want := slices.Sorted(slices.Values(action.Types)), slices.Sorted(slices.Values(domains)); !slices.Equal(got, want) {
		t.Errorf("action.Types = %v, want the domains' %v", got, want)
	}
	doc, err := openapi.Load()
	if err != nil {
		t.Fatal(err)
	}
	enumOf := func(name string) []string {
		s := doc.Spec().Components.Schemas[name]
		if s == nil || s.Value == nil {
			t.Fatalf("the OpenAPI document has no %s schema", name)
		}
		var enum []string
		for _, v := range s.Value.Enum {
			enum = append(enum, v.(string))
		}
		return slices.Sorted(slices.Values(enum))
	}
	if got, want := enumOf("ActionType"), slices.Sorted(slices.Values(action.Types)); !slices.Equal(got, want) {
		t.Errorf("ActionType enum = %v, want action.Types %v", got, want)
	}
	enum := enumOf("RuleTrigger")
	want := rule.TriggerTypes()
	for k := range rule.Aliases {
		want = append(want, k)
	}
	if got, want := slices.Sorted(slices.Values(enum)), slices.Sorted(slices.Values(want)); !slices.Equal(got, want) {
		t.Errorf("RuleTrigger enum = %v, want %v", got, want)
	}
	if slices.Contains(rule.TriggerTypes(), rule.ActionBudgetExceeded) {
		t.Errorf("%s is a trigger", rule.ActionBudgetExceeded)
	}
}

// TestTriggerAliases: a trigger and its short name (CHECKIN for
// CHECKIN_CREATED) select the same rules in GET /rules?trigger=, and a
// rule stored before triggers were checked (with a name no action has)
// can still be listed, disabled and renamed; changing its trigger to
// another unknown name is 422 and changes nothing.
func TestTriggerAliases(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	p := newPerk(t, h, h.Admin(), nil)
	short := newRule(t, h, ruleBody("CHECKIN", []map[string]any{grant(p, 1)}))
	long := newRule(t, h, ruleBody("CHECKIN_CREATED", []map[string]any{grant(p, 1)}))
	newRule(t, h, ruleBody("ORDER_COMPLETED", []map[string]any{grant(p, 1)}))
	legacy := newRule(t, h, ruleBody("CHECKOUT", []map[string]any{grant(p, 1)}))
	// Stored before triggers were checked: its trigger is a typo.
	key := map[string]types.AttributeValue{
		"pk": &types.AttributeValueMemberS{Value: h.Tenant.ID + "#RULES"}, "sk": &types.AttributeValueMemberS{Value: "RULE#" + legacy},
	}
	if _, err := h.Deps.Rules.DB.UpdateItem(context.Background(), &dynamodb.UpdateItemInput{
		TableName: aws.String(h.Deps.Rules.Table), Key: key,
		UpdateExpression:          aws.String("SET #t = :t, body = :b"),
		ExpressionAttributeNames:  map[string]string{"#t": "trigger"},
		ExpressionAttributeValues: map[string]types.AttributeValue{":t": &types.AttributeValueMemberS{Value: "ORDER_COMPLETE"}, ":b": &types.AttributeValueMemberS{Value: `{"title":"Typo","trigger":"ORDER_COMPLETE","conditions":[],"effects":[{"type":"GRANT_PERK","perkId":"` + p + `","points":1}]}`}},
	}); err != nil {
		t.Fatal(err)
	}
	ids := func(t *testing.T, query string) []string {
		t.Helper()
		var out []string
		for _, it := range h.Do("GET", "/rules"+query, nil, h.Admin()).Expect(t, 200, "").Map(t)["items"].([]any) {
			out = append(out, it.(map[string]any)["_id"].(string))
		}
		slices.Sort(out)
		return out
	}
	both := slices.Sorted(slices.Values([]string{short, long}))
	tests := []struct {
		name, query string
		want        []string
	}{
		{"Type", "?trigger=CHECKIN_CREATED", both},
		{"ShortName", "?trigger=CHECKIN", both},
		{"Legacy", "?trigger=ORDER_COMPLETE", []string{legacy}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := ids(t, tc.query); !slices.Equal(got, tc.want) {
				t.Errorf("GET /rules%s = %v, want %v", tc.query, got, tc.want)
			}
		})
	}
	t.Run("LegacyUpdated", func(t *testing.T) {
		got := h.Do("PUT", "/rules/"+legacy, map[string]any{"enabled": false, "title": "Typo, off"}, h.Admin()).Expect(t, 200, "").Map(t)
		if got["trigger"] != "ORDER_COMPLETE" || got["enabled"] != false {
			t.Errorf("PUT = %v", got)
		}
		msg := h.Do("PUT", "/rules/"+legacy, map[string]any{"trigger": "ORDER_COMPLETES"}, h.Admin()).Expect(t, 422, "VALIDATION_FAILED").Map(t)["message"].(string)
		if !strings.HasPrefix(msg, "trigger: ") {
			t.Errorf("message = %q, want it to name trigger", msg)
		}
		if got := h.Do("GET", "/rules/"+legacy, nil, h.Admin()).Expect(t, 200, "").Map(t); got["trigger"] != "ORDER_COMPLETE" {
			t.Errorf("after a refused PUT: trigger = %v", got["trigger"])
		}
		h.Do("PUT", "/rules/"+legacy, map[string]any{"trigger": "ORDER_COMPLETED"}, h.Admin()).Expect(t, 200, "")
	})
}

package rule_test

import (
	"context"
	"sync"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/loyalty-platform/platform/shared/domain/action"
	ts "github.com/loyalty-platform/platform/shared/testkit"
)

// shopper is an ACTIVE user with a profile photo (check-ins need one),
// created with the admin headers of a tenant.
func shopper(t testing.TB, h *ts.Harness, admin ts.Headers, first string) string {
	t.Helper()
	body := map[string]any{
		"firstName": first, "lastName": "Shopper",
		"credentials": []map[string]any{{"provider": "EMAIL", "id": ts.UniqueEmail(first)}},
	}
	id := h.Do("POST", "/users?autoActivate=true", body, admin).Expect(t, 201, "").Map(t)["id"].(string)
	h.Do("PUT", "/users/"+id+"/avatar", ts.JPEG(), admin, ts.Headers{"Content-Type", "image/jpeg"}).Expect(t, 200, "")
	return id
}

// shop is an ACTIVE location offering check-ins.
func shop(t *testing.T, h *ts.Harness, admin ts.Headers, title string) string {
	t.Helper()
	return h.Do("POST", "/locations", map[string]any{"title": title, "geo": []float64{-0.13, 51.51}, "state": "ACTIVE",
		"timezone": "Europe/London", "services": map[string]any{"checkins": true}}, admin).Expect(t, 201, "").Map(t)["_id"].(string)
}

// newPerk creates a PSEUDO_CURRENCY perk (body adds to or replaces the
// defaults).
func newPerk(t testing.TB, h *ts.Harness, admin ts.Headers, body map[string]any) string {
	t.Helper()
	b := map[string]any{"title": "Points", "template": "PSEUDO_CURRENCY"}
	for k, v := range body {
		b[k] = v
	}
	return h.Do("POST", "/perks", b, admin).Expect(t, 201, "").Map(t)["_id"].(string)
}

func newSegment(t *testing.T, h *ts.Harness) string {
	t.Helper()
	return h.Do("POST", "/segments", map[string]any{"title": "Segment", "type": "PERSISTENT"}, h.Admin()).Expect(t, 201, "").Map(t)["_id"].(string)
}

// cond is a rule condition; a nil value is left out (EXISTS).
func cond(path, op string, value any) map[string]any {
	c := map[string]any{"path": path, "operator": op}
	if value != nil {
		c["value"] = value
	}
	return c
}

// grant is a GRANT_PERK effect of fixed points.
func grant(perkID string, points int) map[string]any {
	return map[string]any{"type": "GRANT_PERK", "perkId": perkID, "points": points}
}

// ruleBody is the body of a rule on trigger with effects and conditions.
func ruleBody(trigger string, effects []map[string]any, conds ...map[string]any) map[string]any {
	b := map[string]any{"title": "Rule on " + trigger, "trigger": trigger, "effects": effects}
	if conds != nil {
		b["conditions"] = conds
	}
	return b
}

// newRule creates a rule as the tenant's admin and returns its id.
func newRule(t *testing.T, h *ts.Harness, body map[string]any) string {
	t.Helper()
	return h.Do("POST", "/rules", body, h.Admin()).Expect(t, 201, "").Map(t)["_id"].(string)
}

// checkIn checks uid in at loc and returns the CHECKIN_CREATED action.
func checkIn(t *testing.T, h *ts.Harness, admin ts.Headers, tenantID, uid, loc string) action.Action {
	t.Helper()
	h.Do("POST", "/users/"+uid+"/checkins", map[string]any{"locationId": loc, "type": "MANUAL", "trigger": "CODE"}, admin).Expect(t, 201, "")
	got := actionsOf(t, h, tenantID, uid, "CHECKIN_CREATED")
	if len(got) == 0 {
		t.Fatalf("no CHECKIN_CREATED for %s", uid)
	}
	return got[0] // newest first
}

// completeOrder creates an order of uid (body) and completes it.
func completeOrder(t *testing.T, h *ts.Harness, uid string, body map[string]any) string {
	t.Helper()
	oid := h.Do("POST", "/users/"+uid+"/orders", body, h.Admin()).Expect(t, 201, "").Map(t)["_id"].(string)
	h.Do("PUT", "/orders/"+oid, map[string]any{"state": "COMPLETED"}, h.Admin()).Expect(t, 200, "")
	return oid
}

// points returns the available points of each of the user's awards, by
// perk id.
func points(t *testing.T, h *ts.Harness, admin ts.Headers, uid string) map[string]int {
	t.Helper()
	out := map[string]int{}
	for _, a := range h.Do("GET", "/users/"+uid+"/pointawards", nil, admin).Expect(t, 200, "").Map(t)["awards"].([]any) {
		m := a.(map[string]any)
		out[m["perkId"].(string)] = int(m["points"].(map[string]any)["available"].(float64))
	}
	return out
}

// actionsOf returns a user's actions of type typ, newest first.
func actionsOf(t *testing.T, h *ts.Harness, tenantID, uid, typ string) []action.Action {
	t.Helper()
	all, err := h.Deps.Actions.ByUser(context.Background(), tenantID, uid, 1000)
	if err != nil {
		t.Fatal(err)
	}
	var out []action.Action
	for _, a := range all {
		if a.Type == typ {
			out = append(out, a)
		}
	}
	return out
}

func members(t *testing.T, h *ts.Harness, seg string) []string {
	t.Helper()
	var out []string
	for _, it := range h.Do("GET", "/segments/"+seg+"/members", nil, h.Admin()).Expect(t, 200, "").Map(t)["items"].([]any) {
		out = append(out, it.(map[string]any)["userId"].(string))
	}
	return out
}

// streamEvent is the DynamoDB stream event Lambda would deliver for the
// INSERT of a stored action: its item read back from the Actions table.
func streamEvent(t *testing.T, h *ts.Harness, tenantID, actionID string) events.DynamoDBEvent {
	t.Helper()
	key := map[string]types.AttributeValue{
		"pk": &types.AttributeValueMemberS{Value: tenantID + "#ACTION#" + actionID},
		"sk": &types.AttributeValueMemberS{Value: "ACTION"},
	}
	out, err := h.Deps.Actions.DB.GetItem(context.Background(), &dynamodb.GetItemInput{
		TableName: aws.String(h.Deps.Actions.Table), Key: key, ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		t.Fatalf("read action %s: %v", actionID, err)
	}
	if out.Item == nil {
		t.Fatalf("action %s is not stored", actionID)
	}
	return events.DynamoDBEvent{Records: []events.DynamoDBEventRecord{{
		EventID: "redelivery", EventName: "INSERT", EventSource: "aws:dynamodb", EventVersion: "1.1",
		Change: events.DynamoDBStreamRecord{
			Keys: ts.StreamImage(key), NewImage: ts.StreamImage(out.Item),
			SequenceNumber: "1", StreamViewType: "NEW_IMAGE",
		},
	}}}
}

// deliver runs the rules function's real handler on ev n times at once.
func deliver(t *testing.T, h *ts.Harness, ev events.DynamoDBEvent, n int) {
	t.Helper()
	handle, err := h.Deps.StreamHandler("rules")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, err := handle(context.Background(), ev)
			if err != nil || len(resp.BatchItemFailures) > 0 {
				t.Errorf("delivery %d: err %v, failures %v", i, err, resp.BatchItemFailures)
			}
		}()
	}
	wg.Wait()
}

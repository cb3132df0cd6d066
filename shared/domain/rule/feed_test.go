package rule_test

import (
	"context"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	ts "github.com/loyalty-platform/platform/shared/testkit"
)

// TestStreamSkipsFeedHeads: the records of a user's feed head (an INSERT
// for its first write, MODIFY after) hold the user's actions, but are not
// actions: the rules function runs nothing on them. The action's own
// record, delivered after, runs the rule.
func TestStreamSkipsFeedHeads(t *testing.T) {
	t.Parallel()
	h := ts.NewKeptFromStreams(t)
	uid := shopper(t, h, h.Admin(), "Heady")
	loc := shop(t, h, h.Admin(), "Head office")
	p := newPerk(t, h, h.Admin(), nil)
	newRule(t, h, ruleBody("CHECKIN_CREATED", []map[string]any{grant(p, 10)}))
	in := checkIn(t, h, h.Admin(), h.Tenant.ID, uid, loc)

	key := map[string]types.AttributeValue{
		"pk": &types.AttributeValueMemberS{Value: h.Tenant.ID + "#FEED#USER#" + uid},
		"sk": &types.AttributeValueMemberS{Value: "FEED"},
	}
	out, err := h.Deps.Actions.DB.GetItem(context.Background(), &dynamodb.GetItemInput{
		TableName: aws.String(h.Deps.Actions.Table), Key: key, ConsistentRead: aws.Bool(true),
	})
	if err != nil || out.Item == nil {
		t.Fatalf("the user's feed head: %v %v", out, err)
	}
	ev := streamEvent(t, h, h.Tenant.ID, in.ID)
	for _, name := range []string{"INSERT", "MODIFY"} {
		t.Run(name, func(t *testing.T) {
			head := ev
			head.Records = []events.DynamoDBEventRecord{ev.Records[0]}
			head.Records[0].EventName = name
			head.Records[0].Change.Keys, head.Records[0].Change.NewImage = streamImage(key), streamImage(out.Item)
			deliver(t, h, head, 1)
			if got := points(t, h, h.Admin(), uid); got[p] != 0 {
				t.Errorf("points after the head's record = %v, want none", got)
			}
		})
	}
	deliver(t, h, ev, 1)
	if got := points(t, h, h.Admin(), uid); got[p] != 10 {
		t.Errorf("points after the action's record = %v, want 10 of %s", got, p)
	}
}

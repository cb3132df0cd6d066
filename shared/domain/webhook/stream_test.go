package webhook_test

import (
	"context"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	ts "github.com/loyalty-platform/platform/shared/testkit"
)

// streamValue converts an item's attribute to a stream record's, as
// DynamoDB Streams hands it to Lambda.
func streamValue(v types.AttributeValue) events.DynamoDBAttributeValue {
	switch x := v.(type) {
	case *types.AttributeValueMemberS:
		return events.NewStringAttribute(x.Value)
	case *types.AttributeValueMemberN:
		return events.NewNumberAttribute(x.Value)
	case *types.AttributeValueMemberBOOL:
		return events.NewBooleanAttribute(x.Value)
	case *types.AttributeValueMemberL:
		out := make([]events.DynamoDBAttributeValue, len(x.Value))
		for i, e := range x.Value {
			out[i] = streamValue(e)
		}
		return events.NewListAttribute(out)
	case *types.AttributeValueMemberM:
		out := make(map[string]events.DynamoDBAttributeValue, len(x.Value))
		for k, e := range x.Value {
			out[k] = streamValue(e)
		}
		return events.NewMapAttribute(out)
	case *types.AttributeValueMemberSS:
		return events.NewStringSetAttribute(x.Value)
	}
	return events.NewNullAttribute()
}

// TestStreamRecordTwice: the Actions stream delivering a feed head's record
// again (a retried batch), within the queue's deduplication window or long
// after it, sends no event a second time.
func TestStreamRecordTwice(t *testing.T) {
	h := ts.New(t)
	st := ts.Stack(t)
	st.SetQueueClock(h.Clock)
	t.Cleanup(func() { st.SetQueueClock(nil) })
	r := newReceiver(t)
	register(t, h, r.URL)
	uid, _, _ := h.ActiveUser(t, "Twice", "Streamed")
	r.wait(t, h, 1)
	h.WaitStreams()
	h.WaitQueues()
	before := len(r.got())

	out, err := h.Deps.DB.GetItem(context.Background(), &dynamodb.GetItemInput{
		TableName: aws.String(h.Deps.Config.Tables.Actions), ConsistentRead: aws.Bool(true),
		Key: map[string]types.AttributeValue{
			"pk": &types.AttributeValueMemberS{Value: h.Tenant.ID + "#FEED#USER#" + uid},
			"sk": &types.AttributeValueMemberS{Value: "FEED"},
		},
	})
	if err != nil || out.Item == nil {
		t.Fatalf("read the user's feed head: %v %v", out, err)
	}
	image := map[string]events.DynamoDBAttributeValue{}
	for k, v := range out.Item {
		image[k] = streamValue(v)
	}
	rec := events.DynamoDBEventRecord{EventName: "MODIFY", EventSource: "aws:dynamodb", Change: events.DynamoDBStreamRecord{
		Keys: map[string]events.DynamoDBAttributeValue{"pk": image["pk"], "sk": image["sk"]}, NewImage: image,
		SequenceNumber: "1", StreamViewType: "NEW_IMAGE",
	}}
	for _, wait := range []time.Duration{0, 10 * time.Minute} {
		h.Clock.Advance(wait) // past SQS's five-minute deduplication window
		resp, err := h.Deps.Fn.WebhookFanout.Handle(context.Background(), events.DynamoDBEvent{Records: []events.DynamoDBEventRecord{rec}})
		if err != nil || len(resp.BatchItemFailures) != 0 {
			t.Fatalf("fan-out again: %+v %v", resp, err)
		}
		h.WaitQueues()
		time.Sleep(100 * time.Millisecond)
		h.WaitQueues()
		if got := len(r.got()); got != before {
			t.Errorf("after the record came again (+%v): %d requests, want %d", wait, got, before)
		}
	}
}

package webhook_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/loyalty-platform/platform/shared/platform/ddb"
	ts "github.com/loyalty-platform/platform/shared/testkit"
)

// lostAnswer is a DynamoDB whose first write of a delivery fails: the
// sender "crashes" after the endpoint got the event, before it recorded
// the delivery.
type lostAnswer struct {
	ddb.API
	failed atomic.Bool
}

func (l *lostAnswer) PutItem(ctx context.Context, in *dynamodb.PutItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error) {
	if pk, ok := in.Item["pk"].(*types.AttributeValueMemberS); ok && strings.Contains(pk.Value, "#WHDL#") && l.failed.CompareAndSwap(false, true) {
		return nil, errors.New("injected: the sender died before recording the delivery")
	}
	return l.API.PutItem(ctx, in, opts...)
}

// TestSenderCrashAfterDelivery: the endpoint got the event but the sender
// died before recording it: SQS delivers the message again once its
// visibility timeout ends and the endpoint gets the same webhook-id a
// second time (the documented at-least-once duplicate); then the delivery
// is recorded DELIVERED and nothing more is sent.
func TestSenderCrashAfterDelivery(t *testing.T) {
	h := ts.New(t)
	h.OnQueue("webhooksender")
	sender := h.Deps.Fn.WebhookSender.Webhooks
	sender.DB = &lostAnswer{API: sender.DB}
	st := ts.Stack(t)
	st.SetQueueClock(h.Clock)
	t.Cleanup(func() { st.SetQueueClock(nil) })
	r := newReceiver(t)
	id, _ := register(t, h, r.URL)
	h.ServerErrorsExpected = true
	h.Do("POST", "/webhooks/endpoints/"+id+"/test", nil, h.Admin()).Expect(t, 202, "")
	first := r.wait(t, h, 1)[0]
	h.Clock.Advance(6 * time.Minute) // past the queue's visibility timeout
	h.WaitQueues()
	got := r.wait(t, h, 2)
	if got[1].ID != first.ID {
		t.Errorf("redelivered %s, want the same webhook-id %s", got[1].ID, first.ID)
	}
	h.Clock.Advance(6 * time.Minute)
	h.WaitQueues()
	if n := len(r.got()); n != 2 {
		t.Errorf("%d requests, want 2", n)
	}
	d := h.Do("GET", "/webhooks/endpoints/"+id+"/deliveries", nil, h.Admin()).Expect(t, 200, "").Map(t)["items"].([]any)
	if len(d) != 1 || d[0].(map[string]any)["status"] != "DELIVERED" {
		t.Errorf("deliveries = %v", d)
	}
}

// TestQueueRedelivery: SQS handing the sender a message it already
// delivered (a lost delete, a second copy) sends nothing.
func TestQueueRedelivery(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	r := newReceiver(t)
	id, _ := register(t, h, r.URL)
	sent := h.Do("POST", "/webhooks/endpoints/"+id+"/test", nil, h.Admin()).Expect(t, 202, "").Map(t)
	first := r.wait(t, h, 1)[0]
	body, _ := json.Marshal(map[string]any{"k": "test", "t": h.Tenant.ID, "e": id, "ev": sent["id"], "ty": "webhook.test", "b": string(first.Body)})
	msg := events.SQSMessage{MessageId: "again", ReceiptHandle: "again", Body: string(body), Attributes: map[string]string{"MessageGroupId": id + ":TEST"}}
	for range 2 {
		resp, err := h.Deps.Fn.WebhookSender.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{msg}})
		if err != nil || len(resp.BatchItemFailures) != 0 {
			t.Fatalf("handle again: %v %v", resp, err)
		}
	}
	if n := len(r.got()); n != 1 {
		t.Errorf("%d requests after two redeliveries, want 1", n)
	}
}

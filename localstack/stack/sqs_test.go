package stack

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/loyalty-platform/platform/shared/aws/sqsapi"
	"github.com/loyalty-platform/platform/shared/contract/sam"
	"github.com/loyalty-platform/platform/shared/platform/clock"
)

// queueTemplate is the queues' test template: a FIFO delivery queue with a
// FIFO dead-letter queue and a sender function reading it with
// ReportBatchItemFailures; a FIFO queue with content-based deduplication;
// a standard queue read by a function without ReportBatchItemFailures.
const queueTemplate = `
Resources:
  SenderFunction:
    Type: AWS::Serverless::Function
    Properties:
      Timeout: 10
      Environment:
        Variables:
          DELIVERY_QUEUE_URL: !Ref DeliveryQueue
          DELIVERY_QUEUE_ARN: !GetAtt DeliveryQueue.Arn
          NOT_A_QUEUE: !Ref SomethingElse
      Events:
        Deliveries:
          Type: SQS
          Properties:
            Queue: !GetAtt DeliveryQueue.Arn
            BatchSize: 10
            FunctionResponseTypes:
              - ReportBatchItemFailures
            ScalingConfig:
              MaximumConcurrency: 5
  PlainFunction:
    Type: AWS::Serverless::Function
    Properties:
      Timeout: 5
      Environment:
        Variables:
          PLAIN_QUEUE_NAME: !GetAtt [PlainQueue, QueueName]
      Events:
        Plain:
          Type: SQS
          Properties:
            Queue: !GetAtt PlainQueue.Arn
  DeliveryQueue:
    Type: AWS::SQS::Queue
    Properties:
      FifoQueue: true
      VisibilityTimeout: 60
      MessageRetentionPeriod: 1209600
      RedrivePolicy:
        deadLetterTargetArn: !GetAtt DeadLetterQueue.Arn
        maxReceiveCount: 3
  DeadLetterQueue:
    Type: AWS::SQS::Queue
    Properties:
      FifoQueue: true
      MessageRetentionPeriod: 1209600
  ContentQueue:
    Type: AWS::SQS::Queue
    Properties:
      QueueName: content.fifo
      FifoQueue: true
      ContentBasedDeduplication: true
  PlainQueue:
    Type: AWS::SQS::Queue
    Properties:
      VisibilityTimeout: 30
`

// startQueues starts the SQS stand-in alone with template (the queue
// template when empty), on clk, inside a Stack that closes with the test.
func startQueues(t *testing.T, template string, clk clock.Clock) *Stack {
	t.Helper()
	if template == "" {
		template = queueTemplate
	}
	tpl, err := sam.Parse([]byte(template))
	if err != nil {
		t.Fatal(err)
	}
	q, err := StartSQS(tpl, clk)
	if err != nil {
		t.Fatalf("StartSQS: %v", err)
	}
	st := &Stack{Template: tpl, sqs: q, SQSEndpoint: q.Endpoint}
	t.Cleanup(func() {
		if err := st.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	return st
}

// queueURL returns the URL of a template queue, or ends the test.
func queueURL(t *testing.T, st *Stack, logicalID string) string {
	t.Helper()
	u, ok := st.QueueURL(logicalID)
	if !ok {
		t.Fatalf("no queue %s", logicalID)
	}
	return u
}

// sqsClient returns the platform's SQS client pointed at the stack.
func sqsClient(st *Stack) *sqsapi.Client {
	c := sqsapi.New(aws.Config{Region: DefaultRegion, Credentials: credentials.NewStaticCredentialsProvider("local", "local", "")})
	c.Endpoint = st.SQSEndpoint
	c.Backoff = 0
	return c
}

// sqsAnswer is an answer of the stand-in: its status, query error header
// and JSON body.
type sqsAnswer struct {
	status int
	query  string
	body   map[string]any
}

// errorType returns the short __type of an error answer.
func (a sqsAnswer) errorType() string {
	typ, _ := a.body["__type"].(string)
	return strings.TrimPrefix(typ, "com.amazonaws.sqs#")
}

// sqsCall makes the JSON request action with in.
func sqsCall(t *testing.T, st *Stack, action string, in any) sqsAnswer {
	t.Helper()
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequest(http.MethodPost, st.SQSEndpoint+"/", bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-amz-json-1.0")
	req.Header.Set("X-Amz-Target", "AmazonSQS."+action)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s: %v", action, err)
	}
	defer resp.Body.Close()
	a := sqsAnswer{status: resp.StatusCode, query: resp.Header.Get("x-amzn-query-error")}
	if err := json.NewDecoder(resp.Body).Decode(&a.body); err != nil {
		t.Fatalf("%s: decode the answer: %v", action, err)
	}
	return a
}

// sqsOK makes the request and ends the test unless it succeeds.
func sqsOK(t *testing.T, st *Stack, action string, in any) map[string]any {
	t.Helper()
	a := sqsCall(t, st, action, in)
	if a.status != http.StatusOK {
		t.Fatalf("%s: %d %v", action, a.status, a.body)
	}
	return a.body
}

// received is a message ReceiveMessage answered.
type received struct {
	ID, Handle, Body string
	Attrs            map[string]string
}

// receive receives up to max messages of a queue, with every attribute.
func receive(t *testing.T, st *Stack, url string, max int) []received {
	t.Helper()
	body := sqsOK(t, st, "ReceiveMessage", map[string]any{"QueueUrl": url, "MaxNumberOfMessages": max, "MessageSystemAttributeNames": []string{"All"}})
	var out []received
	msgs, _ := body["Messages"].([]any)
	for _, m := range msgs {
		mm := m.(map[string]any)
		r := received{ID: mm["MessageId"].(string), Handle: mm["ReceiptHandle"].(string), Body: mm["Body"].(string), Attrs: map[string]string{}}
		attrs, _ := mm["Attributes"].(map[string]any)
		for k, v := range attrs {
			r.Attrs[k] = v.(string)
		}
		if got, want := mm["MD5OfBody"], hexString(md5Sum([]byte(r.Body))); got != want {
			t.Errorf("MD5OfBody of %q: got %v, want %s", r.Body, got, want)
		}
		out = append(out, r)
	}
	return out
}

// bodies returns the bodies of msgs.
func bodies(msgs []received) []string {
	out := make([]string, len(msgs))
	for i, m := range msgs {
		out[i] = m.Body
	}
	return out
}

// counts returns a queue's visible, in-flight and delayed messages.
func counts(t *testing.T, st *Stack, url string) [3]string {
	t.Helper()
	body := sqsOK(t, st, "GetQueueAttributes", map[string]any{"QueueUrl": url, "AttributeNames": []string{"ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible", "ApproximateNumberOfMessagesDelayed"}})
	attrs := body["Attributes"].(map[string]any)
	return [3]string{attrs["ApproximateNumberOfMessages"].(string), attrs["ApproximateNumberOfMessagesNotVisible"].(string), attrs["ApproximateNumberOfMessagesDelayed"].(string)}
}

// fifo returns FIFO messages of group g with the given bodies, each its
// own deduplication id.
func fifo(g string, bodies ...string) []sqsapi.Message {
	out := make([]sqsapi.Message, len(bodies))
	for i, b := range bodies {
		out[i] = sqsapi.Message{Body: b, GroupID: g, DeduplicationID: g + "-" + b}
	}
	return out
}

func TestSQSFifoOrderAndGroups(t *testing.T) {
	t.Parallel()
	clk := &clock.Manual{}
	st := startQueues(t, "", clk)
	url := queueURL(t, st, "DeliveryQueue")
	ctx := context.Background()
	msgs := append(fifo("a", "a1", "a2", "a3"), fifo("b", "b1", "b2")...)
	msgs = append(msgs, fifo("a", "a4")...)
	if err := sqsClient(st).SendBatch(ctx, url, msgs); err != nil {
		t.Fatalf("SendBatch: %v", err)
	}
	// As many of one group as the receive takes, then the next group.
	a := receive(t, st, url, 3)
	if got, want := bodies(a), []string{"a1", "a2", "a3"}; !slices.Equal(got, want) {
		t.Fatalf("first receive: got %v, want %v", got, want)
	}
	// Group a is in flight: only b comes.
	b := receive(t, st, url, 10)
	if got, want := bodies(b), []string{"b1", "b2"}; !slices.Equal(got, want) {
		t.Fatalf("second receive: got %v, want %v", got, want)
	}
	if got := receive(t, st, url, 10); len(got) != 0 {
		t.Fatalf("third receive: got %v, want nothing while both groups are in flight", bodies(got))
	}
	if got, want := counts(t, st, url), [3]string{"1", "5", "0"}; got != want {
		t.Errorf("counts (visible, in flight, delayed): got %v, want %v", got, want)
	}
	// Deleting a1 and a2 leaves a3 in flight: a4 waits.
	for _, m := range a[:2] {
		sqsOK(t, st, "DeleteMessage", map[string]any{"QueueUrl": url, "ReceiptHandle": m.Handle})
	}
	if got := receive(t, st, url, 10); len(got) != 0 {
		t.Fatalf("receive with a3 in flight: got %v, want nothing", bodies(got))
	}
	// Once the batch of group b is visible again, it comes first, its
	// receive count one higher; a3 came back at the same time.
	clk.Advance(61 * time.Second)
	again := receive(t, st, url, 10)
	if got, want := bodies(again), []string{"a3", "a4", "b1", "b2"}; !slices.Equal(got, want) {
		t.Fatalf("receive after the visibility timeout: got %v, want %v", got, want)
	}
	for _, m := range again {
		want := "2"
		if m.Body == "a4" {
			want = "1"
		}
		if m.Attrs["ApproximateReceiveCount"] != want {
			t.Errorf("%s: ApproximateReceiveCount %s, want %s", m.Body, m.Attrs["ApproximateReceiveCount"], want)
		}
	}
	// The handle of the first receive of a3 has expired.
	if got := sqsCall(t, st, "DeleteMessage", map[string]any{"QueueUrl": url, "ReceiptHandle": a[2].Handle}); got.status != 400 || got.errorType() != "InvalidParameterValue" ||
		!strings.Contains(got.body["message"].(string), "The receipt handle has expired") {
		t.Errorf("delete with an expired handle: got %+v, want 400 InvalidParameterValue (expired)", got)
	}
	// Deleting a message twice succeeds.
	for range 2 {
		sqsOK(t, st, "DeleteMessage", map[string]any{"QueueUrl": url, "ReceiptHandle": again[0].Handle})
	}
	batch := []map[string]any{}
	for i, m := range again[1:] {
		batch = append(batch, map[string]any{"Id": "d" + strconv.Itoa(i), "ReceiptHandle": m.Handle})
	}
	batch = append(batch, map[string]any{"Id": "bad", "ReceiptHandle": "not-a-handle"})
	out := sqsOK(t, st, "DeleteMessageBatch", map[string]any{"QueueUrl": url, "Entries": batch})
	if got := len(out["Successful"].([]any)); got != 3 {
		t.Errorf("DeleteMessageBatch: %d deleted, want 3: %v", got, out)
	}
	if f := out["Failed"].([]any); len(f) != 1 || f[0].(map[string]any)["Code"] != "ReceiptHandleIsInvalid" || f[0].(map[string]any)["Id"] != "bad" {
		t.Errorf("DeleteMessageBatch failed: got %v, want the bad handle's ReceiptHandleIsInvalid", f)
	}
	if got, want := counts(t, st, url), [3]string{"0", "0", "0"}; got != want {
		t.Errorf("counts after the deletes: got %v, want %v", got, want)
	}
}

// TestSQSGroupInFlight: a group with any message in flight yields
// nothing, even when an earlier one is visible again.
func TestSQSGroupInFlight(t *testing.T) {
	t.Parallel()
	st := startQueues(t, "", &clock.Manual{})
	url := queueURL(t, st, "DeliveryQueue")
	ctx := context.Background()
	c := sqsClient(st)
	if err := c.SendBatch(ctx, url, fifo("a", "a1", "a2", "a3")); err != nil {
		t.Fatal(err)
	}
	got := receive(t, st, url, 2)
	if err := c.ChangeVisibility(ctx, url, got[0].Handle, 0); err != nil {
		t.Fatal(err)
	}
	if again := receive(t, st, url, 10); len(again) != 0 {
		t.Errorf("receive with a2 in flight: got %v, want nothing", bodies(again))
	}
	if err := c.ChangeVisibility(ctx, url, got[1].Handle, 0); err != nil {
		t.Fatal(err)
	}
	if again, want := bodies(receive(t, st, url, 10)), []string{"a1", "a2", "a3"}; !slices.Equal(again, want) {
		t.Errorf("receive with the group free: got %v, want %v", again, want)
	}
}

func TestSQSDeduplication(t *testing.T) {
	t.Parallel()
	clk := &clock.Manual{}
	st := startQueues(t, "", clk)
	ctx := context.Background()
	for _, tt := range []struct {
		name, queue string
		msg         sqsapi.Message
	}{
		{"deduplication id", "DeliveryQueue", sqsapi.Message{Body: "hello", GroupID: "g", DeduplicationID: "endpoint-1#event-1"}},
		{"content", "ContentQueue", sqsapi.Message{Body: "hello", GroupID: "g"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			url := queueURL(t, st, tt.queue)
			send := func() string {
				body := sqsOK(t, st, "SendMessage", map[string]any{"QueueUrl": url, "MessageBody": tt.msg.Body, "MessageGroupId": tt.msg.GroupID, "MessageDeduplicationId": tt.msg.DeduplicationID})
				return body["MessageId"].(string)
			}
			first := send()
			if second := send(); second != first {
				t.Errorf("a duplicate within 5 minutes: MessageId %s, want the first's %s", second, first)
			}
			if err := sqsClient(st).SendBatch(ctx, url, []sqsapi.Message{tt.msg}); err != nil {
				t.Fatalf("SendBatch of a duplicate: %v", err)
			}
			if got, want := counts(t, st, url), [3]string{"1", "0", "0"}; got != want {
				t.Errorf("counts after duplicates: got %v, want %v", got, want)
			}
			clk.Advance(5 * time.Minute)
			if third := send(); third == first {
				t.Errorf("after 5 minutes: MessageId %s, want a new message", third)
			}
			if got, want := counts(t, st, url), [3]string{"2", "0", "0"}; got != want {
				t.Errorf("counts after the window: got %v, want %v", got, want)
			}
		})
	}
}

func TestSQSChangeVisibility(t *testing.T) {
	t.Parallel()
	clk := &clock.Manual{}
	st := startQueues(t, "", clk)
	url := queueURL(t, st, "DeliveryQueue")
	ctx := context.Background()
	c := sqsClient(st)
	if err := c.SendBatch(ctx, url, fifo("g", "m1")); err != nil {
		t.Fatal(err)
	}
	m := receive(t, st, url, 1)[0]
	if err := c.ChangeVisibility(ctx, url, m.Handle, 10*time.Minute); err != nil {
		t.Fatalf("ChangeVisibility: %v", err)
	}
	clk.Advance(9 * time.Minute)
	if got := receive(t, st, url, 1); len(got) != 0 {
		t.Fatalf("after 9 minutes: got %v, want nothing", bodies(got))
	}
	clk.Advance(time.Minute)
	got := receive(t, st, url, 1)
	if len(got) != 1 || got[0].Attrs["ApproximateReceiveCount"] != "2" {
		t.Fatalf("after 10 minutes: got %+v, want m1 received a second time", got)
	}
	// At most 12 hours from the receive: an hour later, 11 hours is the
	// most.
	if err := c.ChangeVisibility(ctx, url, got[0].Handle, 2*time.Hour); err != nil {
		t.Fatalf("ChangeVisibility: %v", err)
	}
	clk.Advance(time.Hour)
	err := c.ChangeVisibility(ctx, url, got[0].Handle, 12*time.Hour)
	var sqsErr *sqsapi.Error
	if !errors.As(err, &sqsErr) || sqsErr.Type != "InvalidParameterValue" || !strings.Contains(sqsErr.Message, "beyond the limit") {
		t.Errorf("ChangeVisibility past 12 hours from the receive: got %v, want InvalidParameterValue", err)
	}
	if err := c.ChangeVisibility(ctx, url, got[0].Handle, 11*time.Hour); err != nil {
		t.Errorf("ChangeVisibility to 12 hours from the receive: %v", err)
	}
	// A stale handle, and a message not in flight.
	if err := c.ChangeVisibility(ctx, url, m.Handle, time.Minute); !errors.As(err, &sqsErr) || sqsErr.Type != "InvalidParameterValue" {
		t.Errorf("ChangeVisibility with the first receive's handle: got %v, want InvalidParameterValue", err)
	}
	if err := c.ChangeVisibility(ctx, url, got[0].Handle, 0); err != nil {
		t.Errorf("ChangeVisibility to 0: %v", err)
	}
	if err := c.ChangeVisibility(ctx, url, got[0].Handle, time.Minute); !errors.As(err, &sqsErr) || sqsErr.Type != "MessageNotInflight" {
		t.Errorf("ChangeVisibility of a visible message: got %v, want MessageNotInflight", err)
	}
}

func TestSQSRedrive(t *testing.T) {
	t.Parallel()
	clk := &clock.Manual{}
	st := startQueues(t, "", clk)
	url, dlq := queueURL(t, st, "DeliveryQueue"), queueURL(t, st, "DeadLetterQueue")
	if err := sqsClient(st).SendBatch(context.Background(), url, append(fifo("g", "poison", "next"), fifo("h", "other")...)); err != nil {
		t.Fatal(err)
	}
	var id string
	for i := 1; i <= 3; i++ {
		got := receive(t, st, url, 1)
		if len(got) != 1 || got[0].Body != "poison" || got[0].Attrs["ApproximateReceiveCount"] != strconv.Itoa(i) {
			t.Fatalf("receive %d: got %+v, want poison received %d times", i, got, i)
		}
		id = got[0].ID
		clk.Advance(time.Minute)
	}
	// The fourth receive moves it to the dead-letter queue and goes on
	// with its group.
	if got, want := bodies(receive(t, st, url, 10)), []string{"next", "other"}; !slices.Equal(got, want) {
		t.Errorf("receive after 3 receives: got %v, want %v", got, want)
	}
	moved := receive(t, st, dlq, 10)
	if len(moved) != 1 || moved[0].ID != id || moved[0].Body != "poison" || moved[0].Attrs["MessageGroupId"] != "g" {
		t.Errorf("dead-letter queue: got %+v, want poison with its id %s and group", moved, id)
	}
}

func TestSQSDelayAndRetention(t *testing.T) {
	t.Parallel()
	clk := &clock.Manual{}
	st := startQueues(t, "", clk)
	url := queueURL(t, st, "PlainQueue")
	sqsOK(t, st, "SendMessage", map[string]any{"QueueUrl": url, "MessageBody": "later", "DelaySeconds": 10})
	sqsOK(t, st, "SendMessage", map[string]any{"QueueUrl": url, "MessageBody": "now"})
	if got, want := counts(t, st, url), [3]string{"1", "0", "1"}; got != want {
		t.Errorf("counts: got %v, want %v", got, want)
	}
	if got, want := bodies(receive(t, st, url, 10)), []string{"now"}; !slices.Equal(got, want) {
		t.Errorf("receive: got %v, want %v", got, want)
	}
	clk.Advance(10 * time.Second)
	if got, want := bodies(receive(t, st, url, 10)), []string{"later"}; !slices.Equal(got, want) {
		t.Errorf("receive after the delay: got %v, want %v", got, want)
	}
	clk.Advance(4 * 24 * time.Hour)
	if got, want := counts(t, st, url), [3]string{"0", "0", "0"}; got != want {
		t.Errorf("counts after the retention period: got %v, want %v", got, want)
	}
}

func TestSQSLongPoll(t *testing.T) {
	t.Parallel()
	st := startQueues(t, "", nil)
	url := queueURL(t, st, "PlainQueue")
	done := make(chan []any, 1)
	start := time.Now()
	go func() {
		b, _ := json.Marshal(map[string]any{"QueueUrl": url, "WaitTimeSeconds": 5})
		req, _ := http.NewRequest(http.MethodPost, st.SQSEndpoint, bytes.NewReader(b))
		req.Header.Set("X-Amz-Target", "AmazonSQS.ReceiveMessage")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			done <- nil
			return
		}
		defer resp.Body.Close()
		var out map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&out)
		msgs, _ := out["Messages"].([]any)
		done <- msgs
	}()
	time.Sleep(200 * time.Millisecond)
	sqsOK(t, st, "SendMessage", map[string]any{"QueueUrl": url, "MessageBody": "wake"})
	msgs := <-done
	if len(msgs) != 1 || time.Since(start) > 2*time.Second {
		t.Errorf("long poll: got %v after %s, want the message at once", msgs, time.Since(start))
	}
}

func TestSQSErrors(t *testing.T) {
	t.Parallel()
	st := startQueues(t, "", nil)
	fifoURL, plainURL := queueURL(t, st, "DeliveryQueue"), queueURL(t, st, "PlainQueue")
	entries := func(n int) []map[string]any {
		out := make([]map[string]any, n)
		for i := range out {
			out[i] = map[string]any{"Id": "e" + strconv.Itoa(i), "MessageBody": "x"}
		}
		return out
	}
	tests := []struct {
		name      string
		action    string
		in        any
		wantType  string
		wantQuery string
	}{
		{"no such queue", "SendMessage", map[string]any{"QueueUrl": st.SQSEndpoint + "/000000000000/nothing", "MessageBody": "x"}, "QueueDoesNotExist", "AWS.SimpleQueueService.NonExistentQueue"},
		{"another account", "SendMessage", map[string]any{"QueueUrl": st.SQSEndpoint + "/123456789012/PlainQueue", "MessageBody": "x"}, "QueueDoesNotExist", "AWS.SimpleQueueService.NonExistentQueue"},
		{"no queue url", "SendMessage", map[string]any{"MessageBody": "x"}, "MissingParameter", "MissingParameter"},
		{"no body", "SendMessage", map[string]any{"QueueUrl": plainURL}, "MissingParameter", "MissingParameter"},
		{"body too long", "SendMessage", map[string]any{"QueueUrl": plainURL, "MessageBody": strings.Repeat("x", 256<<10+1)}, "InvalidParameterValue", "InvalidParameterValue"},
		{"invalid characters", "SendMessage", map[string]any{"QueueUrl": plainURL, "MessageBody": "ab"}, "InvalidMessageContents", "InvalidMessageContents"},
		{"message attributes", "SendMessage", map[string]any{"QueueUrl": plainURL, "MessageBody": "x", "MessageAttributes": map[string]any{"a": map[string]any{"DataType": "String", "StringValue": "b"}}}, "InvalidParameterValue", "InvalidParameterValue"},
		{"group on a standard queue", "SendMessage", map[string]any{"QueueUrl": plainURL, "MessageBody": "x", "MessageGroupId": "g"}, "InvalidParameterValue", "InvalidParameterValue"},
		{"deduplication id on a standard queue", "SendMessage", map[string]any{"QueueUrl": plainURL, "MessageBody": "x", "MessageDeduplicationId": "d"}, "InvalidParameterValue", "InvalidParameterValue"},
		{"delay past 15 minutes", "SendMessage", map[string]any{"QueueUrl": plainURL, "MessageBody": "x", "DelaySeconds": 901}, "InvalidParameterValue", "InvalidParameterValue"},
		{"fifo without a group", "SendMessage", map[string]any{"QueueUrl": fifoURL, "MessageBody": "x", "MessageDeduplicationId": "d"}, "MissingParameter", "MissingParameter"},
		{"fifo without a deduplication id", "SendMessage", map[string]any{"QueueUrl": fifoURL, "MessageBody": "x", "MessageGroupId": "g"}, "InvalidParameterValue", "InvalidParameterValue"},
		{"fifo with a per-message delay", "SendMessage", map[string]any{"QueueUrl": fifoURL, "MessageBody": "x", "MessageGroupId": "g", "MessageDeduplicationId": "d", "DelaySeconds": 5}, "InvalidParameterValue", "InvalidParameterValue"},
		{"group id too long", "SendMessage", map[string]any{"QueueUrl": fifoURL, "MessageBody": "x", "MessageGroupId": strings.Repeat("g", 129), "MessageDeduplicationId": "d"}, "InvalidParameterValue", "InvalidParameterValue"},
		{"deduplication id with a space", "SendMessage", map[string]any{"QueueUrl": fifoURL, "MessageBody": "x", "MessageGroupId": "g", "MessageDeduplicationId": "a b"}, "InvalidParameterValue", "InvalidParameterValue"},
		{"empty batch", "SendMessageBatch", map[string]any{"QueueUrl": plainURL, "Entries": []any{}}, "EmptyBatchRequest", "AWS.SimpleQueueService.EmptyBatchRequest"},
		{"eleven entries", "SendMessageBatch", map[string]any{"QueueUrl": plainURL, "Entries": entries(11)}, "TooManyEntriesInBatchRequest", "AWS.SimpleQueueService.TooManyEntriesInBatchRequest"},
		{"repeated ids", "SendMessageBatch", map[string]any{"QueueUrl": plainURL, "Entries": []map[string]any{{"Id": "a", "MessageBody": "x"}, {"Id": "a", "MessageBody": "y"}}}, "BatchEntryIdsNotDistinct", "AWS.SimpleQueueService.BatchEntryIdsNotDistinct"},
		{"invalid id", "SendMessageBatch", map[string]any{"QueueUrl": plainURL, "Entries": []map[string]any{{"Id": "a.b", "MessageBody": "x"}}}, "InvalidBatchEntryId", "AWS.SimpleQueueService.InvalidBatchEntryId"},
		{"batch too long", "SendMessageBatch", map[string]any{"QueueUrl": plainURL, "Entries": []map[string]any{{"Id": "a", "MessageBody": strings.Repeat("x", 200<<10)}, {"Id": "b", "MessageBody": strings.Repeat("x", 100<<10)}}}, "BatchRequestTooLong", "AWS.SimpleQueueService.BatchRequestTooLong"},
		{"eleven messages", "ReceiveMessage", map[string]any{"QueueUrl": plainURL, "MaxNumberOfMessages": 11}, "InvalidParameterValue", "InvalidParameterValue"},
		{"wait past 20 seconds", "ReceiveMessage", map[string]any{"QueueUrl": plainURL, "WaitTimeSeconds": 21}, "InvalidParameterValue", "InvalidParameterValue"},
		{"visibility past 12 hours", "ChangeMessageVisibility", map[string]any{"QueueUrl": plainURL, "ReceiptHandle": "x", "VisibilityTimeout": 43201}, "InvalidParameterValue", "InvalidParameterValue"},
		{"no visibility", "ChangeMessageVisibility", map[string]any{"QueueUrl": plainURL, "ReceiptHandle": "x"}, "MissingParameter", "MissingParameter"},
		{"invalid receipt handle", "DeleteMessage", map[string]any{"QueueUrl": plainURL, "ReceiptHandle": "not-a-handle"}, "ReceiptHandleIsInvalid", "ReceiptHandleIsInvalid"},
		{"another queue's receipt handle", "DeleteMessage", map[string]any{"QueueUrl": plainURL, "ReceiptHandle": newHandle("DeliveryQueue.fifo", &message{id: "m"})}, "ReceiptHandleIsInvalid", "ReceiptHandleIsInvalid"},
		{"unknown queue name", "GetQueueUrl", map[string]any{"QueueName": "nothing"}, "QueueDoesNotExist", "AWS.SimpleQueueService.NonExistentQueue"},
		{"unknown attribute", "GetQueueAttributes", map[string]any{"QueueUrl": plainURL, "AttributeNames": []string{"Colour"}}, "InvalidAttributeName", "InvalidAttributeName"},
		{"number as text", "ReceiveMessage", map[string]any{"QueueUrl": plainURL, "MaxNumberOfMessages": "2"}, "SerializationException", "SerializationException"},
		{"unknown action", "PurgeQueue", map[string]any{"QueueUrl": plainURL}, "UnsupportedOperation", "AWS.SimpleQueueService.UnsupportedOperation"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := sqsCall(t, st, tt.action, tt.in)
			if got.status != http.StatusBadRequest || got.errorType() != tt.wantType || got.query != tt.wantQuery+";Sender" || got.body["message"] == "" {
				t.Errorf("%s: got %d %v (x-amzn-query-error %q), want 400 %s (%s;Sender) with a message", tt.action, got.status, got.body, got.query, tt.wantType, tt.wantQuery)
			}
		})
	}
	// An entry of a batch is refused alone.
	out := sqsOK(t, st, "SendMessageBatch", map[string]any{"QueueUrl": fifoURL, "Entries": []map[string]any{
		{"Id": "ok", "MessageBody": "x", "MessageGroupId": "g", "MessageDeduplicationId": "d"},
		{"Id": "no-group", "MessageBody": "y", "MessageDeduplicationId": "e"},
	}})
	if s, f := out["Successful"].([]any), out["Failed"].([]any); len(s) != 1 || len(f) != 1 ||
		!reflect.DeepEqual(f[0], map[string]any{"Id": "no-group", "SenderFault": true, "Code": "MissingParameter", "Message": "The request must contain the parameter MessageGroupId."}) {
		t.Errorf("SendMessageBatch: got %v, want ok sent and no-group refused", out)
	}
	// The client sends a refused entry once more, then names it.
	err := sqsClient(st).SendBatch(context.Background(), fifoURL, []sqsapi.Message{{Body: "z", DeduplicationID: "z"}})
	var entryErr *sqsapi.EntryError
	if !errors.As(err, &entryErr) || entryErr.ID != "0" || entryErr.Code != "MissingParameter" || !entryErr.SenderFault {
		t.Errorf("SendBatch without a group: got %v, want the entry refused with MissingParameter", err)
	}
	var apiErr *sqsapi.Error
	err = sqsClient(st).SendBatch(context.Background(), st.SQSEndpoint+"/000000000000/nothing", []sqsapi.Message{{Body: "z"}})
	if !errors.As(err, &apiErr) || apiErr.Type != "QueueDoesNotExist" || apiErr.Status != 400 {
		t.Errorf("SendBatch to no queue: got %v, want 400 QueueDoesNotExist", err)
	}
	// Not the JSON protocol.
	resp, err := http.Post(st.SQSEndpoint, "application/x-www-form-urlencoded", strings.NewReader("Action=ListQueues&Version=2012-11-05"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Errorf("a Query protocol request: got %d, want 400", resp.StatusCode)
	}
}

func TestSQSQueueSetup(t *testing.T) {
	t.Parallel()
	st := startQueues(t, "", nil)
	env := st.Env()
	for _, want := range []string{
		"AWS_ENDPOINT_URL_SQS=" + st.SQSEndpoint,
		"DELIVERY_QUEUE_URL=" + st.SQSEndpoint + "/000000000000/DeliveryQueue.fifo",
		"DELIVERY_QUEUE_ARN=arn:aws:sqs:" + region() + ":000000000000:DeliveryQueue.fifo",
		"PLAIN_QUEUE_NAME=PlainQueue",
	} {
		if !slices.Contains(env, want) {
			t.Errorf("Env %v: lacks %s", env, want)
		}
	}
	for _, kv := range env {
		if strings.HasPrefix(kv, "NOT_A_QUEUE=") {
			t.Errorf("Env has %s, which names no queue", kv)
		}
	}
	if u := queueURL(t, st, "ContentQueue"); !strings.HasSuffix(u, "/content.fifo") {
		t.Errorf("ContentQueue URL %s: want its QueueName", u)
	}

	bad := []struct {
		name, template, wantErr string
	}{
		{"one variable, two queues", `
Resources:
  AFunction:
    Type: AWS::Serverless::Function
    Properties:
      Environment:
        Variables:
          QUEUE_URL: !Ref AQueue
  BFunction:
    Type: AWS::Serverless::Function
    Properties:
      Environment:
        Variables:
          QUEUE_URL: !Ref BQueue
  AQueue:
    Type: AWS::SQS::Queue
  BQueue:
    Type: AWS::SQS::Queue
`, "AFunction sets QUEUE_URL to"},
		{"a standard dead-letter queue for a FIFO queue", `
Resources:
  AQueue:
    Type: AWS::SQS::Queue
    Properties:
      FifoQueue: true
      RedrivePolicy:
        deadLetterTargetArn: !GetAtt BQueue.Arn
        maxReceiveCount: 2
  BQueue:
    Type: AWS::SQS::Queue
`, "queue AQueue: the dead-letter queue BQueue is no other queue of its kind"},
		{"a FIFO name without .fifo", `
Resources:
  AQueue:
    Type: AWS::SQS::Queue
    Properties:
      QueueName: plain
      FifoQueue: true
`, `queue AQueue: the name "plain" of a FIFO queue ends in .fifo`},
	}
	for _, tt := range bad {
		t.Run(tt.name, func(t *testing.T) {
			tpl, err := sam.Parse([]byte(tt.template))
			if err != nil {
				t.Fatal(err)
			}
			s, err := StartSQS(tpl, nil)
			if err == nil {
				s.Close()
				t.Fatal("StartSQS: no error")
			}
			if !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("StartSQS: got %v, want %q", err, tt.wantErr)
			}
		})
	}
}
func TestSQSAttributes(t *testing.T) {
	t.Parallel()
	clk := &clock.Manual{}
	st := startQueues(t, "", clk)
	url := queueURL(t, st, "DeliveryQueue")
	before := clk.Now().UnixMilli()
	if err := sqsClient(st).SendBatch(context.Background(), url, fifo("g", "one", "two")); err != nil {
		t.Fatal(err)
	}
	got := receive(t, st, url, 10)
	if len(got) != 2 {
		t.Fatalf("received %v, want both", bodies(got))
	}
	seq := make([]uint64, 2)
	for i, m := range got {
		sent, _ := strconv.ParseInt(m.Attrs["SentTimestamp"], 10, 64)
		first, _ := strconv.ParseInt(m.Attrs["ApproximateFirstReceiveTimestamp"], 10, 64)
		if sent < before || first < sent {
			t.Errorf("%s: SentTimestamp %d, ApproximateFirstReceiveTimestamp %d; want from %d on, in order", m.Body, sent, first, before)
		}
		seq[i], _ = strconv.ParseUint(m.Attrs["SequenceNumber"], 10, 64)
		if len(m.Attrs["SequenceNumber"]) != 20 {
			t.Errorf("SequenceNumber %q: want 20 digits", m.Attrs["SequenceNumber"])
		}
		want := map[string]string{"ApproximateReceiveCount": "1", "MessageGroupId": "g", "MessageDeduplicationId": "g-" + m.Body, "SenderId": queueAccount}
		for k, v := range want {
			if m.Attrs[k] != v {
				t.Errorf("%s: %s = %q, want %q", m.Body, k, m.Attrs[k], v)
			}
		}
	}
	if seq[1] <= seq[0] {
		t.Errorf("sequence numbers %v: want increasing", seq)
	}
	// Without attribute names, none.
	body := sqsOK(t, st, "ReceiveMessage", map[string]any{"QueueUrl": queueURL(t, st, "PlainQueue")})
	if len(body) != 0 {
		t.Errorf("receive from an empty queue: got %v, want {}", body)
	}
	attrs := sqsOK(t, st, "GetQueueAttributes", map[string]any{"QueueUrl": url, "AttributeNames": []string{"All"}})["Attributes"].(map[string]any)
	for k, v := range map[string]string{
		"QueueArn": "arn:aws:sqs:" + region() + ":000000000000:DeliveryQueue.fifo", "FifoQueue": "true", "VisibilityTimeout": "60",
		"RedrivePolicy": `{"deadLetterTargetArn":"arn:aws:sqs:` + region() + `:000000000000:DeadLetterQueue.fifo","maxReceiveCount":3}`,
	} {
		if attrs[k] != v {
			t.Errorf("attribute %s = %v, want %s", k, attrs[k], v)
		}
	}
	if got := sqsOK(t, st, "GetQueueUrl", map[string]any{"QueueName": "DeliveryQueue.fifo"})["QueueUrl"]; got != url {
		t.Errorf("GetQueueUrl: got %v, want %s", got, url)
	}
	if !strings.HasPrefix(url, st.SQSEndpoint+"/000000000000/") {
		t.Errorf("queue URL %s: want %s/000000000000/<name>", url, st.SQSEndpoint)
	}
}

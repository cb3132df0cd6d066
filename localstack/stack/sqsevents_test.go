package stack

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/loyalty-platform/platform/shared/aws/sqsapi"
	"github.com/loyalty-platform/platform/shared/platform/clock"
)

// waitQueues waits for QueueIdle, or ends the test after 10 seconds.
func waitQueues(t *testing.T, st *Stack) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := st.QueueIdle(ctx); err != nil {
		t.Fatalf("QueueIdle: %v", err)
	}
}

// send sends msgs with the platform's client, or ends the test.
func send(t *testing.T, st *Stack, logicalID string, msgs []sqsapi.Message) {
	t.Helper()
	if err := sqsClient(st).SendBatch(context.Background(), queueURL(t, st, logicalID), msgs); err != nil {
		t.Fatalf("SendBatch: %v", err)
	}
}

// delivered is one message as a handler got it.
type delivered struct {
	body, count string
}

// queueRecorder is a handler that records what it gets.
type queueRecorder struct {
	mu  sync.Mutex
	got []delivered
}

func (r *queueRecorder) add(m events.SQSMessage) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.got = append(r.got, delivered{m.Body, m.Attributes["ApproximateReceiveCount"]})
}

func (r *queueRecorder) all() []delivered {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.got)
}

func TestQueueOrderPerGroup(t *testing.T) {
	t.Parallel()
	st := startQueues(t, "", nil)
	var mu sync.Mutex
	got := map[string][]string{}
	busy := map[string]bool{}
	var overlaps []string
	st.OnQueue("sender", func(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
		groups := map[string]bool{}
		mu.Lock()
		for _, r := range ev.Records {
			g := r.Attributes["MessageGroupId"]
			if busy[g] && !groups[g] {
				overlaps = append(overlaps, g)
			}
			groups[g], busy[g] = true, true
		}
		mu.Unlock()
		time.Sleep(5 * time.Millisecond)
		mu.Lock()
		for _, r := range ev.Records {
			g := r.Attributes["MessageGroupId"]
			got[g] = append(got[g], r.Body)
			busy[g] = false
		}
		mu.Unlock()
		return events.SQSEventResponse{}, nil
	})
	const groups, each = 4, 15
	var msgs []sqsapi.Message
	want := map[string][]string{}
	for i := range each {
		for g := range groups {
			group := fmt.Sprintf("g%d", g)
			body := fmt.Sprintf("%s-%02d", group, i)
			msgs = append(msgs, sqsapi.Message{Body: body, GroupID: group, DeduplicationID: body})
			want[group] = append(want[group], body)
		}
	}
	send(t, st, "DeliveryQueue", msgs)
	waitQueues(t, st)
	mu.Lock()
	defer mu.Unlock()
	for g, w := range want {
		if !slices.Equal(got[g], w) {
			t.Errorf("group %s: got %v, want %v", g, got[g], w)
		}
	}
	if len(overlaps) > 0 {
		t.Errorf("groups handled in two batches at once: %v", overlaps)
	}
	if c := counts(t, st, queueURL(t, st, "DeliveryQueue")); c != [3]string{"0", "0", "0"} {
		t.Errorf("counts after delivery: %v, want none left", c)
	}
}

// TestQueueSlowGroup: a handler that takes 2 seconds on group a's message
// holds back neither group b's messages nor their deletion.
func TestQueueSlowGroup(t *testing.T) {
	t.Parallel()
	st := startQueues(t, "", nil)
	started := make(chan struct{})
	var once sync.Once
	var mu sync.Mutex
	var bDone time.Time
	var aDone time.Time
	bCount := 0
	st.OnQueue("sender", func(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
		for _, r := range ev.Records {
			if r.Attributes["MessageGroupId"] == "a" {
				once.Do(func() { close(started) })
				select {
				case <-time.After(2 * time.Second):
				case <-ctx.Done():
				}
				mu.Lock()
				aDone = time.Now()
				mu.Unlock()
				continue
			}
			mu.Lock()
			bCount++
			if bCount == 20 {
				bDone = time.Now()
			}
			mu.Unlock()
		}
		return events.SQSEventResponse{}, nil
	})
	send(t, st, "DeliveryQueue", fifo("a", "a1"))
	select {
	case <-started:
	case <-time.After(5 * time.Second):
		t.Fatal("group a's message was not delivered")
	}
	sent := time.Now()
	var bs []string
	for i := range 20 {
		bs = append(bs, fmt.Sprintf("b%02d", i))
	}
	send(t, st, "DeliveryQueue", fifo("b", bs...))
	waitQueues(t, st)
	mu.Lock()
	defer mu.Unlock()
	if bCount != 20 || bDone.IsZero() || aDone.IsZero() {
		t.Fatalf("delivered %d of group b (done %v), group a done %v", bCount, bDone, aDone)
	}
	took := bDone.Sub(sent)
	t.Logf("group b's 20 messages handled %s after they were sent; group a's 2 s handler ended %s after", took.Round(time.Millisecond), aDone.Sub(sent).Round(time.Millisecond))
	if took > time.Second || !bDone.Before(aDone) {
		t.Errorf("group b done %s after it was sent, group a %s: want b well before a", took, aDone.Sub(sent))
	}
}

// TestQueueRetryLater: a handler that fails a message, setting its
// visibility timeout, gets it again once the clock passes the timeout,
// with ApproximateReceiveCount one higher; its group waits meanwhile,
// another does not.
func TestQueueRetryLater(t *testing.T) {
	t.Parallel()
	st := startQueues(t, "", nil)
	clk := &clock.Manual{}
	st.SetQueueClock(clk)
	url := queueURL(t, st, "DeliveryQueue")
	client := sqsClient(st)
	rec := &queueRecorder{}
	st.OnQueue("sender", func(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
		var resp events.SQSEventResponse
		failed := map[string]bool{}
		for _, r := range ev.Records {
			g := r.Attributes["MessageGroupId"]
			if failed[g] {
				// A FIFO handler fails the rest of a failed group too.
				resp.BatchItemFailures = append(resp.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: r.MessageId})
				continue
			}
			rec.add(r)
			if r.Body == "x" && r.Attributes["ApproximateReceiveCount"] == "1" {
				if err := client.ChangeVisibility(ctx, url, r.ReceiptHandle, 10*time.Minute); err != nil {
					return resp, err
				}
				failed[g] = true
				resp.BatchItemFailures = append(resp.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: r.MessageId})
			}
		}
		return resp, nil
	})
	send(t, st, "DeliveryQueue", append(fifo("g", "x", "y"), fifo("h", "z")...))
	waitQueues(t, st)
	if got, want := rec.all(), []delivered{{"x", "1"}, {"z", "1"}}; !slices.Equal(got, want) {
		t.Fatalf("before the timeout: got %v, want %v", got, want)
	}
	clk.Advance(9 * time.Minute)
	waitQueues(t, st)
	if got := len(rec.all()); got != 2 {
		t.Fatalf("after 9 minutes: %d deliveries, want still 2", got)
	}
	clk.Advance(time.Minute)
	waitQueues(t, st)
	// y's receive count depends on whether the poller took it in x's first
	// batch (failed with x's group, count 1 then 2) or after x was already
	// in flight (count 1): SendBatch sends one message of a group per call.
	got := rec.all()
	if len(got) == 4 && got[3].body == "y" && (got[3].count == "1" || got[3].count == "2") {
		got[3].count = "1 or 2"
	}
	if want := []delivered{{"x", "1"}, {"z", "1"}, {"x", "2"}, {"y", "1 or 2"}}; !slices.Equal(got, want) {
		t.Fatalf("after 10 minutes: got %v, want %v", got, want)
	}
	if c := counts(t, st, url); c != [3]string{"0", "0", "0"} {
		t.Errorf("counts after delivery: %v, want none left", c)
	}
}

// TestQueueRedrive: a message failed maxReceiveCount times goes to the
// dead-letter queue instead of coming a fourth time.
func TestQueueRedrive(t *testing.T) {
	t.Parallel()
	clk := &clock.Manual{}
	st := startQueues(t, "", clk)
	rec := &queueRecorder{}
	st.OnQueue("sender", func(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
		var resp events.SQSEventResponse
		for _, r := range ev.Records {
			rec.add(r)
			resp.BatchItemFailures = append(resp.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: r.MessageId})
		}
		return resp, nil
	})
	send(t, st, "DeliveryQueue", fifo("g", "poison"))
	for range 4 {
		waitQueues(t, st)
		clk.Advance(61 * time.Second)
	}
	waitQueues(t, st)
	if got, want := rec.all(), []delivered{{"poison", "1"}, {"poison", "2"}, {"poison", "3"}}; !slices.Equal(got, want) {
		t.Errorf("deliveries: got %v, want %v", got, want)
	}
	if c := counts(t, st, queueURL(t, st, "DeliveryQueue")); c != [3]string{"0", "0", "0"} {
		t.Errorf("delivery queue counts: %v, want none left", c)
	}
	if c := counts(t, st, queueURL(t, st, "DeadLetterQueue")); c != [3]string{"1", "0", "0"} {
		t.Errorf("dead-letter queue counts: %v, want the message", c)
	}
}

// TestQueueAnswers: what a batch's answer deletes. The three messages of
// one group come in one batch; after the visibility timeout the ones
// left come again.
func TestQueueAnswers(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		function string
		answer   func(ev events.SQSEvent) (events.SQSEventResponse, error)
		want     []string // delivered again
	}{
		{name: "success", function: "sender", answer: func(events.SQSEvent) (events.SQSEventResponse, error) { return events.SQSEventResponse{}, nil }},
		{name: "one failure", function: "sender", answer: func(ev events.SQSEvent) (events.SQSEventResponse, error) {
			return events.SQSEventResponse{BatchItemFailures: []events.SQSBatchItemFailure{{ItemIdentifier: ev.Records[1].MessageId}}}, nil
		}, want: []string{"m2"}},
		{name: "unknown id", function: "sender", answer: func(ev events.SQSEvent) (events.SQSEventResponse, error) {
			return events.SQSEventResponse{BatchItemFailures: []events.SQSBatchItemFailure{{ItemIdentifier: ev.Records[1].MessageId}, {ItemIdentifier: "no-such-message"}}}, nil
		}, want: []string{"m1", "m2", "m3"}},
		{name: "empty id", function: "sender", answer: func(ev events.SQSEvent) (events.SQSEventResponse, error) {
			return events.SQSEventResponse{BatchItemFailures: []events.SQSBatchItemFailure{{ItemIdentifier: ""}}}, nil
		}, want: []string{"m1", "m2", "m3"}},
		{name: "error", function: "sender", answer: func(events.SQSEvent) (events.SQSEventResponse, error) {
			return events.SQSEventResponse{}, errors.New("endpoint down")
		}, want: []string{"m1", "m2", "m3"}},
		{name: "panic", function: "sender", answer: func(events.SQSEvent) (events.SQSEventResponse, error) {
			panic("bug")
		}, want: []string{"m1", "m2", "m3"}},
		{name: "failures not reported", function: "plain", answer: func(ev events.SQSEvent) (events.SQSEventResponse, error) {
			return events.SQSEventResponse{BatchItemFailures: []events.SQSBatchItemFailure{{ItemIdentifier: ev.Records[1].MessageId}}}, nil
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			clk := &clock.Manual{}
			st := startQueues(t, "", clk)
			queue, msgs := "DeliveryQueue", fifo("g", "m1", "m2", "m3")
			if tt.function == "plain" {
				queue, msgs = "PlainQueue", []sqsapi.Message{{Body: "m1"}, {Body: "m2"}, {Body: "m3"}}
			}
			for _, m := range msgs {
				send(t, st, queue, []sqsapi.Message{m})
			}
			var mu sync.Mutex
			var first []string
			again := &queueRecorder{}
			calls := 0
			st.OnQueue(tt.function, func(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
				mu.Lock()
				calls++
				n := calls
				if n == 1 {
					for _, r := range ev.Records {
						first = append(first, r.Body)
					}
				}
				mu.Unlock()
				if n == 1 {
					return tt.answer(ev)
				}
				for _, r := range ev.Records {
					again.add(r)
				}
				return events.SQSEventResponse{}, nil
			})
			waitQueues(t, st)
			clk.Advance(time.Minute + time.Second)
			waitQueues(t, st)
			mu.Lock()
			defer mu.Unlock()
			if want := []string{"m1", "m2", "m3"}; !slices.Equal(first, want) {
				t.Fatalf("first batch: got %v, want %v", first, want)
			}
			var got []string
			for _, d := range again.all() {
				got = append(got, d.body)
				if d.count != "2" {
					t.Errorf("%s delivered again with ApproximateReceiveCount %s, want 2", d.body, d.count)
				}
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("delivered again: got %v, want %v", got, tt.want)
			}
		})
	}
}

func TestQueueIdle(t *testing.T) {
	t.Parallel()
	st := startQueues(t, "", nil)
	url := queueURL(t, st, "PlainQueue")
	sqsOK(t, st, "SendMessage", map[string]any{"QueueUrl": url, "MessageBody": "unread"})
	// Nothing subscribed: idle at once.
	waitQueues(t, st)
	release := make(chan struct{})
	rec := &queueRecorder{}
	st.OnQueue("plain", func(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
		for _, r := range ev.Records {
			rec.add(r)
		}
		select {
		case <-release:
		case <-ctx.Done():
		}
		return events.SQSEventResponse{}, nil
	})
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	err := st.QueueIdle(ctx)
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "PlainQueue") {
		t.Errorf("QueueIdle with a batch in the handler: got %v, want the deadline, naming PlainQueue", err)
	}
	close(release)
	waitQueues(t, st)
	// A delayed message does not count.
	sqsOK(t, st, "SendMessage", map[string]any{"QueueUrl": url, "MessageBody": "later", "DelaySeconds": 60})
	waitQueues(t, st)
	if got, want := rec.all(), []delivered{{"unread", "1"}}; !slices.Equal(got, want) {
		t.Errorf("delivered: got %v, want %v", got, want)
	}
	// A nil handler stops the pollers; a new one starts them again.
	st.OnQueue("plain", nil)
	sqsOK(t, st, "SendMessage", map[string]any{"QueueUrl": url, "MessageBody": "while stopped"})
	waitQueues(t, st)
	if got := len(rec.all()); got != 1 {
		t.Errorf("delivered while stopped: %d, want 1", got)
	}
	st.OnQueue("plain", func(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
		for _, r := range ev.Records {
			rec.add(r)
		}
		return events.SQSEventResponse{}, nil
	})
	waitQueues(t, st)
	if got, want := rec.all(), []delivered{{"unread", "1"}, {"while stopped", "1"}}; !slices.Equal(got, want) {
		t.Errorf("delivered: got %v, want %v", got, want)
	}
}

// TestQueueEvent: the records are Lambda's: ids, attributes, the source.
func TestQueueEvent(t *testing.T) {
	t.Parallel()
	st := startQueues(t, "", nil)
	got := make(chan events.SQSEvent, 1)
	st.OnQueue("sender", func(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
		if dl, ok := ctx.Deadline(); !ok || time.Until(dl) > 10*time.Second {
			t.Errorf("handler's deadline %v: want the function's 10 s Timeout", dl)
		}
		got <- ev
		return events.SQSEventResponse{}, nil
	})
	send(t, st, "DeliveryQueue", []sqsapi.Message{{Body: `{"event":"x"}`, GroupID: "ep-1#u-1", DeduplicationID: "ep-1#a-1"}})
	var ev events.SQSEvent
	select {
	case ev = <-got:
	case <-time.After(5 * time.Second):
		t.Fatal("no event")
	}
	if len(ev.Records) != 1 {
		t.Fatalf("records: %+v", ev.Records)
	}
	r := ev.Records[0]
	if r.MessageId == "" || r.ReceiptHandle == "" || r.Body != `{"event":"x"}` || r.Md5OfBody != hexString(md5Sum([]byte(r.Body))) ||
		r.EventSource != "aws:sqs" || r.EventSourceARN != "arn:aws:sqs:"+region()+":000000000000:DeliveryQueue.fifo" || r.AWSRegion != region() {
		t.Errorf("record: %+v", r)
	}
	for _, k := range []string{"ApproximateReceiveCount", "SentTimestamp", "SenderId", "ApproximateFirstReceiveTimestamp", "MessageGroupId", "MessageDeduplicationId", "SequenceNumber"} {
		if r.Attributes[k] == "" {
			t.Errorf("attribute %s missing: %v", k, r.Attributes)
		}
	}
	if r.Attributes["MessageGroupId"] != "ep-1#u-1" || r.Attributes["MessageDeduplicationId"] != "ep-1#a-1" {
		t.Errorf("attributes: %v", r.Attributes)
	}
}

package stack

import (
	"context"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/loyalty-platform/platform/shared/contract/sam"
	"github.com/loyalty-platform/platform/shared/platform/clock"
)

// QueueHandler handles a batch of SQS messages as a function with an SQS
// event does. With ReportBatchItemFailures the response names the
// messages that failed (by messageId).
type QueueHandler func(context.Context, events.SQSEvent) (events.SQSEventResponse, error)

// Local delivery of SQS messages, as Lambda's event source mapping does it
// for a function's `Type: SQS` events: once OnQueue registered a
// function's handler, a poller per event receives batches from the local
// queue and invokes the handler with events.SQSEvent.
//
//   - Batches: up to BatchSize messages (10 when the template sets none;
//     never more than 10, what one receive yields), each invisible for the
//     queue's VisibilityTimeout from its receive. A FIFO batch may mix
//     groups, as Lambda's does; a group with a message in flight yields
//     nothing. MaximumBatchingWindowInSeconds is not applied: a batch goes
//     out as soon as it is received.
//   - Concurrency: up to ScalingConfig.MaximumConcurrency batches (5 when
//     the template sets none) are handled at once, so a slow group does
//     not hold the others back.
//   - Answers: the messages of a batch whose invocation succeeded are
//     deleted, except, with ReportBatchItemFailures, those the response
//     names; they stay in flight until their visibility timeout ends (the
//     queue's, or what the handler set with ChangeMessageVisibility), then
//     come again with ApproximateReceiveCount one higher, and after the
//     queue's maxReceiveCount receives go to its dead-letter queue. As in
//     Lambda, on a FIFO queue the handler names the failed message and the
//     later messages of its group in the batch: a later one not named is
//     deleted. A response naming an empty or unknown messageId, an error, a
//     panic or an invocation past the function's Timeout (see Within)
//     fails the whole batch: none of it is deleted.
//   - QueueIdle waits until the subscribed queues have no message to
//     deliver now and every batch received was handled.
//
// With AWS_ENDPOINT_URL (LocalStack, an account) the stack serves no
// queues: configure the queues and event source mappings there. The
// template's AWS::Lambda::EventSourceMapping resources (JobsFailedQueueMapping)
// are not served either: OnS3Failure hands the jobs function its failure
// records directly.

// Defaults of an SQS event source mapping the template leaves unset.
const (
	defaultQueueBatchSize   = 10
	defaultQueueConcurrency = 5
)

// queueSub delivers one SQS event of one function.
type queueSub struct {
	mapping[QueueHandler]
	s           *SQS
	function    string
	event       sam.QueueEvent
	q           *queue
	batchSize   int
	concurrency int
	timeout     time.Duration
}

// OnQueue registers the handler of a template function (by name, e.g.
// "webhooksender") for its SQS events and starts their pollers. A later
// registration replaces the handler; a nil handler stops the function's
// pollers (the messages they hold come back after their visibility
// timeout). It does nothing when the stack serves no queues of its own
// (AWS_ENDPOINT_URL), or for a function without SQS events.
func (s *Stack) OnQueue(function string, h QueueHandler) {
	if s == nil || s.sqs == nil {
		return
	}
	s.sqs.subscribe(function, h)
}

// QueueIdle waits until no message of a queue an OnQueue subscription
// reads is to be delivered now (visible, its FIFO group free) and every
// batch the pollers received has been handled (its messages deleted, or
// left in flight by the handler's answer). Messages delayed, or invisible
// until a later time of the queue clock, do not count: a test moves the
// clock (SetQueueClock) and waits again. It returns ctx's error when that
// takes longer than ctx allows, and nil at once when nothing is
// subscribed.
func (s *Stack) QueueIdle(ctx context.Context) error {
	if s == nil || s.sqs == nil {
		return nil
	}
	return s.sqs.idle(ctx)
}

// SetQueueClock makes c the clock of the stack's queues (visibility
// timeouts, delays, deduplication, retention): a test passes the
// clock.Manual it advances, and nil to go back to Options.Clock. A
// clock.Manual made now continues the system clock, so the messages in
// the queues keep their times.
func (s *Stack) SetQueueClock(c clock.Clock) {
	if s == nil || s.sqs == nil {
		return
	}
	s.sqs.SetClock(c)
}

// QueueURL returns the URL of the template queue logicalID in the stack's
// SQS; false when the stack serves no queues or has no such queue.
func (s *Stack) QueueURL(logicalID string) (string, bool) {
	if s == nil || s.sqs == nil {
		return "", false
	}
	return s.sqs.QueueURL(logicalID)
}

func (s *SQS) subscribe(function string, h QueueHandler) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	if existing := s.subs[function]; existing != nil {
		if h == nil {
			delete(s.subs, function)
		}
		s.mu.Unlock()
		reregister(existing, h, h == nil)
		return
	}
	if h == nil {
		s.mu.Unlock()
		return
	}
	defer s.mu.Unlock()
	f, ok := s.template.Function(function)
	if !ok || len(f.QueueEvents) == 0 {
		slog.Debug("queue handler for a function without SQS events", "function", function)
		return
	}
	var subs []*queueSub
	for _, ev := range f.QueueEvents {
		q := s.logical[ev.Queue]
		switch {
		case !ev.Enabled:
			continue
		case q == nil:
			slog.Warn("SQS event names no template queue: not delivered locally", "function", function, "event", ev.Event)
			continue
		}
		timeout := FunctionTimeout(s.template, function)
		if q.visibility < timeout {
			slog.Warn("queue's VisibilityTimeout is shorter than the function's Timeout: Lambda refuses such a mapping", "function", function, "queue", q.name, "visibility", q.visibility, "timeout", timeout)
		}
		batch := ev.BatchSize
		if batch <= 0 {
			batch = defaultQueueBatchSize
		}
		concurrency := ev.MaximumConcurrency
		if concurrency <= 0 {
			concurrency = defaultQueueConcurrency
		}
		sub := &queueSub{
			s: s, function: function, event: ev, q: q,
			batchSize: min(batch, maxReceiveMessages), concurrency: concurrency, timeout: timeout,
		}
		sub.start(context.Background(), h)
		q.subscribed++
		subs = append(subs, sub)
	}
	if len(subs) == 0 {
		return
	}
	s.subs[function] = subs
	for _, sub := range subs {
		s.wg.Add(1)
		go sub.run()
	}
}

// stopPollers stops every subscription and waits for its batches in
// flight (their contexts cancelled).
func (s *SQS) stopPollers() {
	s.mu.Lock()
	s.closed = true
	var all []*queueSub
	for _, subs := range s.subs {
		all = append(all, subs...)
	}
	s.subs = map[string][]*queueSub{}
	s.notify()
	s.mu.Unlock()
	for _, sub := range all {
		sub.cancel()
	}
	s.wg.Wait()
}

// run receives batches while fewer than concurrency are being handled,
// each handled in a goroutine of its own, until the subscription stops.
func (sub *queueSub) run() {
	s := sub.s
	defer s.wg.Done()
	var batches sync.WaitGroup
	defer func() {
		batches.Wait()
		s.mu.Lock()
		sub.q.subscribed--
		s.notify()
		s.mu.Unlock()
		close(sub.done)
	}()
	slots := make(chan struct{}, sub.concurrency)
	for {
		select {
		case slots <- struct{}{}:
		case <-sub.ctx.Done():
			return
		}
		s.mu.Lock()
		got := sub.q.receive(s.now(), sub.batchSize, sub.q.visibility)
		changed := s.changed
		if len(got) > 0 {
			sub.q.handling++
			s.notify()
		}
		s.mu.Unlock()
		if len(got) == 0 {
			<-slots
			t := time.NewTimer(QueuePollInterval)
			select {
			case <-sub.ctx.Done():
				t.Stop()
				return
			case <-changed:
			case <-t.C:
			}
			t.Stop()
			continue
		}
		batches.Add(1)
		go func() {
			defer batches.Done()
			defer func() { <-slots }()
			sub.handle(got)
		}()
	}
}

// handle invokes the handler with one batch and deletes what succeeded.
func (sub *queueSub) handle(batch []delivery) {
	s := sub.s
	records := make([]events.SQSMessage, 0, len(batch))
	for _, d := range batch {
		records = append(records, sub.record(d))
	}
	remove := sub.invoke(records)
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, d := range batch {
		if !remove[d.id] {
			continue
		}
		if e := sub.q.deleteMessage(d.handle); e != nil {
			slog.Warn("sqs message handled but not deleted", "function", sub.function, "queue", sub.q.name, "messageId", d.id, "err", e)
		}
	}
	sub.q.handling--
	s.notify()
}

// invoke calls the handler once and returns the messages to delete, by
// messageId.
func (sub *queueSub) invoke(records []events.SQSMessage) map[string]bool {
	h := sub.currentHandler()
	if h == nil {
		return nil
	}
	resp, err := Within(sub.ctx, sub.timeout, func(ctx context.Context) (events.SQSEventResponse, error) {
		return h(ctx, events.SQSEvent{Records: records})
	})
	if err == nil && sub.event.ReportsBatchItemFailures() {
		err = checkItemFailures(records, resp)
	}
	if err != nil {
		if sub.ctx.Err() == nil {
			slog.Warn("sqs batch failed: its messages come back after their visibility timeout",
				"function", sub.function, "queue", sub.q.name, "messages", len(records), "err", err)
		}
		return nil
	}
	remove := make(map[string]bool, len(records))
	for _, r := range records {
		remove[r.MessageId] = true
	}
	if sub.event.ReportsBatchItemFailures() {
		for _, f := range resp.BatchItemFailures {
			delete(remove, f.ItemIdentifier)
		}
	}
	return remove
}

// checkItemFailures returns an error when a batch item failure names no
// message of the batch, which fails the whole batch as in Lambda.
func checkItemFailures(records []events.SQSMessage, resp events.SQSEventResponse) error {
	ids := make(map[string]bool, len(records))
	for _, r := range records {
		ids[r.MessageId] = true
	}
	var unknown []string
	for _, f := range resp.BatchItemFailures {
		if !ids[f.ItemIdentifier] {
			unknown = append(unknown, fmt.Sprintf("%q", f.ItemIdentifier))
		}
	}
	if len(unknown) > 0 {
		return fmt.Errorf("batch item failures name no message of the batch: %s", strings.Join(unknown, ", "))
	}
	return nil
}

// record is the message as Lambda's SQS event carries it.
func (sub *queueSub) record(d delivery) events.SQSMessage {
	attrs := make(map[string]string, len(d.attributes))
	for k, v := range d.attributes {
		attrs[k] = v
	}
	return events.SQSMessage{
		MessageId:         d.id,
		ReceiptHandle:     d.handle,
		Body:              d.body,
		Md5OfBody:         d.md5,
		Attributes:        attrs,
		MessageAttributes: map[string]events.SQSMessageAttribute{},
		EventSource:       "aws:sqs",
		EventSourceARN:    sub.q.arn,
		AWSRegion:         sub.s.region,
	}
}

// idle waits as Stack.QueueIdle does.
func (s *SQS) idle(ctx context.Context) error {
	for {
		s.mu.Lock()
		now := s.now()
		var busy []string
		for _, q := range s.queues {
			if q.subscribed == 0 {
				continue
			}
			if q.sweep(now) {
				s.notify()
			}
			if q.handling > 0 || q.receivable(now) {
				busy = append(busy, q.name)
			}
		}
		changed := s.changed
		s.mu.Unlock()
		if len(busy) == 0 {
			return nil
		}
		t := time.NewTimer(QueuePollInterval)
		select {
		case <-ctx.Done():
			t.Stop()
			sort.Strings(busy)
			return fmt.Errorf("queues %s: messages not delivered yet: %w", strings.Join(busy, ", "), ctx.Err())
		case <-changed:
		case <-t.C:
		}
		t.Stop()
	}
}

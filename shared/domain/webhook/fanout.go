package webhook

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/aws/aws-lambda-go/events"
	"github.com/loyalty-platform/platform/shared/aws/sqsapi"
	"github.com/loyalty-platform/platform/shared/domain/action"
	"github.com/loyalty-platform/platform/shared/platform/ddb"
	"github.com/loyalty-platform/platform/shared/platform/web"
)

// Message kinds of the delivery queue.
const (
	kindEvent  = "event"
	kindTest   = "test"
	kindReplay = "replay"
)

// message is the body of a delivery queue message: which event goes to
// which endpoint (the event's body is read from the log, a test event's
// travels in the message), or a replay to run.
type message struct {
	Kind     string `json:"k"`
	TenantID string `json:"t"`
	Endpoint string `json:"e"`
	EventID  string `json:"ev,omitempty"`
	Type     string `json:"ty,omitempty"`
	UserID   string `json:"u,omitempty"`
	// Replay is the replay's operation id: set on a replay message and on
	// the events it re-sends.
	Replay string `json:"r,omitempty"`
	// Body is a test event's body.
	Body string `json:"b,omitempty"`
}

// group returns the FIFO message group of an event of scope to an
// endpoint: the endpoint's events of one user (or of the tenant, for
// events without a user) are delivered one at a time, in order.
func group(endpointID, scope string) string { return endpointID + ":" + scope }

// dedup returns the FIFO deduplication id of a message: an event is
// enqueued once per endpoint (and per replay).
func dedup(endpointID, eventID, replay string) string {
	id := endpointID + ":" + eventID
	if replay != "" {
		id += ":" + replay
	}
	return id
}

// eventData is the `data` of an event: the action in its API shape, with
// the balance after the change lifted out of its metadata for points and
// money events.
type eventData struct {
	action.Action
	BalanceAfter any `json:"balanceAfter,omitempty"`
}

// EventOf returns the webhook event of an action with its sequence.
func EventOf(a action.Sequenced) Event {
	e := Event{
		ID: a.ID, Type: a.Type, Timestamp: a.When.Timestamp, TenantID: a.TenantID, Sequence: a.Sequence,
		Data: eventData{Action: a.Action, BalanceAfter: a.Metadata["balanceAfter"]},
	}
	if u := a.Context.User; u != nil {
		e.UserID = u.ID
	}
	return e
}

// HandleStream is the webhookfanout function's handler: the Actions
// table's stream records of feed heads (shared/domain/action) carry each
// scope's new events in sequence order; every event is logged and
// enqueued once per matching endpoint of its tenant, in that order. The
// whole batch is one unit: its events are logged with BatchWriteItem, then
// sent with as few SendMessageBatch calls as the groups allow (a tenant
// without endpoints costs one Query per batch). A failure reports the
// batch's first head record (ReportBatchItemFailures), so Lambda retries
// all of it in order; what it logged is written again unchanged and what
// it enqueued already is deduplicated by the queue (five minutes) and by
// the deliveries (after).
func (s *Service) HandleStream(ctx context.Context, ev events.DynamoDBEvent) (events.DynamoDBEventResponse, error) {
	var (
		resp      events.DynamoDBEventResponse
		first     string
		endpoints = map[string][]endpointRecord{}
		logged    []eventRecord
		msgs      []sqsapi.Message
		err       error
	)
	for _, rec := range ev.Records {
		if rec.EventName == "REMOVE" || len(rec.Change.NewImage) == 0 {
			continue
		}
		evs, ok, ferr := action.FeedOf(ddb.StreamItem(rec.Change.NewImage))
		if !ok {
			continue
		}
		if first == "" {
			first = rec.Change.SequenceNumber
		}
		if err = ferr; err != nil {
			break
		}
		var l []eventRecord
		var m []sqsapi.Message
		if l, m, err = s.fanOut(ctx, evs, endpoints); err != nil {
			break
		}
		logged, msgs = append(logged, l...), append(msgs, m...)
	}
	if err == nil && len(logged) > 0 {
		err = s.st().logEvents(ctx, logged)
	}
	if err == nil && len(msgs) > 0 {
		if err = s.Queue.SendBatch(ctx, s.QueueURL, msgs); err != nil {
			err = fmt.Errorf("enqueue webhook events: %w", err)
		}
	}
	if err != nil {
		web.Logger(ctx).Error("webhook fan-out failed", "sequenceNumber", first, "error", err.Error())
		resp.BatchItemFailures = append(resp.BatchItemFailures, events.DynamoDBBatchItemFailure{ItemIdentifier: first})
	}
	return resp, nil
}

// fanOut returns the log items and the queue messages of the events of
// one feed head record.
func (s *Service) fanOut(ctx context.Context, evs []action.Sequenced, cache map[string][]endpointRecord) ([]eventRecord, []sqsapi.Message, error) {
	if len(evs) == 0 {
		return nil, nil, nil
	}
	t := evs[0].TenantID
	eps, ok := cache[t]
	if !ok {
		var err error
		if eps, err = s.st().endpoints(ctx, t); err != nil {
			return nil, nil, err
		}
		cache[t] = eps
	}
	if len(eps) == 0 {
		return nil, nil, nil
	}
	now := s.Clock.Now()
	logged := make([]eventRecord, 0, len(evs))
	var msgs []sqsapi.Message
	for _, a := range evs {
		e := EventOf(a)
		body, err := marshal(e)
		if err != nil {
			return nil, nil, err
		}
		logged = append(logged, newEventRecord(t, a.Scope, e, body, now))
		for _, ep := range eps {
			if !ep.Enabled || !ep.wants(e.Type) || about(a.Action, ep.ID) {
				continue
			}
			m, err := json.Marshal(message{Kind: kindEvent, TenantID: t, Endpoint: ep.ID, EventID: e.ID, Type: e.Type, UserID: e.UserID})
			if err != nil {
				return nil, nil, fmt.Errorf("enqueue webhook event %s: %w", e.ID, err)
			}
			msgs = append(msgs, sqsapi.Message{Body: string(m), GroupID: group(ep.ID, a.Scope), DeduplicationID: dedup(ep.ID, e.ID, "")})
		}
	}
	return logged, msgs, nil
}

// about reports whether a is the platform's own word about endpoint ep
// (its WEBHOOK_EXHAUSTED or WEBHOOK_ENDPOINT_DISABLED), which is never
// sent to that endpoint: a failing endpoint would otherwise be sent news
// of its failures forever.
func about(a action.Action, ep string) bool {
	if !strings.HasPrefix(a.Type, "WEBHOOK_") {
		return false
	}
	id, _ := a.Metadata["endpointId"].(string)
	return id == ep
}

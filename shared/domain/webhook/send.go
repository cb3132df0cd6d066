package webhook

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/loyalty-platform/platform/shared/domain/action"
	"github.com/loyalty-platform/platform/shared/platform/clock"
	"github.com/loyalty-platform/platform/shared/platform/egress"
	"github.com/loyalty-platform/platform/shared/platform/metrics"
	"github.com/loyalty-platform/platform/shared/platform/stdwebhook"
	"github.com/loyalty-platform/platform/shared/platform/web"
)

// UserAgent names the platform on every attempt.
const UserAgent = "LoyaltyPlatform-Webhooks/1.0 (+standard-webhooks v1)"

// MetricExhausted counts the deliveries that ran out of retries (an alarm
// watches it).
const MetricExhausted = "WebhooksExhausted"

// maxVisibility is the longest SQS lets a received message stay invisible.
const maxVisibility = 12*time.Hour - time.Minute

// HandleQueue is the webhooksender function's handler: a batch of the
// delivery queue's messages. The messages of one group (an endpoint and a
// user) are handled one after the other in the batch's order, groups at
// once, and each handled message is deleted at once, so a slow endpoint's
// groups do not hold the batch's other groups in flight. A message whose attempt failed, or is not due yet, is made
// invisible until its next attempt is due and reported failed together
// with the messages after it in its group, which keeps the group (that
// user's later events for that endpoint) waiting in SQS; nothing waits in
// the function.
func (s *Service) HandleQueue(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
	var order []string
	byGroup := map[string][]events.SQSMessage{}
	for _, m := range ev.Records {
		g := m.Attributes["MessageGroupId"]
		if _, ok := byGroup[g]; !ok {
			order = append(order, g)
		}
		byGroup[g] = append(byGroup[g], m)
	}
	var (
		mu   sync.Mutex
		resp events.SQSEventResponse
		wg   sync.WaitGroup
	)
	for _, g := range order {
		msgs := byGroup[g]
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i, m := range msgs {
				wait, err := s.handle(ctx, m)
				if err != nil {
					web.Logger(ctx).Error("webhook message failed", "messageId", m.MessageId, "error", err.Error())
				}
				if err == nil && !wait {
					// Deleted now, not when the batch returns: the group
					// (this user's next event) is free at once, however
					// long the batch's other groups take.
					if err := s.Queue.Delete(ctx, s.QueueURL, m.ReceiptHandle); err != nil {
						web.Logger(ctx).Warn("webhook message not deleted early", "messageId", m.MessageId, "error", err.Error())
					}
					continue
				}
				mu.Lock()
				for _, later := range msgs[i:] {
					resp.BatchItemFailures = append(resp.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: later.MessageId})
				}
				mu.Unlock()
				return
			}
		}()
	}
	wg.Wait()
	return resp, nil
}

// handle handles one message; wait reports that it stays in the queue
// until its next attempt is due (its visibility was set to that).
func (s *Service) handle(ctx context.Context, m events.SQSMessage) (wait bool, err error) {
	var msg message
	if err := json.Unmarshal([]byte(m.Body), &msg); err != nil || msg.TenantID == "" || msg.Endpoint == "" {
		web.Logger(ctx).Error("webhook message dropped: not a message of the platform", "messageId", m.MessageId)
		return false, nil
	}
	if msg.Kind == kindReplay {
		return false, s.runReplay(ctx, msg)
	}
	ep, err := s.st().endpoint(ctx, msg.TenantID, msg.Endpoint)
	if errors.Is(err, ErrNotFound) {
		return false, nil // deleted: its messages are dropped
	}
	if err != nil {
		return false, err
	}
	d, found, err := s.st().delivery(ctx, msg.TenantID, ep.ID, msg.UserID, msg.EventID, msg.Replay)
	if err != nil {
		return false, err
	}
	if found && d.Status.Final() {
		return false, nil // delivered (or given up) already: a duplicate
	}
	now := s.Clock.Now()
	if !found {
		d = deliveryRecord{
			Delivery: Delivery{EventID: msg.EventID, EventType: msg.Type, UserID: msg.UserID, ReplayID: msg.Replay, Created: clock.Stamp(now)},
			Queued:   queuedAt(m, now).UnixMilli(),
		}
	}
	if !ep.Enabled {
		d.Status, d.Due, d.NextAttemptAt, d.Updated = Failed, 0, "", clock.Stamp(now)
		d.ResponseBody = "not sent: the endpoint is disabled"
		d.ExpiresAt = now.Add(Kept).Unix()
		return false, s.st().putDelivery(ctx, msg.TenantID, ep.ID, d)
	}
	if found && d.Due > now.UnixMilli() {
		return true, s.hide(ctx, m, time.UnixMilli(d.Due).Sub(now))
	}
	body := []byte(msg.Body)
	if msg.Kind != kindTest {
		e, err := s.st().event(ctx, msg.TenantID, msg.EventID)
		if errors.Is(err, errEventNotFound) {
			web.Logger(ctx).Error("webhook message dropped: its event is no longer logged", "eventId", msg.EventID)
			return false, nil
		}
		if err != nil {
			return false, err
		}
		body = []byte(e.Body)
	}
	res := s.attempt(ctx, ep, msg.EventID, body, now)
	d.Attempt++
	d.ResponseStatus, d.ResponseBody, d.DurationMs = res.status, res.body, res.duration.Milliseconds()
	d.Updated = clock.Stamp(now)
	d.ExpiresAt = now.Add(Kept).Unix()
	switch {
	case res.status >= 200 && res.status < 300:
		d.Status, d.Due, d.NextAttemptAt = Delivered, 0, ""
		if err := s.st().putDelivery(ctx, msg.TenantID, ep.ID, d); err != nil {
			return false, err
		}
		if ep.FailingSince != 0 {
			return false, s.st().succeeded(ctx, msg.TenantID, ep.ID)
		}
		return false, nil
	case res.status == http.StatusGone:
		d.Status, d.Due, d.NextAttemptAt = Failed, 0, ""
		if err := s.st().putDelivery(ctx, msg.TenantID, ep.ID, d); err != nil {
			return false, err
		}
		return false, s.disable(ctx, ep, "the endpoint answered 410 Gone", now)
	}
	next := now.Add(nextWait(d.Attempt, res.status, res.header, now))
	if next.Sub(time.UnixMilli(d.Queued)) > RetryWindow {
		d.Status, d.Due, d.NextAttemptAt = Exhausted, 0, ""
		// The action first: its id is derived from the delivery, so a
		// crash before the delivery is written records it once anyway.
		if err := s.exhausted(ctx, ep, d, now); err != nil {
			return false, err
		}
		if err := s.st().putDelivery(ctx, msg.TenantID, ep.ID, d); err != nil {
			return false, err
		}
		return false, s.failing(ctx, ep, now)
	}
	d.Status, d.Due, d.NextAttemptAt = Pending, next.UnixMilli(), clock.Stamp(next)
	if err := s.st().putDelivery(ctx, msg.TenantID, ep.ID, d); err != nil {
		return false, err
	}
	if err := s.failing(ctx, ep, now); err != nil {
		return false, err
	}
	return true, s.hide(ctx, m, next.Sub(now))
}

// queuedAt is when message m was queued (its SentTimestamp), or now when
// that is missing or later.
func queuedAt(m events.SQSMessage, now time.Time) time.Time {
	sent, err := strconv.ParseInt(m.Attributes["SentTimestamp"], 10, 64)
	if err != nil || sent <= 0 || sent > now.UnixMilli() {
		return now
	}
	return time.UnixMilli(sent)
}

// hide makes a received message invisible for d (at most 12 hours: a
// longer wait is hidden again when the message comes back early).
func (s *Service) hide(ctx context.Context, m events.SQSMessage, d time.Duration) error {
	d = min(max(d, time.Second), maxVisibility)
	if err := s.Queue.ChangeVisibility(ctx, s.QueueURL, m.ReceiptHandle, d); err != nil {
		return fmt.Errorf("delay webhook message %s: %w", m.MessageId, err)
	}
	return nil
}

// result is the outcome of one attempt.
type result struct {
	status   int
	header   http.Header
	body     string
	duration time.Duration
}

// attempt POSTs body to the endpoint, signed with its secrets at now.
func (s *Service) attempt(ctx context.Context, ep endpointRecord, id string, body []byte, now time.Time) result {
	h, err := stdwebhook.Headers(ep.secrets(now), id, now, body)
	if err != nil {
		return result{body: "not sent: the endpoint's secret is unusable"}
	}
	ctx, cancel := context.WithTimeout(ctx, AttemptTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, ep.URL, bytes.NewReader(body))
	if err != nil {
		return result{body: "not sent: the url is not a valid URL"}
	}
	for k, v := range h {
		req.Header[k] = v
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", UserAgent)
	start := time.Now()
	resp, err := s.Client.Do(req)
	took := time.Since(start)
	if err != nil {
		return result{body: failure(err), duration: took}
	}
	defer resp.Body.Close()
	kept, _ := io.ReadAll(io.LimitReader(resp.Body, ResponseBodyKept))
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	return result{status: resp.StatusCode, header: resp.Header, body: string(bytes.ToValidUTF8(kept, []byte("?"))), duration: took}
}

// failure says why an attempt got no answer, without the internals of the
// error.
func failure(err error) string {
	var ne interface{ Timeout() bool }
	switch {
	case errors.Is(err, egress.ErrForbiddenAddress):
		return "refused: the url resolves to a loopback, private, link-local or otherwise forbidden address"
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &ne) && ne.Timeout():
		return "no answer within 15 seconds"
	}
	return "no answer: the connection failed"
}

// failing counts a failed attempt against the endpoint: the first failure
// since its last success starts its streak, and a streak of DisableAfter
// disables it.
func (s *Service) failing(ctx context.Context, ep endpointRecord, now time.Time) error {
	since, err := s.st().failing(ctx, ep.TenantID, ep.ID, now)
	if errors.Is(err, ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if now.Sub(time.Unix(since, 0)) < DisableAfter {
		return nil
	}
	return s.disable(ctx, ep, "every attempt failed for 5 days", now)
}

// disable turns an endpoint off and records WEBHOOK_ENDPOINT_DISABLED once.
func (s *Service) disable(ctx context.Context, ep endpointRecord, reason string, now time.Time) error {
	did, err := s.st().disable(ctx, ep.TenantID, ep.ID, reason, now, clock.Stamp(now))
	if err != nil || !did {
		return err
	}
	return s.record(ctx, "", ActionEndpointDisabled, ep.TenantID, "", now, map[string]any{
		"endpointId": ep.ID, "url": ep.URL, "reason": reason,
	})
}

// exhausted records WEBHOOK_EXHAUSTED for a delivery out of retries.
func (s *Service) exhausted(ctx context.Context, ep endpointRecord, d deliveryRecord, now time.Time) error {
	metrics.Count(ctx, ep.TenantID, MetricExhausted, 1)
	id := derivedID(time.UnixMilli(d.Queued), ep.ID, d.EventID, d.ReplayID)
	return s.record(ctx, id, ActionExhausted, ep.TenantID, d.UserID, now, map[string]any{
		"endpointId": ep.ID, "eventId": d.EventID, "eventType": d.EventType, "attempts": d.Attempt, "lastStatus": d.ResponseStatus,
	})
}

// record writes one of the webhook domain's actions (id "" for a new
// id). A second record of one id is a no-op.
func (s *Service) record(ctx context.Context, id, typ, tenantID, userID string, now time.Time, meta map[string]any) error {
	a := action.Action{
		ID: id, Type: typ, TenantID: tenantID, When: action.WhenAt(now, nil), Metadata: meta,
	}
	if userID != "" {
		a.Context.User = &action.UserRef{ID: userID}
	}
	if err := s.Actions.Put(ctx, a); err != nil {
		return fmt.Errorf("record %s: %w", typ, err)
	}
	return nil
}

// derivedID returns an action id made from parts: the time at (6 bytes,
// so it sorts like other ids) and a hash of the parts (6 bytes).
func derivedID(at time.Time, parts ...string) string {
	h := sha256.Sum256([]byte(strings.Join(parts, "\x00")))
	var b [12]byte
	ms := uint64(at.UnixMilli())
	binary.BigEndian.PutUint16(b[0:2], uint16(ms>>32))
	binary.BigEndian.PutUint32(b[2:6], uint32(ms))
	copy(b[6:], h[:6])
	return hex.EncodeToString(b[:])
}

package webhook

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/loyalty-platform/platform/shared/aws/sqsapi"
	"github.com/loyalty-platform/platform/shared/domain/action"
	"github.com/loyalty-platform/platform/shared/domain/operation"
	"github.com/loyalty-platform/platform/shared/platform/actor"
	"github.com/loyalty-platform/platform/shared/platform/apierr"
	"github.com/loyalty-platform/platform/shared/platform/clock"
	"github.com/loyalty-platform/platform/shared/platform/ddb"
	"github.com/loyalty-platform/platform/shared/platform/web"
)

// Routes returns the webhook routes (the webhooks function), all admin
// only.
func (s *Service) Routes() []web.Route {
	return []web.Route{
		{Method: "POST", Path: "/webhooks/endpoints", Access: web.Admin, Handler: web.Serve(http.StatusCreated, s.handleCreate)},
		{Method: "GET", Path: "/webhooks/endpoints", Access: web.Admin, Handler: web.Serve(http.StatusOK, s.handleList)},
		{Method: "GET", Path: "/webhooks/endpoints/{endpointId}", Access: web.Admin, Handler: web.Serve(http.StatusOK, s.handleGet)},
		{Method: "PUT", Path: "/webhooks/endpoints/{endpointId}", Access: web.Admin, Handler: web.Serve(http.StatusOK, s.handleUpdate)},
		{Method: "DELETE", Path: "/webhooks/endpoints/{endpointId}", Access: web.Admin, Handler: web.ServeEmpty(http.StatusNoContent, s.handleDelete)},
		{Method: "POST", Path: "/webhooks/endpoints/{endpointId}/secret/rotate", Access: web.Admin, Handler: web.Serve(http.StatusOK, s.handleRotate)},
		{Method: "POST", Path: "/webhooks/endpoints/{endpointId}/test", Access: web.Admin, Handler: web.Serve(http.StatusAccepted, s.handleTest)},
		{Method: "GET", Path: "/webhooks/endpoints/{endpointId}/deliveries", Access: web.Admin, Handler: web.Serve(http.StatusOK, s.handleDeliveries)},
		{Method: "POST", Path: "/webhooks/endpoints/{endpointId}/replay", Access: web.Admin, Handler: web.Serve(http.StatusAccepted, s.handleReplay)},
	}
}

// handleCreate serves POST /webhooks/endpoints (admin): 201 with the
// endpoint and its secret.
func (s *Service) handleCreate(r *http.Request, caller actor.Actor) (Endpoint, error) {
	b, err := web.RequiredBody(r)
	if err != nil {
		return Endpoint{}, err
	}
	return s.Create(r.Context(), caller, b)
}

// EndpointList is the body of GET /webhooks/endpoints.
type EndpointList struct {
	Items []Endpoint `json:"items"`
	Page  web.Page   `json:"page"`
}

// handleList serves GET /webhooks/endpoints (admin): the tenant's
// endpoints in creation order, paged (`limit`, `startKey`; a tenant has
// at most 100, so the page key is a position in that list).
func (s *Service) handleList(r *http.Request, caller actor.Actor) (EndpointList, error) {
	limit, start, err := web.Paging(r)
	if err != nil {
		return EndpointList{}, err
	}
	from, err := s.Cursor.DecodeOffset(caller.TenantID, "webhookendpoints", start)
	if err != nil {
		return EndpointList{}, err
	}
	eps, err := s.List(r.Context(), caller)
	if err != nil {
		return EndpointList{}, err
	}
	from = min(from, len(eps))
	to := min(from+limit, len(eps))
	page := web.Page{Limit: limit, Count: to - from, StartKey: start}
	if to < len(eps) {
		if page.NextKey, err = s.Cursor.EncodeOffset(caller.TenantID, "webhookendpoints", to); err != nil {
			return EndpointList{}, err
		}
	}
	return EndpointList{Items: eps[from:to], Page: page}, nil
}

// handleGet serves GET /webhooks/endpoints/{endpointId} (admin).
func (s *Service) handleGet(r *http.Request, caller actor.Actor) (Endpoint, error) {
	return s.Get(r.Context(), caller, r.PathValue("endpointId"))
}

// handleUpdate serves PUT /webhooks/endpoints/{endpointId} (admin): 200
// with the endpoint as stored.
func (s *Service) handleUpdate(r *http.Request, caller actor.Actor) (Endpoint, error) {
	b, err := web.RequiredBody(r)
	if err != nil {
		return Endpoint{}, err
	}
	return s.Update(r.Context(), caller, r.PathValue("endpointId"), b)
}

// handleDelete serves DELETE /webhooks/endpoints/{endpointId} (admin): 204.
func (s *Service) handleDelete(r *http.Request, caller actor.Actor) error {
	return s.Delete(r.Context(), caller, r.PathValue("endpointId"))
}

// handleRotate serves POST /webhooks/endpoints/{endpointId}/secret/rotate
// (admin): 200 with the new secret.
func (s *Service) handleRotate(r *http.Request, caller actor.Actor) (Rotated, error) {
	if err := web.DecodeOptional(r, &struct{}{}); err != nil {
		return Rotated{}, err
	}
	return s.Rotate(r.Context(), caller, r.PathValue("endpointId"))
}

// TestSent is the answer of POST /webhooks/endpoints/{endpointId}/test.
type TestSent struct {
	ID   string `json:"id"`
	Type string `json:"type"`
}

// handleTest serves POST /webhooks/endpoints/{endpointId}/test (admin):
// 202 once a webhook.test event is queued for the endpoint.
func (s *Service) handleTest(r *http.Request, caller actor.Actor) (TestSent, error) {
	if err := web.DecodeOptional(r, &struct{}{}); err != nil {
		return TestSent{}, err
	}
	return s.SendTest(r.Context(), caller, r.PathValue("endpointId"))
}

// SendTest queues one webhook.test event for an endpoint (enabled or not:
// a disabled endpoint's test is recorded FAILED). It is delivered, signed
// and retried like any event, in a group of its own.
func (s *Service) SendTest(ctx context.Context, caller actor.Actor, id string) (TestSent, error) {
	ep, err := s.get(ctx, caller, id)
	if err != nil {
		return TestSent{}, err
	}
	now := s.Clock.Now()
	e := Event{
		ID: action.NewID(), Type: TestEventType, Timestamp: clock.Stamp(now), TenantID: ep.TenantID,
		Data: map[string]any{"endpointId": ep.ID, "message": "A test event: the endpoint receives and verifies the platform's webhooks."},
	}
	body, err := marshal(e)
	if err != nil {
		return TestSent{}, err
	}
	m, err := json.Marshal(message{Kind: kindTest, TenantID: ep.TenantID, Endpoint: ep.ID, EventID: e.ID, Type: e.Type, Body: string(body)})
	if err != nil {
		return TestSent{}, fmt.Errorf("queue test event: %w", err)
	}
	err = s.Queue.SendBatch(ctx, s.QueueURL, []sqsapi.Message{{Body: string(m), GroupID: group(ep.ID, "TEST"), DeduplicationID: dedup(ep.ID, e.ID, "")}})
	if err != nil {
		return TestSent{}, fmt.Errorf("queue test event: %w", err)
	}
	return TestSent{ID: e.ID, Type: e.Type}, nil
}

// DeliveryList is the body of GET /webhooks/endpoints/{endpointId}/deliveries.
type DeliveryList struct {
	Items []Delivery `json:"items"`
	Page  web.Page   `json:"page"`
}

// handleDeliveries serves GET /webhooks/endpoints/{endpointId}/deliveries
// (admin): the endpoint's deliveries, newest event first, filtered by
// status, eventType and userId (each optional), paged.
func (s *Service) handleDeliveries(r *http.Request, caller actor.Actor) (DeliveryList, error) {
	limit, start, err := web.Paging(r)
	if err != nil {
		return DeliveryList{}, err
	}
	q := r.URL.Query()
	f := DeliveryFilter{Status: Status(q.Get("status")), EventType: q.Get("eventType"), UserID: q.Get("userId")}
	items, page, err := s.Deliveries(r.Context(), caller, r.PathValue("endpointId"), f, limit, start)
	return DeliveryList{Items: items, Page: page}, err
}

// DeliveryFilter narrows the deliveries list.
type DeliveryFilter struct {
	Status    Status
	EventType string
	UserID    string
}

func (f DeliveryFilter) check() error {
	if f.Status != "" && !slices.Contains([]Status{Pending, Delivered, Failed, Exhausted}, f.Status) {
		return apierr.Invalid("status", "must be PENDING, DELIVERED, FAILED or EXHAUSTED")
	}
	if f.EventType != "" && f.EventType != TestEventType && !slices.Contains(action.Types, f.EventType) {
		return apierr.Invalid("eventType", "must be an action type or webhook.test")
	}
	if f.UserID != "" && !web.ValidID(f.UserID) {
		return apierr.Invalid("userId", "must be a user id")
	}
	return nil
}

// Deliveries returns a page of an endpoint's deliveries, newest event
// first.
func (s *Service) Deliveries(ctx context.Context, caller actor.Actor, id string, f DeliveryFilter, limit int, startKey string) ([]Delivery, web.Page, error) {
	if err := f.check(); err != nil {
		return nil, web.Page{}, err
	}
	if _, err := s.get(ctx, caller, id); err != nil {
		return nil, web.Page{}, err
	}
	if limit < 1 || limit > web.MaxLimit {
		limit = web.DefaultLimit
	}
	// The filters are applied as the shards are merged (a user's
	// deliveries are read from their shard only).
	keep := func(it ddb.Item) bool {
		for _, c := range []struct{ attr, v string }{{"status", string(f.Status)}, {"eventType", f.EventType}, {"userId", f.UserID}} {
			if got, _ := it[c.attr].(*types.AttributeValueMemberS); c.v != "" && (got == nil || got.Value != c.v) {
				return false
			}
		}
		return true
	}
	scope := "webhookdeliveries|" + id + "|" + string(f.Status) + "|" + f.EventType + "|" + f.UserID
	start, err := s.Cursor.Decode(caller.TenantID, scope, startKey)
	if err != nil {
		return nil, web.Page{}, err
	}
	items, lek, err := ddb.Merge(ctx, s.DB, s.st().deliveryStreams(caller.TenantID, id, f.UserID), "sk", true, start, limit, keep)
	if err != nil {
		return nil, web.Page{}, fmt.Errorf("list deliveries of %s: %w", id, err)
	}
	var recs []deliveryRecord
	if err := attributevalue.UnmarshalListOfMaps(items, &recs); err != nil {
		return nil, web.Page{}, fmt.Errorf("list deliveries of %s: %w", id, err)
	}
	next, err := s.Cursor.Encode(caller.TenantID, scope, lek)
	if err != nil {
		return nil, web.Page{}, fmt.Errorf("list deliveries of %s: %w", id, err)
	}
	out := make([]Delivery, len(recs))
	for i, r := range recs {
		out[i] = r.Delivery
	}
	return out, web.Page{Limit: limit, Count: len(out), StartKey: startKey, NextKey: next}, nil
}

// ReplayInput is the body of POST /webhooks/endpoints/{endpointId}/replay.
type ReplayInput struct {
	From       string   `json:"from"`
	To         string   `json:"to"`
	EventTypes []string `json:"eventTypes"`
}

// Replay operations' namespace and name.
const (
	Namespace  = "webhooks"
	NameReplay = "replay"
)

// handleReplay serves POST /webhooks/endpoints/{endpointId}/replay
// (admin): 202 with the Operation that re-sends the window's events.
func (s *Service) handleReplay(r *http.Request, caller actor.Actor) (operation.Operation, error) {
	b, err := web.RequiredBody(r)
	if err != nil {
		return operation.Operation{}, err
	}
	return s.Replay(r.Context(), caller, r.PathValue("endpointId"), r.Header.Get(web.HeaderNonce), b)
}

// Replay starts re-sending every event of a window (at most Kept back) to
// an endpoint, in order and with the original ids and sequences, as an
// Operation. The x-platform-req-nonce header, when sent, makes a repeated
// call return the same operation; without it every call is a new replay.
func (s *Service) Replay(ctx context.Context, caller actor.Actor, id, nonceHeader string, body []byte) (operation.Operation, error) {
	var in ReplayInput
	if err := web.DecodeBytes(body, &in); err != nil {
		return operation.Operation{}, err
	}
	now := s.Clock.Now()
	from, err := parseTime("from", in.From)
	if err != nil {
		return operation.Operation{}, err
	}
	to, err := parseTime("to", in.To)
	if err != nil {
		return operation.Operation{}, err
	}
	switch {
	case to.Before(from):
		return operation.Operation{}, apierr.Invalid("to", "must not be before from")
	case from.Before(now.Add(-Kept)):
		return operation.Operation{}, apierr.Invalid("from", "must be within the last 30 days: older events are no longer kept")
	case from.After(now):
		return operation.Operation{}, apierr.Invalid("from", "must not be in the future")
	}
	if err := checkTypes(in.EventTypes); err != nil {
		return operation.Operation{}, err
	}
	ep, err := s.get(ctx, caller, id)
	if err != nil {
		return operation.Operation{}, err
	}
	nonce := newNonce() // every call without a nonce is its own replay
	if strings.TrimSpace(nonceHeader) != "" {
		if nonce, err = operation.ParseNonce(nonceHeader); err != nil {
			return operation.Operation{}, err
		}
	}
	md := map[string]any{"endpointId": ep.ID, "from": clock.Stamp(from), "to": clock.Stamp(to)}
	if len(in.EventTypes) > 0 {
		ts := make([]any, len(in.EventTypes))
		for i, t := range in.EventTypes {
			ts[i] = t
		}
		md["eventTypes"] = ts
	}
	fp := sha256.Sum256([]byte(fmt.Sprint("replay", ep.ID, md["from"], md["to"], in.EventTypes)))
	started, err := s.Operations.Start(ctx, caller.TenantID, operation.StartInput{
		Namespace: Namespace, Name: NameReplay, EntityID: ep.ID, Nonce: nonce, Fingerprint: hex.EncodeToString(fp[:]), Metadata: md,
	})
	if err != nil {
		return operation.Operation{}, err
	}
	op := started.Operation
	if started.Repeat && op.Status != operation.Pending {
		return op, nil
	}
	m, err := json.Marshal(message{Kind: kindReplay, TenantID: caller.TenantID, Endpoint: ep.ID, Replay: op.ID})
	if err != nil {
		return operation.Operation{}, fmt.Errorf("queue replay: %w", err)
	}
	err = s.Queue.SendBatch(ctx, s.QueueURL, []sqsapi.Message{{Body: string(m), GroupID: group(ep.ID, "REPLAY#"+op.ID), DeduplicationID: op.ID}})
	if err != nil {
		return operation.Operation{}, fmt.Errorf("queue replay: %w", err)
	}
	return op, nil
}

// parseTime reads an RFC 3339 date-time field.
func parseTime(field, v string) (time.Time, error) {
	if v == "" {
		return time.Time{}, apierr.Invalid(field, "is required: an RFC 3339 date-time such as 2024-05-01T00:00:00Z")
	}
	t, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		return time.Time{}, apierr.Invalid(field, "must be an RFC 3339 date-time such as 2024-05-01T00:00:00Z")
	}
	return t.UTC(), nil
}

// newNonce returns a random GUID (version 4).
func newNonce() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

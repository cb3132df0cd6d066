// Package webhook pushes the platform's actions to the tenants' HTTPS
// endpoints as Standard Webhooks (v1): signed, ordered per user, retried
// for seven days and replayable for thirty.
//
// The path, end to end (README, "Webhooks"):
//
//   - Every action is written with its scope's feed head (shared/domain/action):
//     one head per user (and one per tenant for actions without a user)
//     whose `seq` counts the scope's actions, so each event has a
//     `sequence` fixed where it was written, and the Actions table's stream
//     shows each scope's events in sequence order.
//   - Fanout (the webhookfanout function) reads the head records of the
//     stream, logs each event once (the exact body bytes that are signed,
//     kept 31 days for replay), and sends one message per matching endpoint
//     to the FIFO delivery queue: MessageGroupId = endpoint + scope (so a
//     user's events reach an endpoint in order while other users' go on),
//     MessageDeduplicationId = endpoint + event (a stream record read twice
//     enqueues once).
//   - Send (the webhooksender function) delivers a batch of messages: POST
//     the body with webhook-id, webhook-timestamp and webhook-signature.
//     A failure records the attempt and its next due time in the delivery
//     item, makes the message invisible until then (ChangeMessageVisibility,
//     12 hours at most at a time) and reports it failed: the message stays in
//     flight, so its group (that user's later events) waits and no Lambda
//     sleeps.
//
// Endpoints, deliveries and the event log live in the Webhooks table (see
// store.go).
package webhook

import (
	"errors"
	"time"

	"github.com/loyalty-platform/platform/shared/platform/apierr"
)

// Action types the webhook domain records (UPPER_SNAKE like every action
// type, so that rules and filters treat them alike).
const (
	// ActionExhausted: an event was not delivered to an endpoint after
	// seven days of retries. Metadata: endpointId, eventId, eventType,
	// attempts, lastStatus.
	ActionExhausted = "WEBHOOK_EXHAUSTED"
	// ActionEndpointDisabled: the platform disabled an endpoint (it
	// answered 410 Gone, or failed every attempt for five days). Metadata:
	// endpointId, url, reason.
	ActionEndpointDisabled = "WEBHOOK_ENDPOINT_DISABLED"
)

// TestEventType is the type of the event POST
// /webhooks/endpoints/{endpointId}/test sends. It is not an action: it has
// no user, sequence 0, and is not replayed.
const TestEventType = "webhook.test"

// Status is the state of one delivery of an event to an endpoint.
type Status string

// The statuses of a delivery.
const (
	// Pending: an attempt failed and another is due at nextAttemptAt.
	Pending Status = "PENDING"
	// Delivered: the endpoint answered 2xx.
	Delivered Status = "DELIVERED"
	// Failed: given up without exhausting the retries: the endpoint
	// answered 410 Gone, or was disabled or deleted before the event
	// reached it.
	Failed Status = "FAILED"
	// Exhausted: every attempt of seven days failed.
	Exhausted Status = "EXHAUSTED"
)

// Final reports whether a delivery of status s gets no further attempt.
func (s Status) Final() bool { return s == Delivered || s == Failed || s == Exhausted }

// Limits.
const (
	// DefaultMaxEndpoints is how many endpoints a tenant may register unless
	// its settings say otherwise (settings.webhookEndpoints).
	DefaultMaxEndpoints = 10
	// MaxURLLength bounds an endpoint's url.
	MaxURLLength = 2048
	// MaxDescriptionLength bounds an endpoint's description.
	MaxDescriptionLength = 500
	// MaxEventTypes bounds an endpoint's eventTypes.
	MaxEventTypes = 100
	// AttemptTimeout is how long an endpoint has to answer an attempt.
	AttemptTimeout = 15 * time.Second
	// ResponseBodyKept is how much of an endpoint's answer a delivery keeps.
	ResponseBodyKept = 1024
	// RetryWindow is how long after it was queued for an endpoint an event
	// is retried before it is EXHAUSTED.
	RetryWindow = 7 * 24 * time.Hour
	// DisableAfter is how long an endpoint may fail every attempt before
	// the platform disables it.
	DisableAfter = 5 * 24 * time.Hour
	// Kept is how long deliveries and logged events are kept (DynamoDB TTL),
	// and how far back a replay reaches.
	Kept = 30 * 24 * time.Hour
	// RotationOverlap is how long deliveries are signed with the old secret
	// too after a rotation.
	RotationOverlap = 24 * time.Hour
)

// Errors.
var (
	ErrNotFound      = apierr.New(apierr.NotFound, "webhook endpoint not found")
	ErrTooMany       = apierr.New(apierr.Conflict, "the tenant has as many webhook endpoints as its settings allow (webhookEndpoints, default 10): delete one first")
	ErrConcurrent    = apierr.New(apierr.Conflict, "the webhook endpoint was changed at the same time: read it again and retry")
	errEventNotFound = errors.New("webhook event not logged")
)

// Endpoint is a tenant's webhook endpoint as the API returns it. Secret is
// set only in the answers of create and rotate.
type Endpoint struct {
	ID          string   `json:"_id"`
	URL         string   `json:"url"`
	EventTypes  []string `json:"eventTypes"`
	Description string   `json:"description,omitempty"`
	Enabled     bool     `json:"enabled"`
	Secret      string   `json:"secret,omitempty"`
	// DisabledReason says why the platform disabled the endpoint (410 Gone,
	// five days of failures); cleared when an admin enables it again.
	DisabledReason string `json:"disabledReason,omitempty"`
	Created        string `json:"created"`
	Updated        string `json:"updated"`
}

// Delivery is one event's delivery to one endpoint as GET
// /webhooks/endpoints/{endpointId}/deliveries lists it: the latest attempt.
type Delivery struct {
	EventID   string `json:"eventId" dynamodbav:"eventId"`
	EventType string `json:"eventType" dynamodbav:"eventType"`
	UserID    string `json:"userId,omitempty" dynamodbav:"userId,omitempty"`
	// ReplayID is the operation of the replay that sent it, absent for the
	// event's own delivery.
	ReplayID       string `json:"replayId,omitempty" dynamodbav:"replayId,omitempty"`
	Attempt        int    `json:"attempt" dynamodbav:"attempt"`
	Status         Status `json:"status" dynamodbav:"status"`
	ResponseStatus int    `json:"responseStatus" dynamodbav:"responseStatus"`
	// ResponseBody is the first 1 KB of the endpoint's last answer (or why
	// no answer came: a timeout, a refused address).
	ResponseBody  string `json:"responseBody,omitempty" dynamodbav:"responseBody,omitempty"`
	DurationMs    int64  `json:"durationMs" dynamodbav:"durationMs"`
	Created       string `json:"created" dynamodbav:"created"`
	Updated       string `json:"updated" dynamodbav:"updated"`
	NextAttemptAt string `json:"nextAttemptAt,omitempty" dynamodbav:"nextAttemptAt,omitempty"`
}

// Event is the body of a delivery: what the endpoint receives, signed as
// these exact bytes.
type Event struct {
	ID        string `json:"id"`
	Type      string `json:"type"`
	Timestamp string `json:"timestamp"`
	TenantID  string `json:"tenantId"`
	UserID    string `json:"userId,omitempty"`
	Sequence  int64  `json:"sequence"`
	Data      any    `json:"data"`
}

package webhook

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/loyalty-platform/platform/shared/aws/sqsapi"
	"github.com/loyalty-platform/platform/shared/domain/action"
	"github.com/loyalty-platform/platform/shared/domain/operation"
	"github.com/loyalty-platform/platform/shared/domain/tenant"
	"github.com/loyalty-platform/platform/shared/platform/actor"
	"github.com/loyalty-platform/platform/shared/platform/apierr"
	"github.com/loyalty-platform/platform/shared/platform/clock"
	"github.com/loyalty-platform/platform/shared/platform/ddb"
	"github.com/loyalty-platform/platform/shared/platform/egress"
	"github.com/loyalty-platform/platform/shared/platform/stdwebhook"
	"github.com/loyalty-platform/platform/shared/platform/web"
)

// Queue is what the webhook domain asks of SQS (shared/aws/sqsapi in AWS,
// the local stack's stand-in behind the same client locally).
type Queue interface {
	SendBatch(ctx context.Context, queueURL string, msgs []sqsapi.Message) error
	ChangeVisibility(ctx context.Context, queueURL, receiptHandle string, timeout time.Duration) error
	Delete(ctx context.Context, queueURL, receiptHandle string) error
}

// Service manages a tenant's webhook endpoints and delivers events to them.
type Service struct {
	DB    ddb.API
	Table string
	Clock clock.Clock
	// Cursor signs the page keys of the deliveries list.
	Cursor ddb.Cursor
	// Tenants reads a tenant's settings.webhookEndpoints.
	Tenants *tenant.Store
	// Queue and QueueURL are the FIFO delivery queue.
	Queue    Queue
	QueueURL string
	// Local allows http and loopback urls (the local stack, so that a
	// developer's receiver on 127.0.0.1 gets deliveries). Never in AWS.
	Local bool
	// Client makes the attempts (egress.NewClient: it refuses forbidden
	// addresses unless Local, and never follows a redirect).
	Client *http.Client
	// Actions records WEBHOOK_EXHAUSTED and WEBHOOK_ENDPOINT_DISABLED.
	Actions *action.Recorder
	// Operations holds the replays' operations.
	Operations *operation.Service
}

func (s *Service) st() *store { return &store{db: s.DB, table: s.Table} }

// CreateInput is the body of POST /webhooks/endpoints.
type CreateInput struct {
	URL         *string  `json:"url"`
	EventTypes  []string `json:"eventTypes"`
	Description *string  `json:"description"`
	Enabled     *bool    `json:"enabled"`
}

// UpdateInput is the body of PUT /webhooks/endpoints/{endpointId}: the
// fields to change.
type UpdateInput struct {
	URL         *string  `json:"url"`
	EventTypes  []string `json:"eventTypes"`
	Description *string  `json:"description"`
	Enabled     *bool    `json:"enabled"`
}

// checkURL validates an endpoint's url.
func (s *Service) checkURL(u *string) error {
	if u == nil {
		return apierr.Invalid("url", "is required: the https URL that receives the events")
	}
	if len(*u) > MaxURLLength {
		return apierr.Invalid("url", "must be at most %d characters", MaxURLLength)
	}
	return egress.CheckURL(*u, s.Local)
}

// checkTypes validates eventTypes: known action types, each once.
func checkTypes(ts []string) error {
	if len(ts) > MaxEventTypes {
		return apierr.Invalid("eventTypes", "at most %d types", MaxEventTypes)
	}
	for i, t := range ts {
		if !slices.Contains(action.Types, t) {
			return apierr.Invalid(fmt.Sprintf("eventTypes[%d]", i), "must be an action type such as CHECKIN_CREATED (the list is in the API's ActionType)")
		}
		if slices.Contains(ts[:i], t) {
			return apierr.Invalid(fmt.Sprintf("eventTypes[%d]", i), "names %s twice", t)
		}
	}
	return nil
}

// maxEndpoints returns how many endpoints the tenant may have.
func (s *Service) maxEndpoints(ctx context.Context, tenantID string) (int, error) {
	if s.Tenants == nil {
		return DefaultMaxEndpoints, nil
	}
	t, err := s.Tenants.Get(ctx, tenantID)
	if err != nil {
		return 0, fmt.Errorf("read tenant %s: %w", tenantID, err)
	}
	if n := t.Settings.WebhookEndpoints; n != nil {
		return *n, nil
	}
	return DefaultMaxEndpoints, nil
}

// Create registers an endpoint (POST /webhooks/endpoints, admin) and
// returns it with its secret, which no later read shows.
func (s *Service) Create(ctx context.Context, caller actor.Actor, body []byte) (Endpoint, error) {
	if err := caller.RequireAdmin(); err != nil {
		return Endpoint{}, err
	}
	var in CreateInput
	if err := web.DecodeBytes(body, &in); err != nil {
		return Endpoint{}, err
	}
	if err := s.checkURL(in.URL); err != nil {
		return Endpoint{}, err
	}
	if err := checkTypes(in.EventTypes); err != nil {
		return Endpoint{}, err
	}
	if err := web.CheckText("description", in.Description, MaxDescriptionLength); err != nil {
		return Endpoint{}, err
	}
	secret, err := stdwebhook.NewSecret()
	if err != nil {
		return Endpoint{}, fmt.Errorf("create webhook endpoint: %w", err)
	}
	max, err := s.maxEndpoints(ctx, caller.TenantID)
	if err != nil {
		return Endpoint{}, err
	}
	now := clock.Stamp(s.Clock.Now())
	r := endpointRecord{
		ID: action.NewID(), TenantID: caller.TenantID, URL: *in.URL, EventTypes: in.EventTypes,
		Enabled: in.Enabled == nil || *in.Enabled, Secret: secret, Created: now, Updated: now,
	}
	if in.Description != nil {
		r.Description = *in.Description
	}
	if err := s.st().create(ctx, r, max); err != nil {
		return Endpoint{}, err
	}
	e := r.view()
	e.Secret = secret
	return e, nil
}

// List returns the tenant's endpoints in creation order (GET
// /webhooks/endpoints, admin).
func (s *Service) List(ctx context.Context, caller actor.Actor) ([]Endpoint, error) {
	if err := caller.RequireAdmin(); err != nil {
		return nil, err
	}
	recs, err := s.st().endpoints(ctx, caller.TenantID)
	if err != nil {
		return nil, err
	}
	out := make([]Endpoint, len(recs))
	for i, r := range recs {
		out[i] = r.view()
	}
	return out, nil
}

// get reads the caller's endpoint id; another tenant's is ErrNotFound.
func (s *Service) get(ctx context.Context, caller actor.Actor, id string) (endpointRecord, error) {
	if err := caller.RequireAdmin(); err != nil {
		return endpointRecord{}, err
	}
	if !web.ValidID(id) {
		return endpointRecord{}, ErrNotFound
	}
	return s.st().endpoint(ctx, caller.TenantID, id)
}

// Get returns one endpoint (GET /webhooks/endpoints/{endpointId}, admin).
func (s *Service) Get(ctx context.Context, caller actor.Actor, id string) (Endpoint, error) {
	r, err := s.get(ctx, caller, id)
	return r.view(), err
}

// updateAttempts bounds the retries of an update that lost a race.
const updateAttempts = 3

// Update changes an endpoint's url, eventTypes, description or enabled
// (PUT /webhooks/endpoints/{endpointId}, admin): the fields sent replace
// the stored ones, description null removes it; at least one field.
// Enabling an endpoint the platform disabled clears its disabledReason
// and its failure streak.
func (s *Service) Update(ctx context.Context, caller actor.Actor, id string, body []byte) (Endpoint, error) {
	var in UpdateInput
	if err := web.DecodeBytes(body, &in, web.Nullable("description")); err != nil {
		return Endpoint{}, err
	}
	patch, err := web.DecodePatch(body)
	if err != nil {
		return Endpoint{}, err
	}
	if _, ok := patch["url"]; ok {
		if err := s.checkURL(in.URL); err != nil {
			return Endpoint{}, err
		}
	}
	if raw, ok := patch["eventTypes"]; ok {
		if string(raw) == "null" {
			return Endpoint{}, apierr.Invalid("eventTypes", "must be an array ([] for every type)")
		}
		if err := checkTypes(in.EventTypes); err != nil {
			return Endpoint{}, err
		}
	}
	if err := web.CheckText("description", in.Description, MaxDescriptionLength); err != nil {
		return Endpoint{}, err
	}
	if raw, ok := patch["enabled"]; ok && string(raw) == "null" {
		return Endpoint{}, apierr.Invalid("enabled", "must be true or false")
	}
	for attempt := 0; ; attempt++ {
		r, err := s.get(ctx, caller, id)
		if err != nil {
			return Endpoint{}, err
		}
		if in.URL != nil {
			r.URL = *in.URL
		}
		if _, ok := patch["eventTypes"]; ok {
			r.EventTypes = in.EventTypes
		}
		if _, ok := patch["description"]; ok {
			r.Description = ""
			if in.Description != nil {
				r.Description = *in.Description
			}
		}
		if in.Enabled != nil {
			if *in.Enabled && !r.Enabled {
				r.DisabledReason, r.FailingSince = "", 0
			}
			r.Enabled = *in.Enabled
		}
		r.Updated = clock.Stamp(s.Clock.Now())
		r.Version++
		err = s.st().put(ctx, r)
		if err == nil {
			return r.view(), nil
		}
		if !errors.Is(err, ErrConcurrent) || attempt+1 >= updateAttempts {
			return Endpoint{}, err
		}
	}
}

// Delete removes an endpoint (DELETE /webhooks/endpoints/{endpointId},
// admin). Its queued messages are dropped when they come up; its
// deliveries expire with their TTL.
func (s *Service) Delete(ctx context.Context, caller actor.Actor, id string) error {
	if _, err := s.get(ctx, caller, id); err != nil {
		return err
	}
	return s.st().delete(ctx, caller.TenantID, id)
}

// Rotated is the answer of a secret rotation.
type Rotated struct {
	Secret string `json:"secret"`
	// PreviousValidUntil is until when deliveries are signed with the old
	// secret too.
	PreviousValidUntil string `json:"previousValidUntil"`
}

// Rotate gives an endpoint a new secret (POST
// /webhooks/endpoints/{endpointId}/secret/rotate, admin). For
// RotationOverlap deliveries carry two signatures, one per secret, so the
// receiver can switch whenever it likes within that day.
func (s *Service) Rotate(ctx context.Context, caller actor.Actor, id string) (Rotated, error) {
	for attempt := 0; ; attempt++ {
		r, err := s.get(ctx, caller, id)
		if err != nil {
			return Rotated{}, err
		}
		secret, err := stdwebhook.NewSecret()
		if err != nil {
			return Rotated{}, fmt.Errorf("rotate webhook secret: %w", err)
		}
		now := s.Clock.Now()
		until := now.Add(RotationOverlap)
		r.PreviousSecret, r.PreviousUntil, r.Secret = r.Secret, until.Unix(), secret
		r.Updated = clock.Stamp(now)
		r.Version++
		err = s.st().put(ctx, r)
		if err == nil {
			return Rotated{Secret: secret, PreviousValidUntil: clock.Stamp(until)}, nil
		}
		if !errors.Is(err, ErrConcurrent) || attempt+1 >= updateAttempts {
			return Rotated{}, err
		}
	}
}

// marshal encodes an event body (no HTML escaping: the body is what the
// receiver verifies, byte for byte, and reads as JSON).
func marshal(e Event) ([]byte, error) {
	b, err := json.Marshal(e)
	if err != nil {
		return nil, fmt.Errorf("encode webhook event %s: %w", e.ID, err)
	}
	return b, nil
}

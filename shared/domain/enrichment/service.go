package enrichment

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/loyalty-platform/platform/shared/domain/perk"
	"github.com/loyalty-platform/platform/shared/domain/tenant"
	"github.com/loyalty-platform/platform/shared/platform/actor"
	"github.com/loyalty-platform/platform/shared/platform/clock"
	"github.com/loyalty-platform/platform/shared/platform/ddb"
	"github.com/loyalty-platform/platform/shared/platform/web"
)

// Perks finds a perk of a tenant in any state (the perk domain;
// *perk.Service implements it). An absent perk is an error wrapping
// perk.ErrNotFound.
type Perks interface {
	Find(ctx context.Context, tenantID, id string) (perk.Perk, error)
}

// Service runs the enrichment domain's operations.
type Service struct {
	DB     ddb.API
	Table  string // the Loyalty table
	Clock  clock.Clock
	Cursor ddb.Cursor
	// Perks checks that an INTERNAL enrichment names a perk of the
	// tenant. When nil the check is skipped.
	Perks Perks
	// Cache keeps each tenant's INTERNAL enrichments (which every award
	// answer carries) for the warm container's window
	// (TENANT_CACHE_SECONDS); nil reads them on every call. A change made
	// through this service applies at once here (the loyalty function
	// serves both), one made elsewhere within the window.
	Cache *tenant.Cache
}

// cacheName is the name of a tenant's INTERNAL enrichments in the Cache.
const cacheName = "enrichments"

func (s *Service) st() *store { return &store{db: s.DB, table: s.Table} }

// nullable lists where a body may hold null: the top-level fields (on POST
// null is absent, on PUT it removes the field) and the nested fields the
// spec allows to be null.
var nullable = append(slices.Clone(fieldNames), "discount.combinationRule", "discount.discountCharges")

// readOnly are the fields a PUT may send back unchanged and POST ignores
// (loyaltyRewardId and loyaltyProvider are required on POST instead).
var readOnly = []string{"_id", "tenantId", "created", "updated", "loyaltyRewardId", "loyaltyProvider"}

// decodeInput decodes a body strictly; null is accepted where nullable
// says.
func decodeInput(body []byte) (Input, error) {
	var in Input
	if err := web.DecodeBytes(body, &in, web.Nullable(nullable...)); err != nil {
		return Input{}, err
	}
	return in, nil
}

// Create stores a new enrichment (POST /awardenrichments, admin).
// loyaltyProvider and loyaltyRewardId are required; an INTERNAL
// enrichment's loyaltyRewardId must name a perk of the tenant (any state).
// A null field is absent; the read-only fields are ignored.
func (s *Service) Create(ctx context.Context, caller actor.Actor, body []byte) (Enrichment, error) {
	if err := caller.RequireAdmin(); err != nil {
		return Enrichment{}, err
	}
	in, err := decodeInput(body)
	if err != nil {
		return Enrichment{}, err
	}
	if err := ValidateReward(in.LoyaltyProvider, in.LoyaltyRewardID); err != nil {
		return Enrichment{}, err
	}
	if err := in.Fields.Validate(); err != nil {
		return Enrichment{}, err
	}
	if *in.LoyaltyProvider == ProviderInternal {
		if err := s.perkExists(ctx, caller.TenantID, *in.LoyaltyRewardID); err != nil {
			return Enrichment{}, err
		}
	}
	now := s.Clock.Now()
	e := Enrichment{
		ID: perk.NewID(now), TenantID: caller.TenantID, LoyaltyRewardID: *in.LoyaltyRewardID,
		LoyaltyProvider: *in.LoyaltyProvider, Fields: in.Fields, Created: clock.Stamp(now), Updated: clock.Stamp(now),
	}
	defer s.Cache.Forget(caller.TenantID, cacheName)
	if err := s.st().put(ctx, e, 1); err != nil {
		return Enrichment{}, fmt.Errorf("create enrichment: %w", err)
	}
	return e, nil
}

// perkExists returns ErrUnknownPerk unless id names a perk of the tenant
// (in any state). Without Perks it checks nothing.
func (s *Service) perkExists(ctx context.Context, tenantID, id string) error {
	if s.Perks == nil {
		return nil
	}
	_, err := s.Perks.Find(ctx, tenantID, id)
	switch {
	case errors.Is(err, perk.ErrNotFound):
		return ErrUnknownPerk
	case err != nil:
		return fmt.Errorf("check perk %s: %w", id, err)
	}
	return nil
}

// Get returns one enrichment (GET /awardenrichments/{enrichmentId},
// admin). Another tenant's enrichment is ErrNotFound.
func (s *Service) Get(ctx context.Context, caller actor.Actor, id string) (Enrichment, error) {
	if err := caller.RequireAdmin(); err != nil {
		return Enrichment{}, err
	}
	if !web.ValidID(id) {
		return Enrichment{}, ErrNotFound
	}
	e, _, err := s.st().get(ctx, caller.TenantID, id)
	return e, err
}

// ListQuery are the parameters of GET /awardenrichments.
type ListQuery struct {
	Limit    int
	StartKey string
}

// listScope binds the page keys of GET /awardenrichments to that query.
const listScope = "awardenrichments"

// List returns a page of the tenant's enrichments in creation order (GET
// /awardenrichments, admin).
func (s *Service) List(ctx context.Context, caller actor.Actor, q ListQuery) ([]Enrichment, web.Page, error) {
	if err := caller.RequireAdmin(); err != nil {
		return nil, web.Page{}, err
	}
	if q.Limit < 1 || q.Limit > web.MaxLimit {
		q.Limit = web.DefaultLimit
	}
	page := ddb.PageQuery{Tenant: caller.TenantID, Scope: listScope, StartKey: q.StartKey, Limit: q.Limit}
	var recs []record
	next, err := enrichmentItems.ReadPage(ctx, s.DB, s.Cursor, s.st().query(caller.TenantID), page, &recs)
	if err != nil {
		return nil, web.Page{}, fmt.Errorf("list enrichments: %w", err)
	}
	out, err := enrichments(recs)
	if err != nil {
		return nil, web.Page{}, err
	}
	return out, web.Page{Limit: q.Limit, Count: len(out), StartKey: q.StartKey, NextKey: next}, nil
}

// Update changes an enrichment (PUT /awardenrichments/{enrichmentId},
// admin). The body holds any of the fields: a field present replaces the
// stored one (objects and arrays as a whole), null removes it, an absent
// field is unchanged; a body without any field is 422. The read-only
// fields (loyaltyRewardId and loyaltyProvider among them) may be sent back
// unchanged; a changed one is 422. The result is validated as on create.
// A lost race with another change is retried, then ErrConcurrent.
func (s *Service) Update(ctx context.Context, caller actor.Actor, id string, body []byte) (Enrichment, error) {
	if err := caller.RequireAdmin(); err != nil {
		return Enrichment{}, err
	}
	if !web.ValidID(id) {
		return Enrichment{}, ErrNotFound
	}
	in, err := decodeInput(body)
	if err != nil {
		return Enrichment{}, err
	}
	patch, err := web.DecodePatch(body)
	if err != nil {
		return Enrichment{}, err
	}
	for attempt := 0; attempt < 3; attempt++ {
		cur, version, err := s.st().get(ctx, caller.TenantID, id)
		if err != nil {
			return Enrichment{}, err
		}
		if err := readOnlyUnchanged(in, cur); err != nil {
			return Enrichment{}, err
		}
		var fields Fields
		if err := web.MergePatch("award enrichment", cur.Fields, patch, readOnly, &fields); err != nil {
			return Enrichment{}, err
		}
		if err := fields.Validate(); err != nil {
			return Enrichment{}, err
		}
		next := cur
		next.Fields = fields
		next.Updated = clock.Stamp(s.Clock.Now())
		err = s.st().put(ctx, next, version+1)
		s.Cache.Forget(caller.TenantID, cacheName)
		if errors.Is(err, ErrConcurrent) {
			continue
		}
		if err != nil {
			return Enrichment{}, err
		}
		return next, nil
	}
	return Enrichment{}, ErrConcurrent
}

// readOnlyUnchanged refuses a changed read-only field.
func readOnlyUnchanged(in Input, cur Enrichment) error {
	return web.CheckReadOnly(
		web.ReadOnly("_id", in.ID, cur.ID), web.ReadOnly("tenantId", in.TenantID, cur.TenantID),
		web.ReadOnly("loyaltyRewardId", in.LoyaltyRewardID, cur.LoyaltyRewardID), web.ReadOnly("loyaltyProvider", in.LoyaltyProvider, cur.LoyaltyProvider),
		web.ReadOnly("created", in.Created, cur.Created), web.ReadOnly("updated", in.Updated, cur.Updated),
	)
}

// Delete removes an enrichment (DELETE /awardenrichments/{enrichmentId},
// admin); an absent one, or another tenant's, is ErrNotFound.
func (s *Service) Delete(ctx context.Context, caller actor.Actor, id string) error {
	if err := caller.RequireAdmin(); err != nil {
		return err
	}
	if !web.ValidID(id) {
		return ErrNotFound
	}
	defer s.Cache.Forget(caller.TenantID, cacheName)
	return s.st().delete(ctx, caller.TenantID, id)
}

// Internal returns the enrichments of a tenant's own perks for the awards
// domain: for every perk id that INTERNAL enrichments name (their
// loyaltyRewardId), the one updated last (of two updated in the same
// millisecond, the one created last). Perks without an enrichment are not
// in the map.
func (s *Service) Internal(ctx context.Context, tenantID string) (map[string]Enrichment, error) {
	return tenant.Cached(s.Cache, tenantID, cacheName, s.Clock.Now(), func() (map[string]Enrichment, error) {
		return s.internal(ctx, tenantID)
	})
}

// internal reads a tenant's INTERNAL enrichments, the newest of each perk.
func (s *Service) internal(ctx context.Context, tenantID string) (map[string]Enrichment, error) {
	all, err := s.st().ofProvider(ctx, tenantID, ProviderInternal)
	if err != nil {
		return nil, err
	}
	out := make(map[string]Enrichment, len(all))
	for _, e := range all {
		prev, seen := out[e.LoyaltyRewardID]
		if !seen || e.Updated > prev.Updated || e.Updated == prev.Updated && e.ID > prev.ID {
			out[e.LoyaltyRewardID] = e
		}
	}
	return out, nil
}

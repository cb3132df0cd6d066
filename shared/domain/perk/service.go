package perk

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/loyalty-platform/platform/shared/platform/actor"
	"github.com/loyalty-platform/platform/shared/platform/apierr"
	"github.com/loyalty-platform/platform/shared/platform/clock"
	"github.com/loyalty-platform/platform/shared/platform/ddb"
	"github.com/loyalty-platform/platform/shared/platform/web"
)

// ErrConcurrent is a lost race with another change of the same perk.
var ErrConcurrent = apierr.New(apierr.Conflict, "the perk was changed by another request; retry")

// Segments tells whether a segment exists (the audiences domain).
type Segments interface {
	SegmentExists(ctx context.Context, tenantID, segmentID string) (bool, error)
}

// Locations tells which locations a tenant has (the locations domain).
type Locations interface {
	// Known returns which of ids are locations of the tenant, read in one
	// batch (BatchGetItem, 100 ids a request).
	Known(ctx context.Context, tenantID string, ids []string) (map[string]bool, error)
}

// Service runs the perk domain's operations.
type Service struct {
	DB        ddb.API
	Table     string
	Clock     clock.Clock
	Cursor    ddb.Cursor
	Segments  Segments
	Locations Locations
}

func (s *Service) st() *store { return &store{db: s.DB, table: s.Table} }

// nullable lists the optional top-level fields a body may send as null
// (no value: POST leaves the field out, PUT removes it) and the nested
// fields that may be null (stored as absent).
var nullable = []string{
	"terms", "redemptionMethod", "token", "maximumPointCashValue", "discount", "dateTimeRestriction",
	"basketQualification", "visualisation", "barcodeValue", "segmentId", "locationIds", "metadata",
	"discount.combinationRule", "discount.discountCharges",
}

// Create stores a new perk (POST /perks, admin). Read-only fields in the
// body are ignored; `enabled` defaults to true.
func (s *Service) Create(ctx context.Context, caller actor.Actor, body []byte) (Perk, error) {
	if err := caller.RequireAdmin(); err != nil {
		return Perk{}, err
	}
	var in Input
	if err := web.DecodeBytes(body, &in, web.Nullable(nullable...)); err != nil {
		return Perk{}, err
	}
	if in.LoyaltyProvider != nil && *in.LoyaltyProvider != ProviderInternal {
		return Perk{}, apierr.Invalid("loyaltyProvider", "must be %s (perks are this platform's own)", ProviderInternal)
	}
	if err := s.validate(ctx, caller.TenantID, &in.Definition); err != nil {
		return Perk{}, err
	}
	if err := s.checkLocations(ctx, caller.TenantID, in.LocationIDs); err != nil {
		return Perk{}, err
	}
	now := s.Clock.Now()
	p := Perk{
		ID: NewID(now), TenantID: caller.TenantID, LoyaltyProvider: ProviderInternal, Definition: in.Definition,
		Enabled: in.Enabled == nil || *in.Enabled, Created: clock.Stamp(now), UpdatedAt: clock.Stamp(now),
	}
	if err := s.st().put(ctx, p, 1); err != nil {
		return Perk{}, fmt.Errorf("create perk: %w", err)
	}
	return p, nil
}

// validate checks a definition and that its segment exists.
func (s *Service) validate(ctx context.Context, tenantID string, d *Definition) error {
	if err := d.Validate(); err != nil {
		return err
	}
	if d.SegmentID == "" {
		return nil
	}
	if s.Segments == nil {
		return ErrUnknownSegment
	}
	ok, err := s.Segments.SegmentExists(ctx, tenantID, d.SegmentID)
	if err != nil {
		return fmt.Errorf("check segment %s: %w", d.SegmentID, err)
	}
	if !ok {
		return ErrUnknownSegment
	}
	return nil
}

// checkLocations refuses a location id that is not a location of the
// tenant (unknown, or another tenant's), naming locationIds[i]: all of them
// in one batch read. The ids were validated (at most MaxLocations).
func (s *Service) checkLocations(ctx context.Context, tenantID string, ids []string) error {
	if len(ids) == 0 {
		return nil
	}
	known := map[string]bool{}
	if s.Locations != nil {
		var err error
		if known, err = s.Locations.Known(ctx, tenantID, ids); err != nil {
			return fmt.Errorf("check locations: %w", err)
		}
	}
	for i, id := range ids {
		if !known[id] {
			return apierr.Invalid(fmt.Sprintf("locationIds[%d]", i), "no such location")
		}
	}
	return nil
}

// Get returns one perk (GET /perks/{perkId}): admins see any, users only
// enabled ones (a disabled perk is 404 to them).
func (s *Service) Get(ctx context.Context, caller actor.Actor, id string) (Perk, error) {
	if err := caller.RequireAuth(); err != nil {
		return Perk{}, err
	}
	if !web.ValidID(id) {
		return Perk{}, ErrNotFound
	}
	p, _, err := s.st().get(ctx, caller.TenantID, id)
	if err != nil {
		return Perk{}, err
	}
	if !p.Enabled && !caller.IsAdmin() {
		return Perk{}, ErrNotFound
	}
	return p, nil
}

// Find returns a perk of a tenant in any state (for other domains).
func (s *Service) Find(ctx context.Context, tenantID, id string) (Perk, error) {
	if !web.ValidID(id) {
		return Perk{}, ErrNotFound
	}
	p, _, err := s.st().get(ctx, tenantID, id)
	return p, err
}

// All returns every perk of a tenant in any state, in creation order (for
// other domains: the award lists present their perks).
func (s *Service) All(ctx context.Context, tenantID string) ([]Perk, error) {
	return s.st().all(ctx, tenantID)
}

// ListQuery are the parameters of GET /perks.
type ListQuery struct {
	// Enabled filters by state (admins only; users always get enabled
	// perks). Nil lists both.
	Enabled *bool
	// Templates keeps the perks of these templates (none: all).
	Templates []string
	Limit     int
	StartKey  string
}

// List returns a page of the tenant's perks in creation order (GET
// /perks).
func (s *Service) List(ctx context.Context, caller actor.Actor, q ListQuery) ([]Perk, web.Page, error) {
	if err := caller.RequireAuth(); err != nil {
		return nil, web.Page{}, err
	}
	if !caller.IsAdmin() {
		t := true
		q.Enabled = &t
	}
	for _, t := range q.Templates {
		if !slices.Contains(Templates, t) {
			return nil, web.Page{}, apierr.Invalid("template", "must be one of %s", strings.Join(Templates, ", "))
		}
	}
	scope := fmt.Sprintf("perks|%v|%s", q.Enabled != nil && *q.Enabled, strings.Join(q.Templates, ","))
	if q.Enabled == nil {
		scope = "perks|all|" + strings.Join(q.Templates, ",")
	}
	keep := func(_ context.Context, items []ddb.Item) ([]ddb.Item, error) {
		var out []ddb.Item
		for _, it := range items {
			var rec record
			if err := perkItems.Decode(it, &rec); err != nil {
				return nil, err
			}
			if q.Enabled != nil && rec.Enabled != *q.Enabled {
				continue
			}
			if len(q.Templates) > 0 && !slices.Contains(q.Templates, rec.Template) {
				continue
			}
			out = append(out, it)
		}
		return out, nil
	}
	page := ddb.PageQuery{Tenant: caller.TenantID, Scope: scope, StartKey: q.StartKey, Limit: q.Limit, Keep: keep}
	var recs []record
	next, err := perkItems.ReadPage(ctx, s.DB, s.Cursor, s.st().query(caller.TenantID), page, &recs)
	if err != nil {
		return nil, web.Page{}, fmt.Errorf("list perks: %w", err)
	}
	out, err := perks(recs)
	if err != nil {
		return nil, web.Page{}, err
	}
	return out, web.Page{Limit: q.Limit, Count: len(out), StartKey: q.StartKey, NextKey: next}, nil
}

// Update changes a perk (PUT /perks/{perkId}, admin). The body holds any
// of the perk's fields: a field present replaces the stored one (objects
// and arrays as a whole), null removes an optional field, an absent field
// is unchanged. The read-only fields may be sent back as GET returned
// them. The whole result is validated as on create.
func (s *Service) Update(ctx context.Context, caller actor.Actor, id string, body []byte) (Perk, error) {
	if err := caller.RequireAdmin(); err != nil {
		return Perk{}, err
	}
	if !web.ValidID(id) {
		return Perk{}, ErrNotFound
	}
	var in Input
	if err := web.DecodeBytes(body, &in, web.Nullable(nullable...)); err != nil {
		return Perk{}, err
	}
	patch, err := web.DecodePatch(body)
	if err != nil {
		return Perk{}, err
	}
	// The locations are checked when the body sets them (once, whatever
	// the retries): a change of other fields leaves them as they are.
	_, setsLocations := patch["locationIds"]
	for attempt := 0; attempt < 3; attempt++ {
		cur, version, err := s.st().get(ctx, caller.TenantID, id)
		if err != nil {
			return Perk{}, err
		}
		if err := readOnlyUnchanged(in, cur); err != nil {
			return Perk{}, err
		}
		var next Perk
		if err := web.MergePatch("perk", cur, patch, readOnly, &next); err != nil {
			return Perk{}, err
		}
		if err := s.validate(ctx, caller.TenantID, &next.Definition); err != nil {
			return Perk{}, err
		}
		if setsLocations {
			if err := s.checkLocations(ctx, caller.TenantID, next.LocationIDs); err != nil {
				return Perk{}, err
			}
			setsLocations = false
		}
		next.ID, next.TenantID, next.LoyaltyProvider, next.Created = cur.ID, cur.TenantID, ProviderInternal, cur.Created
		next.UpdatedAt = clock.Stamp(s.Clock.Now())
		err = s.st().put(ctx, next, version+1)
		if errors.Is(err, ErrConcurrent) {
			continue
		}
		if err != nil {
			return Perk{}, err
		}
		return next, nil
	}
	return Perk{}, ErrConcurrent
}

// readOnlyUnchanged refuses a changed read-only field.
func readOnlyUnchanged(in Input, cur Perk) error {
	return web.CheckReadOnly(
		web.ReadOnly("_id", in.ID, cur.ID), web.ReadOnly("tenantId", in.TenantID, cur.TenantID),
		web.ReadOnly("loyaltyProvider", in.LoyaltyProvider, cur.LoyaltyProvider),
		web.ReadOnly("created", in.Created, cur.Created), web.ReadOnly("updatedAt", in.UpdatedAt, cur.UpdatedAt),
	)
}

// readOnly are the fields a PUT may send back unchanged (readOnlyUnchanged
// checks them) and the merge leaves as stored.
var readOnly = []string{"_id", "tenantId", "loyaltyProvider", "created", "updatedAt"}

// Disable disables a perk (DELETE /perks/{perkId}, admin): its awards stay
// as history, hidden from the award lists unless includeDisabled. Disabling
// a disabled perk changes nothing.
func (s *Service) Disable(ctx context.Context, caller actor.Actor, id string) error {
	if err := caller.RequireAdmin(); err != nil {
		return err
	}
	if !web.ValidID(id) {
		return ErrNotFound
	}
	for attempt := 0; attempt < 3; attempt++ {
		cur, version, err := s.st().get(ctx, caller.TenantID, id)
		if err != nil {
			return err
		}
		if !cur.Enabled {
			return nil
		}
		cur.Enabled = false
		cur.UpdatedAt = clock.Stamp(s.Clock.Now())
		err = s.st().put(ctx, cur, version+1)
		if errors.Is(err, ErrConcurrent) {
			continue
		}
		return err
	}
	return ErrConcurrent
}

// TiedTo counts the enabled CLUB and LEVEL perks tied to a segment (for
// the audiences domain: such a segment cannot be deleted).
func (s *Service) TiedTo(ctx context.Context, tenantID, segmentID string) (int, error) {
	perks, err := s.st().all(ctx, tenantID)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, p := range perks {
		if p.Enabled && p.HeldThroughSegment() && p.SegmentID == segmentID {
			n++
		}
	}
	return n, nil
}

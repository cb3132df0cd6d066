package audience

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/loyalty-platform/platform/shared/domain/action"
	"github.com/loyalty-platform/platform/shared/domain/perk"
	"github.com/loyalty-platform/platform/shared/platform/actor"
	"github.com/loyalty-platform/platform/shared/platform/apierr"
	"github.com/loyalty-platform/platform/shared/platform/clock"
	"github.com/loyalty-platform/platform/shared/platform/ddb"
	"github.com/loyalty-platform/platform/shared/platform/hook"
	"github.com/loyalty-platform/platform/shared/platform/web"
)

// Person is a user as actions name them.
type Person struct {
	ID              string
	Name            string
	PrimaryPlatform string
}

// Users finds users (the users domain).
type Users interface {
	// People returns the live users among ids, by id.
	People(ctx context.Context, tenantID string, ids []string) (map[string]Person, error)
}

// Perks counts the enabled CLUB and LEVEL perks tied to a segment (the
// perk domain): a segment they hold through cannot be deleted.
type Perks interface {
	TiedTo(ctx context.Context, tenantID, segmentID string) (int, error)
}

// Tenants names tenants (for actions).
type Tenants interface {
	Title(ctx context.Context, tenantID string) (string, error)
}

// Service runs the audience domain's operations.
type Service struct {
	DB      ddb.API
	Table   string
	Clock   clock.Clock
	Cursor  ddb.Cursor
	Users   Users
	Perks   Perks
	Tenants Tenants
	Actions *action.Recorder
	Log     *slog.Logger
	// OnJoin and OnLeave run inside the transaction of a membership
	// change.
	OnJoin  hook.Hooks[Change]
	OnLeave hook.Hooks[Change]
}

// react runs the rules on actions just recorded; a failure is logged (the
// stream consumer applies what is left).
func (s *Service) react(ctx context.Context, actions ...action.Action) {
	s.Actions.React(ctx, s.log(), "a segment change", actions...)
}

func (s *Service) st() *store { return &store{db: s.DB, table: s.Table} }

func (s *Service) log() *slog.Logger {
	if s.Log != nil {
		return s.Log
	}
	return slog.Default()
}

// nullable are the fields of a segment body that may be null (no value:
// POST leaves the field out, PUT removes it).
var nullable = []string{"description", "expiryHorizon"}

// Create stores a new segment (POST /segments, admin).
func (s *Service) Create(ctx context.Context, caller actor.Actor, body []byte) (Segment, error) {
	if err := caller.RequireAdmin(); err != nil {
		return Segment{}, err
	}
	var in Input
	if err := web.DecodeBytes(body, &in, web.Nullable(nullable...)); err != nil {
		return Segment{}, err
	}
	if err := in.Definition.Validate(); err != nil {
		return Segment{}, err
	}
	now := s.Clock.Now()
	seg := Segment{ID: perk.NewID(now), TenantID: caller.TenantID, Definition: in.Definition, Created: clock.Stamp(now), UpdatedAt: clock.Stamp(now)}
	if err := s.write(ctx, seg, 1); err != nil {
		return Segment{}, fmt.Errorf("create segment: %w", err)
	}
	return seg, nil
}

// write stores a segment (and, when its members expire, registers the
// tenant for the daily expiry run) in one transaction.
func (s *Service) write(ctx context.Context, seg Segment, version int) error {
	put, err := s.st().segmentPut(seg, version)
	if err != nil {
		return err
	}
	tx := &ddb.Tx{}
	tx.Add("segment", put)
	if seg.Expires() {
		tx.Add("directory", s.st().directoryPut(seg.TenantID))
	}
	err = tx.Run(ctx, s.DB)
	if ddb.Failed(err, 0) {
		return ErrConcurrent
	}
	return err
}

// Get returns one segment (GET /segments/{segmentId}, admin).
func (s *Service) Get(ctx context.Context, caller actor.Actor, id string) (Segment, error) {
	if err := caller.RequireAdmin(); err != nil {
		return Segment{}, err
	}
	if !web.ValidID(id) {
		return Segment{}, ErrNotFound
	}
	seg, _, err := s.st().getSegment(ctx, caller.TenantID, id)
	return seg, err
}

// Segments reads which segments exist, for the domains that name one (the
// perk domain) and are built before the audiences service (which reads
// their perks): it needs only the table.
type Segments struct {
	DB    ddb.API
	Table string
}

// SegmentExists reports whether a segment exists.
func (s Segments) SegmentExists(ctx context.Context, tenantID, id string) (bool, error) {
	if !web.ValidID(id) {
		return false, nil
	}
	_, _, err := (&store{db: s.DB, table: s.Table}).getSegment(ctx, tenantID, id)
	if errors.Is(err, ErrNotFound) {
		return false, nil
	}
	return err == nil, err
}

// SegmentExists reports whether a segment exists (Segments.SegmentExists).
func (s *Service) SegmentExists(ctx context.Context, tenantID, id string) (bool, error) {
	return Segments{DB: s.DB, Table: s.Table}.SegmentExists(ctx, tenantID, id)
}

// List returns a page of the tenant's segments in creation order (GET
// /segments, admin).
func (s *Service) List(ctx context.Context, caller actor.Actor, limit int, startKey string) ([]Segment, web.Page, error) {
	if err := caller.RequireAdmin(); err != nil {
		return nil, web.Page{}, err
	}
	start, err := s.Cursor.Decode(caller.TenantID, "segments", startKey)
	if err != nil {
		return nil, web.Page{}, err
	}
	items, next, err := ddb.QueryPage(ctx, s.DB, s.st().segmentsQuery(caller.TenantID), start, limit, nil)
	if err != nil {
		return nil, web.Page{}, fmt.Errorf("list segments: %w", err)
	}
	out, err := decodeSegments(items)
	if err != nil {
		return nil, web.Page{}, err
	}
	nk, err := s.Cursor.Encode(caller.TenantID, "segments", next)
	if err != nil {
		return nil, web.Page{}, err
	}
	return out, web.Page{Limit: limit, Count: len(out), StartKey: startKey, NextKey: nk}, nil
}

func decodeSegments(items []ddb.Item) ([]Segment, error) {
	out := make([]Segment, 0, len(items))
	for _, it := range items {
		var rec segmentRecord
		if err := attributevalue.UnmarshalMap(it, &rec); err != nil {
			return nil, fmt.Errorf("decode segment: %w", err)
		}
		seg, err := rec.segment()
		if err != nil {
			return nil, err
		}
		out = append(out, seg)
	}
	return out, nil
}

// all returns every segment of a tenant.
func (s *Service) all(ctx context.Context, tenantID string) ([]Segment, error) {
	in := s.st().segmentsQuery(tenantID)
	var out []Segment
	for {
		page, err := s.DB.Query(ctx, &in)
		if err != nil {
			return nil, fmt.Errorf("list segments: %w", err)
		}
		segs, err := decodeSegments(page.Items)
		if err != nil {
			return nil, err
		}
		out = append(out, segs...)
		if len(page.LastEvaluatedKey) == 0 {
			return out, nil
		}
		in.ExclusiveStartKey = page.LastEvaluatedKey
	}
}

// Update changes a segment (PUT /segments/{segmentId}, admin): fields
// present replace the stored ones, null removes description or
// expiryHorizon, read-only fields may be sent back unchanged. A changed
// type or expiryHorizon applies to members added (or, ROLLING, added
// again) from then on; existing memberships keep their end.
func (s *Service) Update(ctx context.Context, caller actor.Actor, id string, body []byte) (Segment, error) {
	if err := caller.RequireAdmin(); err != nil {
		return Segment{}, err
	}
	if !web.ValidID(id) {
		return Segment{}, ErrNotFound
	}
	var in Input
	if err := web.DecodeBytes(body, &in, web.Nullable(nullable...)); err != nil {
		return Segment{}, err
	}
	var patch map[string]json.RawMessage
	if err := json.Unmarshal(body, &patch); err != nil || len(patch) == 0 {
		return Segment{}, apierr.Invalid("", "send at least one field to change")
	}
	for attempt := 0; attempt < 3; attempt++ {
		cur, version, err := s.st().getSegment(ctx, caller.TenantID, id)
		if err != nil {
			return Segment{}, err
		}
		if err := web.CheckReadOnly(
			web.ReadOnly("_id", in.ID, cur.ID), web.ReadOnly("tenantId", in.TenantID, cur.TenantID),
			web.ReadOnly("created", in.Created, cur.Created), web.ReadOnly("updatedAt", in.UpdatedAt, cur.UpdatedAt),
		); err != nil {
			return Segment{}, err
		}
		next := cur
		if _, ok := patch["title"]; ok {
			next.Title = in.Title
		}
		if _, ok := patch["type"]; ok {
			next.Type = in.Type
		}
		if _, ok := patch["description"]; ok {
			next.Description = in.Description
		}
		if _, ok := patch["expiryHorizon"]; ok {
			next.ExpiryHorizon = in.ExpiryHorizon
		}
		if err := next.Validate(); err != nil {
			return Segment{}, err
		}
		next.UpdatedAt = clock.Stamp(s.Clock.Now())
		err = s.write(ctx, next, version+1)
		if errors.Is(err, ErrConcurrent) {
			continue
		}
		if err != nil {
			return Segment{}, fmt.Errorf("update segment %s: %w", id, err)
		}
		return next, nil
	}
	return Segment{}, ErrConcurrent
}

// Delete deletes a segment (DELETE /segments/{segmentId}, admin); its
// memberships end with it (no SEGMENT_LEFT is recorded for them). A
// segment that enabled CLUB or LEVEL perks are tied to is 409: disable the
// perks first.
func (s *Service) Delete(ctx context.Context, caller actor.Actor, id string) error {
	if err := caller.RequireAdmin(); err != nil {
		return err
	}
	if !web.ValidID(id) {
		return ErrNotFound
	}
	if _, _, err := s.st().getSegment(ctx, caller.TenantID, id); err != nil {
		return err
	}
	if s.Perks != nil {
		n, err := s.Perks.TiedTo(ctx, caller.TenantID, id)
		if err != nil {
			return fmt.Errorf("delete segment %s: %w", id, err)
		}
		if n > 0 {
			return ErrPerksTied
		}
	}
	if err := s.st().deleteSegment(ctx, caller.TenantID, id); err != nil {
		return err
	}
	// The memberships go after the segment: a read of a membership whose
	// segment is gone treats it as absent, so what a cut-off request
	// leaves behind is never served (and TTL or a later delete removes
	// it).
	if err := s.st().deleteMembers(ctx, caller.TenantID, id); err != nil {
		s.log().WarnContext(ctx, "segment deleted, memberships left to remove", "segmentId", id, "error", err.Error())
	}
	return nil
}

// parallel runs fns at once and returns their errors joined.
func parallel(fns ...func() error) error {
	errs := make([]error, len(fns))
	done := make(chan struct{}, len(fns))
	for i, f := range fns {
		go func() {
			errs[i] = f()
			done <- struct{}{}
		}()
	}
	for range fns {
		<-done
	}
	return errors.Join(errs...)
}

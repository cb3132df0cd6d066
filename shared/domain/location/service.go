package location

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	mathrand "math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/loyalty-platform/platform/shared/domain/profile"
	"github.com/loyalty-platform/platform/shared/platform/apierr"
	"github.com/loyalty-platform/platform/shared/platform/clock"
	"github.com/loyalty-platform/platform/shared/platform/ddb"
	"github.com/loyalty-platform/platform/shared/platform/web"
)

// Profiles read users' profiles (shared/domain/profile), where their
// favourite locations are.
type Profiles interface {
	Get(ctx context.Context, tenantID, userID string) (profile.Profile, error)
}

// Service runs the locations domain's operations. Other domains call Get
// (check-ins), Create, Replace, FindByTitle and Each (the import and export
// jobs); the handlers call the rest.
type Service struct {
	DB     ddb.API
	Tables ddb.Tables
	Clock  clock.Clock
	Cursor ddb.Cursor
	// Profiles read a user's favourite locations (nil: nobody has
	// favourites).
	Profiles Profiles

	cache summaryCache
}

func (s *Service) st() *store { return &store{db: s.DB, table: s.Tables.Locations} }

// newID returns a new random id (24 hex characters, like the platform's
// other ids).
func newID() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// validID reports whether id can be a location or tag group id; anything
// else is simply not found.
func validID(id string) bool {
	if id == "" || len(id) > 100 {
		return false
	}
	for _, r := range id {
		if r <= ' ' || r == 0x7f || r == '#' {
			return false
		}
	}
	return true
}

// Create adds a location to a tenant. The id, tenant and timestamps are
// assigned here (any in `in` are ignored); an empty state is DefaultState.
func (s *Service) Create(ctx context.Context, tenantID string, in Location) (Location, error) {
	if in.State == "" {
		in.State = DefaultState
	}
	if err := in.Validate(); err != nil {
		return Location{}, err
	}
	now := clock.Stamp(s.Clock.Now())
	in.ID, in.TenantID, in.Created, in.Updated, in.Distance = newID(), tenantID, now, now, nil
	st := s.st()
	if err := st.create(ctx, newRecord(in, 1)); err != nil {
		return Location{}, err
	}
	s.bump(ctx, tenantID)
	return in, nil
}

// Known returns which of ids are locations of the tenant, in any state
// (for other domains: a perk's locationIds). It reads the distinct ids
// with BatchGetItem, 100 a request (the requests in parallel), each item's
// id alone; an id of another tenant is not found (keys start with the
// tenant).
func (s *Service) Known(ctx context.Context, tenantID string, ids []string) (map[string]bool, error) {
	distinct := slices.Compact(slices.Sorted(slices.Values(ids)))
	if len(distinct) == 0 {
		return map[string]bool{}, nil
	}
	known, err := s.st().batchIDs(ctx, tenantID, distinct)
	if err != nil {
		return nil, fmt.Errorf("known locations: %w", err)
	}
	return known, nil
}

// Exists reports whether the tenant has location id, in any state (for
// other domains: one GetItem).
func (s *Service) Exists(ctx context.Context, tenantID, id string) (bool, error) {
	_, err := s.Get(ctx, tenantID, id)
	if errors.Is(err, ErrNotFound) {
		return false, nil
	}
	return err == nil, err
}

// Get returns one location of the tenant; an unknown id (or another
// tenant's) is ErrNotFound.
func (s *Service) Get(ctx context.Context, tenantID, id string) (Location, error) {
	if !validID(id) {
		return Location{}, fmt.Errorf("get location: %w", ErrNotFound)
	}
	r, err := s.st().get(ctx, tenantID, id)
	if err != nil {
		return Location{}, err
	}
	return r.Location, nil
}

// Update changes a location with PUT semantics: the fields in patch (JSON
// names, values as sent) replace the stored ones whole (an array or object
// is replaced, not merged; null clears an optional field), the others stay.
// `_id` and `tenantId` may be sent when they equal the location's (see
// UpdateFields); `created`, `updated` and `distance` are ignored. The merged
// location is validated as a whole, and a state change must be an allowed
// transition (CheckTransition). A concurrent change is retried a few times,
// then ErrConcurrentUpdate.
func (s *Service) Update(ctx context.Context, tenantID, id string, patch map[string]json.RawMessage) (Location, error) {
	if err := CheckFields(patch); err != nil {
		return Location{}, err
	}
	if !validID(id) {
		return Location{}, fmt.Errorf("update location: %w", ErrNotFound)
	}
	var err error
	for attempt := 0; attempt < maxWriteAttempts; attempt++ {
		backoff(attempt)
		var l Location
		l, err = s.update(ctx, tenantID, id, patch)
		if !errors.Is(err, ErrConcurrentUpdate) {
			return l, err
		}
	}
	return Location{}, err
}

// maxWriteAttempts is how often an update re-reads and re-applies itself
// after losing a race with another update of the same location.
const maxWriteAttempts = 5

// backoff sleeps a little, with jitter, before a retry.
func backoff(attempt int) {
	if attempt > 0 {
		time.Sleep(time.Duration(attempt*10+mathrand.IntN(20)) * time.Millisecond)
	}
}

func (s *Service) update(ctx context.Context, tenantID, id string, patch map[string]json.RawMessage) (Location, error) {
	st := s.st()
	old, err := st.get(ctx, tenantID, id)
	if err != nil {
		return Location{}, err
	}
	// Identity checks follow the read: another tenant's or an unknown
	// location is 404 whatever the body says.
	if patch, err = UpdateFields(patch, old.TenantID, old.ID); err != nil {
		return Location{}, err
	}
	next, err := merge(old.Location, patch)
	if err != nil {
		return Location{}, err
	}
	return s.write(ctx, old, next)
}

// merge applies a PUT body to a location: the body's top-level fields
// replace the location's, and the result is decoded strictly (so wrong
// types and unknown nested fields are VALIDATION_FAILED).
func merge(cur Location, patch map[string]json.RawMessage) (Location, error) {
	base, err := json.Marshal(cur)
	if err != nil {
		return Location{}, fmt.Errorf("merge location: %w", err)
	}
	fields := map[string]json.RawMessage{}
	if err := json.Unmarshal(base, &fields); err != nil {
		return Location{}, fmt.Errorf("merge location: %w", err)
	}
	fields = withoutServerFields(fields)
	for k, v := range patch {
		if isNull(v) {
			// null removes the field (CheckFields refused it where
			// the field cannot be removed).
			delete(fields, k)
			continue
		}
		fields[k] = v
	}
	merged, err := json.Marshal(fields)
	if err != nil {
		return Location{}, apierr.Invalid("", "the body is not valid JSON")
	}
	var next Location
	if err := web.DecodeBytes(merged, &next); err != nil {
		return Location{}, err
	}
	return next, nil
}

// Replace overwrites a whole location, found by l.ID, with l (the import
// job's update). Created is kept; an empty state keeps the current state;
// a state change must be an allowed transition. An unknown id is
// ErrNotFound.
func (s *Service) Replace(ctx context.Context, tenantID string, l Location) (Location, error) {
	if !validID(l.ID) {
		return Location{}, fmt.Errorf("replace location: %w", ErrNotFound)
	}
	var err error
	for attempt := 0; attempt < maxWriteAttempts; attempt++ {
		backoff(attempt)
		var old record
		old, err = s.st().get(ctx, tenantID, l.ID)
		if err != nil {
			return Location{}, err
		}
		var out Location
		out, err = s.write(ctx, old, l)
		if !errors.Is(err, ErrConcurrentUpdate) {
			return out, err
		}
	}
	return Location{}, err
}

// write validates next as the new state of old and stores it.
func (s *Service) write(ctx context.Context, old record, next Location) (Location, error) {
	if next.State == "" {
		next.State = old.State
	}
	if err := next.Validate(); err != nil {
		return Location{}, err
	}
	if err := CheckTransition(old.State, next.State); err != nil {
		return Location{}, err
	}
	next.ID, next.TenantID, next.Created, next.Distance = old.ID, old.TenantID, old.Created, nil
	next.Updated = clock.Stamp(s.Clock.Now())
	if err := s.st().replace(ctx, old, newRecord(next, 0)); err != nil {
		return Location{}, err
	}
	s.bump(ctx, old.TenantID)
	return next, nil
}

// FindByTitle returns the location whose title is title, ignoring case and
// surrounding spaces (the import job's second match). No match is
// ErrNotFound; several matches are VALIDATION_FAILED (the caller must name
// the location by _id).
func (s *Service) FindByTitle(ctx context.Context, tenantID, title string) (Location, error) {
	title = strings.TrimSpace(title)
	if title == "" {
		return Location{}, fmt.Errorf("find location by title: %w", ErrNotFound)
	}
	sums, err := s.st().byTitle(ctx, tenantID, title)
	if err != nil {
		return Location{}, err
	}
	switch len(sums) {
	case 0:
		return Location{}, fmt.Errorf("find location by title: %w", ErrNotFound)
	case 1:
		return s.Get(ctx, tenantID, sums[0].ID)
	default:
		return Location{}, apierr.Invalid("title", "%d locations have this title; name the location by _id", len(sums))
	}
}

// Filter selects locations for Each. Empty fields select everything;
// States matches any listed state, Tags any listed tag and Regions any listed
// region (tags and regions ignore case).
type Filter struct {
	States  []string
	Tags    []string
	Regions []string
}

// Validate checks a filter's states.
func (f Filter) Validate() error {
	for _, st := range f.States {
		switch st {
		case StatePending, StateActive, StateRetired:
		default:
			return apierr.Invalid("filters.state", "must be PENDING, ACTIVE or RETIRED")
		}
	}
	return nil
}

// Each calls fn with every location of the tenant that matches f, in title
// order (case-insensitive, then id), reading the full locations 100 at a
// time; it stops at the first error fn returns and returns it.
func (s *Service) Each(ctx context.Context, tenantID string, f Filter, fn func(Location) error) error {
	if err := f.Validate(); err != nil {
		return err
	}
	sums, err := s.summaries(ctx, tenantID)
	if err != nil {
		return err
	}
	m := matcher{states: toSet(f.States), tags: lowerAll(f.Tags), regions: lowerAll(f.Regions)}
	var ids []string
	flush := func() error {
		recs, err := s.st().batchGet(ctx, tenantID, ids)
		if err != nil {
			return err
		}
		for _, id := range ids {
			if r, ok := recs[id]; ok {
				if err := fn(r.Location); err != nil {
					return err
				}
			}
		}
		ids = ids[:0]
		return nil
	}
	for i := range sums {
		if !m.match(&sums[i]) {
			continue
		}
		ids = append(ids, sums[i].ID)
		if len(ids) == 100 {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	if len(ids) > 0 {
		return flush()
	}
	return nil
}

// bump marks the tenant's locations as changed so cached summaries are
// re-read. The write itself has succeeded: a failed bump is only logged
// (caches also expire after cacheMaxAge).
func (s *Service) bump(ctx context.Context, tenantID string) {
	s.cache.forget(tenantID)
	if err := s.st().bump(ctx, tenantID); err != nil {
		web.Logger(ctx).Error("bump locations version", "error", err.Error())
	}
}

func lowerAll(list []string) []string {
	out := make([]string, 0, len(list))
	for _, v := range list {
		if v = strings.ToLower(strings.TrimSpace(v)); v != "" {
			out = append(out, v)
		}
	}
	return out
}

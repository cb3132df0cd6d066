package location

// This file is the locations domain's side of the CSV import job
// (shared/domain/locationcsv): it decides how an imported row applies and returns
// the writes that apply it, so that the job commits them in its own
// transaction together with its checkpoint (each row exactly once). The
// writes are the same as Create's and Replace's (store.create and
// store.replace): the record, conditional on its absence or on the version
// read, and its summary (moved when the title changes). Keep the two in
// step; the import tests read imported locations back through the lists.
//
// A new location whose id the import derives from the row (ImportOptions.
// NewID) is written directly instead, before the transaction: the same
// record and summary, unconditional (nobody else knows the id yet, and
// writing them again writes the same location).

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/loyalty-platform/platform/shared/platform/apierr"
	"github.com/loyalty-platform/platform/shared/platform/clock"
)

// ImportWrite is how one imported location applies to the tenant's
// locations.
type ImportWrite struct {
	// Created is set when the row makes a new location, otherwise it
	// updates the stored one.
	Created bool
	// Location is the location as it is after the writes.
	Location Location
	// Items are the writes, for the caller's transaction; none when an
	// update would change nothing (the location and its `updated` stay).
	Items []types.TransactWriteItem
	// Direct are the writes of a new location whose id is
	// ImportOptions.NewID, instead of Items: unconditional Puts (and the
	// Delete of a stale summary) for BatchWriteItem, made before the
	// caller's transaction.
	Direct []types.TransactWriteItem
	// Bytes estimates the size of Items (a transaction holds at most 4 MB).
	Bytes int
	// Keys name what the writes touch ("id:<id>", "title:<lower title>"):
	// two writes sharing a key must not go into one transaction, and a
	// later row's title lookup must see the earlier write first.
	Keys []string
}

// Writes reports whether w writes anything.
func (w ImportWrite) Writes() bool { return len(w.Items)+len(w.Direct) > 0 }

// ImportOptions tune PrepareImport.
type ImportOptions struct {
	// Keep, when not nil, fills in what the row leaves to the stored
	// location it matches (see PrepareImport).
	Keep func(stored Location, next *Location)
	// Titles, when not nil, tells which titles no location has: those are
	// not looked up in the table.
	Titles *TitleIndex
	// NewID, when set, is the id a new location gets (ImportID of the
	// row), and its writes are Direct. A stored location with this id is
	// the row's own creation by an earlier run that stopped before its
	// commit: the row creates it again.
	NewID string
	// Recheck reads the location NewID names before creating one: set
	// after a run that may have stopped between its direct writes and its
	// commit, so that the row finds its own creation even when its title
	// was changed since.
	Recheck bool
}

// ImportID returns the id of the location that the row at input offset
// offset of the import operationID creates: the same for every run of
// the import, and like the ids Create gives.
func ImportID(tenantID, operationID string, offset int64) string {
	sum := sha256.Sum256(fmt.Appendf(nil, "location import\x00%s\x00%s\x00%d", tenantID, operationID, offset))
	return hex.EncodeToString(sum[:12])
}

// ImportKeys returns the keys (see ImportWrite.Keys) an imported row looks
// up before it is prepared: its _id, or else its title.
func ImportKeys(id, title string) []string {
	if id != "" {
		return []string{"id:" + id}
	}
	return []string{"title:" + strings.ToLower(strings.TrimSpace(title))}
}

// PrepareImport decides how the imported location l applies, in the API's
// matching order: the location with id when id is set (an unknown id is
// VALIDATION_FAILED naming _id), else the one with l's title (ignoring
// case; several are VALIDATION_FAILED), else a new location. l is
// validated as Create and Replace validate (an empty state keeps the
// current one, or is DefaultState for a new location; a state change must
// be an allowed transition). When a stored location matches and opt.Keep
// is not nil, keep(stored, &l) first fills in what the row leaves to the
// stored location (the import's columns absent from its file); keep must
// not modify the maps, slices or pointers l shares with the caller, nor
// stored. With opt.Titles (see TitleIndex), a title it does not know is
// not looked up in the table. With opt.NewID a new location's writes are
// Direct (see ImportOptions). Nothing is written.
func (s *Service) PrepareImport(ctx context.Context, tenantID, id string, l Location, opt ImportOptions) (ImportWrite, error) {
	keep, ix := opt.Keep, opt.Titles
	st := s.st()
	var old *record
	switch {
	case id != "":
		if !validID(id) {
			return ImportWrite{}, apierr.Invalid("_id", "no location has this id")
		}
		r, err := st.get(ctx, tenantID, id)
		if errors.Is(err, ErrNotFound) {
			return ImportWrite{}, apierr.Invalid("_id", "no location has this id")
		}
		if err != nil {
			return ImportWrite{}, err
		}
		old = &r
	case strings.TrimSpace(l.Title) != "":
		var sums []summary
		if ix == nil || ix.mayHave(l.Title) {
			var err error
			if sums, err = st.byTitle(ctx, tenantID, l.Title); err != nil {
				return ImportWrite{}, err
			}
		}
		switch len(sums) {
		case 0:
		case 1:
			r, err := st.get(ctx, tenantID, sums[0].ID)
			if err != nil {
				return ImportWrite{}, err
			}
			old = &r
		default:
			return ImportWrite{}, apierr.Invalid("title", "%d locations have this title; name the location by _id", len(sums))
		}
	}
	if old == nil && opt.NewID != "" && opt.Recheck && id == "" {
		r, err := st.get(ctx, tenantID, opt.NewID)
		switch {
		case err == nil:
			old = &r
		case !errors.Is(err, ErrNotFound):
			return ImportWrite{}, err
		}
	}
	now := clock.Stamp(s.Clock.Now())
	if old == nil || (id == "" && opt.NewID != "" && old.ID == opt.NewID) {
		return s.prepareCreate(tenantID, l, now, opt.NewID, old)
	}
	if keep != nil {
		keep(old.Location, &l)
	}
	return s.prepareReplace(*old, l, now)
}

// prepareCreate returns the writes of a new location: with newID, its
// direct writes (over stale, the same location written by an earlier run
// of the import, whose summary moves when its title changed since).
func (s *Service) prepareCreate(tenantID string, l Location, now, id string, stale *record) (ImportWrite, error) {
	if l.State == "" {
		l.State = DefaultState
	}
	if err := l.Validate(); err != nil {
		return ImportWrite{}, err
	}
	l.ID, l.TenantID, l.Created, l.Updated, l.Distance = id, tenantID, now, now, nil
	if id == "" {
		l.ID = newID()
	}
	keys := []string{"id:" + l.ID, "title:" + strings.ToLower(l.Title)}
	items, err := s.st().createItems(newRecord(l, 1))
	if err != nil {
		return ImportWrite{}, fmt.Errorf("prepare: %w", err)
	}
	if id != "" {
		for _, it := range items {
			it.Put.ConditionExpression = nil
		}
		if stale != nil {
			if oldPK, oldSK := indexPK(tenantID, stale.Title), indexSK(stale.Title, stale.ID); oldPK != indexPK(tenantID, l.Title) || oldSK != indexSK(l.Title, l.ID) {
				items = append(items, types.TransactWriteItem{Delete: &types.Delete{TableName: aws.String(s.st().table), Key: key(oldPK, oldSK)}})
				keys = append(keys, "title:"+strings.ToLower(stale.Title))
			}
		}
		return ImportWrite{Created: true, Location: l, Direct: items, Keys: keys}, nil
	}
	return ImportWrite{
		Created: true, Location: l, Items: items,
		Bytes: itemsBytes(items), Keys: keys,
	}, nil
}

func (s *Service) prepareReplace(old record, next Location, now string) (ImportWrite, error) {
	if next.State == "" {
		next.State = old.State
	}
	if err := next.Validate(); err != nil {
		return ImportWrite{}, err
	}
	if err := CheckTransition(old.State, next.State); err != nil {
		return ImportWrite{}, err
	}
	next.ID, next.TenantID, next.Created, next.Updated, next.Distance = old.ID, old.TenantID, old.Created, old.Updated, nil
	w := ImportWrite{Keys: []string{"id:" + old.ID, "title:" + strings.ToLower(old.Title), "title:" + strings.ToLower(next.Title)}}
	if same(old.Location, next) {
		w.Location = old.Location
		return w, nil
	}
	next.Updated = now
	items, err := s.st().replaceItems(old, newRecord(next, old.Version))
	if err != nil {
		return ImportWrite{}, fmt.Errorf("prepare: %w", err)
	}
	w.Location, w.Items, w.Bytes = next, items, itemsBytes(items)
	return w, nil
}

// ImportCommitted tells the domain that an import transaction wrote
// locations of the tenant, so lists see them at once.
func (s *Service) ImportCommitted(ctx context.Context, tenantID string) { s.bump(ctx, tenantID) }

// same reports whether two locations are equal as the API shows them,
// taking an empty list or object as absent: CSV has no notation for an
// empty one (an empty cell is absent), so an exported location whose
// `tags` are [] re-imports as unchanged.
func same(a, b Location) bool {
	ja, err1 := json.Marshal(withoutEmpties(a))
	jb, err2 := json.Marshal(withoutEmpties(b))
	return err1 == nil && err2 == nil && bytes.Equal(ja, jb)
}

// itemBytes estimates the stored size of a Put (attribute names and
// values).
func itemsBytes(items []types.TransactWriteItem) int {
	n := 0
	for _, it := range items {
		n += itemBytes(it)
	}
	return n
}

func itemBytes(w types.TransactWriteItem) int {
	if w.Put == nil {
		return 100
	}
	n := 0
	for k, v := range w.Put.Item {
		n += len(k) + attrBytes(v)
	}
	return n
}

func attrBytes(v types.AttributeValue) int {
	switch a := v.(type) {
	case *types.AttributeValueMemberS:
		return len(a.Value)
	case *types.AttributeValueMemberN:
		return len(a.Value)
	case *types.AttributeValueMemberL:
		n := 3
		for _, e := range a.Value {
			n += 1 + attrBytes(e)
		}
		return n
	case *types.AttributeValueMemberM:
		n := 3
		for k, e := range a.Value {
			n += 1 + len(k) + attrBytes(e)
		}
		return n
	case *types.AttributeValueMemberSS:
		n := 3
		for _, e := range a.Value {
			n += 1 + len(e)
		}
		return n
	default:
		return 1
	}
}

// withoutEmpties returns l with its empty top-level lists and objects
// absent (nil).
func withoutEmpties(l Location) Location {
	if len(l.OpeningHours) == 0 {
		l.OpeningHours = nil
	}
	if len(l.Facilities) == 0 {
		l.Facilities = nil
	}
	if len(l.Services) == 0 {
		l.Services = nil
	}
	if len(l.Buttons) == 0 {
		l.Buttons = nil
	}
	if len(l.Links) == 0 {
		l.Links = nil
	}
	if len(l.Beacons) == 0 {
		l.Beacons = nil
	}
	if len(l.Regions) == 0 {
		l.Regions = nil
	}
	if len(l.Tags) == 0 {
		l.Tags = nil
	}
	if len(l.Zones) == 0 {
		l.Zones = nil
	}
	if len(l.Extended) == 0 {
		l.Extended = nil
	}
	return l
}

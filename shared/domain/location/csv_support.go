package location

// This file is the locations domain's side of the CSV import job
// (shared/domain/locationcsv): it decides how imported rows apply and
// returns the writes that apply them. The writes are the same items as
// Create's and Replace's (store.createItems and store.replaceItems): the
// record and its summary (moved when the title changes, written only when
// it changes). Keep them in step; the import tests read imported locations
// back through the lists.
//
// An update goes into the job's chunk transaction, as Replace writes it:
// the record conditional on the version read, with its summary, so that a
// client's PUT between the row's read and the commit fails the condition
// (the job reads the location again and applies the row on top of it) and
// the record and summary change together with the chunk's checkpoint.
//
// A real import writes its new locations directly (ImportOptions.Direct):
// unconditional Puts of the record and summary that the job makes with
// BatchWriteItem before the chunk's transaction, so that creating a
// location costs no transaction item. A new location's record keeps its
// row's token (ImportToken: the operation and the row's input offset) as
// its Origin for good, so that a run resumed after one that stopped
// between its direct writes and its commit finds the row's own creation
// (even renamed since) and reports the row as an uninterrupted run does.
//
// The id of a new location is derived from the tenant and its title
// (TitleID), so two imports that create the same title at the same time,
// neither seeing the other's location yet, write the same location: a
// title never gets two locations from imports, whatever runs concurrently.
// A title whose first id is taken by a location renamed since takes the
// next one (generation 1, 2, ...); the id is read before it is written,
// except when the run's title index knows that no location had it.

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"strings"
	"sync"

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
	// Direct are the writes of a new location of a direct import
	// (ImportOptions.Direct), instead of Items: unconditional Puts (and
	// the Delete of a moved summary) for BatchWriteItem, made before the
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

// ImportOptions tune PrepareImports.
type ImportOptions struct {
	// Keep, when not nil, fills in what the row leaves to the stored
	// location it matches (see PrepareImports).
	Keep func(stored Location, next *Location)
	// Titles, when not nil, tells which titles no location has (those are
	// not looked up in the table) and which locations have a title (see
	// TitleIndex).
	Titles *TitleIndex
	// Direct makes the writes of new locations Direct, their ids TitleIDs
	// and their records' Origin the rows' tokens (a real import; a dry run
	// writes nothing). Updates are Items either way.
	Direct bool
}

// ImportRow is a row of PrepareImports: the location named by ID (the
// row's _id, or empty) or else by its title, and Token, the row's
// ImportToken.
type ImportRow struct {
	ID       string
	Location Location
	Token    string
}

// ImportToken names the row at input offset offset of the import
// operationID: the same for every run of the import.
func ImportToken(tenantID, operationID string, offset int64) string {
	sum := sha256.Sum256(fmt.Appendf(nil, "location import\x00%s\x00%s\x00%d", tenantID, operationID, offset))
	return hex.EncodeToString(sum[:12])
}

// TitleID returns the id of a new location of the tenant that an import
// creates with title (ignoring case and surrounding spaces), of the
// title's generation gen (0 unless a location renamed since holds the
// earlier ids): the same for every import, and like the ids Create gives.
func TitleID(tenantID, title string, gen int) string {
	sum := sha256.Sum256(fmt.Appendf(nil, "location title\x00%s\x00%s\x00%d", tenantID, normTitle(title), gen))
	return hex.EncodeToString(sum[:12])
}

// maxGenerations bounds the title generations a row tries; past them the
// new location's id is its row's token.
const maxGenerations = 8

// normTitle is a title as matched: lower case, without surrounding spaces.
func normTitle(title string) string { return strings.ToLower(strings.TrimSpace(title)) }

// ImportKeys returns the keys (see ImportWrite.Keys) an imported row looks
// up before it is prepared: its _id, or else its title.
func ImportKeys(id, title string) []string {
	if id != "" {
		return []string{"id:" + id}
	}
	return []string{"title:" + normTitle(title)}
}

// prepareWorkers is how many title lookups PrepareImports makes at once.
const prepareWorkers = 16

// PrepareImports decides how each imported row applies, in the API's
// matching order: the location with the row's id when it has one (an
// unknown id is VALIDATION_FAILED naming _id), else the one with its
// title (ignoring case; several are VALIDATION_FAILED), else a new
// location. A row's location is validated as Create and Replace validate
// (an empty state keeps the current one, or is DefaultState for a new
// location; a state change must be an allowed transition). When a stored
// location matches and opt.Keep is not nil, keep(stored, &l) first fills
// in what the row leaves to the stored location (the import's columns
// absent from its file); keep must not modify the maps, slices or
// pointers l shares with the caller, nor stored. Nothing is written.
//
// The reads are batched: the locations named by id, by the title index's
// map and by the title ids of new locations (unless the index knows no
// location had the id) are read with BatchGetItem (consistently), and only
// titles the index cannot answer are looked up (a Query each, several at
// once). With opt.Direct a location that a row of the same token created
// (an earlier run of the import) is the row's own: the row creates it
// again, even when it was renamed since. It returns each
// row's write or client error (an *apierr.Error), or an error of the
// database.
func (s *Service) PrepareImports(ctx context.Context, tenantID string, rows []ImportRow, opt ImportOptions) ([]ImportWrite, []error, error) {
	out := make([]ImportWrite, len(rows))
	errs := make([]error, len(rows))
	// cands are the ids each row may match; lookup the rows whose title
	// is looked up in the table.
	cands := make([][]string, len(rows))
	var lookup []int
	for i, r := range rows {
		switch {
		case r.ID != "":
			if !validID(r.ID) {
				errs[i] = apierr.Invalid("_id", "no location has this id")
				continue
			}
			cands[i] = []string{r.ID}
		case strings.TrimSpace(r.Location.Title) != "":
			ids, mapped := []string(nil), false
			if opt.Titles != nil {
				ids, mapped = opt.Titles.candidates(r.Location.Title)
			}
			switch {
			case mapped:
				cands[i] = ids
			case opt.Titles == nil || opt.Titles.mayHave(r.Location.Title):
				lookup = append(lookup, i)
			}
		}
	}
	if err := s.lookupTitles(ctx, tenantID, rows, lookup, cands); err != nil {
		return nil, nil, err
	}
	// gens holds the generation of each new title's id read, -1 for rows
	// that need none.
	gens := make([]int, len(rows))
	for i, r := range rows {
		gens[i] = -1
		if opt.Direct && errs[i] == nil && r.ID == "" && strings.TrimSpace(r.Location.Title) != "" {
			// The title id is read unless the index knows that no
			// location had it (a new title's row then reads nothing).
			gens[i] = 0
			if id := TitleID(tenantID, r.Location.Title, 0); opt.Titles == nil || opt.Titles.mayBeID(id) {
				cands[i] = append(cands[i], id)
			}
		}
	}
	recs := map[string]record{}
	if err := s.readRecords(ctx, tenantID, cands, recs); err != nil {
		return nil, nil, err
	}
	now := clock.Stamp(s.Clock.Now())
	for {
		// more are the rows whose title id of the generation read is
		// taken by a location renamed since: read the next.
		var more []int
		for i, r := range rows {
			if errs[i] != nil || out[i].Keys != nil {
				continue
			}
			w, next, err := s.prepareRow(tenantID, r, cands[i], gens[i], recs, opt, now)
			switch {
			case err != nil:
				errs[i] = err
			case next:
				gens[i]++
				cands[i] = append(cands[i], TitleID(tenantID, r.Location.Title, gens[i]))
				more = append(more, i)
			default:
				out[i] = w
			}
		}
		if len(more) == 0 {
			break
		}
		next := make([][]string, len(rows))
		for _, i := range more {
			next[i] = cands[i][len(cands[i])-1:]
		}
		if err := s.readRecords(ctx, tenantID, next, recs); err != nil {
			return nil, nil, err
		}
	}
	for i := range errs {
		if _, client := apierr.As(errs[i]); errs[i] != nil && !client {
			return nil, nil, errs[i]
		}
	}
	return out, errs, nil
}

// lookupTitles adds to cands the ids of the locations titled as the rows
// at indexes idx (a Query each, several at once).
func (s *Service) lookupTitles(ctx context.Context, tenantID string, rows []ImportRow, idx []int, cands [][]string) error {
	st := s.st()
	sem := make(chan struct{}, prepareWorkers)
	lerrs := make([]error, len(idx))
	var wg sync.WaitGroup
	for n, i := range idx {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			sums, err := st.byTitle(ctx, tenantID, rows[i].Location.Title)
			for _, sum := range sums {
				cands[i] = append(cands[i], sum.ID)
			}
			lerrs[n] = err
		}()
	}
	wg.Wait()
	return errors.Join(lerrs...)
}

// readRecords reads the records of the ids in cands not in recs yet into
// recs (BatchGetItem); missing ids stay absent.
func (s *Service) readRecords(ctx context.Context, tenantID string, cands [][]string, recs map[string]record) error {
	var ids []string
	seen := map[string]bool{}
	for _, cs := range cands {
		for _, id := range cs {
			if _, ok := recs[id]; !ok && !seen[id] && validID(id) {
				seen[id] = true
				ids = append(ids, id)
			}
		}
	}
	if len(ids) == 0 {
		return nil
	}
	got, err := s.st().batchGet(ctx, tenantID, ids)
	if err != nil {
		return fmt.Errorf("read imported locations: %w", err)
	}
	maps.Copy(recs, got)
	return nil
}

// prepareRow decides how row r applies, given the records read of its
// candidate ids (cands: its id; or the locations the index or a lookup
// gave for its title, then its title ids up to generation gen). next asks
// for the title id of the next generation to be read.
func (s *Service) prepareRow(tenantID string, r ImportRow, cands []string, gen int, recs map[string]record, opt ImportOptions, now string) (w ImportWrite, next bool, err error) {
	if r.ID != "" {
		old, ok := recs[r.ID]
		if !ok {
			return ImportWrite{}, false, apierr.Invalid("_id", "no location has this id")
		}
		return s.prepareReplace(old, r, opt, now)
	}
	if strings.TrimSpace(r.Location.Title) == "" {
		// No title to match: a new location, which validation refuses.
		return s.prepareCreate(tenantID, r, newID(), nil, opt, now)
	}
	title := normTitle(r.Location.Title)
	var holders []record
	var own *record
	seen := map[string]bool{}
	for _, id := range cands {
		rec, ok := recs[id]
		if !ok || seen[id] {
			continue
		}
		seen[id] = true
		if opt.Direct && rec.Origin == r.Token {
			own = &rec
		}
		if normTitle(rec.Title) == title {
			holders = append(holders, rec)
		}
	}
	switch {
	case own != nil:
		// The row's own creation by an earlier run of the import.
		return s.prepareCreate(tenantID, r, own.ID, own, opt, now)
	case len(holders) == 1:
		return s.prepareReplace(holders[0], r, opt, now)
	case len(holders) > 1:
		return ImportWrite{}, false, apierr.Invalid("title", "%d locations have this title; name the location by _id", len(holders))
	case !opt.Direct:
		return s.prepareCreate(tenantID, r, newID(), nil, opt, now)
	}
	id := TitleID(tenantID, r.Location.Title, gen)
	if _, taken := recs[id]; taken {
		if gen+1 < maxGenerations {
			return ImportWrite{}, true, nil
		}
		id = r.Token
	}
	return s.prepareCreate(tenantID, r, id, nil, opt, now)
}

// prepareCreate returns the writes of a new location with id: with
// opt.Direct, its direct writes (over stale, the same location written
// by an earlier run of the import, whose summary moves when its title
// changed since).
func (s *Service) prepareCreate(tenantID string, r ImportRow, id string, stale *record, opt ImportOptions, now string) (ImportWrite, bool, error) {
	l := r.Location
	if l.State == "" {
		l.State = DefaultState
	}
	if err := l.Validate(); err != nil {
		return ImportWrite{}, false, err
	}
	l.ID, l.TenantID, l.Created, l.Updated, l.Distance = id, tenantID, now, now, nil
	keys := []string{"id:" + l.ID, "title:" + strings.ToLower(l.Title)}
	rec := newRecord(l, 1)
	if opt.Direct {
		rec.Origin = r.Token
	}
	items, err := s.st().createItems(rec)
	if err != nil {
		return ImportWrite{}, false, fmt.Errorf("prepare: %w", err)
	}
	if !opt.Direct {
		return ImportWrite{Created: true, Location: l, Items: items, Bytes: itemsBytes(items), Keys: keys}, false, nil
	}
	for _, it := range items {
		it.Put.ConditionExpression = nil
	}
	if stale != nil {
		if oldPK, oldSK := indexPK(tenantID, stale.Title), indexSK(stale.Title, stale.ID); oldPK != indexPK(tenantID, l.Title) || oldSK != indexSK(l.Title, l.ID) {
			items = append(items, types.TransactWriteItem{Delete: &types.Delete{TableName: aws.String(s.st().table), Key: key(oldPK, oldSK)}})
			keys = append(keys, "title:"+strings.ToLower(stale.Title))
		}
	}
	return ImportWrite{Created: true, Location: l, Direct: items, Keys: keys}, false, nil
}

// prepareReplace returns the writes that update old as row r says, for
// the caller's transaction (conditional on old's version, see
// store.replaceItems): none when nothing changes.
func (s *Service) prepareReplace(old record, r ImportRow, opt ImportOptions, now string) (ImportWrite, bool, error) {
	next := r.Location
	if opt.Keep != nil {
		opt.Keep(old.Location, &next)
	}
	if next.State == "" {
		next.State = old.State
	}
	if err := next.Validate(); err != nil {
		return ImportWrite{}, false, err
	}
	if err := CheckTransition(old.State, next.State); err != nil {
		return ImportWrite{}, false, err
	}
	next.ID, next.TenantID, next.Created, next.Updated, next.Distance = old.ID, old.TenantID, old.Created, old.Updated, nil
	w := ImportWrite{Keys: []string{"id:" + old.ID, "title:" + strings.ToLower(old.Title), "title:" + strings.ToLower(next.Title)}}
	if same(old.Location, next) {
		w.Location = old.Location
		return w, false, nil
	}
	next.Updated = now
	items, err := s.st().replaceItems(old, newRecord(next, old.Version))
	if err != nil {
		return ImportWrite{}, false, fmt.Errorf("prepare: %w", err)
	}
	w.Location, w.Items, w.Bytes = next, items, itemsBytes(items)
	return w, false, nil
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

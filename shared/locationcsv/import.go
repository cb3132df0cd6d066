package locationcsv

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/loyalty-platform/platform/shared/action"
	"github.com/loyalty-platform/platform/shared/apierr"
	"github.com/loyalty-platform/platform/shared/job"
	"github.com/loyalty-platform/platform/shared/location"
	"github.com/loyalty-platform/platform/shared/operation"
)

// Action values of the results file. A row whose location already holds
// exactly what the row says is "updated" too, but nothing is written (its
// `updated` timestamp stays) and it counts as skipped.
const (
	ActionCreated = "created"
	ActionUpdated = "updated"
)

// Action types recorded for imported locations when suppressEvents is
// false (metadata: operationId, source IMPORT).
const (
	ActionLocationCreated = "LOCATION_CREATED"
	ActionLocationUpdated = "LOCATION_UPDATED"
)

// Batch limits of the import: a DynamoDB transaction holds at most 100
// items and 4 MB; the checkpoint takes one item.
const (
	groupSize      = 100     // rows read and prepared together
	prepareWorkers = 16      // rows prepared at once (their reads in parallel)
	maxBatchRows   = 500     // rows per commit (and results part)
	maxBatchItems  = 99      // transaction items, the checkpoint included
	maxBatchBytes  = 3 << 20 // estimated bytes of the transaction
	maxBatchCells  = 4 << 20 // bytes of the input cells held (the results part)
)

// importParams are an import's parameters (the operation's metadata).
type importParams struct {
	DryRun         bool
	SuppressEvents bool
}

func importParamsOf(md map[string]any) importParams {
	p := importParams{DryRun: true, SuppressEvents: true}
	if v, ok := md["dryRun"].(bool); ok {
		p.DryRun = v
	}
	if v, ok := md["suppressEvents"].(bool); ok {
		p.SuppressEvents = v
	}
	return p
}

// importKind runs location imports.
type importKind struct{ s *Service }

// entry is one row of a batch.
type entry struct {
	rec    []string
	offset int64 // input offset just after the row
	row    row
	write  *location.ImportWrite
	action []types.TransactWriteItem
	errs   []string
	// prepared is the number of the importer's commits when the row was
	// last prepared: a later commit that wrote one of its keys makes the
	// preparation stale.
	prepared int
}

// batch is the rows read since the last commit.
type batch struct {
	entries []*entry
	keys    map[string]bool
	items   int
	bytes   int
	cells   int
	offset  int64
}

func newBatch(offset int64) *batch { return &batch{keys: map[string]bool{}, offset: offset} }

func (b *batch) collides(keys []string) bool {
	for _, k := range keys {
		if b.keys[k] {
			return true
		}
	}
	return false
}

// Run imports the rows of the input file from the checkpoint on.
func (k importKind) Run(ctx context.Context, r *job.Run) error {
	in, err := r.OpenInput(ctx)
	if err != nil {
		return err
	}
	defer in.Close()
	h, err := parseHeader(in.Header)
	if err != nil {
		return job.BadFile("file: %s", err.Error())
	}
	params := importParamsOf(r.Operation().Metadata)
	imp := &importer{s: k.s, r: r, h: h, params: params, tenantID: r.TenantID(), opID: r.Operation().ID, committed: map[string]int{}}
	if !params.DryRun && !params.SuppressEvents && k.s.TenantTitle != nil {
		// Actions name the tenant; read it once, before rows are
		// prepared in parallel.
		if imp.tenant, err = k.s.TenantTitle(ctx, imp.tenantID); err != nil {
			return fmt.Errorf("tenant of the import: %w", err)
		}
	}
	if !r.Checkpoint().InputDone {
		if imp.titles, err = k.s.Locations.LoadTitleIndex(ctx, imp.tenantID, location.TitleIndexLimit); err != nil {
			return fmt.Errorf("titles of the import: %w", err)
		}
	}
	cp := r.Checkpoint()
	cp.Header, cp.Columns = in.Header, h.resultsHeader()
	if cp.InputSize == 0 {
		cp.InputSize = in.Size
	}
	imp.cp, imp.res = cp, r.Result()
	// Lists learn of the commits in the background, one bump at a time
	// (commits during a bump ask for one more after it).
	imp.bumps = make(chan struct{}, 1)
	bumped := make(chan struct{})
	go func() {
		defer close(bumped)
		for range imp.bumps {
			k.s.Locations.ImportCommitted(ctx, imp.tenantID)
		}
	}()
	defer func() { close(imp.bumps); <-bumped }()
	b := newBatch(cp.Offset)
	group := make([]*entry, 0, groupSize)
	for eof := false; !eof; {
		// Read a group of rows and prepare them at once (their reads in
		// parallel), then place them in the batch in order.
		group = group[:0]
		for len(group) < groupSize {
			rec, offset, err := in.Read()
			if errors.Is(err, io.EOF) {
				eof = true
				break
			}
			var rowErr *job.RowError
			switch {
			case errors.As(err, &rowErr):
				group = append(group, &entry{rec: rec, offset: offset, errs: []string{rowErr.Message}})
			case err != nil:
				return err
			default:
				e := &entry{rec: rec, offset: offset, row: h.parseRow(rec)}
				e.errs = e.row.errs
				group = append(group, e)
			}
		}
		// Every row of the group is prepared after all earlier commits:
		// only commits from here on can make a preparation stale.
		clear(imp.committed)
		if err := imp.prepareAll(ctx, group); err != nil {
			return err
		}
		for _, e := range group {
			if b, err = imp.place(ctx, b, e); err != nil {
				return err
			}
			if b.full() || r.ShouldYield(int64(len(b.entries))) {
				if err := imp.commit(ctx, b, false); err != nil {
					return err
				}
				b = newBatch(imp.cp.Offset)
				// The rest of the group was read but not committed: a
				// continued run reads it again from the checkpoint.
				if r.ShouldYield(0) {
					return job.ErrYield
				}
			}
		}
	}
	return imp.commit(ctx, b, true)
}

func (b *batch) full() bool {
	return len(b.entries) >= maxBatchRows || b.items >= maxBatchItems-8 || b.bytes >= maxBatchBytes || b.cells >= maxBatchCells
}

// importer is one run of an import.
type importer struct {
	s        *Service
	r        *job.Run
	h        *header
	params   importParams
	tenantID string
	opID     string
	cp       operation.Checkpoint
	res      operation.Result
	tenant   string // the tenant's title, for actions
	// titles tells which titles no location of the tenant has, so that
	// their rows need no lookup (nil for a tenant with more than
	// location.TitleIndexLimit locations: every title is looked up).
	titles *location.TitleIndex
	// bumps asks for location.Service.ImportCommitted after a commit.
	bumps chan struct{}
	// commits counts the transactions that wrote locations; committed
	// maps the keys (see location.ImportWrite.Keys) they wrote since the
	// current group was prepared to the number of the last one.
	commits   int
	committed map[string]int
}

// place adds a prepared entry to the batch. A row prepared before a
// commit that wrote one of its keys (a group's rows are prepared together,
// and the batch may commit partway through the group) is prepared again
// first: it may now match the location an earlier row created or renamed.
// When the row looks up or writes something the batch writes (its reads
// did not see the batch), or would not fit in the transaction, the batch
// is committed first and the row prepared again.
func (imp *importer) place(ctx context.Context, b *batch, e *entry) (*batch, error) {
	if imp.stale(e) {
		if err := imp.prepare(ctx, e); err != nil {
			return nil, err
		}
	}
	if e.write == nil || imp.params.DryRun {
		return imp.add(b, e), nil
	}
	if b.collides(location.ImportKeys(e.row.id, e.row.loc.Title)) || b.collides(e.write.Keys) ||
		b.items+len(e.write.Items)+len(e.action)+1 > maxBatchItems || b.bytes+e.write.Bytes > maxBatchBytes {
		if err := imp.commit(ctx, b, false); err != nil {
			return nil, err
		}
		b = newBatch(imp.cp.Offset)
		if err := imp.prepare(ctx, e); err != nil {
			return nil, err
		}
	}
	return imp.add(b, e), nil
}

// stale reports whether a commit after e was prepared wrote a key that e
// looks up or writes. Rows that did not parse (a parsed row always has a
// title) are never prepared.
func (imp *importer) stale(e *entry) bool {
	if imp.params.DryRun || len(e.row.errs) > 0 || e.row.loc.Title == "" || len(imp.committed) == 0 {
		return false
	}
	keys := location.ImportKeys(e.row.id, e.row.loc.Title)
	if e.write != nil {
		keys = append(keys, e.write.Keys...)
	}
	for _, k := range keys {
		if imp.committed[k] > e.prepared {
			return true
		}
	}
	return false
}

// prepareAll prepares the rows of a group that parsed cleanly, several at
// a time.
func (imp *importer) prepareAll(ctx context.Context, group []*entry) error {
	sem := make(chan struct{}, prepareWorkers)
	errs := make([]error, len(group))
	var wg sync.WaitGroup
	for i, e := range group {
		if len(e.errs) > 0 {
			continue
		}
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			errs[i] = imp.prepare(ctx, e)
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// prepare decides how a parsed row applies (PrepareImport) and, unless the
// row fails validation, what it writes. Client errors become the row's
// errors; anything else is returned.
func (imp *importer) prepare(ctx context.Context, e *entry) error {
	e.write, e.action, e.errs = nil, nil, nil
	e.prepared = imp.commits
	w, err := imp.s.Locations.PrepareImport(ctx, imp.tenantID, e.row.id, e.row.loc, imp.h.keep, imp.titles)
	if err != nil {
		if ae, ok := apierr.As(err); ok && ae.Code.Status() < 500 {
			e.errs = []string{ae.Message}
			return nil
		}
		return fmt.Errorf("row: %w", err)
	}
	e.write = &w
	if imp.params.DryRun || len(w.Items) == 0 || imp.params.SuppressEvents {
		return nil
	}
	a, err := imp.actionItem(w)
	if err != nil {
		return err
	}
	e.action = []types.TransactWriteItem{a}
	return nil
}

// add puts an entry into the batch. The keys of a row that writes are
// noted: a later row touching one of them goes into the next transaction.
func (imp *importer) add(b *batch, e *entry) *batch {
	b.entries = append(b.entries, e)
	b.offset = e.offset
	for _, c := range e.rec {
		b.cells += len(c)
	}
	if e.write == nil || imp.params.DryRun || len(e.write.Items) == 0 {
		return b
	}
	b.items += len(e.write.Items) + len(e.action)
	b.bytes += e.write.Bytes
	for _, k := range append(location.ImportKeys(e.row.id, e.row.loc.Title), e.write.Keys...) {
		b.keys[k] = true
	}
	return b
}

// commit writes the batch: its results part, its rows' writes and the
// checkpoint, in one transaction. When a location changed between the
// row's read and the commit, the batch is prepared again (twice at most);
// a row that still conflicts is reported as an error.
func (imp *importer) commit(ctx context.Context, b *batch, last bool) error {
	for attempt := 0; ; attempt++ {
		lines, items, cp, res := imp.outcome(b, last)
		err := imp.r.Commit(ctx, lines, cp, res, items)
		var failed *operation.ItemsFailedError
		if !errors.As(err, &failed) {
			if err != nil {
				return err
			}
			imp.cp, imp.res = imp.r.Checkpoint(), imp.r.Result()
			if len(items) > 0 {
				select {
				case imp.bumps <- struct{}{}:
				default: // a bump after this commit is already asked for
				}
				imp.noteCommitted(b)
			}
			return nil
		}
		// Find the rows whose items failed.
		bad := map[*entry]bool{}
		i := 0
		for _, e := range b.entries {
			if e.write == nil || imp.params.DryRun {
				continue
			}
			n := len(e.write.Items) + len(e.action)
			for _, f := range failed.Indexes {
				if f >= i && f < i+n {
					bad[e] = true
				}
			}
			i += n
		}
		for e := range bad {
			if attempt >= 2 {
				e.write, e.action, e.errs = nil, nil, []string{"the location changed while the row was imported; import the row again"}
				continue
			}
			if err := imp.prepare(ctx, e); err != nil {
				return err
			}
		}
	}
}

// noteCommitted records the keys the committed batch b wrote, so that
// rows of the group prepared before the commit are prepared again.
func (imp *importer) noteCommitted(b *batch) {
	imp.commits++
	for _, e := range b.entries {
		if e.write == nil || len(e.errs) > 0 || len(e.write.Items) == 0 {
			continue
		}
		if imp.titles != nil {
			imp.titles.Note(*e.write)
		}
		for _, k := range append(location.ImportKeys(e.row.id, e.row.loc.Title), e.write.Keys...) {
			imp.committed[k] = imp.commits
		}
	}
}

// outcome builds a batch's results lines, transaction items, checkpoint
// and result.
func (imp *importer) outcome(b *batch, last bool) ([][]string, []types.TransactWriteItem, operation.Checkpoint, operation.Result) {
	cp, res := imp.cp, imp.res
	lines := make([][]string, 0, len(b.entries))
	var items []types.TransactWriteItem
	for _, e := range b.entries {
		res.Total++
		switch {
		case len(e.errs) > 0 || e.write == nil:
			res.Errors++
			lines = append(lines, imp.h.resultLine(e.rec, "", "", e.errs))
		default:
			act := ActionUpdated
			id := e.write.Location.ID
			if e.write.Created {
				act = ActionCreated
				if imp.params.DryRun {
					id = "" // a dry run creates nothing
				}
			}
			if imp.params.DryRun || len(e.write.Items) == 0 {
				res.Skipped++
			} else {
				res.Imported++
				items = append(items, e.write.Items...)
				items = append(items, e.action...)
			}
			lines = append(lines, imp.h.resultLine(e.rec, id, act, nil))
		}
	}
	cp.Rows += int64(len(b.entries))
	cp.Offset = b.offset
	cp.InputDone = last
	res.EtaMs = imp.r.ETA(cp)
	res.Message = imp.message(res, last)
	if last {
		res.EtaMs = 0
		res.Href = "/locations/imports/" + imp.opID
	}
	return lines, items, cp, res
}

func (imp *importer) message(res operation.Result, last bool) string {
	prefix := "importing"
	switch {
	case last && imp.params.DryRun:
		prefix = "dry run done (nothing written)"
	case last:
		prefix = "done"
	case imp.params.DryRun:
		prefix = "dry run"
	}
	return fmt.Sprintf("%s: %d rows, %d imported, %d skipped, %d with errors", prefix, res.Total, res.Imported, res.Skipped, res.Errors)
}

// actionItem returns the action that records an imported location.
func (imp *importer) actionItem(w location.ImportWrite) (types.TransactWriteItem, error) {
	typ := ActionLocationUpdated
	if w.Created {
		typ = ActionLocationCreated
	}
	l := w.Location
	a := action.Action{
		Type: typ, TenantID: imp.tenantID,
		When:     action.WhenAt(imp.s.Clock.Now(), action.Zone(l.Timezone)),
		Metadata: map[string]any{"operationId": imp.opID, "source": "IMPORT"},
		Context: action.Context{
			Tenant:   action.TenantRef{ID: imp.tenantID, Title: imp.tenant},
			Location: &action.LocationRef{ID: l.ID, Title: l.Title, Geo: l.Geo, Regions: l.Regions, Tags: l.Tags},
		},
	}
	return imp.s.Actions.TransactItem(a)
}

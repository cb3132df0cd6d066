package locationcsv

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"sync"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/loyalty-platform/platform/shared/domain/action"
	"github.com/loyalty-platform/platform/shared/domain/location"
	"github.com/loyalty-platform/platform/shared/domain/operation"
	"github.com/loyalty-platform/platform/shared/platform/apierr"
	"github.com/loyalty-platform/platform/shared/platform/job"
)

// Action values of the results file. A row whose location already holds
// exactly what the row says is "updated" too, but nothing is written (its
// `updated` timestamp stays) and it counts as skipped.
const (
	ActionCreated = "created"
	ActionUpdated = "updated"
)

// Batch limits of the import: a DynamoDB transaction holds at most 100
// items and 4 MB; the chunk's marker and fence check take two items.
const (
	groupSize      = 100 // rows read and prepared together
	prepareWorkers = 16  // rows prepared at once (their reads in parallel)
	maxBatchRows   = 500 // rows per commit (and results part)
	maxBatchItems  = 96  // transaction items of the rows
	// maxBatchDirect bounds the direct writes of a commit (its new
	// locations, written with BatchWriteItem before the transaction), so
	// that several chunks are in flight at once.
	maxBatchDirect = 500
	maxBatchBytes  = 3 << 20 // estimated bytes of the transaction
	maxBatchCells  = 4 << 20 // bytes of the input cells held (the results part)
	// maxRetries is how often a row whose location changed between its
	// read and the commit is prepared again before it fails.
	maxRetries = 2
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
	rec        []string
	start, end int64 // input offsets of the row
	row        row
	write      *location.ImportWrite
	action     []types.TransactWriteItem
	errs       []string
	// prepared is the number of the importer's commits when the row was
	// last prepared: a later commit that wrote one of its keys makes the
	// preparation stale.
	prepared int
	retries  int
}

// batch is the rows read since the last chunk was submitted.
type batch struct {
	entries []*entry
	keys    map[string]bool
	items   int
	direct  int
	bytes   int
	cells   int
}

func newBatch() *batch { return &batch{keys: map[string]bool{}} }

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
	imp := &importer{s: k.s, r: r, h: h, params: params, tenantID: r.TenantID(), opID: r.Operation().ID, committed: map[string]int{}, recheck: r.AfterStop()}
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
	imp.c = r.Chunks(ctx, in, job.ChunkOptions{Columns: h.resultsHeader(), Message: imp.message, Href: "/locations/imports/" + imp.opID})
	defer imp.c.Abort()
	b := newBatch()
	group := make([]*entry, 0, groupSize)
	for eof := false; !eof; {
		// Read a group of rows and prepare them at once (their reads in
		// parallel), then place them in the batch in order.
		group = group[:0]
		for len(group) < groupSize {
			rec, start, end, err := in.ReadRow()
			if errors.Is(err, io.EOF) {
				eof = true
				break
			}
			var rowErr *job.RowError
			switch {
			case errors.As(err, &rowErr):
				group = append(group, &entry{rec: rec, start: start, end: end, errs: []string{rowErr.Message}})
			case err != nil:
				return err
			default:
				e := &entry{rec: rec, start: start, end: end, row: h.parseRow(rec)}
				e.errs = e.row.errs
				group = append(group, e)
			}
		}
		// Every row of the group is prepared after all earlier commits:
		// only commits from here on can make a preparation stale.
		imp.mu.Lock()
		clear(imp.committed)
		imp.mu.Unlock()
		if err := imp.prepareAll(ctx, group); err != nil {
			return err
		}
		for _, e := range group {
			if b, err = imp.place(ctx, b, e); err != nil {
				return err
			}
			if b.full() || r.ShouldYield(int64(len(b.entries))) {
				if err := imp.submit(b); err != nil {
					return err
				}
				b = newBatch()
				// The rest of the group was read but not committed: a
				// continued run reads it again from the checkpoint.
				if r.ShouldYield(0) {
					if err := imp.c.Close(false); err != nil {
						return err
					}
					return job.ErrYield
				}
			}
		}
	}
	if err := imp.submit(b); err != nil {
		return err
	}
	return imp.c.Close(true)
}

func (b *batch) full() bool {
	return len(b.entries) >= maxBatchRows || b.items >= maxBatchItems-2 || b.direct >= maxBatchDirect || b.bytes >= maxBatchBytes || b.cells >= maxBatchCells
}

// importer is one run of an import.
type importer struct {
	s        *Service
	r        *job.Run
	h        *header
	params   importParams
	tenantID string
	opID     string
	tenant   string // the tenant's title, for actions
	// recheck tells that an earlier run stopped other than by yielding: a
	// new location's id is read before it is created (see
	// location.ImportOptions.Recheck).
	recheck bool
	// titles tells which titles no location of the tenant has, so that
	// their rows need no lookup (nil for a tenant with more than
	// location.TitleIndexLimit locations: every title is looked up).
	titles *location.TitleIndex
	// bumps asks for location.Service.ImportCommitted after a commit.
	bumps chan struct{}
	// c commits the chunks.
	c *job.Committer
	// mu guards commits and committed: chunks commit on goroutines of
	// their own.
	mu sync.Mutex
	// commits counts the transactions that wrote locations; committed
	// maps the keys (see location.ImportWrite.Keys) they wrote since the
	// current group was prepared to the number of the last one.
	commits   int
	committed map[string]int
}

// place adds a prepared entry to the batch. A row prepared before a
// commit that wrote one of its keys (a group's rows are prepared together,
// and chunks commit while the group is placed) is prepared again first:
// it may now match the location an earlier row created or renamed. When
// the row looks up or writes something the batch writes (its reads did
// not see the batch), the batch is submitted; when a chunk in flight
// does, the row waits for that chunk's commit and is prepared again. A
// row that would not fit in the transaction goes into the next one.
func (imp *importer) place(ctx context.Context, b *batch, e *entry) (*batch, error) {
	for {
		if imp.stale(e) {
			if err := imp.prepare(ctx, e); err != nil {
				return nil, err
			}
		}
		if e.write == nil || imp.params.DryRun {
			return imp.add(b, e), nil
		}
		keys := append(location.ImportKeys(e.row.id, e.row.loc.Title), e.write.Keys...)
		if b.collides(keys) || b.items+len(e.write.Items)+len(e.action) > maxBatchItems || b.direct+len(e.write.Direct) > maxBatchDirect || b.bytes+e.write.Bytes > maxBatchBytes {
			if err := imp.submit(b); err != nil {
				return nil, err
			}
			b = newBatch()
		}
		if !imp.c.Busy(keys) {
			return imp.add(b, e), nil
		}
		if err := imp.c.Wait(keys); err != nil {
			return nil, err
		}
	}
}

// stale reports whether a commit after e was prepared wrote a key that e
// looks up or writes. Rows that did not parse (a parsed row always has a
// title) are never prepared.
func (imp *importer) stale(e *entry) bool {
	if imp.params.DryRun || len(e.row.errs) > 0 || e.row.loc.Title == "" {
		return false
	}
	imp.mu.Lock()
	defer imp.mu.Unlock()
	if len(imp.committed) == 0 {
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
	imp.mu.Lock()
	e.prepared = imp.commits
	imp.mu.Unlock()
	opt := location.ImportOptions{Keep: imp.h.keep, Titles: imp.titles}
	if !imp.params.DryRun {
		opt.NewID, opt.Recheck = location.ImportID(imp.tenantID, imp.opID, e.start), imp.recheck
	}
	w, err := imp.s.Locations.PrepareImport(ctx, imp.tenantID, e.row.id, e.row.loc, opt)
	if err != nil {
		if ae, ok := apierr.As(err); ok && ae.Code.Status() < 500 {
			e.errs = []string{ae.Message}
			return nil
		}
		return fmt.Errorf("row: %w", err)
	}
	e.write = &w
	if imp.params.DryRun || !w.Writes() || imp.params.SuppressEvents {
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
	for _, c := range e.rec {
		b.cells += len(c)
	}
	if e.write == nil || imp.params.DryRun || !e.write.Writes() {
		return b
	}
	b.items += len(e.write.Items) + len(e.action)
	b.direct += len(e.write.Direct)
	b.bytes += e.write.Bytes
	for _, k := range append(location.ImportKeys(e.row.id, e.row.loc.Title), e.write.Keys...) {
		b.keys[k] = true
	}
	return b
}

// submit hands the batch to the committer as a chunk: its rows' writes
// in one transaction, their results in one part. When a location changed
// between the row's read and the commit, the row is prepared again
// (maxRetries times, then it fails); a row DynamoDB does not store fails
// with the reason the committer gives.
func (imp *importer) submit(b *batch) error {
	if len(b.entries) == 0 {
		return nil
	}
	entries := b.entries
	rows := make([]job.Row, len(entries))
	for i, e := range entries {
		rows[i] = imp.row(e)
	}
	return imp.c.Submit(&job.Chunk{
		Rows: rows, Keys: slices.Collect(maps.Keys(b.keys)),
		Retry: func(ctx context.Context, i int, _ []int) (job.Row, error) {
			e := entries[i]
			if e.retries >= maxRetries {
				e.write, e.action, e.errs = nil, nil, []string{"the location changed while the row was imported; import the row again"}
				return imp.row(e), nil
			}
			e.retries++
			if err := imp.prepare(ctx, e); err != nil {
				return job.Row{}, err
			}
			return imp.row(e), nil
		},
		Refuse: func(i int, reason string) job.Row {
			e := entries[i]
			e.write, e.action, e.errs = nil, nil, []string{reason}
			return imp.row(e)
		},
		Committed: func(lo, hi int) { imp.noteCommitted(entries[lo:hi]) },
	})
}

// noteCommitted records the keys the committed rows wrote, so that rows
// of the group prepared before the commit are prepared again, and asks
// for the lists to learn of the commit.
func (imp *importer) noteCommitted(entries []*entry) {
	imp.mu.Lock()
	defer imp.mu.Unlock()
	imp.commits++
	wrote := false
	for _, e := range entries {
		if imp.params.DryRun || e.write == nil || len(e.errs) > 0 || !e.write.Writes() {
			continue
		}
		wrote = true
		if imp.titles != nil {
			imp.titles.Note(*e.write)
		}
		for _, k := range append(location.ImportKeys(e.row.id, e.row.loc.Title), e.write.Keys...) {
			imp.committed[k] = imp.commits
		}
	}
	if wrote {
		select {
		case imp.bumps <- struct{}{}:
		default: // a bump after this commit is already asked for
		}
	}
}

// row is the committer's view of an entry: its writes, results line and
// outcome.
func (imp *importer) row(e *entry) job.Row {
	r := job.Row{Start: e.start, End: e.end}
	switch {
	case len(e.errs) > 0 || e.write == nil:
		r.Outcome = job.RowFailed
		r.Line = imp.h.resultLine(e.rec, "", "", e.errs)
	default:
		act := ActionUpdated
		id := e.write.Location.ID
		if e.write.Created {
			act = ActionCreated
			if imp.params.DryRun {
				id = "" // a dry run creates nothing
			}
		}
		if imp.params.DryRun || !e.write.Writes() {
			r.Outcome = job.RowSkipped
		} else {
			r.Outcome = job.RowImported
			r.Items = append(append(make([]types.TransactWriteItem, 0, len(e.write.Items)+len(e.action)), e.write.Items...), e.action...)
			r.Direct = e.write.Direct
		}
		r.Line = imp.h.resultLine(e.rec, id, act, nil)
	}
	return r
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

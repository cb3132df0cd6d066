package locationcsv

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/loyalty-platform/platform/shared/domain/action"
	"github.com/loyalty-platform/platform/shared/domain/location"
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
	groupSize     = 100 // rows read and prepared together (their reads batched)
	maxBatchRows  = 500 // rows per commit (and results part)
	maxBatchItems = 96  // transaction items of the rows and the tenant's feed head
	// maxBatchDirect bounds the direct writes of a commit (its new
	// locations, written with BatchWriteItem before the transaction), so
	// that several chunks are in flight at once.
	maxBatchDirect = 500
	maxBatchBytes  = 3 << 20 // estimated bytes of the transaction
	maxBatchCells  = 4 << 20 // bytes of the input cells held (the results part)
	// maxRetries is how often a row whose location changed between its
	// read and the commit (its update's version condition failed) is
	// read and prepared again before it fails.
	maxRetries = 2
)

// importKind runs location imports.
type importKind struct{ s *Service }

// entry is one row of an import.
type entry struct {
	job.Entry
	row   row
	write *location.ImportWrite
	// action is the Put of the row's action, recorded is the action as
	// stored (its feed head is the chunk's, see shared).
	action   []types.TransactWriteItem
	recorded []action.Action
	errs     []string
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
	params := job.ImportParamsOf(r.Operation().Metadata)
	imp := &importer{s: k.s, h: h, params: params, tenantID: r.TenantID(), opID: r.Operation().ID}
	if !params.DryRun && !params.SuppressEvents && k.s.Tenants != nil {
		// Actions name the tenant; read it once, before rows are
		// prepared in parallel.
		if imp.tenant, err = k.s.Tenants.Title(ctx, imp.tenantID); err != nil {
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
	return job.RunImport(ctx, r, in, job.ChunkOptions{Columns: h.resultsHeader(), Message: imp.params.Message, Href: "/locations/imports/" + imp.opID}, imp.parts())
}

// importer is one run of an import: the format's parts of the job's
// import skeleton (job.ImportParts).
type importer struct {
	s        *Service
	h        *header
	params   job.ImportParams
	tenantID string
	opID     string
	tenant   string // the tenant's title, for actions
	// titles tells which titles no location of the tenant has, so that
	// their rows need no lookup (nil for a tenant with more than
	// location.TitleIndexLimit locations: every title is looked up).
	titles *location.TitleIndex
	// bumps asks for location.Service.ImportCommitted after a commit.
	bumps chan struct{}
}

// parts returns the import's parts for the skeleton. A row's keys are
// what it looks up (its _id or title) and what its writes touch (see
// location.ImportWrite.Keys): a row whose keys the batch writes goes into
// the next transaction, and a row prepared before a commit that wrote one
// of them is prepared again (it may now match the location an earlier row
// created or renamed).
func (imp *importer) parts() job.ImportParts[*entry] {
	return job.ImportParts[*entry]{
		Limits: job.ImportLimits{
			Rows: maxBatchRows, Items: maxBatchItems, Full: maxBatchItems - 2, Direct: maxBatchDirect,
			Bytes: maxBatchBytes, Cells: maxBatchCells, Group: groupSize,
			Retries: maxRetries, Changed: "the location changed while the row was imported; import the row again",
		},
		New: func(rec []string, start, end int64, bad string) *entry {
			e := &entry{Entry: job.Entry{Rec: rec, Start: start, End: end}}
			if bad != "" {
				e.errs = []string{bad}
				return e
			}
			e.row = imp.h.parseRow(rec)
			e.errs = e.row.errs
			return e
		},
		PrepareGroup: imp.prepareAll,
		Prepare:      imp.prepare,
		Watch:        imp.watch,
		Plan:         imp.plan,
		Row:          imp.row,
		Fail: func(e *entry, reason string) {
			e.write, e.action, e.recorded, e.errs = nil, nil, nil, []string{reason}
		},
		Committed: imp.noteCommitted,
		Shared:    imp.shared,
	}
}

// shared returns the chunk's Shared writes: the tenant's feed head of the
// actions of the rows [lo, hi) that still write (a row failed or prepared
// again counts as it is now), in input order.
func (imp *importer) shared(entries []*entry) func(lo, hi int) ([]types.TransactWriteItem, error) {
	if imp.params.DryRun || imp.params.SuppressEvents {
		return nil
	}
	return func(lo, hi int) ([]types.TransactWriteItem, error) {
		var as []action.Action
		for _, e := range entries[lo:hi] {
			if len(e.errs) == 0 {
				as = append(as, e.recorded...)
			}
		}
		return imp.s.Actions.Heads(as...)
	}
}

// keys are the keys of a row that writes, or whose reads a write may
// change.
func (imp *importer) keys(e *entry) []string {
	keys := location.ImportKeys(e.row.id, e.row.loc.Title)
	if e.write != nil {
		keys = append(keys, e.write.Keys...)
	}
	return keys
}

// watch returns the keys of a prepared row (rows that did not parse, and
// a parsed row always has a title, are never prepared; nor are a dry
// run's prepared again).
func (imp *importer) watch(e *entry) []string {
	if imp.params.DryRun || len(e.row.errs) > 0 || e.row.loc.Title == "" {
		return nil
	}
	return imp.keys(e)
}

// plan is how a row goes into a chunk.
func (imp *importer) plan(e *entry) job.Plan {
	if e.write == nil || imp.params.DryRun {
		return job.Plan{}
	}
	p := job.Plan{
		Keys: imp.keys(e), Writes: e.write.Writes() && len(e.errs) == 0,
		Items: len(e.write.Items) + len(e.action), Direct: len(e.write.Direct), Bytes: e.write.Bytes,
	}
	for _, a := range e.recorded {
		p.Shared = append(p.Shared, action.FeedKey(a))
	}
	return p
}

// prepareAll prepares the rows of a group that parsed cleanly, their
// reads batched (see location.PrepareImports).
func (imp *importer) prepareAll(ctx context.Context, group []*entry) error {
	var todo []*entry
	for _, e := range group {
		if len(e.errs) == 0 {
			todo = append(todo, e)
		}
	}
	return imp.prepareRows(ctx, todo)
}

// prepare prepares one row again.
func (imp *importer) prepare(ctx context.Context, e *entry) error {
	return imp.prepareRows(ctx, []*entry{e})
}

// prepareRows decides how parsed rows apply (PrepareImports) and, unless
// a row fails validation, what it writes. Client errors become the rows'
// errors; anything else is returned.
func (imp *importer) prepareRows(ctx context.Context, entries []*entry) error {
	if len(entries) == 0 {
		return nil
	}
	rows := make([]location.ImportRow, len(entries))
	for i, e := range entries {
		e.write, e.action, e.recorded, e.errs = nil, nil, nil, nil
		rows[i] = location.ImportRow{ID: e.row.id, Location: e.row.loc, Token: location.ImportToken(imp.tenantID, imp.opID, e.Start)}
	}
	opt := location.ImportOptions{Keep: imp.h.keep, Titles: imp.titles, Direct: !imp.params.DryRun}
	writes, errs, err := imp.s.Locations.PrepareImports(ctx, imp.tenantID, rows, opt)
	if err != nil {
		return fmt.Errorf("prepare rows at %d: %w", entries[0].Start, err)
	}
	for i, e := range entries {
		if ae, ok := apierr.As(errs[i]); ok {
			e.errs = []string{ae.Message}
			continue
		}
		w := writes[i]
		e.write = &w
		if imp.params.DryRun || !w.Writes() || imp.params.SuppressEvents {
			continue
		}
		if e.action, e.recorded, err = imp.s.Actions.Puts(imp.action(w)); err != nil {
			return fmt.Errorf("import row at %d: %w", e.Start, err)
		}
	}
	return nil
}

// noteCommitted tells the run's index of titles of the committed rows'
// titles and asks for the lists to learn of the commit.
func (imp *importer) noteCommitted(entries []*entry) {
	wrote := false
	for _, e := range entries {
		if !imp.plan(e).Writes {
			continue
		}
		wrote = true
		if imp.titles != nil {
			imp.titles.Note(*e.write)
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
	r := job.Row{Start: e.Start, End: e.End}
	switch {
	case len(e.errs) > 0 || e.write == nil:
		r.Outcome = job.RowFailed
		r.Line = imp.h.resultLine(e.Rec, "", "", e.errs)
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
		r.Line = imp.h.resultLine(e.Rec, id, act, nil)
	}
	return r
}

// action returns the action that records an imported location.
func (imp *importer) action(w location.ImportWrite) action.Action {
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
	return a
}

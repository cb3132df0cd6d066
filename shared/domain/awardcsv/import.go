package awardcsv

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/loyalty-platform/platform/shared/domain/award"
	"github.com/loyalty-platform/platform/shared/domain/operation"
	"github.com/loyalty-platform/platform/shared/domain/perk"
	"github.com/loyalty-platform/platform/shared/platform/apierr"
	"github.com/loyalty-platform/platform/shared/platform/job"
	"github.com/loyalty-platform/platform/shared/platform/web"
)

// Batch limits of the import. A DynamoDB transaction holds at most 100
// items, the checkpoint takes one, and each award (and each membership
// checked) at most once.
const (
	groupSize     = 100     // rows read, looked up and prepared together
	maxBatchRows  = 500     // rows per commit (and results part)
	maxBatchItems = 96      // transaction items of the rows (the chunk's marker and fence check are two more)
	maxBatchCells = 4 << 20 // bytes of the input cells held (the results part)
	// maxRetries is how often a row whose award changed between its read
	// and the commit is prepared again before it fails.
	maxRetries = 2
	// dryRunMemory is how many awards a dry run remembers the simulated
	// points of, so that a later row granting the same award reports what
	// it would hold after the earlier rows (a bound keeps memory flat).
	dryRunMemory = 100_000
	// memberWorkers is how many users' memberships a dry run reads at once.
	memberWorkers = 16
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

// importKind runs award imports.
type importKind struct{ s *Service }

// itemKind is what one transaction item of a row is.
type itemKind int

const (
	itemAward  itemKind = iota // the award's conditional update
	itemMember                 // the membership check of a CLUB or LEVEL perk
	itemOther                  // the action
)

// itemRef ties a transaction item to the grant of its row.
type itemRef struct {
	grant int
	kind  itemKind
}

// entry is one row of a batch.
type entry struct {
	rec        []string
	start, end int64 // input offsets of the row
	row        row
	// pointsCell is the results file's points cell.
	pointsCell string
	// grants are the row's grants once its user and perks are known, cols
	// the column of each (for messages); writes how each applies.
	grants []award.ImportGrant
	cols   []string
	writes []award.ImportWrite
	// items are the row's transaction items (the writes' items, one
	// membership check per segment), refs what each is; awardKeys and
	// memberKeys the awards and memberships they touch.
	items      []types.TransactWriteItem
	refs       []itemRef
	awardKeys  []string
	memberKeys []string
	errs       []string
	// prepared is the number of the importer's commits when the reads of
	// the row's last preparation began: a later commit that wrote one of
	// its awards makes the preparation stale.
	prepared int
	retries  int
}

func (e *entry) ok() bool { return len(e.errs) == 0 }

// fail makes the entry a failed row.
func (e *entry) fail(errs ...string) {
	e.errs = errs
	e.grants, e.writes, e.items, e.refs, e.awardKeys, e.memberKeys = nil, nil, nil, nil, nil, nil
}

// batch is the rows read since the last chunk was submitted.
type batch struct {
	entries []*entry
	keys    map[string]bool
	items   int
	cells   int
	// perks are the perks the batch grants: one liability write each
	// (liability.go), counted in items.
	perks map[string]bool
}

func newBatch() *batch { return &batch{keys: map[string]bool{}, perks: map[string]bool{}} }

func (b *batch) collides(e *entry) bool {
	for _, ks := range [][]string{e.awardKeys, e.memberKeys} {
		for _, k := range ks {
			if b.keys[k] {
				return true
			}
		}
	}
	return false
}

func (b *batch) full() bool {
	return len(b.entries) >= maxBatchRows || b.items >= maxBatchItems || b.cells >= maxBatchCells
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
	// c commits the chunks.
	c *job.Committer
	// perks are the tenant's perks by id, and by id in lower case.
	perks, perksFolded map[string]perk.Perk
	// mu guards commits and committed: chunks commit on goroutines of
	// their own.
	mu sync.Mutex
	// commits counts the transactions that wrote awards; committed maps
	// the awards they wrote since the rows still to be placed began their
	// reads to the number of the last one.
	commits   int
	committed map[string]int
	// memory is a dry run's simulated points of the awards its rows
	// granted (see dryRunMemory).
	memory map[string]int
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
	imp := &importer{
		s: k.s, r: r, h: h, params: importParamsOf(r.Operation().Metadata), tenantID: r.TenantID(), opID: r.Operation().ID,
		committed: map[string]int{}, memory: map[string]int{},
	}
	if err := imp.loadPerks(ctx); err != nil {
		return err
	}
	if !imp.params.DryRun && !imp.params.SuppressEvents && k.s.TenantTitle != nil {
		if imp.tenant, err = k.s.TenantTitle(ctx, imp.tenantID); err != nil {
			return fmt.Errorf("tenant of the import: %w", err)
		}
	}
	imp.c = r.Chunks(ctx, in, job.ChunkOptions{Columns: h.resultsHeader(), Message: imp.message, Href: "/awards/imports/" + imp.opID})
	defer imp.c.Abort()
	// Groups are read, looked up and prepared one ahead: the next group's
	// reads run while this one's rows are placed and submitted.
	next := make(chan fetched, 1)
	pending := false
	fetch := func() {
		pending = true
		imp.mu.Lock()
		commits := imp.commits
		imp.mu.Unlock()
		go func() { next <- imp.fetch(ctx, in, commits) }()
	}
	// The input is read by the fetching goroutine until it delivers.
	defer func() {
		if pending {
			<-next
		}
	}()
	fetch()
	b := newBatch()
	for {
		g := <-next
		pending = false
		if g.err != nil {
			return g.err
		}
		if !g.eof {
			fetch()
		}
		imp.forget(g.commits)
		for _, e := range g.group {
			if b, err = imp.place(ctx, b, e); err != nil {
				return err
			}
			if b.full() || r.ShouldYield(int64(len(b.entries))) {
				if err := imp.submit(b); err != nil {
					return err
				}
				b = newBatch()
				// The rest of the rows read were not committed: a
				// continued run reads them again from the checkpoint.
				if r.ShouldYield(0) {
					if err := imp.c.Close(false); err != nil {
						return err
					}
					return job.ErrYield
				}
			}
		}
		if g.eof {
			if err := imp.submit(b); err != nil {
				return err
			}
			return imp.c.Close(true)
		}
	}
}

// fetched is a group of rows read, looked up and prepared.
type fetched struct {
	group []*entry
	// commits is the number of the importer's commits when the group's
	// reads began: a later commit may or may not show in them.
	commits int
	eof     bool
	err     error
}

// fetch reads the next group of rows (at most groupSize), looks their
// users and perks up and prepares their grants (one read of their
// awards). commits is the importer's commit count when it was called.
func (imp *importer) fetch(ctx context.Context, in *job.Input, commits int) fetched {
	g := fetched{group: make([]*entry, 0, groupSize), commits: commits}
	h := imp.h
	for len(g.group) < groupSize {
		rec, start, end, err := in.ReadRow()
		if errors.Is(err, io.EOF) {
			g.eof = true
			break
		}
		var rowErr *job.RowError
		switch {
		case errors.As(err, &rowErr):
			e := &entry{rec: rec, start: start, end: end, row: h.parseRow(rec)}
			e.row.wants, e.row.whole = nil, false
			e.errs = []string{rowErr.Message}
			g.group = append(g.group, e)
		case err != nil:
			g.err = err
			return g
		default:
			e := &entry{rec: rec, start: start, end: end, row: h.parseRow(rec)}
			e.errs = append([]string(nil), e.row.errs...)
			g.group = append(g.group, e)
		}
	}
	if g.err = imp.resolve(ctx, g.group); g.err != nil {
		return g
	}
	g.err = imp.prepareGroup(ctx, g.group, commits)
	return g
}

// forget drops the awards committed up to commit n from the committed
// map: every row still to be placed was prepared after them.
func (imp *importer) forget(n int) {
	imp.mu.Lock()
	defer imp.mu.Unlock()
	for k, c := range imp.committed {
		if c <= n {
			delete(imp.committed, k)
		}
	}
}

// loadPerks reads the tenant's perks once per run.
func (imp *importer) loadPerks(ctx context.Context) error {
	all, err := imp.s.Perks.All(ctx, imp.tenantID)
	if err != nil {
		return fmt.Errorf("perks of the import: %w", err)
	}
	imp.perks = make(map[string]perk.Perk, len(all))
	imp.perksFolded = make(map[string]perk.Perk, len(all))
	for _, p := range all {
		imp.perks[p.ID] = p
		imp.perksFolded[strings.ToLower(p.ID)] = p
	}
	return nil
}

// perk finds a perk by id, exactly or else ignoring case.
func (imp *importer) perk(id string) (perk.Perk, bool) {
	if p, ok := imp.perks[id]; ok {
		return p, true
	}
	p, ok := imp.perksFolded[strings.ToLower(id)]
	return p, ok
}

// resolve looks the users (in one batch) and perks of a group's rows up,
// turns their wants into grants and reports unknown users and perks and
// disabled perks. A dry run also checks the memberships of CLUB and LEVEL
// perks (a real import checks them in the transaction).
func (imp *importer) resolve(ctx context.Context, group []*entry) error {
	var ids []string
	seen := map[string]bool{}
	for _, e := range group {
		if id := e.row.userID; e.row.whole && id != "" && web.ValidID(id) && !seen[id] {
			seen[id] = true
			ids = append(ids, id)
		}
	}
	var people map[string]award.Person
	if len(ids) > 0 {
		var err error
		if people, err = imp.s.Users.People(ctx, imp.tenantID, ids); err != nil {
			return fmt.Errorf("users of the import: %w", err)
		}
	}
	now := imp.s.Clock.Now()
	for _, e := range group {
		person, known := people[e.row.userID]
		if e.row.whole && e.row.userID != "" && !known {
			e.errs = append(e.errs, colUserID+": "+msgNoUser)
		}
		var earned time.Time
		msg := ""
		if c := e.row.earnedCell; c != "" && e.row.whole {
			t, err := award.ParseEarnedAt(colEarnedAt, c, now)
			if e, ok := apierr.As(err); ok {
				msg = e.Message
			} else if err != nil {
				msg = colEarnedAt + ": " + err.Error()
			}
			earned = t
		}
		if msg != "" {
			e.errs = append(e.errs, msg)
		}
		for _, w := range e.row.wants {
			if w.perkID == "" {
				continue
			}
			p, ok := imp.perk(w.perkID)
			if !ok {
				e.errs = append(e.errs, w.col+": "+msgNoPerk)
				continue
			}
			points := p.Points.InitialOr()
			if w.points != nil {
				points = *w.points
			}
			if imp.h.layout != layoutColumns && e.row.pointsCell == "" {
				e.pointsCell = strconv.Itoa(points)
			}
			if !p.Enabled {
				e.errs = append(e.errs, w.col+": "+msgDisabled)
				continue
			}
			e.grants = append(e.grants, award.ImportGrant{User: person, Perk: p, Points: points, EarnedAt: earned})
			e.cols = append(e.cols, w.col)
		}
		if imp.h.layout != layoutColumns && e.row.pointsCell != "" {
			e.pointsCell = e.row.pointsCell
		}
		if !e.ok() {
			e.grants, e.cols = nil, nil
		}
	}
	if imp.params.DryRun {
		return imp.checkMembers(ctx, group)
	}
	return nil
}

// checkMembers fails the dry-run rows that grant a CLUB or LEVEL perk to a
// user who is not a member of its segment, reading each user's segments
// once (several at a time).
func (imp *importer) checkMembers(ctx context.Context, group []*entry) error {
	m := imp.s.Awards.Memberships
	if m == nil {
		return nil
	}
	var uids []string
	seen := map[string]bool{}
	for _, e := range group {
		for _, g := range e.grants {
			if g.Perk.HeldThroughSegment() && !seen[g.User.ID] {
				seen[g.User.ID] = true
				uids = append(uids, g.User.ID)
			}
		}
	}
	if len(uids) == 0 {
		return nil
	}
	var (
		mu   sync.Mutex
		wg   sync.WaitGroup
		errs []error
		segs = make(map[string]map[string]bool, len(uids))
		sem  = make(chan struct{}, memberWorkers)
	)
	for _, uid := range uids {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			list, err := m.SegmentsOf(ctx, imp.tenantID, uid)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, fmt.Errorf("segments of %s: %w", uid, err))
				return
			}
			set := make(map[string]bool, len(list))
			for _, id := range list {
				set[id] = true
			}
			segs[uid] = set
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	for _, e := range group {
		var errs []string
		for i, g := range e.grants {
			if g.Perk.HeldThroughSegment() && !segs[g.User.ID][g.Perk.SegmentID] {
				errs = append(errs, e.cols[i]+": "+msgNotMember)
			}
		}
		if len(errs) > 0 {
			e.fail(errs...)
		}
	}
	return nil
}

// grantOptions are the options of the import's grants.
func (imp *importer) grantOptions() award.GrantOptions {
	return award.GrantOptions{Source: award.SourceImport, OperationID: imp.opID, Silent: imp.params.DryRun || imp.params.SuppressEvents}
}

// prepareGroup prepares the grants of a group's good rows at once (one
// read of their awards), begun after commit number commits.
func (imp *importer) prepareGroup(ctx context.Context, group []*entry, commits int) error {
	var all []award.ImportGrant
	for _, e := range group {
		if e.ok() {
			all = append(all, e.grants...)
		}
	}
	if len(all) == 0 {
		return nil
	}
	writes, err := imp.s.Awards.PrepareImport(ctx, imp.tenantID, imp.tenant, all, imp.grantOptions(), imp.s.Clock.Now())
	if err != nil {
		return fmt.Errorf("prepare grants: %w", err)
	}
	i := 0
	for _, e := range group {
		if !e.ok() {
			continue
		}
		e.writes = writes[i : i+len(e.grants) : i+len(e.grants)]
		i += len(e.grants)
		imp.build(e, commits)
	}
	return nil
}

// prepare prepares one row's grants again (its awards changed).
func (imp *importer) prepare(ctx context.Context, e *entry) error {
	imp.mu.Lock()
	commits := imp.commits
	imp.mu.Unlock()
	writes, err := imp.s.Awards.PrepareImport(ctx, imp.tenantID, imp.tenant, e.grants, imp.grantOptions(), imp.s.Clock.Now())
	if err != nil {
		return fmt.Errorf("prepare grants: %w", err)
	}
	e.writes = writes
	imp.build(e, commits)
	return nil
}

// build sets a prepared row's transaction items; its reads began after
// commit number commits. Grants of perks tied to one segment share one
// membership check (a transaction may name an item once).
func (imp *importer) build(e *entry, commits int) {
	e.prepared = commits
	e.items, e.refs, e.awardKeys, e.memberKeys = nil, nil, nil, nil
	if imp.params.DryRun {
		return
	}
	checked := map[string]bool{}
	for gi, w := range e.writes {
		p := e.grants[gi].Perk
		e.awardKeys = append(e.awardKeys, "award|"+w.Key)
		for j, it := range w.Items {
			kind := itemOther
			switch j {
			case w.AwardAt:
				kind = itemAward
			case w.MemberAt:
				kind = itemMember
				if checked[p.SegmentID] {
					continue
				}
				checked[p.SegmentID] = true
				e.memberKeys = append(e.memberKeys, "member|"+p.SegmentID+"|"+e.grants[gi].User.ID)
			}
			e.items = append(e.items, it)
			e.refs = append(e.refs, itemRef{grant: gi, kind: kind})
		}
	}
}

// place adds an entry to the batch. A row prepared before a commit that
// wrote one of its awards is prepared again first. A row that grants an
// award, or checks a membership, the batch already does (a transaction
// names an item once; the row's read did not see the batch's grant) has
// the batch submitted first; a row whose award or membership a chunk in
// flight writes or checks waits for that chunk's commit (and is prepared
// again when it wrote the award); a row that would not fit in the
// transaction goes into the next one.
func (imp *importer) place(ctx context.Context, b *batch, e *entry) (*batch, error) {
	if imp.params.DryRun {
		if e.ok() {
			imp.simulate(e)
		}
		return imp.add(b, e), nil
	}
	for {
		if !e.ok() {
			return imp.add(b, e), nil
		}
		if imp.stale(e) {
			if err := imp.prepare(ctx, e); err != nil {
				return nil, err
			}
		}
		if b.collides(e) || b.items+len(e.items)+b.newPerks(e) > maxBatchItems {
			if err := imp.submit(b); err != nil {
				return nil, err
			}
			b = newBatch()
		}
		keys := append(append([]string(nil), e.awardKeys...), e.memberKeys...)
		if !imp.c.Busy(keys) {
			return imp.add(b, e), nil
		}
		if err := imp.c.Wait(keys); err != nil {
			return nil, err
		}
	}
}

// stale reports whether a commit after e was prepared wrote one of its
// awards.
func (imp *importer) stale(e *entry) bool {
	imp.mu.Lock()
	defer imp.mu.Unlock()
	if len(imp.committed) == 0 {
		return false
	}
	for _, k := range e.awardKeys {
		if imp.committed[k] > e.prepared {
			return true
		}
	}
	return false
}

// simulate applies a dry-run row's grants to the awards earlier rows of
// the run granted (PrepareImport read the stored awards, which a dry run
// does not change).
func (imp *importer) simulate(e *entry) {
	for gi := range e.writes {
		w, g := &e.writes[gi], e.grants[gi]
		base, seen := imp.memory[w.Key]
		if seen {
			next := base + g.Points
			if mx := g.Perk.Points.Max; mx != nil && next > *mx {
				next = max(*mx, base)
			}
			w.Granted, w.Available = next-base, next
		}
		if seen || len(imp.memory) < dryRunMemory {
			imp.memory[w.Key] = w.Available
		}
	}
}

// add puts an entry into the batch and notes the items it touches.
func (imp *importer) add(b *batch, e *entry) *batch {
	b.entries = append(b.entries, e)
	for _, c := range e.rec {
		b.cells += len(c)
	}
	if !e.ok() {
		return b
	}
	b.items += len(e.items) + b.notePerks(e)
	for _, ks := range [][]string{e.awardKeys, e.memberKeys} {
		for _, k := range ks {
			b.keys[k] = true
		}
	}
	return b
}

// submit hands the batch to the committer as a chunk: its rows' grants
// in one transaction, their results in one part. When items fail their
// conditions, nothing was written: a row whose membership check failed
// fails (the user is not a member), a row whose award changed since it
// was read is prepared again (maxRetries times, then it fails), and the
// chunk is committed again. A row DynamoDB does not store fails with the
// reason the committer gives.
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
		Retry: func(ctx context.Context, i int, failed []int) (job.Row, error) {
			e := entries[i]
			var member []int // grants whose membership check failed
			for _, j := range failed {
				if ref := e.refs[j]; ref.kind == itemMember {
					member = append(member, ref.grant)
				}
			}
			switch {
			case len(member) > 0:
				e.fail(imp.notMember(e, member)...)
			case e.retries >= maxRetries:
				e.fail(msgAwardChanged)
			default:
				e.retries++
				if err := imp.prepare(ctx, e); err != nil {
					return job.Row{}, err
				}
			}
			return imp.row(e), nil
		},
		Refuse: func(i int, reason string) job.Row {
			e := entries[i]
			e.fail(reason)
			return imp.row(e)
		},
		Committed: func(lo, hi int) { imp.noteCommitted(entries[lo:hi]) },
		Shared:    imp.liability(entries),
	})
}

// row is the committer's view of an entry: its writes, results line and
// outcome.
func (imp *importer) row(e *entry) job.Row {
	r := job.Row{Start: e.start, End: e.end, Line: imp.line(e)}
	switch {
	case !e.ok():
		r.Outcome = job.RowFailed
	case imp.params.DryRun:
		r.Outcome = job.RowSkipped
	default:
		r.Outcome = job.RowImported
		r.Items = e.items
	}
	return r
}

// notMember returns the errors of a row whose membership checks of grants
// failed: every grant of a perk of those segments.
func (imp *importer) notMember(e *entry, grants []int) []string {
	segs := map[string]bool{}
	for _, gi := range grants {
		segs[e.grants[gi].Perk.SegmentID] = true
	}
	var errs []string
	for gi, g := range e.grants {
		if g.Perk.HeldThroughSegment() && segs[g.Perk.SegmentID] {
			errs = append(errs, e.cols[gi]+": "+msgNotMember)
		}
	}
	return errs
}

// noteCommitted records the awards the committed rows wrote, so that
// rows prepared before the commit are prepared again.
func (imp *importer) noteCommitted(entries []*entry) {
	if imp.params.DryRun {
		return
	}
	imp.mu.Lock()
	defer imp.mu.Unlock()
	imp.commits++
	for _, e := range entries {
		if !e.ok() {
			continue
		}
		for _, k := range e.awardKeys {
			imp.committed[k] = imp.commits
		}
	}
}

// line is the results line of an entry (see resultsHeader).
func (imp *importer) line(e *entry) []string {
	out := make([]string, 0, 5+3*imp.h.grants())
	result := ResultOK
	if !e.ok() {
		result = ResultFail
	}
	perkCell, pointsCell := "", ""
	if imp.h.layout != layoutColumns {
		perkCell, pointsCell = e.row.perkCell, e.pointsCell
		if pointsCell == "" {
			pointsCell = e.row.pointsCell
		}
	}
	out = append(out, text(e.row.userID), text(perkCell), text(pointsCell), result)
	for n := 0; n < imp.h.grants(); n++ {
		if e.ok() && n < len(e.writes) {
			w := e.writes[n]
			out = append(out, e.grants[n].Perk.ID, w.AwardID, strconv.Itoa(w.Available))
			continue
		}
		out = append(out, "", "", "")
	}
	return escapeLine(append(out, joinList(e.errs)))
}

// text makes an echoed cell valid UTF-8 (a row that is not is reported).
func text(s string) string { return strings.ToValidUTF8(s, "\uFFFD") }

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

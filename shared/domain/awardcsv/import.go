package awardcsv

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/loyalty-platform/platform/shared/domain/action"
	"github.com/loyalty-platform/platform/shared/domain/award"
	"github.com/loyalty-platform/platform/shared/domain/perk"
	"github.com/loyalty-platform/platform/shared/platform/apierr"
	"github.com/loyalty-platform/platform/shared/platform/job"
	"github.com/loyalty-platform/platform/shared/platform/web"
)

// Batch limits of the import. A DynamoDB transaction holds at most 100
// items, the chunk's marker and fence check take two, and each award (and
// each membership checked, each perk's liability shard, each user's feed
// head: the shared writes) at most once.
const (
	groupSize     = 100     // rows read, looked up and prepared together
	maxBatchRows  = 500     // rows per commit (and results part)
	maxBatchItems = 96      // transaction items of the rows and their shared writes (the chunk's marker and fence check are two more)
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

// entry is one row of an import.
type entry struct {
	job.Entry
	row row
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
}

func (e *entry) ok() bool { return len(e.errs) == 0 }

// fail makes the entry a failed row.
func (e *entry) fail(errs ...string) {
	e.errs = errs
	e.grants, e.writes, e.items, e.refs, e.awardKeys, e.memberKeys = nil, nil, nil, nil, nil, nil
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
	// perks are the tenant's perks by id, and by id in lower case.
	perks, perksFolded map[string]perk.Perk
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
		s: k.s, h: h, params: job.ImportParamsOf(r.Operation().Metadata), tenantID: r.TenantID(), opID: r.Operation().ID,
		memory: map[string]int{},
	}
	if err := imp.loadPerks(ctx); err != nil {
		return err
	}
	if !imp.params.DryRun && !imp.params.SuppressEvents && k.s.Tenants != nil {
		if imp.tenant, err = k.s.Tenants.Title(ctx, imp.tenantID); err != nil {
			return fmt.Errorf("tenant of the import: %w", err)
		}
	}
	return job.RunImport(ctx, r, in, job.ChunkOptions{Columns: h.resultsHeader(), Message: imp.params.Message, Href: "/awards/imports/" + imp.opID}, imp.parts())
}

// parts returns the import's parts for the skeleton. A row's keys are the
// awards it grants and the memberships it checks (a transaction names an
// item once, and the row's read did not see the batch's grant); it is
// prepared again after a commit that wrote one of its awards. A dry run
// simulates its rows in order instead (simulate).
func (imp *importer) parts() job.ImportParts[*entry] {
	return job.ImportParts[*entry]{
		Limits: job.ImportLimits{
			Rows: maxBatchRows, Items: maxBatchItems, Cells: maxBatchCells, Group: groupSize,
			Retries: maxRetries, Changed: msgAwardChanged,
		},
		New: func(rec []string, start, end int64, bad string) *entry {
			e := &entry{Entry: job.Entry{Rec: rec, Start: start, End: end}, row: imp.h.parseRow(rec)}
			if bad != "" {
				e.row.wants, e.row.whole = nil, false
				e.errs = []string{bad}
				return e
			}
			e.errs = append([]string(nil), e.row.errs...)
			return e
		},
		PrepareGroup: func(ctx context.Context, group []*entry) error {
			if err := imp.resolve(ctx, group); err != nil {
				return err
			}
			return imp.prepareGroup(ctx, group)
		},
		Prepare: imp.prepare,
		Watch: func(e *entry) []string {
			if imp.params.DryRun || !e.ok() {
				return nil
			}
			return e.awardKeys
		},
		Plan:     imp.plan,
		Row:      imp.row,
		Fail:     func(e *entry, reason string) { e.fail(reason) },
		Conflict: imp.conflict,
		Placing: func(e *entry) {
			if imp.params.DryRun && e.ok() {
				imp.simulate(e)
			}
		},
		Shared: imp.shared,
	}
}

// plan is how a row goes into a chunk: its grants' items, and the perks
// whose liability and the users whose feed head the chunk's transaction
// changes once each.
func (imp *importer) plan(e *entry) job.Plan {
	if !e.ok() {
		return job.Plan{}
	}
	p := job.Plan{Writes: true, Items: len(e.items)}
	for _, w := range e.writes {
		p.Shared = append(p.Shared, w.PerkID)
		for _, a := range w.Actions {
			p.Shared = append(p.Shared, action.FeedKey(a))
		}
	}
	if !imp.params.DryRun {
		p.Keys = append(append([]string(nil), e.awardKeys...), e.memberKeys...)
	}
	return p
}

// conflict fails a row whose membership checks failed (the user is not a
// member); a row whose award changed since it was read is prepared again.
func (imp *importer) conflict(e *entry, failed []int) bool {
	var member []int // grants whose membership check failed
	for _, j := range failed {
		if ref := e.refs[j]; ref.kind == itemMember {
			member = append(member, ref.grant)
		}
	}
	if len(member) > 0 {
		e.fail(imp.notMember(e, member)...)
		return false
	}
	return true
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
// read of their awards).
func (imp *importer) prepareGroup(ctx context.Context, group []*entry) error {
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
		imp.build(e)
	}
	return nil
}

// prepare prepares one row's grants again (its awards changed).
func (imp *importer) prepare(ctx context.Context, e *entry) error {
	writes, err := imp.s.Awards.PrepareImport(ctx, imp.tenantID, imp.tenant, e.grants, imp.grantOptions(), imp.s.Clock.Now())
	if err != nil {
		return fmt.Errorf("prepare grants: %w", err)
	}
	e.writes = writes
	imp.build(e)
	return nil
}

// build sets a prepared row's transaction items. Grants of perks tied to
// one segment share one membership check (a transaction may name an item
// once).
func (imp *importer) build(e *entry) {
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

// row is the committer's view of an entry: its writes, results line and
// outcome.
func (imp *importer) row(e *entry) job.Row {
	r := job.Row{Start: e.Start, End: e.End, Line: imp.line(e)}
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

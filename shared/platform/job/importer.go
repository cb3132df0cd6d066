package job

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"sync"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/loyalty-platform/platform/shared/domain/operation"
)

// The import skeleton: what the CSV imports (locations, awards) share
// between reading rows and committing chunks. RunImport reads the input
// in groups, the next group read and prepared while this one's rows are
// placed; Importer.Place puts each prepared row into the batch, which is
// submitted to the Committer as a chunk when it is full, when a row looks
// up or writes what the batch writes (a transaction names an item once,
// and the row's reads did not see the batch's writes), or when a row would
// not fit. A row whose keys a chunk in flight writes waits for that
// chunk's commit; a row prepared before a commit that wrote one of the
// keys it watches is prepared again first. At commit, a row whose
// conditions failed is prepared again (ImportLimits.Retries times, then it
// fails) and a row the database refuses fails with the committer's reason.
// What a row reads, writes and reports is the format's: ImportParts.

// Entry is what the skeleton keeps of an input row. A format's entry type
// embeds it (the skeleton's type parameter is a pointer to that type).
type Entry struct {
	// Rec is the row's cells as read; Start and End are its input offsets
	// (End just after it).
	Rec        []string
	Start, End int64
	// Prepared is the number of the importer's commits when the reads of
	// the row's last preparation began: a later commit that wrote one of
	// the keys the row watches makes the preparation stale.
	Prepared int
	// Retries counts the preparations after a conflict at commit.
	Retries int
}

func (e *Entry) entry() *Entry { return e }

// Entrant is a format's entry: a pointer to a struct that embeds Entry.
type Entrant interface{ entry() *Entry }

// Plan is how a prepared row goes into a chunk.
type Plan struct {
	// Keys name what the row looks up or writes. A row with none (it
	// failed, a dry run) goes into the batch as it is.
	Keys []string
	// Writes tells that the row writes: its counts and Keys are added to
	// the batch's, and on commit the keys it watches are noted.
	Writes bool
	// Items, Direct and Bytes are the row's transaction items, direct
	// writes and the estimated bytes of its items.
	Items, Direct, Bytes int
	// Shared names the chunk's shared writes the row adds to (see
	// Chunk.Shared): each name is one transaction item per chunk.
	Shared []string
}

// ImportLimits bound a chunk of an import. A zero Direct or Bytes does not
// bound those.
type ImportLimits struct {
	// Rows, Items, Direct, Bytes and Cells (the input cells held for the
	// results part) are the most a chunk holds.
	Rows, Items, Direct, Bytes, Cells int
	// Full is the item count at which a batch is submitted without waiting
	// for a row that does not fit (0: Items).
	Full int
	// Group is how many rows are read and prepared together.
	Group int
	// Retries is how often a row whose conditions failed at commit is
	// prepared again before it fails with Changed.
	Retries int
	Changed string
}

// ImportParts are a format's parts of an import. Prepare, PrepareGroup,
// New, Plan, Row and Fail are required.
type ImportParts[E Entrant] struct {
	Limits ImportLimits
	// New returns the entry of a row read; bad, when not empty, says why
	// the row could not be read (it fails with that message).
	New func(rec []string, start, end int64, bad string) E
	// PrepareGroup prepares the rows of a group (their reads may run at
	// once). Client errors become the rows' errors; an error returned
	// stops the run.
	PrepareGroup func(ctx context.Context, group []E) error
	// Prepare prepares one row again.
	Prepare func(ctx context.Context, e E) error
	// Watch returns the keys whose commit makes e's preparation stale
	// (nil: e is never prepared again before its commit).
	Watch func(e E) []string
	// Plan tells how e goes into a chunk (called again whenever e may
	// have changed).
	Plan func(e E) Plan
	// Row is the committer's view of e.
	Row func(e E) Row
	// Fail makes e a failed row with reason.
	Fail func(e E, reason string)
	// Conflict, when set, is told of the items of e whose conditions
	// failed at commit (indexes in Row.Items); false means it failed e
	// itself, true that e is prepared again.
	Conflict func(e E, failed []int) bool
	// Placing, when set, is called once for each row, in input order, as
	// its turn to be placed comes.
	Placing func(e E)
	// Committed, when set, is told of rows committed (after the skeleton
	// noted their keys).
	Committed func(entries []E)
	// Shared, when set, returns the Shared writes of a chunk of entries
	// (see Chunk.Shared).
	Shared func(entries []E) func(lo, hi int) ([]types.TransactWriteItem, error)
}

// committer is what the importer needs of a Committer.
type committer interface {
	Submit(ch *Chunk) error
	Busy(keys []string) bool
	Wait(keys []string) error
}

// Importer places an import's rows into chunks (see above). Its methods
// are for one goroutine, the import's; the commit callbacks run on the
// chunks' goroutines.
type Importer[E Entrant] struct {
	p ImportParts[E]
	c committer
	b *importBatch[E]
	// mu guards commits and committed.
	mu sync.Mutex
	// commits counts the chunks committed; committed maps the keys they
	// wrote, since the rows still to be placed began their reads, to the
	// number of the last one.
	commits   int
	committed map[string]int
}

// importBatch is the rows placed since the last chunk was submitted.
type importBatch[E Entrant] struct {
	entries                     []E
	keys                        map[string]bool
	shared                      map[string]bool
	items, direct, bytes, cells int
}

func newImportBatch[E Entrant]() *importBatch[E] {
	return &importBatch[E]{keys: map[string]bool{}, shared: map[string]bool{}}
}

// collides reports whether the batch writes one of keys.
func (b *importBatch[E]) collides(keys []string) bool {
	return slices.ContainsFunc(keys, func(k string) bool { return b.keys[k] })
}

// newShared counts the names of shared the batch does not hold yet.
func (b *importBatch[E]) newShared(shared []string) int {
	n := 0
	for i, s := range shared {
		if !b.shared[s] && !slices.Contains(shared[:i], s) {
			n++
		}
	}
	return n
}

// fits reports whether a row of plan p fits into the batch.
func (b *importBatch[E]) fits(l ImportLimits, p Plan) bool {
	return b.items+p.Items+b.newShared(p.Shared) <= l.Items &&
		(l.Direct == 0 || b.direct+p.Direct <= l.Direct) &&
		(l.Bytes == 0 || b.bytes+p.Bytes <= l.Bytes)
}

// full reports whether the batch is to be submitted now.
func (b *importBatch[E]) full(l ImportLimits) bool {
	items := l.Full
	if items == 0 {
		items = l.Items
	}
	return len(b.entries) >= l.Rows || b.items >= items ||
		(l.Direct > 0 && b.direct >= l.Direct) || (l.Bytes > 0 && b.bytes >= l.Bytes) || b.cells >= l.Cells
}

// NewImporter returns an importer that submits its chunks to c.
func NewImporter[E Entrant](c *Committer, p ImportParts[E]) *Importer[E] {
	return newImporter(c, p)
}

func newImporter[E Entrant](c committer, p ImportParts[E]) *Importer[E] {
	return &Importer[E]{p: p, c: c, b: newImportBatch[E](), committed: map[string]int{}}
}

// Commits returns the number of chunks committed so far: a row whose reads
// begin now is prepared as of that commit.
func (imp *Importer[E]) Commits() int {
	imp.mu.Lock()
	defer imp.mu.Unlock()
	return imp.commits
}

// Forget drops the keys committed up to commit n: every row still to be
// placed began its reads after them.
func (imp *Importer[E]) Forget(n int) {
	imp.mu.Lock()
	defer imp.mu.Unlock()
	maps.DeleteFunc(imp.committed, func(_ string, c int) bool { return c <= n })
}

// Pending is the number of rows placed and not submitted.
func (imp *Importer[E]) Pending() int { return len(imp.b.entries) }

// Full reports whether the batch is to be submitted now.
func (imp *Importer[E]) Full() bool { return imp.b.full(imp.p.Limits) }

// Place puts a prepared row into the batch (see above): prepared again
// when stale, after a submit of the batch when it collides or does not
// fit, after the commit of a chunk in flight that writes one of its keys.
func (imp *Importer[E]) Place(ctx context.Context, e E) error {
	if imp.p.Placing != nil {
		imp.p.Placing(e)
	}
	for {
		if imp.stale(e) {
			if err := imp.prepare(ctx, e); err != nil {
				return err
			}
		}
		p := imp.p.Plan(e)
		if p.Keys == nil {
			imp.add(e, p)
			return nil
		}
		if imp.b.collides(p.Keys) || !imp.b.fits(imp.p.Limits, p) {
			if err := imp.Submit(); err != nil {
				return err
			}
		}
		if !imp.c.Busy(p.Keys) {
			imp.add(e, p)
			return nil
		}
		if err := imp.c.Wait(p.Keys); err != nil {
			return err
		}
	}
}

// prepare prepares e again, as of the commits so far.
func (imp *Importer[E]) prepare(ctx context.Context, e E) error {
	e.entry().Prepared = imp.Commits()
	return imp.p.Prepare(ctx, e)
}

// stale reports whether a commit after e was prepared wrote a key that e
// watches.
func (imp *Importer[E]) stale(e E) bool {
	if imp.p.Watch == nil {
		return false
	}
	keys := imp.p.Watch(e)
	if len(keys) == 0 {
		return false
	}
	imp.mu.Lock()
	defer imp.mu.Unlock()
	if len(imp.committed) == 0 {
		return false
	}
	prepared := e.entry().Prepared
	return slices.ContainsFunc(keys, func(k string) bool { return imp.committed[k] > prepared })
}

// add puts a row into the batch; a row that writes adds its counts and
// keys.
func (imp *Importer[E]) add(e E, p Plan) {
	b := imp.b
	b.entries = append(b.entries, e)
	for _, c := range e.entry().Rec {
		b.cells += len(c)
	}
	if !p.Writes {
		return
	}
	b.items += p.Items + b.newShared(p.Shared)
	b.direct += p.Direct
	b.bytes += p.Bytes
	for _, s := range p.Shared {
		b.shared[s] = true
	}
	for _, k := range p.Keys {
		b.keys[k] = true
	}
}

// Submit hands the batch to the committer as a chunk and starts a new
// one. A row whose conditions failed is prepared again (or failed, see
// ImportParts.Conflict and ImportLimits.Retries); a row the database
// refuses fails with the committer's reason.
func (imp *Importer[E]) Submit() error {
	b := imp.b
	imp.b = newImportBatch[E]()
	if len(b.entries) == 0 {
		return nil
	}
	entries := b.entries
	rows := make([]Row, len(entries))
	for i, e := range entries {
		rows[i] = imp.p.Row(e)
	}
	ch := &Chunk{
		Rows: rows, Keys: slices.Collect(maps.Keys(b.keys)),
		Retry: func(ctx context.Context, i int, failed []int) (Row, error) {
			e := entries[i]
			switch {
			case imp.p.Conflict != nil && !imp.p.Conflict(e, failed):
			case e.entry().Retries >= imp.p.Limits.Retries:
				imp.p.Fail(e, imp.p.Limits.Changed)
			default:
				e.entry().Retries++
				if err := imp.prepare(ctx, e); err != nil {
					return Row{}, err
				}
			}
			return imp.p.Row(e), nil
		},
		Refuse: func(i int, reason string) Row {
			imp.p.Fail(entries[i], reason)
			return imp.p.Row(entries[i])
		},
		Committed: func(lo, hi int) { imp.noteCommitted(entries[lo:hi]) },
	}
	if imp.p.Shared != nil {
		ch.Shared = imp.p.Shared(entries)
	}
	return imp.c.Submit(ch)
}

// noteCommitted records the keys that the committed rows that write
// watch, so that rows prepared before the commit are prepared again, and
// tells the format.
func (imp *Importer[E]) noteCommitted(entries []E) {
	imp.mu.Lock()
	imp.commits++
	for _, e := range entries {
		if imp.p.Watch == nil || !imp.p.Plan(e).Writes {
			continue
		}
		for _, k := range imp.p.Watch(e) {
			imp.committed[k] = imp.commits
		}
	}
	imp.mu.Unlock()
	if imp.p.Committed != nil {
		imp.p.Committed(entries)
	}
}

// group is a group of rows read and prepared.
type group[E Entrant] struct {
	entries []E
	// commits is the importer's commit count when the group's reads
	// began: a later commit may or may not show in them.
	commits int
	eof     bool
	err     error
}

// fetch reads the next group of rows and prepares them; commits is the
// importer's commit count when it was called.
func (imp *Importer[E]) fetch(ctx context.Context, in *Input, commits int) group[E] {
	n := max(imp.p.Limits.Group, 1)
	g := group[E]{entries: make([]E, 0, n), commits: commits}
	for len(g.entries) < n {
		rec, start, end, err := in.ReadRow()
		if errors.Is(err, io.EOF) {
			g.eof = true
			break
		}
		var rowErr *RowError
		switch {
		case errors.As(err, &rowErr):
			g.entries = append(g.entries, imp.p.New(rec, start, end, rowErr.Message))
		case err != nil:
			g.err = err
			return g
		default:
			g.entries = append(g.entries, imp.p.New(rec, start, end, ""))
		}
	}
	for _, e := range g.entries {
		e.entry().Prepared = commits
	}
	g.err = imp.p.PrepareGroup(ctx, g.entries)
	return g
}

// RunImport runs an import from the checkpoint on: the committer of in
// (with opts), then groups of rows read and prepared one ahead, each row
// placed in turn and the batch submitted when full. It returns nil when
// the whole input is committed, ErrYield when the run should continue in
// a new invocation (the rows read but not submitted are read again by the
// next run, from the checkpoint), or the error that stopped it.
func RunImport[E Entrant](ctx context.Context, r *Run, in *Input, opts ChunkOptions, p ImportParts[E]) error {
	c := r.Chunks(ctx, in, opts)
	defer c.Abort()
	imp := NewImporter(c, p)
	next := make(chan group[E], 1)
	pending := false
	fetch := func() {
		pending = true
		commits := imp.Commits()
		go func() { next <- imp.fetch(ctx, in, commits) }()
	}
	// The input is read by the fetching goroutine until it delivers.
	defer func() {
		if pending {
			<-next
		}
	}()
	fetch()
	for {
		g := <-next
		pending = false
		if g.err != nil {
			return g.err
		}
		if !g.eof {
			fetch()
		}
		imp.Forget(g.commits)
		for _, e := range g.entries {
			if err := imp.Place(ctx, e); err != nil {
				return err
			}
			if imp.Full() || r.ShouldYield(int64(imp.Pending())) {
				if err := imp.Submit(); err != nil {
					return err
				}
				if r.ShouldYield(0) {
					if err := c.Close(false); err != nil {
						return err
					}
					return ErrYield
				}
			}
		}
		if g.eof {
			if err := imp.Submit(); err != nil {
				return err
			}
			return c.Close(true)
		}
	}
}

// ImportParams are an import's parameters (its operation's metadata
// dryRun and suppressEvents, both true unless set to false).
type ImportParams struct {
	DryRun         bool
	SuppressEvents bool
}

// ImportParamsOf reads an import's parameters from its operation's
// metadata.
func ImportParamsOf(md map[string]any) ImportParams {
	p := ImportParams{DryRun: true, SuppressEvents: true}
	if v, ok := md["dryRun"].(bool); ok {
		p.DryRun = v
	}
	if v, ok := md["suppressEvents"].(bool); ok {
		p.SuppressEvents = v
	}
	return p
}

// Message is an import's operation message after res (last: the run's
// last result).
func (p ImportParams) Message(res operation.Result, last bool) string {
	prefix := "importing"
	switch {
	case last && p.DryRun:
		prefix = "dry run done (nothing written)"
	case last:
		prefix = "done"
	case p.DryRun:
		prefix = "dry run"
	}
	return fmt.Sprintf("%s: %d rows, %d imported, %d skipped, %d with errors", prefix, res.Total, res.Imported, res.Skipped, res.Errors)
}

package job

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"
	"github.com/loyalty-platform/platform/shared/domain/operation"
	"github.com/loyalty-platform/platform/shared/platform/ddb"
)

// Parallel commits. An import hands its rows to a Committer in chunks
// (Submit); up to CommitWidth chunks commit at once, each in a transaction
// of its own with its marker (operation.CommitChunk), after its results
// part was written (named by the chunk's first input byte and the run)
// and its rows' direct writes were made (Row.Direct).
// The checkpoint follows the contiguous prefix of committed chunks and is
// written now and then, not with every chunk. A resumed run skips the
// rows of chunks committed past the checkpoint (their markers), so every
// row applies once whatever order the chunks committed in; the results
// file lists the parts in input order (the markers' order). Chunks in
// flight may share an item (a feed head, see Chunk.Shared): a chunk whose
// transaction keeps losing the race on it is committed again.
//
// Row isolation: when DynamoDB refuses a chunk's transaction for a value
// (a ValidationException, or a cancellation whose reason is a
// ValidationError), the chunk is split in halves, each committed on its
// own, until the refused row is alone; that row is then failed
// (Chunk.Refuse) with a short reason and committed without its writes.
// Only faults of the platform itself stop the run.
//
// Direct writes. A row's Direct writes (a new item under an id derived
// from the operation and the row, written again the same way by any run)
// are made with BatchWriteItem before the chunk's transaction, outside
// it: a run that stops between the two leaves them without the chunk's
// marker, and the next run's row writes them again (see Run.AfterStop).
// They are made only while the run's lease has at least a third of its
// length left by the run's clock, so that a run that lost its lease (it
// stalled past it) does not write over the run that took the operation
// over.

// DefaultCommitWidth is how many chunks a run commits at once (at most
// operation.FenceSlots). DynamoDB runs transactions on distinct items in
// parallel; DynamoDB Local serialises them, and more than a few in flight
// there only lengthen each one (measured with make bench).
const DefaultCommitWidth = 4

// directWriters is how many BatchWriteItem requests of a run's direct
// writes are in flight at once (all chunks' together, in the order the
// chunks hand them over).
const directWriters = 8

// checkpointEvery is the least time between two checkpoint writes of a
// run (the last one, before it yields or ends, is always written).
const checkpointEvery = 500 * time.Millisecond

// Outcome is what became of a row.
type Outcome int

// Outcomes of a row: counted as skipped, imported or errors.
const (
	RowSkipped Outcome = iota
	RowImported
	RowFailed
)

// Row is one input row of a chunk as the job kind prepared it.
type Row struct {
	// Start and End are the input offsets of the row (End just after it).
	Start, End int64
	// Items are the row's writes in the chunk's transaction.
	Items []types.TransactWriteItem
	// Direct are the row's unconditional writes (Puts and Deletes) made
	// with BatchWriteItem before the transaction (at most
	// ddb.MaxBatchWrite): writing them twice must leave what writing them
	// once does.
	Direct []types.TransactWriteItem
	// Line is the row's results line.
	Line    []string
	Outcome Outcome
}

// Chunk is rows committed together: one transaction and one results part
// (or several, when a row is isolated). The callbacks run on the chunk's
// own goroutine, while the kind goes on with later rows.
type Chunk struct {
	Rows []Row
	// Keys name what the rows read or write (see Committer.Wait).
	Keys []string
	// Retry is called for a row whose items' conditions failed (nothing
	// of the transaction was written), with the indexes of those items
	// in Row.Items; it returns the row prepared again (or failed), and the
	// transaction is tried again. Nil fails the run instead.
	Retry func(ctx context.Context, i int, failed []int) (Row, error)
	// Refuse returns row i failed with reason: DynamoDB does not store it.
	Refuse func(i int, reason string) Row
	// Committed is called once the rows [lo, hi) are committed.
	Committed func(lo, hi int)
	// Shared returns the unconditional writes the rows [lo, hi) share
	// (nil: none), added to each of their transactions after the rows'
	// own items and built again for each attempt (rows prepared again,
	// split): a sum of the rows' deltas, or the feed heads of the rows'
	// actions, written once per transaction. An error stops the run.
	Shared func(lo, hi int) ([]types.TransactWriteItem, error)
}

// ChunkOptions configure a Committer.
type ChunkOptions struct {
	// Columns is the results file's header row.
	Columns []string
	// Message is the result message after res (done: the last one).
	Message func(res operation.Result, done bool) string
	// Href is the results file's path, set in the last result.
	Href string
}

// maxChunkRetries bounds the retries of a chunk whose rows' conditions
// keep failing.
const maxChunkRetries = 10

// Committer commits an import's chunks, several at once (see above). Its
// methods other than the callbacks it runs are for one goroutine, the
// kind's.
type Committer struct {
	r      *Run
	opts   ChunkOptions
	ctx    context.Context
	cancel context.CancelFunc
	slots  chan int
	wg     sync.WaitGroup

	mu   sync.Mutex
	cond *sync.Cond
	err  error
	// keys counts the chunks in flight that name each key.
	keys map[string]int
	// done holds the committed chunks past the prefix, by input offset.
	done []operation.Chunk
	// cp and res are the checkpoint and result of the prefix; dirty tells
	// they changed since the last write.
	cp    operation.Checkpoint
	res   operation.Result
	dirty bool

	// writeMu serialises checkpoint writes; wake asks the writer for one.
	writeMu    sync.Mutex
	wake       chan struct{}
	writerDone chan struct{}
	stopOnce   sync.Once
	lastWrite  time.Time
	// crashMu serialises the Crash knob's calls; a call holds directMu
	// too, so that no direct write is in flight while the knob runs.
	crashMu  sync.Mutex
	directMu sync.RWMutex
	// until is the lease's end (Unix nanoseconds) as of the last commit.
	until atomic.Int64
	// batches feeds the direct writers (started with the first direct
	// write, stopped by Close or Abort).
	batches   chan directBatch
	poolStart sync.Once
	poolStop  sync.Once
	pool      sync.WaitGroup
}

// directBatch is one BatchWriteItem request of a chunk's direct writes;
// done is called with its outcome.
type directBatch struct {
	b    ddb.Batch
	done func(error)
}

// Chunks starts the committer of an import that reads in. The checkpoint
// takes the input's header and size; the chunks committed past it by
// earlier runs (which in skips) count as committed.
func (r *Run) Chunks(ctx context.Context, in *Input, opts ChunkOptions) *Committer {
	cctx, cancel := context.WithCancel(ctx)
	width := r.svc.CommitWidth
	if width <= 0 || width > operation.FenceSlots {
		width = DefaultCommitWidth
	}
	c := &Committer{r: r, opts: opts, ctx: cctx, cancel: cancel, slots: make(chan int, width), keys: map[string]int{},
		wake: make(chan struct{}, 1), writerDone: make(chan struct{}), batches: make(chan directBatch)}
	c.cond = sync.NewCond(&c.mu)
	for i := range width {
		c.slots <- i
	}
	c.until.Store(r.lease.Until.UnixNano())
	cp := r.lease.Checkpoint
	cp.Yielded = false
	cp.Header, cp.Columns = in.Header, opts.Columns
	if cp.InputSize == 0 {
		cp.InputSize = in.Size
	}
	if cp.InputETag == "" {
		cp.InputETag = r.inputETag
	}
	if cp.Offset < in.first {
		cp.Offset = in.first
	}
	c.cp, c.res = cp, r.lease.Result
	c.done = append(c.done, in.committed...)
	c.mu.Lock()
	c.fold()
	c.mu.Unlock()
	if r.lease.Checkpoint.Yielded {
		// Before this run writes anything, the checkpoint stops saying
		// that the last run yielded: should this one die before its next
		// checkpoint, the run after it checks its direct writes.
		c.dirty = true
		if err := c.flush(true); err != nil {
			c.err = err
			c.cancel()
		}
	}
	go c.writer()
	return c
}

// Wait waits until no chunk in flight names any of keys (their writes are
// committed, or failed), so that a row reading or writing them may be
// prepared. It returns the error that stopped the committer, if any.
func (c *Committer) Wait(keys []string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	for c.err == nil && slices.ContainsFunc(keys, func(k string) bool { return c.keys[k] > 0 }) {
		c.cond.Wait()
	}
	return c.err
}

// Busy reports whether a chunk in flight names one of keys.
func (c *Committer) Busy(keys []string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.ContainsFunc(keys, func(k string) bool { return c.keys[k] > 0 })
}

// Submit commits ch in the background, once fewer than the commit width
// are in flight. It returns the error that stopped the committer, if any
// (ErrLeaseLost, a crash, a fault).
func (c *Committer) Submit(ch *Chunk) error {
	if len(ch.Rows) == 0 {
		return c.failure()
	}
	var slot int
	select {
	case slot = <-c.slots:
	case <-c.ctx.Done():
		return c.failureOr(c.ctx.Err())
	}
	if err := c.failure(); err != nil {
		c.slots <- slot
		return err
	}
	c.mu.Lock()
	for _, k := range ch.Keys {
		c.keys[k]++
	}
	c.mu.Unlock()
	c.r.rows += int64(len(ch.Rows))
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		// Rows on both sides of a chunk an earlier run committed (skipped
		// by the input) commit apart: a marker covers contiguous bytes.
		var err error
		for lo := 0; lo < len(ch.Rows) && err == nil; {
			hi := lo + 1
			for hi < len(ch.Rows) && ch.Rows[hi].Start == ch.Rows[hi-1].End {
				hi++
			}
			err = c.commitRange(ch, lo, hi, slot)
			lo = hi
		}
		c.mu.Lock()
		for _, k := range ch.Keys {
			if c.keys[k]--; c.keys[k] <= 0 {
				delete(c.keys, k)
			}
		}
		if err != nil && c.err == nil {
			c.err = err
			c.cancel()
		}
		c.cond.Broadcast()
		c.mu.Unlock()
		c.slots <- slot
	}()
	return nil
}

// Abort stops the committer: the chunks in flight are cancelled and
// waited for; no checkpoint is written. It does nothing after Close.
func (c *Committer) Abort() {
	c.cancel()
	c.wg.Wait()
	c.stopPool()
	c.stopWriter()
}

// startPool starts the direct writers.
func (c *Committer) startPool() {
	c.poolStart.Do(func() {
		for range directWriters {
			c.pool.Add(1)
			go func() {
				defer c.pool.Done()
				for d := range c.batches {
					d.done(ddb.WriteBatch(c.ctx, c.r.svc.Ops.DB, d.b))
				}
			}()
		}
	})
}

// stopPool stops the direct writers once no chunk is in flight.
func (c *Committer) stopPool() {
	c.poolStop.Do(func() {
		close(c.batches)
		c.pool.Wait()
	})
}

func (c *Committer) stopWriter() {
	c.stopOnce.Do(func() {
		close(c.wake)
		<-c.writerDone
	})
}

// Close waits for the chunks in flight and writes the checkpoint; with
// done (the whole input was submitted) it is the last one (InputDone).
// It returns the error that stopped the committer, if any.
func (c *Committer) Close(done bool) error {
	c.wg.Wait()
	c.stopPool()
	c.stopWriter()
	defer c.cancel()
	if err := c.failure(); err != nil {
		return err
	}
	c.mu.Lock()
	// The last checkpoint of a run that yields says so: no chunk of the
	// run is in flight (see Run.AfterStop).
	c.cp.Yielded, c.dirty = !done, true
	if done {
		if len(c.done) > 0 {
			c.mu.Unlock()
			return fmt.Errorf("job: chunks at %d and on are past the end of the input", c.done[0].From)
		}
		c.cp.InputDone = true
		c.res.EtaMs = 0
		c.res.Href = c.opts.Href
		c.res.Message = c.message(true)
		c.dirty = true
	}
	c.mu.Unlock()
	return c.flush(true)
}

func (c *Committer) failure() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

func (c *Committer) failureOr(err error) error {
	if e := c.failure(); e != nil {
		return e
	}
	return err
}

func (c *Committer) message(done bool) string {
	if c.opts.Message == nil {
		return ""
	}
	return c.opts.Message(c.res, done)
}

// commitRange commits the rows [lo, hi) of ch through the fence slot:
// its results part, then its transaction; it retries rows whose
// conditions failed and isolates rows DynamoDB refuses.
func (c *Committer) commitRange(ch *Chunk, lo, hi, slot int) error {
	r, l := c.r, c.r.lease
	for attempt := 0; ; attempt++ {
		rows := ch.Rows[lo:hi]
		var items, all []types.TransactWriteItem
		var direct [][]types.TransactWriteItem
		m := operation.Chunk{From: rows[0].Start, To: rows[len(rows)-1].End, Rows: int64(len(rows)), Run: l.Claims}
		var buf bytes.Buffer
		w := csv.NewWriter(&buf)
		for _, row := range rows {
			items = append(items, row.Items...)
			if len(row.Direct) > 0 {
				direct = append(direct, row.Direct)
				all = append(all, row.Direct...)
			}
			switch row.Outcome {
			case RowImported:
				m.Imported++
			case RowFailed:
				m.Errors++
			default:
				m.Skipped++
			}
			if err := w.Write(row.Line); err != nil {
				return fmt.Errorf("results part: %w", err)
			}
		}
		w.Flush()
		if ch.Shared != nil {
			shared, err := ch.Shared(lo, hi)
			if err != nil {
				return fmt.Errorf("shared writes of the chunk at %d: %w", rows[0].Start, err)
			}
			items = append(items, shared...)
		}
		m.PartBytes = int64(buf.Len())
		key := chunkPartKey(l.TenantID, l.ID, m.From, l.Claims)
		if err := r.svc.putBytes(c.ctx, key, buf.Bytes(), "text/csv"); err != nil {
			return fmt.Errorf("results part at %d: %w", m.From, err)
		}
		var err error
		if seam := r.svc.WriteChunk; seam != nil {
			err = seam(c.ctx, append(all, items...))
		}
		if err == nil && len(direct) > 0 {
			err = c.writeDirect(direct)
		}
		if seam := r.svc.AfterDirect; err == nil && seam != nil {
			err = seam(c.ctx)
		}
		if err == nil {
			err = r.svc.Ops.CommitChunk(c.ctx, l, slot, m, items)
		}
		var failed *operation.ItemsFailedError
		var reason string
		switch {
		case err == nil:
			if ch.Committed != nil {
				ch.Committed(lo, hi)
			}
			c.committed(m)
			return nil
		case errors.Is(err, operation.ErrLeaseLost), errors.Is(err, operation.ErrChunkTaken):
			return operation.ErrLeaseLost
		case ddb.IsTransactionConflict(err) && attempt < maxChunkRetries:
			// Chunks in flight share items (the tenant's feed head of a
			// location import, a user's of an award import): one that kept
			// losing the race to the others is committed again, after a
			// pause (its part and direct writes are written again, the same).
			select {
			case <-c.ctx.Done():
				return c.ctx.Err()
			case <-time.After(time.Duration(50*(attempt+1)) * time.Millisecond):
			}
		case errors.As(err, &failed) && ch.Retry != nil && attempt < maxChunkRetries:
			at := map[int][]int{}
			i := 0
			for n, row := range rows {
				for j := range row.Items {
					if slices.Contains(failed.Indexes, i+j) {
						at[lo+n] = append(at[lo+n], j)
					}
				}
				i += len(row.Items)
			}
			if len(at) == 0 {
				return fmt.Errorf("commit chunk: failed items %v match no row", failed.Indexes)
			}
			for n, idx := range at {
				row, err := ch.Retry(c.ctx, n, idx)
				if err != nil {
					return err
				}
				ch.Rows[n] = row
			}
		case refusedReason(err, &reason) && ch.Refuse != nil:
			if hi-lo > 1 {
				mid := (lo + hi) / 2
				if err := c.commitRange(ch, lo, mid, slot); err != nil {
					return err
				}
				return c.commitRange(ch, mid, hi, slot)
			}
			if len(rows[0].Items)+len(rows[0].Direct) == 0 {
				return err // refused without a row's write: not the row's fault
			}
			r.svc.log().Warn("job: row refused by the database", "operationId", l.ID, "offset", m.From, "err", err.Error())
			ch.Rows[lo] = ch.Refuse(lo, "the row cannot be stored: "+reason)
			ch.Rows[lo].Items, ch.Rows[lo].Direct = nil, nil
		default:
			return err
		}
	}
}

// writeDirect makes the direct writes of a chunk's rows (a group each),
// while the run's lease has at least a third of its length left.
func (c *Committer) writeDirect(groups [][]types.TransactWriteItem) error {
	c.directMu.RLock()
	defer c.directMu.RUnlock()
	now, until := c.r.svc.Clock.Now(), time.Unix(0, c.until.Load())
	switch {
	case !now.Before(until):
		return operation.ErrLeaseLost // another run may hold it
	case until.Sub(now) < c.r.svc.lease()/3:
		return fmt.Errorf("job: the lease ends in %s: no direct writes", until.Sub(now))
	}
	reqs, err := ddb.PackBatches(groups)
	if err != nil {
		return fmt.Errorf("direct writes: %w", err)
	}
	c.startPool()
	// errs holds each request's outcome, and last the run's stop.
	errs := make([]error, len(reqs)+1)
	var wg sync.WaitGroup
send:
	for i, b := range reqs {
		wg.Add(1)
		select {
		case c.batches <- directBatch{b: b, done: func(err error) { errs[i] = err; wg.Done() }}:
		case <-c.ctx.Done():
			errs[len(reqs)] = c.ctx.Err()
			wg.Done()
			break send
		}
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("direct writes: %w", err)
	}
	return nil
}

// committed folds a committed chunk into the prefix and wakes the
// checkpoint writer. With the Crash knob set, the chunks are folded one at
// a time, each followed at once by a checkpoint write and the knob's
// question: a crash then leaves the checkpoint of that moment, and the
// chunks that commit after it past the checkpoint.
func (c *Committer) committed(m operation.Chunk) {
	crash := c.r.svc.Crash
	if crash != nil {
		c.crashMu.Lock()
		defer c.crashMu.Unlock()
		if c.failure() != nil {
			return
		}
	}
	c.mu.Lock()
	i, _ := slices.BinarySearchFunc(c.done, m.From, func(a operation.Chunk, from int64) int { return int(min(max(a.From-from, -1), 1)) })
	c.done = slices.Insert(c.done, i, m)
	c.fold()
	c.mu.Unlock()
	if crash == nil {
		select {
		case c.wake <- struct{}{}:
		default:
		}
		return
	}
	if err := c.flush(true); err != nil {
		return
	}
	c.writeMu.Lock()
	cp := c.r.lease.Checkpoint
	c.writeMu.Unlock()
	c.directMu.Lock()
	defer c.directMu.Unlock()
	if crash(cp) {
		// The simulated crash is the run's end even when a chunk in flight
		// failed meanwhile (the knob may have released it): that failure
		// is part of the crash.
		c.mu.Lock()
		c.err = errCrashed
		c.cond.Broadcast()
		c.mu.Unlock()
		c.cancel()
	}
}

// fold moves the committed chunks that continue the prefix into it.
// c.mu is held.
func (c *Committer) fold() {
	for len(c.done) > 0 && c.done[0].From <= c.cp.Offset {
		m := c.done[0]
		c.done = c.done[1:]
		if m.From < c.cp.Offset {
			continue // before the prefix's end: counted already
		}
		c.cp.Offset = m.To
		c.cp.Rows += m.Rows
		c.cp.PartBytes += m.PartBytes
		c.res.Total += m.Rows
		c.res.Imported += m.Imported
		c.res.Skipped += m.Skipped
		c.res.Errors += m.Errors
		c.r.bytes += m.To - m.From
		c.dirty = true
	}
	c.res.EtaMs = c.r.ETA(c.cp)
	c.res.Message = c.message(false)
}

// writer writes the checkpoint when woken, at most every checkpointEvery,
// until Close.
func (c *Committer) writer() {
	defer close(c.writerDone)
	for range c.wake {
		c.writeMu.Lock()
		wait := checkpointEvery - time.Since(c.lastWrite)
		c.writeMu.Unlock()
		if wait > 0 {
			select {
			case <-time.After(wait):
			case <-c.ctx.Done():
			}
		}
		if c.failure() != nil {
			continue
		}
		if err := c.flush(false); err != nil {
			c.mu.Lock()
			if c.err == nil {
				c.err = err
				c.cancel()
			}
			c.cond.Broadcast()
			c.mu.Unlock()
		}
	}
}

// flush writes the prefix's checkpoint and result when they changed (or
// always with force): Commit without items, which extends the lease.
func (c *Committer) flush(force bool) error {
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	c.mu.Lock()
	if c.err != nil {
		c.mu.Unlock()
		return c.err
	}
	if !c.dirty && !force {
		c.mu.Unlock()
		return nil
	}
	cp, res := c.cp, c.res
	c.dirty = false
	c.mu.Unlock()
	ctx := c.ctx
	if cp.InputDone {
		ctx = context.WithoutCancel(ctx)
	}
	err := c.r.svc.Ops.Commit(ctx, c.r.lease, cp, res, c.r.svc.lease(), nil)
	c.lastWrite = time.Now()
	if err != nil {
		return err
	}
	c.until.Store(c.r.lease.Until.UnixNano())
	return nil
}

// refusedReason reports whether err is DynamoDB refusing a value of the
// request (not a fault of the platform), and sets reason to a short,
// client-safe account of it.
func refusedReason(err error, reason *string) bool {
	msg := ""
	refused := false
	var api smithy.APIError
	if errors.As(err, &api) && api.ErrorCode() == "ValidationException" {
		refused, msg = true, api.ErrorMessage()
	}
	for _, r := range ddb.CanceledReasons(err) {
		if r == "ValidationError" {
			refused = true
		}
	}
	if !refused {
		return false
	}
	if msg == "" {
		msg = err.Error()
	}
	low := strings.ToLower(msg)
	switch {
	case strings.Contains(low, "size"):
		*reason = "it is larger than the database stores"
	case strings.Contains(low, "number"):
		*reason = "a number is outside the range the database stores"
	case strings.Contains(low, "empty"):
		*reason = "a value is empty where the database needs one"
	default:
		*reason = "the database refused one of its values"
	}
	return true
}

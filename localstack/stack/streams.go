package stack

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"
	"github.com/loyalty-platform/platform/shared/contract/sam"
)

// StreamHandler handles a batch of DynamoDB stream records as a function
// with a DynamoDB event source does. With ReportBatchItemFailures the
// response names the records that failed (by sequence number).
type StreamHandler func(context.Context, events.DynamoDBEvent) (events.DynamoDBEventResponse, error)

// Local delivery of DynamoDB stream records, as Lambda's event source
// mapping does it for a function's `Type: DynamoDB` events: once OnStream
// registered a function's handler, a poller per stream event (one goroutine)
// reads the stream of the event's table (DynamoDB Local serves the
// DynamoDB Streams API on its own endpoint) and invokes the handler with
// batches of events.DynamoDBEventRecord.
//
//   - Shards: the poller lists the stream's shards (DescribeStream) about
//     every second, and at once when a shard ended or a caller waits in
//     StreamIdle. With StartingPosition LATEST, the shards open when OnStream
//     was called are read from their tip at that moment (records written
//     after OnStream returned are delivered, earlier ones are not) and shards
//     closed by then are skipped; shards found later are read from their
//     start (TRIM_HORIZON). With TRIM_HORIZON every shard is read from its
//     start. A child shard is read only after its parent was read to its end.
//   - Restarts: with a StateDir, the positions outlive the stack and a
//     subscription resumes where the last one stopped instead of at its
//     StartingPosition (see positions.go).
//   - Polling: each shard is polled about every PollInterval; a shard with
//     records waiting is read batch after batch (BatchSize records at most,
//     100 when the template sets none) until it is at its tip. Records of
//     one shard are delivered in order, one batch at a time.
//     MaximumBatchingWindowInSeconds is not applied: a batch goes out as soon
//     as it is read.
//   - Failures: an error, a panic or an invocation that runs past the
//     function's template Timeout (see Within) fails the whole batch. With
//     ReportBatchItemFailures, a response naming records fails the batch from
//     the first of them on (the records before it succeeded); a name that is
//     no record of the batch fails the whole batch. The failed part is
//     retried, after a short backoff, up to MaximumRetryAttempts times
//     (without limit when the template sets none, as Lambda retries until
//     the records expire). Then, with BisectBatchOnFunctionError, it is split
//     in two halves, each retried the same way, down to single records; a
//     record that still fails is skipped and logged, as Lambda discards it
//     (there is no OnFailure destination locally).
//   - StreamIdle waits until every record written before the call was
//     delivered and its handler returned.
//
// With AWS_ENDPOINT_URL (LocalStack, an account) the stack delivers nothing:
// configure event source mappings there.

// PollInterval is how often a poller reads a stream shard that is at its
// tip (Lambda polls about four times a second).
const PollInterval = 150 * time.Millisecond

// defaultBatchSize is Lambda's BatchSize for DynamoDB streams when the
// template sets none; maxGetRecords is the most records one GetRecords call
// returns.
const (
	defaultBatchSize = 100
	maxGetRecords    = 1000
)

// streamPoller runs the stack's stream subscriptions.
type streamPoller struct {
	client   *dynamodbstreams.Client
	db       *dynamodb.Client
	template *sam.Template

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu   sync.Mutex
	subs map[string][]*subscription // by function name

	// positions keeps the subscriptions' positions across restarts; nil
	// without a StateDir.
	positions *positionStore

	// interval is the wait between rounds of polls at the tips of the
	// shards; errorInterval the wait after a round that failed.
	interval, errorInterval time.Duration
	// describeEvery is the number of rounds between two listings of the
	// shards when nothing asks for one earlier.
	describeEvery uint64
	// retryDelay is the wait before the first retry of a failed batch; it
	// doubles with every retry up to maxRetryDelay.
	retryDelay, maxRetryDelay time.Duration
}

func newStreamPoller(cfg aws.Config, endpoint string, db *dynamodb.Client, t *sam.Template, positions *positionStore) *streamPoller {
	ctx, cancel := context.WithCancel(context.Background())
	return &streamPoller{
		client: dynamodbstreams.NewFromConfig(cfg, func(o *dynamodbstreams.Options) {
			o.BaseEndpoint = aws.String(endpoint)
		}),
		db: db, template: t, ctx: ctx, cancel: cancel, subs: map[string][]*subscription{}, positions: positions,
		interval: PollInterval, errorInterval: time.Second, describeEvery: 10,
		retryDelay: 20 * time.Millisecond, maxRetryDelay: time.Second,
	}
}

// OnStream registers the handler of a template function (by name, e.g.
// "rules") for its DynamoDB stream events and starts polling their streams.
// The starting position is taken before OnStream returns (records written
// afterwards are delivered when the event starts at LATEST). A later
// registration replaces the handler and keeps the pollers' positions; a nil
// handler stops the function's pollers. It does nothing when the stack
// runs against AWS_ENDPOINT_URL, or for a function without stream events.
func (s *Stack) OnStream(function string, h StreamHandler) {
	if s == nil || s.streams == nil {
		return
	}
	s.streams.subscribe(function, h)
}

// StreamIdle waits until every stream record written before the call has
// been delivered to the registered handlers and they returned (or, for
// records that kept failing, were skipped): for each subscription, until
// a round of polls that began after the call listed the stream's shards and
// read every one of them to its tip. It returns ctx's error when that takes
// longer than ctx allows (a handler still failing, or an emulator that does
// not answer), and nil at once when nothing is subscribed.
func (s *Stack) StreamIdle(ctx context.Context) error {
	if s == nil || s.streams == nil {
		return nil
	}
	p := s.streams
	p.mu.Lock()
	var subs []*subscription
	for _, fs := range p.subs {
		subs = append(subs, fs...)
	}
	p.mu.Unlock()
	for _, sub := range subs {
		if err := sub.drain(ctx); err != nil {
			return err
		}
	}
	return nil
}

func (p *streamPoller) subscribe(function string, h StreamHandler) {
	p.mu.Lock()
	if existing := p.subs[function]; existing != nil {
		if h == nil {
			delete(p.subs, function)
		}
		p.mu.Unlock()
		reregister(existing, h, h == nil)
		return
	}
	p.mu.Unlock()
	if h == nil {
		return
	}
	f, ok := p.template.Function(function)
	if !ok || len(f.Streams) == 0 {
		slog.Debug("stream handler for a function without stream events", "function", function)
		return
	}
	var subs []*subscription
	for _, ev := range f.Streams {
		if ev.Table == "" {
			slog.Warn("stream event names no template table: not delivered locally", "function", function, "event", ev.Event)
			continue
		}
		sub := p.newSubscription(function, ev, h)
		// Take the starting position now, as creating the event source
		// mapping does; when the stream is not there yet, the poller keeps
		// trying.
		ctx, cancel := context.WithTimeout(sub.ctx, 10*time.Second)
		if err := sub.describe(ctx); err != nil {
			sub.report(err)
		}
		cancel()
		subs = append(subs, sub)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ctx.Err() != nil {
		return // closed meanwhile
	}
	if existing := p.subs[function]; existing != nil {
		// Registered concurrently: keep those pollers, with this handler.
		reregister(existing, h, false)
		return
	}
	p.subs[function] = subs
	for _, sub := range subs {
		p.wg.Add(1)
		go sub.run()
	}
}

// close stops every poller, cancelling the invocations in flight, and waits
// for them.
func (p *streamPoller) close() {
	p.mu.Lock()
	p.cancel()
	p.mu.Unlock()
	p.wg.Wait()
}

// subscription polls the stream of one stream event of one function.
type subscription struct {
	mapping[StreamHandler]
	p         *streamPoller
	function  string
	event     sam.StreamEvent
	table     string // physical name
	batchSize int
	kick      chan struct{} // asks for a round now

	mu       sync.Mutex
	rounds   uint64        // rounds begun
	caughtUp uint64        // the last round that read every shard to its tip
	wanted   uint64        // the round a drain waits for
	progress chan struct{} // closed (and replaced) when caughtUp moves
	lastErr  string        // the error last logged, to log each only once

	// The rest belongs to the poller goroutine (and to subscribe before it
	// starts).
	// key names the subscription in the saved positions; saved is its
	// saved mapping until the first listing of the shards used it (nil
	// when there is none); saveErr is the last error saving positions, to
	// log each only once.
	key          string
	saved        *savedMapping
	saveErr      string
	arn          string
	started      bool // the shards were listed once: shards found later are new
	shards       map[string]*shard
	order        []string // shard ids in the order they were found
	describedAt  uint64   // the round of the last listing
	needDescribe bool
	closing      bool // the stream is disabled: the table may have another
}

// shard is the poller's position in one stream shard.
type shard struct {
	id, parent string
	iterator   *string
	// start is the iterator type used when there is no position yet.
	start types.ShardIteratorType
	// last is the sequence number of the last record handled.
	last string
	// done is set once the shard was read to its end and handled, or
	// when it is skipped.
	done bool
}

func (p *streamPoller) newSubscription(function string, ev sam.StreamEvent, h StreamHandler) *subscription {
	batch := ev.BatchSize
	if batch <= 0 {
		batch = defaultBatchSize
	}
	sub := &subscription{
		p: p, function: function, event: ev, table: TableName(ev.Table), batchSize: batch,
		kick: make(chan struct{}, 1), progress: make(chan struct{}), shards: map[string]*shard{},
		key: function + "/" + ev.Event,
	}
	sub.start(p.ctx, h)
	if p.positions != nil {
		if m, ok := p.positions.load(sub.key); ok {
			sub.saved = &m
		}
	}
	return sub
}

// run polls until the subscription or the stack is closed.
func (s *subscription) run() {
	defer s.p.wg.Done()
	defer close(s.done)
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		select {
		case <-s.ctx.Done():
			return
		case <-timer.C:
		case <-s.kick:
		}
		wait := s.p.interval
		if err := s.round(); err != nil {
			s.report(err)
			wait = s.p.errorInterval
		} else {
			s.recovered()
		}
		timer.Reset(wait)
	}
}

// round lists the shards when due and reads every shard that may be read
// (a child once its parent is done) to its tip, delivering what it reads.
// A round that listed the shards and found every one at its tip moves
// caughtUp, releasing the drains that wait for it.
func (s *subscription) round() error {
	s.mu.Lock()
	s.rounds++
	r := s.rounds
	waited := s.wanted > s.caughtUp
	s.mu.Unlock()

	// Only a round that listed the shards can be complete: a shard made
	// before a drain began must be known.
	complete := false
	var errs []error
	if s.arn == "" || !s.started || waited || s.needDescribe || r-s.describedAt >= s.p.describeEvery {
		if err := s.describe(s.ctx); err != nil {
			if s.arn == "" || !s.started {
				return err
			}
			errs = append(errs, err) // read the shards known
		} else {
			s.describedAt = r
			complete = true
		}
	}
	for _, id := range s.order {
		if s.ctx.Err() != nil {
			return nil
		}
		sh := s.shards[id]
		if sh == nil || sh.done {
			continue
		}
		if p := s.shards[sh.parent]; p != nil && !p.done {
			complete = false
			continue
		}
		tip, err := s.poll(sh)
		if err != nil {
			errs = append(errs, err)
		}
		if !tip || err != nil {
			complete = false
		}
	}
	if s.closing {
		// A disabled stream's shards were read: the next round finds the
		// table's current stream, which may hold records already.
		complete, s.needDescribe = false, true
	}
	if complete {
		s.mu.Lock()
		s.caughtUp = r
		close(s.progress)
		s.progress = make(chan struct{})
		s.mu.Unlock()
	}
	return errors.Join(errs...)
}

// describe finds the table's stream when needed and lists its shards,
// adding those not known yet with their starting position.
func (s *subscription) describe(ctx context.Context) error {
	return s.list(ctx, false)
}

// list is describe; again is set when the stream was just replaced.
func (s *subscription) list(ctx context.Context, again bool) error {
	if s.arn == "" {
		out, err := s.p.db.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(s.table)})
		if err != nil {
			return fmt.Errorf("describe table %s: %w", s.table, err)
		}
		spec := out.Table.StreamSpecification
		if out.Table.LatestStreamArn == nil || spec == nil || !aws.ToBool(spec.StreamEnabled) {
			return fmt.Errorf("table %s has no stream", s.table)
		}
		s.arn = aws.ToString(out.Table.LatestStreamArn)
	}
	var listed []types.Shard
	var status types.StreamStatus
	var from *string
	for {
		out, err := s.p.client.DescribeStream(ctx, &dynamodbstreams.DescribeStreamInput{StreamArn: aws.String(s.arn), ExclusiveStartShardId: from})
		if err != nil {
			err = fmt.Errorf("describe stream %s: %w", s.arn, err)
			var nf *types.ResourceNotFoundException
			if errors.As(err, &nf) {
				// The table was deleted (and perhaps created again): look
				// for its stream anew; its shards are new ones.
				s.forgetStream()
			}
			return err
		}
		d := out.StreamDescription
		if d == nil {
			break
		}
		listed = append(listed, d.Shards...)
		status = d.StreamStatus
		if d.LastEvaluatedShardId == nil {
			break
		}
		from = d.LastEvaluatedShardId
	}
	// At the start, with LATEST, the shards open now are read from their
	// tip as it is now (so the iterators are taken here), and closed ones
	// not at all. A saved mapping replaces the StartingPosition: in the
	// stream it names, each shard goes on after its saved position; in
	// another stream (the table's stream was replaced while the stack was
	// down) every shard is read from its start. The new shards are
	// committed together.
	saved := s.saved
	if s.started {
		saved = nil
	}
	resume := saved != nil && saved.StreamArn == s.arn
	latest := !s.started && saved == nil && s.event.StartingPosition != string(types.ShardIteratorTypeTrimHorizon)
	added := map[string]*shard{}
	var order []string
	present := map[string]bool{}
	for _, l := range listed {
		id := aws.ToString(l.ShardId)
		present[id] = true
		if s.shards[id] != nil || added[id] != nil {
			continue
		}
		sh := &shard{id: id, parent: aws.ToString(l.ParentShardId), start: types.ShardIteratorTypeTrimHorizon}
		closed := l.SequenceNumberRange != nil && l.SequenceNumberRange.EndingSequenceNumber != nil
		if resume {
			if pos, ok := saved.Shards[id]; ok {
				sh.last, sh.done = pos.Last, pos.Done
			}
		}
		if latest {
			if closed {
				sh.done = true
			} else {
				sh.start = types.ShardIteratorTypeLatest
				out, err := s.p.client.GetShardIterator(ctx, &dynamodbstreams.GetShardIteratorInput{
					StreamArn: aws.String(s.arn), ShardId: aws.String(id), ShardIteratorType: types.ShardIteratorTypeLatest,
				})
				if err != nil {
					return fmt.Errorf("shard iterator of %s: %w", id, err)
				}
				sh.iterator = out.ShardIterator
			}
		}
		added[id] = sh
		order = append(order, id)
	}
	for _, id := range order {
		s.shards[id] = added[id]
	}
	s.order = append(s.order, order...)
	changed := !s.started || len(order) > 0
	switch {
	case resume:
		slog.Info("stream resumed after its saved positions", "function", s.function, "table", s.table, "stream", s.arn)
	case saved != nil:
		slog.Info("stream of the saved positions gone (DynamoDB Local restarted, or the table made again): reading the new stream from its start",
			"function", s.function, "table", s.table, "saved", saved.StreamArn, "stream", s.arn)
	}
	s.started, s.saved = true, nil
	s.needDescribe = false
	// Shards read to their end and gone from the stream (trimmed) are
	// forgotten; their children then count as roots.
	kept := s.order[:0]
	for _, id := range s.order {
		if sh := s.shards[id]; sh.done && !present[id] {
			delete(s.shards, id)
			changed = true
			continue
		}
		kept = append(kept, id)
	}
	s.order = kept
	if changed {
		s.persist()
	}
	s.closing = status == types.StreamStatusDisabled || status == types.StreamStatusDisabling
	if s.closing {
		// The stream was disabled (and perhaps another one enabled): once
		// its shards are read, go on with the table's current stream.
		for _, sh := range s.shards {
			if !sh.done {
				return nil
			}
		}
		s.forgetStream()
		if again {
			return fmt.Errorf("the stream of table %s is disabled", s.table)
		}
		return s.list(ctx, true)
	}
	return nil
}

// forgetStream drops the stream and the positions in it; the shards of the
// stream found next are read from their start.
func (s *subscription) forgetStream() {
	s.arn, s.closing = "", false
	s.shards = map[string]*shard{}
	s.order = nil
}

// poll reads sh batch after batch and delivers each, until the shard is at
// its tip (tip true), at most a few batches per round so that other shards
// get their turn.
func (s *subscription) poll(sh *shard) (tip bool, err error) {
	const batchesPerRound = 10
	renewed := false
	for range batchesPerRound {
		if sh.iterator == nil {
			in := &dynamodbstreams.GetShardIteratorInput{StreamArn: aws.String(s.arn), ShardId: aws.String(sh.id), ShardIteratorType: sh.start}
			if sh.last != "" {
				in.ShardIteratorType, in.SequenceNumber = types.ShardIteratorTypeAfterSequenceNumber, aws.String(sh.last)
			}
			out, err := s.p.client.GetShardIterator(s.ctx, in)
			if err != nil {
				return false, s.readFailed(sh, err)
			}
			if out.ShardIterator == nil {
				// Nothing after the position in a closed shard.
				s.finished(sh)
				return true, nil
			}
			sh.iterator = out.ShardIterator
		}
		var recs []types.Record
		var readErr error
		failed, ended := false, false
		for len(recs) < s.batchSize {
			limit := min(s.batchSize-len(recs), maxGetRecords)
			out, err := s.p.client.GetRecords(s.ctx, &dynamodbstreams.GetRecordsInput{ShardIterator: sh.iterator, Limit: aws.Int32(int32(limit))})
			if err != nil {
				failed, readErr = true, s.readFailed(sh, err)
				break
			}
			recs = append(recs, out.Records...)
			sh.iterator = out.NextShardIterator
			ended = sh.iterator == nil
			if ended || len(out.Records) < limit {
				tip = true
				break
			}
		}
		if len(recs) > 0 {
			if !s.deliver(recs) {
				return false, nil // stopped
			}
			sh.last = aws.ToString(recs[len(recs)-1].Dynamodb.SequenceNumber)
			s.persist()
		}
		switch {
		case failed && readErr == nil && sh.iterator == nil && !renewed:
			renewed = true
			continue // a new iterator, now
		case failed:
			return false, readErr
		case ended:
			s.finished(sh)
			return true, nil
		case tip:
			return true, nil
		}
	}
	return false, nil
}

// finished marks a shard read to its end; its children may be read now.
func (s *subscription) finished(sh *shard) {
	sh.done = true
	sh.iterator = nil
	s.needDescribe = true
	s.persist()
}

// persist saves the subscription's positions, when the stack keeps them.
// A failure is logged (once until the next different one) and delivery
// goes on: the positions are only a restart's starting point.
func (s *subscription) persist() {
	if s.p.positions == nil || s.arn == "" {
		return
	}
	m := savedMapping{Table: s.table, StreamArn: s.arn, Shards: make(map[string]savedShard, len(s.shards))}
	for id, sh := range s.shards {
		m.Shards[id] = savedShard{Last: sh.last, Done: sh.done}
	}
	err := s.p.positions.save(s.key, m)
	switch {
	case err == nil:
		s.saveErr = ""
	case err.Error() != s.saveErr:
		s.saveErr = err.Error()
		slog.Warn("stream poller", "function", s.function, "table", s.table, "err", err)
	}
}

// readFailed updates sh after a failed GetShardIterator or GetRecords and
// returns the error to report.
func (s *subscription) readFailed(sh *shard, err error) error {
	var expired *types.ExpiredIteratorException
	var trimmed *types.TrimmedDataAccessException
	var notFound *types.ResourceNotFoundException
	switch {
	case s.ctx.Err() != nil:
		return nil
	case errors.As(err, &expired):
		// Iterators live 15 minutes: take a new one after the last record
		// handled (no error: this is routine after a long invocation).
		sh.iterator = nil
		return nil
	case errors.As(err, &trimmed) && sh.last == "":
		// No record of the shard was read yet. DynamoDB Local answers so
		// for an iterator taken while the shard was empty (at LATEST or
		// TRIM_HORIZON) once its first record is there, when that
		// record's sequence number is not the shard's starting one (the
		// emulator numbers the writes of all tables together). Every record
		// of the shard is then newer than the iterator: read them from the
		// start.
		sh.iterator, sh.start = nil, types.ShardIteratorTypeTrimHorizon
		return nil
	case errors.As(err, &trimmed):
		// The position is older than the stream's retention (24 hours):
		// go on from the oldest record there is.
		slog.Warn("stream records expired before they were delivered", "function", s.function, "table", s.table, "shard", sh.id, "after", sh.last)
		sh.iterator, sh.last, sh.start = nil, "", types.ShardIteratorTypeTrimHorizon
		return nil
	case errors.As(err, &notFound):
		slog.Warn("stream shard gone", "function", s.function, "table", s.table, "shard", sh.id, "err", err)
		s.finished(sh)
		return nil
	}
	return fmt.Errorf("read shard %s of %s: %w", sh.id, s.arn, err)
}

// deliver hands the records to the handler as one batch, with Lambda's
// retries; it returns false when the subscription stopped meanwhile.
func (s *subscription) deliver(recs []types.Record) bool {
	batch := make([]events.DynamoDBEventRecord, 0, len(recs))
	for _, r := range recs {
		batch = append(batch, s.eventRecord(r))
	}
	s.process(batch)
	return s.ctx.Err() == nil
}

// process invokes the handler with batch until it succeeds, retrying the
// failed part, then bisecting it or skipping it.
func (s *subscription) process(batch []events.DynamoDBEventRecord) {
	delay := s.p.retryDelay
	for retries := 0; ; retries++ {
		failed, err := s.invoke(batch)
		if err == nil || s.ctx.Err() != nil {
			return
		}
		batch = batch[failed:]
		if limit := s.event.MaximumRetryAttempts; limit >= 0 && retries >= limit {
			if s.event.BisectBatchOnFunctionError && len(batch) > 1 {
				half := len(batch) / 2
				slog.Warn("stream batch failed after its retries; bisecting", "function", s.function, "table", s.table, "records", len(batch), "err", err)
				s.process(batch[:half])
				if s.ctx.Err() == nil {
					s.process(batch[half:])
				}
				return
			}
			for _, r := range batch {
				slog.Error("stream record skipped after its retries", "function", s.function, "table", s.table,
					"sequenceNumber", r.Change.SequenceNumber, "eventName", r.EventName, "err", err)
			}
			return
		}
		slog.Debug("stream batch failed; retrying", "function", s.function, "table", s.table, "records", len(batch), "retry", retries+1, "err", err)
		select {
		case <-time.After(delay):
		case <-s.ctx.Done():
			return
		}
		delay = min(2*delay, s.p.maxRetryDelay)
	}
}

// invoke calls the handler once and returns the index of the first failed
// record with the failure, or a nil error when the whole batch succeeded.
func (s *subscription) invoke(batch []events.DynamoDBEventRecord) (failed int, err error) {
	h := s.currentHandler()
	if h == nil {
		return 0, nil
	}
	resp, err := Within(s.ctx, FunctionTimeout(s.p.template, s.function), func(ctx context.Context) (events.DynamoDBEventResponse, error) {
		return h(ctx, events.DynamoDBEvent{Records: batch})
	})
	if err != nil {
		return 0, err
	}
	if !s.event.ReportsBatchItemFailures() || len(resp.BatchItemFailures) == 0 {
		return 0, nil
	}
	first := len(batch)
	for _, f := range resp.BatchItemFailures {
		i := indexOfSequence(batch, f.ItemIdentifier)
		if i < 0 {
			return 0, fmt.Errorf("batch item failure %q names no record of the batch", f.ItemIdentifier)
		}
		first = min(first, i)
	}
	return first, fmt.Errorf("batch item failure at sequence number %s", batch[first].Change.SequenceNumber)
}

func indexOfSequence(batch []events.DynamoDBEventRecord, seq string) int {
	if seq == "" {
		return -1
	}
	for i, r := range batch {
		if r.Change.SequenceNumber == seq {
			return i
		}
	}
	return -1
}

// drain waits until a round begun after the call caught up (see
// StreamIdle).
func (s *subscription) drain(ctx context.Context) error {
	s.mu.Lock()
	target := s.rounds + 1
	s.wanted = max(s.wanted, target)
	s.mu.Unlock()
	select {
	case s.kick <- struct{}{}:
	default:
	}
	for {
		s.mu.Lock()
		caught, progress := s.caughtUp, s.progress
		s.mu.Unlock()
		if caught >= target {
			return nil
		}
		select {
		case <-progress:
		case <-s.done:
			return fmt.Errorf("stream of %s for function %s: the poller stopped", s.table, s.function)
		case <-ctx.Done():
			s.mu.Lock()
			lastErr := s.lastErr
			s.mu.Unlock()
			if lastErr != "" {
				return fmt.Errorf("stream of %s for function %s: records not delivered yet (%s): %w", s.table, s.function, lastErr, ctx.Err())
			}
			return fmt.Errorf("stream of %s for function %s: records not delivered yet: %w", s.table, s.function, ctx.Err())
		}
	}
}

// report logs a polling error once (until another error or a recovery).
func (s *subscription) report(err error) {
	if err == nil || s.ctx.Err() != nil {
		return
	}
	s.mu.Lock()
	repeated := s.lastErr == err.Error()
	s.lastErr = err.Error()
	s.mu.Unlock()
	if !repeated {
		slog.Warn("stream poller", "function", s.function, "table", s.table, "err", err)
	}
}

func (s *subscription) recovered() {
	s.mu.Lock()
	was := s.lastErr
	s.lastErr = ""
	s.mu.Unlock()
	if was != "" {
		slog.Info("stream poller recovered", "function", s.function, "table", s.table)
	}
}

// eventRecord converts a stream record to the record of Lambda's event.
func (s *subscription) eventRecord(r types.Record) events.DynamoDBEventRecord {
	out := events.DynamoDBEventRecord{
		AWSRegion:      region(),
		EventID:        aws.ToString(r.EventID),
		EventName:      string(r.EventName),
		EventSource:    "aws:dynamodb",
		EventVersion:   aws.ToString(r.EventVersion),
		EventSourceArn: s.arn,
	}
	if out.EventVersion == "" {
		out.EventVersion = "1.1"
	}
	if id := r.UserIdentity; id != nil {
		out.UserIdentity = &events.DynamoDBUserIdentity{Type: aws.ToString(id.Type), PrincipalID: aws.ToString(id.PrincipalId)}
	}
	if d := r.Dynamodb; d != nil {
		out.Change = events.DynamoDBStreamRecord{
			Keys:           streamImage(d.Keys),
			NewImage:       streamImage(d.NewImage),
			OldImage:       streamImage(d.OldImage),
			SequenceNumber: aws.ToString(d.SequenceNumber),
			SizeBytes:      aws.ToInt64(d.SizeBytes),
			StreamViewType: string(d.StreamViewType),
		}
		if d.ApproximateCreationDateTime != nil {
			out.Change.ApproximateCreationDateTime = events.SecondsEpochTime{Time: *d.ApproximateCreationDateTime}
		}
	}
	return out
}

// streamImage converts an item of a DynamoDB Streams record (keys, new or
// old image) to the attribute values of Lambda's DynamoDB event; nil stays
// nil.
func streamImage(item map[string]types.AttributeValue) map[string]events.DynamoDBAttributeValue {
	if item == nil {
		return nil
	}
	out := make(map[string]events.DynamoDBAttributeValue, len(item))
	for k, v := range item {
		if av, ok := streamAttribute(v); ok {
			out[k] = av
		}
	}
	return out
}

func streamAttribute(v types.AttributeValue) (events.DynamoDBAttributeValue, bool) {
	switch v := v.(type) {
	case *types.AttributeValueMemberS:
		return events.NewStringAttribute(v.Value), true
	case *types.AttributeValueMemberN:
		return events.NewNumberAttribute(v.Value), true
	case *types.AttributeValueMemberB:
		return events.NewBinaryAttribute(v.Value), true
	case *types.AttributeValueMemberBOOL:
		return events.NewBooleanAttribute(v.Value), true
	case *types.AttributeValueMemberNULL:
		return events.NewNullAttribute(), true
	case *types.AttributeValueMemberSS:
		return events.NewStringSetAttribute(v.Value), true
	case *types.AttributeValueMemberNS:
		return events.NewNumberSetAttribute(v.Value), true
	case *types.AttributeValueMemberBS:
		return events.NewBinarySetAttribute(v.Value), true
	case *types.AttributeValueMemberL:
		l := make([]events.DynamoDBAttributeValue, 0, len(v.Value))
		for _, x := range v.Value {
			if av, ok := streamAttribute(x); ok {
				l = append(l, av)
			}
		}
		return events.NewListAttribute(l), true
	case *types.AttributeValueMemberM:
		m := streamImage(v.Value)
		if m == nil {
			m = map[string]events.DynamoDBAttributeValue{}
		}
		return events.NewMapAttribute(m), true
	}
	return events.DynamoDBAttributeValue{}, false
}

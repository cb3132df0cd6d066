// Package job runs the platform's asynchronous jobs: imports
// that stream a CSV file and exports that write one. The API side starts a
// job (Start: the operation, duplicate protection by nonce, the input in the
// files bucket or a presigned upload URL for it); the jobs function runs it
// when S3 reports the new object (HandleS3); the API serves the results file
// (File).
//
// Objects in the files bucket, per operation:
//
//	jobs/<tenantId>/<operationId>/input.csv                     the import's input (uploaded by the API or the client)
//	jobs/<tenantId>/<operationId>/start.json                    starts a job without input (exports)
//	jobs/<tenantId>/<operationId>/continue-<parts>-<run>.json   continues a job in a new invocation
//	jobs/<tenantId>/<operationId>/results/part-<n>-r<run>.csv   results of the rows of one commit (exports)
//	jobs/<tenantId>/<operationId>/results/chunk-<from>-r<run>.csv  results of the rows of one chunk (imports)
//	jobs/<tenantId>/<operationId>/results.csv                   the results file (header and parts)
//
// The tenant id is in the key because every operation item's key starts
// with it. The jobs function's S3 triggers are prefix jobs/ with suffix
// input.csv, and prefix jobs/ with suffix .json.
//
// Exactly once: a run first claims the operation (a lease of LeaseDuration,
// see operation.Claim), so of duplicate deliveries one runs and the others
// find it leased or finished. An import hands its rows to a Committer in
// chunks (see chunks.go); several commit at once, each in one DynamoDB
// transaction with its marker (put only if absent) and a check of one of
// the run's fences (operation.CommitChunk), after the chunk's results part
// was written. A run takes the fences over before it reads the input, so
// a run that lost its lease commits nothing more; it then reads the
// markers past the checkpoint and skips their rows. The checkpoint follows
// the contiguous prefix of committed chunks and is written now and then
// (operation.Commit, conditional on the lease). A run that stops anywhere
// (crash, timeout) leaves each chunk whole or absent; the next run resumes
// at the checkpoint (the input is read again from its byte offset) and
// skips the chunks committed past it, so no row is applied twice and each
// row's result appears once. Part objects carry the run number in their
// name, so a stale run can never overwrite a part another run committed.
// Exports commit their parts with the checkpoint (Run.Commit).
//
// Time limit: when the invocation's deadline is near (StopBefore), the run
// commits, writes a continue object (which the same trigger delivers to a
// new invocation) and then gives its lease up. A run that finds the lease
// held waits for it to be released or to expire, and leaves the operation
// alone if the holder is alive (its lease is extended by its commits).
//
// Failed for good: when every attempt of an invocation fails (Lambda
// retries twice), Lambda sends a destination record to the failure queue,
// which delivers it back to the function as an SQS event (HandleEvent
// dispatches by event source); HandleSQS then sets the operation FAILED,
// so that it does not stay RUNNING for ever (see failure.go).
package job

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"time"

	"github.com/aws/aws-lambda-go/events"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/loyalty-platform/platform/shared/domain/operation"
	"github.com/loyalty-platform/platform/shared/domain/tenant"
	"github.com/loyalty-platform/platform/shared/platform/apierr"
	"github.com/loyalty-platform/platform/shared/platform/clock"
)

// Defaults of the Service knobs.
const (
	// DefaultLease is how long a claim or commit holds the operation. A
	// run commits far more often; a crashed run's operation is free again
	// after at most this long (Lambda retries a failed asynchronous
	// invocation after one and after two more minutes).
	DefaultLease = 45 * time.Second
	// DefaultStopBefore is how long before the invocation's deadline a run
	// stops and continues in a new invocation.
	DefaultStopBefore = 30 * time.Second
	// DefaultPresignExpiry is how long a presigned URL is valid.
	DefaultPresignExpiry = 15 * time.Minute
	// DefaultMaxInput is the largest input file a job reads (an upload
	// through the presigned URL; a direct upload is at most
	// MaxDirectUpload): about five million award rows, or hours of
	// importing. A larger file FAILS the operation with PAYLOAD_TOO_LARGE
	// before any row is read.
	DefaultMaxInput = 256 << 20
)

// S3API is the subset of the S3 client the jobs use.
type S3API interface {
	GetObject(context.Context, *s3.GetObjectInput, ...func(*s3.Options)) (*s3.GetObjectOutput, error)
	PutObject(context.Context, *s3.PutObjectInput, ...func(*s3.Options)) (*s3.PutObjectOutput, error)
	HeadObject(context.Context, *s3.HeadObjectInput, ...func(*s3.Options)) (*s3.HeadObjectOutput, error)
}

// Presigner makes presigned S3 requests (s3.PresignClient).
type Presigner interface {
	PresignPutObject(context.Context, *s3.PutObjectInput, ...func(*s3.PresignOptions)) (*v4.PresignedHTTPRequest, error)
	PresignGetObject(context.Context, *s3.GetObjectInput, ...func(*s3.PresignOptions)) (*v4.PresignedHTTPRequest, error)
}

// Kind is one kind of job, such as the location import. Run continues the
// job of r from its checkpoint. It returns nil when the whole input is
// consumed and committed, ErrYield when it committed and should continue in
// a new invocation (ShouldYield), a *FileError when the input cannot be
// read (the operation FAILS), or another error (the run is retried).
type Kind interface {
	Run(ctx context.Context, r *Run) error
}

// ErrYield is returned by a Kind that stopped early to continue in a new
// invocation.
var ErrYield = errors.New("job: continue in a new invocation")

// FileError is an input the job cannot read: the operation FAILS with it.
type FileError struct {
	Code    apierr.Code
	Message string
}

func (e *FileError) Error() string { return string(e.Code) + ": " + e.Message }

// BadFile returns a FileError with code VALIDATION_FAILED.
func BadFile(format string, args ...any) *FileError {
	return &FileError{Code: apierr.ValidationFailed, Message: fmt.Sprintf(format, args...)}
}

// Service starts and runs jobs.
type Service struct {
	Ops     *operation.Service
	S3      S3API
	Presign Presigner
	Bucket  string
	Clock   clock.Clock
	Log     *slog.Logger
	// Kinds maps "<namespace>.<name>" of an operation to its Kind.
	Kinds map[string]Kind

	// Lease, StopBefore and PresignExpiry default to the constants above,
	// InlineLimit to DefaultInlineLimit.
	Lease         time.Duration
	StopBefore    time.Duration
	PresignExpiry time.Duration
	InlineLimit   int64
	// MaxInput is the largest input file in bytes; 0 means
	// DefaultMaxInput.
	MaxInput int64
	// MaxRowsPerRun, when set, makes a run yield after that many rows (to
	// test continuation without waiting for a deadline).
	MaxRowsPerRun int64
	// Crash, when set, is asked after every commit; true makes the run stop
	// at once as if the process died: no release, no further writes. For
	// tests of resumption.
	Crash func(cp operation.Checkpoint) bool
	// Sleep waits between claim attempts; nil means time.Sleep.
	Sleep func(time.Duration)
	// CommitWidth is how many chunks of an import commit at once; 0 means
	// DefaultCommitWidth.
	CommitWidth int
	// WriteChunk, when set, is called before each chunk's transaction
	// with the chunk's writes; an error it returns is taken as the
	// database's answer (nothing is written). For tests of faults.
	WriteChunk func(ctx context.Context, items []types.TransactWriteItem) error
	// AfterDirect, when set, is called after each chunk's direct writes
	// (see Row.Direct), before its transaction; an error it returns stops
	// the run as a fault does. For tests of a run that dies between the
	// two.
	AfterDirect func(ctx context.Context) error
}

// KindKey is the key of Kinds for an operation.
func KindKey(namespace, name string) string { return namespace + "." + name }

func (s *Service) lease() time.Duration {
	if s.Lease > 0 {
		return s.Lease
	}
	return DefaultLease
}

func (s *Service) stopBefore() time.Duration {
	if s.StopBefore > 0 {
		return s.StopBefore
	}
	return DefaultStopBefore
}

func (s *Service) maxInput() int64 {
	if s.MaxInput > 0 {
		return s.MaxInput
	}
	return DefaultMaxInput
}

func (s *Service) presignExpiry() time.Duration {
	if s.PresignExpiry > 0 {
		return s.PresignExpiry
	}
	return DefaultPresignExpiry
}

func (s *Service) log() *slog.Logger {
	if s.Log != nil {
		return s.Log
	}
	return slog.Default()
}

func (s *Service) sleep(d time.Duration) {
	if s.Sleep != nil {
		s.Sleep(d)
		return
	}
	time.Sleep(d)
}

// Object keys (see the package comment).
func prefix(tenantID, id string) string { return "jobs/" + tenantID + "/" + id + "/" }

// InputKey is the key of an import's input file.
func InputKey(tenantID, id string) string { return prefix(tenantID, id) + "input.csv" }

// StartKey is the key of the object that starts a job without input.
func StartKey(tenantID, id string) string { return prefix(tenantID, id) + "start.json" }

// ResultsKey is the key of a job's results file.
func ResultsKey(tenantID, id string) string { return prefix(tenantID, id) + "results.csv" }

func continueKey(tenantID, id string, parts, run int) string {
	return fmt.Sprintf("%scontinue-%05d-%d.json", prefix(tenantID, id), parts, run)
}

func partKey(tenantID, id string, n, run int) string {
	return fmt.Sprintf("%sresults/part-%05d-r%d.csv", prefix(tenantID, id), n, run)
}

// chunkPartKey is the key of the results part of the chunk of an import
// that starts at input offset from, written by run.
func chunkPartKey(tenantID, id string, from int64, run int) string {
	return fmt.Sprintf("%sresults/chunk-%015d-r%d.csv", prefix(tenantID, id), from, run)
}

// ParseKey returns the tenant and operation of a key that starts or
// continues a job (input.csv, start.json, continue-*.json).
func ParseKey(key string) (tenantID, id string, ok bool) {
	parts := strings.Split(key, "/")
	if len(parts) != 4 || parts[0] != "jobs" || !tenant.ValidID(parts[1]) || !operation.ValidID(parts[2]) {
		return "", "", false
	}
	name := parts[3]
	switch {
	case name == "input.csv", name == "start.json":
	case strings.HasPrefix(name, "continue-") && strings.HasSuffix(name, ".json"):
	default:
		return "", "", false
	}
	return parts[1], parts[2], true
}

// HandleS3 is the jobs function's handler: it runs the job of every
// ObjectCreated record that starts or continues one. Records of other
// buckets or keys, and of unknown or finished operations, are ignored. An
// error makes Lambda retry the event; the retry resumes at the checkpoint.
func (s *Service) HandleS3(ctx context.Context, ev events.S3Event) error {
	var errs []error
	for _, rec := range ev.Records {
		tenantID, id, ok := s.target(rec)
		if !ok {
			continue
		}
		if err := s.RunOperation(ctx, tenantID, id); err != nil {
			errs = append(errs, fmt.Errorf("job %s: %w", id, err))
		}
	}
	return errors.Join(errs...)
}

// target returns the operation an S3 record starts or continues: an
// ObjectCreated record of the files bucket whose key ParseKey accepts.
// Other records are logged and ignored.
func (s *Service) target(rec events.S3EventRecord) (tenantID, id string, ok bool) {
	if !strings.HasPrefix(rec.EventName, "ObjectCreated:") || rec.S3.Bucket.Name != s.Bucket {
		s.log().Info("job: event ignored", "event", rec.EventName, "bucket", rec.S3.Bucket.Name)
		return "", "", false
	}
	key, err := url.QueryUnescape(rec.S3.Object.Key)
	if err != nil {
		s.log().Info("job: undecodable key ignored", "key", rec.S3.Object.Key)
		return "", "", false
	}
	tenantID, id, ok = ParseKey(key)
	if !ok {
		s.log().Info("job: key ignored", "key", key)
	}
	return tenantID, id, ok
}

// errCrashed ends a run that the Crash knob stopped.
var errCrashed = errors.New("job: simulated crash")

// RunOperation claims the operation and runs its job until it is done,
// failed, or continues in a new invocation. It does nothing when the
// operation is unknown, finished, or held by a live run.
func (s *Service) RunOperation(ctx context.Context, tenantID, id string) error {
	log := s.log().With("tenantId", tenantID, "operationId", id)
	owner := newOwner()
	l, err := s.claim(ctx, tenantID, id, owner, false)
	switch {
	case errors.Is(err, operation.ErrNotFound):
		log.Info("job: unknown operation ignored")
		return nil
	case errors.Is(err, operation.ErrFinished):
		log.Info("job: operation already finished")
		return nil
	case errors.Is(err, errBusy), errors.Is(err, errNoTime):
		log.Info("job: operation held by a live run")
		return nil
	case err != nil:
		return err
	}
	log = log.With("run", l.Claims)
	kind := s.Kinds[KindKey(l.Operation.Namespace, l.Operation.Name)]
	if kind == nil {
		_, err := s.Ops.Fail(ctx, l, operation.Error{Code: string(apierr.Internal), Message: "this kind of job is not supported"}, false, nil)
		return err
	}
	r := &Run{svc: s, lease: l, started: s.Clock.Now(), deadline: deadlineOf(ctx),
		afterStop: l.Claims > 1 && !l.Checkpoint.Yielded}
	err = kind.Run(ctx, r)
	var fe *FileError
	switch {
	case err == nil:
		return s.finish(ctx, r)
	case errors.Is(err, errCrashed):
		log.Warn("job: run stopped by the crash knob")
		return nil
	case errors.Is(err, operation.ErrLeaseLost):
		log.Warn("job: lease lost; another run carries on")
		return nil
	case errors.Is(err, ErrYield):
		return s.yield(ctx, r)
	case errors.As(err, &fe):
		// The rows applied before the failure stay applied: the result
		// counts them (chunks past the checkpoint included) and the
		// results file lists them.
		ferr := s.failApplied(ctx, l, operation.Error{Code: string(fe.Code), Message: fe.Message}, func(res operation.Result) string {
			if res.Total > 0 {
				return fmt.Sprintf("failed after %d rows: %s", res.Total, fe.Message)
			}
			return "failed: " + fe.Message
		})
		if ferr != nil && !errors.Is(ferr, operation.ErrLeaseLost) {
			return ferr
		}
		log.Info("job: failed", "code", fe.Code, "message", fe.Message)
		return nil
	default:
		// Give the lease up so that Lambda's retry can resume at once.
		if rerr := s.Ops.Release(context.WithoutCancel(ctx), l); rerr != nil && !errors.Is(rerr, operation.ErrLeaseLost) {
			log.Error("job: release after error", "err", rerr.Error())
		}
		return err
	}
}

// Why claim did not claim: the holder of the lease showed it is alive
// (errBusy), or the invocation has not the time to wait for the lease to
// expire (errNoTime).
var (
	errBusy   = errors.New("job: operation held by a live run")
	errNoTime = errors.New("job: no time left to wait for the lease")
)

// claim claims the operation. When another run holds it, claim waits for
// the lease to be released or to expire (a continuation object is written
// just before the lease is given up; a crashed run's lease runs out), and
// gives up as soon as the holder shows it is alive by extending its lease.
// With strict, a lease given up before its expiry also shows a live holder
// (a run that continues in a new invocation): the operation is claimed
// only from a holder that is gone, and given back otherwise.
func (s *Service) claim(ctx context.Context, tenantID, id, owner string, strict bool) (*operation.Lease, error) {
	var first *operation.LeasedError
	wait := 50 * time.Millisecond
	for {
		l, err := s.Ops.Claim(ctx, tenantID, id, owner, s.lease())
		var le *operation.LeasedError
		if !errors.As(err, &le) {
			if err == nil && strict && first != nil && (first.Owner == "" || s.Clock.Now().Before(first.Until)) {
				if rerr := s.Ops.Release(context.WithoutCancel(ctx), l); rerr != nil && !errors.Is(rerr, operation.ErrLeaseLost) {
					return nil, rerr
				}
				return nil, errBusy
			}
			return l, err
		}
		if first == nil {
			first = le
		} else if le.Owner != first.Owner || le.Until.After(first.Until) {
			return nil, errBusy
		}
		now := s.Clock.Now()
		if left := time.Until(deadlineOf(ctx)); left < s.stopBefore() || le.Until.Sub(now) > left-s.stopBefore() {
			return nil, errNoTime
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		s.sleep(wait)
		if wait < time.Second {
			wait *= 2
		}
	}
}

// deadlineOf returns the deadline of ctx, or 15 minutes (Lambda's longest
// timeout) from now when it has none.
func deadlineOf(ctx context.Context) time.Time {
	if d, ok := ctx.Deadline(); ok {
		return d
	}
	return time.Now().Add(15 * time.Minute)
}

// yield continues the job in a new invocation: it writes the continue
// object that triggers one, then gives the lease up. (In this order a crash
// in between only delays the next run until the lease expires.)
func (s *Service) yield(ctx context.Context, r *Run) error {
	l := r.lease
	key := continueKey(l.TenantID, l.ID, l.Checkpoint.Parts, l.Claims)
	body := fmt.Sprintf(`{"operationId":%q,"parts":%d,"run":%d}`, l.ID, l.Checkpoint.Parts, l.Claims)
	if err := s.putBytes(ctx, key, []byte(body), "application/json"); err != nil {
		return fmt.Errorf("continue: %w", err)
	}
	if err := s.Ops.Release(ctx, l); err != nil && !errors.Is(err, operation.ErrLeaseLost) {
		return fmt.Errorf("continue: %w", err)
	}
	s.log().Info("job: continues in a new invocation", "operationId", l.ID, "rows", l.Checkpoint.Rows)
	return nil
}

func newOwner() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

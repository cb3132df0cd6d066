package operation

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/loyalty-platform/platform/shared/platform/apierr"
	"github.com/loyalty-platform/platform/shared/platform/clock"
	"github.com/loyalty-platform/platform/shared/platform/ddb"
)

// Service manages operations: their creation by job-starting calls, reads,
// and the lease, checkpoints and outcome the jobs function writes.
type Service struct {
	DB    ddb.API
	Table string
	Clock clock.Clock
}

func (s *Service) st() *store { return &store{db: s.DB, table: s.Table} }

// StartInput describes a job-starting call.
type StartInput struct {
	Namespace string
	Name      string
	EntityID  string
	// Nonce is the parsed x-platform-req-nonce header (ParseNonce).
	Nonce string
	// Fingerprint identifies the request (endpoint, parameters and input
	// file); a repeat must carry the same one.
	Fingerprint string
	Metadata    map[string]any
	// InputDeadline, when set, is when the operation FAILS unless its input
	// arrived (a presigned upload that never came).
	InputDeadline time.Time
}

// Started is what Start did.
type Started struct {
	Operation Operation
	// Repeat is set when an earlier call with the nonce created the
	// operation.
	Repeat bool
	// InputStored tells whether the input (or start object) was already
	// stored by the call that created the operation.
	InputStored bool
}

// Start creates the operation of a job-starting call, or, when a call with
// the same nonce created one before, returns that one (Repeat) and changes
// nothing. Of two calls with one nonce at the same moment exactly one
// creates the operation. A nonce of a different request is ErrNonceReused.
func (s *Service) Start(ctx context.Context, tenantID string, in StartInput) (Started, error) {
	now := s.Clock.Now()
	r := record{
		ID: newID(), TenantID: tenantID, Namespace: in.Namespace, EntityID: in.EntityID, Nonce: in.Nonce, Name: in.Name,
		Status: Pending, Metadata: in.Metadata, CreatedAt: clock.Stamp(now), UpdatedAt: clock.Stamp(now),
		ExpiresAt: now.Add(Lifetime).Unix(), Fingerprint: in.Fingerprint,
	}
	r.PK, r.SK = opPK(tenantID, r.ID), skOp
	if !in.InputDeadline.IsZero() {
		r.InputDeadline = in.InputDeadline.UnixMilli()
	}
	n := nonceRecord{PK: noncePK(tenantID, in.Nonce), SK: skNonce, OperationID: r.ID, Fingerprint: in.Fingerprint, CreatedAt: r.CreatedAt, ExpiresAt: r.ExpiresAt}
	err := s.st().create(ctx, r, n, now)
	if err == nil {
		return Started{Operation: r.view()}, nil
	}
	if !errors.Is(err, errNonceTaken) {
		return Started{}, err
	}
	prev, err := s.st().getNonce(ctx, tenantID, in.Nonce, now)
	if err != nil {
		return Started{}, fmt.Errorf("repeated nonce: %w", err)
	}
	if prev.Fingerprint != in.Fingerprint {
		return Started{}, ErrNonceReused
	}
	op, err := s.st().get(ctx, tenantID, prev.OperationID, now)
	if err != nil {
		return Started{}, fmt.Errorf("repeated nonce: %w", err)
	}
	return Started{Operation: op.view(), Repeat: true, InputStored: op.InputStored}, nil
}

// Progress is Get with the counts of an import that is not finished
// brought up to what it applied: the rows of the chunks committed past
// its checkpoint (the checkpoint is written now and then, and a run that
// stopped leaves its last chunks past it) are added to the result, so
// the counts never say less than the rows applied. A finished operation
// is returned as stored (DONE covers every chunk; FAILED counted them when
// it failed).
func (s *Service) Progress(ctx context.Context, tenantID, id string) (Operation, error) {
	r, err := s.current(ctx, tenantID, id)
	if err != nil {
		return Operation{}, err
	}
	op := r.view()
	if op.Status.Final() || op.Result == nil {
		return op, nil
	}
	res, err := s.Applied(ctx, tenantID, id, r.Checkpoint, *op.Result)
	if err != nil {
		return Operation{}, err
	}
	op.Result = &res
	return op, nil
}

// Applied returns res (the result of checkpoint cp) plus the counts of the
// chunks of the operation committed past cp: the rows applied.
func (s *Service) Applied(ctx context.Context, tenantID, id string, cp Checkpoint, res Result) (Result, error) {
	err := s.Chunks(ctx, tenantID, id, cp.Offset, func(c Chunk) error {
		res.Total += c.Rows
		res.Imported += c.Imported
		res.Skipped += c.Skipped
		res.Errors += c.Errors
		return nil
	})
	if err != nil {
		return Result{}, err
	}
	return res, nil
}

// MarkInputStored records that the job's input (or start object) is in the
// files bucket.
func (s *Service) MarkInputStored(ctx context.Context, tenantID, id string) error {
	_, err := s.st().update(ctx, tenantID, id, "SET inputStored = :t", "attribute_exists(pk)", nil,
		map[string]types.AttributeValue{":t": &types.AttributeValueMemberBOOL{Value: true}})
	if err != nil {
		return fmt.Errorf("mark input of operation %s stored: %w", id, err)
	}
	return nil
}

// Get returns an operation of the tenant. An operation whose client never
// uploaded its input before the deadline is FAILED here (the jobs function
// never sees it).
func (s *Service) Get(ctx context.Context, tenantID, id string) (Operation, error) {
	r, err := s.current(ctx, tenantID, id)
	if err != nil {
		return Operation{}, err
	}
	return r.view(), nil
}

// current reads an operation as Get returns it, as stored.
func (s *Service) current(ctx context.Context, tenantID, id string) (record, error) {
	if !ValidID(id) {
		return record{}, ErrNotFound
	}
	now := s.Clock.Now()
	r, err := s.st().get(ctx, tenantID, id, now)
	if err != nil {
		return record{}, err
	}
	if r.Status == Pending && !r.InputStored && r.InputDeadline > 0 && r.InputDeadline < now.UnixMilli() {
		failed, err := s.st().update(ctx, tenantID, id,
			"SET #status = :failed, #error = :error, endedAt = :now, updatedAt = :now, isRetryable = :t",
			"#status = :pending AND inputStored = :f",
			map[string]string{"#status": "status", "#error": "error"},
			map[string]types.AttributeValue{
				":failed": str(string(Failed)), ":pending": str(string(Pending)), ":now": str(clock.Stamp(now)),
				":t": &types.AttributeValueMemberBOOL{Value: true}, ":f": &types.AttributeValueMemberBOOL{Value: false},
				":error": errorValue(Error{Code: string(apierr.NotFound), Message: "the input file was not uploaded before the upload URL expired"}),
			})
		switch {
		case err == nil:
			return failed, nil
		case ddb.IsConditionFailed(err):
			// The job started meanwhile: read it again.
			if r, err = s.st().get(ctx, tenantID, id, now); err != nil {
				return record{}, err
			}
		default:
			return record{}, fmt.Errorf("fail operation %s without input: %w", id, err)
		}
	}
	return r, nil
}

func errorValue(e Error) types.AttributeValue {
	return &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{"code": str(e.Code), "message": str(e.Message)}}
}

// Lease is one run's hold on an operation: while it is valid no other run
// claims the operation, and every write of the run is conditional on it.
type Lease struct {
	TenantID string
	ID       string
	Owner    string
	Until    time.Time
	// Operation, Checkpoint and Result are as of the claim or the last
	// commit.
	Operation  Operation
	Checkpoint Checkpoint
	Result     Result
	// Fingerprint identifies the request that created the operation.
	Fingerprint string
	// Claims counts the runs that claimed the operation, this one included.
	Claims int
}

// Why a claim did not succeed.
var (
	// ErrFinished: the operation is DONE or FAILED already.
	ErrFinished = errors.New("operation finished")
)

// LeasedError is a claim that found the operation leased by another run.
type LeasedError struct {
	Owner string
	Until time.Time
}

func (e *LeasedError) Error() string {
	return fmt.Sprintf("operation leased by %s until %s", e.Owner, e.Until.Format(time.RFC3339Nano))
}

// Claim leases a PENDING or RUNNING operation for owner until now+d, when no
// other run holds a valid lease, and sets it RUNNING. It returns ErrNotFound
// for an unknown or expired operation, ErrFinished for a DONE or FAILED one
// and *LeasedError when another run holds it.
func (s *Service) Claim(ctx context.Context, tenantID, id, owner string, d time.Duration) (*Lease, error) {
	now := s.Clock.Now()
	until := now.Add(d)
	r, err := s.st().update(ctx, tenantID, id,
		"SET #status = :running, leaseOwner = :owner, leaseUntil = :until, updatedAt = :now, inputStored = :t ADD claims :one",
		"attribute_exists(pk) AND expiresAt > :nowSec AND (#status = :pending OR #status = :running) AND (attribute_not_exists(leaseUntil) OR leaseUntil < :nowMs)",
		map[string]string{"#status": "status"},
		map[string]types.AttributeValue{
			":running": str(string(Running)), ":pending": str(string(Pending)), ":owner": str(owner),
			":until": num(until.UnixMilli()), ":now": str(clock.Stamp(now)), ":nowSec": num(now.Unix()), ":nowMs": num(now.UnixMilli()),
			":one": num(1), ":t": &types.AttributeValueMemberBOOL{Value: true},
		})
	if err == nil {
		return r.lease(owner, until), nil
	}
	if !ddb.IsConditionFailed(err) {
		return nil, fmt.Errorf("claim operation %s: %w", id, err)
	}
	cur, err := s.st().get(ctx, tenantID, id, now)
	if err != nil {
		return nil, err
	}
	if cur.Status.Final() {
		return nil, ErrFinished
	}
	if cur.Status == Running && cur.LeaseOwner == owner {
		// This claim's own write, applied by an attempt whose answer was
		// lost before the SDK retried it (owners are random per run).
		return cur.lease(owner, time.UnixMilli(cur.LeaseUntil).UTC()), nil
	}
	return nil, &LeasedError{Owner: cur.LeaseOwner, Until: time.UnixMilli(cur.LeaseUntil).UTC()}
}

func (r *record) lease(owner string, until time.Time) *Lease {
	l := &Lease{TenantID: r.TenantID, ID: r.ID, Owner: owner, Until: until, Operation: r.view(), Checkpoint: r.Checkpoint, Fingerprint: r.Fingerprint, Claims: r.Claims}
	if r.Result != nil {
		l.Result = *l.Operation.Result
	}
	return l
}

// ItemsFailedError is a commit whose extra items' conditions failed (the
// indexes are those of the extra items); nothing of the commit was written.
type ItemsFailedError struct{ Indexes []int }

func (e *ItemsFailedError) Error() string {
	return fmt.Sprintf("commit: conditions of items %v failed", e.Indexes)
}

// Commit records a checkpoint and the result so far, together with extra
// writes (the rows the checkpoint covers) in one transaction, and extends
// the lease by d. It is conditional on the lease and on the previous
// checkpoint, so a run that lost its lease, or a stale run, writes nothing
// and gets ErrLeaseLost. When a condition of an extra item fails, nothing is
// written and the error is *ItemsFailedError.
func (s *Service) Commit(ctx context.Context, l *Lease, cp Checkpoint, res Result, d time.Duration, extra []types.TransactWriteItem) error {
	now := s.Clock.Now()
	until := now.Add(d)
	cpv, err := attributevalue.Marshal(cp)
	if err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	resv, err := attributevalue.Marshal(resultItem(res))
	if err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	// token tells this commit's write from any other (committed).
	token := newToken()
	expr := "SET cp = :cp, cpToken = :token, #result = :result, updatedAt = :now, leaseUntil = :until"
	cond := "leaseOwner = :owner AND #status = :running AND cp.parts = :parts"
	names := map[string]string{"#result": "result", "#status": "status"}
	values := map[string]types.AttributeValue{
		":cp": cpv, ":result": resv, ":now": str(clock.Stamp(now)), ":until": num(until.UnixMilli()),
		":owner": str(l.Owner), ":running": str(string(Running)), ":parts": num(int64(l.Checkpoint.Parts)),
		":token": str(token),
	}
	if len(extra) == 0 {
		_, err = s.st().update(ctx, l.TenantID, l.ID, expr, cond, names, values)
		if ddb.IsConditionFailed(err) && !s.committed(ctx, l, token) {
			return ErrLeaseLost
		}
		if ddb.IsConditionFailed(err) {
			err = nil
		}
		if err != nil {
			return fmt.Errorf("commit operation %s: %w", l.ID, err)
		}
	} else {
		items := append(append([]types.TransactWriteItem(nil), extra...), s.st().updateItem(l.TenantID, l.ID, expr, cond, names, values))
		if err := s.transact(ctx, items); err != nil {
			reasons := ddb.CanceledReasons(err)
			if len(reasons) == len(items) {
				if reasons[len(items)-1] == "ConditionalCheckFailed" {
					if s.committed(ctx, l, token) {
						l.Checkpoint, l.Result, l.Until = cp, res, until
						return nil
					}
					return ErrLeaseLost
				}
				var failed []int
				for i, r := range reasons[:len(extra)] {
					if r == "ConditionalCheckFailed" {
						failed = append(failed, i)
					}
				}
				if len(failed) > 0 {
					return &ItemsFailedError{Indexes: failed}
				}
			}
			return fmt.Errorf("commit operation %s: %w", l.ID, err)
		}
	}
	l.Checkpoint, l.Result, l.Until = cp, res, until
	return nil
}

// committed reports whether the write of the commit with token was
// applied, though its condition failed: the SDK retries a request whose
// answer was lost (a timeout, a connection reset), and the retry then
// finds the checkpoint the first attempt wrote. Each commit writes its own
// random token with its checkpoint, so only that commit's write matches.
// Any doubt (the read fails) counts as not applied.
func (s *Service) committed(ctx context.Context, l *Lease, token string) bool {
	r, err := s.st().get(ctx, l.TenantID, l.ID, s.Clock.Now())
	return err == nil && r.CpToken == token && r.LeaseOwner == l.Owner
}

// newToken returns a random commit token.
func newToken() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// transact runs a transaction, retrying while it lost a race with another
// transaction on the same items (it then wrote nothing).
func (s *Service) transact(ctx context.Context, items []types.TransactWriteItem) error {
	var err error
	for attempt := 0; attempt < 6; attempt++ {
		_, err = s.DB.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: items})
		if err == nil || !ddb.IsTransactionConflict(err) {
			return err
		}
		time.Sleep(time.Duration(20*(attempt+1)) * time.Millisecond)
	}
	return err
}

// Release gives the lease up so that the next run may claim at once.
func (s *Service) Release(ctx context.Context, l *Lease) error {
	_, err := s.st().update(ctx, l.TenantID, l.ID, "REMOVE leaseOwner, leaseUntil", "leaseOwner = :owner", nil,
		map[string]types.AttributeValue{":owner": str(l.Owner)})
	if ddb.IsConditionFailed(err) {
		return ErrLeaseLost
	}
	if err != nil {
		return fmt.Errorf("release operation %s: %w", l.ID, err)
	}
	return nil
}

// Finish sets the operation DONE with its final result and ends the lease.
func (s *Service) Finish(ctx context.Context, l *Lease, res Result) (Operation, error) {
	now := s.Clock.Now()
	resv, err := attributevalue.Marshal(resultItem(res))
	if err != nil {
		return Operation{}, fmt.Errorf("finish: %w", err)
	}
	r, err := s.st().update(ctx, l.TenantID, l.ID,
		"SET #status = :done, #result = :result, updatedAt = :now, endedAt = :now REMOVE leaseOwner, leaseUntil",
		"leaseOwner = :owner AND #status = :running",
		map[string]string{"#status": "status", "#result": "result"},
		map[string]types.AttributeValue{":done": str(string(Done)), ":running": str(string(Running)), ":result": resv, ":now": str(clock.Stamp(now)), ":owner": str(l.Owner)})
	if ddb.IsConditionFailed(err) {
		return Operation{}, ErrLeaseLost
	}
	if err != nil {
		return Operation{}, fmt.Errorf("finish operation %s: %w", l.ID, err)
	}
	return r.view(), nil
}

// Fail sets the operation FAILED with e and ends the lease. res, when not
// nil, replaces the result.
func (s *Service) Fail(ctx context.Context, l *Lease, e Error, retryable bool, res *Result) (Operation, error) {
	now := s.Clock.Now()
	expr := "SET #status = :failed, #error = :error, isRetryable = :retry, updatedAt = :now, endedAt = :now"
	values := map[string]types.AttributeValue{
		":failed": str(string(Failed)), ":running": str(string(Running)), ":error": errorValue(e),
		":retry": &types.AttributeValueMemberBOOL{Value: retryable}, ":now": str(clock.Stamp(now)), ":owner": str(l.Owner),
	}
	names := map[string]string{"#status": "status", "#error": "error"}
	if res != nil {
		resv, err := attributevalue.Marshal(resultItem(*res))
		if err != nil {
			return Operation{}, fmt.Errorf("fail: %w", err)
		}
		expr += ", #result = :result"
		names["#result"] = "result"
		values[":result"] = resv
	}
	r, err := s.st().update(ctx, l.TenantID, l.ID, expr+" REMOVE leaseOwner, leaseUntil", "leaseOwner = :owner AND #status = :running", names, values)
	if ddb.IsConditionFailed(err) {
		return Operation{}, ErrLeaseLost
	}
	if err != nil {
		return Operation{}, fmt.Errorf("fail operation %s: %w", l.ID, err)
	}
	return r.view(), nil
}

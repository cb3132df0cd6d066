package operation

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/loyalty-platform/platform/shared/platform/clock"
)

// What operators see of an operation, and how the local stack finds the
// operations a crash left unfinished. No HTTP route serves either: the
// jobs function answers operators' direct invocations (shared/platform/job
// Operate), and the local stack scans the table when it starts.

// StuckAfter is how long an unfinished operation that no run holds must
// have stayed unchanged to count as stuck. Lambda retries a failed
// invocation of the jobs function after about one and two minutes, each
// attempt runs at most its Timeout (5 minutes), and the failure queue then
// fails the operation once the last run's lease (45 seconds) ran out: by
// 15 minutes one of them has changed it, unless Lambda still holds its
// event in its queue (up to 6 hours while the function is throttled).
const StuckAfter = 15 * time.Minute

// State is an operation as an operator sees it: the API's view (with the
// rows applied past the checkpoint counted, as GET /operations/{id}
// answers) and the jobs function's bookkeeping, which the API does not
// show.
type State struct {
	Operation Operation `json:"operation"`
	// InputStored tells whether the job's input (or its start object) is
	// in the files bucket; a PENDING operation without it waits for the
	// client's upload.
	InputStored bool `json:"inputStored"`
	// Lease is the hold of the run that claimed the operation last; null
	// when no run holds it.
	Lease *LeaseState `json:"lease"`
	// Runs counts the runs that claimed the operation.
	Runs       int             `json:"runs"`
	Checkpoint CheckpointState `json:"checkpoint"`
	// IdleSeconds is how long ago the operation last changed.
	IdleSeconds int64 `json:"idleSeconds"`
	// Stuck is set when the operation is not DONE or FAILED, its input is
	// stored, no run holds a lease on it that has not run out, and it has
	// not changed for StuckAfter: nothing will move it but an operator.
	Stuck bool `json:"stuck"`
}

// LeaseState is a run's lease on an operation.
type LeaseState struct {
	Owner string `json:"owner"`
	Until string `json:"until"`
	// Live is set while the lease has not run out: its run may be working.
	Live bool `json:"live"`
}

// CheckpointState is how far the runs got, as their last checkpoint says.
type CheckpointState struct {
	Rows      int64 `json:"rows"`
	Offset    int64 `json:"offset"`
	InputSize int64 `json:"inputSize"`
	InputDone bool  `json:"inputDone"`
	Yielded   bool  `json:"yielded"`
}

// Inspect returns the state of an operation of the tenant for an operator.
// Like Get, it FAILS an operation whose client never uploaded its input
// before the deadline.
func (s *Service) Inspect(ctx context.Context, tenantID, id string) (State, error) {
	r, err := s.current(ctx, tenantID, id)
	if err != nil {
		return State{}, err
	}
	now := s.Clock.Now()
	st := State{
		Operation: r.view(), InputStored: r.InputStored, Runs: r.Claims,
		Checkpoint: CheckpointState{Rows: r.Checkpoint.Rows, Offset: r.Checkpoint.Offset, InputSize: r.Checkpoint.InputSize,
			InputDone: r.Checkpoint.InputDone, Yielded: r.Checkpoint.Yielded},
	}
	if !st.Operation.Status.Final() && st.Operation.Result != nil {
		res, err := s.Applied(ctx, tenantID, id, r.Checkpoint, *st.Operation.Result)
		if err != nil {
			return State{}, err
		}
		st.Operation.Result = &res
	}
	live := false
	if r.LeaseOwner != "" {
		until := time.UnixMilli(r.LeaseUntil).UTC()
		live = until.After(now)
		st.Lease = &LeaseState{Owner: r.LeaseOwner, Until: clock.Stamp(until), Live: live}
	}
	if updated, err := time.Parse(clock.Format, r.UpdatedAt); err == nil && now.After(updated) {
		st.IdleSeconds = int64(now.Sub(updated) / time.Second)
	}
	st.Stuck = !r.Status.Final() && r.InputStored && !live && time.Duration(st.IdleSeconds)*time.Second >= StuckAfter
	return st, nil
}

// Scanner is the Scan call of a DynamoDB client (*dynamodb.Client).
type Scanner interface {
	Scan(context.Context, *dynamodb.ScanInput, ...func(*dynamodb.Options)) (*dynamodb.ScanOutput, error)
}

// Unfinished is an operation that is PENDING or RUNNING, as
// ScanUnfinished finds it.
type Unfinished struct {
	TenantID string
	ID       string
	Status   Status
	// InputStored tells whether the job's input (or start object) is in
	// the files bucket.
	InputStored bool
	// LeaseUntil is when the lease of the run that holds it runs out; zero
	// when none does.
	LeaseUntil time.Time
}

// ScanUnfinished calls fn with every operation of table that is PENDING or
// RUNNING and has not expired, in no order, and stops at fn's first error.
// It reads the whole table: the functions never do (their policies allow
// no dynamodb:Scan, and no index lists operations by status); the local
// stack does when it starts, to find the jobs a crash left behind.
func ScanUnfinished(ctx context.Context, db Scanner, table string, now time.Time, fn func(Unfinished) error) error {
	in := &dynamodb.ScanInput{
		TableName:                aws.String(table),
		FilterExpression:         aws.String("sk = :op AND (#status = :pending OR #status = :running) AND expiresAt > :now"),
		ProjectionExpression:     aws.String("tenantId, id, #status, inputStored, leaseUntil"),
		ExpressionAttributeNames: map[string]string{"#status": "status"},
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":op": str(skOp), ":pending": str(string(Pending)), ":running": str(string(Running)), ":now": num(now.Unix()),
		},
	}
	for {
		out, err := db.Scan(ctx, in)
		if err != nil {
			return fmt.Errorf("scan unfinished operations: %w", err)
		}
		for _, item := range out.Items {
			var r record
			if err := attributevalue.UnmarshalMap(item, &r); err != nil {
				return fmt.Errorf("scan unfinished operations: %w", err)
			}
			u := Unfinished{TenantID: r.TenantID, ID: r.ID, Status: r.Status, InputStored: r.InputStored}
			if r.LeaseUntil > 0 {
				u.LeaseUntil = time.UnixMilli(r.LeaseUntil).UTC()
			}
			if err := fn(u); err != nil {
				return err
			}
		}
		if len(out.LastEvaluatedKey) == 0 {
			return nil
		}
		in.ExclusiveStartKey = out.LastEvaluatedKey
	}
}

package operation_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/loyalty-platform/platform/shared/domain/operation"
	"github.com/loyalty-platform/platform/shared/platform/ddb"
	ts "github.com/loyalty-platform/platform/shared/testkit"
)

// retriedDB sends every UpdateItem and TransactWriteItems twice and
// answers the second attempt, as the SDK does when the answer of an
// applied request is lost (a timeout, a connection reset) and it retries.
type retriedDB struct{ ddb.API }

func (d retriedDB) UpdateItem(ctx context.Context, in *dynamodb.UpdateItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error) {
	if _, err := d.API.UpdateItem(ctx, in, opts...); err != nil {
		return nil, err
	}
	return d.API.UpdateItem(ctx, in, opts...)
}

func (d retriedDB) TransactWriteItems(ctx context.Context, in *dynamodb.TransactWriteItemsInput, opts ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error) {
	if _, err := d.API.TransactWriteItems(ctx, in, opts...); err != nil {
		return nil, err
	}
	return d.API.TransactWriteItems(ctx, in, opts...)
}

// TestCommitRetriedAfterLostAnswer: a commit whose first attempt was
// applied and whose retry then fails its condition (the checkpoint moved
// on) is a success, not a lost lease, and so is a claim retried after its
// own write: a run keeps its operation. Another run's commit over it is
// still refused.
func TestCommitRetriedAfterLostAnswer(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	ctx := context.Background()
	real := h.Deps.Operations
	ops := *real
	ops.DB = retriedDB{API: real.DB}
	st, err := start(h, "bbbbbbbb-2222-4333-8444-555555555555", "fp")
	if err != nil {
		t.Fatal(err)
	}
	id := st.Operation.ID
	l, err := ops.Claim(ctx, h.Tenant.ID, id, "run-a", time.Minute)
	if err != nil || l.Claims != 1 || l.Operation.Status != operation.Running {
		t.Fatalf("claim = %+v, %v; want the lease of the first claim", l, err)
	}
	t.Run("Update", func(t *testing.T) {
		cp := l.Checkpoint
		cp.Rows, cp.Parts, cp.PartRuns = 10, 1, []int{1}
		if err := ops.Commit(ctx, l, cp, operation.Result{Total: 10, Imported: 10}, time.Minute, nil); err != nil {
			t.Fatalf("commit = %v, want nil", err)
		}
		if got, want := l.Checkpoint.Rows, int64(10); got != want {
			t.Errorf("lease checkpoint rows = %d, want %d", got, want)
		}
	})
	t.Run("Transaction", func(t *testing.T) {
		item := types.TransactWriteItem{Put: &types.Put{
			TableName: aws.String(h.Deps.Config.Tables.Operations),
			Item: map[string]types.AttributeValue{
				"pk": &types.AttributeValueMemberS{Value: h.Tenant.ID + "#TEST#" + id},
				"sk": &types.AttributeValueMemberS{Value: "ROW"},
			},
		}}
		cp := l.Checkpoint
		cp.Rows, cp.Parts, cp.PartRuns = 20, 2, []int{1, 1}
		if err := ops.Commit(ctx, l, cp, operation.Result{Total: 20, Imported: 20}, time.Minute, []types.TransactWriteItem{item}); err != nil {
			t.Fatalf("commit = %v, want nil", err)
		}
		got, _ := ops.Get(ctx, h.Tenant.ID, id)
		if got.Result == nil || got.Result.Imported != 20 {
			t.Fatalf("after commit = %+v", got.Result)
		}
	})
	t.Run("ErrLeaseLost", func(t *testing.T) {
		// Another run took the operation over: the first run's commit is
		// refused even though its checkpoint matches the stored one.
		h.Clock.Advance(2 * time.Minute)
		b, err := real.Claim(ctx, h.Tenant.ID, id, "run-b", time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		stale := *l
		if err := ops.Commit(ctx, &stale, b.Checkpoint, operation.Result{}, time.Minute, nil); !errors.Is(err, operation.ErrLeaseLost) {
			t.Fatalf("stale commit = %v, want ErrLeaseLost", err)
		}
	})
}

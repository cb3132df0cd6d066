package user

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/loyalty-platform/platform/shared/platform/clock"
	"github.com/loyalty-platform/platform/shared/platform/ddb"
)

// UpdateUser applies upd to the user record under cond, bumping updatedAt,
// its index key and the version, in one transaction with the items with
// (the actions the change records) when there are any. A failed condition
// is ErrConcurrentUpdate.
func (s *Service) UpdateUser(ctx context.Context, r Record, upd expression.UpdateBuilder, cond expression.ConditionBuilder, with ...types.TransactWriteItem) error {
	return s.UpdateUserAt(ctx, r, s.clock.Now(), upd, cond, with...)
}

// UpdateUserAt is UpdateUser with the time the change is stamped with.
func (s *Service) UpdateUserAt(ctx context.Context, r Record, at time.Time, upd expression.UpdateBuilder, cond expression.ConditionBuilder, with ...types.TransactWriteItem) error {
	now := clock.Stamp(at)
	upd = upd.Set(expression.Name("updatedAt"), expression.Value(now)).
		Set(expression.Name("gsi3sk"), expression.Value(now+"#"+r.ID)).
		Add(expression.Name("version"), expression.Value(1))
	cond = expression.Name("pk").AttributeExists().And(cond)
	expr, err := expression.NewBuilder().WithUpdate(upd).WithCondition(cond).Build()
	if err != nil {
		return fmt.Errorf("update user %s: %w", r.ID, err)
	}
	if len(with) > 0 {
		// The change and what it records commit together.
		items := append([]types.TransactWriteItem{{Update: &types.Update{
			TableName: aws.String(s.store.Users), Key: Key(r.PK, r.SK),
			UpdateExpression: expr.Update(), ConditionExpression: expr.Condition(),
			ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values(),
		}}}, with...)
		err = ddb.Transact(ctx, s.store.DB, items)
		if ddb.Failed(err, 0) || ddb.IsTransactionConflict(err) {
			return fmt.Errorf("update user %s: %w", r.ID, ErrConcurrentUpdate)
		}
		if err != nil {
			return fmt.Errorf("update user %s: %w", r.ID, err)
		}
		return nil
	}
	_, err = s.store.DB.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: aws.String(s.store.Users), Key: Key(r.PK, r.SK),
		UpdateExpression: expr.Update(), ConditionExpression: expr.Condition(),
		ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values(),
	})
	if ddb.IsConditionFailed(err) {
		return fmt.Errorf("update user %s: %w", r.ID, ErrConcurrentUpdate)
	}
	if err != nil {
		return fmt.Errorf("update user %s: %w", r.ID, err)
	}
	return nil
}

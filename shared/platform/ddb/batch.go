package ddb

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// BatchPut writes items to table with unconditional BatchWriteItem
// requests of 25 items, writers requests at once (see BatchWrite). It is
// the raw write rate that the benchmarks compare the imports with; the
// platform's own writes use BatchWrite (imports) or conditions and
// transactions.
func BatchPut(ctx context.Context, db API, table string, items []map[string]types.AttributeValue, writers int) error {
	groups := make([][]types.TransactWriteItem, len(items))
	for i, it := range items {
		groups[i] = []types.TransactWriteItem{{Put: &types.Put{TableName: &table, Item: it}}}
	}
	if err := BatchWrite(ctx, db, groups, writers); err != nil {
		return fmt.Errorf("batch write to %s: %w", table, err)
	}
	return nil
}

// MaxBatchWrite is the most writes one BatchWriteItem request holds.
const MaxBatchWrite = 25

// ErrGroupTooLarge is a group of BatchWrite holding more writes than one
// request does.
var ErrGroupTooLarge = errors.New("ddb: a group holds more than 25 writes")

// Batch is the writes of one BatchWriteItem request, by table.
type Batch map[string][]types.WriteRequest

// PackBatches packs groups of unconditional writes (each a Put or a
// Delete without a condition, to any table) into BatchWriteItem requests,
// never splitting a group between two requests: when DynamoDB refuses a
// request for a value (a ValidationException, nothing of the request
// written), none of a group's writes were made by it.
func PackBatches(groups [][]types.TransactWriteItem) ([]Batch, error) {
	var out []Batch
	var cur Batch
	n := 0
	for _, g := range groups {
		if len(g) > MaxBatchWrite {
			return nil, ErrGroupTooLarge
		}
		if len(g) == 0 {
			continue
		}
		if cur == nil || n+len(g) > MaxBatchWrite {
			cur, n = Batch{}, 0
			out = append(out, cur)
		}
		for _, w := range g {
			switch {
			case w.Put != nil && w.Put.ConditionExpression == nil:
				cur[*w.Put.TableName] = append(cur[*w.Put.TableName], types.WriteRequest{PutRequest: &types.PutRequest{Item: w.Put.Item}})
			case w.Delete != nil && w.Delete.ConditionExpression == nil:
				cur[*w.Delete.TableName] = append(cur[*w.Delete.TableName], types.WriteRequest{DeleteRequest: &types.DeleteRequest{Key: w.Delete.Key}})
			default:
				return nil, fmt.Errorf("ddb: batch write of a conditional or other write: %+v", w)
			}
		}
		n += len(g)
	}
	return out, nil
}

// WriteBatch makes the writes of b with BatchWriteItem, retrying (after a
// growing pause) the writes DynamoDB leaves unprocessed.
func WriteBatch(ctx context.Context, db API, b Batch) error {
	for in, wait := map[string][]types.WriteRequest(b), 10*time.Millisecond; len(in) > 0; wait = min(2*wait, time.Second) {
		out, err := db.BatchWriteItem(ctx, &dynamodb.BatchWriteItemInput{RequestItems: in})
		if err != nil {
			return fmt.Errorf("batch write: %w", err)
		}
		if in = out.UnprocessedItems; len(in) == 0 {
			return nil
		}
		// Unprocessed writes are throttled ones: back off.
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(wait):
		}
	}
	return nil
}

// BatchWrite writes groups of unconditional writes (see PackBatches),
// writers requests at once. Writes of other requests than a refused one
// may have been made; writing a group again writes the same items.
func BatchWrite(ctx context.Context, db API, groups [][]types.TransactWriteItem, writers int) error {
	reqs, err := PackBatches(groups)
	if err != nil {
		return err
	}
	var next atomic.Int64
	writers = max(1, min(writers, len(reqs)))
	errs := make([]error, writers)
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= len(reqs) {
					return
				}
				if errs[w] = WriteBatch(ctx, db, reqs[i]); errs[w] != nil {
					return
				}
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

package ddb

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// MaxBatchGet is the most keys one BatchGetItem reads.
const MaxBatchGet = 100

// BatchGet reads the items of ka.Keys from table with BatchGetItem, in
// calls of at most MaxBatchGet keys, sending the unprocessed keys again
// (after a short back-off) until none is left. ka's other fields
// (ConsistentRead, the projection) apply to every call. Missing items are
// absent from the result, whose order is DynamoDB's; the keys must be
// distinct (BatchGetItem refuses a repeated key).
func BatchGet(ctx context.Context, api API, table string, ka types.KeysAndAttributes) ([]Item, error) {
	var out []Item
	keys := ka.Keys
	for i := 0; i < len(keys); i += MaxBatchGet {
		ka.Keys = keys[i:min(i+MaxBatchGet, len(keys))]
		req := map[string]types.KeysAndAttributes{table: ka}
		for attempt := 0; len(req) > 0; attempt++ {
			if attempt > 0 {
				time.Sleep(time.Duration(min(attempt, 8)*25) * time.Millisecond)
			}
			res, err := api.BatchGetItem(ctx, &dynamodb.BatchGetItemInput{RequestItems: req})
			if err != nil {
				return nil, fmt.Errorf("batch get %s: %w", table, err)
			}
			out = append(out, res.Responses[table]...)
			req = res.UnprocessedKeys
		}
	}
	return out, nil
}

package ddb

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// BatchPut writes items to table with unconditional BatchWriteItem
// requests of 25 items, writers requests at once, retrying the items a
// request leaves unprocessed. It is the raw write rate that the
// benchmarks compare the imports with; the platform's own writes are
// conditional and never use it.
func BatchPut(ctx context.Context, db API, table string, items []map[string]types.AttributeValue, writers int) error {
	var next atomic.Int64
	errs := make([]error, writers)
	var wg sync.WaitGroup
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(25)) - 25
				if i >= len(items) {
					return
				}
				reqs := make([]types.WriteRequest, 0, 25)
				for _, it := range items[i:min(i+25, len(items))] {
					reqs = append(reqs, types.WriteRequest{PutRequest: &types.PutRequest{Item: it}})
				}
				in := map[string][]types.WriteRequest{table: reqs}
				for len(in) > 0 {
					out, err := db.BatchWriteItem(ctx, &dynamodb.BatchWriteItemInput{RequestItems: in})
					if err != nil {
						errs[w] = fmt.Errorf("batch write to %s: %w", table, err)
						return
					}
					in = out.UnprocessedItems
				}
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

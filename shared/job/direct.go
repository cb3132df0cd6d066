package job

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Direct rows. A row whose writes are puts that are safe to repeat
// (Row.Direct) is not written in its chunk's transaction: its puts are
// sent with BatchWriteItem (25 items a request, DirectWriters requests of
// the run at once), and only then is the chunk's marker committed (its
// transaction holds the marker, the fence check and the writes of the
// chunk's other rows). A crash between the two leaves the writes without
// the marker: the next run applies the chunk again, and the kind makes
// that harmless: its puts name items by keys derived from the operation
// and the row, so the same items are written again.
//
// The fence: the writes are sent after a consistent read of the chunk's
// fence (a later run that took the operation over is seen there, and the
// chunk stops), but not in a transaction with it. A run that is taken
// over while it sends them may still write them after the later run
// began: both runs write the same items (the same keys and values but
// timestamps).

// DirectWriters is how many requests of direct rows a run sends at once.
const DirectWriters = 8

// batchWriteSize is the most items of a BatchWriteItem request.
const batchWriteSize = 25

// putDirect writes the puts of the direct rows of ch in [lo, hi) with
// BatchWriteItem, without their conditions (their keys are the rows'
// own), retrying unprocessed items with a growing pause.
func (c *Committer) putDirect(ch *Chunk, lo, hi int) error {
	var reqs []map[string][]types.WriteRequest
	n := batchWriteSize
	for _, row := range ch.Rows[lo:hi] {
		for _, it := range row.Items {
			if !row.Direct {
				break
			}
			if it.Put == nil {
				return errors.New("job: a direct row holds a write that is not a put")
			}
			if n == batchWriteSize {
				reqs, n = append(reqs, map[string][]types.WriteRequest{}), 0
			}
			req := reqs[len(reqs)-1]
			req[*it.Put.TableName] = append(req[*it.Put.TableName], types.WriteRequest{PutRequest: &types.PutRequest{Item: it.Put.Item}})
			n++
		}
	}
	var wg sync.WaitGroup
	errs := make([]error, len(reqs))
	for i, req := range reqs {
		select {
		case c.writers <- struct{}{}:
		case <-c.ctx.Done():
			wg.Wait()
			return c.ctx.Err()
		}
		wg.Add(1)
		go func() {
			defer func() { <-c.writers; wg.Done() }()
			errs[i] = c.batchWrite(req)
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// batchWrite sends one BatchWriteItem request until every item of it is
// processed.
func (c *Committer) batchWrite(req map[string][]types.WriteRequest) error {
	pause := 10 * time.Millisecond
	for len(req) > 0 {
		out, err := c.r.svc.Ops.DB.BatchWriteItem(c.ctx, &dynamodb.BatchWriteItemInput{RequestItems: req})
		if err != nil {
			return fmt.Errorf("direct write: %w", err)
		}
		req = out.UnprocessedItems
		if len(req) == 0 {
			return nil
		}
		select {
		case <-time.After(pause):
		case <-c.ctx.Done():
			return c.ctx.Err()
		}
		pause = min(2*pause, time.Second)
	}
	return nil
}

// undoPuts deletes the items the puts of a direct row name (by pk and
// sk), for a row the database refused: requests of its chunk that did not
// hold the refused item may have written some of them before the chunk
// was split.
func (c *Committer) undoPuts(row Row) error {
	req := map[string][]types.WriteRequest{}
	for _, it := range row.Items {
		if p := it.Put; p != nil && p.Item["pk"] != nil && p.Item["sk"] != nil {
			k := map[string]types.AttributeValue{"pk": p.Item["pk"], "sk": p.Item["sk"]}
			req[*p.TableName] = append(req[*p.TableName], types.WriteRequest{DeleteRequest: &types.DeleteRequest{Key: k}})
		}
	}
	if len(req) == 0 {
		return nil
	}
	return c.batchWrite(req)
}

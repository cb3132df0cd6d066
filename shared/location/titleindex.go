package location

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// TitleIndexLimit is the most locations a tenant may have for an import
// run to hold their titles in memory (about 100 bytes each); an import of
// a larger tenant looks each title up in the table.
const TitleIndexLimit = 200_000

// TitleIndex is the titles of a tenant's locations (ignoring case), read
// once by an import run so that its rows' title lookups need no read of
// the table. The run keeps it up to date with Note after each commit; it
// does not see locations that other requests create or rename while the
// run goes on. It is safe for concurrent use.
type TitleIndex struct {
	mu  sync.RWMutex
	ids map[string][]string // lower-cased title -> location ids
}

// LoadTitleIndex reads the titles of the tenant's locations (consistently,
// the summary shards in parallel). It returns nil when the tenant has more
// than limit locations.
func (s *Service) LoadTitleIndex(ctx context.Context, tenantID string, limit int) (*TitleIndex, error) {
	st := s.st()
	shards := make([][]string, summaryShards)
	errs := make([]error, summaryShards)
	var wg sync.WaitGroup
	for n := range shards {
		wg.Add(1)
		go func() {
			defer wg.Done()
			shards[n], errs[n] = st.summaryKeys(ctx, shardPK(tenantID, n), limit+1)
		}()
	}
	wg.Wait()
	total := 0
	for n := range shards {
		if errs[n] != nil {
			return nil, errs[n]
		}
		total += len(shards[n])
	}
	if total > limit {
		return nil, nil
	}
	ix := &TitleIndex{ids: make(map[string][]string, total)}
	for _, keys := range shards {
		for _, sk := range keys {
			t := titleOfIndexSK(sk)
			ix.ids[t] = append(ix.ids[t], idOfIndexSK(sk))
		}
	}
	return ix, nil
}

// summaryKeys reads the sort keys of a summary shard, at most max of them.
func (s *store) summaryKeys(ctx context.Context, pk string, max int) ([]string, error) {
	in := &dynamodb.QueryInput{
		TableName:                 aws.String(s.table),
		KeyConditionExpression:    aws.String("pk = :pk"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":pk": str(pk)},
		ProjectionExpression:      aws.String("sk"),
		ConsistentRead:            aws.Bool(true),
	}
	var out []string
	for {
		page, err := s.db.Query(ctx, in)
		if err != nil {
			return nil, fmt.Errorf("read location titles: %w", err)
		}
		for _, it := range page.Items {
			if v, ok := it["sk"].(*types.AttributeValueMemberS); ok {
				out = append(out, v.Value)
			}
		}
		if len(page.LastEvaluatedKey) == 0 || len(out) >= max {
			return out, nil
		}
		in.ExclusiveStartKey = page.LastEvaluatedKey
	}
}

// lookup returns the ids of the locations titled title (ignoring case).
func (ix *TitleIndex) lookup(title string) []string {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	return append([]string(nil), ix.ids[strings.ToLower(strings.TrimSpace(title))]...)
}

// Note records a committed write: a new location's title, or an updated
// one's new title.
func (ix *TitleIndex) Note(w ImportWrite) {
	if len(w.Items) == 0 {
		return
	}
	id, next := w.Location.ID, strings.ToLower(w.Location.Title)
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if !w.Created {
		prev := strings.ToLower(w.PrevTitle)
		if prev == next {
			return
		}
		ids := ix.ids[prev]
		for i, v := range ids {
			if v == id {
				ids = append(ids[:i:i], ids[i+1:]...)
				break
			}
		}
		if len(ids) == 0 {
			delete(ix.ids, prev)
		} else {
			ix.ids[prev] = ids
		}
	}
	ix.ids[next] = append(ix.ids[next], id)
}

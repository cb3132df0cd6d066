package actionlog_test

import (
	"context"
	"net/url"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/loyalty-platform/platform/shared/domain/action"
	"github.com/loyalty-platform/platform/shared/platform/ddb"
	ts "github.com/loyalty-platform/platform/shared/testkit"
)

// recordingDB is a ddb.API decorator that records every call (method, and
// the input of each Query) and counts the items the Queries returned.
type recordingDB struct {
	ddb.API
	mu      sync.Mutex
	calls   []string
	queries []dynamodb.QueryInput
	items   int
	// queryTime is the time spent in Queries.
	queryTime time.Duration
}

func (r *recordingDB) note(method string) {
	r.mu.Lock()
	r.calls = append(r.calls, method)
	r.mu.Unlock()
}

// took returns the time spent in Queries since the last reset.
func (r *recordingDB) took() time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.queryTime
}

// reset forgets what was recorded and returns it.
func (r *recordingDB) reset() (calls []string, queries []dynamodb.QueryInput, items int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	calls, queries, items = r.calls, r.queries, r.items
	r.calls, r.queries, r.items, r.queryTime = nil, nil, 0, 0
	return calls, queries, items
}

func (r *recordingDB) Query(ctx context.Context, in *dynamodb.QueryInput, opts ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error) {
	start := time.Now()
	out, err := r.API.Query(ctx, in, opts...)
	took := time.Since(start)
	r.mu.Lock()
	r.queryTime += took
	r.calls = append(r.calls, "Query")
	r.queries = append(r.queries, *in)
	if out != nil {
		r.items += len(out.Items)
	}
	r.mu.Unlock()
	return out, err
}

func (r *recordingDB) GetItem(ctx context.Context, in *dynamodb.GetItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error) {
	r.note("GetItem")
	return r.API.GetItem(ctx, in, opts...)
}

func (r *recordingDB) PutItem(ctx context.Context, in *dynamodb.PutItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error) {
	r.note("PutItem")
	return r.API.PutItem(ctx, in, opts...)
}

func (r *recordingDB) UpdateItem(ctx context.Context, in *dynamodb.UpdateItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error) {
	r.note("UpdateItem")
	return r.API.UpdateItem(ctx, in, opts...)
}

func (r *recordingDB) DeleteItem(ctx context.Context, in *dynamodb.DeleteItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.DeleteItemOutput, error) {
	r.note("DeleteItem")
	return r.API.DeleteItem(ctx, in, opts...)
}

func (r *recordingDB) BatchGetItem(ctx context.Context, in *dynamodb.BatchGetItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.BatchGetItemOutput, error) {
	r.note("BatchGetItem")
	return r.API.BatchGetItem(ctx, in, opts...)
}

func (r *recordingDB) BatchWriteItem(ctx context.Context, in *dynamodb.BatchWriteItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.BatchWriteItemOutput, error) {
	r.note("BatchWriteItem")
	return r.API.BatchWriteItem(ctx, in, opts...)
}

func (r *recordingDB) TransactWriteItems(ctx context.Context, in *dynamodb.TransactWriteItemsInput, opts ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error) {
	r.note("TransactWriteItems")
	return r.API.TransactWriteItems(ctx, in, opts...)
}

// recordListReads puts a recordingDB under the actions log's recorders
// (the actions function's, which GET /actions reads through, and the jobs
// function's, which the export reads through) until the test ends.
func recordListReads(tb testing.TB, h *ts.Harness) *recordingDB {
	recs := []*action.Recorder{h.Deps.Fn.Actions.ActionLog.Actions, h.Deps.Fn.Jobs.ActionLog.Actions}
	r := &recordingDB{API: recs[0].DB}
	for _, rec := range recs {
		rec.DB = r
	}
	tb.Cleanup(func() {
		for _, rec := range recs {
			rec.DB = r.API
		}
	})
	return r
}

// pkOf returns the :pk value of a key condition.
func pkOf(in dynamodb.QueryInput) string {
	for _, v := range in.ExpressionAttributeValues {
		if s, ok := v.(*types.AttributeValueMemberS); ok && strings.Contains(s.Value, "#") {
			return s.Value
		}
	}
	return ""
}

// TestListsQueryTheIndexes: the tenant list (every page of it), the user's
// and the location's lists and the export read the Actions table only with
// Queries of their index, newest first, keyed by the tenant: the tenant
// list one Query per write shard of gsi3, never a Scan. The recorder's
// client is a ddb.API, which has no Scan at all; the decorator records any
// other call.
func TestListsQueryTheIndexes(t *testing.T) {
	t.Parallel()
	if _, ok := reflect.TypeFor[ddb.API]().MethodByName("Scan"); ok {
		t.Fatal("ddb.API has a Scan method: check that no list uses it")
	}
	h := ts.New(t)
	uid := h.AdminUser(t, "Quinn", "Query")
	base := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	l1 := place(t, h, "Query place", h.Admin())
	seed(t, h, 40, base, uid, l1)
	db := recordListReads(t, h)
	var shards []string
	for i := 0; i < action.Shards; i++ {
		shards = append(shards, h.Tenant.ID+"#ACTIONS#"+strconv.Itoa(i))
	}
	// check checks the reads since the last check and returns the queries.
	check := func(t *testing.T, index string, wantPKs []string) []dynamodb.QueryInput {
		t.Helper()
		calls, queries, items := db.reset()
		for _, c := range calls {
			if c != "Query" {
				t.Errorf("the list called %s; want Query only (calls %v)", c, calls)
			}
		}
		var pks []string
		for _, q := range queries {
			if aws.ToString(q.IndexName) != index || q.ScanIndexForward == nil || *q.ScanIndexForward {
				t.Errorf("query of index %q, ScanIndexForward %v; want %s newest first", aws.ToString(q.IndexName), q.ScanIndexForward, index)
			}
			if !strings.HasPrefix(aws.ToString(q.KeyConditionExpression), index+"pk = :pk") {
				t.Errorf("key condition %q; want %spk = :pk first", aws.ToString(q.KeyConditionExpression), index)
			}
			pks = append(pks, pkOf(q))
		}
		slices.Sort(pks)
		pks = slices.Compact(pks)
		if !slices.Equal(pks, wantPKs) {
			t.Errorf("queried partitions %v; want %v", pks, wantPKs)
		}
		t.Logf("%d queries, %d items read", len(queries), items)
		return queries
	}
	t.Run("TenantList", func(t *testing.T) {
		m := h.Do("GET", "/actions?limit=10", nil, h.Admin()).Expect(t, 200, "").Map(t)
		if n := len(m["actions"].([]any)); n != 10 {
			t.Fatalf("%d actions, want 10", n)
		}
		check(t, "gsi3", shards)
		next := m["page"].(map[string]any)["nextKey"].(string)
		h.Do("GET", "/actions?limit=10&startKey="+url.QueryEscape(next), nil, h.Admin()).Expect(t, 200, "")
		check(t, "gsi3", shards)
	})
	t.Run("TenantListByTime", func(t *testing.T) {
		h.Do("GET", "/actions?when.timestamp.gt="+base.Add(-10*time.Second).Format(time.RFC3339), nil, h.Admin()).Expect(t, 200, "")
		for _, q := range check(t, "gsi3", shards) {
			if !strings.Contains(aws.ToString(q.KeyConditionExpression), "gsi3sk") {
				t.Errorf("a time filter is not a key condition: %q", aws.ToString(q.KeyConditionExpression))
			}
		}
	})
	t.Run("UserList", func(t *testing.T) {
		h.Do("GET", "/users/"+uid+"/actions?limit=5", nil, h.Admin()).Expect(t, 200, "")
		check(t, "gsi1", []string{h.Tenant.ID + "#USER#" + uid})
	})
	t.Run("LocationList", func(t *testing.T) {
		h.Do("GET", "/locations/"+l1+"/actions?limit=5", nil, h.Admin()).Expect(t, 200, "")
		check(t, "gsi2", []string{h.Tenant.ID + "#LOCATION#" + l1})
		h.Do("GET", "/actions?locationId="+l1+"&limit=5", nil, h.Admin()).Expect(t, 200, "")
		check(t, "gsi2", []string{h.Tenant.ID + "#LOCATION#" + l1})
	})
	t.Run("Export", func(t *testing.T) {
		c := h.CaptureS3("jobs")
		op := startExport(t, h, map[string]any{"from": "2026-01-01T00:00:00Z", "to": "2027-01-01T00:00:00Z", "types": []string{"A_ONE", "A_TWO"}})
		if err := h.Deps.Jobs.HandleS3(context.Background(), c.Next(t)); err != nil {
			t.Fatal(err)
		}
		got := h.Do("GET", "/operations/"+op["_id"].(string), nil, h.Admin()).Expect(t, 200, "").Map(t)
		if rows := exportFile(t, h, got); len(rows) != 41 {
			t.Errorf("%d rows exported, want 40 and the header", len(rows)-1)
		}
		check(t, "gsi3", shards)
	})
}

// TestTenantListReadsAboutAPage: a page of the tenant-wide list reads
// about twice its size from the write shards together, not a page from
// each shard (8 times the page) that the merge then drops.
func TestTenantListReadsAboutAPage(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	uid := h.AdminUser(t, "Rhea", "Reads")
	seed(t, h, 800, time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC), uid, "l1")
	db := recordListReads(t, h)
	const limit = 100
	var pages, reads int
	path := "/actions?limit=100"
	for pages < 3 {
		m := h.Do("GET", path, nil, h.Admin()).Expect(t, 200, "").Map(t)
		if n := len(m["actions"].([]any)); n != limit {
			t.Fatalf("page %d has %d actions, want %d", pages+1, n, limit)
		}
		_, _, items := db.reset()
		reads += items
		pages++
		path = "/actions?limit=100&startKey=" + url.QueryEscape(m["page"].(map[string]any)["nextKey"].(string))
	}
	got := float64(reads) / float64(pages*limit)
	t.Logf("read %.2f items per action listed", got)
	if want := 2.5; got > want {
		t.Errorf("read %.2f items per action listed, want at most %.1f", got, want)
	}
}

package ddb_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/loyalty-platform/platform/shared/platform/ddb"
)

// TestBatchGet reads more keys than one BatchGetItem takes: every stored
// item comes back once, missing ones are absent, and the projection
// applies to every call.
func TestBatchGet(t *testing.T) {
	t.Parallel()
	p := newPartition(t)
	var keys []ddb.Item
	for i := range 250 {
		id := fmt.Sprintf("%03d", i)
		if i%5 != 0 { // every fifth key names no item
			p.store(p.thing(id, "Thing "+id, 1))
		}
		keys = append(keys, p.key(id))
	}
	items, err := ddb.BatchGet(context.Background(), p.db, p.table, types.KeysAndAttributes{
		Keys: keys, ConsistentRead: aws.Bool(true),
		ProjectionExpression: aws.String("sk"),
	})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, it := range items {
		sk := it["sk"].(*types.AttributeValueMemberS).Value
		if seen[sk] {
			t.Errorf("%s read twice", sk)
		}
		seen[sk] = true
		if _, ok := it["title"]; ok {
			t.Errorf("%s has title: the projection was not applied", sk)
		}
	}
	if got, want := len(seen), 200; got != want {
		t.Errorf("read %d items, want %d", got, want)
	}
}

package ddb_test

import (
	"errors"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/loyalty-platform/platform/shared/platform/ddb"
)

func put(table, pk string) types.TransactWriteItem {
	return types.TransactWriteItem{Put: &types.Put{TableName: aws.String(table), Item: ddb.Item{"pk": &types.AttributeValueMemberS{Value: pk}}}}
}

func group(n int, table string) []types.TransactWriteItem {
	g := make([]types.TransactWriteItem, n)
	for i := range g {
		g[i] = put(table, "k")
	}
	return g
}

// TestPackBatches: groups are packed into requests of at most 25 writes,
// in order, a group never split; conditional writes and groups larger
// than a request are refused.
func TestPackBatches(t *testing.T) {
	del := types.TransactWriteItem{Delete: &types.Delete{TableName: aws.String("B"), Key: ddb.Item{"pk": &types.AttributeValueMemberS{Value: "d"}}}}
	cond := put("A", "c")
	cond.Put.ConditionExpression = aws.String("attribute_not_exists(pk)")
	cases := []struct {
		name   string
		groups [][]types.TransactWriteItem
		// sizes are the writes of each request, by table.
		sizes   []map[string]int
		wantErr bool
	}{
		{"Empty", nil, nil, false},
		{"PairsFillTwentyFour", [][]types.TransactWriteItem{
			group(2, "A"), group(2, "A"), group(2, "A"), group(2, "A"), group(2, "A"), group(2, "A"),
			group(2, "A"), group(2, "A"), group(2, "A"), group(2, "A"), group(2, "A"), group(2, "A"), group(2, "A"),
		}, []map[string]int{{"A": 24}, {"A": 2}}, false},
		{"GroupNeverSplit", [][]types.TransactWriteItem{group(20, "A"), group(6, "A"), group(5, "A")}, []map[string]int{{"A": 20}, {"A": 11}}, false},
		{"TablesAndDeletes", [][]types.TransactWriteItem{{put("A", "1"), del}, group(3, "B")}, []map[string]int{{"A": 1, "B": 4}}, false},
		{"EmptyGroupSkipped", [][]types.TransactWriteItem{{}, group(1, "A")}, []map[string]int{{"A": 1}}, false},
		{"ErrGroupTooLarge", [][]types.TransactWriteItem{group(26, "A")}, nil, true},
		{"ConditionalRefused", [][]types.TransactWriteItem{{cond}}, nil, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := ddb.PackBatches(c.groups)
			if (err != nil) != c.wantErr {
				t.Fatalf("err = %v, want error %v", err, c.wantErr)
			}
			if c.name == "ErrGroupTooLarge" && !errors.Is(err, ddb.ErrGroupTooLarge) {
				t.Fatalf("err = %v, want ErrGroupTooLarge", err)
			}
			if len(got) != len(c.sizes) {
				t.Fatalf("requests = %d, want %d", len(got), len(c.sizes))
			}
			for i, b := range got {
				for table, want := range c.sizes[i] {
					if n := len(b[table]); n != want {
						t.Errorf("request %d, table %s: %d writes, want %d", i, table, n, want)
					}
				}
				if len(b) != len(c.sizes[i]) {
					t.Errorf("request %d: tables %d, want %d", i, len(b), len(c.sizes[i]))
				}
			}
		})
	}
}

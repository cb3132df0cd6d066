package ddb

import (
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

func s(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }

func k(pk, sk string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{"pk": s(pk), "sk": s(sk)}
}

func live(pk string) types.TransactWriteItem {
	return types.TransactWriteItem{ConditionCheck: &types.ConditionCheck{
		TableName: aws.String("Users"), Key: k(pk, "USER"),
		ConditionExpression:       aws.String("attribute_exists(pk) AND deleted = :false"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":false": &types.AttributeValueMemberBOOL{Value: false}},
	}}
}

func balance(pk string) types.TransactWriteItem {
	return types.TransactWriteItem{Update: &types.Update{
		TableName: aws.String("Users"), Key: k(pk, "USER"), UpdateExpression: aws.String("ADD balance :d"),
		ConditionExpression: aws.String("attribute_exists(pk) AND deleted = :false AND balance >= :need"),
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":false": &types.AttributeValueMemberBOOL{Value: false}, ":d": &types.AttributeValueMemberN{Value: "-1"}, ":need": &types.AttributeValueMemberN{Value: "1"},
		},
	}}
}

func member(pk string) types.TransactWriteItem {
	return types.TransactWriteItem{ConditionCheck: &types.ConditionCheck{
		TableName: aws.String("Users"), Key: k(pk, "USER"),
		ConditionExpression:       aws.String("#st = :active"),
		ExpressionAttributeNames:  map[string]string{"#st": "state"},
		ExpressionAttributeValues: map[string]types.AttributeValue{":active": s("ACTIVE")},
	}}
}

func collide(pk string) types.TransactWriteItem {
	return types.TransactWriteItem{ConditionCheck: &types.ConditionCheck{
		TableName: aws.String("Users"), Key: k(pk, "USER"), ConditionExpression: aws.String("balance >= :need"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":need": &types.AttributeValueMemberN{Value: "5"}},
	}}
}

func put(pk string) types.TransactWriteItem {
	return types.TransactWriteItem{Put: &types.Put{TableName: aws.String("Users"), Item: k(pk, "USER")}}
}

// TestTxOneWritePerItem checks that a transaction never names an item
// twice: checks fold into the other item of their key, two writes are an
// error, other items are left alone.
func TestTxOneWritePerItem(t *testing.T) {
	tests := []struct {
		name      string
		items     []types.TransactWriteItem
		wantLen   int
		wantAt    []int
		wantCond  string
		wantNames map[string]string
		wantErr   string
	}{
		{name: "SameCheckTwice", items: []types.TransactWriteItem{live("u1"), live("u1")}, wantLen: 1, wantAt: []int{0, 0},
			wantCond: "attribute_exists(pk) AND deleted = :false"},
		{name: "ChecksOfTwoItems", items: []types.TransactWriteItem{live("u1"), live("u2")}, wantLen: 2, wantAt: []int{0, 1},
			wantCond: "attribute_exists(pk) AND deleted = :false"},
		{name: "CheckHeldByTheWrite", items: []types.TransactWriteItem{balance("u1"), live("u1")}, wantLen: 1, wantAt: []int{0, 0},
			wantCond: "attribute_exists(pk) AND deleted = :false AND balance >= :need"},
		{name: "WriteAfterCheck", items: []types.TransactWriteItem{live("u1"), balance("u1")}, wantLen: 1, wantAt: []int{0, 0},
			wantCond: "attribute_exists(pk) AND deleted = :false AND balance >= :need"},
		{name: "OtherCheckIsAnded", items: []types.TransactWriteItem{balance("u1"), member("u1")}, wantLen: 1, wantAt: []int{0, 0},
			wantCond:  "(attribute_exists(pk) AND deleted = :false AND balance >= :need) AND (#st = :active)",
			wantNames: map[string]string{"#st": "state"}},
		{name: "CollidingPlaceholdersAreRenamed", items: []types.TransactWriteItem{balance("u1"), collide("u1")}, wantLen: 1, wantAt: []int{0, 0},
			wantCond: "(attribute_exists(pk) AND deleted = :false AND balance >= :need) AND (balance >= :need_f1)"},
		{name: "TwoWrites", items: []types.TransactWriteItem{balance("u1"), put("u1")}, wantLen: 1, wantAt: []int{0, 0},
			wantErr: "writes Users"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tx := &Tx{}
			var at []int
			for _, it := range tc.items {
				at = append(at, tx.Add("test", it))
			}
			if got := tx.Len(); got != tc.wantLen {
				t.Fatalf("len = %d, want %d", got, tc.wantLen)
			}
			for i := range at {
				if at[i] != tc.wantAt[i] {
					t.Errorf("index of item %d = %d, want %d", i, at[i], tc.wantAt[i])
				}
			}
			err := tx.Err()
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Run = %v, want an error with %q", err, tc.wantErr)
				}
				return
			}
			first := tx.Items()[0]
			cond, names, _ := target(&first)
			if got := aws.ToString(*cond); got != tc.wantCond {
				t.Errorf("condition = %q, want %q", got, tc.wantCond)
			}
			for k, v := range tc.wantNames {
				if (*names)[k] != v {
					t.Errorf("names = %v, want %s = %s", *names, k, v)
				}
			}
		})
	}
	t.Run("FoldingCopies", func(t *testing.T) {
		b := balance("u1")
		tx := &Tx{}
		tx.Add("a", b)
		tx.Add("b", member("u1"))
		if got := aws.ToString(b.Update.ConditionExpression); strings.Contains(got, "#st") {
			t.Errorf("the caller's item changed: %q", got)
		}
	})
	t.Run("MergeKeepsState", func(t *testing.T) {
		tx := &Tx{}
		key := ItemKey(put("u1"))
		tx.Add("user", live("u1"))
		n := 0
		for range 3 {
			at, err := tx.Merge("award", key, func(prev any) (types.TransactWriteItem, any, error) {
				if n > 0 && prev != n {
					t.Errorf("merge %d got state %v", n, prev)
				}
				n++
				return put("u1"), n, nil
			})
			if err != nil || at != 0 {
				t.Fatalf("merge = %d, %v", at, err)
			}
		}
		if tx.Len() != 1 || aws.ToString(tx.Items()[0].Put.ConditionExpression) != "attribute_exists(pk) AND deleted = :false" {
			t.Errorf("items = %+v (%q): the check must fold into the merged write", tx.Items(), aws.ToString(tx.Items()[0].Put.ConditionExpression))
		}
	})
}

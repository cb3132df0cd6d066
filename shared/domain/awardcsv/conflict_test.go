package awardcsv_test

import (
	"context"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/loyalty-platform/platform/shared/platform/ddb"
	ts "github.com/loyalty-platform/platform/shared/testkit"
)

// interferingDB changes an award (as a concurrent grant would) just before
// each of the first `times` transactions that write it.
type interferingDB struct {
	ddb.API
	h         *ts.Harness
	key       map[string]types.AttributeValue
	times     int
	interfere int
}

func (d *interferingDB) TransactWriteItems(ctx context.Context, in *dynamodb.TransactWriteItemsInput, opts ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error) {
	for _, it := range in.TransactItems {
		if it.Update == nil || d.interfere >= d.times {
			continue
		}
		pk, _ := it.Update.Key["pk"].(*types.AttributeValueMemberS)
		sk, _ := it.Update.Key["sk"].(*types.AttributeValueMemberS)
		if pk != nil && sk != nil && pk.Value == d.key["pk"].(*types.AttributeValueMemberS).Value && sk.Value == d.key["sk"].(*types.AttributeValueMemberS).Value {
			d.interfere++
			_, err := d.API.UpdateItem(ctx, &dynamodb.UpdateItemInput{
				TableName: aws.String(d.h.Deps.Config.Tables.Loyalty), Key: d.key,
				UpdateExpression:          aws.String("SET available = available + :one"),
				ExpressionAttributeValues: map[string]types.AttributeValue{":one": &types.AttributeValueMemberN{Value: "1"}},
			})
			if err != nil {
				return nil, err
			}
		}
	}
	return d.API.TransactWriteItems(ctx, in, opts...)
}

// TestImportAwardChangedDuringImport: an award that changes between the
// row's read and its commit is read again and the row granted on top of
// the change; an award that keeps changing fails its row after two
// retries ("import the row again"), and the other rows of its transaction
// are granted.
func TestImportAwardChangedDuringImport(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		times int
		// result and error of the contested row, and the award after.
		result, err string
		want        int
	}{
		{"ChangedOnce", 1, "ok", "", 5 + 1 + 3},
		{"ChangedTwice", 2, "ok", "", 5 + 2 + 3},
		{"KeepsChanging", 3, "fail", "the award changed while the row was imported; import the row again", 5 + 3},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			h := ts.New(t)
			capture := h.CaptureS3("jobs")
			a := newPerk(t, h, map[string]any{"points": pointsOf(0, 100)})
			us := users(t, h, 3)
			u := us[0]
			h.Do("POST", "/perks/"+a+"/awards", map[string]any{"userId": u, "points": 5}, h.Admin()).Expect(t, 200, "")
			ops := h.Deps.Operations
			db := &interferingDB{API: ops.DB, h: h, times: c.times, key: map[string]types.AttributeValue{
				"pk": &types.AttributeValueMemberS{Value: h.Tenant.ID + "#USER#" + u},
				"sk": &types.AttributeValueMemberS{Value: "AWARD#" + a},
			}}
			ops.DB = db
			defer func() { ops.DB = db.API }()
			file := csvOf([]string{"user_id", "perk_id", "points"}, []string{us[1], a, "1"}, []string{u, a, "3"}, []string{us[2], a, "2"})
			id, ev := startCaptured(t, h, capture, "dryRun=false", file)
			if err := h.Deps.Jobs.HandleS3(context.Background(), ev); err != nil {
				t.Fatal(err)
			}
			op := h.Do("GET", "/operations/"+id, nil, h.Admin()).Expect(t, 200, "").Map(t)
			wantErrs := 0
			if c.result == "fail" {
				wantErrs = 1
			}
			if op["status"] != "DONE" || counts(op) != [4]int{3, 3 - wantErrs, 0, wantErrs} {
				t.Fatalf("operation = %v", op)
			}
			res := results(h, op)
			if got := column(t, res, "result"); strings.Join(got, ",") != "ok,"+c.result+",ok" {
				t.Fatalf("results = %v", got)
			}
			if got := column(t, res, "error")[1]; got != c.err {
				t.Fatalf("error = %q, want %q", got, c.err)
			}
			if db.interfere != c.times {
				t.Fatalf("interfered %d times, want %d", db.interfere, c.times)
			}
			if got := awards(t, h, u)[a]; got != c.want {
				t.Fatalf("award = %d, want %d", got, c.want)
			}
			if got := awards(t, h, us[1])[a] + awards(t, h, us[2])[a]; got != 3 {
				t.Fatalf("the other rows' awards = %d, want 1 + 2", got)
			}
		})
	}
}

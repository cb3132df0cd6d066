package awardcsv_test

import (
	"context"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"
	ts "github.com/loyalty-platform/platform/shared/testkit"
)

// TestRowRefusedByTheDatabase: when DynamoDB refuses the grant of one row
// (a ValidationException at the write), the import splits the row's chunk
// until that row is alone, fails it in the results file with a short
// reason (never DynamoDB's own text), grants every other row, and the
// operation is DONE.
func TestRowRefusedByTheDatabase(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	c := h.CaptureS3("jobs")
	g := newGrid(t, h, 10, 6, 0) // 60 rows, each award once
	const bad = 24               // the row refused
	badUser, badPerk, _ := g.row(bad)
	jobs := h.Deps.Jobs
	jobs.WriteChunk = func(_ context.Context, items []types.TransactWriteItem) error {
		for _, it := range items {
			var vals []types.AttributeValue
			if it.Update != nil {
				for _, v := range it.Update.Key {
					vals = append(vals, v)
				}
				for _, v := range it.Update.ExpressionAttributeValues {
					vals = append(vals, v)
				}
			}
			if it.Put != nil {
				for _, v := range it.Put.Item {
					vals = append(vals, v)
				}
			}
			var all strings.Builder
			for _, v := range vals {
				if s, ok := v.(*types.AttributeValueMemberS); ok {
					all.WriteString(s.Value + " ")
				}
			}
			if strings.Contains(all.String(), badUser) && strings.Contains(all.String(), badPerk) {
				return &smithy.GenericAPIError{Code: "ValidationException", Message: "One or more parameter values were invalid: an empty string"}
			}
		}
		return nil
	}
	defer func() { jobs.WriteChunk = nil }()
	id, ev := startCaptured(t, h, c, "dryRun=false", g.file())
	if err := jobs.HandleS3(context.Background(), ev); err != nil {
		t.Fatal(err)
	}
	op := h.Do("GET", "/operations/"+id, nil, h.Admin()).Expect(t, 200, "").Map(t)
	n := g.rows()
	if got, want := counts(op), [4]int{n, n - 1, 0, 1}; op["status"] != "DONE" || got != want {
		t.Fatalf("operation = %v, counts %v, want %v", op, got, want)
	}
	recs := results(h, op)
	users, res, errs := column(t, recs, "user_id"), column(t, recs, "result"), column(t, recs, "error")
	if len(users) != n {
		t.Fatalf("results rows = %d, want %d", len(users), n)
	}
	for i := range users {
		u, _, _ := g.row(i + 1)
		switch {
		case users[i] != u:
			t.Fatalf("results row %d is of %s, want %s", i+1, users[i], u)
		case i+1 == bad && (res[i] != "fail" || errs[i] != "the row cannot be stored: a value is empty where the database needs one"):
			t.Fatalf("refused row: result %q, error %q", res[i], errs[i])
		case i+1 != bad && (res[i] != "ok" || errs[i] != ""):
			t.Fatalf("row %d: result %q, error %q", i+1, res[i], errs[i])
		}
	}
	if held := awards(t, h, badUser); held[badPerk] != 0 {
		t.Fatalf("the refused row's award holds %d", held[badPerk])
	}
	if u, p, pts := g.row(bad + 1); awards(t, h, u)[p] != pts {
		t.Fatalf("the next row's award holds %d, want %d", awards(t, h, u)[p], pts)
	}
}

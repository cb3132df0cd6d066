package locationcsv_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"
	ts "github.com/loyalty-platform/platform/shared/testkit"
)

// TestRowRefusedByTheDatabase: when DynamoDB refuses a value of one row
// (a ValidationException), the import splits the row's chunk until that
// row is alone, fails it in the results file with a short reason (never
// DynamoDB's own text), writes every other row, and the operation is DONE.
func TestRowRefusedByTheDatabase(t *testing.T) {
	t.Parallel()
	const n = 60 // rows: several chunks
	cases := []struct {
		name string
		// cells are the row's title and extended_json cells.
		title, extended string
		// refuse, when set, makes the write seam refuse the row's writes as
		// DynamoDB does a value it cannot store.
		refuse bool
		// reason is the results file's error of the row ("" when any).
		reason string
	}{
		{"RefusedAtTheWrite", "Refused 031", "", true, "the row cannot be stored: a number is outside the range the database stores"},
		// DynamoDB stores numbers up to 9.99e125: a larger one is refused
		// by the database or rejected before the write.
		{"NumberOutOfRange", "Huge 031", `{"n":1e308}`, false, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			h := ts.New(t)
			jobs := h.Deps.Jobs
			if c.refuse {
				jobs.WriteChunk = func(_ context.Context, items []types.TransactWriteItem) error {
					for _, it := range items {
						if it.Put == nil {
							continue
						}
						if v, ok := it.Put.Item["title"].(*types.AttributeValueMemberS); ok && v.Value == c.title {
							return &smithy.GenericAPIError{Code: "ValidationException", Message: "Number overflow. Attempting to store a number with magnitude larger than supported range"}
						}
					}
					return nil
				}
				defer func() { jobs.WriteChunk = nil }()
			}
			prefix := strings.Fields(c.title)[0]
			recs := [][]string{{"title", "geo_longitude", "geo_latitude", "extended_json"}}
			for i := 1; i <= n; i++ {
				title, ext := fmt.Sprintf("%s %03d", prefix, i), ""
				if title == c.title {
					ext = c.extended
				}
				recs = append(recs, []string{title, "1.5", "2.5", ext})
			}
			capture := h.CaptureS3("jobs")
			id, ev := startCaptured(t, h, capture, csvOf(recs...))
			if err := jobs.HandleS3(context.Background(), ev); err != nil {
				t.Fatal(err)
			}
			op := h.Do("GET", "/operations/"+id, nil, h.Admin()).Expect(t, 200, "").Map(t)
			if got, want := counts(op), [4]int{n, n - 1, 0, 1}; op["status"] != "DONE" || got != want {
				t.Fatalf("operation = %v, counts %v, want %v", op, got, want)
			}
			res := results(h, op)
			titles, actions, errs := column(t, res, "title"), column(t, res, "action"), column(t, res, "error")
			if len(titles) != n {
				t.Fatalf("results rows = %d, want %d", len(titles), n)
			}
			for i := range titles {
				want := fmt.Sprintf("%s %03d", prefix, i+1)
				switch {
				case titles[i] != want:
					t.Fatalf("results row %d is %q, want %q", i+1, titles[i], want)
				case want == c.title && (actions[i] != "" || errs[i] == "" || strings.Contains(errs[i], "Exception") || strings.Contains(errs[i], "overflow")):
					t.Fatalf("refused row: action %q, error %q", actions[i], errs[i])
				case want == c.title && c.reason == "":
					t.Logf("the row's error: %q", errs[i])
				case want == c.title && errs[i] != c.reason:
					t.Fatalf("refused row's error = %q, want %q", errs[i], c.reason)
				case want != c.title && (actions[i] != "created" || errs[i] != ""):
					t.Fatalf("row %d: action %q, error %q", i+1, actions[i], errs[i])
				}
			}
			list := h.Do("GET", "/locations?limit=1000&search="+prefix, nil, h.Admin()).Expect(t, 200, "").Map(t)
			if got := len(list["items"].([]any)); got != n-1 {
				t.Fatalf("locations = %d, want %d", got, n-1)
			}
		})
	}
}

package locationcsv_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/loyalty-platform/platform/shared/platform/job"
	ts "github.com/loyalty-platform/platform/shared/testkit"
)

// writesRecord reports whether a chunk's writes hold a Put of the record
// of location id.
func writesRecord(items []types.TransactWriteItem, id string) bool {
	for _, it := range items {
		if it.Put == nil {
			continue
		}
		if v, ok := it.Put.Item["id"].(*types.AttributeValueMemberS); ok && v.Value == id {
			return true
		}
	}
	return false
}

// TestImportLocationChangedDuringImport: a client's PUT of a location that
// commits between the import row's read and the row's write (the chunk's
// write seam makes it then) is not overwritten: the row's update is
// conditional on the version it read, so the location is read again and
// the row applied on top of the PUT, as if the PUT had come first (a row
// that then changes nothing is skipped); a location that keeps changing
// fails its row after two retries ("import the row again") and keeps the
// client's last PUT. The other rows of the transaction are written.
func TestImportLocationChangedDuringImport(t *testing.T) {
	cases := []struct {
		name string
		// times is how many of the chunk's attempts a PUT precedes, put
		// the body of each.
		times int
		put   map[string]any
		// counts are the operation's; action and err the contested row's
		// results; description and tags what the location holds after.
		counts      [4]int
		action, err string
		description string
		tags        string
	}{
		{"ChangedOnce", 1, map[string]any{"description": "from the client", "tags": []string{"client"}},
			[4]int{3, 3, 0, 0}, "updated", "", "from the client", "imported"},
		{"ChangedToTheRow", 1, map[string]any{"tags": []string{"imported"}},
			[4]int{3, 2, 1, 0}, "updated", "", "original", "imported"},
		{"ChangedTwice", 2, map[string]any{"description": "from the client", "tags": []string{"client"}},
			[4]int{3, 3, 0, 0}, "updated", "", "from the client", "imported"},
		{"KeepsChanging", 3, map[string]any{"description": "from the client", "tags": []string{"client"}},
			[4]int{3, 2, 0, 1}, "", "the location changed while the row was imported; import the row again", "from the client", "client"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := ts.New(t)
			capture := h.CaptureS3("jobs")
			contested := h.Do("POST", "/locations", map[string]any{"title": "Contested", "description": "original", "geo": []float64{1, 2}, "tags": []string{"old"}}, h.Admin()).Expect(t, 201, "").Map(t)["_id"].(string)
			other := h.Do("POST", "/locations", map[string]any{"title": "Other", "geo": []float64{3, 4}}, h.Admin()).Expect(t, 201, "").Map(t)["_id"].(string)
			jobs := h.Deps.Jobs
			puts := 0
			jobs.WriteChunk = func(_ context.Context, items []types.TransactWriteItem) error {
				if puts < c.times && writesRecord(items, contested) {
					puts++
					h.Do("PUT", "/locations/"+contested, c.put, h.Admin()).Expect(t, 200, "")
				}
				return nil
			}
			defer func() { jobs.WriteChunk = nil }()
			file := csvOf(
				[]string{"title", "geo_longitude", "geo_latitude", "tags"},
				[]string{"Contested", "1", "2", "imported"},
				[]string{"Newcomer", "5", "6", "imported"},
				[]string{"Other", "3", "4", "imported"},
			)
			id, ev := startCaptured(t, h, capture, file)
			if err := jobs.HandleS3(context.Background(), ev); err != nil {
				t.Fatal(err)
			}
			if puts != c.times {
				t.Fatalf("PUTs during the import = %d, want %d", puts, c.times)
			}
			op := h.Do("GET", "/operations/"+id, nil, h.Admin()).Expect(t, 200, "").Map(t)
			if got := counts(op); op["status"] != "DONE" || got != c.counts {
				t.Fatalf("operation = %v, counts %v, want %v", op, got, c.counts)
			}
			res := results(h, op)
			if got := column(t, res, "action"); got[0] != c.action || got[1] != "created" || got[2] != "updated" {
				t.Fatalf("actions = %v", got)
			}
			if got := column(t, res, "error"); got[0] != c.err || got[1] != "" || got[2] != "" {
				t.Fatalf("errors = %v", got)
			}
			l := h.Do("GET", "/locations/"+contested, nil, h.Admin()).Expect(t, 200, "").Map(t)
			if l["description"] != c.description || fmt.Sprint(l["tags"]) != "["+c.tags+"]" {
				t.Fatalf("contested location = %v, want description %q and tags [%s]", l, c.description, c.tags)
			}
			if got := h.Do("GET", "/locations/"+other, nil, h.Admin()).Expect(t, 200, "").Map(t)["tags"]; fmt.Sprint(got) != "[imported]" {
				t.Fatalf("other location's tags = %v", got)
			}
			// The lists read the summaries: they agree with the records.
			tagged := h.Do("GET", "/locations?limit=100&tags="+c.tags, nil, h.Admin()).Expect(t, 200, "").Map(t)["items"].([]any)
			found := false
			for _, it := range tagged {
				found = found || it.(map[string]any)["_id"] == contested
			}
			if !found {
				t.Fatalf("tags=%s lists %v, not the contested location", c.tags, tagged)
			}
		})
	}
}

// TestImportUpdatesCommitWithTheirChunk: a row's update (its record and
// its summary) is written in its chunk's transaction, with the chunk's
// marker: a run that dies before the transaction has changed no location
// (neither a record nor what the lists read), and the run that resumes it
// applies every row once.
func TestImportUpdatesCommitWithTheirChunk(t *testing.T) {
	h := ts.New(t)
	capture := h.CaptureS3("jobs")
	var ids []string
	for i := 1; i <= 3; i++ {
		ids = append(ids, h.Do("POST", "/locations", map[string]any{"title": fmt.Sprintf("Before %d", i), "geo": []float64{1, 2}}, h.Admin()).Expect(t, 201, "").Map(t)["_id"].(string))
	}
	recs := [][]string{{"_id", "title", "geo_longitude", "geo_latitude"}}
	for i, id := range ids {
		recs = append(recs, []string{id, fmt.Sprintf("After %d", i+1), "1", "2"})
	}
	id, ev := startCaptured(t, h, capture, csvOf(recs...))
	jobs := h.Deps.Jobs
	crash := errors.New("crash before the commit")
	jobs.AfterDirect = func(context.Context) error { return crash }
	defer func() { jobs.AfterDirect = nil }()
	ctx := context.Background()
	if err := jobs.HandleS3(ctx, ev); !errors.Is(err, crash) {
		t.Fatalf("run = %v, want the crash", err)
	}
	jobs.AfterDirect = nil
	titles := func() (records, listed []string) {
		for _, id := range ids {
			records = append(records, h.Do("GET", "/locations/"+id, nil, h.Admin()).Expect(t, 200, "").Map(t)["title"].(string))
		}
		for _, it := range h.Do("GET", "/locations?limit=100", nil, h.Admin()).Expect(t, 200, "").Map(t)["items"].([]any) {
			listed = append(listed, it.(map[string]any)["title"].(string))
		}
		slices.Sort(listed)
		return records, listed
	}
	records, listed := titles()
	if got := strings.Join(records, ","); got != "Before 1,Before 2,Before 3" {
		t.Fatalf("records after the crash = %s", got)
	}
	if got := strings.Join(listed, ","); got != "Before 1,Before 2,Before 3" {
		t.Fatalf("listed after the crash = %s", got)
	}
	h.Clock.Advance(job.DefaultLease + time.Second)
	if err := jobs.HandleS3(ctx, ev); err != nil {
		t.Fatal(err)
	}
	op := h.Do("GET", "/operations/"+id, nil, h.Admin()).Expect(t, 200, "").Map(t)
	if got := counts(op); op["status"] != "DONE" || got != [4]int{3, 3, 0, 0} {
		t.Fatalf("operation = %v", op)
	}
	records, listed = titles()
	if got := strings.Join(records, ","); got != "After 1,After 2,After 3" {
		t.Fatalf("records after the resumed run = %s", got)
	}
	if got := strings.Join(listed, ","); got != "After 1,After 2,After 3" {
		t.Fatalf("listed after the resumed run = %s", got)
	}
}

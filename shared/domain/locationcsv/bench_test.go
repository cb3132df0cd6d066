package locationcsv_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	ts "github.com/loyalty-platform/platform/shared/testkit"
)

// rawWriters is the number of concurrent BatchWriteItem writers of the
// raw side.
const rawWriters = 8

// benchRows is the size of the imported file per iteration:
// IMPORT_BENCH_ROWS, or 2,000.
func benchRows() int {
	if n, err := strconv.Atoi(os.Getenv("IMPORT_BENCH_ROWS")); err == nil && n > 0 {
		return n
	}
	return 2000
}

// BenchmarkImportThroughput measures the location import (rows per second
// into DynamoDB Local: every row a new location, dryRun=false, run by the
// jobs function's code on the captured S3 event, the results file
// included) and, in the same run and against the same DynamoDB Local, raw
// BatchWriteItem of items of the same size and shape (a location record
// and its summary per row, 25 items a request, rawWriters requests at
// once), and reports both and their ratio.
//
// IMPORT_BENCH_WIDTH sets the chunks committed at once (job.Service.CommitWidth).
//
//	IMPORT_BENCH_ROWS=20000 go run ./localstack/cmd/testenv -- go test -run '^$' -bench ImportThroughput -benchtime 2x ./shared/locationcsv/
func BenchmarkImportThroughput(b *testing.B) {
	h := ts.New(b)
	if w, err := strconv.Atoi(os.Getenv("IMPORT_BENCH_WIDTH")); err == nil {
		h.Deps.Jobs.CommitWidth = w
	}
	benchRows := benchRows()
	c := h.CaptureS3("jobs")
	ctx := context.Background()
	var importTime, rawTime time.Duration
	// Warm both paths up (DynamoDB Local compiles its code paths as they
	// run) before timing them.
	upload(h, "dryRun=false", benchFile("Warm", 1000)).Expect(b, 202, "")
	if err := h.Deps.Jobs.HandleS3(ctx, c.Next(b)); err != nil {
		b.Fatal(err)
	}
	if err := h.BatchWrite(ctx, h.Deps.Config.Tables.Locations, rawItems(h, "Warm", 1000), rawWriters); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		prefix := fmt.Sprintf("Bench%d", i)
		op := upload(h, "dryRun=false", benchFile(prefix, benchRows)).Expect(b, 202, "").Map(b)
		ev := c.Next(b)
		start := time.Now()
		if err := h.Deps.Jobs.HandleS3(ctx, ev); err != nil {
			b.Fatal(err)
		}
		importTime += time.Since(start)
		got := h.Do("GET", "/operations/"+op["_id"].(string), nil, h.Admin()).Expect(b, 200, "").Map(b)
		if got["status"] != "DONE" || counts(got)[1] != benchRows {
			b.Fatalf("import = %v", got)
		}

		items := rawItems(h, prefix, benchRows)
		start = time.Now()
		if err := h.BatchWrite(ctx, h.Deps.Config.Tables.Locations, items, rawWriters); err != nil {
			b.Fatal(err)
		}
		rawTime += time.Since(start)
	}
	rows := float64(benchRows * b.N)
	importRate := rows / importTime.Seconds()
	rawRate := rows / rawTime.Seconds()
	b.ReportMetric(importRate, "rows/s")
	b.ReportMetric(rawRate, "raw-rows/s")
	b.ReportMetric(importRate/rawRate, "ratio")
}

func benchFile(prefix string, benchRows int) string {
	var sb strings.Builder
	sb.WriteString("title,geo_longitude,geo_latitude,state,tags,regions,address.line1,address.city,contacts.email,services.checkins,openingHours.monday,description\n")
	for i := 0; i < benchRows; i++ {
		fmt.Fprintf(&sb, "%s %05d,%.4f,%.4f,ACTIVE,food|late,north,%d High Street,London,s%d@example.com,true,08:00-22:00,A place to eat and drink\n",
			prefix, i, float64(i%360)-179.5, float64(i%180)-89.5, i, i)
	}
	return sb.String()
}

// rawItems returns, per row of benchFile, items of the same size and shape
// as the import writes (the location record and its summary).
func rawItems(h *ts.Harness, prefix string, benchRows int) []map[string]types.AttributeValue {
	out := make([]map[string]types.AttributeValue, 0, 2*benchRows)
	for i := 0; i < benchRows; i++ {
		id := fmt.Sprintf("raw%s%05d", prefix, i)
		rec := map[string]any{
			"pk": h.Tenant.ID + "#RAWLOC#" + id, "sk": "LOCATION", "version": 1, "id": id, "tenantId": h.Tenant.ID,
			"created": "2026-01-01T00:00:00.000Z", "updated": "2026-01-01T00:00:00.000Z",
			"title": fmt.Sprintf("%s %05d", prefix, i), "state": "ACTIVE", "description": "A place to eat and drink",
			"tags": []string{"food", "late"}, "regions": []string{"north"}, "geo": []float64{float64(i%360) - 179.5, float64(i%180) - 89.5},
			"address":  map[string]string{"line1": fmt.Sprintf("%d High Street", i), "city": "London"},
			"contacts": map[string]string{"email": fmt.Sprintf("s%d@example.com", i)}, "services": map[string]bool{"checkins": true},
			"openingHours": map[string]string{"monday": "08:00-22:00"},
		}
		item, _ := attributevalue.MarshalMap(rec)
		out = append(out, item)
		out = append(out, map[string]types.AttributeValue{
			"pk": &types.AttributeValueMemberS{Value: h.Tenant.ID + "#RAWINDEX"},
			"sk": &types.AttributeValueMemberS{Value: strings.ToLower(prefix) + "\x1f" + id},
			"d":  &types.AttributeValueMemberS{Value: "ACTIVE\x1e0.5\x1e0.5\x1e1\x1efood\x1flate\x1enorth"},
		})
	}
	return out
}

package awardcsv_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/loyalty-platform/platform/shared/platform/ddb"
	ts "github.com/loyalty-platform/platform/shared/testkit"
)

// The size of the benchmarks' file: every row a grant of 1 point to one
// of benchUsers users of one of benchPerks perks, each (user, perk) once
// per file (IMPORT_BENCH_ROWS sets the number of rows: benchRows, rounded
// down to a multiple of benchUsers, default 5,000).
var benchRows, benchPerks = benchSize()

func benchSize() (rows, perks int) {
	rows = 5000
	if n, err := strconv.Atoi(os.Getenv("IMPORT_BENCH_ROWS")); err == nil && n >= benchUsers {
		rows = n / benchUsers * benchUsers
	}
	return rows, rows / benchUsers
}

const (
	benchUsers = 500
	// rawWriters is the number of concurrent BatchWriteItem writers of the
	// raw side.
	rawWriters = 8
)

// benchEnv is a tenant with the benchmark's users and perks.
type benchEnv struct {
	h     *ts.Harness
	users []string
	perks []string
}

func newBenchEnv(b *testing.B) *benchEnv {
	b.Helper()
	env := &benchEnv{h: ts.New(b)}
	env.users = users(b, env.h, benchUsers)
	for i := 0; i < benchPerks; i++ {
		env.perks = append(env.perks, newPerk(b, env.h, map[string]any{"points": pointsOf(0, 1_000_000)}))
	}
	return env
}

func (env *benchEnv) file() string {
	var sb strings.Builder
	sb.WriteString("user_id,perk_id,points\n")
	for i := 0; i < benchRows; i++ {
		fmt.Fprintf(&sb, "%s,%s,1\n", env.users[i%benchUsers], env.perks[(i/benchUsers)%benchPerks])
	}
	return sb.String()
}

// BenchmarkAwardImport measures the award import (rows per second into
// DynamoDB Local: a real import, dryRun=false and suppressEvents=true, of
// benchRows rows, run by the jobs function's code on the captured S3
// event) and, in the same run and against the same DynamoDB Local, raw
// BatchWriteItem of items of the same size (rawWriters writers at once),
// and reports both and their ratio. The peak heap of the process during
// the import is reported too (it includes the in-process S3 stand-in).
//
//	IMPORT_BENCH_ROWS=20000 go run ./localstack/cmd/testenv -- go test -run '^$' -bench AwardImport -benchtime 1x ./shared/awardcsv/
func BenchmarkAwardImport(b *testing.B) {
	env := newBenchEnv(b)
	h := env.h
	c := h.CaptureS3("jobs")
	ctx := context.Background()
	file := env.file()
	var importTime, rawTime time.Duration
	var peak uint64
	// Count the writes of the jobs' transactions (the operations service
	// runs them).
	ops := h.Deps.Operations
	counter := &countingDB{API: ops.DB}
	ops.DB = counter
	defer func() { ops.DB = counter.API }()
	// Warm both paths up (DynamoDB Local compiles its code paths as they
	// run) before timing them: the same file twice later grants each award
	// again, so the warm-up imports the file once, untimed.
	upload(h, "dryRun=false", file).Expect(b, 202, "")
	if err := h.Deps.Jobs.HandleS3(ctx, c.Next(b)); err != nil {
		b.Fatal(err)
	}
	if err := h.BatchWrite(ctx, h.Deps.Config.Tables.Loyalty, rawItems(h, "w"), rawWriters); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		op := upload(h, "dryRun=false", file).Expect(b, 202, "").Map(b)
		ev := c.Next(b)
		stop := ts.SamplePeakHeap(&peak)
		counter.counting.Store(true)
		start := time.Now()
		if err := h.Deps.Jobs.HandleS3(ctx, ev); err != nil {
			b.Fatal(err)
		}
		importTime += time.Since(start)
		counter.counting.Store(false)
		stop()
		got := h.Do("GET", "/operations/"+op["_id"].(string), nil, h.Admin()).Expect(b, 200, "").Map(b)
		if got["status"] != "DONE" || counts(got) != [4]int{benchRows, benchRows, 0, 0} {
			b.Fatalf("import = %v", got)
		}

		items := rawItems(h, fmt.Sprintf("i%d", i))
		start = time.Now()
		if err := h.BatchWrite(ctx, h.Deps.Config.Tables.Loyalty, items, rawWriters); err != nil {
			b.Fatal(err)
		}
		rawTime += time.Since(start)
	}
	b.StopTimer()
	rows := float64(benchRows * b.N)
	importRate, rawRate := rows/importTime.Seconds(), rows/rawTime.Seconds()
	b.ReportMetric(importRate, "rows/s")
	b.ReportMetric(rawRate, "raw-rows/s")
	b.ReportMetric(importRate/rawRate, "ratio")
	b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
	// Writes of the transactions per row: the award updates, plus each
	// transaction's checkpoint update.
	b.ReportMetric(float64(counter.writes.Load())/rows, "writes/row")
	b.ReportMetric(float64(counter.writes.Load()-counter.txs.Load())/rows, "award-writes/row")
	b.ReportMetric(rows/float64(counter.txs.Load()), "rows/tx")
}

// countingDB counts the transactions and their writes (puts, updates,
// deletes; not condition checks) while counting is set.
type countingDB struct {
	ddb.API
	counting    atomic.Bool
	txs, writes atomic.Int64
}

func (c *countingDB) TransactWriteItems(ctx context.Context, in *dynamodb.TransactWriteItemsInput, opts ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error) {
	out, err := c.API.TransactWriteItems(ctx, in, opts...)
	if err == nil && c.counting.Load() {
		c.txs.Add(1)
		for _, it := range in.TransactItems {
			if it.Put != nil || it.Update != nil || it.Delete != nil {
				c.writes.Add(1)
			}
		}
	}
	return out, err
}

// BenchmarkRawBatchWrite measures raw BatchWriteItem (rawWriters writers
// at once, 25 items a request) of benchRows items of the size and shape
// of an award, against the same DynamoDB Local: the ceiling the import is
// compared with.
func BenchmarkRawBatchWrite(b *testing.B) {
	h := ts.New(b)
	ctx := context.Background()
	var total time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		items := rawItems(h, fmt.Sprintf("r%d", i))
		start := time.Now()
		if err := h.BatchWrite(ctx, h.Deps.Config.Tables.Loyalty, items, rawWriters); err != nil {
			b.Fatal(err)
		}
		total += time.Since(start)
	}
	b.StopTimer()
	b.ReportMetric(float64(benchRows*b.N)/total.Seconds(), "rows/s")
}

// rawItems returns benchRows items of the size and shape of the awards the
// import writes (an award with its counters and index keys), under keys
// no award uses.
func rawItems(h *ts.Harness, prefix string) []map[string]types.AttributeValue {
	t := h.Tenant.ID
	now := "2026-01-01T00:00:00.000Z"
	out := make([]map[string]types.AttributeValue, 0, benchRows)
	for i := 0; i < benchRows; i++ {
		uid := fmt.Sprintf("%s%022d", prefix, i%benchUsers)
		pid := fmt.Sprintf("%024d", (i/benchUsers)%benchPerks)
		id := uid + "-" + pid
		rec := map[string]any{
			"pk": t + "#RAWUSER#" + uid, "sk": "AWARD#" + pid, "gsi1pk": t + "#RAWAWARDS", "gsi1sk": now + "#" + id,
			"id": id, "tenantId": t, "userId": uid, "perkId": pid,
			"available": 1, "granted": 1, "redeemed": 0, "refunded": 0, "refundable": 0, "redemptions": 0,
			"created": now, "updatedAt": now,
		}
		item, _ := attributevalue.MarshalMap(rec)
		out = append(out, item)
	}
	return out
}

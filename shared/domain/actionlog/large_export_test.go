package actionlog_test

import (
	"bufio"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/loyalty-platform/platform/shared/domain/action"
	"github.com/loyalty-platform/platform/shared/platform/ddb"
	"github.com/loyalty-platform/platform/shared/platform/job"
	ts "github.com/loyalty-platform/platform/shared/testkit"
)

// jobsTimeout is the jobs function's Timeout in template.yaml: each
// invocation of the large export gets this deadline, so the job yields
// and continues in a new invocation (job.DefaultStopBefore before it) as
// it does in Lambda.
const jobsTimeout = 300 * time.Second

// maxExportHeap bounds the heap in use of the process while the export
// runs, whatever the number of actions (the jobs function has 512 MB).
const maxExportHeap = 256 << 20

// TestLargeExport exports ACTIONS_EXPORT_ROWS actions of one tenant
// (skipped when unset; e.g. 1000000) and reports the heap of the process
// that runs the export: the export reads a page of actions at a time and
// streams its results, so the heap stays flat whatever the number of
// actions.
//
// The actions (check-ins and checkouts of 1,000 users at 50 locations,
// one every 100 ms back from a fixed instant) are written by 8 concurrent
// BatchWriteItem writers, each item made by the real recorder. The export
// is started through the API (POST /actions/exports with a nonce); the
// jobs function's handler runs it on the S3 events of its start and
// continue objects (captured, as TestLargeImport of shared/domain/awardcsv does,
// and handed to Jobs.HandleS3 with the function's timeout as the
// deadline, so it continues in new invocations as in Lambda). Its results
// parts and the results file are kept on disk by an S3 wrapper, so that
// the in-memory S3 stand-in (in this process) does not count in the heap;
// every other object goes to the stand-in. The heap in use is sampled
// every 250 ms during the export. The file is then checked as a stream:
// the header, exactly N rows, strictly newest first (so no action twice).
// GET /actions/exports/{id} answers 303 with a presigned URL of the file
// (too large to answer inline).
//
// The harness's rules function (run in this process on every insert of
// the Actions table, from DynamoDB Local's stream) is stopped for the test,
// as the million inserts would keep it busy long after the seed and compete
// with the export for the CPU; ACTIONS_EXPORT_RULES=on keeps it.
//
//	ACTIONS_EXPORT_ROWS=1000000 go run ./localstack/cmd/testenv -- go test -run TestLargeExport -timeout 2h -v ./shared/actionlog/
func TestLargeExport(t *testing.T) {
	// Not parallel: it stops the stream functions for every tenant
	// (withoutStreamFunctions).
	n, _ := strconv.Atoi(os.Getenv("ACTIONS_EXPORT_ROWS"))
	if n <= 0 {
		t.Skip("set ACTIONS_EXPORT_ROWS to run the large export")
	}
	h := ts.New(t)
	if os.Getenv("ACTIONS_EXPORT_RULES") != "on" {
		withoutStreamFunctions(t)
	}
	base := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	took := seedActions(t, h, n, 8, func(i int) time.Time { return base.Add(-time.Duration(i) * 100 * time.Millisecond) })
	t.Logf("seeded %d actions in %v (%.0f/s)", n, took.Round(time.Second), float64(n)/took.Seconds())

	c := h.CaptureS3("jobs")
	// Time the export's reads of the actions and its writes of the
	// operation (checkpoints), to tell DynamoDB Local's share of the time.
	reads := &timedDB{API: h.Deps.Fn.Jobs.ActionLog.Actions.DB}
	h.Deps.Fn.Jobs.ActionLog.Actions.DB = reads
	ops := &timedDB{API: h.Deps.Jobs.Ops.DB}
	h.Deps.Jobs.Ops.DB = ops
	t.Cleanup(func() { h.Deps.Fn.Jobs.ActionLog.Actions.DB, h.Deps.Jobs.Ops.DB = reads.API, ops.API })
	jobs := h.Deps.Jobs
	disk := &diskS3{S3API: jobs.S3, dir: t.TempDir()}
	jobs.S3 = disk
	t.Cleanup(func() { jobs.S3 = disk.S3API })

	from := base.Add(-time.Duration(n)*100*time.Millisecond - time.Second).Format(time.RFC3339)
	to := base.Add(time.Second).Format(time.RFC3339)
	op := startExport(t, h, map[string]any{"from": from, "to": to, "types": []string{action.CheckinCreated, action.Checkout}})
	id := op["_id"].(string)
	ev := c.Next(t)

	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	heap := sampleHeap(250 * time.Millisecond)
	start := time.Now()
	ctx := context.Background()
	var rows float64
	for runs := 1; ; runs++ {
		runStart := time.Now()
		q0, _ := reads.split()
		_, o0 := ops.split()
		runCtx, cancel := context.WithTimeout(ctx, jobsTimeout)
		err := jobs.HandleS3(runCtx, ev)
		cancel()
		if err != nil {
			t.Fatalf("run %d: %v", runs, err)
		}
		got := h.Do("GET", "/operations/"+id, nil, h.Admin()).Expect(t, 200, "").Map(t)
		total, _ := got["result"].(map[string]any)["total"].(float64)
		lo, hi := heap.window(runStart)
		q1, _ := reads.split()
		_, o1 := ops.split()
		t.Logf("invocation %d: %v, %.0f actions (%.0f/s; Queries %v, operation writes %v); heap in use %.1f-%.1f MiB", runs, time.Since(runStart).Round(time.Second),
			total-rows, (total-rows)/time.Since(runStart).Seconds(), (q1 - q0).Round(time.Second), (o1 - o0).Round(time.Second), mib(lo), mib(hi))
		rows = total
		if got["status"] == "DONE" {
			if int(total) != n {
				t.Fatalf("operation = %v, want %d actions", got, n)
			}
			break
		}
		if got["status"] != "RUNNING" || runs > 50 {
			t.Fatalf("after %d invocations: %v", runs, got)
		}
		ev = c.Next(t)
	}
	elapsed := time.Since(start)
	samples := heap.stop()
	lo, hi := heap.window(start)
	t.Logf("exported %d actions in %v: %.0f actions/s; heap in use before %.1f MiB, during the export min %.1f MiB, max %.1f MiB (%d samples); results file %d bytes",
		n, elapsed.Round(time.Second), float64(n)/elapsed.Seconds(), mib(before.HeapInuse), mib(lo), mib(hi), len(samples), disk.size(job.ResultsKey(h.Tenant.ID, id)))
	// The heap by quarter of the export: flat, no trend.
	var quarters []string
	for q := 0; q < 4; q++ {
		part := samples[q*len(samples)/4 : (q+1)*len(samples)/4]
		var m uint64
		for _, s := range part {
			m = max(m, s.inuse)
		}
		quarters = append(quarters, fmt.Sprintf("%.1f", mib(m)))
	}
	qt, _ := reads.split()
	_, ot := ops.split()
	t.Logf("the export's Queries: %d, reading %d items (%.1f per action exported), %v in all; operation reads and writes: %d, %v in all",
		reads.queries.Load(), reads.items.Load(), float64(reads.items.Load())/float64(n), qt.Round(time.Second), ops.others.Load(), ot.Round(time.Second))
	t.Logf("max heap in use by quarter of the export (MiB): %s", strings.Join(quarters, ", "))
	if hi > maxExportHeap {
		t.Errorf("heap in use reached %.1f MiB during the export, want at most %.0f MiB", mib(hi), mib(maxExportHeap))
	}

	// The API hands the file out by a presigned URL (not followed: the
	// file is on disk, not in the S3 stand-in).
	req, _ := http.NewRequest("GET", h.Server.URL+"/actions/exports/"+id, nil)
	admin := h.Admin()
	for i := 0; i+1 < len(admin); i += 2 {
		req.Header.Set(admin[i], admin[i+1])
	}
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noRedirect.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if loc := resp.Header.Get("Location"); resp.StatusCode != 303 || !strings.Contains(loc, "results.csv") {
		t.Errorf("GET /actions/exports/%s: %d, Location %q; want 303 to the results file", id, resp.StatusCode, loc)
	}
	// The file, read as a stream.
	out, err := disk.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(jobs.Bucket), Key: aws.String(job.ResultsKey(h.Tenant.ID, id))})
	if err != nil {
		t.Fatal(err)
	}
	defer out.Body.Close()
	cr := csv.NewReader(bufio.NewReaderSize(out.Body, 1<<20))
	cr.ReuseRecord = true
	header, err := cr.Read()
	if err != nil || header[0] != "_id" || header[2] != "timestamp" {
		t.Fatalf("header = %v, %v", header, err)
	}
	count, prev := 0, ""
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("row %d: %v", count+1, err)
		}
		count++
		key := rec[2] + "#" + rec[0]
		if prev != "" && key >= prev {
			t.Fatalf("row %d (%s) is not older than the row before (%s)", count, key, prev)
		}
		prev = key
	}
	if count != n {
		t.Fatalf("the file has %d rows, want %d", count, n)
	}
}

// timedDB counts and times the calls of a ddb.API: Queries (and the
// items they return) apart from the rest.
type timedDB struct {
	ddb.API
	queries, items, queryNanos, others, otherNanos atomic.Int64
}

func (c *timedDB) Query(ctx context.Context, in *dynamodb.QueryInput, opts ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error) {
	start := time.Now()
	out, err := c.API.Query(ctx, in, opts...)
	c.queryNanos.Add(int64(time.Since(start)))
	c.queries.Add(1)
	if out != nil {
		c.items.Add(int64(len(out.Items)))
	}
	return out, err
}

func (c *timedDB) other(start time.Time) {
	c.others.Add(1)
	c.otherNanos.Add(int64(time.Since(start)))
}

func (c *timedDB) GetItem(ctx context.Context, in *dynamodb.GetItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error) {
	defer c.other(time.Now())
	return c.API.GetItem(ctx, in, opts...)
}

func (c *timedDB) PutItem(ctx context.Context, in *dynamodb.PutItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error) {
	defer c.other(time.Now())
	return c.API.PutItem(ctx, in, opts...)
}

func (c *timedDB) UpdateItem(ctx context.Context, in *dynamodb.UpdateItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error) {
	defer c.other(time.Now())
	return c.API.UpdateItem(ctx, in, opts...)
}

func (c *timedDB) TransactWriteItems(ctx context.Context, in *dynamodb.TransactWriteItemsInput, opts ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error) {
	defer c.other(time.Now())
	return c.API.TransactWriteItems(ctx, in, opts...)
}

// split returns the time spent in Queries and in other calls so far.
func (c *timedDB) split() (query, other time.Duration) {
	return time.Duration(c.queryNanos.Load()), time.Duration(c.otherNanos.Load())
}

func mib(b uint64) float64 { return float64(b) / (1 << 20) }

// heapSampler samples the heap in use of the process.
type heapSampler struct {
	done     chan struct{}
	finished chan struct{}
	mu       sync.Mutex
	samples  []heapSample
}

type heapSample struct {
	at    time.Time
	inuse uint64
}

// sampleHeap samples runtime.MemStats.HeapInuse every interval until stop.
func sampleHeap(interval time.Duration) *heapSampler {
	s := &heapSampler{done: make(chan struct{}), finished: make(chan struct{})}
	go func() {
		defer close(s.finished)
		tick := time.NewTicker(interval)
		defer tick.Stop()
		var m runtime.MemStats
		for {
			runtime.ReadMemStats(&m)
			s.mu.Lock()
			s.samples = append(s.samples, heapSample{at: time.Now(), inuse: m.HeapInuse})
			s.mu.Unlock()
			select {
			case <-s.done:
				return
			case <-tick.C:
			}
		}
	}()
	return s
}

// window returns the least and the most heap in use sampled since from.
func (s *heapSampler) window(from time.Time) (lo, hi uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, x := range s.samples {
		if x.at.Before(from) {
			continue
		}
		if lo == 0 || x.inuse < lo {
			lo = x.inuse
		}
		hi = max(hi, x.inuse)
	}
	return lo, hi
}

// stop ends the sampling and returns the samples.
func (s *heapSampler) stop() []heapSample {
	close(s.done)
	<-s.finished
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.samples
}

// diskS3 keeps a job's results parts and results file in files (streamed
// in and out, never held in memory); every other object goes to the S3
// stand-in.
type diskS3 struct {
	job.S3API
	dir string
}

func (s *diskS3) onDisk(key string) bool {
	return strings.Contains(key, "/results/") || strings.HasSuffix(key, "/results.csv")
}

func (s *diskS3) path(key string) string {
	return filepath.Join(s.dir, strings.ReplaceAll(key, "/", "_"))
}

func (s *diskS3) size(key string) int64 {
	st, err := os.Stat(s.path(key))
	if err != nil {
		return -1
	}
	return st.Size()
}

func (s *diskS3) PutObject(ctx context.Context, in *s3.PutObjectInput, opts ...func(*s3.Options)) (*s3.PutObjectOutput, error) {
	key := aws.ToString(in.Key)
	if !s.onDisk(key) {
		return s.S3API.PutObject(ctx, in, opts...)
	}
	tmp := s.path(key) + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return nil, err
	}
	n, err := io.Copy(f, in.Body)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil && in.ContentLength != nil && n != *in.ContentLength {
		err = fmt.Errorf("put %s: %d bytes, Content-Length %d", key, n, *in.ContentLength)
	}
	if err != nil {
		_ = os.Remove(tmp)
		return nil, err
	}
	if err := os.Rename(tmp, s.path(key)); err != nil {
		return nil, err
	}
	return &s3.PutObjectOutput{}, nil
}

func (s *diskS3) GetObject(ctx context.Context, in *s3.GetObjectInput, opts ...func(*s3.Options)) (*s3.GetObjectOutput, error) {
	key := aws.ToString(in.Key)
	if !s.onDisk(key) {
		return s.S3API.GetObject(ctx, in, opts...)
	}
	f, err := os.Open(s.path(key))
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	return &s3.GetObjectOutput{Body: f, ContentLength: aws.Int64(st.Size())}, nil
}

func (s *diskS3) HeadObject(ctx context.Context, in *s3.HeadObjectInput, opts ...func(*s3.Options)) (*s3.HeadObjectOutput, error) {
	key := aws.ToString(in.Key)
	if !s.onDisk(key) {
		return s.S3API.HeadObject(ctx, in, opts...)
	}
	st, err := os.Stat(s.path(key))
	if err != nil {
		return nil, err
	}
	return &s3.HeadObjectOutput{ContentLength: aws.Int64(st.Size())}, nil
}

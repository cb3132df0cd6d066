package testkit

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/loyalty-platform/platform/shared/domain/operation"
	"github.com/loyalty-platform/platform/shared/platform/ddb"
	"github.com/loyalty-platform/platform/shared/platform/job"
)

// DeliverAll runs the jobs function on ev n times at once, as S3 does when
// it delivers an event more than once, and fails the test when a run
// returns an error.
func DeliverAll(t testing.TB, jobs *job.Service, ev events.S3Event, n int) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = jobs.HandleS3(context.Background(), ev)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
}

// CrashAfterEveryCommit runs the captured job operation id, committing one
// chunk at a time, as if every run died right after its first commit (before the input's end): each
// redelivery of ev (three at once) after the lease expired resumes at the
// checkpoint, until the operation is DONE. It returns the number of
// crashes, and leaves jobs.Crash set (the caller resets it).
func (h *Harness) CrashAfterEveryCommit(jobs *job.Service, id string, ev events.S3Event) (crashes int) {
	t := h.T
	t.Helper()
	// One chunk at a time, so that each run commits one and crashes (the
	// chunks of a run that commit out of order: CrashOutOfOrder).
	defer oneChunkAtATime(jobs)()
	var mu sync.Mutex
	jobs.Crash = func(cp operation.Checkpoint) bool {
		mu.Lock()
		defer mu.Unlock()
		if cp.InputDone {
			return false
		}
		crashes++
		return true
	}
	DeliverAll(t, jobs, ev, 1)
	for runs := 1; ; runs++ {
		if op := h.Do("GET", "/operations/"+id, nil, h.Admin()).Expect(t, 200, "").Map(t); op["status"] == "DONE" {
			break
		}
		if runs > 50 {
			t.Fatal("not done after 50 runs")
		}
		h.Clock.Advance(job.DefaultLease + time.Second)
		DeliverAll(t, jobs, ev, 3)
	}
	mu.Lock()
	defer mu.Unlock()
	return crashes
}

// oneChunkAtATime makes jobs commit one chunk at a time and returns the
// function that restores its commit width.
func oneChunkAtATime(jobs *job.Service) (restore func()) {
	width := jobs.CommitWidth
	jobs.CommitWidth = 1
	return func() { jobs.CommitWidth = width }
}

// errCrashBeforeCommit is the fault CrashBeforeCommits injects.
var errCrashBeforeCommit = errors.New("injected: the run died before its commit")

// CrashBeforeCommits runs the captured job operation id, committing one
// chunk at a time, as if every run died between the direct writes and the
// transaction of its second chunk (its results part and direct writes
// made, its marker not): each redelivery of ev resumes at the checkpoint,
// until the operation is DONE. It returns the number of crashes, and
// leaves jobs.AfterDirect set (the caller resets it).
func (h *Harness) CrashBeforeCommits(jobs *job.Service, id string, ev events.S3Event) (crashes int) {
	t := h.T
	t.Helper()
	defer oneChunkAtATime(jobs)()
	var mu sync.Mutex
	calls := 0
	jobs.AfterDirect = func(context.Context) error {
		mu.Lock()
		defer mu.Unlock()
		if calls++; calls%2 == 0 {
			crashes++
			return errCrashBeforeCommit
		}
		return nil
	}
	for runs := 1; ; runs++ {
		if err := jobs.HandleS3(context.Background(), ev); err != nil && !errors.Is(err, errCrashBeforeCommit) {
			t.Fatal(err)
		}
		if op := h.Do("GET", "/operations/"+id, nil, h.Admin()).Expect(t, 200, "").Map(t); op["status"] == "DONE" {
			break
		} else if op["status"] != "RUNNING" {
			t.Fatalf("after run %d: %v", runs, op)
		}
		if runs > 200 {
			t.Fatal("not done after 200 runs")
		}
		h.Clock.Advance(job.DefaultLease + time.Second)
	}
	mu.Lock()
	defer mu.Unlock()
	return crashes
}

// TwoWorkers runs the captured job of ev with two workers: the first run
// stalls after its first commit until its lease expired; a second run
// claims the operation and finishes it; then the first run goes on, and
// its next commit finds the lease lost, so it stops without writing
// anything. It fails the test when the first run did not commit, and
// leaves jobs.Crash set (the caller resets it).
func (h *Harness) TwoWorkers(jobs *job.Service, ev events.S3Event) {
	t := h.T
	t.Helper()
	stalled := false
	jobs.Crash = func(cp operation.Checkpoint) bool {
		if stalled {
			return false
		}
		stalled = true
		h.Clock.Advance(job.DefaultLease + time.Second)
		DeliverAll(t, jobs, ev, 1)
		return false
	}
	DeliverAll(t, jobs, ev, 1)
	if !stalled {
		t.Fatal("the first run did not commit")
	}
}

// RunJob runs the captured job operation id on ev, then on each event a
// run leaves (its continue object's), until the operation is DONE, and
// returns the operation and the number of runs. It fails the test when a
// run returns an error, when a run leaves the operation neither RUNNING
// nor DONE, or when it is not DONE after maxRuns runs. After each run that
// leaves the operation RUNNING it calls each (when not nil) with the run's
// number, the operation and the next event.
func (h *Harness) RunJob(jobs *job.Service, c *S3Capture, id string, ev events.S3Event, maxRuns int, each func(run int, op map[string]any, next events.S3Event)) (map[string]any, int) {
	t := h.T
	t.Helper()
	for runs := 1; ; runs++ {
		if err := jobs.HandleS3(context.Background(), ev); err != nil {
			t.Fatal(err)
		}
		op := h.Do("GET", "/operations/"+id, nil, h.Admin()).Expect(t, 200, "").Map(t)
		if op["status"] == "DONE" {
			return op, runs
		}
		if op["status"] != "RUNNING" || runs >= maxRuns {
			t.Fatalf("not done after %d runs: %v", runs, op)
		}
		ev = c.Next(t)
		if each != nil {
			each(runs, op, ev)
		}
	}
}

// BatchWrite writes items to table with BatchWriteItem, 25 a request,
// writers requests at once, retrying unprocessed items: the ceiling an
// import's writes are compared with.
func (h *Harness) BatchWrite(ctx context.Context, table string, items []map[string]types.AttributeValue, writers int) error {
	return ddb.BatchPut(ctx, h.Deps.DB, table, items, writers)
}

// SamplePeakHeap samples the heap in use every 20 ms into peak (the
// highest seen, kept across calls) until the returned stop is called.
func SamplePeakHeap(peak *uint64) (stop func()) {
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		var m runtime.MemStats
		for {
			runtime.ReadMemStats(&m)
			if m.HeapInuse > *peak {
				*peak = m.HeapInuse
			}
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
	}()
	return func() { close(done); <-finished }
}

// PeakRSS returns the peak resident size of the process (VmHWM of
// /proc/self/status), or 0 where the system does not say.
func PeakRSS() uint64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.ParseUint(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10
		}
	}
	return 0
}

// GeneratedCSV is a CSV file made as it is read: Header, then Rows rows,
// row i (from 0) being Row(i); every row has the same width.
type GeneratedCSV struct {
	Header string
	Rows   int
	Row    func(i int) string
}

func (g GeneratedCSV) width() int { return len(g.Row(0)) }

// Size returns the file's size in bytes.
func (g GeneratedCSV) Size() int64 { return int64(len(g.Header)) + int64(g.Rows)*int64(g.width()) }

// Reader returns the file from byte offset from on.
func (g GeneratedCSV) Reader(from int64) io.Reader {
	hdr := int64(len(g.Header))
	if from < hdr {
		return io.MultiReader(strings.NewReader(g.Header[from:]), &csvReader{g: g})
	}
	w := int64(g.width())
	r := &csvReader{g: g, next: int((from - hdr) / w)}
	r.buf = []byte(g.Row(r.next))[(from-hdr)%w:]
	r.next++
	return r
}

// csvReader reads the rows of a GeneratedCSV from row next on (buf is
// what is left of the row before).
type csvReader struct {
	g    GeneratedCSV
	next int
	buf  []byte
}

func (r *csvReader) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		if len(r.buf) == 0 {
			if r.next >= r.g.Rows {
				break
			}
			r.buf = []byte(r.g.Row(r.next))
			r.next++
		}
		c := copy(p[n:], r.buf)
		r.buf, n = r.buf[c:], n+c
	}
	if n == 0 {
		return 0, io.EOF
	}
	return n, nil
}

// SpoolS3 is the jobs' S3 for a large import: it serves the object
// InputKey from Input (as ranged reads), keeps the results parts in files
// under Dir and counts (without keeping) the results file; everything
// else goes to the S3API it wraps. The in-memory S3 stand-in thus keeps
// none of the import's large objects.
type SpoolS3 struct {
	job.S3API
	Dir      string
	Input    GeneratedCSV
	InputKey string

	mu                       sync.Mutex
	resultLines, resultBytes int64
}

// Results returns the number of lines and bytes of the last results file
// written.
func (s *SpoolS3) Results() (lines, size int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.resultLines, s.resultBytes
}

func (s *SpoolS3) path(key string) string {
	return filepath.Join(s.Dir, strings.ReplaceAll(key, "/", "_"))
}

// GetObject serves the input and the results parts; it passes other keys
// on.
func (s *SpoolS3) GetObject(ctx context.Context, in *s3.GetObjectInput, opts ...func(*s3.Options)) (*s3.GetObjectOutput, error) {
	key := aws.ToString(in.Key)
	switch {
	case s.InputKey != "" && key == s.InputKey:
		var from int64
		if r := aws.ToString(in.Range); r != "" {
			if _, err := fmt.Sscanf(r, "bytes=%d-", &from); err != nil {
				return nil, err
			}
		}
		return &s3.GetObjectOutput{
			Body: io.NopCloser(s.Input.Reader(from)), ContentLength: aws.Int64(s.Input.Size() - from), ETag: aws.String(`"generated"`),
		}, nil
	case strings.Contains(key, "/results/"):
		f, err := os.Open(s.path(key))
		if err != nil {
			return nil, err
		}
		st, _ := f.Stat()
		return &s3.GetObjectOutput{Body: f, ContentLength: aws.Int64(st.Size())}, nil
	}
	return s.S3API.GetObject(ctx, in, opts...)
}

// PutObject keeps the results parts in files and counts the results
// file; it passes other keys on.
func (s *SpoolS3) PutObject(ctx context.Context, in *s3.PutObjectInput, opts ...func(*s3.Options)) (*s3.PutObjectOutput, error) {
	key := aws.ToString(in.Key)
	switch {
	case strings.Contains(key, "/results/"):
		f, err := os.Create(s.path(key))
		if err != nil {
			return nil, err
		}
		defer f.Close()
		if _, err := io.Copy(f, in.Body); err != nil {
			return nil, err
		}
		return &s3.PutObjectOutput{}, nil
	case strings.HasSuffix(key, "/results.csv"):
		buf := make([]byte, 64<<10)
		var lines, size int64
		for {
			n, err := in.Body.Read(buf)
			lines += int64(bytes.Count(buf[:n], []byte("\n")))
			size += int64(n)
			if err == io.EOF {
				break
			}
			if err != nil {
				return nil, err
			}
		}
		s.mu.Lock()
		s.resultLines, s.resultBytes = lines, size
		s.mu.Unlock()
		return &s3.PutObjectOutput{}, nil
	}
	return s.S3API.PutObject(ctx, in, opts...)
}

// LargeImport is what RunLargeImport measured.
type LargeImport struct {
	// Op is the operation once DONE.
	Op map[string]any
	// Runs is the number of invocations the import took.
	Runs    int
	Elapsed time.Duration
	// BaseHeap is the heap in use before the import, PeakHeap the highest
	// seen during it.
	BaseHeap, PeakHeap uint64
	// ResultLines and ResultBytes are the results file's size.
	ResultLines, ResultBytes int64
}

// RunLargeImport imports file for real (dryRun=false, suppressEvents=true)
// with the import job <namespace>/import, in invocations of at most
// maxRowsPerRun rows (at most 21 of them), each on the event the previous
// one left, and logs its progress and its figures: the throughput, the
// peak heap and the peak resident size of the process. The input is made
// as the job reads it and the results parts are kept on disk (SpoolS3),
// so that the in-memory S3 stand-in does not count. The caller checks the
// operation's counts and the results file's size.
func (h *Harness) RunLargeImport(namespace string, file GeneratedCSV, maxRowsPerRun int64) LargeImport {
	t := h.T
	t.Helper()
	c := h.CaptureS3("jobs")
	jobs := h.Deps.Jobs
	fake := &SpoolS3{S3API: jobs.S3, Dir: t.TempDir(), Input: file}
	jobs.S3 = fake
	jobs.MaxRowsPerRun = maxRowsPerRun
	defer func() { jobs.S3, jobs.MaxRowsPerRun = fake.S3API, 0 }()

	op, err := jobs.Start(context.Background(), job.StartRequest{
		TenantID: h.Tenant.ID, Namespace: namespace, Name: "import", Nonce: Nonce(),
		Metadata: map[string]any{"dryRun": false, "suppressEvents": true}, Input: []byte(file.Header),
	})
	if err != nil {
		t.Fatal(err)
	}
	fake.InputKey = job.InputKey(h.Tenant.ID, op.ID)
	ev := c.Next(t)

	runtime.GC()
	var base runtime.MemStats
	runtime.ReadMemStats(&base)
	var peak uint64
	stop := SamplePeakHeap(&peak)
	start := time.Now()
	done, runs := h.RunJob(jobs, c, op.ID, ev, 21, func(run int, op map[string]any, _ events.S3Event) {
		t.Helper()
		r, _ := op["result"].(map[string]any)
		total, _ := r["total"].(float64)
		t.Logf("run %d: %d rows in %v, peak heap %.1f MiB, peak RSS %.1f MiB", run, int(total), time.Since(start).Round(time.Second), float64(peak)/(1<<20), float64(PeakRSS())/(1<<20))
	})
	out := LargeImport{Op: done, Runs: runs, Elapsed: time.Since(start), BaseHeap: base.HeapInuse}
	stop()
	out.PeakHeap = peak
	out.ResultLines, out.ResultBytes = fake.Results()
	t.Logf("%d rows in %d runs, %v: %.0f rows/s; heap in use before %.1f MiB, peak %.1f MiB; peak RSS of the process %.1f MiB; results file %d lines, %d bytes",
		file.Rows, runs, out.Elapsed.Round(time.Second), float64(file.Rows)/out.Elapsed.Seconds(), float64(out.BaseHeap)/(1<<20), float64(out.PeakHeap)/(1<<20), float64(PeakRSS())/(1<<20), out.ResultLines, out.ResultBytes)
	return out
}

// CrashOnceMidFile makes the first run of jobs that commits rows before
// the input's end stop right after that commit, as if the process died
// (its lease stays held; that run commits one chunk at a time), and
// returns where it stopped: the rows committed by then, 0 until it did.
// It leaves jobs.Crash set (the caller resets it).
func CrashOnceMidFile(jobs *job.Service) (at *int64) {
	at = new(int64)
	// The run that crashes commits one chunk at a time, so that it stops
	// with rows committed and rows left; the next runs commit as usual.
	width := jobs.CommitWidth
	jobs.CommitWidth = 1
	jobs.Crash = func(cp operation.Checkpoint) bool {
		if *at == 0 && cp.Rows > 0 && !cp.InputDone && cp.Offset < cp.InputSize {
			*at = cp.Rows
			jobs.CommitWidth = width
			return true
		}
		return false
	}
	return at
}

// CrashOutOfOrder runs the captured job operation id as if its first run
// died with its chunks committed out of order: the run's first chunk
// transaction is held back until a later chunk has committed, and the run
// then stops (the held chunk never commits, the checkpoint stays before
// it); the redelivery after the lease expired skips the rows of the
// chunks committed past the checkpoint and commits the others. The job's
// input must make several chunks whose rows touch nothing in common (a
// row would wait for the held chunk). It fails the test unless the crash left
// a chunk committed past the checkpoint, and leaves jobs.Crash and
// jobs.WriteChunk set (the caller resets them).
func (h *Harness) CrashOutOfOrder(jobs *job.Service, id string, ev events.S3Event) {
	t := h.T
	t.Helper()
	h.StopOutOfOrder(jobs, id, ev)
	h.Clock.Advance(job.DefaultLease + time.Second)
	DeliverAll(t, jobs, ev, 2)
	if op := h.Do("GET", "/operations/"+id, nil, h.Admin()).Expect(t, 200, "").Map(t); op["status"] != "DONE" {
		t.Fatalf("after the resumed run = %v", op)
	}
}

// StopOutOfOrder runs the first run of CrashOutOfOrder: it stops with a
// chunk committed past the checkpoint (an earlier chunk held back never
// commits), the operation RUNNING and the run's lease still held. It
// resets jobs.Crash and jobs.WriteChunk.
func (h *Harness) StopOutOfOrder(jobs *job.Service, id string, ev events.S3Event) {
	t := h.T
	t.Helper()
	var (
		mu      sync.Mutex
		held    bool
		release = make(chan struct{})
		crashed bool
		rows    int64 // the checkpoint's rows after the last commit
	)
	jobs.WriteChunk = func(ctx context.Context, _ []types.TransactWriteItem) error {
		mu.Lock()
		if held || crashed {
			mu.Unlock()
			return nil
		}
		held = true
		mu.Unlock()
		select {
		case <-release:
			// The crash knob released the chunk before the committer
			// records the crash; the chunk fails only once the crash has
			// stopped the run (its context), so that the run ends as
			// crashed, not with this chunk's failure.
			<-ctx.Done()
			return ctx.Err()
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Minute):
			// No later chunk committed (the file fits in one chunk?): the
			// test fails below instead of waiting for its timeout.
			return errors.New("held chunk: no later chunk committed")
		}
	}
	jobs.Crash = func(cp operation.Checkpoint) bool {
		mu.Lock()
		defer mu.Unlock()
		if crashed || !held || cp.Rows > rows {
			rows = cp.Rows
			return false
		}
		// The checkpoint did not move: this chunk committed past it.
		crashed = true
		close(release)
		return true
	}
	DeliverAll(t, jobs, ev, 1)
	mu.Lock()
	ok := crashed
	mu.Unlock()
	if !ok {
		t.Fatal("the run did not commit a chunk past its held first chunk")
	}
	if op := h.Do("GET", "/operations/"+id, nil, h.Admin()).Expect(t, 200, "").Map(t); op["status"] != "RUNNING" {
		t.Fatalf("after the crash = %v", op)
	}
	jobs.WriteChunk, jobs.Crash = nil, nil
}

// JobFault is a way the runs of a job can go wrong: Run drives the
// captured job operation id, from its first event ev, through the fault
// to its end.
type JobFault struct {
	Name string
	Run  func(h *Harness, jobs *job.Service, id string, ev events.S3Event)
}

// JobFaults returns the faults a job must come through without applying
// a row twice or losing one: CrashAfterEveryCommit and
// CrashBeforeCommits, which fail the test unless they crashed at least
// minCrashes times, and TwoWorkers. Each leaves jobs.Crash or
// jobs.AfterDirect set (the caller resets them).
func JobFaults(minCrashes int) []JobFault {
	return []JobFault{
		{"CrashBeforeCommits", func(h *Harness, jobs *job.Service, id string, ev events.S3Event) {
			h.T.Helper()
			if crashes := h.CrashBeforeCommits(jobs, id, ev); crashes < minCrashes {
				h.T.Fatalf("crashes = %d, want at least %d", crashes, minCrashes)
			}
		}},
		{"CrashAfterEveryCommit", func(h *Harness, jobs *job.Service, id string, ev events.S3Event) {
			h.T.Helper()
			if crashes := h.CrashAfterEveryCommit(jobs, id, ev); crashes < minCrashes {
				h.T.Fatalf("crashes = %d, want at least %d", crashes, minCrashes)
			}
		}},
		{"TwoWorkers", func(h *Harness, jobs *job.Service, _ string, ev events.S3Event) {
			h.T.Helper()
			h.TwoWorkers(jobs, ev)
		}},
	}
}

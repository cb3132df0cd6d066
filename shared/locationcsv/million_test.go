package locationcsv_test

import (
	"bytes"
	"context"
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

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/loyalty-platform/platform/shared/job"
	ts "github.com/loyalty-platform/platform/shared/testsupport"
)

// TestLargeImport imports a generated file of LOCATIONCSV_ROWS new
// locations (skipped when unset; e.g. 1000000) for real, in several
// invocations (MaxRowsPerRun), and reports the throughput, the peak heap
// and the peak resident size of the process: the import streams its input
// and its results, and its title index has a fixed size, so memory stays
// flat whatever the file's size. The input is generated as the job reads
// it and the results parts are kept on disk (an S3 wrapper), so that the
// in-memory S3 stand-in does not count.
//
//	LOCATIONCSV_ROWS=1000000 go run ./localstack/cmd/testenv -- go test -run TestLargeImport -timeout 3h -v ./shared/locationcsv/
func TestLargeImport(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("LOCATIONCSV_ROWS"))
	if n <= 0 {
		t.Skip("set LOCATIONCSV_ROWS to run the large import")
	}
	h := ts.New(t)
	c := h.CaptureS3("jobs")
	g := genFile{rows: n}
	jobs := h.Deps.Jobs
	fake := &spoolS3{S3API: jobs.S3, dir: t.TempDir(), gen: g}
	jobs.S3 = fake
	jobs.MaxRowsPerRun = int64(max(n/10, 1))
	defer func() { jobs.S3, jobs.MaxRowsPerRun = fake.S3API, 0 }()

	ctx := context.Background()
	op, err := jobs.Start(ctx, job.StartRequest{
		TenantID: h.Tenant.ID, Namespace: "locations", Name: "import", Nonce: ts.Nonce(),
		Metadata: map[string]any{"dryRun": false, "suppressEvents": true}, Input: []byte(genHeader),
	})
	if err != nil {
		t.Fatal(err)
	}
	fake.inputKey = job.InputKey(h.Tenant.ID, op.ID)
	ev := c.Next(t)

	runtime.GC()
	var base runtime.MemStats
	runtime.ReadMemStats(&base)
	var peak uint64
	stop := samplePeak(&peak)
	start := time.Now()
	runs := 0
	for {
		if err := jobs.HandleS3(ctx, ev); err != nil {
			t.Fatal(err)
		}
		runs++
		got := h.Do("GET", "/operations/"+op.ID, nil, h.Admin()).Expect(t, 200, "").Map(t)
		if got["status"] == "DONE" {
			if counts(got) != [4]int{n, n, 0, 0} {
				t.Fatalf("operation = %v", got)
			}
			break
		}
		if got["status"] != "RUNNING" || runs > 20 {
			t.Fatalf("after %d runs: %v", runs, got)
		}
		t.Logf("run %d: %v rows in %v, peak heap %.1f MiB, peak RSS %.1f MiB", runs, counts(got)[0], time.Since(start).Round(time.Second), float64(peak)/(1<<20), float64(peakRSS())/(1<<20))
		ev = c.Next(t)
	}
	elapsed := time.Since(start)
	stop()
	t.Logf("%d rows in %d runs, %v: %.0f rows/s; heap in use before %.1f MiB, peak %.1f MiB; peak RSS of the process %.1f MiB; results file %d lines, %d bytes",
		n, runs, elapsed.Round(time.Second), float64(n)/elapsed.Seconds(), float64(base.HeapInuse)/(1<<20), float64(peak)/(1<<20), float64(peakRSS())/(1<<20), fake.resultLines, fake.resultBytes)
	if fake.resultLines != int64(n)+1 {
		t.Fatalf("results file has %d lines, want %d", fake.resultLines, n+1)
	}
}

// samplePeak samples the heap in use every 20 ms into peak (the highest
// seen) until the returned stop is called.
func samplePeak(peak *uint64) (stop func()) {
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

// peakRSS returns the peak resident size of the process (VmHWM), or 0.
func peakRSS() uint64 {
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

const genHeader = "title,geo_longitude,geo_latitude,state,tags,address.city,description\n"

// genFile is a file of rows each creating a location; every row has the
// same width.
type genFile struct{ rows int }

func (g genFile) row(i int) string {
	return fmt.Sprintf("Large %07d,%09.4f,%08.4f,ACTIVE,food|late,London,A place to eat and drink\n", i, float64(i%360)-179.5, float64(i%180)-89.5)
}
func (g genFile) width() int  { return len(g.row(0)) }
func (g genFile) size() int64 { return int64(len(genHeader)) + int64(g.rows)*int64(g.width()) }

// reader returns the file from byte offset from on.
func (g genFile) reader(from int64) io.Reader {
	hdr := int64(len(genHeader))
	if from < hdr {
		return io.MultiReader(strings.NewReader(genHeader[from:]), &genReader{g: g})
	}
	w := int64(g.width())
	r := &genReader{g: g, next: int((from - hdr) / w)}
	r.buf = []byte(g.row(r.next))[(from-hdr)%w:]
	r.next++
	return r
}

type genReader struct {
	g    genFile
	next int
	buf  []byte
}

func (r *genReader) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		if len(r.buf) == 0 {
			if r.next >= r.g.rows {
				break
			}
			r.buf = []byte(r.g.row(r.next))
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

// spoolS3 serves the input from a genFile, keeps the results parts in
// files and counts (without keeping) the results file; everything else
// goes to the S3 stand-in.
type spoolS3 struct {
	job.S3API
	dir      string
	gen      genFile
	inputKey string

	mu                       sync.Mutex
	resultLines, resultBytes int64
}

func (s *spoolS3) path(key string) string {
	return filepath.Join(s.dir, strings.ReplaceAll(key, "/", "_"))
}

func (s *spoolS3) GetObject(ctx context.Context, in *s3.GetObjectInput, opts ...func(*s3.Options)) (*s3.GetObjectOutput, error) {
	key := aws.ToString(in.Key)
	switch {
	case s.inputKey != "" && key == s.inputKey:
		var from int64
		if r := aws.ToString(in.Range); r != "" {
			if _, err := fmt.Sscanf(r, "bytes=%d-", &from); err != nil {
				return nil, err
			}
		}
		return &s3.GetObjectOutput{
			Body: io.NopCloser(s.gen.reader(from)), ContentLength: aws.Int64(s.gen.size() - from), ETag: aws.String(`"generated"`),
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

func (s *spoolS3) PutObject(ctx context.Context, in *s3.PutObjectInput, opts ...func(*s3.Options)) (*s3.PutObjectOutput, error) {
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

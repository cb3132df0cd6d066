package job

import (
	"bufio"
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"
	"github.com/loyalty-platform/platform/shared/domain/operation"
	"github.com/loyalty-platform/platform/shared/platform/apierr"
)

// Run is one invocation's work on a claimed operation.
type Run struct {
	svc      *Service
	lease    *operation.Lease
	started  time.Time
	deadline time.Time
	// rows and bytes consumed by this run (for etaMs and MaxRowsPerRun).
	rows, bytes int64
	// inputETag is the ETag of the input file (OpenInput), recorded in
	// the checkpoint by the first commit.
	inputETag string
	// afterStop is AfterStop's answer, as of the claim.
	afterStop bool
}

// TenantID is the tenant of the operation.
func (r *Run) TenantID() string { return r.lease.TenantID }

// Operation is the operation as of the claim or the last commit.
func (r *Run) Operation() operation.Operation { return r.lease.Operation }

// Checkpoint is the last committed checkpoint.
func (r *Run) Checkpoint() operation.Checkpoint { return r.lease.Checkpoint }

// Result is the last committed result (counters so far).
func (r *Run) Result() operation.Result { return r.lease.Result }

// RunNumber is the number of this run among the operation's runs (1 for the
// first claim); it names the run's part objects.
func (r *Run) RunNumber() int { return r.lease.Claims }

// AfterStop reports whether an earlier run of the operation stopped
// other than by yielding (it crashed, failed, or lost its lease): its
// direct writes (Row.Direct) of chunks it did not commit may be in the
// table past the checkpoint.
func (r *Run) AfterStop() bool { return r.afterStop }

// ShouldYield reports whether the run should commit what it has (pending
// rows not committed yet) and continue in a new invocation: the
// invocation's deadline is near, or the MaxRowsPerRun knob is reached.
func (r *Run) ShouldYield(pending int64) bool {
	if m := r.svc.MaxRowsPerRun; m > 0 && r.rows+pending >= m {
		return true
	}
	return time.Until(r.deadline) < r.svc.stopBefore()
}

// ETA estimates the milliseconds left from the bytes this run consumed so
// far and the bytes of the input left after cp.
func (r *Run) ETA(cp operation.Checkpoint) int64 {
	left := cp.InputSize - cp.Offset
	if left <= 0 || r.bytes <= 0 {
		return 0
	}
	elapsed := r.svc.Clock.Now().Sub(r.started)
	return int64(float64(elapsed.Milliseconds()) * float64(left) / float64(r.bytes))
}

// Step commits one step of a kind's loop (Commit: its results lines, cp
// and res, no other writes) and tells how the loop goes on: done after
// its last step, ErrYield when the invocation should yield now, else the
// checkpoint and result to go on from.
func (r *Run) Step(ctx context.Context, lines [][]string, cp operation.Checkpoint, res operation.Result, last bool) (operation.Checkpoint, operation.Result, bool, error) {
	if err := r.Commit(ctx, lines, cp, res, nil); err != nil {
		return cp, res, false, err
	}
	cp, res = r.Checkpoint(), r.Result()
	switch {
	case last:
		return cp, res, true, nil
	case r.ShouldYield(0):
		return cp, res, false, ErrYield
	}
	return cp, res, false, nil
}

// Commit writes the results lines of a batch to a new part object, then
// records cp and res together with items (the batch's writes) in one
// transaction conditional on the lease and the previous checkpoint. It
// counts rows toward MaxRowsPerRun. On *operation.ItemsFailedError nothing
// was committed and the kind may retry the batch without the failed rows;
// on operation.ErrLeaseLost the run must stop.
func (r *Run) Commit(ctx context.Context, lines [][]string, cp operation.Checkpoint, res operation.Result, items []types.TransactWriteItem) error {
	l := r.lease
	cp.PartRuns = append([]int(nil), l.Checkpoint.PartRuns...)
	if cp.InputETag == "" {
		cp.InputETag = r.inputETag
	}
	if len(lines) > 0 {
		var buf bytes.Buffer
		w := csv.NewWriter(&buf)
		if err := w.WriteAll(lines); err != nil {
			return fmt.Errorf("results part: %w", err)
		}
		n := l.Checkpoint.Parts + 1
		if err := r.svc.putBytes(ctx, partKey(l.TenantID, l.ID, n, l.Claims), buf.Bytes(), "text/csv"); err != nil {
			return fmt.Errorf("results part %d: %w", n, err)
		}
		cp.Parts, cp.PartBytes = n, l.Checkpoint.PartBytes+int64(buf.Len())
		cp.PartRuns = append(cp.PartRuns, l.Claims)
	} else {
		cp.Parts, cp.PartBytes = l.Checkpoint.Parts, l.Checkpoint.PartBytes
	}
	prev := l.Checkpoint
	if err := r.svc.Ops.Commit(ctx, l, cp, res, r.svc.lease(), items); err != nil {
		return err
	}
	r.rows += cp.Rows - prev.Rows
	if cp.Offset > prev.Offset {
		r.bytes += cp.Offset - prev.Offset
	}
	if r.svc.Crash != nil && r.svc.Crash(cp) {
		return errCrashed
	}
	return nil
}

// Input streams an import's input file from the checkpoint on.
type Input struct {
	// Header is the header row (read from the file on a first run, from
	// the checkpoint on a resumed one).
	Header []string
	// Size is the size of the file in bytes.
	Size int64

	body   io.ReadCloser
	csv    *csv.Reader
	base   int64
	record int64
	// first is the offset of the first row read; prev the end of the
	// last one.
	first, prev int64
	// islands are the chunks committed past the checkpoint by earlier
	// runs, by input offset: their rows are skipped.
	islands []operation.Chunk
	// committed is every such chunk (for the Committer).
	committed []operation.Chunk
}

// ErrInputChanged FAILS a job whose input file was replaced after its
// first run read it: a resumed run would read another file from the
// checkpoint's offset.
var ErrInputChanged = &FileError{Code: apierr.Conflict, Message: "the input file changed while the job ran"}

// OpenInput opens the input file at the checkpoint. On a first run it reads
// the header row: a file larger than the service's MaxInput, an empty file,
// or one that is not UTF-8 text, is a *FileError. The first run notes the
// file's ETag (the first commit puts it in the checkpoint); a resumed run
// reads on only while the file still has it (If-Match, and the answer's
// ETag is compared too), else it returns ErrInputChanged. The caller must
// Close the input.
func (r *Run) OpenInput(ctx context.Context) (*Input, error) {
	l := r.lease
	cp := l.Checkpoint
	key := InputKey(l.TenantID, l.ID)
	in := &Input{Header: cp.Header, Size: cp.InputSize}
	r.inputETag = cp.InputETag
	// No chunk of an earlier run commits from here on; those that did
	// past the checkpoint are skipped.
	if err := r.svc.Ops.Fence(ctx, l); err != nil {
		return nil, err
	}
	err := r.svc.Ops.Chunks(ctx, l.TenantID, l.ID, cp.Offset, func(c operation.Chunk) error {
		in.islands = append(in.islands, c)
		in.committed = append(in.committed, c)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if cp.Header != nil && cp.InputSize > 0 && cp.Offset >= cp.InputSize {
		in.csv = csv.NewReader(bytes.NewReader(nil))
		in.base, in.first, in.prev = cp.Offset, cp.Offset, cp.Offset
		return in, nil
	}
	get := &s3.GetObjectInput{Bucket: aws.String(r.svc.Bucket), Key: aws.String(key)}
	if cp.Header != nil {
		get.Range = aws.String(fmt.Sprintf("bytes=%d-", cp.Offset))
		if cp.InputETag != "" {
			get.IfMatch = aws.String(cp.InputETag)
		}
	}
	out, err := r.svc.S3.GetObject(ctx, get, noResponseChecksum)
	if err != nil {
		if isNoSuchKey(err) {
			return nil, &FileError{Code: apierr.NotFound, Message: "the input file is missing"}
		}
		if isPreconditionFailed(err) {
			return nil, ErrInputChanged
		}
		return nil, fmt.Errorf("open input: %w", err)
	}
	in.body = out.Body
	if cp.InputETag == "" {
		r.inputETag = aws.ToString(out.ETag)
	} else if etag := aws.ToString(out.ETag); etag != "" && etag != cp.InputETag {
		// Not every S3 stand-in honours If-Match on GET.
		in.Close()
		return nil, ErrInputChanged
	}
	br := bufio.NewReaderSize(out.Body, 64<<10)
	if cp.Header != nil {
		in.base, in.first, in.prev = cp.Offset, cp.Offset, cp.Offset
		in.csv = newCSVReader(br)
		return in, nil
	}
	in.Size = aws.ToInt64(out.ContentLength)
	if max := r.svc.maxInput(); in.Size > max {
		in.Close()
		return nil, &FileError{Code: apierr.PayloadTooLarge, Message: fmt.Sprintf("file: the file has %d bytes: at most %d", in.Size, max)}
	}
	// A UTF-8 byte order mark (Excel writes one) is not part of the data.
	if b, _ := br.Peek(3); bytes.Equal(b, []byte{0xEF, 0xBB, 0xBF}) {
		_, _ = br.Discard(3)
		in.base = 3
	}
	in.csv = newCSVReader(br)
	header, err := in.csv.Read()
	switch {
	case errors.Is(err, io.EOF):
		in.Close()
		return nil, BadFile("file: the file is empty; the first row must be the header")
	case err != nil:
		in.Close()
		return nil, BadFile("file: the header row is not valid CSV (%s)", csvError(err))
	}
	for _, h := range header {
		if !utf8.ValidString(h) || bytes.IndexByte([]byte(h), 0) >= 0 {
			in.Close()
			return nil, BadFile("file: not a CSV text file (the header is not UTF-8 text)")
		}
	}
	in.Header = header
	in.first = in.base + in.csv.InputOffset()
	in.prev = in.first
	return in, nil
}

func newCSVReader(r io.Reader) *csv.Reader {
	c := csv.NewReader(r)
	c.FieldsPerRecord = -1
	return c
}

// Read returns the next record and the byte offset just after it, for the
// checkpoint. A record that is not valid CSV is returned as a *RowError
// (with the offset, so the caller can report it and go on); the end of the
// input is io.EOF.
func (in *Input) Read() (rec []string, offset int64, err error) {
	rec, _, offset, err = in.ReadRow()
	return rec, offset, err
}

// ReadRow is Read that also returns the offset where the record starts.
// The rows of chunks that earlier runs committed past the checkpoint are
// skipped.
func (in *Input) ReadRow() (rec []string, start, end int64, err error) {
	for len(in.islands) > 0 && in.islands[0].From == in.prev {
		to := in.islands[0].To
		for in.prev < to {
			_, err := in.csv.Read()
			in.prev = in.base + in.csv.InputOffset()
			if errors.Is(err, io.EOF) {
				break
			}
			var pe *csv.ParseError
			if err != nil && !errors.As(err, &pe) {
				return nil, in.prev, in.prev, fmt.Errorf("read input: %w", err)
			}
		}
		if in.prev != to {
			return nil, in.prev, in.prev, ErrInputChanged
		}
		in.islands = in.islands[1:]
	}
	start = in.prev
	rec, end, err = in.read()
	in.prev = end
	if errors.Is(err, io.EOF) && len(in.islands) > 0 {
		return nil, start, end, ErrInputChanged
	}
	return rec, start, end, err
}

func (in *Input) read() (rec []string, offset int64, err error) {
	rec, err = in.csv.Read()
	offset = in.base + in.csv.InputOffset()
	if err != nil {
		if errors.Is(err, io.EOF) {
			return nil, offset, io.EOF
		}
		var pe *csv.ParseError
		if errors.As(err, &pe) {
			return nil, offset, &RowError{Message: csvError(err)}
		}
		return nil, offset, fmt.Errorf("read input: %w", err)
	}
	for _, f := range rec {
		if !utf8.ValidString(f) {
			return rec, offset, &RowError{Message: "the row is not valid UTF-8 text"}
		}
	}
	return rec, offset, nil
}

// Close closes the input.
func (in *Input) Close() {
	if in.body != nil {
		_ = in.body.Close()
	}
}

// RowError is an input row that cannot be read as CSV.
type RowError struct{ Message string }

func (e *RowError) Error() string { return e.Message }

func csvError(err error) string {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return fmt.Sprintf("CSV error on line %d: %v", pe.Line, pe.Err)
	}
	return "unreadable"
}

func isNoSuchKey(err error) bool {
	var nsk *s3types.NoSuchKey
	var nf *s3types.NotFound
	if errors.As(err, &nsk) || errors.As(err, &nf) {
		return true
	}
	var api smithy.APIError
	return errors.As(err, &api) && (api.ErrorCode() == "NoSuchKey" || api.ErrorCode() == "NotFound")
}

// isPreconditionFailed reports an S3 answer 412 (If-Match not met).
func isPreconditionFailed(err error) bool {
	var api smithy.APIError
	if errors.As(err, &api) && api.ErrorCode() == "PreconditionFailed" {
		return true
	}
	var re *smithyhttp.ResponseError
	return errors.As(err, &re) && re.HTTPStatusCode() == http.StatusPreconditionFailed
}

// noResponseChecksum turns the SDK's validation of response checksums off
// for reads: the job reads ranges and stops reading early (both make the
// validation fail or warn), and the objects it reads are its own.
func noResponseChecksum(o *s3.Options) {
	o.ResponseChecksumValidation = aws.ResponseChecksumValidationWhenRequired
}

// putBytes stores a small object.
func (s *Service) putBytes(ctx context.Context, key string, body []byte, contentType string) error {
	_, err := s.S3.PutObject(ctx, &s3.PutObjectInput{
		Bucket: aws.String(s.Bucket), Key: aws.String(key), Body: bytes.NewReader(body),
		ContentLength: aws.Int64(int64(len(body))), ContentType: aws.String(contentType),
	})
	if err != nil {
		return fmt.Errorf("put %s: %w", key, err)
	}
	return nil
}

package job

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/loyalty-platform/platform/shared/domain/operation"
	"github.com/loyalty-platform/platform/shared/platform/apierr"
	"github.com/loyalty-platform/platform/shared/platform/csvcell"
	"github.com/loyalty-platform/platform/shared/platform/metrics"
	"github.com/loyalty-platform/platform/shared/platform/web"
)

// heartbeatEvery is how many part objects the assembly copies between two
// extensions of the lease.
const heartbeatEvery = 200

// finish writes the results file (the header and every part, in order) and
// sets the operation DONE. Run again after a crash, it writes the same file.
func (s *Service) finish(ctx context.Context, r *Run) error {
	l := r.lease
	if err := s.assemble(ctx, l, false); err != nil {
		if errors.Is(err, operation.ErrLeaseLost) {
			return nil
		}
		_ = s.Ops.Release(context.WithoutCancel(ctx), l)
		return err
	}
	res := l.Result
	res.EtaMs = 0
	_, err := s.Ops.Finish(ctx, l, res)
	if err != nil && !errors.Is(err, operation.ErrLeaseLost) {
		return err
	}
	if err == nil {
		// Once, by the run that finished the operation. Exports count no
		// imported or failed rows.
		metrics.Count(ctx, l.TenantID, metrics.ImportRowsOK, int(res.Imported))
		metrics.Count(ctx, l.TenantID, metrics.ImportRowsFailed, int(res.Errors))
	}
	s.log().Info("job: done", "operationId", l.ID, "total", res.Total, "imported", res.Imported, "skipped", res.Skipped, "errors", res.Errors)
	return nil
}

// assemble streams the header and the part objects into the results object
// without holding the file in memory: an io.Pipe feeds PutObject. The SDK
// needs four things for a body it cannot seek: the length (known: the
// header plus the parts' bytes recorded in the checkpoint); an unsigned
// payload (it cannot hash a stream ahead of sending it; over HTTPS S3
// accepts UNSIGNED-PAYLOAD); no request checksum (the default CRC32 needs
// a seekable body, or TLS with a trailing checksum); and a body type other
// than *io.PipeReader, which the SDK would send chunked without a
// Content-Length (S3 answers 411 MissingContentLength). Real S3 and the
// local gofakes3 (plain HTTP) both accept this request.
//
// With partial (a job that FAILED after applying rows), the file also
// lists the chunks committed past the checkpoint: it holds the results of
// exactly the rows applied, in input order, so that the admin can tell
// them from the rows to import again.
func (s *Service) assemble(ctx context.Context, l *operation.Lease, partial bool) error {
	cp := l.Checkpoint
	var head bytes.Buffer
	w := csv.NewWriter(&head)
	// Header cells are text (csvcell); each kind writes its rows' cells.
	if err := w.Write(csvcell.Row(cp.Columns, nil)); err != nil {
		return fmt.Errorf("results header: %w", err)
	}
	w.Flush()
	if len(cp.PartRuns) != cp.Parts {
		return fmt.Errorf("results: checkpoint lists %d part runs for %d parts", len(cp.PartRuns), cp.Parts)
	}
	// The parts: those of commits with a checkpoint each (exports), then
	// those of the chunks of an import, in input order.
	keys := make([]string, 0, cp.Parts)
	for n := 1; n <= cp.Parts; n++ {
		keys = append(keys, partKey(l.TenantID, l.ID, n, cp.PartRuns[n-1]))
	}
	var chunkBytes, pastBytes int64
	err := s.Ops.Chunks(ctx, l.TenantID, l.ID, 0, func(c operation.Chunk) error {
		keys = append(keys, chunkPartKey(l.TenantID, l.ID, c.From, c.Run))
		chunkBytes += c.PartBytes
		if c.From >= cp.Offset {
			pastBytes += c.PartBytes
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("results: %w", err)
	}
	size := cp.PartBytes
	if partial {
		size += pastBytes
	} else if chunkBytes > cp.PartBytes {
		return fmt.Errorf("results: the chunks' parts have %d bytes, more than the checkpoint's %d", chunkBytes, cp.PartBytes)
	}
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		err := s.copyParts(ctx, l, head.Bytes(), keys, pw)
		pw.CloseWithError(err)
		done <- err
	}()
	_, err = s.S3.PutObject(ctx, &s3.PutObjectInput{
		Bucket: aws.String(s.Bucket), Key: aws.String(ResultsKey(l.TenantID, l.ID)),
		Body:          struct{ io.Reader }{pr},
		ContentLength: aws.Int64(int64(head.Len()) + size),
		ContentType:   aws.String("text/csv; charset=utf-8"),
	}, s3.WithAPIOptions(v4.SwapComputePayloadSHA256ForUnsignedPayloadMiddleware), func(o *s3.Options) {
		o.RequestChecksumCalculation = aws.RequestChecksumCalculationWhenRequired
	})
	pr.CloseWithError(errors.New("results upload ended"))
	copyErr := <-done
	if errors.Is(copyErr, operation.ErrLeaseLost) {
		return copyErr
	}
	if err != nil {
		return fmt.Errorf("write results file: %w", err)
	}
	return nil
}

// partsAhead is how many part objects the assembly reads ahead of the one
// it writes: a results file of a million rows has thousands of parts, and
// reading them one after another would wait on S3 for each.
const partsAhead = 32

// copyParts writes the header and then every part object into w, in
// order, reading up to partsAhead parts at once and extending the lease
// now and then.
func (s *Service) copyParts(ctx context.Context, l *operation.Lease, head []byte, keys []string, w io.Writer) error {
	if _, err := w.Write(head); err != nil {
		return err
	}
	cp := l.Checkpoint
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	type part struct {
		body []byte
		err  error
	}
	fetch := func(n int) <-chan part {
		ch := make(chan part, 1)
		go func() {
			out, err := s.S3.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(s.Bucket), Key: aws.String(keys[n-1])}, noResponseChecksum)
			if err != nil {
				ch <- part{err: fmt.Errorf("read results part %d: %w", n, err)}
				return
			}
			b, err := io.ReadAll(out.Body)
			_ = out.Body.Close()
			if err != nil {
				err = fmt.Errorf("read results part %d: %w", n, err)
			}
			ch <- part{body: b, err: err}
		}()
		return ch
	}
	var ahead []<-chan part
	next := 1
	for n := 1; n <= len(keys); n++ {
		for ; next <= len(keys) && next < n+partsAhead; next++ {
			ahead = append(ahead, fetch(next))
		}
		if n%heartbeatEvery == 0 {
			if err := s.Ops.Commit(ctx, l, cp, l.Result, s.lease(), nil); err != nil {
				return err
			}
		}
		p := <-ahead[0]
		ahead = ahead[1:]
		if p.err != nil {
			return p.err
		}
		if _, err := w.Write(p.body); err != nil {
			return fmt.Errorf("copy results part %d: %w", n, err)
		}
	}
	return nil
}

// DefaultInlineLimit is the largest results file File returns in the
// response body (Service.InlineLimit overrides it). A Lambda response is at
// most 6 MB, and the CSV travels as a JSON string in it (quotes and line
// breaks escaped), so larger files are answered 303 See Other with a
// presigned URL of the file.
const DefaultInlineLimit = 2 << 20

// File answers the results file of a DONE operation of the tenant whose
// namespace and name match, or of a FAILED one whose results file lists
// the rows it applied (result.href set): inline as text/csv up to the
// inline limit, otherwise a redirect (303) to a presigned S3 URL. Anything
// else (unknown id, another tenant's or kind's operation, not finished
// yet) is NOT_FOUND.
func (s *Service) File(ctx context.Context, tenantID, id, namespace, name string) (web.Response, error) {
	op, err := s.Ops.Get(ctx, tenantID, id)
	if err != nil {
		return web.Response{}, err
	}
	if op.Namespace != namespace || op.Name != name {
		return web.Response{}, operation.ErrNotFound
	}
	if op.Status != operation.Done && (op.Status != operation.Failed || op.Result == nil || op.Result.Href == "") {
		return web.Response{}, apierr.Errorf(apierr.NotFound, "the file is not ready: operation %s is %s", id, op.Status)
	}
	key := ResultsKey(tenantID, id)
	head, err := s.S3.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(s.Bucket), Key: aws.String(key)})
	if err != nil {
		if isNoSuchKey(err) {
			return web.Response{}, apierr.New(apierr.NotFound, "the file has expired")
		}
		return web.Response{}, fmt.Errorf("download %s: %w", key, err)
	}
	filename := fmt.Sprintf("%s-%s-%s.csv", namespace, name, id)
	limit := s.InlineLimit
	if limit <= 0 {
		limit = DefaultInlineLimit
	}
	if size := aws.ToInt64(head.ContentLength); size > limit {
		req, err := s.Presign.PresignGetObject(ctx, &s3.GetObjectInput{
			Bucket: aws.String(s.Bucket), Key: aws.String(key),
			ResponseContentDisposition: aws.String(`attachment; filename="` + filename + `"`),
		}, s3.WithPresignExpires(s.presignExpiry()))
		if err != nil {
			return web.Response{}, fmt.Errorf("presign %s: %w", key, err)
		}
		return web.Response{Status: http.StatusSeeOther, Header: http.Header{"Location": {req.URL}}}, nil
	}
	out, err := s.S3.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(s.Bucket), Key: aws.String(key)}, noResponseChecksum)
	if err != nil {
		return web.Response{}, fmt.Errorf("download %s: %w", key, err)
	}
	header := http.Header{
		"Content-Type":        {"text/csv; charset=utf-8"},
		"Content-Disposition": {`attachment; filename="` + filename + `"`},
	}
	if out.ContentLength != nil {
		header.Set("Content-Length", strconv.FormatInt(*out.ContentLength, 10))
	}
	// Serve writes the body and closes it.
	return web.Response{Status: http.StatusOK, Header: header, Body: out.Body}, nil
}

// ResultsHref is the API path of the results file of op's kind (GET
// /<namespace>/<name>s/{fileId}: /awards/imports/..., /locations/exports/...),
// or "" for a kind without one.
func ResultsHref(op operation.Operation) string {
	switch op.Name {
	case "import", "export":
		return "/" + op.Namespace + "/" + op.Name + "s/" + op.ID
	}
	return ""
}

// failApplied sets the operation of l FAILED with e after it applied
// rows: its result counts the rows applied (the checkpoint's and those of
// the chunks committed past it) and, for a kind with a results file, the
// file lists exactly those rows (result.href). It returns
// operation.ErrLeaseLost when another run took the operation over.
func (s *Service) failApplied(ctx context.Context, l *operation.Lease, e operation.Error, message func(operation.Result) string) error {
	res, err := s.Ops.Applied(ctx, l.TenantID, l.ID, l.Checkpoint, l.Result)
	if err != nil {
		return err
	}
	res.EtaMs = 0
	res.Href = ""
	if href := ResultsHref(l.Operation); href != "" && l.Checkpoint.Columns != nil {
		if err := s.assemble(ctx, l, true); err != nil {
			if errors.Is(err, operation.ErrLeaseLost) {
				return err
			}
			// The counts still go out; the file is only logged missing.
			s.log().Error("job: results of a failed operation not written", "operationId", l.ID, "err", err.Error())
		} else {
			res.Href = href
		}
	}
	res.Message = message(res)
	_, err = s.Ops.Fail(ctx, l, e, false, &res)
	return err
}

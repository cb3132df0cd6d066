package job

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/loyalty-platform/platform/shared/domain/operation"
	"github.com/loyalty-platform/platform/shared/platform/clock"
)

// MaxDirectUpload is the largest input file a job-starting call accepts in
// its own body (multipart/form-data). The request reaches the function
// through API Gateway (10 MB payload) and a synchronous Lambda invocation
// (6 MB event); a multipart body is binary, so API Gateway base64-encodes
// it (4/3 larger) and the headers share the 6 MB: 4 MiB of body is what
// fits with room to spare. Larger files use a presigned upload URL
// (StartRequest.Upload).
const MaxDirectUpload = 4 << 20

// StartRequest is a job-starting call.
type StartRequest struct {
	TenantID  string
	Namespace string
	Name      string
	// Nonce is the parsed x-platform-req-nonce header.
	Nonce string
	// Metadata holds the job's parameters; they also identify the request
	// (with the endpoint and the input file) for the nonce check.
	Metadata map[string]any
	// Identity, when set, identifies the request for the nonce check
	// instead of Metadata: metadata that records state as of the first
	// call (such as a snapshot of what the job works on) must not make a
	// repeat of the same request look like another one.
	Identity map[string]any
	// Input is the input file sent with the call, or nil.
	Input []byte
	// Upload asks for a presigned URL to upload the input to instead.
	Upload bool
}

// Start starts a job: it creates the operation (or returns the one an
// earlier call with the same nonce created) and stores the input (an
// import's file, or a start object for a job without input) in the files
// bucket, whose ObjectCreated notification runs the jobs function. With
// Upload, the operation waits for the client's upload instead and carries a
// presigned PUT URL. A repeated call returns the same operation and does
// nothing else, except that it stores the (identical) input when the first
// call failed before storing it, and that it hands out a fresh upload URL
// while the upload is still awaited.
func (s *Service) Start(ctx context.Context, req StartRequest) (operation.Operation, error) {
	fp, err := fingerprint(req)
	if err != nil {
		return operation.Operation{}, err
	}
	in := operation.StartInput{
		Namespace: req.Namespace, Name: req.Name, EntityID: req.TenantID, Nonce: req.Nonce,
		Fingerprint: fp, Metadata: req.Metadata,
	}
	if req.Upload {
		// The URL expires after presignExpiry; a short grace covers the
		// notification's delay.
		in.InputDeadline = s.Clock.Now().Add(s.presignExpiry() + 5*time.Minute)
	}
	st, err := s.Ops.Start(ctx, req.TenantID, in)
	if err != nil {
		return operation.Operation{}, err
	}
	op := st.Operation
	if st.InputStored {
		return op, nil
	}
	switch {
	case req.Upload:
		if op.Status != operation.Pending {
			return op, nil
		}
		key := InputKey(req.TenantID, op.ID)
		p, err := s.Presign.PresignPutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(s.Bucket), Key: aws.String(key)},
			s3.WithPresignExpires(s.presignExpiry()))
		if err != nil {
			return operation.Operation{}, fmt.Errorf("presign %s: %w", key, err)
		}
		headers := map[string]string{}
		for k, vs := range p.SignedHeader {
			if k == "Host" || len(vs) == 0 {
				continue
			}
			headers[k] = vs[0]
		}
		op.Upload = &operation.Upload{URL: p.URL, Method: p.Method, ExpiresAt: clock.Stamp(s.Clock.Now().Add(s.presignExpiry())), Headers: headers}
		return op, nil
	case req.Input != nil:
		if err := s.putBytes(ctx, InputKey(req.TenantID, op.ID), req.Input, "text/csv"); err != nil {
			return operation.Operation{}, fmt.Errorf("store input: %w", err)
		}
	default:
		body := fmt.Sprintf(`{"operationId":%q}`, op.ID)
		if err := s.putBytes(ctx, StartKey(req.TenantID, op.ID), []byte(body), "application/json"); err != nil {
			return operation.Operation{}, fmt.Errorf("store start object: %w", err)
		}
	}
	if err := s.Ops.MarkInputStored(ctx, req.TenantID, op.ID); err != nil {
		return operation.Operation{}, err
	}
	return op, nil
}

// fingerprint identifies a request: its endpoint (namespace and name), its
// parameters (Identity, else Metadata), and its input file (by SHA-256) or the wish to upload one.
func fingerprint(req StartRequest) (string, error) {
	id := req.Metadata
	if req.Identity != nil {
		id = req.Identity
	}
	params, err := json.Marshal(id) // map keys are sorted
	if err != nil {
		return "", fmt.Errorf("fingerprint: %w", err)
	}
	h := sha256.New()
	fmt.Fprintf(h, "%s\n%s\n%s\n", req.Namespace, req.Name, params)
	switch {
	case req.Upload:
		h.Write([]byte("upload\n"))
	case req.Input != nil:
		sum := sha256.Sum256(req.Input)
		fmt.Fprintf(h, "input %s\n", hex.EncodeToString(sum[:]))
	default:
		h.Write([]byte("none\n"))
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

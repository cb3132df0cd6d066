// Package operation is the platform's asynchronous job record: the API's
// Operation resource, the duplicate protection of job-starting calls (the
// x-platform-req-nonce header), and the lease and checkpoint the jobs
// function keeps on it while it works (see shared/platform/job). Operations live in
// the Operations table together with their nonce items; GET
// /operations/{operationId} reads one.
//
// Status values and transitions (the API names only DONE):
//
//	PENDING  created by the API; waiting for its input file or for the jobs function
//	RUNNING  claimed by the jobs function at least once; may span several invocations
//	DONE     finished; result.href names the results file
//	FAILED   the input could not be read (or never arrived); error says why
//
//	PENDING -> RUNNING -> DONE | FAILED, and PENDING -> FAILED.
//
// DONE and FAILED are final.
package operation

import (
	"crypto/rand"
	"encoding/hex"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/loyalty-platform/platform/shared/platform/apierr"
	"github.com/loyalty-platform/platform/shared/platform/web"
)

// Status is the state of an operation.
type Status string

// The statuses of an operation.
const (
	Pending Status = "PENDING"
	Running Status = "RUNNING"
	Done    Status = "DONE"
	Failed  Status = "FAILED"
)

// Final reports whether s is DONE or FAILED.
func (s Status) Final() bool { return s == Done || s == Failed }

// Lifetime is how long an operation, its nonce and its files are kept: the
// files bucket expires jobs/ objects after 30 days (template.yaml), and
// the items carry expiresAt for DynamoDB TTL.
const Lifetime = 30 * 24 * time.Hour

// Operation is an asynchronous job as the API returns it (the API's
// Operation, with `metadata` and `isRetryable` on every operation).
type Operation struct {
	ID        string `json:"_id"`
	TenantID  string `json:"tenantId"`
	Namespace string `json:"namespace"`
	// EntityID is the entity the job works on; the tenant id for
	// tenant-wide jobs such as location import and export.
	EntityID string `json:"entityId"`
	Nonce    string `json:"nonce"`
	Name     string `json:"name"`
	Status   Status `json:"status"`
	// Result is null until the job records progress.
	Result *Result `json:"result"`
	// Error is null unless the job FAILED.
	Error *Error `json:"error"`
	// Metadata holds the job's parameters as the request gave them.
	Metadata map[string]any `json:"metadata"`
	// IsRetryable tells whether repeating the request (with a new nonce)
	// may succeed where this operation FAILED.
	IsRetryable bool   `json:"isRetryable"`
	CreatedAt   string `json:"createdAt"`
	UpdatedAt   string `json:"updatedAt"`
	// EndedAt is null until the operation is DONE or FAILED.
	EndedAt *string `json:"endedAt"`
	// Upload is only in the answer of a job-starting call that asked for a
	// presigned upload URL (and only while the input is awaited).
	Upload *Upload `json:"upload,omitempty"`
}

// Result is the progress and outcome of a job.
type Result struct {
	Message string `json:"message"`
	// EtaMs estimates the milliseconds left (0 when done).
	EtaMs    int64 `json:"etaMs"`
	Total    int64 `json:"total"`
	Skipped  int64 `json:"skipped"`
	Imported int64 `json:"imported"`
	Errors   int64 `json:"errors"`
	// Granted counts the members a segment grant granted (the legacy
	// POST /perks/{perkId}/grant with segmentId); absent on other jobs.
	Granted *int64 `json:"granted,omitempty"`
	// Counted counts the awards a points liability rebuild counted
	// (POST /reports/points-liability/rebuild); absent on other jobs.
	Counted *int64 `json:"counted,omitempty"`
	// Href is the API path of the results file, once it exists.
	Href string `json:"href,omitempty"`
}

// Error is why an operation FAILED.
type Error struct {
	Code    string `json:"code" dynamodbav:"code"`
	Message string `json:"message" dynamodbav:"message"`
}

// Upload is a presigned S3 request that uploads the job's input.
type Upload struct {
	URL       string `json:"url"`
	Method    string `json:"method"`
	ExpiresAt string `json:"expiresAt"`
	// Headers must be sent with the upload as they are.
	Headers map[string]string `json:"headers,omitempty"`
}

// Sentinel errors.
var (
	ErrNotFound = apierr.New(apierr.NotFound, "operation not found")
	// ErrNonceReused is a nonce sent again with a different request (another
	// endpoint, other parameters or another file).
	ErrNonceReused = &apierr.Error{Code: apierr.Conflict, Message: web.HeaderNonce + ": this nonce was used for a different request; send a new GUID for a new request", Field: web.HeaderNonce}
	// ErrLeaseLost means another run took the operation over (or it ended):
	// the caller must stop without writing anything more.
	ErrLeaseLost = apierr.New(apierr.Conflict, "the operation is no longer leased by this run")
)

// guidRe and idRe are compiled on first use, not at every cold start.
var guidRe = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)
})

// ParseNonce validates the x-platform-req-nonce header: a GUID in its
// 8-4-4-4-12 hexadecimal form, any case (stored lower-case). A missing or
// malformed nonce is VALIDATION_FAILED naming the header.
func ParseNonce(v string) (string, error) {
	v = strings.TrimSpace(v)
	if v == "" {
		return "", apierr.Invalid(web.HeaderNonce, "is required: a new GUID per call, the same GUID to repeat a call")
	}
	if !guidRe().MatchString(v) {
		return "", apierr.Invalid(web.HeaderNonce, "must be a GUID such as 3f2504e0-4f89-41d3-9a0c-0305e82c3301")
	}
	return strings.ToLower(v), nil
}

var idRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[0-9a-f]{24}$`) })

// ValidID reports whether id has the form of an operation id (24 lower-case
// hexadecimal characters); anything else cannot exist and is NOT_FOUND.
func ValidID(id string) bool { return idRe().MatchString(id) }

// newID returns a new operation id.
func newID() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

package job

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"

	"github.com/aws/aws-lambda-go/events"
	"github.com/loyalty-platform/platform/shared/domain/operation"
	"github.com/loyalty-platform/platform/shared/platform/apierr"
)

// Failed invocations. S3 invokes the jobs function asynchronously; Lambda
// retries a failed invocation twice (EventInvokeConfig) and then sends a
// destination record (DestinationRecord: the S3 event and the error) to
// the function's OnFailure destination, the JobsFailedQueue SQS queue,
// whose messages Lambda delivers back to the function (template.yaml).
// HandleSQS FAILS the operation of each such record, so that a job whose
// every invocation crashed or timed out does not stay RUNNING for ever.

// StoppedError is the error of an operation whose job stopped for good: the
// invocations that ran it failed (a crash, a timeout) and Lambda gave up.
// The internal cause is logged, never shown to clients.
// Its advice never re-applies rows: the result counts exactly the rows
// applied and the results file (result.href) lists them, so the admin
// imports a file of the other rows only; starting the same file again (with
// a new nonce) would apply the applied rows a second time (an award import
// would grant them twice), so the operation is not retryable.
var StoppedError = operation.Error{
	Code: string(apierr.Internal),
	Message: "the job stopped unexpectedly after applying the rows that result counts and the results file lists: " +
		"do not start the same file again (its applied rows would apply twice); import a file of only the rows not listed",
}

// DestinationRecord is the record Lambda sends to the destination of an
// asynchronous invocation (here OnFailure: the invocation failed after its
// retries, or its event grew too old to run).
type DestinationRecord struct {
	Version        string `json:"version"`
	Timestamp      string `json:"timestamp"`
	RequestContext struct {
		RequestID   string `json:"requestId"`
		FunctionArn string `json:"functionArn"`
		// Condition is why the record was sent: RetriesExhausted,
		// EventAgeExceeded, ...
		Condition              string `json:"condition"`
		ApproximateInvokeCount int    `json:"approximateInvokeCount"`
	} `json:"requestContext"`
	// RequestPayload is the event of the invocation (an S3 event).
	RequestPayload  json.RawMessage `json:"requestPayload"`
	ResponseContext struct {
		StatusCode      int    `json:"statusCode"`
		ExecutedVersion string `json:"executedVersion"`
		FunctionError   string `json:"functionError"`
	} `json:"responseContext"`
	// ResponsePayload is what the last attempt returned: for an error,
	// {errorMessage, errorType}; its shape is not guaranteed.
	ResponsePayload json.RawMessage `json:"responsePayload"`
}

// responseError is the error of a destination record's responsePayload.
type responseError struct {
	ErrorMessage string `json:"errorMessage"`
	ErrorType    string `json:"errorType"`
}

// HandleSQS is the jobs function's handler of the messages of its failure
// queue: each message body is a DestinationRecord, and the operation of
// each S3 record in its request payload that is not DONE or FAILED yet is
// set FAILED with StoppedError. A message that is not such a record is
// logged and dropped (reported processed), so it cannot come back for
// ever; only a message whose operation could not be updated (a DynamoDB
// error, or no time left to wait for a crashed run's lease) is reported as
// a batch item failure, for SQS to deliver it again.
func (s *Service) HandleSQS(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
	resp := events.SQSEventResponse{BatchItemFailures: []events.SQSBatchItemFailure{}}
	for _, msg := range ev.Records {
		if err := s.handleFailure(ctx, msg); err != nil {
			s.log().Error("job: failure record not processed; SQS delivers it again", "messageId", msg.MessageId, "err", err.Error())
			resp.BatchItemFailures = append(resp.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: msg.MessageId})
		}
	}
	return resp, nil
}

// handleFailure processes one message of the failure queue. It returns an
// error only for a transient failure.
func (s *Service) handleFailure(ctx context.Context, msg events.SQSMessage) error {
	log := s.log().With("messageId", msg.MessageId)
	rec, ev, err := ParseDestinationRecord([]byte(msg.Body))
	if err != nil {
		log.Warn("job: malformed failure record dropped", "err", err.Error(), "bodyBytes", len(msg.Body))
		return nil
	}
	var cause responseError
	_ = json.Unmarshal(rec.ResponsePayload, &cause) // best effort: only logged
	log = log.With("requestId", rec.RequestContext.RequestID, "condition", rec.RequestContext.Condition,
		"attempts", rec.RequestContext.ApproximateInvokeCount, "failedAt", rec.Timestamp)
	var errs []error
	for _, r := range ev.Records {
		tenantID, id, ok := s.target(r)
		if !ok {
			continue
		}
		l := log.With("tenantId", tenantID, "operationId", id)
		l.Error("job: invocation failed for good", "functionError", rec.ResponseContext.FunctionError,
			"errorType", cause.ErrorType, "errorMessage", cause.ErrorMessage)
		if err := s.FailStopped(ctx, tenantID, id); err != nil {
			errs = append(errs, fmt.Errorf("job %s: %w", id, err))
		}
	}
	return errors.Join(errs...)
}

// ParseDestinationRecord decodes an SQS message body that is a Lambda
// destination record of an S3 event, and that event.
func ParseDestinationRecord(body []byte) (DestinationRecord, events.S3Event, error) {
	var rec DestinationRecord
	if err := json.Unmarshal(body, &rec); err != nil {
		return DestinationRecord{}, events.S3Event{}, fmt.Errorf("destination record: %w", err)
	}
	if len(rec.RequestPayload) == 0 || string(rec.RequestPayload) == "null" {
		return DestinationRecord{}, events.S3Event{}, errors.New("destination record: no requestPayload")
	}
	var ev events.S3Event
	if err := json.Unmarshal(rec.RequestPayload, &ev); err != nil {
		return DestinationRecord{}, events.S3Event{}, fmt.Errorf("destination record: requestPayload: %w", err)
	}
	if len(ev.Records) == 0 {
		return DestinationRecord{}, events.S3Event{}, errors.New("destination record: requestPayload is not an S3 event")
	}
	for _, r := range ev.Records {
		if r.EventSource != "aws:s3" {
			return DestinationRecord{}, events.S3Event{}, fmt.Errorf("destination record: requestPayload has a record of %q, not aws:s3", r.EventSource)
		}
	}
	return rec, ev, nil
}

// FailStopped sets the operation FAILED with StoppedError, unless it is
// DONE or FAILED already (a duplicate record, or a job another run
// finished), unknown, or still carried on by a live run (whose own
// invocation sends its own record if it fails too). It claims the
// operation first, as a run does: it waits for the lease of the crashed
// run to expire, and all its writes are conditional on its own lease.
func (s *Service) FailStopped(ctx context.Context, tenantID, id string) error {
	_, err := s.failStopped(ctx, tenantID, id)
	return err
}

// failOutcome is what failStopped did.
type failOutcome int

const (
	// failDone: the operation is FAILED now.
	failDone failOutcome = iota
	// failUnknown: no such operation.
	failUnknown
	// failFinished: it was DONE or FAILED already.
	failFinished
	// failBusy: a live run carries it on (it extended its lease, or
	// continues in a new invocation), or took it over meanwhile.
	failBusy
)

// failStopped is FailStopped, telling what it did.
func (s *Service) failStopped(ctx context.Context, tenantID, id string) (failOutcome, error) {
	log := s.log().With("tenantId", tenantID, "operationId", id)
	l, err := s.claim(ctx, tenantID, id, newOwner(), true)
	switch {
	case errors.Is(err, operation.ErrNotFound):
		log.Info("job: failure record of an unknown operation ignored")
		return failUnknown, nil
	case errors.Is(err, operation.ErrFinished):
		log.Info("job: failure record of a finished operation ignored")
		return failFinished, nil
	case errors.Is(err, errBusy):
		log.Info("job: failure record ignored; a live run carries the operation on")
		return failBusy, nil
	case err != nil:
		return 0, err
	}
	// The counters are the last checkpoint's and those of the chunks an
	// import committed past it: the rows they count were applied, and the
	// results file lists them. The fences first stop any chunk of the
	// crashed run still in flight.
	if err := s.Ops.Fence(ctx, l); err != nil {
		if errors.Is(err, operation.ErrLeaseLost) {
			log.Warn("job: lease lost while failing a stopped operation; another run carries on")
			return failBusy, nil
		}
		return 0, err
	}
	err = s.failApplied(ctx, l, StoppedError, func(res operation.Result) string {
		return fmt.Sprintf("failed: the job stopped unexpectedly after %d rows", res.Total)
	})
	if err != nil {
		if errors.Is(err, operation.ErrLeaseLost) {
			log.Warn("job: lease lost while failing a stopped operation; another run carries on")
			return failBusy, nil
		}
		return 0, err
	}
	log.LogAttrs(ctx, slog.LevelInfo, "job: stopped operation FAILED", slog.Int("rows", int(l.Checkpoint.Rows)))
	return failDone, nil
}

// HandleEvent is the jobs function's Lambda handler. Lambda invokes it with
// S3 events (the triggers of jobs/ objects) and SQS events (the failure
// queue); the eventSource of the first record decides: "aws:s3" goes to
// HandleS3, "aws:sqs" to HandleSQS, whose answer reports the messages to
// deliver again. Any other event is an error.
func (s *Service) HandleEvent(ctx context.Context, raw json.RawMessage) (*events.SQSEventResponse, error) {
	var probe struct {
		Records []struct {
			EventSource string `json:"eventSource"`
		} `json:"Records"`
	}
	if err := json.Unmarshal(raw, &probe); err != nil {
		return nil, fmt.Errorf("job: undecodable event: %w", err)
	}
	if len(probe.Records) == 0 {
		return nil, errors.New("job: event without records")
	}
	switch src := probe.Records[0].EventSource; src {
	case "aws:s3":
		var ev events.S3Event
		if err := json.Unmarshal(raw, &ev); err != nil {
			return nil, fmt.Errorf("job: S3 event: %w", err)
		}
		return nil, s.HandleS3(ctx, ev)
	case "aws:sqs":
		var ev events.SQSEvent
		if err := json.Unmarshal(raw, &ev); err != nil {
			return nil, fmt.Errorf("job: SQS event: %w", err)
		}
		resp, err := s.HandleSQS(ctx, ev)
		return &resp, err
	default:
		return nil, fmt.Errorf("job: unsupported event source %q", src)
	}
}

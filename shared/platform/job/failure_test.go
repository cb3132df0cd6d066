package job_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"mime/multipart"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/loyalty-platform/platform/shared/domain/operation"
	"github.com/loyalty-platform/platform/shared/platform/clock"
	"github.com/loyalty-platform/platform/shared/platform/ddb"
	"github.com/loyalty-platform/platform/shared/platform/job"
	ts "github.com/loyalty-platform/platform/shared/testkit"
)

func TestMain(m *testing.M) { ts.Main(m) }

// rowsFile returns an import file of n new locations.
func rowsFile(prefix string, n int) string {
	var b strings.Builder
	b.WriteString("title,geo_longitude,geo_latitude\n")
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "%s %03d,%d.5,%d.25\n", prefix, i, i%180, i%90)
	}
	return b.String()
}

// startImport starts an import (dryRun=false) of file through the API and
// returns its operation id and the S3 event of its input, which the test
// delivers itself (c captures the jobs function's events).
func startImport(t *testing.T, h *ts.Harness, c *ts.S3Capture, file string) (string, events.S3Event) {
	t.Helper()
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	part, err := w.CreateFormFile("file", "locations.csv")
	if err != nil {
		t.Fatal(err)
	}
	_, _ = part.Write([]byte(file))
	_ = w.Close()
	op := h.Do("POST", "/locations/imports?dryRun=false", buf.Bytes(), h.Admin(),
		ts.Headers{"Content-Type", w.FormDataContentType(), "x-platform-req-nonce", ts.Nonce()}).Expect(t, 202, "").Map(t)
	id := op["_id"].(string)
	ev := c.Next(t)
	if k := ev.Records[0].S3.Object.Key; !strings.HasSuffix(k, id+"/input.csv") {
		t.Fatalf("event key = %q", k)
	}
	return id, ev
}

// destinationRecord returns the record Lambda sends to the OnFailure
// destination of a failed asynchronous invocation with ev.
func destinationRecord(t testing.TB, ev events.S3Event, condition string) string {
	t.Helper()
	rec := map[string]any{
		"version":   "1.0",
		"timestamp": clock.Stamp(time.Now()),
		"requestContext": map[string]any{
			"requestId":              "e4b46cbf-b738-4c7d-8880-a18cdf61200e",
			"functionArn":            "arn:aws:lambda:us-east-1:123456789012:function:platform-JobsFunction-AbC123:$LATEST",
			"condition":              condition,
			"approximateInvokeCount": 3,
		},
		"requestPayload":  ev,
		"responseContext": map[string]any{"statusCode": 200, "executedVersion": "$LATEST", "functionError": "Unhandled"},
		"responsePayload": map[string]any{
			"errorMessage": "RequestId: e4b46cbf-b738-4c7d-8880-a18cdf61200e Error: Task timed out after 300.00 seconds",
			"errorType":    "Runtime.ExitError",
		},
	}
	b, err := json.Marshal(rec)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// sqsEvent returns the SQS event of the failure queue carrying bodies, as
// messages msg-0, msg-1, ...
func sqsEvent(bodies ...string) events.SQSEvent {
	var ev events.SQSEvent
	for i, b := range bodies {
		ev.Records = append(ev.Records, events.SQSMessage{
			MessageId: fmt.Sprintf("msg-%d", i), ReceiptHandle: "AQEBwJnKyrHigUMZj6rYigCgxlaS3SLy0a", Body: b,
			Attributes:     map[string]string{"ApproximateReceiveCount": "1", "SentTimestamp": "1795342622331"},
			EventSource:    "aws:sqs",
			EventSourceARN: "arn:aws:sqs:us-east-1:123456789012:platform-JobsFailedQueue-AbC123",
			AWSRegion:      "us-east-1",
		})
	}
	return ev
}

// deliver runs the SQS event through the jobs function's handler (the
// dispatch included) and returns the ids of the messages to deliver again.
func deliver(t *testing.T, svc *job.Service, ev events.SQSEvent) []string {
	t.Helper()
	raw, err := json.Marshal(ev)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := svc.HandleEvent(context.Background(), raw)
	if err != nil {
		t.Fatalf("handler: %v", err)
	}
	if resp == nil {
		t.Fatal("no batch response to an SQS event")
	}
	ids := []string{}
	for _, f := range resp.BatchItemFailures {
		ids = append(ids, f.ItemIdentifier)
	}
	return ids
}

func getOp(t *testing.T, h *ts.Harness, id string) map[string]any {
	t.Helper()
	return h.Do("GET", "/operations/"+id, nil, h.Admin()).Expect(t, 200, "").Map(t)
}

// waitByClock makes the jobs service's waits for a lease advance the
// harness clock instead of sleeping (leases are read with that clock), and
// calls also (when not nil) after each wait.
func waitByClock(h *ts.Harness, also func()) {
	h.Deps.Jobs.Sleep = func(d time.Duration) {
		h.Clock.Advance(d)
		if also != nil {
			also()
		}
	}
}

// TestCrashedJobFails: an import whose run stopped mid-file (the lease still
// held, as by a Lambda that crashed or timed out on its last attempt) is
// FAILED by the destination record of its S3 event; a duplicate record, and
// an S3 redelivery after it, change nothing.
func TestCrashedJobFails(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	c := h.CaptureS3("jobs")
	id, ev := startImport(t, h, c, rowsFile("Crash", 150))
	jobs := h.Deps.Jobs
	var crashedAt int64
	jobs.Crash = func(cp operation.Checkpoint) bool {
		if crashedAt == 0 && cp.Rows > 0 && !cp.InputDone {
			crashedAt = cp.Rows
			return true
		}
		return false
	}
	if err := jobs.HandleS3(context.Background(), ev); err != nil {
		t.Fatal(err)
	}
	jobs.Crash = nil
	if crashedAt == 0 {
		t.Fatal("the run did not stop mid-file")
	}
	if op := getOp(t, h, id); op["status"] != "RUNNING" {
		t.Fatalf("after the crash = %v", op)
	}
	// The crashed run's lease is still valid: the handler waits for it to
	// expire (on the test clock).
	waitByClock(h, nil)
	start := h.Clock.Now()
	if failed := deliver(t, jobs, sqsEvent(destinationRecord(t, ev, "RetriesExhausted"))); len(failed) != 0 {
		t.Fatalf("batch item failures = %v", failed)
	}
	if waited := h.Clock.Now().Sub(start); waited < job.DefaultLease-time.Second {
		t.Fatalf("failed after waiting %v, before the crashed run's lease expired", waited)
	}
	op := getOp(t, h, id)
	errObj, _ := op["error"].(map[string]any)
	res, _ := op["result"].(map[string]any)
	if op["status"] != "FAILED" || errObj["code"] != "INTERNAL" || errObj["message"] != job.StoppedError.Message ||
		op["endedAt"] == nil || op["isRetryable"] != false {
		t.Fatalf("operation = %v", op)
	}
	// The counts are the rows applied: those of the checkpoint and of the
	// chunks committed past it while the run stopped.
	list := h.Do("GET", "/locations?limit=1000&search=Crash", nil, h.Admin()).Expect(t, 200, "").Map(t)
	applied := float64(len(list["items"].([]any)))
	if res["total"] != applied || res["imported"] != applied || applied < float64(crashedAt) || res["etaMs"] != float64(0) ||
		!strings.HasPrefix(res["message"].(string), "failed: ") {
		t.Fatalf("result = %v (crashed after %d rows, %v applied)", res, crashedAt, applied)
	}

	t.Run("DuplicateRecordIsNoOp", func(t *testing.T) {
		h.Clock.Advance(time.Minute)
		if failed := deliver(t, jobs, sqsEvent(destinationRecord(t, ev, "RetriesExhausted"))); len(failed) != 0 {
			t.Fatalf("batch item failures = %v", failed)
		}
		if again := getOp(t, h, id); again["updatedAt"] != op["updatedAt"] || again["status"] != "FAILED" {
			t.Fatalf("a duplicate record changed the operation: %v", again)
		}
	})
	t.Run("LateS3RedeliveryIsNoOp", func(t *testing.T) {
		if err := jobs.HandleS3(context.Background(), ev); err != nil {
			t.Fatal(err)
		}
		if again := getOp(t, h, id); again["updatedAt"] != op["updatedAt"] || again["status"] != "FAILED" {
			t.Fatalf("a redelivery changed the failed operation: %v", again)
		}
	})
}

// TestFailureRecordCases: what a destination record does to operations in
// other states.
func TestFailureRecordCases(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	c := h.CaptureS3("jobs")
	jobs := h.Deps.Jobs
	ctx := context.Background()
	t.Cleanup(func() { jobs.Sleep, jobs.StopBefore = nil, 0 })

	t.Run("DoneStaysDone", func(t *testing.T) {
		id, ev := startImport(t, h, c, rowsFile("Done", 3))
		if err := jobs.HandleS3(ctx, ev); err != nil {
			t.Fatal(err)
		}
		done := getOp(t, h, id)
		if done["status"] != "DONE" {
			t.Fatalf("operation = %v", done)
		}
		if failed := deliver(t, jobs, sqsEvent(destinationRecord(t, ev, "RetriesExhausted"))); len(failed) != 0 {
			t.Fatalf("batch item failures = %v", failed)
		}
		if after := getOp(t, h, id); after["status"] != "DONE" || after["updatedAt"] != done["updatedAt"] || after["error"] != nil {
			t.Fatalf("a DONE operation changed: %v", after)
		}
	})

	t.Run("NeverRunFails", func(t *testing.T) {
		// The event grew too old to run (EventAgeExceeded): the operation
		// is still PENDING.
		id, ev := startImport(t, h, c, rowsFile("Never", 3))
		if failed := deliver(t, jobs, sqsEvent(destinationRecord(t, ev, "EventAgeExceeded"))); len(failed) != 0 {
			t.Fatalf("batch item failures = %v", failed)
		}
		if op := getOp(t, h, id); op["status"] != "FAILED" || op["error"].(map[string]any)["code"] != "INTERNAL" {
			t.Fatalf("operation = %v", op)
		}
	})

	t.Run("LiveRunIsLeftAlone", func(t *testing.T) {
		// Another run holds the lease and extends it while the handler
		// waits: the record is stale (that run's own invocation reports
		// its own failure).
		id, ev := startImport(t, h, c, rowsFile("Live", 3))
		l, err := h.Deps.Operations.Claim(ctx, h.Tenant.ID, id, "live-run", job.DefaultLease)
		if err != nil {
			t.Fatal(err)
		}
		waitByClock(h, func() {
			if err := h.Deps.Operations.Commit(ctx, l, l.Checkpoint, l.Result, job.DefaultLease, nil); err != nil {
				t.Errorf("extend: %v", err)
			}
		})
		defer func() { jobs.Sleep = nil }()
		if failed := deliver(t, jobs, sqsEvent(destinationRecord(t, ev, "RetriesExhausted"))); len(failed) != 0 {
			t.Fatalf("batch item failures = %v", failed)
		}
		if op := getOp(t, h, id); op["status"] != "RUNNING" {
			t.Fatalf("a live run's operation changed: %v", op)
		}
	})

	t.Run("RunThatContinuesIsLeftAlone", func(t *testing.T) {
		// The holder gives its lease up before it expires (a run that
		// continues in a new invocation): the record is stale, and the
		// next run claims the operation and finishes it.
		id, ev := startImport(t, h, c, rowsFile("Yield", 3))
		l, err := h.Deps.Operations.Claim(ctx, h.Tenant.ID, id, "yielding-run", job.DefaultLease)
		if err != nil {
			t.Fatal(err)
		}
		waitByClock(h, func() { _ = h.Deps.Operations.Release(ctx, l) })
		defer func() { jobs.Sleep = nil }()
		if failed := deliver(t, jobs, sqsEvent(destinationRecord(t, ev, "RetriesExhausted"))); len(failed) != 0 {
			t.Fatalf("batch item failures = %v", failed)
		}
		if op := getOp(t, h, id); op["status"] != "RUNNING" {
			t.Fatalf("the operation of a continuing run changed: %v", op)
		}
		jobs.Sleep = nil
		if err := jobs.HandleS3(ctx, ev); err != nil {
			t.Fatal(err)
		}
		if op := getOp(t, h, id); op["status"] != "DONE" {
			t.Fatalf("the next run did not finish: %v", op)
		}
	})

	t.Run("NoTimeToWaitIsRetried", func(t *testing.T) {
		// The crashed run's lease outlasts what the invocation may wait:
		// the message is delivered again later.
		id, ev := startImport(t, h, c, rowsFile("NoTime", 3))
		if _, err := h.Deps.Operations.Claim(ctx, h.Tenant.ID, id, "crashed-run", job.DefaultLease); err != nil {
			t.Fatal(err)
		}
		jobs.StopBefore = 24 * time.Hour
		defer func() { jobs.StopBefore = 0 }()
		if failed := deliver(t, jobs, sqsEvent(destinationRecord(t, ev, "RetriesExhausted"))); len(failed) != 1 || failed[0] != "msg-0" {
			t.Fatalf("batch item failures = %v, want [msg-0]", failed)
		}
		if op := getOp(t, h, id); op["status"] != "RUNNING" {
			t.Fatalf("operation = %v", op)
		}
	})

	t.Run("OtherTenantsOperationUntouched", func(t *testing.T) {
		// A record naming the operation under another tenant's prefix
		// finds nothing there.
		id, ev := startImport(t, h, c, rowsFile("Tenant", 3))
		other, _ := h.NewTenant(h.Tenant.Settings)
		forged := ev
		forged.Records = append([]events.S3EventRecord(nil), ev.Records...)
		forged.Records[0].S3.Object.Key = job.InputKey(other.ID, id)
		if failed := deliver(t, jobs, sqsEvent(destinationRecord(t, forged, "RetriesExhausted"))); len(failed) != 0 {
			t.Fatalf("batch item failures = %v", failed)
		}
		if op := getOp(t, h, id); op["status"] != "PENDING" {
			t.Fatalf("operation = %v", op)
		}
	})

	t.Run("UnknownOperationIgnored", func(t *testing.T) {
		ev := events.S3Event{Records: []events.S3EventRecord{{
			EventSource: "aws:s3", EventName: "ObjectCreated:Put",
			S3: events.S3Entity{Bucket: events.S3Bucket{Name: h.Deps.Config.Buckets.Files},
				Object: events.S3Object{Key: job.InputKey(h.Tenant.ID, "0123456789abcdef01234567")}},
		}}}
		if failed := deliver(t, jobs, sqsEvent(destinationRecord(t, ev, "RetriesExhausted"))); len(failed) != 0 {
			t.Fatalf("batch item failures = %v", failed)
		}
	})
}

// TestMalformedFailureRecords: a message that is not a destination record
// of an S3 event of the jobs layout is dropped (not reported for another
// delivery), and does not keep the valid messages of its batch from being
// processed.
func TestMalformedFailureRecords(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	c := h.CaptureS3("jobs")
	jobs := h.Deps.Jobs
	id, ev := startImport(t, h, c, rowsFile("Batch", 3))
	other := func(mutate func(r *events.S3EventRecord)) string {
		e := ev
		e.Records = append([]events.S3EventRecord(nil), ev.Records...)
		mutate(&e.Records[0])
		return destinationRecord(t, e, "RetriesExhausted")
	}
	bodies := []struct {
		name string
		body string
	}{
		{"NotJSON", "not json"},
		{"Empty", ""},
		{"EmptyObject", "{}"},
		{"WrongTypes", `{"version":1,"requestContext":"x","requestPayload":{"Records":"x"}}`},
		{"NullPayload", `{"version":"1.0","requestPayload":null}`},
		{"StringPayload", `{"version":"1.0","requestPayload":"jobs/x/y/input.csv"}`},
		{"PayloadWithoutRecords", `{"version":"1.0","requestPayload":{"Records":[]}}`},
		{"PayloadOfAnotherSource", `{"version":"1.0","requestPayload":{"Records":[{"eventSource":"aws:sqs","body":"{}"}]}}`},
		{"OtherBucket", other(func(r *events.S3EventRecord) { r.S3.Bucket.Name = "another-bucket" })},
		{"NotAJobKey", other(func(r *events.S3EventRecord) { r.S3.Object.Key = "jobs/" + h.Tenant.ID + "/" + id + "/results.csv" })},
		{"NotCreated", other(func(r *events.S3EventRecord) { r.EventName = "ObjectRemoved:Delete" })},
	}
	for _, b := range bodies {
		t.Run(b.name, func(t *testing.T) {
			if failed := deliver(t, jobs, sqsEvent(b.body)); len(failed) != 0 {
				t.Fatalf("batch item failures = %v", failed)
			}
			if op := getOp(t, h, id); op["status"] != "PENDING" {
				t.Fatalf("operation = %v", op)
			}
		})
	}
	t.Run("MixedBatch", func(t *testing.T) {
		all := []string{}
		for _, b := range bodies {
			all = append(all, b.body)
		}
		all = append(all, destinationRecord(t, ev, "RetriesExhausted"))
		if failed := deliver(t, jobs, sqsEvent(all...)); len(failed) != 0 {
			t.Fatalf("batch item failures = %v", failed)
		}
		if op := getOp(t, h, id); op["status"] != "FAILED" {
			t.Fatalf("operation = %v", op)
		}
	})
}

// failingDB fails every UpdateItem, as DynamoDB does when it throttles.
type failingDB struct{ ddb.API }

func (failingDB) UpdateItem(context.Context, *dynamodb.UpdateItemInput, ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error) {
	return nil, errors.New("ProvisionedThroughputExceededException: throttled")
}

// TestTransientFailureIsRetried: a record whose operation could not be
// updated is reported as a batch item failure; the other messages of the
// batch are not.
func TestTransientFailureIsRetried(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	c := h.CaptureS3("jobs")
	id, ev := startImport(t, h, c, rowsFile("Transient", 3))
	svc := *h.Deps.Jobs
	svc.Ops = &operation.Service{DB: failingDB{h.Deps.DB}, Table: h.Deps.Config.Tables.Operations, Clock: h.Clock}
	failed := deliver(t, &svc, sqsEvent("not json", destinationRecord(t, ev, "RetriesExhausted")))
	if len(failed) != 1 || failed[0] != "msg-1" {
		t.Fatalf("batch item failures = %v, want [msg-1]", failed)
	}
	if op := getOp(t, h, id); op["status"] != "PENDING" {
		t.Fatalf("operation = %v", op)
	}
	// Delivered again once DynamoDB answers, it fails the operation.
	if failed := deliver(t, h.Deps.Jobs, sqsEvent(destinationRecord(t, ev, "RetriesExhausted"))); len(failed) != 0 {
		t.Fatalf("batch item failures = %v", failed)
	}
	if op := getOp(t, h, id); op["status"] != "FAILED" {
		t.Fatalf("operation = %v", op)
	}
}

// TestHandleEventDispatch: the jobs function's handler takes S3 and SQS
// events and refuses anything else.
func TestHandleEventDispatch(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	jobs := h.Deps.Jobs
	ctx := context.Background()
	t.Run("S3", func(t *testing.T) {
		raw := `{"Records":[{"eventSource":"aws:s3","eventName":"ObjectCreated:Put","s3":{"bucket":{"name":"` +
			h.Deps.Config.Buckets.Files + `"},"object":{"key":"jobs/` + h.Tenant.ID + `/0123456789abcdef01234567/input.csv"}}}]}`
		resp, err := jobs.HandleEvent(ctx, json.RawMessage(raw))
		if err != nil || resp != nil {
			t.Fatalf("HandleEvent = %v, %v", resp, err)
		}
	})
	t.Run("SQS", func(t *testing.T) {
		resp, err := jobs.HandleEvent(ctx, json.RawMessage(`{"Records":[{"messageId":"m1","eventSource":"aws:sqs","body":"x"}]}`))
		if err != nil || resp == nil || len(resp.BatchItemFailures) != 0 {
			t.Fatalf("HandleEvent = %v, %v", resp, err)
		}
		b, _ := json.Marshal(resp)
		if string(b) != `{"batchItemFailures":[]}` {
			t.Fatalf("response = %s", b)
		}
	})
	for _, raw := range []string{`not json`, `{}`, `{"Records":[]}`, `{"Records":[{"eventSource":"aws:sns"}]}`, `{"action":"get"}`} {
		t.Run("Refused/"+raw, func(t *testing.T) {
			if _, err := jobs.HandleEvent(ctx, json.RawMessage(raw)); err == nil {
				t.Fatalf("HandleEvent(%s) accepted", raw)
			}
		})
	}
}

// TestParseDestinationRecord: the record's fields, and the S3 event it
// carries.
func TestParseDestinationRecord(t *testing.T) {
	t.Parallel()
	ev := events.S3Event{Records: []events.S3EventRecord{{EventSource: "aws:s3", EventName: "ObjectCreated:Put",
		S3: events.S3Entity{Object: events.S3Object{Key: "jobs/t-1/0123456789abcdef01234567/input.csv"}}}}}
	rec, got, err := job.ParseDestinationRecord([]byte(destinationRecord(t, ev, "RetriesExhausted")))
	if err != nil {
		t.Fatal(err)
	}
	if rec.RequestContext.Condition != "RetriesExhausted" || rec.RequestContext.ApproximateInvokeCount != 3 ||
		rec.ResponseContext.FunctionError != "Unhandled" || len(got.Records) != 1 || got.Records[0].S3.Object.Key != ev.Records[0].S3.Object.Key {
		t.Fatalf("record = %+v, event = %+v", rec, got)
	}
}

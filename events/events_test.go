// Package events_test runs every sample event in events/ through the real
// Lambda handler of its function (the api-proxy adapter included for HTTP
// API events) against DynamoDB Local, and checks the result.
package events_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/loyalty-platform/platform/shared/job"
	"github.com/loyalty-platform/platform/shared/tenant"
	"github.com/loyalty-platform/platform/shared/testsupport"
)

func TestMain(m *testing.M) { testsupport.Main(m) }

// samples lists every file in events/ in the order it runs, with the
// function it belongs to and the status (HTTP) or outcome (direct invoke)
// it must produce against the seeded local tenant.
var samples = []struct {
	file     string
	function string
	status   int
}{
	{"users-create.json", "users", 201},
	{"users-create-invalid.json", "users", 422},
	{"users-list.json", "users", 200},
	{"users-list-stage.json", "users", 200}, // through a named stage (/prod/users)
	{"users-lookup.json", "users", 200},
	{"users-get.json", "users", 404},
	{"users-update.json", "users", 422},
	{"users-activate.json", "users", 422},
	{"users-login.json", "users", 200},
	{"users-logout.json", "users", 401},
	{"users-reset.json", "users", 200},
	{"guests-create.json", "users", 201},
	{"sessions-create.json", "users", 201},
	{"sessions-delete.json", "users", 404},
	{"users-avatar-put.json", "users", 404},
	{"users-avatar-delete.json", "users", 404},
	{"users-delete.json", "users", 404},
	{"credentials-list.json", "users", 200},
	{"credentials-add.json", "users", 404},
	{"credentials-verify.json", "users", 404},
	{"credentials-delete.json", "users", 404},
	{"addresses-list.json", "users", 404},
	{"addresses-update.json", "users", 404},
	{"addresses-delete.json", "users", 404},
	{"addresses-create.json", "users", 404},
	{"addresses-suggestions.json", "users", 200},
	{"addresses-coordinates.json", "users", 200},
	{"users-sso-google.json", "users", 422},
	{"checkins-create.json", "checkins", 404},
	{"checkins-list-user.json", "checkins", 404},
	{"checkins-delete.json", "checkins", 404},
	{"checkins-list-location.json", "checkins", 404},
	{"locations-create.json", "locations", 201},
	{"locations-list.json", "locations", 200},
	{"locations-get.json", "locations", 404},
	{"locations-update.json", "locations", 404},
	{"locations-taggroups-create.json", "locations", 201},
	{"locations-taggroups-list.json", "locations", 200},
	{"locations-imports-create.json", "locations", 202},
	{"locations-imports-file.json", "locations", 404},
	{"locations-exports-create.json", "locations", 202},
	{"locations-exports-file.json", "locations", 404},
	{"operations-get.json", "operations", 404},
	// S3 ObjectCreated of an import's input: the sample names an operation
	// that does not exist, which the jobs function ignores without error
	// (real deliveries are tested in shared/locationcsv).
	{"jobs-s3-put.json", "jobs", 0},
	// SQS message of the jobs function's failure queue: Lambda's
	// destination record of a continuation's S3 event whose invocations
	// all failed. Its operation does not exist either, so nothing changes
	// and no message is reported for another delivery (real records are
	// tested in shared/job).
	{"jobs-failure.json", "jobs", 0},
	{"tenants-create.json", "tenants", 0},
	{"tenants-get.json", "tenants", 0},
	{"tenants-rotate-key.json", "tenants", 0},
}

func TestSampleEvents(t *testing.T) {
	h := testsupport.New(t)
	ctx := context.Background()
	if _, err := h.Deps.Tenants.Seed(ctx, "local", "Local tenant", "local-service-token"); err != nil {
		t.Fatalf("seed: %v", err)
	}
	// The samples use fixed identifiers; release them if an earlier run
	// against the same database registered them.
	local := testsupport.Headers{"x-service-auth-token", "local-service-token", "x-api-version", "4"}
	var found struct{ Items []struct{ ID string } }
	h.Do("GET", "/users?credentialId=ada.events@example.com", nil, local).JSON(t, &found)
	for _, u := range found.Items {
		h.Do("DELETE", "/users/"+u.ID, nil, local)
	}
	t.Run("EveryFileListed", func(t *testing.T) {
		files, _ := filepath.Glob("*.json")
		listed := map[string]bool{}
		for _, s := range samples {
			listed[s.file] = true
		}
		for _, f := range files {
			if !listed[f] {
				t.Errorf("%s is not run by this test", f)
			}
		}
	})
	for _, s := range samples {
		t.Run(strings.TrimSuffix(s.file, ".json"), func(t *testing.T) {
			raw, err := os.ReadFile(s.file)
			if err != nil {
				t.Fatal(err)
			}
			if s.function == "jobs" {
				// The jobs function gets S3 events and the SQS events of
				// its failure queue.
				var probe struct {
					Records []struct{ EventSource string }
				}
				_ = json.Unmarshal(raw, &probe)
				if len(probe.Records) > 0 && probe.Records[0].EventSource == "aws:sqs" {
					runFailureSample(t, h, raw, s.function)
				} else {
					runS3Sample(t, h, raw, s.function)
				}
				return
			}
			if s.function == "tenants" {
				var req tenant.Request
				dec := json.NewDecoder(strings.NewReader(string(raw)))
				dec.DisallowUnknownFields()
				if err := dec.Decode(&req); err != nil {
					t.Fatalf("decode: %v", err)
				}
				resp, err := h.Deps.Tenants.Handle(ctx, req)
				if err != nil {
					t.Fatalf("invoke: %v", err)
				}
				if resp.Tenant == nil || resp.Tenant.ID == "" {
					t.Fatalf("response = %+v", resp)
				}
				return
			}
			var ev events.APIGatewayV2HTTPRequest
			if err := json.Unmarshal(raw, &ev); err != nil {
				t.Fatalf("decode: %v", err)
			}
			if ev.Version != "2.0" || ev.RouteKey != ev.RequestContext.RouteKey || ev.RequestContext.HTTP.Method == "" {
				t.Fatalf("%s is not a payload 2.0 event", s.file)
			}
			fn, ok := h.Template.Function(s.function)
			if !ok {
				t.Fatalf("no function %s in template.yaml", s.function)
			}
			routed := false
			for _, r := range fn.Routes {
				routed = routed || r.Key() == ev.RouteKey
			}
			if !routed {
				t.Fatalf("route %q is not an HttpApi event of %s in template.yaml", ev.RouteKey, fn.LogicalID)
			}
			handler, err := h.Deps.LambdaHandler(s.function)
			if err != nil {
				t.Fatal(err)
			}
			resp, err := handler(ctx, ev)
			if err != nil {
				t.Fatalf("handler: %v", err)
			}
			if resp.StatusCode != s.status {
				t.Fatalf("status = %d, want %d; body %s", resp.StatusCode, s.status, resp.Body)
			}
			if resp.Body != "" && !json.Valid([]byte(resp.Body)) {
				t.Fatalf("body is not JSON: %s", resp.Body)
			}
		})
	}
}

// runS3Sample checks that an S3 sample is an ObjectCreated event that one
// of the function's template S3 triggers matches, and runs it through the
// function's handler.
func runS3Sample(t *testing.T, h *testsupport.Harness, raw []byte, function string) {
	t.Helper()
	ev := checkS3Event(t, h, raw, function)
	handler, err := h.Deps.S3Handler(function)
	if err != nil {
		t.Fatal(err)
	}
	if err := handler(context.Background(), ev); err != nil {
		t.Fatalf("handler: %v", err)
	}
}

// checkS3Event decodes an S3 ObjectCreated event that one of the
// function's template S3 triggers matches.
func checkS3Event(t *testing.T, h *testsupport.Harness, raw []byte, function string) events.S3Event {
	t.Helper()
	var ev events.S3Event
	if err := json.Unmarshal(raw, &ev); err != nil {
		t.Fatalf("decode: %v", err)
	}
	if len(ev.Records) != 1 || ev.Records[0].EventSource != "aws:s3" || !strings.HasPrefix(ev.Records[0].EventName, "ObjectCreated:") {
		t.Fatalf("not an S3 ObjectCreated event: %+v", ev)
	}
	fn, ok := h.Template.Function(function)
	if !ok {
		t.Fatalf("no function %s in template.yaml", function)
	}
	key := ev.Records[0].S3.Object.URLDecodedKey
	matched := false
	for _, trig := range fn.S3Events {
		matched = matched || (strings.HasPrefix(key, trig.Prefix) && strings.HasSuffix(key, trig.Suffix))
	}
	if !matched || ev.Records[0].S3.Bucket.Name != h.Deps.Config.Buckets.Files {
		t.Fatalf("key %q of bucket %q matches no S3 trigger of %s", key, ev.Records[0].S3.Bucket.Name, fn.LogicalID)
	}
	return ev
}

// runFailureSample checks that an SQS sample carries Lambda destination
// records of S3 events that the function's template S3 triggers match, and
// runs it through the function's Lambda handler (which dispatches by event
// source), expecting no message reported for another delivery.
func runFailureSample(t *testing.T, h *testsupport.Harness, raw []byte, function string) {
	t.Helper()
	var ev events.SQSEvent
	if err := json.Unmarshal(raw, &ev); err != nil {
		t.Fatalf("decode: %v", err)
	}
	if len(ev.Records) == 0 {
		t.Fatal("no SQS messages")
	}
	for _, msg := range ev.Records {
		if msg.EventSource != "aws:sqs" || msg.MessageId == "" {
			t.Fatalf("not an SQS message: %+v", msg)
		}
		rec, s3ev, err := job.ParseDestinationRecord([]byte(msg.Body))
		if err != nil {
			t.Fatalf("message %s: %v", msg.MessageId, err)
		}
		if rec.Version != "1.0" || rec.RequestContext.Condition == "" || rec.RequestContext.ApproximateInvokeCount == 0 {
			t.Fatalf("not a destination record: %+v", rec)
		}
		payload, err := json.Marshal(s3ev)
		if err != nil {
			t.Fatal(err)
		}
		checkS3Event(t, h, payload, function)
	}
	handler, err := h.Deps.EventHandler(function)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := handler(context.Background(), raw)
	if err != nil {
		t.Fatalf("handler: %v", err)
	}
	if resp == nil || len(resp.BatchItemFailures) != 0 {
		t.Fatalf("response = %+v, want no batch item failures", resp)
	}
}

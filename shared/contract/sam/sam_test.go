package sam_test

import (
	"os"
	"os/exec"
	"reflect"
	"strconv"
	"testing"
	"time"

	"github.com/loyalty-platform/platform/shared/contract/sam"
)

// TestTemplateLint runs cfn-lint (installed on the machine image) over
// template.yaml, informational findings included (such as a stateful
// resource without an explicit DeletionPolicy). Outside CI a machine
// without cfn-lint skips it.
func TestTemplateLint(t *testing.T) {
	bin, err := exec.LookPath("cfn-lint")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("cfn-lint is not installed: %v", err)
		}
		t.Skip("cfn-lint is not installed")
	}
	out, err := exec.Command(bin, "-t", sam.Path(), "--include-checks", "I").CombinedOutput()
	if err != nil {
		t.Fatalf("cfn-lint template.yaml: %v\n%s", err, out)
	}
}

// TestThrottling: the stage's routes are throttled by API Gateway with
// limits the operator sets as parameters (positive numbers with defaults).
func TestThrottling(t *testing.T) {
	tpl, err := sam.Load(sam.Path())
	if err != nil {
		t.Fatalf("load template: %v", err)
	}
	if len(tpl.APIs) != 1 {
		t.Fatalf("HttpApis = %d, want 1", len(tpl.APIs))
	}
	api := tpl.APIs[0]
	for setting, param := range map[string]string{"ThrottlingBurstLimit": api.ThrottlingBurstLimit, "ThrottlingRateLimit": api.ThrottlingRateLimit} {
		t.Run(setting, func(t *testing.T) {
			p, ok := tpl.Parameters[param]
			if !ok {
				t.Fatalf("DefaultRouteSettings.%s = %q, want a !Ref to a parameter", setting, param)
			}
			n, err := strconv.Atoi(p.Default)
			if p.Type != "Number" || err != nil || n < 1 || p.MinValue != "1" {
				t.Errorf("parameter %s = %+v, want a Number of at least 1 with a default", param, p)
			}
		})
	}
}

func TestParseTemplate(t *testing.T) {
	tpl, err := sam.Load(sam.Path())
	if err != nil {
		t.Fatalf("load template: %v", err)
	}
	users, ok := tpl.Function("users")
	if !ok {
		t.Fatal("no users function")
	}
	if len(users.Routes) == 0 {
		t.Fatal("users function has no routes")
	}
	tables := map[string]sam.Table{}
	for _, tb := range tpl.Tables {
		tables[tb.LogicalID] = tb
	}
	tests := []struct {
		table   string
		ttl     string
		indexes int
	}{
		{"TenantsTable", "", 0},
		{"UsersTable", "expiresAt", 3},
		{"SessionsTable", "expiresAt", 1},
		{"ActionsTable", "", 3},
	}
	for _, tc := range tests {
		t.Run(tc.table, func(t *testing.T) {
			tb, ok := tables[tc.table]
			if !ok {
				t.Fatalf("table %s missing", tc.table)
			}
			if got, want := tb.HashKey+"/"+tb.RangeKey, "pk/sk"; got != want {
				t.Errorf("key = %s, want %s", got, want)
			}
			if tb.TTL != tc.ttl {
				t.Errorf("ttl = %q, want %q", tb.TTL, tc.ttl)
			}
			if len(tb.Indexes) != tc.indexes {
				t.Errorf("indexes = %d, want %d", len(tb.Indexes), tc.indexes)
			}
		})
	}
}

// TestFunctionTimeouts: a function's Timeout is its own, else the
// template's Globals, else Lambda's default; the local stack ends each
// invocation after it.
func TestFunctionTimeouts(t *testing.T) {
	tests := []struct {
		name     string
		template string
		want     map[string]time.Duration
	}{
		{"OwnAndGlobal", `
Globals:
  Function:
    Timeout: 29
Resources:
  UsersFunction:
    Type: AWS::Serverless::Function
    Properties: {}
  JobsFunction:
    Type: AWS::Serverless::Function
    Properties:
      Timeout: 300
`, map[string]time.Duration{"users": 29 * time.Second, "jobs": 300 * time.Second}},
		{"LambdaDefault", `
Resources:
  UsersFunction:
    Type: AWS::Serverless::Function
    Properties:
      Timeout: not-a-number
`, map[string]time.Duration{"users": sam.DefaultTimeout}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tpl, err := sam.Parse([]byte(tc.template))
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]time.Duration{}
			for _, f := range tpl.Functions {
				got[f.Name] = f.Timeout
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("timeouts = %v, want %v", got, tc.want)
			}
		})
	}
	t.Run("Template", func(t *testing.T) {
		tpl, err := sam.Load(sam.Path())
		if err != nil {
			t.Fatalf("load template: %v", err)
		}
		for name, want := range map[string]time.Duration{"users": 29 * time.Second, "checkins": 15 * time.Second, "rules": time.Minute, "jobs": 5 * time.Minute} {
			if f, _ := tpl.Function(name); f.Timeout != want {
				t.Errorf("%s: Timeout = %v, want %v", name, f.Timeout, want)
			}
		}
	})
}

func TestParseShortFormTags(t *testing.T) {
	tpl, err := sam.Parse([]byte(`
Resources:
  Fn:
    Type: AWS::Serverless::Function
    Properties:
      Events:
        Up:
          Type: S3
          Properties:
            Bucket: !Ref Files
            Events: s3:ObjectCreated:*
            Filter:
              S3Key:
                Rules:
                  - Name: prefix
                    Value: jobs/
        Daily:
          Type: Schedule
          Properties:
            Schedule: rate(1 day)
`))
	if err != nil {
		t.Fatal(err)
	}
	f := tpl.Functions[0]
	if got, want := f.Name, "fn"; got != want {
		t.Errorf("name = %q, want %q", got, want)
	}
	if len(f.S3Events) != 1 || f.S3Events[0].Bucket != "Files" || f.S3Events[0].Prefix != "jobs/" {
		t.Errorf("s3 events = %+v", f.S3Events)
	}
	if len(f.Schedules) != 1 || f.Schedules[0] != "rate(1 day)" {
		t.Errorf("schedules = %v", f.Schedules)
	}
}

func TestParseStreams(t *testing.T) {
	tpl, err := sam.Load(sam.Path())
	if err != nil {
		t.Fatalf("load template: %v", err)
	}
	rules, ok := tpl.Function("rules")
	if !ok {
		t.Fatal("no rules function")
	}
	want := []sam.StreamEvent{{
		Event:                          "ActionsStream",
		Table:                          "ActionsTable",
		StartingPosition:               "LATEST",
		BatchSize:                      100,
		MaximumBatchingWindowInSeconds: 1,
		MaximumRetryAttempts:           5,
		BisectBatchOnFunctionError:     true,
		FunctionResponseTypes:          []string{"ReportBatchItemFailures"},
	}}
	if !reflect.DeepEqual(rules.Streams, want) {
		t.Errorf("rules streams = %+v, want %+v", rules.Streams, want)
	}
	if !rules.Streams[0].ReportsBatchItemFailures() {
		t.Error("ReportsBatchItemFailures = false")
	}
	// The actions table is the only one with a stream, and the rules and
	// webhook fan-out functions the only ones reading a stream.
	for _, tb := range tpl.Tables {
		want := ""
		if tb.LogicalID == "ActionsTable" {
			want = "NEW_IMAGE"
		}
		if tb.StreamView != want {
			t.Errorf("%s stream view = %q, want %q", tb.LogicalID, tb.StreamView, want)
		}
	}
	for _, f := range tpl.Functions {
		if f.Name != "rules" && f.Name != "webhookfanout" && len(f.Streams) > 0 {
			t.Errorf("function %s has stream events %+v", f.Name, f.Streams)
		}
	}
}

func TestParseStreamForms(t *testing.T) {
	tpl, err := sam.Parse([]byte(`
Resources:
  Fn:
    Type: AWS::Serverless::Function
    Properties:
      Events:
        A:
          Type: DynamoDB
          Properties:
            Stream: !GetAtt ItemsTable.StreamArn
            StartingPosition: TRIM_HORIZON
            BatchSize: 10
            MaximumRetryAttempts: 0
            BisectBatchOnFunctionError: True
        B:
          Type: DynamoDB
          Properties:
            Stream:
              Fn::GetAtt: [OtherTable, StreamArn]
            StartingPosition: LATEST
        C:
          Type: DynamoDB
          Properties:
            Stream: !GetAtt [ThirdTable, StreamArn]
            StartingPosition: LATEST
        D:
          Type: DynamoDB
          Properties:
            Stream: arn:aws:dynamodb:us-east-1:123456789012:table/x/stream/2024
            StartingPosition: LATEST
            FunctionResponseTypes: [ReportBatchItemFailures]
  ItemsTable:
    Type: AWS::DynamoDB::Table
    Properties:
      StreamSpecification:
        StreamViewType: NEW_AND_OLD_IMAGES
      KeySchema:
        - AttributeName: pk
          KeyType: HASH
`))
	if err != nil {
		t.Fatal(err)
	}
	want := []sam.StreamEvent{
		{Event: "A", Table: "ItemsTable", StartingPosition: "TRIM_HORIZON", BatchSize: 10, MaximumRetryAttempts: 0, BisectBatchOnFunctionError: true},
		{Event: "B", Table: "OtherTable", StartingPosition: "LATEST", MaximumRetryAttempts: -1},
		{Event: "C", Table: "ThirdTable", StartingPosition: "LATEST", MaximumRetryAttempts: -1},
		{Event: "D", StartingPosition: "LATEST", MaximumRetryAttempts: -1, FunctionResponseTypes: []string{"ReportBatchItemFailures"}},
	}
	if got := tpl.Functions[0].Streams; !reflect.DeepEqual(got, want) {
		t.Errorf("streams =\n%+v\nwant\n%+v", got, want)
	}
	if got := tpl.Tables[0].StreamView; got != "NEW_AND_OLD_IMAGES" {
		t.Errorf("stream view = %q", got)
	}
}

func TestParseQueues(t *testing.T) {
	tpl, err := sam.Parse([]byte(`
Parameters:
  MaxReceives:
    Type: Number
    Default: 7
  Concurrency:
    Type: Number
    Default: 4
Resources:
  SenderFunction:
    Type: AWS::Serverless::Function
    Properties:
      Events:
        Deliveries:
          Type: SQS
          Properties:
            Queue: !GetAtt DeliveryQueue.Arn
            BatchSize: 10
            FunctionResponseTypes: [ReportBatchItemFailures]
            ScalingConfig:
              MaximumConcurrency: !Ref Concurrency
        Literal:
          Type: SQS
          Properties:
            Queue: arn:aws:sqs:us-east-1:123456789012:elsewhere
            Enabled: false
        Listed:
          Type: SQS
          Properties:
            Queue:
              Fn::GetAtt: [PlainQueue, Arn]
            MaximumBatchingWindowInSeconds: 2
  DeliveryQueue:
    Type: AWS::SQS::Queue
    Properties:
      QueueName: deliveries.fifo
      FifoQueue: true
      ContentBasedDeduplication: "false"
      DeduplicationScope: messageGroup
      VisibilityTimeout: 120
      MessageRetentionPeriod: 1209600
      RedrivePolicy:
        deadLetterTargetArn: !GetAtt DeadQueue.Arn
        maxReceiveCount: !Ref MaxReceives
  DeadQueue:
    Type: AWS::SQS::Queue
    Properties:
      FifoQueue: true
      ContentBasedDeduplication: true
  PlainQueue:
    Type: AWS::SQS::Queue
    Properties:
      DelaySeconds: 5
      VisibilityTimeout: 0
`))
	if err != nil {
		t.Fatal(err)
	}
	wantEvents := []sam.QueueEvent{
		{Event: "Deliveries", Queue: "DeliveryQueue", BatchSize: 10, FunctionResponseTypes: []string{"ReportBatchItemFailures"}, MaximumConcurrency: 4, Enabled: true},
		{Event: "Listed", Queue: "PlainQueue", MaximumBatchingWindowInSeconds: 2, Enabled: true},
		{Event: "Literal", Enabled: false},
	}
	f, ok := tpl.Function("sender")
	if !ok {
		t.Fatal("no sender function")
	}
	if !reflect.DeepEqual(f.QueueEvents, wantEvents) {
		t.Errorf("queue events =\n%+v\nwant\n%+v", f.QueueEvents, wantEvents)
	}
	if !f.QueueEvents[0].ReportsBatchItemFailures() || f.QueueEvents[1].ReportsBatchItemFailures() {
		t.Error("ReportsBatchItemFailures: want true for Deliveries alone")
	}
	wantQueues := []sam.Queue{
		{LogicalID: "DeadQueue", Fifo: true, ContentBasedDeduplication: true, VisibilityTimeout: 30 * time.Second, MessageRetentionPeriod: 4 * 24 * time.Hour},
		{LogicalID: "DeliveryQueue", Name: "deliveries.fifo", Fifo: true, DeduplicationScope: "messageGroup", VisibilityTimeout: 2 * time.Minute,
			MessageRetentionPeriod: 14 * 24 * time.Hour, DeadLetterQueue: "DeadQueue", MaxReceiveCount: 7},
		{LogicalID: "PlainQueue", VisibilityTimeout: 0, MessageRetentionPeriod: 4 * 24 * time.Hour, DelaySeconds: 5 * time.Second},
	}
	if !reflect.DeepEqual(tpl.Queues, wantQueues) {
		t.Errorf("queues =\n%+v\nwant\n%+v", tpl.Queues, wantQueues)
	}
	if q, ok := tpl.Queue("PlainQueue"); !ok || q.DelaySeconds != 5*time.Second {
		t.Errorf("Queue(PlainQueue) = %+v, %v", q, ok)
	}
	if _, ok := tpl.Queue("Nothing"); ok {
		t.Error("Queue(Nothing) found a queue")
	}
}

// TestParseTemplateQueues: the failure queue of the jobs function is read
// with its redrive policy (the parameter's default).
func TestParseTemplateQueues(t *testing.T) {
	tpl, err := sam.Load(sam.Path())
	if err != nil {
		t.Fatalf("load template: %v", err)
	}
	q, ok := tpl.Queue("JobsFailedQueue")
	if !ok {
		t.Fatal("no JobsFailedQueue")
	}
	want := sam.Queue{LogicalID: "JobsFailedQueue", VisibilityTimeout: 30 * time.Minute, MessageRetentionPeriod: 14 * 24 * time.Hour,
		DeadLetterQueue: "JobsFailedDeadLetterQueue", MaxReceiveCount: 5}
	if !reflect.DeepEqual(q, want) {
		t.Errorf("JobsFailedQueue = %+v, want %+v", q, want)
	}
}

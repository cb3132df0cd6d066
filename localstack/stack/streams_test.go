package stack

import (
	"context"
	"errors"
	"fmt"
	"os"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	streamtypes "github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"
	"github.com/loyalty-platform/platform/shared/contract/sam"
)

const streamTemplate = `
Resources:
  WatcherFunction:
    Type: AWS::Serverless::Function
    Properties:
      Events:
        Items:
          Type: DynamoDB
          Properties:
            Stream: !GetAtt StreamItemsTable.StreamArn
            StartingPosition: LATEST
            BatchSize: 10
            MaximumRetryAttempts: 2
            BisectBatchOnFunctionError: true
            FunctionResponseTypes:
              - ReportBatchItemFailures
  StreamItemsTable:
    Type: AWS::DynamoDB::Table
    Properties:
      BillingMode: PAY_PER_REQUEST
      StreamSpecification:
        StreamViewType: NEW_IMAGE
      AttributeDefinitions:
        - AttributeName: pk
          AttributeType: S
      KeySchema:
        - AttributeName: pk
          KeyType: HASH
`

// uniqueName returns a table name of this run, so runs sharing one
// DynamoDB Local do not meet.
func uniqueName(base string) string {
	return base + time.Now().Format("150405.000000")
}

func TestStreamTables(t *testing.T) {
	tmpl, err := sam.Parse([]byte(streamTemplate))
	if err != nil {
		t.Fatal(err)
	}
	endpoint := os.Getenv(EnvDynamoDBEndpoint)
	db := dynamodb.NewFromConfig(testConfig(), func(o *dynamodb.Options) { o.BaseEndpoint = aws.String(endpoint) })
	ctx := context.Background()
	streamOf := func(name string) *types.StreamSpecification {
		t.Helper()
		out, err := db.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(name)})
		if err != nil {
			t.Fatalf("DescribeTable %s: %v", name, err)
		}
		if out.Table.StreamSpecification != nil && out.Table.LatestStreamArn == nil {
			t.Errorf("%s: stream specification without a stream ARN", name)
		}
		return out.Table.StreamSpecification
	}

	t.Run("CreatedWithStream", func(t *testing.T) {
		name := uniqueName("streamtest-new-")
		for range 2 { // the second run finds the table with its stream
			if err := CreateTables(ctx, db, tmpl, func(string) string { return name }); err != nil {
				t.Fatalf("CreateTables: %v", err)
			}
		}
		spec := streamOf(name)
		if spec == nil || !aws.ToBool(spec.StreamEnabled) || spec.StreamViewType != types.StreamViewTypeNewImage {
			t.Fatalf("stream = %+v, want NEW_IMAGE enabled", spec)
		}
	})

	t.Run("ExistingTableGetsStream", func(t *testing.T) {
		name := uniqueName("streamtest-old-")
		plain := *tmpl
		plain.Tables = []sam.Table{tmpl.Tables[0]}
		plain.Tables[0].StreamView = ""
		if err := CreateTables(ctx, db, &plain, func(string) string { return name }); err != nil {
			t.Fatalf("CreateTables without stream: %v", err)
		}
		if spec := streamOf(name); spec != nil && aws.ToBool(spec.StreamEnabled) {
			t.Fatalf("table created without stream has one: %+v", spec)
		}
		for range 2 {
			if err := CreateTables(ctx, db, tmpl, func(string) string { return name }); err != nil {
				t.Fatalf("CreateTables with stream: %v", err)
			}
		}
		spec := streamOf(name)
		if spec == nil || !aws.ToBool(spec.StreamEnabled) || spec.StreamViewType != types.StreamViewTypeNewImage {
			t.Fatalf("stream = %+v, want NEW_IMAGE enabled", spec)
		}
	})
}

// streamRecorder is a stream handler that records the batches it gets and
// answers what decide says.
type streamRecorder struct {
	mu      sync.Mutex
	batches [][]events.DynamoDBEventRecord
	decide  func(batch []events.DynamoDBEventRecord) (events.DynamoDBEventResponse, error)
}

func (r *streamRecorder) handle(_ context.Context, ev events.DynamoDBEvent) (events.DynamoDBEventResponse, error) {
	r.mu.Lock()
	r.batches = append(r.batches, ev.Records)
	decide := r.decide
	r.mu.Unlock()
	if decide == nil {
		return events.DynamoDBEventResponse{}, nil
	}
	return decide(ev.Records)
}

// reset forgets the batches and sets how the handler answers.
func (r *streamRecorder) reset(decide func([]events.DynamoDBEventRecord) (events.DynamoDBEventResponse, error)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.batches, r.decide = nil, decide
}

func (r *streamRecorder) all() [][]events.DynamoDBEventRecord {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([][]events.DynamoDBEventRecord(nil), r.batches...)
}

// keys returns the pk of every record delivered, in delivery order.
func (r *streamRecorder) keys() []string {
	var out []string
	for _, b := range r.all() {
		for _, rec := range b {
			out = append(out, rec.Change.Keys["pk"].String())
		}
	}
	return out
}

// startStreamStack starts a stack on streamTemplate with a table of its
// own and quick retries.
func startStreamStack(t *testing.T) (*Stack, string) {
	t.Helper()
	tmpl, err := sam.Parse([]byte(streamTemplate))
	if err != nil {
		t.Fatal(err)
	}
	name := uniqueName("streamtest-items-")
	t.Setenv(EnvName("StreamItemsTable"), name)
	t.Setenv(EnvEndpoint, "")
	st, err := Start(context.Background(), Options{Template: tmpl})
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() { _ = st.Close() })
	st.streams.interval = 50 * time.Millisecond
	st.streams.retryDelay, st.streams.maxRetryDelay = time.Millisecond, 5*time.Millisecond
	return st, name
}

func idle(t *testing.T, st *Stack) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := st.StreamIdle(ctx); err != nil {
		t.Fatalf("StreamIdle: %v", err)
	}
}

func TestStreamDelivery(t *testing.T) {
	st, table := startStreamStack(t)
	ctx := context.Background()
	put := func(item map[string]types.AttributeValue) {
		t.Helper()
		if _, err := st.DB.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(table), Item: item}); err != nil {
			t.Fatalf("PutItem: %v", err)
		}
	}
	putKey := func(pk string) { put(map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: pk}}) }

	// Written before the subscription: LATEST does not deliver it.
	putKey("before")
	rec := &streamRecorder{}
	st.OnStream("watcher", rec.handle)

	t.Run("InsertWithItsImage", func(t *testing.T) {
		put(map[string]types.AttributeValue{
			"pk":    &types.AttributeValueMemberS{Value: "item-1"},
			"n":     &types.AttributeValueMemberN{Value: "12.5"},
			"ok":    &types.AttributeValueMemberBOOL{Value: true},
			"no":    &types.AttributeValueMemberBOOL{Value: false},
			"none":  &types.AttributeValueMemberNULL{Value: true},
			"bin":   &types.AttributeValueMemberB{Value: []byte{1, 2, 3}},
			"tags":  &types.AttributeValueMemberSS{Value: []string{"a", "b"}},
			"list":  &types.AttributeValueMemberL{Value: []types.AttributeValue{&types.AttributeValueMemberS{Value: "x"}, &types.AttributeValueMemberN{Value: "7"}, &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{"deep": &types.AttributeValueMemberBOOL{Value: true}}}}},
			"attrs": &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{"points": &types.AttributeValueMemberN{Value: "100"}, "inner": &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{"name": &types.AttributeValueMemberS{Value: "Ada"}}}}},
		})
		idle(t, st)
		batches := rec.all()
		if len(batches) != 1 || len(batches[0]) != 1 {
			t.Fatalf("batches = %+v; want the one insert (not the item written before OnStream)", batches)
		}
		r := batches[0][0]
		if r.EventName != "INSERT" || r.EventSource != "aws:dynamodb" || r.AWSRegion == "" || r.EventID == "" ||
			r.EventSourceArn == "" || r.Change.SequenceNumber == "" || r.Change.SizeBytes <= 0 ||
			r.Change.StreamViewType != "NEW_IMAGE" || r.Change.ApproximateCreationDateTime.IsZero() {
			t.Errorf("record = %+v", r)
		}
		if got := r.Change.Keys; len(got) != 1 || got["pk"].String() != "item-1" {
			t.Errorf("keys = %v", got)
		}
		img := r.Change.NewImage
		if r.Change.OldImage != nil {
			t.Errorf("old image in a NEW_IMAGE stream: %v", r.Change.OldImage)
		}
		list := img["list"].List()
		if img["pk"].String() != "item-1" || img["n"].Number() != "12.5" || !img["ok"].Boolean() || img["no"].Boolean() ||
			!img["none"].IsNull() || !reflect.DeepEqual(img["bin"].Binary(), []byte{1, 2, 3}) ||
			!reflect.DeepEqual(img["tags"].StringSet(), []string{"a", "b"}) ||
			len(list) != 3 || list[0].String() != "x" || list[1].Number() != "7" || !list[2].Map()["deep"].Boolean() ||
			img["attrs"].Map()["points"].Number() != "100" || img["attrs"].Map()["inner"].Map()["name"].String() != "Ada" {
			t.Errorf("new image = %v", img)
		}
	})

	t.Run("InOrderInBatches", func(t *testing.T) {
		rec.reset(nil)
		var want []string
		for i := range 25 {
			k := fmt.Sprintf("order-%02d", i)
			want = append(want, k)
			putKey(k)
		}
		idle(t, st)
		if got := rec.keys(); !reflect.DeepEqual(got, want) {
			t.Fatalf("keys = %v, want %v", got, want)
		}
		for _, b := range rec.all() {
			if len(b) > 10 {
				t.Errorf("batch of %d records; BatchSize is 10", len(b))
			}
		}
	})

	t.Run("ModifyAndRemove", func(t *testing.T) {
		rec.reset(nil)
		putKey("mod")
		put(map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: "mod"}, "v": &types.AttributeValueMemberN{Value: "2"}})
		if _, err := st.DB.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String(table), Key: map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: "mod"}}}); err != nil {
			t.Fatal(err)
		}
		idle(t, st)
		var names []string
		var last events.DynamoDBEventRecord
		for _, b := range rec.all() {
			for _, r := range b {
				names = append(names, r.EventName)
				last = r
			}
		}
		if !reflect.DeepEqual(names, []string{"INSERT", "MODIFY", "REMOVE"}) {
			t.Fatalf("events = %v", names)
		}
		if last.Change.Keys["pk"].String() != "mod" || last.Change.NewImage != nil {
			t.Errorf("remove record = %+v", last.Change)
		}
	})

	t.Run("BatchItemFailureIsRetriedFromThatRecord", func(t *testing.T) {
		failed := false
		rec.reset(func(batch []events.DynamoDBEventRecord) (events.DynamoDBEventResponse, error) {
			for _, r := range batch {
				if r.Change.Keys["pk"].String() == "partial-2" && !failed {
					failed = true
					return events.DynamoDBEventResponse{BatchItemFailures: []events.DynamoDBBatchItemFailure{{ItemIdentifier: r.Change.SequenceNumber}}}, nil
				}
			}
			return events.DynamoDBEventResponse{}, nil
		})
		for i := range 4 {
			putKey(fmt.Sprintf("partial-%d", i))
		}
		idle(t, st)
		count := map[string]int{}
		var retry []events.DynamoDBEventRecord
		for _, b := range rec.all() {
			for _, r := range b {
				count[r.Change.Keys["pk"].String()]++
			}
			if count["partial-2"] == 2 && retry == nil {
				retry = b
			}
		}
		if count["partial-0"] != 1 || count["partial-1"] != 1 || count["partial-2"] != 2 || count["partial-3"] < 1 {
			t.Fatalf("deliveries = %v; want partial-2 twice, the records before it once", count)
		}
		if retry == nil || retry[0].Change.Keys["pk"].String() != "partial-2" {
			t.Fatalf("the retry does not start at the failed record: %v", rec.keys())
		}
	})

	t.Run("ErrorRetriesTheBatch", func(t *testing.T) {
		calls := 0
		rec.reset(func(batch []events.DynamoDBEventRecord) (events.DynamoDBEventResponse, error) {
			calls++
			switch calls {
			case 1:
				return events.DynamoDBEventResponse{}, errors.New("boom")
			case 2:
				panic("handler bug")
			}
			return events.DynamoDBEventResponse{}, nil
		})
		putKey("err-1")
		idle(t, st)
		if got := rec.keys(); !reflect.DeepEqual(got, []string{"err-1", "err-1", "err-1"}) {
			t.Fatalf("keys = %v; want err-1 three times (error, panic, success)", got)
		}
	})

	t.Run("RecordThatKeepsFailingIsSkipped", func(t *testing.T) {
		rec.reset(func(batch []events.DynamoDBEventRecord) (events.DynamoDBEventResponse, error) {
			for _, r := range batch {
				if r.Change.Keys["pk"].String() == "poison" {
					return events.DynamoDBEventResponse{BatchItemFailures: []events.DynamoDBBatchItemFailure{{ItemIdentifier: r.Change.SequenceNumber}}}, nil
				}
			}
			return events.DynamoDBEventResponse{}, nil
		})
		putKey("poison")
		idle(t, st)
		// One attempt and MaximumRetryAttempts (2) retries, then skipped.
		if got := rec.keys(); !reflect.DeepEqual(got, []string{"poison", "poison", "poison"}) {
			t.Fatalf("keys = %v; want poison 3 times", got)
		}
		// Later records are not held up.
		rec.reset(nil)
		putKey("after-poison")
		idle(t, st)
		if got := rec.keys(); !reflect.DeepEqual(got, []string{"after-poison"}) {
			t.Fatalf("keys = %v", got)
		}
	})

	t.Run("BisectsAFailingBatch", func(t *testing.T) {
		// A handler that fails the whole batch while it holds the poison
		// record: bisecting isolates it, the others get through.
		var mu sync.Mutex
		ok := map[string]bool{}
		rec.reset(func(batch []events.DynamoDBEventRecord) (events.DynamoDBEventResponse, error) {
			for _, r := range batch {
				if r.Change.Keys["pk"].String() == "bisect-3" {
					return events.DynamoDBEventResponse{}, errors.New("poison in the batch")
				}
			}
			mu.Lock()
			defer mu.Unlock()
			for _, r := range batch {
				ok[r.Change.Keys["pk"].String()] = true
			}
			return events.DynamoDBEventResponse{}, nil
		})
		// Written while the handler is held, so that they arrive in one
		// batch.
		hold, held := make(chan struct{}), make(chan struct{}, 1)
		st.OnStream("watcher", func(ctx context.Context, ev events.DynamoDBEvent) (events.DynamoDBEventResponse, error) {
			held <- struct{}{}
			<-hold
			return events.DynamoDBEventResponse{}, nil
		})
		putKey("bisect-hold")
		select {
		case <-held:
		case <-time.After(10 * time.Second):
			t.Fatal("no delivery")
		}
		for i := range 8 {
			putKey(fmt.Sprintf("bisect-%d", i))
		}
		st.OnStream("watcher", rec.handle)
		close(hold)
		idle(t, st)
		for i := range 8 {
			if k := fmt.Sprintf("bisect-%d", i); ok[k] != (k != "bisect-3") {
				t.Errorf("%s delivered = %v", k, ok[k])
			}
		}
	})

	t.Run("StreamReplaced", func(t *testing.T) {
		// The stream disabled and enabled again (a new stream ARN): the
		// poller finds the new stream and reads it from its start.
		rec.reset(nil)
		for _, enabled := range []bool{false, true} {
			spec := &types.StreamSpecification{StreamEnabled: aws.Bool(enabled)}
			if enabled {
				spec.StreamViewType = types.StreamViewTypeNewImage
			}
			if _, err := st.DB.UpdateTable(ctx, &dynamodb.UpdateTableInput{TableName: aws.String(table), StreamSpecification: spec}); err != nil {
				t.Fatalf("UpdateTable: %v", err)
			}
		}
		putKey("new-stream")
		idle(t, st)
		if got := rec.keys(); !reflect.DeepEqual(got, []string{"new-stream"}) {
			t.Fatalf("keys = %v", got)
		}
	})
}

func TestStreamFirstRecordOfAnEmptyShard(t *testing.T) {
	// DynamoDB Local numbers the writes of all tables together and fails
	// an iterator taken on an empty shard (TrimmedDataAccessException)
	// once the shard's first record does not carry the shard's starting
	// sequence number: the poller reads that shard from its start.
	st, table := startStreamStack(t)
	ctx := context.Background()
	rec := &streamRecorder{}
	st.OnStream("watcher", rec.handle) // the shard is empty: LATEST there
	plain, err := sam.Parse([]byte(streamTemplate))
	if err != nil {
		t.Fatal(err)
	}
	plain.Tables[0].StreamView = ""
	other := uniqueName("streamtest-other-")
	if err := CreateTables(ctx, st.DB, plain, func(string) string { return other }); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{other, other, table, table} {
		if _, err := st.DB.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(name), Item: map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: uniqueName("k")}}}); err != nil {
			t.Fatal(err)
		}
	}
	idle(t, st)
	if got := rec.keys(); len(got) != 2 {
		t.Fatalf("keys = %v; want the two records of the table", got)
	}
}

func TestStreamClose(t *testing.T) {
	st, table := startStreamStack(t)
	ctx := context.Background()
	entered := make(chan struct{}, 10)
	var calls sync.Map
	st.OnStream("watcher", func(ctx context.Context, ev events.DynamoDBEvent) (events.DynamoDBEventResponse, error) {
		for _, r := range ev.Records {
			calls.Store(r.Change.Keys["pk"].String(), true)
		}
		entered <- struct{}{}
		<-ctx.Done() // a handler still running when the stack closes
		return events.DynamoDBEventResponse{}, ctx.Err()
	})
	db := st.DB
	put := func(pk string) {
		t.Helper()
		if _, err := db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(table), Item: map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: pk}}}); err != nil {
			t.Fatalf("PutItem: %v", err)
		}
	}
	put("first")
	select {
	case <-entered:
	case <-time.After(10 * time.Second):
		t.Fatal("no delivery")
	}
	closed := make(chan error, 1)
	go func() { closed <- st.Close() }()
	select {
	case err := <-closed:
		if err != nil {
			t.Fatalf("Close: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Close waits for the poller")
	}
	// Nothing polls any more: a record written now reaches no handler.
	put("after-close")
	time.Sleep(300 * time.Millisecond)
	if _, ok := calls.Load("after-close"); ok {
		t.Fatal("delivered after Close")
	}
	if err := st.StreamIdle(ctx); err != nil {
		t.Fatalf("StreamIdle after Close: %v", err)
	}
	st.OnStream("watcher", func(context.Context, events.DynamoDBEvent) (events.DynamoDBEventResponse, error) {
		t.Error("handler registered after Close was called")
		return events.DynamoDBEventResponse{}, nil
	})
	put("after-close-2")
	time.Sleep(300 * time.Millisecond)
}

func TestStreamIdleWithoutSubscriptions(t *testing.T) {
	var st *Stack
	if err := st.StreamIdle(context.Background()); err != nil {
		t.Fatal(err)
	}
	st = &Stack{}
	st.OnStream("rules", nil)
	if err := st.StreamIdle(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func TestStreamIdleTimesOutWhileAHandlerFails(t *testing.T) {
	st, table := startStreamStack(t)
	// Retry without end (no MaximumRetryAttempts): the record is never
	// delivered.
	st.Template.Functions[0].Streams[0].MaximumRetryAttempts = -1
	st.OnStream("watcher", func(context.Context, events.DynamoDBEvent) (events.DynamoDBEventResponse, error) {
		return events.DynamoDBEventResponse{}, errors.New("always")
	})
	if _, err := st.DB.PutItem(context.Background(), &dynamodb.PutItemInput{TableName: aws.String(table), Item: map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: "stuck"}}}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	if err := st.StreamIdle(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("StreamIdle = %v; want the deadline", err)
	}
}

func TestStreamImage(t *testing.T) {
	got := streamImage(map[string]streamtypes.AttributeValue{
		"s":  &streamtypes.AttributeValueMemberS{Value: "x"},
		"ns": &streamtypes.AttributeValueMemberNS{Value: []string{"1", "2"}},
		"bs": &streamtypes.AttributeValueMemberBS{Value: [][]byte{{1}}},
		"l":  &streamtypes.AttributeValueMemberL{},
		"m":  &streamtypes.AttributeValueMemberM{},
	})
	want := map[string]events.DynamoDBAttributeValue{
		"s":  events.NewStringAttribute("x"),
		"ns": events.NewNumberSetAttribute([]string{"1", "2"}),
		"bs": events.NewBinarySetAttribute([][]byte{{1}}),
		"l":  events.NewListAttribute([]events.DynamoDBAttributeValue{}),
		"m":  events.NewMapAttribute(map[string]events.DynamoDBAttributeValue{}),
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("streamImage = %v, want %v", got, want)
	}
	if streamImage(nil) != nil {
		t.Fatal("streamImage(nil) is not nil")
	}
}

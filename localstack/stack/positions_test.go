package stack

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/loyalty-platform/platform/shared/contract/sam"
)

// startStreamStackWith starts a stack on streamTemplate with opts (its
// table named by the test's environment) and quick polls.
func startStreamStackWith(t *testing.T, opts Options) *Stack {
	t.Helper()
	tmpl, err := sam.Parse([]byte(streamTemplate))
	if err != nil {
		t.Fatal(err)
	}
	opts.Template = tmpl
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	st, err := Start(ctx, opts)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() { _ = st.Close() })
	st.streams.interval = 50 * time.Millisecond
	st.streams.retryDelay, st.streams.maxRetryDelay = time.Millisecond, 5*time.Millisecond
	return st
}

// putKeys writes an item of each key to table.
func putKeys(t *testing.T, db *dynamodb.Client, table string, keys ...string) {
	t.Helper()
	for _, k := range keys {
		if _, err := db.PutItem(context.Background(), &dynamodb.PutItemInput{TableName: aws.String(table), Item: map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: k}}}); err != nil {
			t.Fatalf("PutItem %s: %v", k, err)
		}
	}
}

// TestStreamResumesAfterARestart: a stack started again with the state
// folder of the one before delivers the records written while no poller
// ran (3 of 500 orders lost their grant when every start began at
// LATEST), and only those.
func TestStreamResumesAfterARestart(t *testing.T) {
	table := uniqueName("streamtest-resume-")
	t.Setenv(EnvName("StreamItemsTable"), table)
	t.Setenv(EnvEndpoint, "")
	state := t.TempDir()

	first := startStreamStackWith(t, Options{StateDir: state})
	rec := &streamRecorder{}
	first.OnStream("watcher", rec.handle)
	putKeys(t, first.DB, table, "before-stop")
	idle(t, first)
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	// DynamoDB Local (the package's) outlives the stack.
	putKeys(t, first.DB, table, "while-down-1", "while-down-2")

	rec.reset(nil)
	second := startStreamStackWith(t, Options{StateDir: state})
	second.OnStream("watcher", rec.handle)
	putKeys(t, second.DB, table, "after-start")
	idle(t, second)
	if got, want := rec.keys(), []string{"while-down-1", "while-down-2", "after-start"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("delivered after the restart: %v, want %v", got, want)
	}

	t.Run("UnreadablePositions", func(t *testing.T) {
		// Positions that cannot be read: everything is read from the
		// start (delivered at least once rather than lost), here a table
		// whose records were written before the subscription.
		if err := second.Close(); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(state, PositionsFile), []byte("{not json"), 0o644); err != nil {
			t.Fatal(err)
		}
		other := uniqueName("streamtest-unreadable-")
		t.Setenv(EnvName("StreamItemsTable"), other)
		third := startStreamStackWith(t, Options{StateDir: state})
		putKeys(t, third.DB, other, "before-subscription")
		rec.reset(nil)
		third.OnStream("watcher", rec.handle)
		idle(t, third)
		if got, want := rec.keys(), []string{"before-subscription"}; !reflect.DeepEqual(got, want) {
			t.Fatalf("delivered = %v, want %v", got, want)
		}
	})
}

// TestStreamPositionsWhenDynamoDBLocalRestarts: DynamoDB Local restarted
// with the stack. Kept on disk, its stream is the one the positions name:
// the records written after the last delivered one come, and only those.
// Restarted in memory (as `make run` runs it), the stream is a new one: it
// is read from its start (TRIM_HORIZON), so the records written between
// its creation and the subscription come too, where LATEST lost them.
func TestStreamPositionsWhenDynamoDBLocalRestarts(t *testing.T) {
	table := uniqueName("streamtest-restart-")
	t.Setenv(EnvName("StreamItemsTable"), table)
	t.Setenv(EnvEndpoint, "")
	t.Setenv(EnvDynamoDBEndpoint, "") // each stack starts its own
	state, data := t.TempDir(), t.TempDir()
	rec := &streamRecorder{}

	onDisk := startStreamStackWith(t, Options{StateDir: state, DynamoDBDir: data})
	onDisk.OnStream("watcher", rec.handle)
	putKeys(t, onDisk.DB, table, "delivered")
	idle(t, onDisk)
	onDisk.OnStream("watcher", nil) // the poller stops; the emulator goes on
	putKeys(t, onDisk.DB, table, "undelivered-1", "undelivered-2")
	if err := onDisk.Close(); err != nil {
		t.Fatal(err)
	}

	t.Run("OnDisk", func(t *testing.T) {
		rec.reset(nil)
		again := startStreamStackWith(t, Options{StateDir: state, DynamoDBDir: data})
		again.OnStream("watcher", rec.handle)
		putKeys(t, again.DB, table, "after-restart")
		idle(t, again)
		if got, want := rec.keys(), []string{"undelivered-1", "undelivered-2", "after-restart"}; !reflect.DeepEqual(got, want) {
			t.Fatalf("delivered = %v, want %v", got, want)
		}
		if err := again.Close(); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("InMemory", func(t *testing.T) {
		rec.reset(nil)
		fresh := startStreamStackWith(t, Options{StateDir: state})
		putKeys(t, fresh.DB, table, "before-subscription")
		fresh.OnStream("watcher", rec.handle)
		putKeys(t, fresh.DB, table, "after-subscription")
		idle(t, fresh)
		if got, want := rec.keys(), []string{"before-subscription", "after-subscription"}; !reflect.DeepEqual(got, want) {
			t.Fatalf("delivered = %v, want %v", got, want)
		}
	})
}

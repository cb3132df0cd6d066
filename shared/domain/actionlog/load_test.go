package actionlog_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/loyalty-platform/platform/shared/domain/action"
	"github.com/loyalty-platform/platform/shared/platform/clock"
	ts "github.com/loyalty-platform/platform/shared/testkit"
	"github.com/loyalty-platform/platform/shared/wire"
	"github.com/loyalty-platform/platform/shared/wire/whole"
)

// Helpers of the load benchmark and the large export: realistic actions
// in the stored shape (action.Recorder.Puts builds every item, so the
// keys, the write shard and the indexes are the recorder's own), written
// fast with BatchWriteItem (without feed heads: lists never read them).

// The actions a load spreads over: loadUsers users checking in and out at
// loadLocations locations.
const (
	loadUsers     = 1000
	loadLocations = 50
)

var triggers = []string{"GEO", "BEACON", "CODE", "POS"}

// loadAction returns the i-th action of a load, at instant at: a check-in
// (even i) or the checkout that follows it (odd i) of one of loadUsers
// users at one of loadLocations locations, with the metadata the checkins
// domain records.
func loadAction(h *ts.Harness, i int, at time.Time) action.Action {
	u := i / 2 % loadUsers
	l := i / 2 % loadLocations
	checkin := fmt.Sprintf("chk%021d", i/2)
	a := action.Action{
		ID:       action.NewID(),
		TenantID: h.Tenant.ID,
		When:     action.WhenAt(at, action.Zone("Europe/London")),
		Context: action.Context{
			Tenant: action.TenantRef{ID: h.Tenant.ID, Title: h.Tenant.Title},
			User:   &action.UserRef{ID: fmt.Sprintf("usr%021d", u), Name: fmt.Sprintf("Load User %d", u), PrimaryPlatform: "IOS"},
			Location: &action.LocationRef{
				ID: fmt.Sprintf("loc%021d", l), Title: fmt.Sprintf("Load Place %d", l),
				Geo: []float64{-0.1276 + float64(l)/1000, 51.5072}, Regions: []string{"London"}, Tags: []string{"load"},
			},
		},
	}
	if i%2 == 0 {
		a.Type = action.CheckinCreated
		a.Metadata = map[string]any{"checkinId": checkin, "type": "LOCATION", "trigger": triggers[i/2%len(triggers)]}
	} else {
		a.Type = action.Checkout
		a.Metadata = map[string]any{"checkinId": checkin, "type": "LOCATION", "trigger": triggers[i/2%len(triggers)],
			"checkedInAt": clock.Stamp(at.Add(-10 * time.Minute)), "durationSeconds": 600, "reason": "REQUESTED"}
	}
	return a
}

// putRequests returns the BatchWriteItem requests of actions, each item as
// the recorder stores it.
func putRequests(rec *action.Recorder, actions []action.Action) ([]types.WriteRequest, error) {
	reqs := make([]types.WriteRequest, 0, len(actions))
	for _, a := range actions {
		puts, _, err := rec.Puts(a)
		if err != nil {
			return nil, err
		}
		reqs = append(reqs, types.WriteRequest{PutRequest: &types.PutRequest{Item: puts[0].Put.Item}})
	}
	return reqs, nil
}

// batchPut writes up to 25 actions with BatchWriteItem, retrying the
// unprocessed ones.
func batchPut(ctx context.Context, rec *action.Recorder, actions []action.Action) error {
	reqs, err := putRequests(rec, actions)
	if err != nil {
		return err
	}
	in := map[string][]types.WriteRequest{rec.Table: reqs}
	for len(in) > 0 {
		out, err := rec.DB.BatchWriteItem(ctx, &dynamodb.BatchWriteItemInput{RequestItems: in})
		if err != nil {
			return fmt.Errorf("batch write: %w", err)
		}
		in = out.UnprocessedItems
	}
	return nil
}

// seedActions writes n actions for the harness's tenant with writers
// concurrent BatchWriteItem writers, 25 items a request; action i is
// loadAction(i) at at(i). The items are made as they are written, so the
// seed never holds more than one batch per writer. It returns how long
// the writes took.
func seedActions(tb testing.TB, h *ts.Harness, n, writers int, at func(i int) time.Time) time.Duration {
	tb.Helper()
	ctx := context.Background()
	rec := h.Deps.Actions
	var next, done atomic.Int64
	errs := make([]error, writers)
	start := time.Now()
	stop := make(chan struct{})
	var progress sync.WaitGroup
	progress.Add(1)
	go func() {
		defer progress.Done()
		tick := time.NewTicker(30 * time.Second)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				d := done.Load()
				tb.Logf("seed: %d of %d actions in %v (%.0f/s)", d, n, time.Since(start).Round(time.Second), float64(d)/time.Since(start).Seconds())
			}
		}
	}()
	var wg sync.WaitGroup
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			batch := make([]action.Action, 0, 25)
			for {
				i := int(next.Add(25)) - 25
				if i >= n {
					return
				}
				batch = batch[:0]
				for j := i; j < min(i+25, n); j++ {
					batch = append(batch, loadAction(h, j, at(j)))
				}
				if err := batchPut(ctx, rec, batch); err != nil {
					errs[w] = err
					return
				}
				done.Add(int64(len(batch)))
			}
		}()
	}
	wg.Wait()
	close(stop)
	progress.Wait()
	for _, err := range errs {
		if err != nil {
			tb.Fatalf("seed %d actions: %v", n, err)
		}
	}
	return time.Since(start)
}

// withoutStreamFunctions stops the stack's delivery of DynamoDB stream
// records to the functions with stream events (the rules function, which
// the harness runs in this process on every Actions-table insert, a Query
// of the rules table each) until the test ends; then a rules function
// built as the harness builds it takes over again (from the stream's tip).
// Nothing in testsupport is changed: the stack's OnStream with a nil
// handler stops a function's pollers.
func withoutStreamFunctions(tb testing.TB) {
	tb.Helper()
	st := ts.Stack(tb)
	var names []string
	for _, f := range st.Template.Functions {
		if len(f.Streams) > 0 {
			names = append(names, f.Name)
			st.OnStream(f.Name, nil)
		}
	}
	tb.Cleanup(func() {
		deps, err := whole.New(context.Background(), wire.ConfigFromEnv())
		if err != nil {
			tb.Errorf("rebuild the stream functions: %v", err)
			return
		}
		for _, name := range names {
			h, err := deps.StreamHandler(name)
			if err != nil {
				tb.Errorf("stream function %s: %v", name, err)
				continue
			}
			st.OnStream(name, h)
		}
	})
}

// drainStreams waits (at most limit) until the stream records written so
// far were delivered to the stream functions, and returns how long that
// took.
func drainStreams(tb testing.TB, limit time.Duration) time.Duration {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	start := time.Now()
	if err := ts.Stack(tb).StreamIdle(ctx); err != nil {
		tb.Fatalf("wait for the stream functions: %v", err)
	}
	return time.Since(start)
}

// percentile returns the p-th percentile (0 < p <= 100, nearest rank) of
// sorted durations, in milliseconds.
func percentile(sorted []time.Duration, p float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	rank := int(float64(len(sorted))*p/100+0.999999) - 1
	rank = max(0, min(rank, len(sorted)-1))
	return float64(sorted[rank]) / float64(time.Millisecond)
}

func sortedCopy(d []time.Duration) []time.Duration {
	out := slices.Clone(d)
	slices.Sort(out)
	return out
}

// envInt reads a positive integer from the environment, def when unset.
func envInt(tb testing.TB, name string, def int) int {
	tb.Helper()
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n <= 0 {
		tb.Fatalf("%s=%q: want a positive integer", name, v)
	}
	return n
}

// envDuration reads a duration from the environment, def when unset.
func envDuration(tb testing.TB, name string, def time.Duration) time.Duration {
	tb.Helper()
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		tb.Fatalf("%s=%q: want a duration such as 20s", name, v)
	}
	return d
}

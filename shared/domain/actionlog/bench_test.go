package actionlog_test

import (
	"context"
	"encoding/json"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/loyalty-platform/platform/shared/domain/action"
	ts "github.com/loyalty-platform/platform/shared/testkit"
)

// The load of BenchmarkTenantListUnderWriteLoad; each can be changed in
// the environment.
const (
	// benchSeed (ACTIONS_BENCH_SEED) actions are in the tenant at the
	// start of both phases.
	benchSeed = 20_000
	// benchRate (ACTIONS_BENCH_RATE) is the target of the writers, in
	// actions per second.
	benchRate = 1000
	// benchWriters (ACTIONS_BENCH_WRITERS) concurrent writers hold it.
	benchWriters = 48
	// benchPhase (ACTIONS_BENCH_PHASE) is how long each phase lists.
	benchPhase = 20 * time.Second
	// benchPage is the page size of the list measured.
	benchPage = 100
)

// BenchmarkTenantListUnderWriteLoad measures GET /actions?limit=100 end to
// end (HTTP, the API Gateway stand-in, the Lambda adapter, the handler,
// DynamoDB Local) for a tenant of benchSeed actions, in two phases of
// benchPhase each, one after the other in one run: idle, then while
// background writers record actions for the same tenant at benchRate a
// second. One reader lists back to back; the metrics are its latencies
// (p50/p95/p99, ms) and request count per phase, the write rate the
// writers achieved during the loaded phase (against the target) and their
// latencies, and the items the list's Queries read per page.
//
// The writers write real action items for the same tenant, paced to the
// target from a common schedule (a writer late on the schedule writes at
// once, so a short stall is caught up): by default BatchWriteItem requests
// of 25 items, each made by the real recorder (Recorder.TransactItem: the
// stored shape, keys, write shard and indexes); with
// ACTIONS_BENCH_WRITE=put each action is recorded alone with
// Recorder.Put (one conditional PutItem, as a domain records an action
// outside a transaction). On a 2-core machine DynamoDB Local takes only
// 300 to 750 single PutItems a second, so only the batches reach 1,000
// actions a second there; writes/s reports what was reached.
//
// The harness runs the rules function in this process on every insert of
// the Actions table (the stack polls DynamoDB Local's stream), one Query
// of the rules table per action: on a small machine that competes with
// the list for the CPU, which it would not in AWS (another Lambda, another
// table). By default the benchmark stops that delivery
// (withoutStreamFunctions); ACTIONS_BENCH_RULES=on keeps it, and the
// benchmark then waits for the rules function to catch up before each
// phase and reports how far behind the writes it fell (rules-lag-s).
//
//	go run ./localstack/cmd/testenv -- go test -run '^$' -bench TenantListUnderWriteLoad -benchtime 1x -timeout 30m ./shared/actionlog/
func BenchmarkTenantListUnderWriteLoad(b *testing.B) {
	seedN := envInt(b, "ACTIONS_BENCH_SEED", benchSeed)
	rate := envInt(b, "ACTIONS_BENCH_RATE", benchRate)
	writers := envInt(b, "ACTIONS_BENCH_WRITERS", benchWriters)
	phase := envDuration(b, "ACTIONS_BENCH_PHASE", benchPhase)
	batch := os.Getenv("ACTIONS_BENCH_WRITE") != "put"
	rules := os.Getenv("ACTIONS_BENCH_RULES") == "on"

	h := ts.New(b)
	h.SkipContract = true // measure the API, not the test's response validation
	if !rules {
		withoutStreamFunctions(b)
	}
	reads := recordListReads(b, h)
	// The seed: one action every 100 ms before the benchmark started.
	t0 := time.Now().Add(-time.Duration(seedN) * 100 * time.Millisecond)
	took := seedActions(b, h, seedN, 8, func(i int) time.Time { return t0.Add(time.Duration(i) * 100 * time.Millisecond) })
	b.Logf("seeded %d actions in %v (%.0f/s)", seedN, took.Round(time.Millisecond), float64(seedN)/took.Seconds())
	if rules {
		b.Logf("rules function caught up with the seed in %v", drainStreams(b, 15*time.Minute).Round(time.Millisecond))
	}
	// Warm the path up, and let DynamoDB Local settle after the seed
	// (its JIT, its garbage collection).
	listFor(b, h, 10*time.Second)
	reads.reset()

	var idle, loaded, writeLat []time.Duration
	var idleItems, loadedItems, loadedQueries, written, writeErrs int
	var writeTime, lag, idleDB, loadedDB time.Duration
	b.ResetTimer()
	for n := 0; n < b.N; n++ {
		// (a) idle.
		idle = append(idle, listFor(b, h, phase)...)
		idleDB += reads.took()
		_, _, items := reads.reset()
		idleItems += items

		// (b) the same list while the writers write.
		w := startWriters(h, rate, writers, batch)
		loaded = append(loaded, listFor(b, h, phase)...)
		res := w.stop()
		loadedDB += reads.took()
		_, q, items := reads.reset()
		loadedQueries, loadedItems = loadedQueries+len(q), loadedItems+items
		written += res.written
		writeErrs += res.errors
		writeTime += res.elapsed
		writeLat = append(writeLat, res.latencies...)
		if res.firstErr != nil {
			b.Logf("write error (%d in all): %v", res.errors, res.firstErr)
		}
		if rules {
			b.StopTimer()
			lag += drainStreams(b, 15*time.Minute)
			b.StartTimer()
		}
	}
	b.StopTimer()

	si, sl, sw := sortedCopy(idle), sortedCopy(loaded), sortedCopy(writeLat)
	b.ReportMetric(0, "ns/op")
	b.ReportMetric(percentile(si, 50), "idle-p50-ms")
	b.ReportMetric(percentile(si, 95), "idle-p95-ms")
	b.ReportMetric(percentile(si, 99), "idle-p99-ms")
	b.ReportMetric(float64(len(idle)), "idle-ops")
	b.ReportMetric(percentile(sl, 50), "load-p50-ms")
	b.ReportMetric(percentile(sl, 95), "load-p95-ms")
	b.ReportMetric(percentile(sl, 99), "load-p99-ms")
	b.ReportMetric(float64(len(loaded)), "load-ops")
	b.ReportMetric(float64(rate), "target-writes/s")
	b.ReportMetric(float64(written)/writeTime.Seconds(), "writes/s")
	b.ReportMetric(percentile(sw, 50), "write-p50-ms")
	b.ReportMetric(percentile(sw, 99), "write-p99-ms")
	b.ReportMetric(float64(writeErrs), "write-errors")
	if len(idle) > 0 && len(loaded) > 0 {
		b.ReportMetric(float64(idleItems)/float64(len(idle)), "idle-items-read/page")
		b.ReportMetric(float64(loadedItems)/float64(len(loaded)), "load-items-read/page")
		b.ReportMetric(float64(loadedQueries)/float64(len(loaded)), "queries/page")
		b.ReportMetric(float64(idleDB.Milliseconds())/float64(len(idle)), "idle-query-ms/page")
		b.ReportMetric(float64(loadedDB.Milliseconds())/float64(len(loaded)), "load-query-ms/page")
	}
	if rules {
		b.ReportMetric(lag.Seconds()/float64(b.N), "rules-lag-s")
	}
	b.Logf("idle: %d lists, p50 %.1f ms, p95 %.1f ms, p99 %.1f ms, max %.1f ms", len(idle), percentile(si, 50), percentile(si, 95), percentile(si, 99), percentile(si, 100))
	b.Logf("load: %d lists, p50 %.1f ms, p95 %.1f ms, p99 %.1f ms, max %.1f ms; %d writes (%s) in %v = %.0f/s of %d/s, write p50 %.1f ms, p99 %.1f ms, %d errors",
		len(loaded), percentile(sl, 50), percentile(sl, 95), percentile(sl, 99), percentile(sl, 100),
		written, map[bool]string{false: "Put", true: "BatchWriteItem"}[batch], writeTime.Round(time.Millisecond), float64(written)/writeTime.Seconds(), rate,
		percentile(sw, 50), percentile(sw, 99), writeErrs)
}

// listPage lists the tenant's newest benchPage actions and fails unless
// the page is full.
func listPage(b *testing.B, h *ts.Harness) {
	b.Helper()
	r := h.Do("GET", "/actions?limit=100", nil, h.Admin())
	if r.Status != 200 {
		b.Fatalf("list: %d %s", r.Status, r.Body)
	}
	var l struct {
		Actions []json.RawMessage `json:"actions"`
	}
	if err := json.Unmarshal(r.Body, &l); err != nil || len(l.Actions) != benchPage {
		b.Fatalf("list: %d actions, %v", len(l.Actions), err)
	}
}

// listFor lists back to back for d and returns each list's latency.
func listFor(b *testing.B, h *ts.Harness, d time.Duration) []time.Duration {
	var out []time.Duration
	end := time.Now().Add(d)
	for time.Now().Before(end) {
		start := time.Now()
		listPage(b, h)
		out = append(out, time.Since(start))
	}
	return out
}

// writeLoad is the background writers of one phase.
type writeLoad struct {
	cancel  context.CancelFunc
	wg      sync.WaitGroup
	start   time.Time
	written atomic.Int64

	mu        sync.Mutex
	latencies []time.Duration
	errors    int
	firstErr  error
}

type writeResult struct {
	written, errors int
	elapsed         time.Duration
	latencies       []time.Duration
	firstErr        error
}

// startWriters starts writers that record actions of the harness's tenant
// (timestamped now) at rate actions a second, from one schedule: write
// (or batch) i is due at start + i/rate.
func startWriters(h *ts.Harness, rate, writers int, batch bool) *writeLoad {
	ctx, cancel := context.WithCancel(context.Background())
	w := &writeLoad{cancel: cancel, start: time.Now()}
	per := 1
	if batch {
		per = 25
	}
	interval := time.Second * time.Duration(per) / time.Duration(rate)
	rec := h.Deps.Actions
	var next atomic.Int64
	for g := 0; g < writers; g++ {
		w.wg.Add(1)
		go func() {
			defer w.wg.Done()
			var lat []time.Duration
			defer func() {
				w.mu.Lock()
				w.latencies = append(w.latencies, lat...)
				w.mu.Unlock()
			}()
			for {
				i := int(next.Add(1)) - 1
				if wait := time.Until(w.start.Add(time.Duration(i) * interval)); wait > 0 {
					select {
					case <-ctx.Done():
						return
					case <-time.After(wait):
					}
				} else if ctx.Err() != nil {
					return
				}
				started := time.Now()
				var err error
				if batch {
					actions := make([]action.Action, per)
					for j := range actions {
						actions[j] = loadAction(h, i*per+j, started)
					}
					err = batchPut(ctx, rec, actions)
				} else {
					err = rec.Put(ctx, loadAction(h, i, started))
				}
				if ctx.Err() != nil {
					return // stopped mid-write: not counted
				}
				lat = append(lat, time.Since(started))
				if err != nil {
					w.mu.Lock()
					w.errors++
					if w.firstErr == nil {
						w.firstErr = err
					}
					w.mu.Unlock()
					continue
				}
				w.written.Add(int64(per))
			}
		}()
	}
	return w
}

// stop stops the writers and returns what they wrote while they ran.
func (w *writeLoad) stop() writeResult {
	elapsed := time.Since(w.start)
	n := w.written.Load()
	w.cancel()
	w.wg.Wait()
	return writeResult{written: int(n), errors: w.errors, elapsed: elapsed, latencies: w.latencies, firstErr: w.firstErr}
}

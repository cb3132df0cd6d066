package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"sync"
	"time"
)

// rssSample is the resident memory of the stack's processes at one time.
type rssSample struct {
	At     time.Duration
	Server int64
	Java   int64
}

// sampleRSS samples the server's and DynamoDB Local's VmRSS every period
// until stop is called, and returns the samples.
func sampleRSS(e *env, period time.Duration) (stop func() []rssSample) {
	var mu sync.Mutex
	var out []rssSample
	start := time.Now()
	done := make(chan struct{})
	finished := make(chan struct{})
	take := func() {
		mu.Lock()
		out = append(out, rssSample{At: time.Since(start), Server: rss(e.serverPid), Java: rss(e.javaPid)})
		mu.Unlock()
	}
	go func() {
		defer close(finished)
		tick := time.NewTicker(period)
		defer tick.Stop()
		take()
		for {
			select {
			case <-done:
				take()
				return
			case <-tick.C:
				take()
			}
		}
	}()
	return func() []rssSample {
		close(done)
		<-finished
		mu.Lock()
		defer mu.Unlock()
		return out
	}
}

// window returns the highest server and java RSS among the samples taken
// in [from, to].
func window(samples []rssSample, from, to time.Duration) (server, java int64) {
	for _, s := range samples {
		if s.At >= from && s.At <= to {
			server, java = max(server, s.Server), max(java, s.Java)
		}
	}
	return server, java
}

// soak runs the mix with set.Concurrency workers until set.SoakDuration
// has passed or set.SoakRequests were sent, counting errors instead of
// stopping at the first, and reports throughput, latencies and the
// resident memory of the stack in the first and the last minute. Any
// error fails it.
func soak(ctx context.Context, e *env, set settings, rep *report, w io.Writer) error {
	fmt.Fprintln(os.Stderr, "soak: creating users")
	fx, err := e.setup(ctx, 2*set.Concurrency)
	if err != nil {
		return err
	}
	l := load{workers: set.Concurrency, requests: set.SoakRequests, seq: mixOps, users: len(fx.users), keepGoing: true,
		do: func(ctx context.Context, op string, u int) error {
			_, err := e.do(ctx, e.apiCall(fx, op, fx.users[u]))
			return err
		}}
	if set.SoakDuration > 0 {
		l.until = time.Now().Add(set.SoakDuration)
	}
	fmt.Fprintf(os.Stderr, "soak: running the mix (%s, %d requests at most; 0 is no bound)\n", set.SoakDuration, set.SoakRequests)
	stop := sampleRSS(e, 5*time.Second)
	r := l.run(ctx)
	samples := stop()

	end := r.Elapsed
	minute := min(time.Minute, end/2)
	firstServer, firstJava := window(samples, 0, minute)
	lastServer, lastJava := window(samples, end-minute, end+time.Second)
	mib := func(b int64) float64 { return float64(b) / (1 << 20) }
	all := r.All()
	rep.Rows = append(rep.Rows,
		row{Section: "soak", Figure: "requests", Value: float64(r.Requests), Unit: "req"},
		row{Section: "soak", Figure: "errors", Value: float64(r.Errors), Unit: "req", Target: "0"},
		row{Section: "soak", Figure: "throughput", Value: r.ReqPerSec(), Unit: "req/s"},
		row{Section: "soak", Figure: "mix p50", Value: ms(quantile(all, 0.5)), Unit: "ms"},
		row{Section: "soak", Figure: "mix p99", Value: ms(quantile(all, 0.99)), Unit: "ms"},
	)
	for _, op := range mixOps {
		rep.Rows = append(rep.Rows, row{Section: "soak", Figure: op + " p99", Value: ms(quantile(r.Latency[op], 0.99)), Unit: "ms"})
	}
	// Reference: the first minute; ratio: first over last (1 is flat).
	rep.Rows = append(rep.Rows,
		lower("soak", "server RSS, last minute (ref: first)", mib(lastServer), mib(firstServer), "MiB", ""),
	)
	if e.javaPid != 0 {
		rep.Rows = append(rep.Rows, lower("soak", "DynamoDB Local RSS, last minute (ref: first)", mib(lastJava), mib(firstJava), "MiB", ""))
	} else {
		rep.Notes = append(rep.Notes, "DynamoDB Local was not started by the soak (DYNAMODB_ENDPOINT), so its memory is not reported")
	}
	for _, err := range r.FirstErrors {
		rep.Notes = append(rep.Notes, "error: "+err.Error())
	}
	rep.Elapsed = end.Round(time.Second).String()
	printTable(w, *rep)
	if r.Errors > 0 {
		return fmt.Errorf("soak: %d of %d requests failed", r.Errors, r.Requests)
	}
	return nil
}

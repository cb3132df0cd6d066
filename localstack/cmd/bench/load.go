package main

import (
	"context"
	"slices"
	"sync"
	"time"
)

// load is one bounded run of a sequence of operations: workers at once,
// each running seq over and over on its own users (worker w owns users w,
// w+workers, ...; one sequence per user, then the next), so that no two
// requests in flight touch the same user. It stops after requests (rounded
// up to whole sequences per worker) or, when until is set, at the first
// sequence boundary after until.
type load struct {
	workers  int
	requests int
	until    time.Time
	seq      []string
	users    int
	// do runs operation op on user index u.
	do func(ctx context.Context, op string, u int) error
	// keepGoing counts errors and carries on (the soak); otherwise the
	// first error stops the run.
	keepGoing bool
}

// result is what a load measured.
type result struct {
	Requests int
	Errors   int
	Elapsed  time.Duration
	// Latency holds every request's latency per operation, sorted.
	Latency map[string][]time.Duration
	// FirstErrors are the first few errors.
	FirstErrors []error
}

// ReqPerSec is the throughput of the run.
func (r result) ReqPerSec() float64 { return float64(r.Requests) / r.Elapsed.Seconds() }

// All returns every latency of the run, sorted.
func (r result) All() []time.Duration {
	var all []time.Duration
	for _, l := range r.Latency {
		all = append(all, l...)
	}
	slices.Sort(all)
	return all
}

// merge returns the results of a and b as one run of both.
func (r result) merge(b result) result {
	out := result{Requests: r.Requests + b.Requests, Errors: r.Errors + b.Errors, Elapsed: r.Elapsed + b.Elapsed,
		Latency: map[string][]time.Duration{}, FirstErrors: append(slices.Clip(r.FirstErrors), b.FirstErrors...)}
	for _, x := range []result{r, b} {
		for op, l := range x.Latency {
			out.Latency[op] = append(out.Latency[op], l...)
		}
	}
	for op := range out.Latency {
		slices.Sort(out.Latency[op])
	}
	return out
}

// quantile returns the q-quantile of sorted latencies (nearest rank).
func quantile(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(q*float64(len(sorted))+0.5) - 1
	return sorted[max(0, min(i, len(sorted)-1))]
}

func (l load) run(ctx context.Context) result {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	perUser := max(1, l.users/l.workers)
	cycles := 0
	if l.requests > 0 {
		perWorker := (l.requests + l.workers - 1) / l.workers
		cycles = (perWorker + len(l.seq) - 1) / len(l.seq)
	}
	type workerOut struct {
		n, errs int
		lat     map[string][]time.Duration
		errList []error
	}
	outs := make([]workerOut, l.workers)
	var wg sync.WaitGroup
	start := time.Now()
	for w := 0; w < l.workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			o := &outs[w]
			o.lat = map[string][]time.Duration{}
			for c := 0; cycles == 0 || c < cycles; c++ {
				if ctx.Err() != nil || (!l.until.IsZero() && time.Now().After(l.until)) {
					return
				}
				u := w + l.workers*(c%perUser)
				for _, op := range l.seq {
					t0 := time.Now()
					err := l.do(ctx, op, u)
					o.lat[op] = append(o.lat[op], time.Since(t0))
					o.n++
					if err != nil {
						o.errs++
						if len(o.errList) < 5 {
							o.errList = append(o.errList, err)
						}
						if !l.keepGoing {
							cancel()
							return
						}
					}
				}
			}
		}()
	}
	wg.Wait()
	r := result{Elapsed: time.Since(start), Latency: map[string][]time.Duration{}}
	for _, o := range outs {
		r.Requests += o.n
		r.Errors += o.errs
		r.FirstErrors = append(r.FirstErrors, o.errList...)
		for op, l := range o.lat {
			r.Latency[op] = append(r.Latency[op], l...)
		}
	}
	for op := range r.Latency {
		slices.Sort(r.Latency[op])
	}
	return r
}

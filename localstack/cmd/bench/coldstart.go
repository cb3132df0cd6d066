package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sync/atomic"
	"time"

	"github.com/loyalty-platform/platform/localstack/runtime"
)

// coldStart is one function's binary size and initialisation time.
type coldStart struct {
	Function string
	Size     int64 // stripped linux/arm64 binary, bytes; 0 when not built
	Init     time.Duration
}

// measureInit starts the bootstrap at bin runs times through the runtime
// harness with env and returns the median time from exec to its first
// request for an event. The event it then gets ({}) may fail; only the
// initialisation counts.
func measureInit(ctx context.Context, name, bin string, env []string, runs int) (time.Duration, error) {
	var times []time.Duration
	for range runs {
		var got atomic.Int64
		iv := runtime.Invoker{FunctionName: name, Output: io.Discard, InitDone: func(d time.Duration) { got.Store(int64(d)) }}
		_, _, err := iv.Invoke(ctx, bin, []byte("{}"), env, 10*time.Second)
		init := time.Duration(got.Load())
		if init == 0 || errors.Is(err, runtime.ErrInit) {
			return 0, fmt.Errorf("cold start of %s: it never asked for an event: %v", name, err)
		}
		times = append(times, init)
	}
	slices.Sort(times)
	return times[len(times)/2], nil
}

// coldStarts measures every function of functions that has a host build
// under hostDir (hostDir/<fn>/bootstrap), with its linux/arm64 size from
// armDir/<fn>/bootstrap, and the hello-world reference the same way.
func coldStarts(ctx context.Context, functions []string, hostDir, armDir, helloHost, helloArm string, env []string, runs int) (hello coldStart, fns []coldStart, err error) {
	size := func(p string) int64 {
		if st, err := os.Stat(p); err == nil {
			return st.Size()
		}
		return 0
	}
	hello = coldStart{Function: "hello", Size: size(helloArm)}
	if hello.Init, err = measureInit(ctx, "hello", helloHost, env, runs); err != nil {
		return hello, nil, err
	}
	for _, fn := range functions {
		bin := filepath.Join(hostDir, fn, "bootstrap")
		if _, err := os.Stat(bin); err != nil {
			return hello, fns, fmt.Errorf("cold start of %s: %w (make build-host builds it)", fn, err)
		}
		c := coldStart{Function: fn, Size: size(filepath.Join(armDir, fn, "bootstrap"))}
		if c.Init, err = measureInit(ctx, fn, bin, env, runs); err != nil {
			return hello, fns, err
		}
		fns = append(fns, c)
	}
	return hello, fns, nil
}

// functionNames lists the functions of the repository (functions/<fn>/main.go).
func functionNames(root string) ([]string, error) {
	mains, err := filepath.Glob(filepath.Join(root, "functions", "*", "main.go"))
	if err != nil {
		return nil, err
	}
	var out []string
	for _, m := range mains {
		out = append(out, filepath.Base(filepath.Dir(m)))
	}
	slices.Sort(out)
	return out, nil
}

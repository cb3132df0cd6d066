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

// coldStart is one function's binary size and initialisation time, and
// the hello-world Lambda's initialisation time measured alongside it.
type coldStart struct {
	Function string
	Size     int64 // stripped linux/arm64 binary, bytes; 0 when not built
	Init     time.Duration
	// HelloInit is the hello-world Lambda's median initialisation over the
	// runs taken in turn with this function's (the reference of Init).
	HelloInit time.Duration
}

// initOnce starts the bootstrap at bin once through the runtime harness
// with env and returns the time from exec to its first request for an
// event. The event it then gets ({}) may fail; only the initialisation
// counts.
func initOnce(ctx context.Context, name, bin string, env []string) (time.Duration, error) {
	var got atomic.Int64
	iv := runtime.Invoker{FunctionName: name, Output: io.Discard, InitDone: func(d time.Duration) { got.Store(int64(d)) }}
	_, _, err := iv.Invoke(ctx, bin, []byte("{}"), env, 10*time.Second)
	init := time.Duration(got.Load())
	if init == 0 || errors.Is(err, runtime.ErrInit) {
		return 0, fmt.Errorf("cold start of %s: it never asked for an event: %v", name, err)
	}
	return init, nil
}

// measureInit starts the bootstrap at bin runs times, each run right after
// one of the reference bootstrap at ref, and returns both medians. Taking
// the two in turn keeps a change of the machine's load (other processes,
// CPU frequency) from landing on one side of the ratio only.
func measureInit(ctx context.Context, name, bin, ref string, env []string, runs int) (fn, hello time.Duration, err error) {
	var fns, hellos []time.Duration
	for range runs {
		h, err := initOnce(ctx, "hello", ref, env)
		if err != nil {
			return 0, 0, err
		}
		d, err := initOnce(ctx, name, bin, env)
		if err != nil {
			return 0, 0, err
		}
		hellos, fns = append(hellos, h), append(fns, d)
	}
	return median(fns), median(hellos), nil
}

func median(ds []time.Duration) time.Duration {
	slices.Sort(ds)
	return ds[len(ds)/2]
}

// coldStarts measures every function of functions that has a host build
// under hostDir (hostDir/<fn>/bootstrap), with its linux/arm64 size from
// armDir/<fn>/bootstrap, each in turn with the hello-world reference;
// hello is the reference's size and its median over all runs.
func coldStarts(ctx context.Context, functions []string, hostDir, armDir, helloHost, helloArm string, env []string, runs int) (hello coldStart, fns []coldStart, err error) {
	size := func(p string) int64 {
		if st, err := os.Stat(p); err == nil {
			return st.Size()
		}
		return 0
	}
	hello = coldStart{Function: "hello", Size: size(helloArm)}
	var hellos []time.Duration
	for _, fn := range functions {
		bin := filepath.Join(hostDir, fn, "bootstrap")
		if _, err := os.Stat(bin); err != nil {
			return hello, fns, fmt.Errorf("cold start of %s: %w (make build-host builds it)", fn, err)
		}
		c := coldStart{Function: fn, Size: size(filepath.Join(armDir, fn, "bootstrap"))}
		if c.Init, c.HelloInit, err = measureInit(ctx, fn, bin, helloHost, env, runs); err != nil {
			return hello, fns, err
		}
		hellos = append(hellos, c.HelloInit)
		fns = append(fns, c)
	}
	if len(hellos) > 0 {
		hello.Init = median(hellos)
	}
	hello.HelloInit = hello.Init
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

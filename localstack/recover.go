package main

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/loyalty-platform/platform/shared/domain/operation"
)

// resumeJobs does, when the stack starts, what Lambda's retries and the
// jobs function's failure queue do in AWS for an invocation that died: it
// finds the operations a stopped stack left PENDING (their input stored)
// or RUNNING, and has the jobs function run each again (a continue object
// per operation, whose S3 notification the stack delivers with its
// retries and, should they all fail, the failure record). The run resumes
// at the operation's checkpoint, waiting first for the lease of the run
// that died with the stack to run out (45 seconds at most); an import
// whose input the in-memory S3 lost FAILS as one whose file is missing.
// Without it, such an operation stayed RUNNING for ever: the same nonce
// answered it, and its results were 404.
//
// It scans the Operations table (only the local stack does; the functions
// never scan): every operation when only is nil, else those of the tenants
// only accepts. It assumes this stack is the only one running jobs on its
// DynamoDB. It returns the number of operations resumed.
func (l *local) resumeJobs(ctx context.Context, only func(tenantID string) bool) (int, error) {
	jobs := l.deps.Jobs
	n := 0
	err := operation.ScanUnfinished(ctx, l.stack.DB, jobs.Ops.Table, jobs.Clock.Now(), func(u operation.Unfinished) error {
		if !u.InputStored || (only != nil && !only(u.TenantID)) {
			return nil // a PENDING operation waiting for its client's upload
		}
		key, err := jobs.Resume(ctx, u.TenantID, u.ID)
		if err != nil {
			return err
		}
		slog.Info("localstack: job left by a stopped stack resumed", "tenantId", u.TenantID, "operationId", u.ID,
			"status", string(u.Status), "leaseUntil", u.LeaseUntil, "key", key)
		n++
		return nil
	})
	if err != nil {
		return n, fmt.Errorf("resume the jobs a stopped stack left: %w", err)
	}
	return n, nil
}

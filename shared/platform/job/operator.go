package job

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/loyalty-platform/platform/shared/domain/operation"
	"github.com/loyalty-platform/platform/shared/domain/tenant"
	"github.com/loyalty-platform/platform/shared/platform/apierr"
)

// Operators' commands. A job whose runs all died without the failure queue
// hearing of it (a local stack killed mid-run; an event Lambda dropped; a
// failure record that reached the dead-letter queue) stays PENDING or
// RUNNING: a repeat of its request with the same nonce answers it as it
// is, and its results are not there. The jobs function takes an operator's
// command on such an operation when invoked directly (no HTTP route
// changes): describe it, resume it from its checkpoint, or fail it as the
// failure queue would.

// OperatorRequest is the direct-invoke payload of the jobs function
// (events/jobs-operation-*.json):
//
//	{"action": "describe", "tenantId": "t-0123abcd", "operationId": "6b8e4f2a1c3d5e7f9a0b2c4d"}
//	{"action": "resume", "tenantId": "t-0123abcd", "operationId": "6b8e4f2a1c3d5e7f9a0b2c4d"}
//	{"action": "fail", "tenantId": "t-0123abcd", "operationId": "6b8e4f2a1c3d5e7f9a0b2c4d"}
type OperatorRequest struct {
	Action      string `json:"action"`
	TenantID    string `json:"tenantId"`
	OperationID string `json:"operationId"`
}

// OperatorResponse is the answer to an operator's command.
type OperatorResponse struct {
	// Outcome says what the command did, in a sentence.
	Outcome string `json:"outcome"`
	// State is the operation after the command.
	State operation.State `json:"state"`
	// ContinueKey is the object a resume wrote to the files bucket; its
	// ObjectCreated notification invokes the jobs function, which resumes
	// the job from its checkpoint.
	ContinueKey string `json:"continueKey,omitempty"`
}

// The operators' commands.
const (
	ActionDescribe = "describe"
	ActionResume   = "resume"
	ActionFail     = "fail"
)

// Operate runs an operator's command on one operation:
//
//   - describe answers its state (operation.State: status, counts, lease,
//     checkpoint, whether it is stuck) and changes nothing.
//   - resume has the job carry on from its checkpoint: it writes a
//     continue object (as a run that yields does), whose S3 notification
//     invokes the jobs function asynchronously, with Lambda's retries and
//     the failure queue behind it like any job's. That run waits for the
//     lease of a run that died to run out, and leaves the operation to a
//     run that is alive. Nothing is resumed when the operation is DONE or
//     FAILED, or when its input never arrived.
//   - fail sets it FAILED as the failure queue does when every attempt of
//     an invocation failed (StoppedError, the rows applied counted and
//     listed in the results file): it waits for the lease of a run that
//     died to run out (within the invocation's time), and leaves alone an
//     operation DONE or FAILED already, or one a live run carries on.
//
// A request that names no valid action, tenant or operation is
// VALIDATION_FAILED; an unknown operation is NOT_FOUND.
func (s *Service) Operate(ctx context.Context, req OperatorRequest) (OperatorResponse, error) {
	switch {
	case req.Action != ActionDescribe && req.Action != ActionResume && req.Action != ActionFail:
		return OperatorResponse{}, apierr.Invalid("action", "must be %s, %s or %s, not %q", ActionDescribe, ActionResume, ActionFail, req.Action)
	case !tenant.ValidID(req.TenantID):
		return OperatorResponse{}, apierr.Invalid("tenantId", "must be a tenant id, not %q", req.TenantID)
	case !operation.ValidID(req.OperationID):
		return OperatorResponse{}, apierr.Invalid("operationId", "must be an operation id (24 hexadecimal characters), not %q", req.OperationID)
	}
	log := s.log().With("action", req.Action, "tenantId", req.TenantID, "operationId", req.OperationID)
	st, err := s.Ops.Inspect(ctx, req.TenantID, req.OperationID)
	if err != nil {
		return OperatorResponse{}, fmt.Errorf("%s operation %s: %w", req.Action, req.OperationID, err)
	}
	resp := OperatorResponse{State: st}
	switch {
	case req.Action == ActionDescribe:
		resp.Outcome = "described; nothing changed"
	case st.Operation.Status.Final():
		resp.Outcome = fmt.Sprintf("nothing to %s: the operation is %s", req.Action, st.Operation.Status)
	case req.Action == ActionResume && !st.InputStored:
		resp.Outcome = "nothing to resume: the job's input never arrived (the client uploads it, or starts the job again)"
	case req.Action == ActionResume:
		key, err := s.Resume(ctx, req.TenantID, req.OperationID)
		if err != nil {
			return OperatorResponse{}, err
		}
		resp.ContinueKey = key
		resp.Outcome = "resumed: the jobs function carries the job on from its checkpoint"
		if st.Lease != nil && st.Lease.Live {
			resp.Outcome += fmt.Sprintf(" once the lease of the run holding it runs out (%s), or leaves it to that run if it is alive", st.Lease.Until)
		}
	default: // fail
		outcome, err := s.failStopped(ctx, req.TenantID, req.OperationID)
		switch {
		case errors.Is(err, errNoTime):
			return OperatorResponse{}, fmt.Errorf("fail operation %s: a run holds it until %s, longer than this invocation can wait: invoke again after that time, or with a longer timeout", req.OperationID, leaseUntil(st))
		case err != nil:
			return OperatorResponse{}, fmt.Errorf("fail operation %s: %w", req.OperationID, err)
		}
		switch outcome {
		case failDone:
			resp.Outcome = "failed: the operation is FAILED with the rows applied so far counted and listed in its results file"
		case failBusy:
			resp.Outcome = "not failed: a live run carries the operation on"
		default:
			resp.Outcome = "not failed: the operation finished meanwhile"
		}
		if resp.State, err = s.Ops.Inspect(ctx, req.TenantID, req.OperationID); err != nil {
			return OperatorResponse{}, fmt.Errorf("fail operation %s: %w", req.OperationID, err)
		}
	}
	log.Info("job: operator command", "outcome", resp.Outcome, "status", string(resp.State.Operation.Status))
	return resp, nil
}

// leaseUntil names when the lease of st runs out, for messages.
func leaseUntil(st operation.State) string {
	if st.Lease == nil {
		return "its lease runs out"
	}
	return st.Lease.Until
}

// Resume has the jobs function carry the job of an operation on from its
// checkpoint: it writes a continue object, whose ObjectCreated
// notification invokes the function as a yielding run's does, and returns
// its key. The run that takes it claims the operation as any run does
// (it does nothing to a DONE or FAILED operation, waits for the lease of
// a run that died to run out, and leaves the operation to a live run).
func (s *Service) Resume(ctx context.Context, tenantID, id string) (string, error) {
	key := fmt.Sprintf("%scontinue-resume-%d.json", prefix(tenantID, id), s.Clock.Now().UnixMilli())
	body := fmt.Sprintf(`{"operationId":%q,"resume":true}`, id)
	if err := s.putBytes(ctx, key, []byte(body), "application/json"); err != nil {
		return "", fmt.Errorf("resume operation %s: %w", id, err)
	}
	s.log().Info("job: resumed", "tenantId", tenantID, "operationId", id, "key", key)
	return key, nil
}

// Handle is the jobs function's Lambda handler (functions/jobs). Events
// with Records, the S3 notifications and the failure queue's SQS
// messages, go to HandleEvent; an operator's command (an object with an
// action and no Records: OperatorRequest, unknown fields refused) goes to
// Operate. It answers JSON: HandleEvent's answer (null for an S3 event,
// the batch response for an SQS one) or the OperatorResponse.
func (s *Service) Handle(ctx context.Context, raw json.RawMessage) (json.RawMessage, error) {
	var probe struct {
		Records json.RawMessage `json:"Records"`
		Action  *string         `json:"action"`
	}
	if err := json.Unmarshal(raw, &probe); err != nil {
		return nil, fmt.Errorf("job: undecodable event: %w", err)
	}
	var out any
	if probe.Records == nil && probe.Action != nil {
		var req OperatorRequest
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&req); err != nil {
			return nil, fmt.Errorf("job: operator command: %w", err)
		}
		resp, err := s.Operate(ctx, req)
		if err != nil {
			return nil, err
		}
		out = resp
	} else {
		resp, err := s.HandleEvent(ctx, raw)
		if err != nil {
			return nil, err
		}
		out = resp
	}
	b, err := json.Marshal(out)
	if err != nil {
		return nil, fmt.Errorf("job: answer: %w", err)
	}
	return b, nil
}

package webhook

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/loyalty-platform/platform/shared/aws/sqsapi"
	"github.com/loyalty-platform/platform/shared/domain/operation"
	"github.com/loyalty-platform/platform/shared/platform/clock"
)

// replayLease is how long a replay run holds its operation.
const replayLease = 10 * time.Minute

// reorderWindow is how far behind the newest event read a replay holds
// events back, so that the events of one scope go out in sequence order
// even where two writers' clocks put them out of time order.
const reorderWindow = 10 * time.Second

// runReplay re-sends a replay's window to its endpoint: every logged
// event of the window that the replay's and the endpoint's event types
// take, each scope's in sequence order, as messages of the events' own
// groups (so they keep their order with the live events), deduplicated
// per replay. The operation ends DONE with result.total (events in the
// window), imported (re-sent) and skipped. A run that stops part way is
// repeated whole when the message comes back; what it sent already is
// deduplicated by the queue (5 minutes) and by the deliveries (after).
func (s *Service) runReplay(ctx context.Context, msg message) error {
	op, err := s.Operations.Get(ctx, msg.TenantID, msg.Replay)
	if errors.Is(err, operation.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if op.Status.Final() {
		return nil
	}
	lease, err := s.Operations.Claim(ctx, msg.TenantID, msg.Replay, "replay-"+newNonce(), replayLease)
	if errors.Is(err, operation.ErrFinished) || errors.Is(err, operation.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	ep, err := s.st().endpoint(ctx, msg.TenantID, msg.Endpoint)
	if errors.Is(err, ErrNotFound) {
		_, err = s.Operations.Fail(ctx, lease, operation.Error{Code: "NOT_FOUND", Message: "the webhook endpoint was deleted"}, false, nil)
		return err
	}
	if err != nil {
		return err
	}
	from, _ := op.Metadata["from"].(string)
	to, _ := op.Metadata["to"].(string)
	var only []string
	if ts, ok := op.Metadata["eventTypes"].([]any); ok {
		for _, t := range ts {
			if v, ok := t.(string); ok {
				only = append(only, v)
			}
		}
	}
	var res operation.Result
	var msgs []sqsapi.Message
	flush := func(evs []eventRecord) error {
		slices.SortStableFunc(evs, func(a, b eventRecord) int {
			if c := strings.Compare(a.Scope, b.Scope); c != 0 {
				return c
			}
			return int(a.Seq - b.Seq)
		})
		for _, e := range evs {
			res.Total++
			if (len(only) > 0 && !slices.Contains(only, e.Type)) || !ep.wants(e.Type) {
				res.Skipped++
				continue
			}
			body, err := json.Marshal(message{Kind: kindEvent, TenantID: ep.TenantID, Endpoint: ep.ID, EventID: e.ID, Type: e.Type, UserID: e.UserID, Replay: op.ID})
			if err != nil {
				return fmt.Errorf("replay %s: %w", op.ID, err)
			}
			msgs = append(msgs, sqsapi.Message{Body: string(body), GroupID: group(ep.ID, e.Scope), DeduplicationID: dedup(ep.ID, e.ID, op.ID)})
			res.Imported++
		}
		if len(msgs) >= 100 {
			if err := s.Queue.SendBatch(ctx, s.QueueURL, msgs); err != nil {
				return fmt.Errorf("replay %s: %w", op.ID, err)
			}
			msgs = msgs[:0]
		}
		return nil
	}
	for shard := range eventShards {
		var held []eventRecord
		err := s.st().eventsIn(ctx, ep.TenantID, shard, from, to, func(e eventRecord) error {
			held = append(held, e)
			at, err := time.Parse(clock.Format, e.Timestamp)
			if err != nil {
				return nil
			}
			cut := clock.Stamp(at.Add(-reorderWindow))
			n := 0
			for n < len(held) && held[n].Timestamp < cut {
				n++
			}
			if n == 0 {
				return nil
			}
			ready := slices.Clone(held[:n])
			held = held[n:]
			return flush(ready)
		})
		if err == nil {
			err = flush(held)
		}
		if err != nil {
			return err
		}
	}
	if len(msgs) > 0 {
		if err := s.Queue.SendBatch(ctx, s.QueueURL, msgs); err != nil {
			return fmt.Errorf("replay %s: %w", op.ID, err)
		}
	}
	res.Message = fmt.Sprintf("%d of the window's %d events re-sent", res.Imported, res.Total)
	_, err = s.Operations.Finish(ctx, lease, res)
	return err
}

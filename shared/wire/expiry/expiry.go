// Package expiry wires the expiry function, which EventBridge runs daily
// (00:00 UTC): it removes the members of SCHEDULED and ROLLING segments
// whose horizon has passed, then expires the points whose lots have ended
// (and reminds users of points about to).
package expiry

import (
	"context"
	"errors"
	"log/slog"

	"github.com/aws/aws-lambda-go/events"
	"github.com/loyalty-platform/platform/shared/domain/audience"
	"github.com/loyalty-platform/platform/shared/domain/award"
	"github.com/loyalty-platform/platform/shared/wire"
	"github.com/loyalty-platform/platform/shared/wire/parts/rewards"
)

// Function is what the expiry function runs.
type Function struct {
	*rewards.Rewards
}

// New builds the expiry function on b.
func New(b *wire.Base) *Function {
	return &Function{Rewards: rewards.New(b, b.Actions())}
}

// Report is what one run of the expiry function did: the segment
// memberships it removed (at the top level, as before points expired)
// and the points it expired.
type Report struct {
	audience.ExpiryReport
	Points award.LotsReport `json:"points"`
}

// Handle is the function's handler: the segment memberships that ended,
// then the points that expired (each goes on when the other fails; a
// failure of either fails the run, and Lambda's retry goes on from what is
// left).
func (f *Function) Handle(ctx context.Context, ev events.EventBridgeEvent) (Report, error) {
	var rep Report
	var errSeg error
	rep.ExpiryReport, errSeg = f.Audiences.HandleSchedule(ctx, ev)
	var errPts error
	rep.Points, errPts = f.Awards.ExpireLots(ctx)
	slog.Default().InfoContext(ctx, "points expiry run", "tenants", rep.Points.Tenants, "awards", rep.Points.Awards,
		"expired", rep.Points.Expired, "reminded", rep.Points.Reminded, "ok", errPts == nil)
	return rep, errors.Join(errSeg, errPts)
}

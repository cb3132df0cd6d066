// Package loyalty wires the loyalty function: perks, awards and their
// points, and award enrichments (the award import's routes are the
// awardimports function's), with the legacy grant to a segment, which
// starts a job.
package loyalty

import (
	"slices"

	"github.com/loyalty-platform/platform/shared/domain/segmentgrant"
	"github.com/loyalty-platform/platform/shared/platform/job"
	"github.com/loyalty-platform/platform/shared/platform/web"
	"github.com/loyalty-platform/platform/shared/wire"
	"github.com/loyalty-platform/platform/shared/wire/parts/rewards"
)

// Function is what the loyalty function runs.
type Function struct {
	*rewards.Rewards
	SegmentGrants *segmentgrant.Service
}

// New builds the loyalty function on b and the process's job runner.
func New(b *wire.Base, jobs *job.Service) *Function {
	r := rewards.New(b, b.Actions())
	return &Function{Rewards: r, SegmentGrants: rewards.SegmentGrants(r, jobs)}
}

// Routes are the function's routes: perks, awards, enrichments and the
// legacy grant.
func (f *Function) Routes() []web.Route {
	return slices.Concat(f.Perks.Routes(), f.Awards.Routes(), f.Enrichments.Routes(), f.SegmentGrants.Routes())
}

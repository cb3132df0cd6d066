// Package jobs wires the jobs function, which runs the asynchronous jobs:
// location import and export, award import, grant to a segment, actions
// export, points liability export and rebuild. S3 invokes it with
// ObjectCreated events of jobs/ objects in the files bucket, and its
// failure queue with SQS events of Lambda destination records
// (job.Service.HandleEvent dispatches by the first record's source).
package jobs

import (
	"github.com/loyalty-platform/platform/shared/domain/actionlog"
	"github.com/loyalty-platform/platform/shared/domain/awardcsv"
	"github.com/loyalty-platform/platform/shared/domain/locationcsv"
	"github.com/loyalty-platform/platform/shared/domain/segmentgrant"
	"github.com/loyalty-platform/platform/shared/platform/job"
	"github.com/loyalty-platform/platform/shared/wire"
	"github.com/loyalty-platform/platform/shared/wire/parts/files"
	"github.com/loyalty-platform/platform/shared/wire/parts/places"
	"github.com/loyalty-platform/platform/shared/wire/parts/rewards"
)

// Function is what the jobs function runs: the process's job runner with
// every kind of job registered on it.
type Function struct {
	Jobs *job.Service
	*rewards.Rewards
	LocationJobs  *locationcsv.Service
	AwardJobs     *awardcsv.Service
	SegmentGrants *segmentgrant.Service
	ActionLog     *actionlog.Service
}

// New builds the jobs function on b and registers every kind of job on
// the process's job runner jobs.
func New(b *wire.Base, jobs *job.Service) *Function {
	actions := b.Actions()
	r := rewards.Domains(b, actions)
	f := &Function{
		Jobs:          jobs,
		Rewards:       r,
		LocationJobs:  places.LocationFiles(b, places.Locations(b), jobs, actions),
		AwardJobs:     rewards.AwardImports(b, r, jobs),
		SegmentGrants: rewards.SegmentGrants(r, jobs),
		ActionLog:     files.ActionLog(b, jobs),
	}
	files.Register(jobs, f.LocationJobs.Kinds(), f.AwardJobs.Kinds(), f.SegmentGrants.Kinds(), f.ActionLog.Kinds())
	return f
}

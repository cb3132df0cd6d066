// Package awardfiles builds the bulk award import (shared/awardcsv): on the
// job runner alone for the awardimports function, which starts imports and
// serves their results (Starts), and on the loyalty domains for the jobs
// function, which runs them (Imports, with files.Register of its Kinds).
// It also builds the legacy grant (shared/segmentgrant), whose grant to a
// segment is a job: its route is the loyalty function's, its kind the
// jobs function's (SegmentGrants).
package awardfiles

import (
	"github.com/loyalty-platform/platform/shared/app"
	"github.com/loyalty-platform/platform/shared/app/rewards"
	"github.com/loyalty-platform/platform/shared/awardcsv"
	"github.com/loyalty-platform/platform/shared/job"
	"github.com/loyalty-platform/platform/shared/segmentgrant"
)

// Starts builds the award import's routes on jobs: starting an import and
// serving its results need nothing else, so the function serving them does
// not link the loyalty domains.
func Starts(jobs *job.Service) *awardcsv.Service {
	return &awardcsv.Service{Jobs: jobs}
}

// Imports builds the bulk award import on r and jobs, able to run imports.
func Imports(b *app.Base, r *rewards.Rewards, jobs *job.Service) *awardcsv.Service {
	return &awardcsv.Service{
		Awards: r.Awards, Perks: r.Perks, Users: rewards.PersonsOf(b.Profiles()), Jobs: jobs, Clock: b.Clock,
		TenantTitle: b.TenantTitle,
	}
}

// SegmentGrants builds the legacy grant on the loyalty domains r and
// jobs: the loyalty function serves its route (and starts its jobs), the
// jobs function runs them (files.Register of its Kinds).
func SegmentGrants(r *rewards.Rewards, jobs *job.Service) *segmentgrant.Service {
	return &segmentgrant.Service{Awards: r.Awards, Jobs: jobs}
}

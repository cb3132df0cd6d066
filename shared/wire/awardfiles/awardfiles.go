// Package awardfiles builds the bulk award import (shared/domain/awardcsv): on the
// job runner alone for the awardimports function, which starts imports and
// serves their results (Starts), and on the loyalty domains for the jobs
// function, which runs them (Imports, with files.Register of its Kinds).
// It also builds the legacy grant (shared/domain/segmentgrant), whose grant to a
// segment is a job: its route is the loyalty function's, its kind the
// jobs function's (SegmentGrants).
package awardfiles

import (
	"github.com/loyalty-platform/platform/shared/domain/awardcsv"
	"github.com/loyalty-platform/platform/shared/domain/perk"
	"github.com/loyalty-platform/platform/shared/domain/segmentgrant"
	"github.com/loyalty-platform/platform/shared/platform/job"
	"github.com/loyalty-platform/platform/shared/wire"
	"github.com/loyalty-platform/platform/shared/wire/rewards"
)

// Starts builds the award import's and the points liability export's
// and rebuild's routes on jobs: starting a job and serving its file need
// nothing else but the perks' read (an export's perkId), so the function
// serving them does not link the loyalty domains.
func Starts(b *wire.Base, jobs *job.Service) *awardcsv.Service {
	// The liability export checks its perkId: the perks' read alone.
	perks := &perk.Service{DB: b.DB, Table: b.Config.Tables.Loyalty, Clock: b.Clock, Cursor: b.Cursor}
	return &awardcsv.Service{Jobs: jobs, Perks: perks, Clock: b.Clock}
}

// Imports builds the bulk award import on r and jobs, able to run imports.
func Imports(b *wire.Base, r *rewards.Rewards, jobs *job.Service) *awardcsv.Service {
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

// Package awardfiles builds the bulk award import (shared/awardcsv) on the
// loyalty domains and the job runner, for the loyalty function (which
// starts imports and serves their results) and the jobs function (which
// runs them, with files.Register of the service's Kinds).
package awardfiles

import (
	"github.com/loyalty-platform/platform/shared/app"
	"github.com/loyalty-platform/platform/shared/app/rewards"
	"github.com/loyalty-platform/platform/shared/awardcsv"
	"github.com/loyalty-platform/platform/shared/job"
)

// Imports builds the bulk award import on r and jobs.
func Imports(b *app.Base, r *rewards.Rewards, jobs *job.Service) *awardcsv.Service {
	return &awardcsv.Service{
		Awards: r.Awards, Perks: r.Perks, Users: rewards.PersonsOf(b.Profiles()), Jobs: jobs, Clock: b.Clock,
		TenantTitle: b.TenantTitle,
	}
}

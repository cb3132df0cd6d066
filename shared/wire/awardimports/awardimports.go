// Package awardimports wires the awardimports function: starting a bulk
// award import, a points liability export or its rebuild (the jobs
// function runs them) and serving their files. Starting a job and serving
// its file need nothing but the perks' read (an export's perkId), so the
// function does not link the loyalty domains.
package awardimports

import (
	"github.com/loyalty-platform/platform/shared/domain/awardcsv"
	"github.com/loyalty-platform/platform/shared/domain/perk"
	"github.com/loyalty-platform/platform/shared/platform/job"
	"github.com/loyalty-platform/platform/shared/platform/web"
	"github.com/loyalty-platform/platform/shared/wire"
)

// Function is what the awardimports function runs.
type Function struct {
	AwardJobs *awardcsv.Service
}

// New builds the awardimports function on b and the process's job runner.
func New(b *wire.Base, jobs *job.Service) *Function {
	perks := &perk.Service{DB: b.DB, Table: b.Config.Tables.Loyalty, Clock: b.Clock, Cursor: b.Cursor}
	return &Function{AwardJobs: &awardcsv.Service{Jobs: jobs, Perks: perks, Clock: b.Clock}}
}

// Routes are the function's routes.
func (f *Function) Routes() []web.Route { return f.AwardJobs.Routes() }

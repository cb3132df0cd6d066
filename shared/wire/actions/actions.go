// Package actions wires the actions function: the tenant's, a user's and a
// location's actions, and starting their CSV export (the jobs function runs
// it) and serving its file.
package actions

import (
	"github.com/loyalty-platform/platform/shared/domain/actionlog"
	"github.com/loyalty-platform/platform/shared/platform/job"
	"github.com/loyalty-platform/platform/shared/platform/web"
	"github.com/loyalty-platform/platform/shared/wire"
	"github.com/loyalty-platform/platform/shared/wire/parts/files"
)

// Function is what the actions function runs.
type Function struct {
	ActionLog *actionlog.Service
}

// New builds the actions function on b and the process's job runner.
func New(b *wire.Base, jobs *job.Service) *Function {
	return &Function{ActionLog: files.ActionLog(b, jobs)}
}

// Routes are the function's routes.
func (f *Function) Routes() []web.Route { return f.ActionLog.Routes() }

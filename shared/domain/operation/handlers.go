package operation

import (
	"net/http"

	"github.com/loyalty-platform/platform/shared/platform/actor"
	"github.com/loyalty-platform/platform/shared/platform/web"
)

// Routes returns the routes of the operations function.
func (s *Service) Routes() []web.Route {
	return []web.Route{
		{Method: "GET", Path: "/operations/{operationId}", Access: web.Admin, Handler: web.Serve(http.StatusOK, s.handleGet)},
	}
}

// handleGet serves GET /operations/{operationId}: an admin polls a job
// (Progress: the counts of every row applied so far). An operation of
// another tenant is 404.
func (s *Service) handleGet(r *http.Request, a actor.Actor) (Operation, error) {
	return s.Progress(r.Context(), a.TenantID, r.PathValue("operationId"))
}

package operation

import (
	"net/http"

	"github.com/loyalty-platform/platform/shared/platform/web"
)

// Routes returns the routes of the operations function.
func (s *Service) Routes() []web.Route {
	return []web.Route{
		{Method: "GET", Path: "/operations/{operationId}", Handler: s.handleGet},
	}
}

// handleGet serves GET /operations/{operationId}: an admin polls a job
// (Progress: the counts of every row applied so far). An operation of
// another tenant is 404.
func (s *Service) handleGet(w http.ResponseWriter, r *http.Request) {
	caller := web.CallerOf(r)
	if err := caller.RequireAdmin(); err != nil {
		web.Error(w, r, err)
		return
	}
	op, err := s.Progress(r.Context(), caller.TenantID, r.PathValue("operationId"))
	if err != nil {
		web.Error(w, r, err)
		return
	}
	web.JSON(w, http.StatusOK, op)
}

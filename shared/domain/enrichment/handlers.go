package enrichment

import (
	"net/http"

	"github.com/loyalty-platform/platform/shared/platform/actor"
	"github.com/loyalty-platform/platform/shared/platform/web"
)

// Routes returns the enrichment routes of the loyalty function: every
// one is an admin's. The handlers return their answers as any, as the
// perks' do (see web.Op).
func (s *Service) Routes() []web.Route {
	return []web.Route{
		{Method: "POST", Path: "/awardenrichments", Access: web.Admin, Handler: web.Serve(http.StatusCreated, s.handleCreate)},
		{Method: "GET", Path: "/awardenrichments", Access: web.Admin, Handler: web.Serve(http.StatusOK, s.handleList)},
		{Method: "GET", Path: "/awardenrichments/{enrichmentId}", Access: web.Admin, Handler: web.Serve(http.StatusOK, s.handleGet)},
		{Method: "PUT", Path: "/awardenrichments/{enrichmentId}", Access: web.Admin, Handler: web.Serve(http.StatusOK, s.handleUpdate)},
		{Method: "DELETE", Path: "/awardenrichments/{enrichmentId}", Access: web.Admin, Handler: web.ServeEmpty(http.StatusNoContent, s.handleDelete)},
	}
}

// handleCreate serves POST /awardenrichments (admin): 201 with the new
// enrichment.
func (s *Service) handleCreate(r *http.Request, caller actor.Actor) (any, error) {
	b, err := web.RequiredBody(r)
	if err != nil {
		return nil, err
	}
	return s.Create(r.Context(), caller, b)
}

// List is the body of GET /awardenrichments.
type List struct {
	Items []Enrichment `json:"items"`
	Page  web.Page     `json:"page"`
}

// handleList serves GET /awardenrichments (admin): a page of the tenant's
// enrichments in creation order (`limit`, `startKey`).
func (s *Service) handleList(r *http.Request, caller actor.Actor) (any, error) {
	limit, start, err := web.Paging(r)
	if err != nil {
		return nil, err
	}
	items, page, err := s.List(r.Context(), caller, ListQuery{Limit: limit, StartKey: start})
	return List{Items: items, Page: page}, err
}

// handleGet serves GET /awardenrichments/{enrichmentId} (admin): 200 with
// the enrichment.
func (s *Service) handleGet(r *http.Request, caller actor.Actor) (any, error) {
	return s.Get(r.Context(), caller, r.PathValue("enrichmentId"))
}

// handleUpdate serves PUT /awardenrichments/{enrichmentId} (admin): 200
// with the enrichment as stored.
func (s *Service) handleUpdate(r *http.Request, caller actor.Actor) (any, error) {
	b, err := web.RequiredBody(r)
	if err != nil {
		return nil, err
	}
	return s.Update(r.Context(), caller, r.PathValue("enrichmentId"), b)
}

// handleDelete serves DELETE /awardenrichments/{enrichmentId} (admin): the
// enrichment is removed (204).
func (s *Service) handleDelete(r *http.Request, caller actor.Actor) error {
	return s.Delete(r.Context(), caller, r.PathValue("enrichmentId"))
}

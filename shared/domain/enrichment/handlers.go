package enrichment

import (
	"bytes"
	"net/http"

	"github.com/loyalty-platform/platform/shared/platform/apierr"
	"github.com/loyalty-platform/platform/shared/platform/web"
)

// Routes returns the enrichment routes of the loyalty function.
func (s *Service) Routes() []web.Route {
	return []web.Route{
		{Method: "POST", Path: "/awardenrichments", Handler: s.handleCreate},
		{Method: "GET", Path: "/awardenrichments", Handler: s.handleList},
		{Method: "GET", Path: "/awardenrichments/{enrichmentId}", Handler: s.handleGet},
		{Method: "PUT", Path: "/awardenrichments/{enrichmentId}", Handler: s.handleUpdate},
		{Method: "DELETE", Path: "/awardenrichments/{enrichmentId}", Handler: s.handleDelete},
	}
}

// body reads a required JSON body.
func body(r *http.Request) ([]byte, error) {
	b, err := web.ReadBody(r, web.MaxBodyBytes)
	if err != nil {
		return nil, err
	}
	if len(bytes.TrimSpace(b)) == 0 {
		return nil, apierr.Invalid("", "a JSON body is required")
	}
	return b, nil
}

// handleCreate serves POST /awardenrichments (admin): 201 with the new
// enrichment.
func (s *Service) handleCreate(w http.ResponseWriter, r *http.Request) {
	caller := web.CallerOf(r)
	if err := caller.RequireAdmin(); err != nil {
		web.Error(w, r, err)
		return
	}
	b, err := body(r)
	if err != nil {
		web.Error(w, r, err)
		return
	}
	e, err := s.Create(r.Context(), caller, b)
	if err != nil {
		web.Error(w, r, err)
		return
	}
	web.JSON(w, http.StatusCreated, e)
}

// List is the body of GET /awardenrichments.
type List struct {
	Items []Enrichment `json:"items"`
	Page  web.Page     `json:"page"`
}

// handleList serves GET /awardenrichments (admin): a page of the tenant's
// enrichments in creation order (`limit`, `startKey`).
func (s *Service) handleList(w http.ResponseWriter, r *http.Request) {
	caller := web.CallerOf(r)
	if err := caller.RequireAdmin(); err != nil {
		web.Error(w, r, err)
		return
	}
	limit, start, err := web.Paging(r)
	if err != nil {
		web.Error(w, r, err)
		return
	}
	items, page, err := s.List(r.Context(), caller, ListQuery{Limit: limit, StartKey: start})
	if err != nil {
		web.Error(w, r, err)
		return
	}
	web.JSON(w, http.StatusOK, List{Items: items, Page: page})
}

// handleGet serves GET /awardenrichments/{enrichmentId} (admin): 200 with
// the enrichment.
func (s *Service) handleGet(w http.ResponseWriter, r *http.Request) {
	e, err := s.Get(r.Context(), web.CallerOf(r), r.PathValue("enrichmentId"))
	if err != nil {
		web.Error(w, r, err)
		return
	}
	web.JSON(w, http.StatusOK, e)
}

// handleUpdate serves PUT /awardenrichments/{enrichmentId} (admin): 200
// with the enrichment as stored.
func (s *Service) handleUpdate(w http.ResponseWriter, r *http.Request) {
	caller := web.CallerOf(r)
	if err := caller.RequireAdmin(); err != nil {
		web.Error(w, r, err)
		return
	}
	b, err := body(r)
	if err != nil {
		web.Error(w, r, err)
		return
	}
	e, err := s.Update(r.Context(), caller, r.PathValue("enrichmentId"), b)
	if err != nil {
		web.Error(w, r, err)
		return
	}
	web.JSON(w, http.StatusOK, e)
}

// handleDelete serves DELETE /awardenrichments/{enrichmentId} (admin): the
// enrichment is removed (204).
func (s *Service) handleDelete(w http.ResponseWriter, r *http.Request) {
	if err := s.Delete(r.Context(), web.CallerOf(r), r.PathValue("enrichmentId")); err != nil {
		web.Error(w, r, err)
		return
	}
	web.Empty(w, http.StatusNoContent)
}

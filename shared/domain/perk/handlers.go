package perk

import (
	"bytes"
	"net/http"

	"github.com/loyalty-platform/platform/shared/platform/apierr"
	"github.com/loyalty-platform/platform/shared/platform/web"
)

// Routes returns the perk routes of the loyalty function. Every perk path
// is also served under /pointperks (the API's newer name).
func (s *Service) Routes() []web.Route {
	return []web.Route{
		{Method: "POST", Path: "/perks", Handler: s.handleCreate},
		{Method: "GET", Path: "/perks", Handler: s.handleList},
		{Method: "GET", Path: "/perks/{perkId}", Handler: s.handleGet},
		{Method: "PUT", Path: "/perks/{perkId}", Handler: s.handleUpdate},
		{Method: "DELETE", Path: "/perks/{perkId}", Handler: s.handleDelete},
		{Method: "GET", Path: "/pointperks/{perkId}", Handler: s.handleGet},
		{Method: "PUT", Path: "/pointperks/{perkId}", Handler: s.handleUpdate},
		{Method: "DELETE", Path: "/pointperks/{perkId}", Handler: s.handleDelete},
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

// handleCreate serves POST /perks (admin): 201 with the new perk.
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
	p, err := s.Create(r.Context(), caller, b)
	if err != nil {
		web.Error(w, r, err)
		return
	}
	web.JSON(w, http.StatusCreated, p)
}

// PerkList is the body of GET /perks.
type PerkList struct {
	Items []Perk   `json:"items"`
	Page  web.Page `json:"page"`
}

// handleList serves GET /perks: admins list every perk (or those of
// `enabled`), users the enabled ones; `template` filters; paged.
func (s *Service) handleList(w http.ResponseWriter, r *http.Request) {
	caller := web.CallerOf(r)
	if err := caller.RequireAuth(); err != nil {
		web.Error(w, r, err)
		return
	}
	limit, start, err := web.Paging(r)
	if err != nil {
		web.Error(w, r, err)
		return
	}
	q := ListQuery{Limit: limit, StartKey: start, Templates: web.ListParam(r, "template")}
	if v := r.URL.Query().Get("enabled"); v != "" {
		if !caller.IsAdmin() {
			web.Error(w, r, web.ErrAdminOnly("enabled"))
			return
		}
		b, err := web.BoolParam(r, "enabled", true)
		if err != nil {
			web.Error(w, r, err)
			return
		}
		q.Enabled = &b
	}
	items, page, err := s.List(r.Context(), caller, q)
	if err != nil {
		web.Error(w, r, err)
		return
	}
	web.JSON(w, http.StatusOK, PerkList{Items: items, Page: page})
}

// handleGet serves GET /perks/{perkId} and GET /pointperks/{perkId}.
func (s *Service) handleGet(w http.ResponseWriter, r *http.Request) {
	p, err := s.Get(r.Context(), web.CallerOf(r), r.PathValue("perkId"))
	if err != nil {
		web.Error(w, r, err)
		return
	}
	web.JSON(w, http.StatusOK, p)
}

// handleUpdate serves PUT /perks/{perkId} and PUT /pointperks/{perkId}
// (admin): 200 with the perk as stored.
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
	p, err := s.Update(r.Context(), caller, r.PathValue("perkId"), b)
	if err != nil {
		web.Error(w, r, err)
		return
	}
	web.JSON(w, http.StatusOK, p)
}

// handleDelete serves DELETE /perks/{perkId} and DELETE
// /pointperks/{perkId} (admin): the perk is disabled (204).
func (s *Service) handleDelete(w http.ResponseWriter, r *http.Request) {
	if err := s.Disable(r.Context(), web.CallerOf(r), r.PathValue("perkId")); err != nil {
		web.Error(w, r, err)
		return
	}
	web.Empty(w, http.StatusNoContent)
}

package perk

import (
	"net/http"

	"github.com/loyalty-platform/platform/shared/platform/actor"
	"github.com/loyalty-platform/platform/shared/platform/web"
)

// Routes returns the perk routes of the loyalty function. Every perk path
// is also served under /pointperks (the API's newer name), by the same
// handler. Any caller who signed in (a user, an admin, the service key)
// reads perks; only admins write them. The handlers return their answers
// as any, not as Perk or PerkList, so that these routes and the
// enrichments' share one copy of web.Serve's code (see web.Op).
func (s *Service) Routes() []web.Route {
	get := web.Serve(http.StatusOK, s.handleGet)
	update := web.Serve(http.StatusOK, s.handleUpdate)
	disable := web.ServeEmpty(http.StatusNoContent, s.handleDelete)
	return []web.Route{
		{Method: "POST", Path: "/perks", Access: web.Admin, Handler: web.Serve(http.StatusCreated, s.handleCreate)},
		{Method: "GET", Path: "/perks", Access: web.Authenticated, Handler: web.Serve(http.StatusOK, s.handleList)},
		{Method: "GET", Path: "/perks/{perkId}", Access: web.Authenticated, Handler: get},
		{Method: "PUT", Path: "/perks/{perkId}", Access: web.Admin, Handler: update},
		{Method: "DELETE", Path: "/perks/{perkId}", Access: web.Admin, Handler: disable},
		{Method: "GET", Path: "/pointperks/{perkId}", Access: web.Authenticated, Handler: get},
		{Method: "PUT", Path: "/pointperks/{perkId}", Access: web.Admin, Handler: update},
		{Method: "DELETE", Path: "/pointperks/{perkId}", Access: web.Admin, Handler: disable},
	}
}

// handleCreate serves POST /perks (admin): 201 with the new perk.
func (s *Service) handleCreate(r *http.Request, caller actor.Actor) (any, error) {
	b, err := web.RequiredBody(r)
	if err != nil {
		return nil, err
	}
	return s.Create(r.Context(), caller, b)
}

// PerkList is the body of GET /perks.
type PerkList struct {
	Items []Perk   `json:"items"`
	Page  web.Page `json:"page"`
}

// handleList serves GET /perks: admins list every perk (or those of
// `enabled`), users the enabled ones; `template` filters; paged.
func (s *Service) handleList(r *http.Request, caller actor.Actor) (any, error) {
	limit, start, err := web.Paging(r)
	if err != nil {
		return nil, err
	}
	q := ListQuery{Limit: limit, StartKey: start, Templates: web.ListParam(r, "template")}
	if v := r.URL.Query().Get("enabled"); v != "" {
		if !caller.IsAdmin() {
			return nil, web.ErrAdminOnly("enabled")
		}
		b, err := web.BoolParam(r, "enabled", true)
		if err != nil {
			return nil, err
		}
		q.Enabled = &b
	}
	items, page, err := s.List(r.Context(), caller, q)
	return PerkList{Items: items, Page: page}, err
}

// handleGet serves GET /perks/{perkId} and GET /pointperks/{perkId}.
func (s *Service) handleGet(r *http.Request, caller actor.Actor) (any, error) {
	return s.Get(r.Context(), caller, r.PathValue("perkId"))
}

// handleUpdate serves PUT /perks/{perkId} and PUT /pointperks/{perkId}
// (admin): 200 with the perk as stored.
func (s *Service) handleUpdate(r *http.Request, caller actor.Actor) (any, error) {
	b, err := web.RequiredBody(r)
	if err != nil {
		return nil, err
	}
	return s.Update(r.Context(), caller, r.PathValue("perkId"), b)
}

// handleDelete serves DELETE /perks/{perkId} and DELETE
// /pointperks/{perkId} (admin): the perk is disabled (204).
func (s *Service) handleDelete(r *http.Request, caller actor.Actor) error {
	return s.Disable(r.Context(), caller, r.PathValue("perkId"))
}

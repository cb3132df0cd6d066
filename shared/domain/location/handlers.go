package location

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/loyalty-platform/platform/shared/platform/actor"
	"github.com/loyalty-platform/platform/shared/platform/apierr"
	"github.com/loyalty-platform/platform/shared/platform/web"
)

// Routes returns the routes of the locations function. The location
// list and the creation read x-api-version before they look at the
// caller (Before).
func (s *Service) Routes() []web.Route {
	return []web.Route{
		{Method: "POST", Path: "/locations", Access: web.Admin, Before: web.CheckAPIVersion, Handler: web.Serve(http.StatusCreated, s.handleCreate)},
		{Method: "GET", Path: "/locations", Access: web.Anonymous, Before: web.CheckAPIVersion, Handler: web.Serve(http.StatusOK, s.handleList)},
		{Method: "GET", Path: "/locations/{locationId}", Access: web.Anonymous, Handler: web.Serve(http.StatusOK, s.handleGet)},
		{Method: "PUT", Path: "/locations/{locationId}", Access: web.Admin, Handler: web.Serve(http.StatusOK, s.handleUpdate)},
		{Method: "GET", Path: "/locations/taggroups", Access: web.Anonymous, Handler: web.Serve(http.StatusOK, s.handleListTagGroups)},
		{Method: "POST", Path: "/locations/taggroups", Access: web.Admin, Handler: web.Serve(http.StatusCreated, s.handleCreateTagGroup)},
		{Method: "PUT", Path: "/locations/taggroups/{tagGroupId}", Access: web.Admin, Handler: web.Serve(http.StatusOK, s.handleUpdateTagGroup)},
		{Method: "DELETE", Path: "/locations/taggroups/{tagGroupId}", Access: web.Admin, Handler: web.ServeEmpty(http.StatusNoContent, s.handleDeleteTagGroup)},
	}
}

// readFields reads a JSON object body as its top-level fields, rejecting
// unknown ones.
func readFields(r *http.Request) (map[string]json.RawMessage, error) {
	body, err := web.ReadBody(r, web.MaxBodyBytes)
	if err != nil {
		return nil, err
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return nil, apierr.Invalid("", "a JSON body is required")
	}
	var fields map[string]json.RawMessage
	if err := web.DecodeBytes(body, &fields); err != nil {
		return nil, err
	}
	if err := CheckFields(fields); err != nil {
		return nil, err
	}
	return fields, nil
}

// handleCreate serves POST /locations (admin): 201 with the new location.
// The body may repeat the caller's tenantId; created, updated and distance
// are ignored; an _id is 422 (see CreateFields).
func (s *Service) handleCreate(r *http.Request, a actor.Actor) (Location, error) {
	fields, err := readFields(r)
	if err == nil {
		fields, err = CreateFields(fields, a.TenantID)
	}
	if err != nil {
		return Location{}, err
	}
	body, err := json.Marshal(fields)
	if err != nil {
		return Location{}, apierr.Invalid("", "the body is not valid JSON")
	}
	var in Location
	if err := web.DecodeBytes(body, &in); err != nil {
		return Location{}, err
	}
	return s.Create(r.Context(), a.TenantID, in)
}

// listResponse is the body of GET /locations.
type listResponse struct {
	Items []Location `json:"items"`
	Page  web.Page   `json:"page"`
}

// handleList serves GET /locations: any caller of the tenant (anonymous
// callers and users see ACTIVE locations only).
func (s *Service) handleList(r *http.Request, a actor.Actor) (listResponse, error) {
	q, err := ParseListQuery(r)
	if err != nil {
		return listResponse{}, err
	}
	items, page, err := s.List(r.Context(), a, q)
	return listResponse{Items: items, Page: page}, err
}

// handleGet serves GET /locations/{locationId}: every field of the
// location. Callers other than admins see ACTIVE locations only (others are
// 404).
func (s *Service) handleGet(r *http.Request, a actor.Actor) (Location, error) {
	l, err := s.Get(r.Context(), a.TenantID, r.PathValue("locationId"))
	if err == nil && !a.IsAdmin() && l.State != StateActive {
		err = fmt.Errorf("get location: %w", ErrNotFound)
	}
	return l, err
}

// handleUpdate serves PUT /locations/{locationId} (admin): the fields sent
// replace the stored ones (the body GET returned may be sent back, see
// UpdateFields).
func (s *Service) handleUpdate(r *http.Request, a actor.Actor) (Location, error) {
	fields, err := readFields(r)
	if err != nil {
		return Location{}, err
	}
	return s.Update(r.Context(), a.TenantID, r.PathValue("locationId"), fields)
}

// tagGroupList is the body of GET /locations/taggroups.
type tagGroupList struct {
	Items []TagGroup `json:"items"`
}

// handleListTagGroups serves GET /locations/taggroups: any caller of the
// tenant.
func (s *Service) handleListTagGroups(r *http.Request, a actor.Actor) (tagGroupList, error) {
	groups, err := s.TagGroups(r.Context(), a.TenantID)
	return tagGroupList{Items: groups}, err
}

// handleCreateTagGroup serves POST /locations/taggroups (admin): 201.
func (s *Service) handleCreateTagGroup(r *http.Request, a actor.Actor) (TagGroup, error) {
	in, err := web.Decoded[TagGroupInput](r)
	if err != nil {
		return TagGroup{}, err
	}
	return s.CreateTagGroup(r.Context(), a.TenantID, in)
}

// handleUpdateTagGroup serves PUT /locations/taggroups/{tagGroupId}
// (admin).
func (s *Service) handleUpdateTagGroup(r *http.Request, a actor.Actor) (TagGroup, error) {
	in, err := web.Decoded[TagGroupInput](r)
	if err != nil {
		return TagGroup{}, err
	}
	return s.UpdateTagGroup(r.Context(), a.TenantID, r.PathValue("tagGroupId"), in)
}

// handleDeleteTagGroup serves DELETE /locations/taggroups/{tagGroupId}
// (admin): 204.
func (s *Service) handleDeleteTagGroup(r *http.Request, a actor.Actor) error {
	return s.DeleteTagGroup(r.Context(), a.TenantID, r.PathValue("tagGroupId"))
}

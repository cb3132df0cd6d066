package location

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/loyalty-platform/platform/shared/platform/apierr"
	"github.com/loyalty-platform/platform/shared/platform/web"
)

// Routes returns the routes of the locations function.
func (s *Service) Routes() []web.Route {
	return []web.Route{
		{Method: "POST", Path: "/locations", Handler: s.handleCreate},
		{Method: "GET", Path: "/locations", Handler: s.handleList},
		{Method: "GET", Path: "/locations/{locationId}", Handler: s.handleGet},
		{Method: "PUT", Path: "/locations/{locationId}", Handler: s.handleUpdate},
		{Method: "GET", Path: "/locations/taggroups", Handler: s.handleListTagGroups},
		{Method: "POST", Path: "/locations/taggroups", Handler: s.handleCreateTagGroup},
		{Method: "PUT", Path: "/locations/taggroups/{tagGroupId}", Handler: s.handleUpdateTagGroup},
		{Method: "DELETE", Path: "/locations/taggroups/{tagGroupId}", Handler: s.handleDeleteTagGroup},
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
func (s *Service) handleCreate(w http.ResponseWriter, r *http.Request) {
	if _, err := web.APIVersion(r); err != nil {
		web.Error(w, r, err)
		return
	}
	caller := web.CallerOf(r)
	if err := caller.RequireAdmin(); err != nil {
		web.Error(w, r, err)
		return
	}
	fields, err := readFields(r)
	if err == nil {
		fields, err = CreateFields(fields, caller.TenantID)
	}
	if err != nil {
		web.Error(w, r, err)
		return
	}
	body, err := json.Marshal(fields)
	if err != nil {
		web.Error(w, r, apierr.Invalid("", "the body is not valid JSON"))
		return
	}
	var in Location
	if err := web.DecodeBytes(body, &in); err != nil {
		web.Error(w, r, err)
		return
	}
	l, err := s.Create(r.Context(), caller.TenantID, in)
	if err != nil {
		web.Error(w, r, err)
		return
	}
	web.JSON(w, http.StatusCreated, l)
}

// listResponse is the body of GET /locations.
type listResponse struct {
	Items []Location `json:"items"`
	Page  web.Page   `json:"page"`
}

// handleList serves GET /locations: any caller of the tenant (anonymous
// callers and users see ACTIVE locations only).
func (s *Service) handleList(w http.ResponseWriter, r *http.Request) {
	if _, err := web.APIVersion(r); err != nil {
		web.Error(w, r, err)
		return
	}
	caller := web.CallerOf(r)
	if err := caller.RequireTenant(); err != nil {
		web.Error(w, r, err)
		return
	}
	q, err := ParseListQuery(r)
	if err != nil {
		web.Error(w, r, err)
		return
	}
	items, page, err := s.List(r.Context(), caller, q)
	if err != nil {
		web.Error(w, r, err)
		return
	}
	web.JSON(w, http.StatusOK, listResponse{Items: items, Page: page})
}

// handleGet serves GET /locations/{locationId}: every field of the
// location. Callers other than admins see ACTIVE locations only (others are
// 404).
func (s *Service) handleGet(w http.ResponseWriter, r *http.Request) {
	caller := web.CallerOf(r)
	if err := caller.RequireTenant(); err != nil {
		web.Error(w, r, err)
		return
	}
	l, err := s.Get(r.Context(), caller.TenantID, r.PathValue("locationId"))
	if err == nil && !caller.IsAdmin() && l.State != StateActive {
		err = fmt.Errorf("get location: %w", ErrNotFound)
	}
	if err != nil {
		web.Error(w, r, err)
		return
	}
	web.JSON(w, http.StatusOK, l)
}

// handleUpdate serves PUT /locations/{locationId} (admin): the fields sent
// replace the stored ones (the body GET returned may be sent back, see
// UpdateFields).
func (s *Service) handleUpdate(w http.ResponseWriter, r *http.Request) {
	caller := web.CallerOf(r)
	if err := caller.RequireAdmin(); err != nil {
		web.Error(w, r, err)
		return
	}
	fields, err := readFields(r)
	if err != nil {
		web.Error(w, r, err)
		return
	}
	l, err := s.Update(r.Context(), caller.TenantID, r.PathValue("locationId"), fields)
	if err != nil {
		web.Error(w, r, err)
		return
	}
	web.JSON(w, http.StatusOK, l)
}

// tagGroupList is the body of GET /locations/taggroups.
type tagGroupList struct {
	Items []TagGroup `json:"items"`
}

// handleListTagGroups serves GET /locations/taggroups: any caller of the
// tenant.
func (s *Service) handleListTagGroups(w http.ResponseWriter, r *http.Request) {
	caller := web.CallerOf(r)
	if err := caller.RequireTenant(); err != nil {
		web.Error(w, r, err)
		return
	}
	groups, err := s.TagGroups(r.Context(), caller.TenantID)
	if err != nil {
		web.Error(w, r, err)
		return
	}
	web.JSON(w, http.StatusOK, tagGroupList{Items: groups})
}

// handleCreateTagGroup serves POST /locations/taggroups (admin): 201.
func (s *Service) handleCreateTagGroup(w http.ResponseWriter, r *http.Request) {
	caller := web.CallerOf(r)
	if err := caller.RequireAdmin(); err != nil {
		web.Error(w, r, err)
		return
	}
	var in TagGroupInput
	if err := web.Decode(r, &in); err != nil {
		web.Error(w, r, err)
		return
	}
	g, err := s.CreateTagGroup(r.Context(), caller.TenantID, in)
	if err != nil {
		web.Error(w, r, err)
		return
	}
	web.JSON(w, http.StatusCreated, g)
}

// handleUpdateTagGroup serves PUT /locations/taggroups/{tagGroupId}
// (admin).
func (s *Service) handleUpdateTagGroup(w http.ResponseWriter, r *http.Request) {
	caller := web.CallerOf(r)
	if err := caller.RequireAdmin(); err != nil {
		web.Error(w, r, err)
		return
	}
	body, err := web.ReadBody(r, web.MaxBodyBytes)
	if err != nil {
		web.Error(w, r, err)
		return
	}
	var in TagGroupInput
	if len(bytes.TrimSpace(body)) == 0 {
		err = apierr.Invalid("", "a JSON body is required")
	} else {
		err = web.DecodeBytes(body, &in)
	}
	if err != nil {
		web.Error(w, r, err)
		return
	}
	g, err := s.UpdateTagGroup(r.Context(), caller.TenantID, r.PathValue("tagGroupId"), in)
	if err != nil {
		web.Error(w, r, err)
		return
	}
	web.JSON(w, http.StatusOK, g)
}

// handleDeleteTagGroup serves DELETE /locations/taggroups/{tagGroupId}
// (admin): 204.
func (s *Service) handleDeleteTagGroup(w http.ResponseWriter, r *http.Request) {
	caller := web.CallerOf(r)
	if err := caller.RequireAdmin(); err != nil {
		web.Error(w, r, err)
		return
	}
	if err := s.DeleteTagGroup(r.Context(), caller.TenantID, r.PathValue("tagGroupId")); err != nil {
		web.Error(w, r, err)
		return
	}
	web.Empty(w, http.StatusNoContent)
}

package audience

import (
	"bytes"
	"net/http"

	"github.com/loyalty-platform/platform/shared/apierr"
	"github.com/loyalty-platform/platform/shared/web"
)

// Routes returns the routes of the audiences function.
func (s *Service) Routes() []web.Route {
	return []web.Route{
		{Method: "POST", Path: "/segments", Handler: s.handleCreate},
		{Method: "GET", Path: "/segments", Handler: s.handleList},
		{Method: "GET", Path: "/segments/{segmentId}", Handler: s.handleGet},
		{Method: "PUT", Path: "/segments/{segmentId}", Handler: s.handleUpdate},
		{Method: "DELETE", Path: "/segments/{segmentId}", Handler: s.handleDelete},
		{Method: "GET", Path: "/segments/{segmentId}/members", Handler: s.handleListMembers},
		{Method: "POST", Path: "/segments/{segmentId}/members", Handler: s.handleAddMembers},
		{Method: "DELETE", Path: "/segments/{segmentId}/members/{userId}", Handler: s.handleRemoveMember},
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

// handleCreate serves POST /segments (admin): 201 with the new segment.
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
	seg, err := s.Create(r.Context(), caller, b)
	if err != nil {
		web.Error(w, r, err)
		return
	}
	web.JSON(w, http.StatusCreated, seg)
}

// SegmentList is the body of GET /segments.
type SegmentList struct {
	Items []Segment `json:"items"`
	Page  web.Page  `json:"page"`
}

// handleList serves GET /segments (admin): the tenant's segments, paged.
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
	items, page, err := s.List(r.Context(), caller, limit, start)
	if err != nil {
		web.Error(w, r, err)
		return
	}
	web.JSON(w, http.StatusOK, SegmentList{Items: items, Page: page})
}

// handleGet serves GET /segments/{segmentId} (admin).
func (s *Service) handleGet(w http.ResponseWriter, r *http.Request) {
	seg, err := s.Get(r.Context(), web.CallerOf(r), r.PathValue("segmentId"))
	if err != nil {
		web.Error(w, r, err)
		return
	}
	web.JSON(w, http.StatusOK, seg)
}

// handleUpdate serves PUT /segments/{segmentId} (admin): 200 with the
// segment as stored.
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
	seg, err := s.Update(r.Context(), caller, r.PathValue("segmentId"), b)
	if err != nil {
		web.Error(w, r, err)
		return
	}
	web.JSON(w, http.StatusOK, seg)
}

// handleDelete serves DELETE /segments/{segmentId} (admin): 204.
func (s *Service) handleDelete(w http.ResponseWriter, r *http.Request) {
	if err := s.Delete(r.Context(), web.CallerOf(r), r.PathValue("segmentId")); err != nil {
		web.Error(w, r, err)
		return
	}
	web.Empty(w, http.StatusNoContent)
}

// MemberList is the body of GET /segments/{segmentId}/members.
type MemberList struct {
	Items []Member `json:"items"`
	Page  web.Page `json:"page"`
}

// handleListMembers serves GET /segments/{segmentId}/members (admin): the
// live members, paged.
func (s *Service) handleListMembers(w http.ResponseWriter, r *http.Request) {
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
	items, page, err := s.ListMembers(r.Context(), caller, r.PathValue("segmentId"), limit, start)
	if err != nil {
		web.Error(w, r, err)
		return
	}
	web.JSON(w, http.StatusOK, MemberList{Items: items, Page: page})
}

// handleAddMembers serves POST /segments/{segmentId}/members (admin): 200
// with what happened to each user id.
func (s *Service) handleAddMembers(w http.ResponseWriter, r *http.Request) {
	caller := web.CallerOf(r)
	if err := caller.RequireAdmin(); err != nil {
		web.Error(w, r, err)
		return
	}
	var in AddInput
	if err := web.Decode(r, &in); err != nil {
		web.Error(w, r, err)
		return
	}
	res, err := s.AddMembers(r.Context(), caller, r.PathValue("segmentId"), in)
	if err != nil {
		web.Error(w, r, err)
		return
	}
	web.JSON(w, http.StatusOK, res)
}

// handleRemoveMember serves DELETE /segments/{segmentId}/members/{userId}
// (admin): 204.
func (s *Service) handleRemoveMember(w http.ResponseWriter, r *http.Request) {
	if err := s.RemoveMember(r.Context(), web.CallerOf(r), r.PathValue("segmentId"), r.PathValue("userId")); err != nil {
		web.Error(w, r, err)
		return
	}
	web.Empty(w, http.StatusNoContent)
}

package audience

import (
	"net/http"

	"github.com/loyalty-platform/platform/shared/platform/actor"
	"github.com/loyalty-platform/platform/shared/platform/web"
)

// Routes returns the routes of the audiences function.
func (s *Service) Routes() []web.Route {
	return []web.Route{
		{Method: "POST", Path: "/segments", Access: web.Admin, Handler: web.Serve(http.StatusCreated, s.handleCreate)},
		{Method: "GET", Path: "/segments", Access: web.Admin, Handler: web.Serve(http.StatusOK, s.handleList)},
		{Method: "GET", Path: "/segments/{segmentId}", Access: web.Admin, Handler: web.Serve(http.StatusOK, s.handleGet)},
		{Method: "PUT", Path: "/segments/{segmentId}", Access: web.Admin, Handler: web.Serve(http.StatusOK, s.handleUpdate)},
		{Method: "DELETE", Path: "/segments/{segmentId}", Access: web.Admin, Handler: web.ServeEmpty(http.StatusNoContent, s.handleDelete)},
		{Method: "GET", Path: "/segments/{segmentId}/members", Access: web.Admin, Handler: web.Serve(http.StatusOK, s.handleListMembers)},
		{Method: "POST", Path: "/segments/{segmentId}/members", Access: web.Admin, Handler: web.Serve(http.StatusOK, s.handleAddMembers)},
		{Method: "DELETE", Path: "/segments/{segmentId}/members/{userId}", Access: web.Admin, Handler: web.ServeEmpty(http.StatusNoContent, s.handleRemoveMember)},
	}
}

// handleCreate serves POST /segments (admin): 201 with the new segment.
func (s *Service) handleCreate(r *http.Request, caller actor.Actor) (Segment, error) {
	b, err := web.RequiredBody(r)
	if err != nil {
		return Segment{}, err
	}
	return s.Create(r.Context(), caller, b)
}

// SegmentList is the body of GET /segments.
type SegmentList struct {
	Items []Segment `json:"items"`
	Page  web.Page  `json:"page"`
}

// handleList serves GET /segments (admin): the tenant's segments, paged.
func (s *Service) handleList(r *http.Request, caller actor.Actor) (SegmentList, error) {
	limit, start, err := web.Paging(r)
	if err != nil {
		return SegmentList{}, err
	}
	items, page, err := s.List(r.Context(), caller, limit, start)
	return SegmentList{Items: items, Page: page}, err
}

// handleGet serves GET /segments/{segmentId} (admin).
func (s *Service) handleGet(r *http.Request, caller actor.Actor) (Segment, error) {
	return s.Get(r.Context(), caller, r.PathValue("segmentId"))
}

// handleUpdate serves PUT /segments/{segmentId} (admin): 200 with the
// segment as stored.
func (s *Service) handleUpdate(r *http.Request, caller actor.Actor) (Segment, error) {
	b, err := web.RequiredBody(r)
	if err != nil {
		return Segment{}, err
	}
	return s.Update(r.Context(), caller, r.PathValue("segmentId"), b)
}

// handleDelete serves DELETE /segments/{segmentId} (admin): 204.
func (s *Service) handleDelete(r *http.Request, caller actor.Actor) error {
	return s.Delete(r.Context(), caller, r.PathValue("segmentId"))
}

// MemberList is the body of GET /segments/{segmentId}/members.
type MemberList struct {
	Items []Member `json:"items"`
	Page  web.Page `json:"page"`
}

// handleListMembers serves GET /segments/{segmentId}/members (admin): the
// live members, paged.
func (s *Service) handleListMembers(r *http.Request, caller actor.Actor) (MemberList, error) {
	limit, start, err := web.Paging(r)
	if err != nil {
		return MemberList{}, err
	}
	items, page, err := s.ListMembers(r.Context(), caller, r.PathValue("segmentId"), limit, start)
	return MemberList{Items: items, Page: page}, err
}

// handleAddMembers serves POST /segments/{segmentId}/members (admin): 200
// with what happened to each user id.
func (s *Service) handleAddMembers(r *http.Request, caller actor.Actor) (AddResult, error) {
	in, err := web.Decoded[AddInput](r)
	if err != nil {
		return AddResult{}, err
	}
	return s.AddMembers(r.Context(), caller, r.PathValue("segmentId"), in)
}

// handleRemoveMember serves DELETE /segments/{segmentId}/members/{userId}
// (admin): 204.
func (s *Service) handleRemoveMember(r *http.Request, caller actor.Actor) error {
	return s.RemoveMember(r.Context(), caller, r.PathValue("segmentId"), r.PathValue("userId"))
}

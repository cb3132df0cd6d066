package directory

import (
	"net/http"
	"strings"

	"github.com/loyalty-platform/platform/shared/domain/user"
	"github.com/loyalty-platform/platform/shared/platform/web"
)

// LegacyUser is the older (x-api-version < 4) shape of a user in GET /users:
// the current fields plus `_id` (the older name of `id`) and `name` (the
// full name).
type LegacyUser struct {
	LegacyID string `json:"_id"`
	Name     string `json:"name"`
	user.User
}

// listResponse is the current shape of a user list.
type listResponse struct {
	Items []user.User `json:"items"`
	Page  web.Page    `json:"page"`
}

// legacyListResponse is the shape of GET /users below x-api-version 4.
type legacyListResponse struct {
	Items []LegacyUser `json:"items"`
	Page  web.Page     `json:"page"`
}

// handleList serves GET /users (admin only): name search and filters.
func (s *Service) handleList(w http.ResponseWriter, r *http.Request) {
	version, err := web.APIVersion(r)
	if err != nil {
		web.Error(w, r, err)
		return
	}
	caller := web.CallerOf(r)
	if err := caller.RequireAdmin(); err != nil {
		web.Error(w, r, err)
		return
	}
	q, err := listQuery(r)
	if err != nil {
		web.Error(w, r, err)
		return
	}
	users, page, err := s.List(r.Context(), caller, q)
	if err != nil {
		web.Error(w, r, err)
		return
	}
	writeList(w, version, users, page)
}

func writeList(w http.ResponseWriter, version int, users []user.User, page web.Page) {
	if version >= 4 {
		web.JSON(w, http.StatusOK, listResponse{Items: users, Page: page})
		return
	}
	legacy := make([]LegacyUser, len(users))
	for i, u := range users {
		legacy[i] = LegacyUser{LegacyID: u.ID, Name: u.FullName, User: u}
	}
	web.JSON(w, http.StatusOK, legacyListResponse{Items: legacy, Page: page})
}

func listQuery(r *http.Request) (ListQuery, error) {
	limit, start, err := web.Paging(r)
	if err != nil {
		return ListQuery{}, err
	}
	v := r.URL.Query()
	include, err := user.ParseInclude(web.ParamValues(r, "include"))
	if err != nil {
		return ListQuery{}, err
	}
	q := ListQuery{
		Name: v.Get("name"), CredentialID: user.PlusFromQuery(v.Get("credentialId")), Role: strings.ToUpper(v.Get("role")),
		Sort: v.Get("sort"), Include: include, Limit: limit, StartKey: start,
	}
	if q.CreatedAfter, err = ParseAfter("createdAfter", v.Get("createdAfter")); err != nil {
		return ListQuery{}, err
	}
	if q.UpdatedAfter, err = ParseAfter("updatedAfter", v.Get("updatedAfter")); err != nil {
		return ListQuery{}, err
	}
	return q, q.Validate()
}

// lookupBody is the body of POST /users/lookup.
type lookupBody struct {
	UserIDs []string `json:"userIds"`
}

// handleLookup serves POST /users/lookup (admin only).
func (s *Service) handleLookup(w http.ResponseWriter, r *http.Request) {
	version, err := web.APIVersion(r)
	if err != nil {
		web.Error(w, r, err)
		return
	}
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
	include, err := user.ParseInclude(web.ParamValues(r, "include"))
	if err != nil {
		web.Error(w, r, err)
		return
	}
	var body lookupBody
	if err := web.Decode(r, &body); err != nil {
		web.Error(w, r, err)
		return
	}
	users, page, err := s.Lookup(r.Context(), caller, LookupQuery{UserIDs: body.UserIDs, Sort: r.URL.Query().Get("sort"), Include: include, Limit: limit, StartKey: start})
	if err != nil {
		web.Error(w, r, err)
		return
	}
	_ = version
	web.JSON(w, http.StatusOK, listResponse{Items: users, Page: page})
}

// handleGet serves GET /users/{userId}.
func (s *Service) handleGet(w http.ResponseWriter, r *http.Request) {
	if _, err := web.APIVersion(r); err != nil {
		web.Error(w, r, err)
		return
	}
	include, err := user.ParseInclude(web.ParamValues(r, "include"))
	if err != nil {
		web.Error(w, r, err)
		return
	}
	u, err := s.users.Get(r.Context(), web.CallerOf(r), r.PathValue("userId"), include)
	if err != nil {
		web.Error(w, r, err)
		return
	}
	web.JSON(w, http.StatusOK, u)
}

// handleUpdate serves PUT /users/{userId}.
func (s *Service) handleUpdate(w http.ResponseWriter, r *http.Request) {
	caller := web.CallerOf(r)
	userID := r.PathValue("userId")
	if err := caller.RequireUser(userID); err != nil {
		web.Error(w, r, err)
		return
	}
	body, err := web.ReadBody(r, web.MaxBodyBytes)
	if err != nil {
		web.Error(w, r, err)
		return
	}
	in, err := DecodeUpdate(body)
	if err != nil {
		web.Error(w, r, err)
		return
	}
	u, err := s.Update(r.Context(), caller, userID, in)
	if err != nil {
		web.Error(w, r, err)
		return
	}
	web.JSON(w, http.StatusOK, u)
}

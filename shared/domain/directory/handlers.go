package directory

import (
	"net/http"
	"strings"

	"github.com/loyalty-platform/platform/shared/domain/user"
	"github.com/loyalty-platform/platform/shared/platform/actor"
	"github.com/loyalty-platform/platform/shared/platform/apierr"
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

// handleList serves GET /users (admin; x-api-version is checked first):
// name search and filters.
func (s *Service) handleList(r *http.Request, a actor.Actor) (any, error) {
	version, err := web.APIVersion(r)
	if err != nil {
		return nil, err
	}
	q, err := listQuery(r)
	if err != nil {
		return nil, err
	}
	users, page, err := s.List(r.Context(), a, q)
	if err != nil {
		return nil, err
	}
	return listAnswer(version, users, page), nil
}

// listAnswer is the body of GET /users in the shape of x-api-version
// version.
func listAnswer(version int, users []user.User, page web.Page) any {
	if version >= 4 {
		return listResponse{Items: users, Page: page}
	}
	legacy := make([]LegacyUser, len(users))
	for i, u := range users {
		legacy[i] = LegacyUser{LegacyID: u.ID, Name: u.FullName, User: u}
	}
	return legacyListResponse{Items: legacy, Page: page}
}

func listQuery(r *http.Request) (ListQuery, error) {
	limit, start, err := web.Paging(r)
	if err != nil {
		return ListQuery{}, err
	}
	v := r.URL.Query()
	include, err := listInclude(r)
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

// listInclude reads the include options of the user lists: those of GET
// /users/{userId} but awards, which reads each user's awards and so is
// offered on one user only (422 on a list).
func listInclude(r *http.Request) (map[string]bool, error) {
	include, err := user.ParseInclude(web.ParamValues(r, "include"))
	if err == nil && include["awards"] {
		err = apierr.Invalid("include", "awards is only offered on GET /users/{userId}, not on a list")
	}
	return include, err
}

// lookupBody is the body of POST /users/lookup.
type lookupBody struct {
	UserIDs []string `json:"userIds"`
}

// handleLookup serves POST /users/lookup (admin; x-api-version is checked
// first).
func (s *Service) handleLookup(r *http.Request, a actor.Actor) (listResponse, error) {
	limit, start, err := web.Paging(r)
	if err != nil {
		return listResponse{}, err
	}
	include, err := listInclude(r)
	if err != nil {
		return listResponse{}, err
	}
	body, err := web.Decoded[lookupBody](r)
	if err != nil {
		return listResponse{}, err
	}
	users, page, err := s.Lookup(r.Context(), a, LookupQuery{UserIDs: body.UserIDs, Sort: r.URL.Query().Get("sort"), Include: include, Limit: limit, StartKey: start})
	return listResponse{Items: users, Page: page}, err
}

// checkGet is what GET /users/{userId} checks before its caller:
// x-api-version and the include options.
func checkGet(r *http.Request) error {
	if err := web.CheckAPIVersion(r); err != nil {
		return err
	}
	_, err := user.ParseInclude(web.ParamValues(r, "include"))
	return err
}

// handleGet serves GET /users/{userId} (the user, or an admin; checkGet
// first).
func (s *Service) handleGet(r *http.Request, a actor.Actor) (user.User, error) {
	include, err := user.ParseInclude(web.ParamValues(r, "include"))
	if err != nil {
		return user.User{}, err
	}
	return s.users.Get(r.Context(), a, r.PathValue("userId"), include)
}

// handleUpdate serves PUT /users/{userId} (the user, or an admin).
func (s *Service) handleUpdate(r *http.Request, a actor.Actor) (user.User, error) {
	body, err := web.ReadBody(r, web.MaxBodyBytes)
	if err != nil {
		return user.User{}, err
	}
	in, err := DecodeUpdate(body)
	if err != nil {
		return user.User{}, err
	}
	return s.Update(r.Context(), a, r.PathValue("userId"), in)
}

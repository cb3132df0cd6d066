package checkin

import (
	"net/http"
	"strconv"

	"github.com/loyalty-platform/platform/shared/platform/apierr"
	"github.com/loyalty-platform/platform/shared/platform/metrics"
	"github.com/loyalty-platform/platform/shared/platform/web"
)

// Routes returns the routes of the checkins function. A check-in takes the
// Idempotency-Key header (web.Route.Idempotent): its CHECKIN_CREATED
// action may earn points through the rules.
func (s *Service) Routes() []web.Route {
	return []web.Route{
		{Method: "POST", Path: "/users/{userId}/checkins", Handler: s.handleCreate, Idempotent: true},
		{Method: "GET", Path: "/users/{userId}/checkins", Handler: s.handleListByUser},
		{Method: "DELETE", Path: "/users/{userId}/checkins", Handler: s.handleCheckout},
		{Method: "GET", Path: "/locations/{locationId}/checkins", Handler: s.handleListByLocation},
	}
}

// handleCreate serves POST /users/{userId}/checkins: check a user in at a
// location (the user, or an admin such as a POS on the user's behalf).
func (s *Service) handleCreate(w http.ResponseWriter, r *http.Request) {
	caller := web.CallerOf(r)
	userID := r.PathValue("userId")
	if err := caller.RequireUser(userID); err != nil {
		web.Error(w, r, err)
		return
	}
	var in CreateInput
	if err := web.Decode(r, &in); err != nil {
		web.Error(w, r, err)
		return
	}
	c, err := s.Create(r.Context(), caller, userID, in)
	if err != nil {
		web.Error(w, r, err)
		return
	}
	metrics.Count(r.Context(), caller.TenantID, metrics.CheckinsCreated, 1)
	web.JSON(w, http.StatusCreated, c)
}

// handleListByUser serves GET /users/{userId}/checkins: the user's live
// check-in as a page-numbered list.
func (s *Service) handleListByUser(w http.ResponseWriter, r *http.Request) {
	caller := web.CallerOf(r)
	userID := r.PathValue("userId")
	if err := caller.RequireUser(userID); err != nil {
		web.Error(w, r, err)
		return
	}
	q, err := pageQuery(r)
	if err != nil {
		web.Error(w, r, err)
		return
	}
	list, err := s.ListByUser(r.Context(), caller, userID, q)
	if err != nil {
		web.Error(w, r, err)
		return
	}
	web.JSON(w, http.StatusOK, list)
}

// handleCheckout serves DELETE /users/{userId}/checkins: end the user's
// live check-in; 204 on success.
func (s *Service) handleCheckout(w http.ResponseWriter, r *http.Request) {
	caller := web.CallerOf(r)
	if err := s.Checkout(r.Context(), caller, r.PathValue("userId")); err != nil {
		web.Error(w, r, err)
		return
	}
	web.Empty(w, http.StatusNoContent)
}

// handleListByLocation serves GET /locations/{locationId}/checkins (admin
// only): the live check-ins at a location, newest first.
func (s *Service) handleListByLocation(w http.ResponseWriter, r *http.Request) {
	caller := web.CallerOf(r)
	if err := caller.RequireAdmin(); err != nil {
		web.Error(w, r, err)
		return
	}
	q, err := pageQuery(r)
	if err != nil {
		web.Error(w, r, err)
		return
	}
	list, err := s.ListByLocation(r.Context(), caller, r.PathValue("locationId"), q)
	if err != nil {
		web.Error(w, r, err)
		return
	}
	web.JSON(w, http.StatusOK, list)
}

// pageQuery reads `per_page` (1 to 100, default 20) and `page` (1 to
// 10000, default 1).
func pageQuery(r *http.Request) (PageQuery, error) {
	q := PageQuery{PerPage: DefaultPerPage, Page: 1}
	v := r.URL.Query()
	if s := v.Get("per_page"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > MaxPerPage {
			return q, apierr.Invalid("per_page", "must be an integer from 1 to %d", MaxPerPage)
		}
		q.PerPage = n
	}
	if s := v.Get("page"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > MaxPage {
			return q, apierr.Invalid("page", "must be an integer from 1 to %d", MaxPage)
		}
		q.Page = n
	}
	return q, nil
}

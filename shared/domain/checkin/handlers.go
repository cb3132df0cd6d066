package checkin

import (
	"net/http"
	"strconv"

	"github.com/loyalty-platform/platform/shared/platform/actor"
	"github.com/loyalty-platform/platform/shared/platform/apierr"
	"github.com/loyalty-platform/platform/shared/platform/metrics"
	"github.com/loyalty-platform/platform/shared/platform/web"
)

// Routes returns the routes of the checkins function. A check-in takes the
// Idempotency-Key header (web.Route.Idempotent): its CHECKIN_CREATED
// action may earn points through the rules.
func (s *Service) Routes() []web.Route {
	return []web.Route{
		{Method: "POST", Path: "/users/{userId}/checkins", Access: web.Self, Handler: web.Serve(http.StatusCreated, s.handleCreate), Idempotent: true},
		{Method: "GET", Path: "/users/{userId}/checkins", Access: web.Self, Handler: web.Serve(http.StatusOK, s.handleListByUser)},
		{Method: "DELETE", Path: "/users/{userId}/checkins", Access: web.Self, Handler: web.ServeEmpty(http.StatusNoContent, s.handleCheckout)},
		{Method: "GET", Path: "/locations/{locationId}/checkins", Access: web.Admin, Handler: web.Serve(http.StatusOK, s.handleListByLocation)},
	}
}

// handleCreate serves POST /users/{userId}/checkins: check a user in at a
// location (the user, or an admin such as a POS on the user's behalf).
func (s *Service) handleCreate(r *http.Request, a actor.Actor) (Checkin, error) {
	in, err := web.Decoded[CreateInput](r)
	if err != nil {
		return Checkin{}, err
	}
	c, err := s.Create(r.Context(), a, r.PathValue("userId"), in)
	if err != nil {
		return Checkin{}, err
	}
	metrics.Count(r.Context(), a.TenantID, metrics.CheckinsCreated, 1)
	return c, nil
}

// handleListByUser serves GET /users/{userId}/checkins: the user's live
// check-in as a page-numbered list.
func (s *Service) handleListByUser(r *http.Request, a actor.Actor) (List, error) {
	q, err := pageQuery(r)
	if err != nil {
		return List{}, err
	}
	return s.ListByUser(r.Context(), a, r.PathValue("userId"), q)
}

// handleCheckout serves DELETE /users/{userId}/checkins: end the user's
// live check-in; 204 on success.
func (s *Service) handleCheckout(r *http.Request, a actor.Actor) error {
	return s.Checkout(r.Context(), a, r.PathValue("userId"))
}

// handleListByLocation serves GET /locations/{locationId}/checkins (admin
// only): the live check-ins at a location, newest first.
func (s *Service) handleListByLocation(r *http.Request, a actor.Actor) (List, error) {
	q, err := pageQuery(r)
	if err != nil {
		return List{}, err
	}
	return s.ListByLocation(r.Context(), a, r.PathValue("locationId"), q)
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

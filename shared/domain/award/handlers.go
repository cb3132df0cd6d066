package award

import (
	"fmt"
	"net/http"
	"time"

	"github.com/loyalty-platform/platform/shared/platform/actor"
	"github.com/loyalty-platform/platform/shared/platform/apierr"
	"github.com/loyalty-platform/platform/shared/platform/timefilter"
	"github.com/loyalty-platform/platform/shared/platform/web"
)

// CurrentVersion is the first x-api-version of GET /awards that answers
// the current {items, page} shape; below it (or without the header) the
// older perk-shaped schema is returned.
const CurrentVersion = 8

// MaxSegmentGrant is the most members a legacy grant to a segment
// reaches (its operation reads them at once); larger segments are granted
// with the bulk award import.
const MaxSegmentGrant = 1000

// Routes returns the award routes of the loyalty function. The routes that
// change points take the Idempotency-Key header (web.Route.Idempotent).
// The handlers return their answers as any and decode with web.Decode, so
// that the loyalty function links one copy of web.Serve (see web.Op).
// The legacy grant (POST /perks/{perkId}/grant) is shared/domain/segmentgrant's:
// its grant to a segment runs as an operation.
func (s *Service) Routes() []web.Route {
	return []web.Route{
		{Method: "POST", Path: "/pointperks/{perkId}/awards", Access: web.Admin, Handler: web.Serve(http.StatusOK, s.handleGrant), Idempotent: true},
		{Method: "POST", Path: "/perks/{perkId}/awards", Access: web.Admin, Handler: web.Serve(http.StatusOK, s.handleGrant), Idempotent: true},
		{Method: "GET", Path: "/awards", Access: web.Authenticated, Handler: web.Serve(http.StatusOK, s.handleList)},
		{Method: "GET", Path: "/users/{userId}/awards", Access: web.Self, Handler: web.Serve(http.StatusOK, s.handleUserAwards)},
		{Method: "GET", Path: "/users/{userId}/pointawards", Access: web.Self, Handler: web.Serve(http.StatusOK, s.handleUserPointAwards)},
		// The ledger read its paging parameters before it checked the
		// caller (Before).
		{Method: "GET", Path: "/users/{userId}/pointawards/{awardId}/ledger", Access: web.Self, Before: web.CheckPaging, Handler: web.Serve(http.StatusOK, s.handleLedger)},
		{Method: "POST", Path: "/users/{userId}/awards/{awardId}/redeem", Access: web.Self, Handler: web.Serve(http.StatusOK, s.handleRedeem(true)), Idempotent: true},
		{Method: "POST", Path: "/users/{userId}/pointawards/{awardId}/redeem", Access: web.Self, Handler: web.Serve(http.StatusOK, s.handleRedeem(false)), Idempotent: true},
		{Method: "POST", Path: "/users/{userId}/awards/{awardId}/refund", Access: web.Admin, Handler: web.Serve(http.StatusOK, s.handleRefund(true)), Idempotent: true},
		{Method: "POST", Path: "/users/{userId}/pointawards/{awardId}/refund", Access: web.Admin, Handler: web.Serve(http.StatusOK, s.handleRefund(false)), Idempotent: true},
		{Method: "PUT", Path: "/pointawards/{awardId}", Access: web.Admin, Handler: web.ServeEmpty(http.StatusOK, s.handleSet), Idempotent: true},
		{Method: "GET", Path: "/reports/points-liability", Access: web.Admin, Handler: web.Serve(http.StatusOK, s.handleLiability)},
	}
}

// handleGrant serves POST /pointperks/{perkId}/awards and POST
// /perks/{perkId}/awards (admin): 200 with the award after the grant.
func (s *Service) handleGrant(r *http.Request, a actor.Actor) (any, error) {
	var in GrantInput
	if err := web.Decode(r, &in); err != nil {
		return nil, err
	}
	return s.Grant(r.Context(), a, r.PathValue("perkId"), in, GrantOptions{Source: SourceAPI})
}

// LegacyGrantInput is the body of POST /perks/{perkId}/grant (served by
// shared/domain/segmentgrant): exactly one of userId and segmentId.
type LegacyGrantInput struct {
	UserID     string `json:"userId"`
	SegmentID  string `json:"segmentId"`
	Points     *int   `json:"points"`
	LocationID string `json:"locationId"`
}

// AwardList is the current body of GET /awards.
type AwardList struct {
	Items []any    `json:"items"`
	Page  web.Page `json:"page"`
}

// LegacyAwardList is the older body of GET /awards (x-api-version below
// 8).
type LegacyAwardList struct {
	Awards []LegacyAward `json:"awards"`
	Page   web.Page      `json:"page"`
}

// filterOf reads the list filters shared by the award lists.
func filterOf(r *http.Request) (Filter, error) {
	var f Filter
	var err error
	if f.IncludeUnvisualised, err = web.BoolParam(r, "includeUnvisualisedAwards", true); err != nil {
		return f, err
	}
	if f.IncludeDisabled, err = web.BoolParam(r, "includeDisabled", false); err != nil {
		return f, err
	}
	if f.LocationID = r.URL.Query().Get("locationId"); f.LocationID != "" && !web.ValidID(f.LocationID) {
		return f, apierr.Invalid("locationId", "is not a location id")
	}
	return f, nil
}

// handleList serves GET /awards: a user's own awards, an admin's tenant
// awards or (userId) one user's; x-api-version 8 or higher answers
// {items, page}, below it the older perk-shaped {awards, page}.
func (s *Service) handleList(r *http.Request, a actor.Actor) (any, error) {
	version, err := web.APIVersion(r)
	if err != nil {
		return nil, err
	}
	limit, start, err := web.Paging(r)
	if err != nil {
		return nil, err
	}
	f, err := filterOf(r)
	if err != nil {
		return nil, err
	}
	if f.Updated, err = timefilter.Parse(r, "updatedAt"); err != nil {
		return nil, err
	}
	fields, err := parseFields(r)
	if err != nil {
		return nil, err
	}
	q := ListQuery{UserID: r.URL.Query().Get("userId"), Filter: f, Fields: fields, Limit: limit, StartKey: start}
	q.Scope = scopeOf(r)
	awards, page, err := s.List(r.Context(), a, q)
	if err != nil {
		return nil, err
	}
	if version < CurrentVersion {
		out := LegacyAwardList{Awards: make([]LegacyAward, 0, len(awards)), Page: page}
		for _, aw := range awards {
			out.Awards = append(out.Awards, aw.Legacy())
		}
		return out, nil
	}
	items, err := project(awards, fields)
	if err != nil {
		return nil, err
	}
	return AwardList{Items: items, Page: page}, nil
}

// scopeOf names a list query for its paging keys: every parameter but the
// paging ones.
func scopeOf(r *http.Request) string {
	q := r.URL.Query()
	q.Del("startKey")
	q.Del("limit")
	v, _ := web.APIVersion(r)
	return fmt.Sprintf("%s|current=%t", q.Encode(), v >= CurrentVersion)
}

// UserAwards is the body of GET /users/{userId}/pointawards.
type UserAwards struct {
	Awards []Award `json:"awards"`
}

// LegacyUserAwards is the body of GET /users/{userId}/awards.
type LegacyUserAwards struct {
	Awards []LegacyAward `json:"awards"`
}

// userHoldings serves the two per-user lists.
func (s *Service) userHoldings(r *http.Request, a actor.Actor) ([]Award, error) {
	userID := r.PathValue("userId")
	f, err := filterOf(r)
	if err != nil {
		return nil, err
	}
	var asOf *time.Time
	if v := r.URL.Query().Get("asOf"); v != "" {
		t, err := time.Parse(time.RFC3339Nano, v)
		if err != nil {
			return nil, apierr.Invalid("asOf", "must be an RFC 3339 date-time such as 2026-11-01T00:00:00Z")
		}
		asOf = &t
	}
	if _, err := s.Users.Person(r.Context(), a.TenantID, userID); err != nil {
		return nil, err
	}
	if asOf != nil {
		return s.HoldingsAsOf(r.Context(), a.TenantID, userID, f, *asOf)
	}
	return s.Holdings(r.Context(), a.TenantID, userID, f)
}

// handleUserAwards serves GET /users/{userId}/awards (the user or an
// admin; older schema): every award the user holds.
func (s *Service) handleUserAwards(r *http.Request, a actor.Actor) (any, error) {
	awards, err := s.userHoldings(r, a)
	if err != nil {
		return nil, err
	}
	out := LegacyUserAwards{Awards: make([]LegacyAward, 0, len(awards))}
	for _, aw := range awards {
		out.Awards = append(out.Awards, aw.Legacy())
	}
	return out, nil
}

// handleUserPointAwards serves GET /users/{userId}/pointawards (the user
// or an admin): every award the user holds, current shape.
func (s *Service) handleUserPointAwards(r *http.Request, a actor.Actor) (any, error) {
	awards, err := s.userHoldings(r, a)
	if err != nil {
		return nil, err
	}
	if awards == nil {
		awards = []Award{}
	}
	return UserAwards{Awards: awards}, nil
}

// handleRedeem serves POST /users/{userId}/awards/{awardId}/redeem (older
// schema, legacy) and POST /users/{userId}/pointawards/{awardId}/redeem
// (the user or an admin): 200 with the award after the redemption.
func (s *Service) handleRedeem(legacy bool) web.Op[any] {
	return func(r *http.Request, a actor.Actor) (any, error) {
		var in RedeemInput
		if err := web.Decode(r, &in); err != nil {
			return nil, err
		}
		aw, err := s.Redeem(r.Context(), a, r.PathValue("userId"), r.PathValue("awardId"), in)
		if err != nil {
			return nil, err
		}
		return shaped(aw, legacy), nil
	}
}

// handleRefund serves POST /users/{userId}/awards/{awardId}/refund (older
// schema) and POST /users/{userId}/pointawards/{awardId}/refund (admin):
// 200 with the award after the refund.
func (s *Service) handleRefund(legacy bool) web.Op[any] {
	return func(r *http.Request, a actor.Actor) (any, error) {
		var in RefundInput
		if err := web.Decode(r, &in); err != nil {
			return nil, err
		}
		aw, err := s.Refund(r.Context(), a, r.PathValue("userId"), r.PathValue("awardId"), in)
		if err != nil {
			return nil, err
		}
		return shaped(aw, legacy), nil
	}
}

// shaped is the award as a route answers it: the older schema (legacy) or
// the current one.
func shaped(a Award, legacy bool) any {
	if legacy {
		return a.Legacy()
	}
	return a
}

// handleSet serves PUT /pointawards/{awardId} (admin): sets the award's
// available points; 200 with no body, and no action.
func (s *Service) handleSet(r *http.Request, a actor.Actor) error {
	var in SetInput
	if err := web.Decode(r, &in); err != nil {
		return err
	}
	return s.Set(r.Context(), a, r.PathValue("awardId"), in)
}

package award

import (
	"fmt"
	"net/http"
	"time"

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
// The legacy grant (POST /perks/{perkId}/grant) is shared/domain/segmentgrant's:
// its grant to a segment runs as an operation.
func (s *Service) Routes() []web.Route {
	return []web.Route{
		{Method: "POST", Path: "/pointperks/{perkId}/awards", Handler: s.handleGrant, Idempotent: true},
		{Method: "POST", Path: "/perks/{perkId}/awards", Handler: s.handleGrant, Idempotent: true},
		{Method: "GET", Path: "/awards", Handler: s.handleList},
		{Method: "GET", Path: "/users/{userId}/awards", Handler: s.handleUserAwards},
		{Method: "GET", Path: "/users/{userId}/pointawards", Handler: s.handleUserPointAwards},
		{Method: "GET", Path: "/users/{userId}/pointawards/{awardId}/ledger", Handler: web.Serve(http.StatusOK, s.handleLedger)},
		{Method: "POST", Path: "/users/{userId}/awards/{awardId}/redeem", Handler: s.handleRedeem(true), Idempotent: true},
		{Method: "POST", Path: "/users/{userId}/pointawards/{awardId}/redeem", Handler: s.handleRedeem(false), Idempotent: true},
		{Method: "POST", Path: "/users/{userId}/awards/{awardId}/refund", Handler: s.handleRefund(true), Idempotent: true},
		{Method: "POST", Path: "/users/{userId}/pointawards/{awardId}/refund", Handler: s.handleRefund(false), Idempotent: true},
		{Method: "PUT", Path: "/pointawards/{awardId}", Handler: s.handleSet, Idempotent: true},
		{Method: "GET", Path: "/reports/points-liability", Handler: web.Serve(http.StatusOK, s.handleLiability)},
	}
}

// handleGrant serves POST /pointperks/{perkId}/awards and POST
// /perks/{perkId}/awards (admin): 200 with the award after the grant.
func (s *Service) handleGrant(w http.ResponseWriter, r *http.Request) {
	caller := web.CallerOf(r)
	if err := caller.RequireAdmin(); err != nil {
		web.Error(w, r, err)
		return
	}
	var in GrantInput
	if err := web.Decode(r, &in); err != nil {
		web.Error(w, r, err)
		return
	}
	a, err := s.Grant(r.Context(), caller, r.PathValue("perkId"), in, GrantOptions{Source: SourceAPI})
	if err != nil {
		web.Error(w, r, err)
		return
	}
	web.JSON(w, http.StatusOK, a)
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
func (s *Service) handleList(w http.ResponseWriter, r *http.Request) {
	caller := web.CallerOf(r)
	if err := caller.RequireAuth(); err != nil {
		web.Error(w, r, err)
		return
	}
	version, err := web.APIVersion(r)
	if err != nil {
		web.Error(w, r, err)
		return
	}
	limit, start, err := web.Paging(r)
	if err != nil {
		web.Error(w, r, err)
		return
	}
	f, err := filterOf(r)
	if err != nil {
		web.Error(w, r, err)
		return
	}
	if f.Updated, err = timefilter.Parse(r, "updatedAt"); err != nil {
		web.Error(w, r, err)
		return
	}
	fields, err := parseFields(r)
	if err != nil {
		web.Error(w, r, err)
		return
	}
	q := ListQuery{UserID: r.URL.Query().Get("userId"), Filter: f, Fields: fields, Limit: limit, StartKey: start}
	q.Scope = scopeOf(r)
	awards, page, err := s.List(r.Context(), caller, q)
	if err != nil {
		web.Error(w, r, err)
		return
	}
	if version < CurrentVersion {
		out := LegacyAwardList{Awards: make([]LegacyAward, 0, len(awards)), Page: page}
		for _, a := range awards {
			out.Awards = append(out.Awards, a.Legacy())
		}
		web.JSON(w, http.StatusOK, out)
		return
	}
	items, err := project(awards, fields)
	if err != nil {
		web.Error(w, r, err)
		return
	}
	web.JSON(w, http.StatusOK, AwardList{Items: items, Page: page})
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
func (s *Service) userHoldings(r *http.Request) ([]Award, error) {
	caller := web.CallerOf(r)
	userID := r.PathValue("userId")
	if err := caller.RequireUser(userID); err != nil {
		return nil, err
	}
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
	if _, err := s.Users.Person(r.Context(), caller.TenantID, userID); err != nil {
		return nil, err
	}
	if asOf != nil {
		return s.HoldingsAsOf(r.Context(), caller.TenantID, userID, f, *asOf)
	}
	return s.Holdings(r.Context(), caller.TenantID, userID, f)
}

// handleUserAwards serves GET /users/{userId}/awards (the user or an
// admin; older schema): every award the user holds.
func (s *Service) handleUserAwards(w http.ResponseWriter, r *http.Request) {
	awards, err := s.userHoldings(r)
	if err != nil {
		web.Error(w, r, err)
		return
	}
	out := LegacyUserAwards{Awards: make([]LegacyAward, 0, len(awards))}
	for _, a := range awards {
		out.Awards = append(out.Awards, a.Legacy())
	}
	web.JSON(w, http.StatusOK, out)
}

// handleUserPointAwards serves GET /users/{userId}/pointawards (the user
// or an admin): every award the user holds, current shape.
func (s *Service) handleUserPointAwards(w http.ResponseWriter, r *http.Request) {
	awards, err := s.userHoldings(r)
	if err != nil {
		web.Error(w, r, err)
		return
	}
	if awards == nil {
		awards = []Award{}
	}
	web.JSON(w, http.StatusOK, UserAwards{Awards: awards})
}

// handleRedeem serves POST /users/{userId}/awards/{awardId}/redeem (older
// schema, legacy) and POST /users/{userId}/pointawards/{awardId}/redeem
// (the user or an admin): 200 with the award after the redemption.
func (s *Service) handleRedeem(legacy bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		caller := web.CallerOf(r)
		userID := r.PathValue("userId")
		if err := caller.RequireUser(userID); err != nil {
			web.Error(w, r, err)
			return
		}
		var in RedeemInput
		if err := web.Decode(r, &in); err != nil {
			web.Error(w, r, err)
			return
		}
		a, err := s.Redeem(r.Context(), caller, userID, r.PathValue("awardId"), in)
		if err != nil {
			web.Error(w, r, err)
			return
		}
		respond(w, a, legacy)
	}
}

// handleRefund serves POST /users/{userId}/awards/{awardId}/refund (older
// schema) and POST /users/{userId}/pointawards/{awardId}/refund (admin):
// 200 with the award after the refund.
func (s *Service) handleRefund(legacy bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		caller := web.CallerOf(r)
		if err := caller.RequireAdmin(); err != nil {
			web.Error(w, r, err)
			return
		}
		var in RefundInput
		if err := web.Decode(r, &in); err != nil {
			web.Error(w, r, err)
			return
		}
		a, err := s.Refund(r.Context(), caller, r.PathValue("userId"), r.PathValue("awardId"), in)
		if err != nil {
			web.Error(w, r, err)
			return
		}
		respond(w, a, legacy)
	}
}

func respond(w http.ResponseWriter, a Award, legacy bool) {
	if legacy {
		web.JSON(w, http.StatusOK, a.Legacy())
		return
	}
	web.JSON(w, http.StatusOK, a)
}

// handleSet serves PUT /pointawards/{awardId} (admin): sets the award's
// available points; 200 with no body, and no action.
func (s *Service) handleSet(w http.ResponseWriter, r *http.Request) {
	caller := web.CallerOf(r)
	if err := caller.RequireAdmin(); err != nil {
		web.Error(w, r, err)
		return
	}
	var in SetInput
	if err := web.Decode(r, &in); err != nil {
		web.Error(w, r, err)
		return
	}
	if err := s.Set(r.Context(), caller, r.PathValue("awardId"), in); err != nil {
		web.Error(w, r, err)
		return
	}
	w.WriteHeader(http.StatusOK)
}

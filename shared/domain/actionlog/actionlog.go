// Package actionlog serves the actions log (spec: "Actions (shapes)"):
// the tenant's, a user's and a location's actions, newest first, filtered
// and paged, and their export to CSV (an asynchronous job). The actions
// themselves are recorded by every domain through shared/domain/action, in the
// transactions of the changes they record.
package actionlog

import (
	"context"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/loyalty-platform/platform/shared/domain/action"
	"github.com/loyalty-platform/platform/shared/domain/profile"
	"github.com/loyalty-platform/platform/shared/platform/actor"
	"github.com/loyalty-platform/platform/shared/platform/apierr"
	"github.com/loyalty-platform/platform/shared/platform/ddb"
	"github.com/loyalty-platform/platform/shared/platform/job"
	"github.com/loyalty-platform/platform/shared/platform/timefilter"
	"github.com/loyalty-platform/platform/shared/platform/web"
)

// PaymentTypes are the API's payment types (metadata.paymentType of
// transaction actions).
var PaymentTypes = []string{
	"CASH_AT_POS", "CARD_AT_POS", "GIFT_CARD_AT_POS", "OTHER_AT_POS", "APPLE_PAY", "GOOGLE_PAY", "WALLET_A_PAY", "WALLET_B_PAY", "CARD_ON_FILE",
	"CARD_TENDERED", "GIFT_CARD", "CARDHOLDER_PRESENT", "CASH", "CARD", "OTHER", "APP", "PAY_BY_BANK",
}

// paymentAliases pairs each wallet payment type with its older name
// (transactions store the name they were sent with, so a filter on one
// matches both).
var paymentAliases = map[string]string{
	"APPLE_PAY": "WALLET_A_PAY", "WALLET_A_PAY": "APPLE_PAY",
	"GOOGLE_PAY": "WALLET_B_PAY", "WALLET_B_PAY": "GOOGLE_PAY",
}

// withAliases returns types plus the alias of each wallet type in it.
func withAliases(types []string) []string {
	out := types
	for _, t := range types {
		if a, ok := paymentAliases[t]; ok && !slices.Contains(out, a) {
			out = append(out, a)
		}
	}
	return out
}

// Owners finds the users holding an e-mail address or mobile number (the
// credentialId filter).
type Owners interface {
	Owners(ctx context.Context, tenantID, credential string) ([]string, error)
}

// Users finds users (a user's list of an unknown or deleted user is 404).
type Users interface {
	Get(ctx context.Context, tenantID, userID string) (profile.Profile, error)
}

// Locations finds locations (a location's list of an unknown location, or
// of another tenant's, is 404).
type Locations interface {
	// Exists reports whether the tenant has the location (one GetItem).
	Exists(ctx context.Context, tenantID, locationID string) (bool, error)
}

// errLocationNotFound answers a location's list of an unknown location.
var errLocationNotFound = apierr.New(apierr.NotFound, "location not found")

// Service serves the actions log.
type Service struct {
	Actions   *action.Recorder
	Cursor    ddb.Cursor
	Owners    Owners
	Users     Users
	Locations Locations
	Jobs      *job.Service
	// ExportPage is how many actions an export writes per commit (0:
	// 1,000).
	ExportPage int
}

// Operation namespace and name of the actions export.
const (
	Namespace  = "actions"
	NameExport = "export"
)

// Routes returns the routes of the actions function.
func (s *Service) Routes() []web.Route {
	return []web.Route{
		{Method: "GET", Path: "/actions", Access: web.Admin, Handler: web.Serve(http.StatusOK, s.handleTenant)},
		{Method: "GET", Path: "/users/{userId}/actions", Access: web.Self, Handler: web.Serve(http.StatusOK, s.handleUser)},
		{Method: "GET", Path: "/locations/{locationId}/actions", Access: web.Admin, Handler: web.Serve(http.StatusOK, s.handleLocation)},
		{Method: "POST", Path: "/actions/exports", Access: web.Admin, Handler: web.Serve(http.StatusAccepted, s.handleExport)},
		{Method: "GET", Path: "/actions/exports/{fileId}", Access: web.Admin, Handler: s.Jobs.FileHandler(Namespace, NameExport)},
	}
}

// Kinds returns the job kinds of the actions log, for job.Service.Kinds.
func (s *Service) Kinds() map[string]job.Kind {
	return map[string]job.Kind{job.KindKey(Namespace, NameExport): exportKind{s}}
}

// List is the body of the action lists.
type List struct {
	Actions []action.Action `json:"actions"`
	Page    web.Page        `json:"page"`
}

// typePattern is an action type (UPPER_SNAKE_CASE), compiled on first use
// so that a cold start does not pay for it.
var typePattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Z][A-Z0-9]*(_[A-Z0-9]+)*$`) })

// filterOf reads the filters every list takes: when.timestamp[.op],
// type[.in|.nin] and paymentType[.in|.nin] (comma lists; the bare name is
// in).
func filterOf(r *http.Request) (action.Filter, error) {
	var f action.Filter
	var err error
	if f.Time, err = timefilter.Parse(r, "when.timestamp"); err != nil {
		return f, err
	}
	for _, p := range []struct {
		name        string
		in, nin     *[]string
		allowed     []string
		description string
	}{
		{"type", &f.Types, &f.NotTypes, nil, "UPPER_SNAKE action types"},
		{"paymentType", &f.PaymentTypes, &f.NotPaymentTypes, PaymentTypes, "payment types"},
	} {
		*p.in = append(web.ListParam(r, p.name), web.ListParam(r, p.name+".in")...)
		*p.nin = web.ListParam(r, p.name+".nin")
		for _, v := range slices.Concat(*p.in, *p.nin) {
			ok := typePattern().MatchString(v) && len(v) <= 64
			if p.allowed != nil {
				ok = slices.Contains(p.allowed, v)
			}
			if !ok {
				return f, apierr.Invalid(p.name, "%q is not one of the %s", v, p.description)
			}
		}
	}
	f.PaymentTypes, f.NotPaymentTypes = withAliases(f.PaymentTypes), withAliases(f.NotPaymentTypes)
	return f, nil
}

// scopeKey names a list query for its paging keys: the path and every
// parameter but the paging ones.
func scopeKey(r *http.Request) string {
	q := r.URL.Query()
	q.Del("startKey")
	q.Del("limit")
	return r.URL.Path + "?" + q.Encode()
}

// list answers one list.
func (s *Service) list(r *http.Request, tenantID string, scope action.Scope, f action.Filter) (List, error) {
	if _, err := web.APIVersion(r); err != nil {
		return List{}, err
	}
	limit, startKey, err := web.Paging(r)
	if err != nil {
		return List{}, err
	}
	key := scopeKey(r)
	start, err := s.Cursor.Decode(tenantID, key, startKey)
	if err != nil {
		return List{}, err
	}
	items, next, err := s.Actions.List(r.Context(), tenantID, scope, f, start, limit)
	if err != nil {
		return List{}, err
	}
	nk, err := s.Cursor.Encode(tenantID, key, next)
	if err != nil {
		return List{}, err
	}
	if items == nil {
		items = []action.Action{}
	}
	return List{Actions: items, Page: web.Page{Limit: limit, Count: len(items), StartKey: startKey, NextKey: nk}}, nil
}

// handleTenant serves GET /actions (admin): the tenant's actions, newest
// first; `locationId` (comma list) keeps those locations' actions,
// `credentialId` (a full e-mail address or mobile number) its owner's.
func (s *Service) handleTenant(r *http.Request, a actor.Actor) (List, error) {
	f, err := filterOf(r)
	if err != nil {
		return List{}, err
	}
	var scope action.Scope
	locs := web.ListParam(r, "locationId")
	if len(locs) > 50 {
		return List{}, apierr.Invalid("locationId", "at most 50 locations")
	}
	for _, l := range locs {
		if !web.ValidID(l) {
			return List{}, apierr.Invalid("locationId", "%q is not a location id", l)
		}
	}
	if cred := strings.TrimSpace(r.URL.Query().Get("credentialId")); cred != "" {
		owners, err := s.Owners.Owners(r.Context(), a.TenantID, cred)
		if err != nil {
			return List{}, err
		}
		if len(owners) == 0 {
			return empty(r)
		}
		// An e-mail address and a mobile number are never the same
		// identifier: one owner at most.
		scope.UserID = owners[0]
		f.LocationIDs = locs
	} else if len(locs) > 0 {
		scope.LocationIDs = locs
	}
	return s.list(r, a.TenantID, scope, f)
}

// empty answers an empty first page.
func empty(r *http.Request) (List, error) {
	limit, _, err := web.Paging(r)
	if err != nil {
		return List{}, err
	}
	return List{Actions: []action.Action{}, Page: web.Page{Limit: limit}}, nil
}

// handleUser serves GET /users/{userId}/actions (the user or an admin;
// another user's list, or an unknown user's, is 404): the user's actions,
// newest first.
func (s *Service) handleUser(r *http.Request, a actor.Actor) (List, error) {
	userID := r.PathValue("userId")
	if _, err := s.Users.Get(r.Context(), a.TenantID, userID); err != nil {
		return List{}, err
	}
	f, err := filterOf(r)
	if err != nil {
		return List{}, err
	}
	return s.list(r, a.TenantID, action.Scope{UserID: userID}, f)
}

// handleLocation serves GET /locations/{locationId}/actions (admin): the
// location's actions, newest first. An unknown location, or another
// tenant's, is 404 (one GetItem of the location), as the location itself
// is.
func (s *Service) handleLocation(r *http.Request, a actor.Actor) (List, error) {
	id := r.PathValue("locationId")
	if !web.ValidID(id) {
		return List{}, errLocationNotFound
	}
	if err := s.locationExists(r.Context(), a.TenantID, id); err != nil {
		return List{}, err
	}
	f, err := filterOf(r)
	if err != nil {
		return List{}, err
	}
	return s.list(r, a.TenantID, action.Scope{LocationIDs: []string{id}}, f)
}

// locationExists is nil for a location of the tenant, else 404 (or the
// read's error).
func (s *Service) locationExists(ctx context.Context, tenantID, id string) error {
	if s.Locations == nil {
		return errLocationNotFound
	}
	ok, err := s.Locations.Exists(ctx, tenantID, id)
	if err != nil {
		return fmt.Errorf("location %s: %w", id, err)
	}
	if !ok {
		return errLocationNotFound
	}
	return nil
}

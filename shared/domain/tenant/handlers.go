package tenant

import (
	"context"
	"errors"
	"net/http"

	"github.com/loyalty-platform/platform/shared/domain/action"
	"github.com/loyalty-platform/platform/shared/platform/actor"
	"github.com/loyalty-platform/platform/shared/platform/web"
)

// Routes returns the tenant's own routes (the tenants function): its
// admin reads and changes the tenant's settings. Creating tenants and
// rotating service keys stay operators' direct invocations (Handle).
func (s *Service) Routes() []web.Route {
	return []web.Route{
		{Method: "GET", Path: "/tenant", Access: web.Admin, Handler: web.Serve(http.StatusOK, s.handleGet)},
		{Method: "PUT", Path: "/tenant", Access: web.Admin, Handler: web.Serve(http.StatusOK, s.handleUpdate)},
	}
}

// handleGet serves GET /tenant (admin): 200 with the caller's tenant.
func (s *Service) handleGet(r *http.Request, caller actor.Actor) (View, error) {
	return s.View(r.Context(), caller)
}

// handleUpdate serves PUT /tenant (admin): 200 with the tenant as stored.
func (s *Service) handleUpdate(r *http.Request, caller actor.Actor) (View, error) {
	b, err := web.RequiredBody(r)
	if err != nil {
		return View{}, err
	}
	return s.Update(r.Context(), caller, b)
}

// View returns the caller's tenant as its admin reads it.
func (s *Service) View(ctx context.Context, caller actor.Actor) (View, error) {
	if err := caller.RequireAdmin(); err != nil {
		return View{}, err
	}
	t, err := s.Store.Get(ctx, caller.TenantID)
	if err != nil {
		return View{}, err
	}
	return ViewOf(t), nil
}

// Update changes the caller's tenant (PUT /tenant) with a merge patch of
// its view (see UpdateInput), validated as a whole as on create: a
// refused body changes nothing. A change records a TENANT_UPDATED action
// naming the changed fields, in the change's transaction; a body that
// changes nothing writes and records nothing. An update is written only
// over the version it read, and merged again (up to updateAttempts times
// in all) when another change came between.
func (s *Service) Update(ctx context.Context, caller actor.Actor, body []byte) (View, error) {
	if err := caller.RequireAdmin(); err != nil {
		return View{}, err
	}
	p, err := decodePatch(body)
	if err != nil {
		return View{}, err
	}
	for attempt := 0; attempt < updateAttempts; attempt++ {
		cur, version, err := s.Store.Read(ctx, caller.TenantID)
		if err != nil {
			return View{}, err
		}
		if err := p.readOnly(cur); err != nil {
			return View{}, err
		}
		next, err := p.apply(cur)
		if err != nil {
			return View{}, err
		}
		if err := next.Validate(); err != nil {
			return View{}, err
		}
		fields := changed(cur, next)
		if len(fields) == 0 {
			return ViewOf(cur), nil
		}
		next.Updated = s.Clock.Now()
		items, err := s.Actions.TransactItems(updatedAction(caller, next, fields))
		if err != nil {
			return View{}, err
		}
		err = s.Store.Update(ctx, next, version, items...)
		if errors.Is(err, ErrConcurrent) {
			continue
		}
		if err != nil {
			return View{}, err
		}
		return ViewOf(next), nil
	}
	return View{}, ErrConcurrent
}

// updateAttempts bounds the reads and writes of one update: each failed
// write lost to another change, so five updates sent at once all land.
const updateAttempts = 5

// updatedAction is the TENANT_UPDATED action of a change of t's fields,
// made by caller: metadata fields (names only, never values) and by
// (SERVICE_KEY, or ADMIN with the admin's userId when a user's session
// made it).
func updatedAction(caller actor.Actor, t Tenant, fields []string) action.Action {
	meta := map[string]any{"fields": fields, "by": "SERVICE_KEY"}
	if !caller.Service {
		meta["by"] = "ADMIN"
		if caller.UserID != "" {
			meta["userId"] = caller.UserID
		}
	}
	return action.Action{
		Type: ActionUpdated, TenantID: t.ID,
		When:     action.WhenAt(t.Updated, nil),
		Metadata: meta,
		Context:  action.Context{Tenant: action.TenantRef{ID: t.ID, Title: t.Title}},
	}
}

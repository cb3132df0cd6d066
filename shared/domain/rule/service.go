package rule

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"slices"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/loyalty-platform/platform/shared/domain/audience"
	"github.com/loyalty-platform/platform/shared/domain/perk"
	"github.com/loyalty-platform/platform/shared/platform/actor"
	"github.com/loyalty-platform/platform/shared/platform/apierr"
	"github.com/loyalty-platform/platform/shared/platform/clock"
	"github.com/loyalty-platform/platform/shared/platform/ddb"
	"github.com/loyalty-platform/platform/shared/platform/web"
)

// Routes returns the rule routes of the audiences function.
func (e *Engine) Routes() []web.Route {
	return []web.Route{
		{Method: "POST", Path: "/rules", Access: web.Admin, Handler: web.Serve(http.StatusCreated, e.handleCreate)},
		{Method: "GET", Path: "/rules", Access: web.Admin, Handler: web.Serve(http.StatusOK, e.handleList)},
		{Method: "GET", Path: "/rules/{ruleId}", Access: web.Admin, Handler: web.Serve(http.StatusOK, e.handleGet)},
		{Method: "PUT", Path: "/rules/{ruleId}", Access: web.Admin, Handler: web.Serve(http.StatusOK, e.handleUpdate)},
		{Method: "DELETE", Path: "/rules/{ruleId}", Access: web.Admin, Handler: web.ServeEmpty(http.StatusNoContent, e.handleDelete)},
	}
}

// check validates a definition and that the perks and segments its
// effects name exist (422 naming the effect otherwise).
func (e *Engine) check(ctx context.Context, tenantID string, d *Definition, effects, trigger bool) error {
	if err := d.validate(trigger); err != nil {
		return err
	}
	if !effects {
		return nil
	}
	for i, ef := range d.Effects {
		at := fmt.Sprintf("effects[%d]", i)
		switch ef.Type {
		case GrantPerk:
			if _, err := e.Perks.Find(ctx, tenantID, ef.PerkID); err != nil {
				if errors.Is(err, perk.ErrNotFound) {
					return apierr.Invalid(at+".perkId", "no such perk")
				}
				return err
			}
		default:
			if _, err := e.Audiences.Find(ctx, tenantID, ef.SegmentID); err != nil {
				if errors.Is(err, audience.ErrNotFound) {
					return apierr.Invalid(at+".segmentId", "no such segment")
				}
				return err
			}
		}
	}
	return nil
}

// maxAttempts bounds the retries of an update that lost a race.
const maxAttempts = 10

// backoff sleeps before retry attempt n: a few milliseconds, doubling,
// jittered so that racing updates spread out.
func backoff(ctx context.Context, n int) {
	d := time.Duration(2<<min(n, 6)) * time.Millisecond
	d = d/2 + time.Duration(rand.Int64N(int64(d)))
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}

func refuseNulls(body []byte) error {
	if p := web.Nulls(body); len(p) > 0 {
		return apierr.Invalid(p[0], "cannot be null")
	}
	return nil
}

// Create stores a new rule (POST /rules, admin); `enabled` defaults to
// true.
func (e *Engine) Create(ctx context.Context, caller actor.Actor, body []byte) (Rule, error) {
	if err := caller.RequireAdmin(); err != nil {
		return Rule{}, err
	}
	if err := refuseNulls(body); err != nil {
		return Rule{}, err
	}
	var in Input
	if err := web.DecodeBytes(body, &in); err != nil {
		return Rule{}, err
	}
	if err := e.check(ctx, caller.TenantID, &in.Definition, true, true); err != nil {
		return Rule{}, err
	}
	now := e.Clock.Now()
	r := Rule{ID: perk.NewID(now), TenantID: caller.TenantID, Definition: in.Definition, Enabled: in.Enabled == nil || *in.Enabled,
		Created: clock.Stamp(now), UpdatedAt: clock.Stamp(now)}
	if err := e.st().put(ctx, r, 1); err != nil {
		return Rule{}, fmt.Errorf("create rule: %w", err)
	}
	e.forget(caller.TenantID)
	return r, nil
}

// Get returns a rule (GET /rules/{ruleId}, admin).
func (e *Engine) Get(ctx context.Context, caller actor.Actor, id string) (Rule, error) {
	if err := caller.RequireAdmin(); err != nil {
		return Rule{}, err
	}
	if !web.ValidID(id) {
		return Rule{}, ErrNotFound
	}
	r, _, err := e.st().get(ctx, caller.TenantID, id)
	return r, err
}

// Update changes a rule (PUT /rules/{ruleId}, admin): the fields present
// replace the stored ones (conditions and effects as a whole); read-only
// fields may be sent back unchanged; the result is validated as on create.
func (e *Engine) Update(ctx context.Context, caller actor.Actor, id string, body []byte) (Rule, error) {
	if err := caller.RequireAdmin(); err != nil {
		return Rule{}, err
	}
	if !web.ValidID(id) {
		return Rule{}, ErrNotFound
	}
	if err := refuseNulls(body); err != nil {
		return Rule{}, err
	}
	var in Input
	if err := web.DecodeBytes(body, &in); err != nil {
		return Rule{}, err
	}
	var patch map[string]json.RawMessage
	if err := json.Unmarshal(body, &patch); err != nil || len(patch) == 0 {
		return Rule{}, apierr.Invalid("", "send at least one field to change")
	}
	for attempt := 0; attempt < maxAttempts; attempt++ {
		if attempt > 0 {
			backoff(ctx, attempt)
		}
		cur, version, err := e.st().get(ctx, caller.TenantID, id)
		if err != nil {
			return Rule{}, err
		}
		if err := web.CheckReadOnly(
			web.ReadOnly("_id", in.ID, cur.ID), web.ReadOnly("tenantId", in.TenantID, cur.TenantID),
			web.ReadOnly("created", in.Created, cur.Created), web.ReadOnly("updatedAt", in.UpdatedAt, cur.UpdatedAt),
		); err != nil {
			return Rule{}, err
		}
		next := cur
		if _, ok := patch["title"]; ok {
			next.Title = in.Title
		}
		if _, ok := patch["trigger"]; ok {
			next.Trigger = in.Trigger
		}
		if _, ok := patch["conditions"]; ok {
			next.Conditions = in.Conditions
		}
		if _, ok := patch["effects"]; ok {
			next.Effects = in.Effects
		}
		if in.Enabled != nil {
			next.Enabled = *in.Enabled
		}
		// The perks and segments are checked when the effects change: a
		// rule whose segment was deleted can still be disabled or renamed
		// (its effect on that segment is left out when it runs).
		// So is the trigger: a rule stored before triggers were checked
		// keeps its trigger until it is changed.
		_, changed := patch["effects"]
		_, trigger := patch["trigger"]
		if err := e.check(ctx, caller.TenantID, &next.Definition, changed, trigger); err != nil {
			return Rule{}, err
		}
		next.UpdatedAt = clock.Stamp(e.Clock.Now())
		err = e.st().put(ctx, next, version+1)
		if errors.Is(err, ErrConcurrent) {
			continue
		}
		if err != nil {
			return Rule{}, fmt.Errorf("update rule %s: %w", id, err)
		}
		e.forget(caller.TenantID)
		return next, nil
	}
	return Rule{}, ErrConcurrent
}

// Delete deletes a rule (DELETE /rules/{ruleId}, admin): it no longer
// runs; what it did stays.
func (e *Engine) Delete(ctx context.Context, caller actor.Actor, id string) error {
	if err := caller.RequireAdmin(); err != nil {
		return err
	}
	if !web.ValidID(id) {
		return ErrNotFound
	}
	defer e.forget(caller.TenantID)
	return e.st().delete(ctx, caller.TenantID, id)
}

// List returns a page of the tenant's rules in creation order (GET
// /rules, admin); `trigger` keeps one trigger's.
func (e *Engine) List(ctx context.Context, caller actor.Actor, trigger string, limit int, startKey string) ([]Rule, web.Page, error) {
	if err := caller.RequireAdmin(); err != nil {
		return nil, web.Page{}, err
	}
	if trigger != "" && (len(trigger) > 64 || !typePattern().MatchString(trigger)) {
		return nil, web.Page{}, apierr.Invalid("trigger", "must be an UPPER_SNAKE action type")
	}
	scope := "rules|" + trigger
	start, err := e.Cursor.Decode(caller.TenantID, scope, startKey)
	if err != nil {
		return nil, web.Page{}, err
	}
	keep := func(_ context.Context, items []ddb.Item) ([]ddb.Item, error) {
		if trigger == "" {
			return items, nil
		}
		// A trigger and its short name select the same rules: ?trigger=
		// CHECKIN_CREATED lists the rules stored with CHECKIN, and back.
		return slices.DeleteFunc(items, func(it ddb.Item) bool {
			var rec record
			return attributevalue.UnmarshalMap(it, &rec) != nil || canonical(rec.Trigger) != canonical(trigger)
		}), nil
	}
	items, next, err := ddb.QueryPage(ctx, e.DB, e.st().query(caller.TenantID), start, limit, keep)
	if err != nil {
		return nil, web.Page{}, fmt.Errorf("list rules: %w", err)
	}
	out := make([]Rule, 0, len(items))
	for _, it := range items {
		var rec record
		if err := attributevalue.UnmarshalMap(it, &rec); err != nil {
			return nil, web.Page{}, err
		}
		r, err := rec.rule()
		if err != nil {
			return nil, web.Page{}, err
		}
		out = append(out, r)
	}
	nk, err := e.Cursor.Encode(caller.TenantID, scope, next)
	if err != nil {
		return nil, web.Page{}, err
	}
	return out, web.Page{Limit: limit, Count: len(out), StartKey: startKey, NextKey: nk}, nil
}

// RuleList is the body of GET /rules.
type RuleList struct {
	Items []Rule   `json:"items"`
	Page  web.Page `json:"page"`
}

// handleCreate serves POST /rules (admin): 201 with the rule.
func (e *Engine) handleCreate(r *http.Request, caller actor.Actor) (Rule, error) {
	b, err := web.RequiredBody(r)
	if err != nil {
		return Rule{}, err
	}
	return e.Create(r.Context(), caller, b)
}

// handleList serves GET /rules (admin).
func (e *Engine) handleList(r *http.Request, caller actor.Actor) (RuleList, error) {
	limit, start, err := web.Paging(r)
	if err != nil {
		return RuleList{}, err
	}
	items, page, err := e.List(r.Context(), caller, r.URL.Query().Get("trigger"), limit, start)
	return RuleList{Items: items, Page: page}, err
}

// handleGet serves GET /rules/{ruleId} (admin).
func (e *Engine) handleGet(r *http.Request, caller actor.Actor) (Rule, error) {
	return e.Get(r.Context(), caller, r.PathValue("ruleId"))
}

// handleUpdate serves PUT /rules/{ruleId} (admin): 200 with the rule.
func (e *Engine) handleUpdate(r *http.Request, caller actor.Actor) (Rule, error) {
	b, err := web.RequiredBody(r)
	if err != nil {
		return Rule{}, err
	}
	return e.Update(r.Context(), caller, r.PathValue("ruleId"), b)
}

// handleDelete serves DELETE /rules/{ruleId} (admin): 204.
func (e *Engine) handleDelete(r *http.Request, caller actor.Actor) error {
	return e.Delete(r.Context(), caller, r.PathValue("ruleId"))
}

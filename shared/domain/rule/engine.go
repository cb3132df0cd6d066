// Package rule is the rules (the Rule body of the OpenAPI document): a tenant's "when an
// action of this type matches these conditions, do these effects" (grant
// points of a perk, add to or remove from a segment), their CRUD, and the
// engine that runs them on new actions, at most once per (rule, action).
//
// Where rules run: the request that records an action runs the rules on it
// before it answers (the POS, loyalty and audiences functions), so a till
// prints the points an order earned; the rules function reads the Actions
// table's stream and applies whatever a crash or a timeout left out, and
// runs the rules of actions recorded by other functions (check-ins, users).
// Each (rule, action) applies at most once whichever gets there first.
//
// Chains: a rule's effects record their own actions (AWARD_GRANTED,
// SEGMENT_JOINED, ...), which can trigger rules in turn, up to MaxDepth
// levels (the depth travels in the actions' metadata.ruleDepth); a rule
// never runs on an action its own effects recorded. The originating action
// of a chain (the one a request recorded, at depth 0) travels with it too
// (metadata.originActionId and originActionType), so that both paths
// apply each rule at most once per originating action whatever the chain
// (A -> B -> A stops at the second A), and apply at most the tenant's
// rulesBudget of effects for it: beyond, the rest are skipped and one
// RULES_BUDGET_EXCEEDED action says what was left out (see chain).
package rule

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/loyalty-platform/platform/shared/domain/action"
	"github.com/loyalty-platform/platform/shared/domain/audience"
	"github.com/loyalty-platform/platform/shared/domain/award"
	"github.com/loyalty-platform/platform/shared/domain/money"
	"github.com/loyalty-platform/platform/shared/domain/perk"
	"github.com/loyalty-platform/platform/shared/domain/tenant"
	"github.com/loyalty-platform/platform/shared/platform/apierr"
	"github.com/loyalty-platform/platform/shared/platform/clock"
	"github.com/loyalty-platform/platform/shared/platform/ddb"
	"github.com/loyalty-platform/platform/shared/platform/hook"
	"github.com/loyalty-platform/platform/shared/platform/metrics"
)

// MaxDepth bounds a chain of rules: an action recorded by a request is at
// depth 0, the actions of the effects of rules on it at depth 1, and rules
// do not run on actions at depth MaxDepth.
const MaxDepth = 3

// SourceRule is the source of the grants rules make.
const SourceRule = "RULE"

// ChainKeys are the metadata keys that tie an action a rule's effect
// recorded to its chain: the rule, the action it ran on, the depth and the
// originating action. An effect whose change records further actions in
// its transaction (a segment join granting the segment's CLUB perks)
// copies them onto those.
var ChainKeys = []string{"ruleId", "triggerActionId", "ruleDepth", "originActionId", "originActionType"}

// Tenants reads the tenants' settings (the rules budget).
type Tenants interface {
	Get(ctx context.Context, id string) (tenant.Tenant, error)
}

// Perks reads perks.
type Perks interface {
	Find(ctx context.Context, tenantID, id string) (perk.Perk, error)
}

// Engine runs the rules' CRUD and the rules on actions.
type Engine struct {
	DB        ddb.API
	Table     string
	Clock     clock.Clock
	Cursor    ddb.Cursor
	Perks     Perks
	Awards    *award.Service
	Audiences *audience.Service
	Log       *slog.Logger
	// Tenants gives each tenant's rulesBudget (DefaultRulesBudget when
	// nil).
	Tenants Tenants
	// Actions records RULES_BUDGET_EXCEEDED.
	Actions *action.Recorder
	// OnGrant runs inside the transaction of every grant a rule makes.
	OnGrant hook.Hooks[Granted]
	// Cache keeps each tenant's rules in the warm container, checked
	// against the tenant's rules version on every run (see rulesOf), so
	// that a request recording an action reads one small item instead of
	// every rule; nil reads the rules on every run.
	Cache *tenant.Cache
}

// cacheName is the name of a tenant's rules in the Cache.
const cacheName = "rules"

// forget drops a tenant's cached rules after this engine changed them.
func (e *Engine) forget(tenantID string) { e.Cache.Forget(tenantID, cacheName) }

func (e *Engine) st() *store { return &store{db: e.DB, table: e.Table} }

func (e *Engine) log() *slog.Logger {
	if e.Log != nil {
		return e.Log
	}
	return slog.Default()
}

// depthOf is the rule depth of an action (metadata.ruleDepth, 0 without).
func depthOf(a action.Action) int {
	switch v := a.Metadata["ruleDepth"].(type) {
	case float64:
		return int(v)
	case int:
		return v
	}
	return 0
}

// originOf is the originating action of a's chain: the one its
// metadata.originActionId names, else a itself (an action a request
// recorded, or one recorded before origins travelled with chains).
func originOf(a action.Action) (id, typ string) {
	if id, _ := a.Metadata["originActionId"].(string); id != "" {
		typ, _ := a.Metadata["originActionType"].(string)
		return id, typ
	}
	return a.ID, a.Type
}

// Run runs the rules triggered by each action, in order (and, within
// MaxDepth, the rules triggered by the actions their effects record). It
// reads each tenant's rules (or their version, see rulesOf) once per call,
// however many actions it runs. A failure on one action does not stop the
// others: the failures are returned joined. It returns how many actions
// the effects recorded, plus how many rule applications on these actions
// another path (the stream consumer, or the request) committed first:
// either way the records the effects change (an order's pointsEarned) are
// no longer as the request wrote them, and a request that ran it reads
// them again when it is not 0.
func (e *Engine) Run(ctx context.Context, actions ...action.Action) (int, error) {
	loaded := map[string]*ruleSet{}
	chains := map[string]*chain{}
	var order []*chain
	recorded := 0
	var errs []error
	for _, a := range actions {
		if _, ok := loaded[a.TenantID]; !ok && a.ID != "" && a.TenantID != "" && depthOf(a) < MaxDepth {
			all, err := e.rulesOf(ctx, a.TenantID)
			if err != nil {
				errs = append(errs, fmt.Errorf("rules on action %s: %w", a.ID, err))
				continue
			}
			loaded[a.TenantID] = all
		}
		id, typ := originOf(a)
		c, ok := chains[a.TenantID+"#"+id]
		if !ok {
			c = &chain{tenantID: a.TenantID, originID: id, originType: typ, from: a, used: -1}
			chains[a.TenantID+"#"+id] = c
			order = append(order, c)
		}
		if err := e.run(ctx, a, loaded, c); err != nil {
			errs = append(errs, err)
		}
	}
	for _, c := range order {
		if err := e.recordExceeded(ctx, c); err != nil {
			errs = append(errs, err)
		}
		recorded += c.recorded + c.landed
	}
	return recorded, errors.Join(errs...)
}

// run runs the rules on action a of chain c, with the rules of the
// tenants loaded so far (it adds a's tenant's when missing).
func (e *Engine) run(ctx context.Context, a action.Action, loaded map[string]*ruleSet, c *chain) error {
	if a.ID == "" || a.TenantID == "" || depthOf(a) >= MaxDepth || a.Type == ActionBudgetExceeded {
		return nil
	}
	all, ok := loaded[a.TenantID]
	if !ok {
		var err error
		if all, err = e.rulesOf(ctx, a.TenantID); err != nil {
			return fmt.Errorf("rules on action %s: %w", a.ID, err)
		}
		loaded[a.TenantID] = all
	}
	rules := all.on(a.Type)
	if len(rules) == 0 {
		return nil
	}
	doc, err := docOf(a)
	if err != nil {
		return err
	}
	var matched []Rule
	for _, r := range rules {
		if id, _ := a.Metadata["ruleId"].(string); id == r.ID {
			continue // a rule never runs on what it did
		}
		if r.matches(doc) {
			matched = append(matched, r.Rule)
		}
	}
	c.claims = nil
	if len(matched) > 1 && a.Context.User != nil && a.Context.User.ID != "" {
		// The applied markers of every matching rule in one read rather
		// than one each (apply reads a marker itself when it has none).
		ids := make([]string, len(matched))
		for i, r := range matched {
			ids[i] = r.ID
		}
		if c.claims, err = e.st().claims(ctx, a.TenantID, ids, c.originID); err != nil {
			return fmt.Errorf("rules on action %s: %w", a.ID, err)
		}
	}
	var produced []action.Action
	for _, r := range matched {
		acts, err := e.apply(ctx, r, a, c)
		if err != nil {
			return fmt.Errorf("rule %s on action %s: %w", r.ID, a.ID, err)
		}
		produced = append(produced, acts...)
	}
	c.recorded += len(produced)
	for _, p := range produced {
		if err := e.run(ctx, p, loaded, c); err != nil {
			return err
		}
	}
	return nil
}

// Aliases are the short (legacy) trigger names a rule may use for an
// action type.
var Aliases = map[string]string{"CHECKIN": "CHECKIN_CREATED"}

// canonical is the action type a trigger names (its own name, or the type
// of a short name).
func canonical(trigger string) string {
	if to, ok := Aliases[trigger]; ok {
		return to
	}
	return trigger
}

// Triggers tells whether a rule with trigger fires on an action of type
// typ: the same type, or a short name of it (CHECKIN for CHECKIN_CREATED).
func Triggers(trigger, typ string) bool {
	return canonical(trigger) == typ
}

// docOf is an action as the JSON a condition's path reads.
func docOf(a action.Action) (map[string]any, error) {
	b, err := json.Marshal(a)
	if err != nil {
		return nil, err
	}
	var doc map[string]any
	return doc, json.Unmarshal(b, &doc)
}

// apply applies a rule's effects to action a, and returns the actions the
// effects recorded. The effects commit in one transaction with the rule's
// applied marker, or, when they cannot share one (see effectGroups), in
// one transaction per group, each with its own marker. An effect that
// cannot apply (its perk disabled or gone, a CLUB perk the user does not
// hold, a segment gone, a user not in the segment it leaves) is left out
// and logged; the others still apply.
//
// A rule applies at most once per originating action: the applied marker
// of its first group is keyed by (rule, origin) and names the action it
// applied on, and its other groups check that marker names the same action.
// So a rule applied (or being applied) on another action of the same chain
// is skipped, and the groups a crash left out are still applied when the
// stream delivers the same action again.
func (e *Engine) apply(ctx context.Context, r Rule, a action.Action, c *chain) ([]action.Action, error) {
	if a.Context.User == nil || a.Context.User.ID == "" {
		e.log().InfoContext(ctx, "rule skipped: the action names no user", "ruleId", r.ID, "actionId", a.ID)
		return nil, nil
	}
	owner, claimed, err := c.claim(ctx, e, r.ID)
	if err != nil {
		return nil, err
	}
	first := 0
	if claimed {
		if owner != a.ID {
			return nil, nil // applied on another action of the chain
		}
		c.landed++ // group 0 applied on a by another path
		first = 1  // see to the others
	}
	held, err := e.heldThrough(ctx, a.TenantID, r.Effects)
	if err != nil {
		return nil, err
	}
	var produced []action.Action
	for g, effects := range effectGroups(r.Effects, held) {
		if g < first {
			continue
		}
		acts, lost, err := e.applyGroup(ctx, r.ID, g, effects, a, c)
		if err != nil {
			return nil, err
		}
		produced = append(produced, acts...)
		if lost {
			break // another action of the chain has the rule
		}
	}
	return produced, nil
}

// heldThrough returns, for a rule with segment effects, the segment each
// perk its GRANT_PERK effects name is held through (CLUB and LEVEL
// perks), by perk id: such a grant checks the user's membership, which a
// segment effect on that segment writes.
func (e *Engine) heldThrough(ctx context.Context, tenantID string, effects []Effect) (map[string]string, error) {
	if !slices.ContainsFunc(effects, func(ef Effect) bool { return ef.Type != GrantPerk }) {
		return nil, nil
	}
	held := map[string]string{}
	for _, ef := range effects {
		if ef.Type != GrantPerk {
			continue
		}
		p, err := e.Perks.Find(ctx, tenantID, ef.PerkID)
		switch {
		case errors.Is(err, perk.ErrNotFound):
			// left out when the effect applies
		case err != nil:
			return nil, err
		case p.HeldThroughSegment():
			held[ef.PerkID] = p.SegmentID
		}
	}
	return held, nil
}

// effectGroups splits a rule's effects, in order, into groups that can
// each commit in one transaction. DynamoDB refuses a transaction that
// touches one item twice: every grant checks the user's item (and, for an
// action naming an order, updates the order; two grants of one perk
// update one award), a segment effect writes the user's membership, and a
// grant of a perk held through a segment (held, by perk id) checks it. So
// a group holds at most one GRANT_PERK, at most one effect per segment,
// and no grant of a perk held through a segment with an effect on that
// segment. A rule whose effects fit in one group applies in one
// transaction with the marker it always had.
//
// A group's transaction stays below DynamoDB's 100 items: the marker, the
// owner check and the budget (3), one grant (award, two ledger entries,
// its action, the user's and the membership's checks, the order: 7) and at
// most MaxEffects-1 segment effects of 3 + k items each (k the CLUB and
// LEVEL perks held through the segment, one action each), with the
// request's claim: 11 + 9(3 + k) < 100 for k <= 6 (README, "Transactions
// and DynamoDB's 100-item limit"); ddb.Tx refuses a larger one.
func effectGroups(effects []Effect, held map[string]string) [][]Effect {
	groups := [][]Effect{nil}
	grant, segments := false, map[string]bool{}
	for _, ef := range effects {
		seg := ef.SegmentID
		if ef.Type == GrantPerk {
			seg = held[ef.PerkID]
		}
		if (ef.Type == GrantPerk && grant) || (seg != "" && segments[seg]) {
			groups = append(groups, nil)
			grant, segments = false, map[string]bool{}
		}
		cur := &groups[len(groups)-1]
		*cur = append(*cur, ef)
		if ef.Type == GrantPerk {
			grant = true
		}
		if seg != "" {
			segments[seg] = true
		}
	}
	return groups
}

// groupLanded reports whether group g of a rule was applied for c's
// origin: on a (landed) or, for the first group, on another action of the
// chain (lost).
func (e *Engine) groupLanded(ctx context.Context, ruleID string, group int, a action.Action, c *chain) (landed, lost bool, err error) {
	if group > 0 {
		done, err := e.st().applied(ctx, a.TenantID, ruleID, c.originID, group)
		return done, false, err
	}
	owner, claimed, err := e.st().claim(ctx, a.TenantID, ruleID, c.originID)
	if err != nil || !claimed {
		return false, false, err
	}
	return owner == a.ID, owner != a.ID, nil
}

// applyGroup applies group g of a rule's effects to action a in one
// transaction with the group's applied marker, within the budget of a's
// chain c: the effects beyond it are skipped (counted in c). lost is set
// when the rule was applied on another action of the chain (its first
// group's marker names another action).
func (e *Engine) applyGroup(ctx context.Context, ruleID string, group int, effects []Effect, a action.Action, c *chain) (produced []action.Action, lost bool, err error) {
	meta := map[string]any{"ruleId": ruleID, "triggerActionId": a.ID, "ruleDepth": depthOf(a) + 1,
		"originActionId": c.originID, "originActionType": c.originType}
	orderID, _ := a.Metadata["orderId"].(string)
	if orderID != "" {
		meta["orderId"] = orderID
	}
	effects = slices.Clone(effects)
	// A group applied already (the request path got there first, or the
	// stream delivers a record again) is not evaluated again.
	if group > 0 {
		done, err := e.st().applied(ctx, a.TenantID, ruleID, c.originID, group)
		if done {
			c.landed++
		}
		if err != nil || done {
			return nil, false, err
		}
	}
	for attempt := 0; attempt < 8; attempt++ {
		left, err := c.remaining(ctx, e)
		if err != nil {
			return nil, false, err
		}
		if left <= 0 {
			// Spent. The other path may have applied this group between
			// the check above and the budget's read: then it landed, and
			// is not skipped. One not applied now never will be (a spent
			// budget stays spent), so reading its marker after the budget
			// tells which.
			landed, lost, err := e.groupLanded(ctx, ruleID, group, a, c)
			if err != nil || lost {
				return nil, lost, err
			}
			if landed {
				c.landed++
				return nil, false, nil
			}
			c.skip(ruleID, len(effects))
			return nil, false, nil
		}
		now := e.Clock.Now()
		tx := &ddb.Tx{}
		markerAt := tx.Add("rule", e.st().marker(a.TenantID, ruleID, c.originID, a.ID, group, now))
		ownerAt := -1
		if group > 0 {
			ownerAt = tx.Add("rule", e.st().owned(a.TenantID, ruleID, c.originID, a.ID))
		}
		var acts []action.Action
		var checks []func(error) (retry bool, drop bool)
		applied, skipped := 0, 0
		for i, ef := range effects {
			if applied == left {
				skipped = len(effects) - i
				break
			}
			out, check, err := e.addEffect(ctx, tx, ef, a, c, meta, orderID, now)
			if err != nil {
				if isClientError(err) {
					e.log().WarnContext(ctx, "rule effect left out", "ruleId", ruleID, "actionId", a.ID, "effect", ef.Type, "error", err.Error())
					effects = slices.Delete(slices.Clone(effects), i, i+1)
					return e.applyGroup(ctx, ruleID, group, effects, a, c)
				}
				return nil, false, err
			}
			if len(out) > 0 {
				applied++
			}
			acts = append(acts, out...)
			checks = append(checks, check)
		}
		budgetAt := -1
		if applied > 0 {
			budgetAt = tx.Add("rule", e.st().spend(a.TenantID, c.originID, applied, c.budget, now))
		}
		err = tx.Run(ctx, e.DB)
		switch {
		case err == nil:
			granted := 0
			for _, p := range acts {
				if p.Type == award.ActionGranted {
					granted++
				}
			}
			metrics.Count(ctx, a.TenantID, metrics.AwardsGranted, granted)
			c.used += applied
			c.skip(ruleID, skipped)
			return acts, false, nil
		case ddb.Failed(err, ownerAt):
			return nil, true, nil // the rule applies on another action of the chain
		case ddb.Failed(err, markerAt) && group > 0:
			c.landed++
			return nil, false, nil // applied already (the other path got there first)
		case ddb.Failed(err, markerAt):
			// Claimed meanwhile: by the other path on this action (which
			// goes on with the rule's other groups, as this run does, so
			// that each run sees what the budget left out), or on another
			// action of the chain.
			owner, _, err := e.st().claim(ctx, a.TenantID, ruleID, c.originID)
			if err == nil && owner == a.ID {
				c.landed++
			}
			return nil, owner != a.ID, err
		case ddb.Failed(err, budgetAt):
			c.used = -1 // spent by another path meanwhile: read again
			continue
		case ddb.IsTransactionConflict(err):
			continue
		}
		if ddb.CanceledReasons(err) == nil {
			return nil, false, err
		}
		retry := false
		for i, check := range checks {
			r2, drop := check(err)
			if drop {
				e.log().WarnContext(ctx, "rule effect left out", "ruleId", ruleID, "actionId", a.ID, "effect", effects[i].Type)
				effects = slices.Delete(slices.Clone(effects), i, i+1)
				retry = true
				break
			}
			retry = retry || r2
		}
		if !retry {
			return nil, false, err
		}
	}
	return nil, false, apierr.New(apierr.Conflict, "the rule's effects kept losing races; the stream consumer retries")
}

func isClientError(err error) bool {
	e, ok := apierr.As(err)
	return ok && e.Code.Status() < 500
}

// addEffect adds one effect to tx and returns the actions it records and
// how to read a failure of the transaction (retry with a fresh read, or
// drop the effect).
func (e *Engine) addEffect(ctx context.Context, tx *ddb.Tx, ef Effect, a action.Action, c *chain, meta map[string]any, orderID string, now time.Time) ([]action.Action, func(error) (bool, bool), error) {
	title := a.Context.Tenant.Title
	user := a.Context.User
	switch ef.Type {
	case GrantPerk:
		loc := ""
		if a.Context.Location != nil {
			loc = a.Context.Location.ID
		}
		sub, err := c.subject(ctx, e, title, ef.PerkID, user.ID, loc)
		if err != nil {
			return nil, nil, err
		}
		pts := PointsOf(ef, sub.Perk, a)
		if pts.Grant <= 0 {
			return nil, func(error) (bool, bool) { return false, false }, nil
		}
		m := maps.Clone(meta)
		if pts.Clamped {
			m["clamped"], m["pointsComputed"] = true, pts.Computed
		}
		w, err := e.Awards.AddGrant(ctx, tx, sub, pts.Grant, award.GrantOptions{Source: SourceRule, Meta: m}, now)
		if err != nil {
			return nil, nil, err
		}
		// The items the OnGrant hooks add (the order's points earned,
		// conditional on the order as they read it): a failed condition
		// there means the order changed meanwhile (a refund landed), and
		// the group is read and applied again.
		from := tx.Len()
		if err := e.OnGrant.Run(ctx, tx, Granted{TenantID: a.TenantID, UserID: user.ID, OrderID: orderID, AwardID: w.AwardID, Points: w.Granted}); err != nil {
			return nil, nil, err
		}
		to := tx.Len()
		return []action.Action{w.Action}, func(err error) (bool, bool) {
			for i := from; i < to; i++ {
				if ddb.Failed(err, i) {
					return true, false
				}
			}
			retry, out := w.Failure(err)
			if retry {
				return true, false
			}
			return false, out != nil && !errors.Is(out, err)
		}, nil
	case AddToSegment, RemoveFromSegment:
		seg, err := e.Audiences.Find(ctx, a.TenantID, ef.SegmentID)
		if err != nil {
			return nil, nil, err
		}
		p := audience.Person{ID: user.ID, Name: user.Name, PrimaryPlatform: user.PrimaryPlatform}
		if ef.Type == AddToSegment {
			w, err := e.Audiences.AddJoin(ctx, tx, title, seg, p, maps.Clone(meta), now)
			if err != nil {
				return nil, nil, err
			}
			if !w.Changed() {
				return nil, func(error) (bool, bool) { return false, false }, nil
			}
			return w.Actions, func(err error) (bool, bool) { return ddb.Failed(err, w.At), false }, nil
		}
		member, err := e.Audiences.IsMember(ctx, a.TenantID, seg.ID, user.ID)
		if err != nil {
			return nil, nil, err
		}
		if !member {
			return nil, func(error) (bool, bool) { return false, false }, nil
		}
		w, err := e.Audiences.AddLeave(ctx, tx, title, seg, p, audience.ReasonRule, maps.Clone(meta), now)
		if err != nil {
			return nil, nil, err
		}
		return []action.Action{w.Action}, func(err error) (bool, bool) { return false, ddb.Failed(err, w.At) }, nil
	}
	return nil, nil, fmt.Errorf("unknown effect %q", ef.Type)
}

// MaxEffectPoints is the most points one GRANT_PERK effect grants: an
// effect that computes more (pointsPerUnit of a large order value,
// pointsPerItem of a large basket) grants this many, and its AWARD_GRANTED
// action says so (metadata.clamped, metadata.pointsComputed).
const MaxEffectPoints = 1_000_000_000

// Points is what a GRANT_PERK effect computes on an action.
type Points struct {
	// Grant is the points to grant: 0 to MaxEffectPoints.
	Grant int
	// Clamped is set when the effect computed more than MaxEffectPoints;
	// Computed is then the computed value (a decimal integer, or in
	// exponent form beyond 1e21), which may not fit an int.
	Clamped  bool
	Computed string
}

// PointsFor returns the points a GRANT_PERK effect grants on action a:
// points; pointsPerUnit times the order value (metadata.value, else
// metadata.totalPrice, else metadata.amount), rounded down; or
// pointsPerItem times the number of basket items (metadata.basket, each
// counted by its quantity) that match the perk's basketQualification (by
// id for ITEM and CHILD scopes, by category for CATEGORY, either for
// ITEM_OR_CATEGORY; every item without a qualification or for BASKET).
// The result is at most MaxEffectPoints (see PointsOf for the value
// computed before the clamp).
func PointsFor(ef Effect, p perk.Perk, a action.Action) int {
	return PointsOf(ef, p, a).Grant
}

// PointsOf is PointsFor with the value computed before the clamp. The
// computation is in float64 and clamped before it is converted, so no
// order value or basket overflows an int.
func PointsOf(ef Effect, p perk.Perk, a action.Action) Points {
	var x float64
	switch {
	case ef.Points != nil:
		x = float64(*ef.Points)
	case ef.PointsPerUnit != nil:
		// Exact: the order value is a decimal amount (money.FromAny), so
		// 1.5 per unit on 9.99 is 14 with no float rounding.
		for _, k := range []string{"value", "totalPrice", "amount"} {
			if amt, ok := money.FromAny(a.Metadata[k]); ok {
				// Exact and rounded down; at most math.MaxInt, clamped
				// below.
				x = float64(amt.MulFloor(*ef.PointsPerUnit))
				break
			}
			if f, ok := number(a.Metadata[k]); ok {
				// A value no amount can hold (only the stream delivers
				// such an action): computed in float64, clamped below.
				x = math.Floor(f**ef.PointsPerUnit + 1e-9)
				break
			}
		}
	case ef.PointsPerItem != nil:
		x = matchingItems(p, a.Metadata["basket"]) * float64(*ef.PointsPerItem)
	}
	switch {
	case math.IsNaN(x) || x <= 0:
		return Points{}
	case x > MaxEffectPoints:
		computed := strconv.FormatFloat(x, 'f', -1, 64)
		if x >= 1e21 {
			computed = strconv.FormatFloat(x, 'g', -1, 64)
		}
		return Points{Grant: MaxEffectPoints, Clamped: true, Computed: computed}
	}
	return Points{Grant: int(x)}
}

func number(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, true
	case int:
		return float64(x), true
	case json.Number:
		f, err := x.Float64()
		return f, err == nil
	}
	return 0, false
}

// matchingItems counts the basket's items that match the perk's
// basketQualification, by quantity (a float64: a basket delivered by the
// stream is not bounded by the POS's limits).
func matchingItems(p perk.Perk, basket any) float64 {
	items, _ := basket.([]any)
	bq := p.BasketQualification
	codes := bq.Codes()
	scope := ""
	if bq != nil && bq.Scope != nil {
		scope = *bq.Scope
	}
	n := 0.0
	for _, it := range items {
		m, _ := it.(map[string]any)
		id, _ := m["id"].(string)
		cat, _ := m["category"].(string)
		q := 1.0
		if x, ok := number(m["quantity"]); ok && x >= 1 {
			q = math.Floor(x)
		}
		match := len(codes) == 0 || scope == "BASKET"
		switch {
		case match:
		case scope == "CATEGORY":
			match = slices.Contains(codes, cat)
		case scope == "ITEM_OR_CATEGORY":
			match = slices.Contains(codes, id) || slices.Contains(codes, cat)
		default: // ITEM, CHILD_ITEM, ITEM_AND_CHILD_ITEM, or no scope
			match = slices.Contains(codes, id)
		}
		if match {
			n += q
		}
	}
	return n
}

// Matches reports whether every condition holds on an action (as the JSON
// docOf makes of it).
func Matches(conds []Condition, doc map[string]any) bool {
	for _, c := range conds {
		if !holdsValue(c, decodeValue(c.Value), doc) {
			return false
		}
	}
	return true
}

func lookup(doc map[string]any, path string) (any, bool) {
	var cur any = doc
	for _, seg := range strings.Split(path, ".") {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = m[seg]; !ok {
			return nil, false
		}
	}
	return cur, true
}

// holdsValue reports whether condition c, whose value decodes to want,
// holds on doc.
func holdsValue(c Condition, want any, doc map[string]any) bool {
	got, present := lookup(doc, c.Path)
	switch c.Operator {
	case "EXISTS":
		if b, ok := want.(bool); ok && !b {
			return !present || got == nil
		}
		return present && got != nil
	case "EQ":
		return present && equal(got, want)
	case "NEQ":
		return !present || !equal(got, want)
	case "GT", "GTE", "LT", "LTE":
		if !present {
			return false
		}
		cmp, ok := compare(got, want)
		if !ok {
			return false
		}
		switch c.Operator {
		case "GT":
			return cmp > 0
		case "GTE":
			return cmp >= 0
		case "LT":
			return cmp < 0
		}
		return cmp <= 0
	case "IN", "NIN":
		list, _ := want.([]any)
		in := false
		for _, w := range list {
			if present && equal(got, w) {
				in = true
				break
			}
		}
		return in == (c.Operator == "IN")
	case "CONTAINS":
		switch g := got.(type) {
		case []any:
			for _, x := range g {
				if equal(x, want) {
					return true
				}
			}
		case string:
			w, ok := want.(string)
			return ok && strings.Contains(g, w)
		}
		return false
	}
	return false
}

func equal(a, b any) bool {
	if x, ok := number(a); ok {
		y, ok := number(b)
		return ok && x == y
	}
	return reflect.DeepEqual(a, b)
}

func compare(a, b any) (int, bool) {
	if x, ok := number(a); ok {
		y, ok := number(b)
		if !ok {
			return 0, false
		}
		switch {
		case x < y:
			return -1, true
		case x > y:
			return 1, true
		}
		return 0, true
	}
	x, ok1 := a.(string)
	y, ok2 := b.(string)
	if !ok1 || !ok2 {
		return 0, false
	}
	return strings.Compare(x, y), true
}

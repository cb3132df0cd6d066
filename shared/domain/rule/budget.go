package rule

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/loyalty-platform/platform/shared/domain/action"
	"github.com/loyalty-platform/platform/shared/domain/award"
	"github.com/loyalty-platform/platform/shared/domain/tenant"
	"github.com/loyalty-platform/platform/shared/platform/ddb"
)

// chain is what one run (a request's Run, a stream record) knows of the
// chain of rules of one originating action: the tenant's budget of
// effects for it, how many were applied (by any path: the count is kept
// on the origin's budget item, see store.go), and what this run skipped
// because the budget was spent.
type chain struct {
	tenantID, originID, originType string
	// recorded counts the actions the chain's effects recorded in this
	// run.
	recorded int
	// landed counts the rule applications on this run's actions that
	// another path (the stream consumer, or the request) committed first.
	landed int
	// from is the first action of the chain this run saw: the
	// RULES_BUDGET_EXCEEDED action concerns its user and location.
	from action.Action
	// budget is the tenant's rulesBudget (0 until read).
	budget int
	// used is the effects applied for the origin as last read and counted
	// since (-1: read it).
	used int
	// skipped counts the effects skipped for the budget; skippedRules
	// names their rules, in the order they were skipped.
	skipped      int
	skippedRules []string
	// claims are the applied markers of the rules about to apply, read
	// together (see store.claims); each is used once, then read again.
	claims map[string]claimed
	// subjects are the perks, users and locations of the run's grants
	// (award.Service.Load), by perk, user and location: the grants of
	// several rules to one user read them once. The grant's transaction
	// checks the user and the membership again.
	subjects map[string]award.Subject
}

// claim returns the applied marker of a rule's first group in the chain:
// the one read with the others when there is one, else read now.
func (c *chain) claim(ctx context.Context, e *Engine, ruleID string) (owner string, ok bool, err error) {
	if cl, found := c.claims[ruleID]; found {
		delete(c.claims, ruleID)
		return cl.owner, cl.ok, nil
	}
	return e.st().claim(ctx, c.tenantID, ruleID, c.originID)
}

// subject loads what a grant of perkID to userID at loc needs (the
// tenant's when loc is unknown), once per run.
func (c *chain) subject(ctx context.Context, e *Engine, title, perkID, userID, loc string) (award.Subject, error) {
	k := perkID + "#" + userID + "#" + loc
	if sub, ok := c.subjects[k]; ok {
		return sub, nil
	}
	sub, err := e.Awards.Load(ctx, c.tenantID, title, perkID, userID, loc)
	if errors.Is(err, award.ErrUnknownLocation) {
		sub, err = e.Awards.Load(ctx, c.tenantID, title, perkID, userID, "")
	}
	if err != nil {
		return award.Subject{}, err
	}
	if c.subjects == nil {
		c.subjects = map[string]award.Subject{}
	}
	c.subjects[k] = sub
	return sub, nil
}

// remaining is how many effects the chain may still apply.
func (c *chain) remaining(ctx context.Context, e *Engine) (int, error) {
	if c.budget == 0 {
		c.budget = tenant.DefaultRulesBudget
		if e.Tenants != nil {
			t, err := e.Tenants.Get(ctx, c.tenantID)
			switch {
			case errors.Is(err, tenant.ErrNotFound):
			case err != nil:
				return 0, fmt.Errorf("rules budget of %s: %w", c.tenantID, err)
			default:
				c.budget = t.Settings.RulesBudgetOrDefault()
			}
		}
	}
	if c.used < 0 {
		used, _, err := e.st().budgetUsed(ctx, c.tenantID, c.originID)
		if err != nil {
			return 0, err
		}
		c.used = used
	}
	return c.budget - c.used, nil
}

// skip counts n effects of rule ruleID skipped for the budget.
func (c *chain) skip(ruleID string, n int) {
	if n <= 0 {
		return
	}
	c.skipped += n
	if !slices.Contains(c.skippedRules, ruleID) {
		c.skippedRules = append(c.skippedRules, ruleID)
	}
}

// recordExceeded records RULES_BUDGET_EXCEEDED for a chain that skipped
// effects, once per originating action whichever path and run skipped
// them first (the origin's budget item names the action). Its metadata
// counts what the run that records it saw.
func (e *Engine) recordExceeded(ctx context.Context, c *chain) error {
	if c.skipped == 0 {
		return nil
	}
	if e.Actions == nil {
		e.log().WarnContext(ctx, "rules budget exceeded", "originActionId", c.originID, "effectsSkipped", c.skipped)
		return nil
	}
	now := e.Clock.Now()
	a := action.Action{
		ID: action.NewID(), Type: ActionBudgetExceeded, TenantID: c.tenantID,
		When: action.WhenAt(now, nil),
		Metadata: map[string]any{
			"originActionId": c.originID, "originActionType": c.originType, "budget": c.budget,
			"effectsApplied": max(c.used, 0), "effectsSkipped": c.skipped, "ruleIdsSkipped": slices.Clone(c.skippedRules),
		},
		Context: action.Context{Tenant: c.from.Context.Tenant, User: c.from.Context.User, Location: c.from.Context.Location},
	}
	tx := &ddb.Tx{}
	claimAt := tx.Add("rule", e.st().exceeded(c.tenantID, c.originID, a.ID, now))
	if _, err := e.Actions.Record(tx, a); err != nil {
		return fmt.Errorf("record %s for %s: %w", ActionBudgetExceeded, c.originID, err)
	}
	err := tx.Run(ctx, e.DB)
	if ddb.Failed(err, claimAt) {
		return nil // recorded already
	}
	if err != nil {
		return fmt.Errorf("record %s for %s: %w", ActionBudgetExceeded, c.originID, err)
	}
	e.log().WarnContext(ctx, "rules budget exceeded", "originActionId", c.originID, "budget", c.budget, "effectsSkipped", c.skipped, "ruleIdsSkipped", c.skippedRules)
	return nil
}

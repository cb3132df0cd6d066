// Events the rule domain emits. Recorded actions: RULES_BUDGET_EXCEEDED
// (the effects a rule records are the other domains' own actions:
// AWARD_GRANTED, SEGMENT_JOINED, SEGMENT_LEFT, with the chain's metadata,
// ChainKeys). In-transaction hooks (hook.Hooks, registered by a function's
// wiring): Engine.OnGrant, with a Granted, runs inside the transaction of
// every grant a rule makes (the POS domain records on the order the points
// earned on it).

package rule

// ActionBudgetExceeded is recorded once for an originating action whose
// chain of rules reached the tenant's rulesBudget of effects. Metadata:
// originActionId, originActionType, budget, effectsApplied,
// effectsSkipped and ruleIdsSkipped. Rules do not run on it (it is not a
// trigger a rule may name).
const ActionBudgetExceeded = "RULES_BUDGET_EXCEEDED"

// Granted is a rule's grant, as the OnGrant hooks see it: the POS domain
// records on the order the points the rules earned on it.
type Granted struct {
	TenantID string
	UserID   string
	// OrderID is the order the triggering action names (metadata.orderId),
	// or empty.
	OrderID string
	AwardID string
	Points  int
}

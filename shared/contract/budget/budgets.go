// Package budget is the table of storage-call budgets: for each route
// family, the most DynamoDB calls one request may make in a warm function
// (its tenant and service-key caches filled by earlier requests). The test
// of this package sends every route through the real handlers and fails
// when one exceeds its budget.
package budget

// Route is the budget of one route family.
type Route struct {
	// Name is the route and, in brackets, the case (credentials, outcome).
	Name string
	// DynamoDB is the most DynamoDB calls one warm request may make.
	DynamoDB int
	// Cold is how many more calls a request makes in a cold container (its
	// caches empty).
	Cold int
	// Why explains the calls the budget allows.
	Why string
}

// Routes are the budgets, in the order of the README's table. Each Why
// lists the calls of a warm request. A session is read on every request
// made with a token (never cached: a logout or a role change applies at
// once); a tenant and a service key are read only by a cold container, or
// once per tenant.CacheTTL (Cold counts them: the tenant's settings or
// title, and the service key's item).
var Routes = []Route{
	{Name: "GET /users/{id} (user token)", DynamoDB: 2, Cold: 0,
		Why: "the session, the user"},
	{Name: "GET /users/{id} (service key)", DynamoDB: 1, Cold: 2,
		Why: "the user (cold: the key's item and the tenant)"},
	{Name: "GET /users/{id} (admin session)", DynamoDB: 2, Cold: 0,
		Why: "the session, the user"},
	// The per-address allowance and the tenant's message cap are counted
	// by writes of their own before the transaction: inside it, every
	// sign-up of a tenant would contend on the cap's item.
	{Name: "POST /users (sign-up)", DynamoDB: 3, Cold: 1,
		Why: "the address's allowance, the activation code against the tenant's hourly cap, " +
			"one transaction: the user, its credential's uniqueness item, the action"},
	{Name: "POST /users (taken e-mail)", DynamoDB: 4, Cold: 1,
		Why: "the allowance, the cap, the same transaction refused by the credential's condition, the cap's count given back"},
	{Name: "POST /users/activate", DynamoDB: 4, Cold: 1,
		Why: "the credential's owner, the user with its credentials (one query), " +
			"the activation with its action and the verified credential, the session (conditional on the user)"},
	// The throttle counts every attempt before the password is checked and
	// a correct password clears the count; the clear stays a write of its
	// own (inside the session's transaction it made concurrent logins of
	// one identifier conflict).
	{Name: "GET /users/login (Basic)", DynamoDB: 5, Cold: 1,
		Why: "the throttle's count, the credential's owner, the user with its credentials (one query), the session, the throttle's clear"},
	{Name: "POST /users/{id}/checkins", DynamoDB: 4, Cold: 1,
		Why: "the session, the user, the location, the check-in with its action (conditional on an empty slot)"},
	{Name: "POST /users/{id}/checkins (already checked in)", DynamoDB: 4, Cold: 1,
		Why: "the same reads, and the same write refused by its condition (which returns the live check-in)"},
	// Checkout reads the check-in to know where the user is, and the
	// location for the CHECKOUT action's context.
	{Name: "DELETE /users/{id}/checkins (checkout)", DynamoDB: 5, Cold: 1,
		Why: "the session, the user, the check-in, its location, the delete with its action"},
	// Grant and redeem cannot reach 2: the perk (its rules of points) and
	// the user (the action's context) are read before the write. The
	// tenant's rules, which run on the action, come from the container's
	// cache once the tenant's rules version (one GetItem, every request
	// that records actions) says they did not change; its enrichments,
	// which the answer carries, from the cache (read once per window, like
	// the tenant: a cold function adds those queries).
	{Name: "POST /pointperks/{id}/awards (grant)", DynamoDB: 5, Cold: 4,
		Why: "the user, the perk, the award (the grant is clamped to the perk's max), the write with its action, the rules version"},
	{Name: "POST /users/{id}/pointawards/{id}/redeem", DynamoDB: 6, Cold: 3,
		Why: "the session, the user, the perk, the award (its ledger entry carries the balance after), the write with its action and entry, the rules version; the answer is the award as the write left it"},
	// A user naming a location for a perk with a dateTimeRestriction: is
	// the user checked in there (the window's time zone)?
	{Name: "POST /users/{id}/pointawards/{id}/redeem (a user at a location, a perk with a window)", DynamoDB: 8, Cold: 3,
		Why: "the redemption's 6, the location, the user's check-in (is the user there: the location's time zone, else the tenant's)"},
	{Name: "GET /awards", DynamoDB: 5, Cold: 3,
		Why: "the user, the perks, the awards, the segments, the user's memberships; the enrichments from the cache"},
	{Name: "POST /users/{id}/credits", DynamoDB: 4, Cold: 2,
		Why: "the user with its balance and its entry count, the conditional balance change with its ledger entry and action, the rules, the rules version"},
	{Name: "POST /transactions (APP payment)", DynamoDB: 4, Cold: 3,
		Why: "the user, the check-in (a purchase checks out), one transaction (short code, payment, balance with its ledger entry, order, actions), the rules version; the rules from the cache"},
	{Name: "POST /users/{id}/orders", DynamoDB: 3, Cold: 2,
		Why: "the user, the location, the order with its action"},
	{Name: "PUT /orders/{id} (complete)", DynamoDB: 7, Cold: 2,
		Why: "the order, the user, the location, the check-in, the completion with its actions, the rules, the rules version (the order is read again only when they earned points on it)"},
	{Name: "GET /locations", DynamoDB: 2, Cold: 1,
		Why: "the locations' version item, the locations (one batch)"},
	// The actions log is written across 8 shards (so that a tenant's
	// actions are not one hot partition), and the tenant-wide list merges
	// them: one query per shard.
	{Name: "GET /actions", DynamoDB: 8, Cold: 2,
		Why: "one query per shard of the tenant's actions"},
	// The tenant's admin reads the tenant the key already resolved; an
	// update reads it again (strongly consistent, for its version).
	{Name: "GET /tenant (service key)", DynamoDB: 0, Cold: 2,
		Why: "nothing: the tenant is the one the key resolved (cold: the key's item and the tenant)"},
	{Name: "PUT /tenant (service key)", DynamoDB: 2, Cold: 2,
		Why: "the tenant with its version (a consistent read), the conditional update with its TENANT_UPDATED action"},
}

// Find returns the budget named name.
func Find(name string) (Route, bool) {
	for _, r := range Routes {
		if r.Name == name {
			return r, true
		}
	}
	return Route{}, false
}

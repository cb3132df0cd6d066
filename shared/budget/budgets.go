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

// Routes are the budgets, in the order of the README's table.
var Routes = []Route{
	{Name: "GET /users/{id} (user token)", DynamoDB: 99},
	{Name: "GET /users/{id} (service key)", DynamoDB: 99},
	{Name: "GET /users/{id} (admin session)", DynamoDB: 99},
	{Name: "POST /users (sign-up)", DynamoDB: 99},
	{Name: "POST /users (taken e-mail)", DynamoDB: 99},
	{Name: "POST /users/activate", DynamoDB: 99},
	{Name: "GET /users/login (Basic)", DynamoDB: 99},
	{Name: "POST /users/{id}/checkins", DynamoDB: 99},
	{Name: "POST /users/{id}/checkins (already checked in)", DynamoDB: 99},
	{Name: "DELETE /users/{id}/checkins (checkout)", DynamoDB: 99},
	{Name: "POST /pointperks/{id}/awards (grant)", DynamoDB: 99},
	{Name: "POST /users/{id}/pointawards/{id}/redeem", DynamoDB: 99},
	{Name: "GET /awards", DynamoDB: 99},
	{Name: "POST /users/{id}/credits", DynamoDB: 99},
	{Name: "POST /transactions (APP payment)", DynamoDB: 99},
	{Name: "POST /users/{id}/orders", DynamoDB: 99},
	{Name: "PUT /orders/{id} (complete)", DynamoDB: 99},
	{Name: "GET /locations", DynamoDB: 99},
	{Name: "GET /actions", DynamoDB: 99},
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

// Package tenants wires the tenants function. Operators invoke it directly
// to create tenants and rotate their service keys (rotating a key ends the
// admin sessions made from the old one); a tenant's admin reads and changes
// the tenant's settings through it over HTTP (GET and PUT /tenant). Its
// Lambda handler (Handle) tells the two kinds of payload apart.
package tenants

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/aws/aws-lambda-go/events"
	"github.com/loyalty-platform/platform/shared/domain/tenant"
	"github.com/loyalty-platform/platform/shared/platform/web"
	"github.com/loyalty-platform/platform/shared/wire"
)

// Function is what the tenants function runs.
type Function struct {
	Tenants *tenant.Service
	// http serves the function's HTTP API events.
	http wire.LambdaHandler
}

// New builds the tenants function on b.
func New(b *wire.Base) *Function {
	t := &tenant.Service{Store: b.Tenants(), Clock: b.Clock, Actions: b.Actions()}
	sessions := b.Auth()
	t.OnKeyRotated.Add(func(ctx context.Context, e tenant.KeyRotated) error {
		return sessions.EndServiceSessions(ctx, e.TenantID)
	})
	f := &Function{Tenants: t}
	f.http = b.Lambda(f.Routes())
	return f
}

// Routes are the function's routes.
func (f *Function) Routes() []web.Route { return f.Tenants.Routes() }

// Handle is the function's Lambda handler: an API Gateway HTTP API event
// (payload 2.0, told by its routeKey) is served by the routes; any other
// payload is an operator's tenant.Request.
func (f *Function) Handle(ctx context.Context, payload json.RawMessage) (any, error) {
	var probe struct {
		Version  string `json:"version"`
		RouteKey string `json:"routeKey"`
	}
	if err := json.Unmarshal(payload, &probe); err != nil {
		return nil, fmt.Errorf("decode the payload: %w", err)
	}
	if probe.RouteKey != "" {
		var ev events.APIGatewayV2HTTPRequest
		if err := json.Unmarshal(payload, &ev); err != nil {
			return nil, fmt.Errorf("decode the HTTP API event: %w", err)
		}
		return f.http(ctx, ev)
	}
	var req tenant.Request
	if err := json.Unmarshal(payload, &req); err != nil {
		return nil, fmt.Errorf("decode the request: %w", err)
	}
	return f.Tenants.Handle(ctx, req)
}

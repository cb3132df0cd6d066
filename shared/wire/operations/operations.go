// Package operations wires the operations function: GET
// /operations/{operationId} (polling an asynchronous job) and GET
// /openapi.json (the API's OpenAPI document, public).
package operations

import (
	"github.com/loyalty-platform/platform/shared/contract/apidoc"
	"github.com/loyalty-platform/platform/shared/domain/operation"
	"github.com/loyalty-platform/platform/shared/platform/web"
	"github.com/loyalty-platform/platform/shared/wire"
)

// Function is what the operations function runs.
type Function struct {
	Operations *operation.Service
	Docs       *apidoc.Service
}

// New builds the operations function on b.
func New(b *wire.Base) *Function {
	return &Function{Operations: b.Operations(), Docs: &apidoc.Service{}}
}

// Routes are the function's routes.
func (f *Function) Routes() []web.Route {
	return append(f.Operations.Routes(), f.Docs.Routes()...)
}

// Package webhookfanout wires the webhookfanout function, which consumes
// the Actions table's stream: each feed head record's events are logged
// and sent to the FIFO delivery queue once per matching endpoint.
package webhookfanout

import (
	"context"

	"github.com/aws/aws-lambda-go/events"
	"github.com/loyalty-platform/platform/shared/domain/webhook"
	"github.com/loyalty-platform/platform/shared/wire"
	"github.com/loyalty-platform/platform/shared/wire/parts/hooks"
)

// Function is what the webhookfanout function runs.
type Function struct {
	Webhooks *webhook.Service
}

// New builds the webhookfanout function on b.
func New(b *wire.Base) *Function { return &Function{Webhooks: hooks.Service(b)} }

// Handle is the function's handler: a batch of the stream's records.
func (f *Function) Handle(ctx context.Context, ev events.DynamoDBEvent) (events.DynamoDBEventResponse, error) {
	return f.Webhooks.HandleStream(ctx, ev)
}

// Package webhooksender wires the webhooksender function, which consumes
// the FIFO delivery queue: it makes the attempts, records them, and keeps
// a failed message in flight until its next attempt is due.
package webhooksender

import (
	"context"

	"github.com/aws/aws-lambda-go/events"
	"github.com/loyalty-platform/platform/shared/domain/webhook"
	"github.com/loyalty-platform/platform/shared/wire"
	"github.com/loyalty-platform/platform/shared/wire/parts/hooks"
)

// Function is what the webhooksender function runs.
type Function struct {
	Webhooks *webhook.Service
}

// New builds the webhooksender function on b.
func New(b *wire.Base) *Function { return &Function{Webhooks: hooks.Service(b)} }

// Handle is the function's handler: a batch of the queue's messages.
func (f *Function) Handle(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
	return f.Webhooks.HandleQueue(ctx, ev)
}

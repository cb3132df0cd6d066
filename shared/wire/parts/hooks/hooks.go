// Package hooks builds the webhook domain's service for the three
// webhook functions (webhooks, webhookfanout, webhooksender): the
// Webhooks table, the FIFO delivery queue (shared/aws/sqsapi) and the
// outgoing HTTP client that refuses forbidden addresses in AWS.
package hooks

import (
	"github.com/loyalty-platform/platform/shared/aws/sqsapi"
	"github.com/loyalty-platform/platform/shared/domain/webhook"
	"github.com/loyalty-platform/platform/shared/platform/egress"
	"github.com/loyalty-platform/platform/shared/wire"
)

// Service returns the webhook service on b. Under the local stack (make
// run, the tests) http and loopback urls are allowed, so that a receiver
// on the developer's machine gets deliveries; in AWS never.
func Service(b *wire.Base) *webhook.Service {
	local := wire.RunningLocally()
	return &webhook.Service{
		DB: b.DB, Table: b.Config.Tables.Webhooks, Clock: b.Clock, Cursor: b.Cursor,
		Tenants: b.Tenants(), Queue: sqsapi.New(b.AWS), QueueURL: b.Config.WebhookQueueURL, Local: local,
		Client:  egress.NewClient(egress.Options{Local: local, Timeout: webhook.AttemptTimeout, UserAgent: webhook.UserAgent}),
		Actions: b.Actions(), Operations: b.Operations(),
	}
}

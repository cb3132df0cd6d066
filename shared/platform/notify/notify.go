// Package notify describes the platform's outgoing messages: activation,
// reset and verification codes by SMS or e-mail, and push endpoint
// registration. In AWS they go through SNS and SES (package awsnotify,
// linked only by the functions that send); locally and in tests the Outbox
// writes them to the log and keeps them for reading.
package notify

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
)

// Channel is how a message travels.
type Channel string

// The channels.
const (
	SMS   Channel = "SMS"
	Email Channel = "EMAIL"
)

// Message is one outgoing message.
type Message struct {
	TenantID string
	Channel  Channel
	To       string
	Subject  string
	Text     string
}

// Notifier sends messages.
type Notifier interface {
	Send(ctx context.Context, m Message) error
}

// Pusher registers a device token as a push notification endpoint and
// returns the endpoint's id.
type Pusher interface {
	RegisterDevice(ctx context.Context, tenantID, userID, platform, token string) (string, error)
	// UnregisterDevice removes an endpoint made by RegisterDevice.
	UnregisterDevice(ctx context.Context, endpoint string) error
}

// Outbox is the local Notifier and Pusher: it logs each message (the code
// included, since it is a local stand-in) and keeps it for tests.
type Outbox struct {
	Log *slog.Logger
	mu  sync.Mutex
	msg []Message
}

// Send records m.
func (o *Outbox) Send(ctx context.Context, m Message) error {
	o.mu.Lock()
	o.msg = append(o.msg, m)
	o.mu.Unlock()
	if o.Log != nil {
		o.Log.InfoContext(ctx, "outbox message", "tenantId", m.TenantID, "channel", m.Channel, "to", m.To, "subject", m.Subject, "text", m.Text)
	}
	return nil
}

// RegisterDevice returns a local endpoint id for the token.
func (o *Outbox) RegisterDevice(ctx context.Context, tenantID, userID, platform, token string) (string, error) {
	if o.Log != nil {
		o.Log.InfoContext(ctx, "push endpoint registered", "tenantId", tenantID, "userId", userID, "platform", platform)
	}
	return fmt.Sprintf("local:%s:%s:%s", platform, tenantID, userID), nil
}

// UnregisterDevice forgets a local endpoint.
func (o *Outbox) UnregisterDevice(ctx context.Context, endpoint string) error {
	if o.Log != nil {
		o.Log.InfoContext(ctx, "push endpoint removed")
	}
	return nil
}

// Messages returns the messages sent to recipient, oldest first.
func (o *Outbox) Messages(to string) []Message {
	o.mu.Lock()
	defer o.mu.Unlock()
	var out []Message
	for _, m := range o.msg {
		if strings.EqualFold(m.To, to) {
			out = append(out, m)
		}
	}
	return out
}

// Last returns the newest message sent to recipient.
func (o *Outbox) Last(to string) (Message, bool) {
	ms := o.Messages(to)
	if len(ms) == 0 {
		return Message{}, false
	}
	return ms[len(ms)-1], true
}

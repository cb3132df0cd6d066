// Package notify sends the platform's outgoing messages: activation, reset
// and verification codes by SMS or e-mail, and push endpoint registration.
// In AWS they go through SNS (SMS, push) and SES v2 (e-mail); locally and in
// tests the Outbox writes them to the log and keeps them for reading.
package notify

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sesv2"
	sestypes "github.com/aws/aws-sdk-go-v2/service/sesv2/types"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	snstypes "github.com/aws/aws-sdk-go-v2/service/sns/types"
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

// AWS sends SMS through SNS and e-mail through SES v2, and registers push
// endpoints with SNS platform applications.
type AWS struct {
	SNS  *sns.Client
	SES  *sesv2.Client
	From string
	// PlatformApps maps IOS/ANDROID to SNS platform application ARNs.
	PlatformApps map[string]string
}

// Send delivers m.
func (a *AWS) Send(ctx context.Context, m Message) error {
	switch m.Channel {
	case SMS:
		_, err := a.SNS.Publish(ctx, &sns.PublishInput{
			PhoneNumber: aws.String(m.To),
			Message:     aws.String(m.Text),
			MessageAttributes: map[string]snstypes.MessageAttributeValue{
				"AWS.SNS.SMS.SMSType": {DataType: aws.String("String"), StringValue: aws.String("Transactional")},
			},
		})
		if err != nil {
			return fmt.Errorf("send sms: %w", err)
		}
	case Email:
		_, err := a.SES.SendEmail(ctx, &sesv2.SendEmailInput{
			FromEmailAddress: aws.String(a.From),
			Destination:      &sestypes.Destination{ToAddresses: []string{m.To}},
			Content: &sestypes.EmailContent{Simple: &sestypes.Message{
				Subject: &sestypes.Content{Data: aws.String(m.Subject)},
				Body:    &sestypes.Body{Text: &sestypes.Content{Data: aws.String(m.Text)}},
			}},
		})
		if err != nil {
			return fmt.Errorf("send email: %w", err)
		}
	default:
		return fmt.Errorf("send: unknown channel %q", m.Channel)
	}
	return nil
}

// UnregisterDevice deletes an SNS platform endpoint.
func (a *AWS) UnregisterDevice(ctx context.Context, endpoint string) error {
	if !strings.HasPrefix(endpoint, "arn:") {
		return nil
	}
	if _, err := a.SNS.DeleteEndpoint(ctx, &sns.DeleteEndpointInput{EndpointArn: aws.String(endpoint)}); err != nil {
		return fmt.Errorf("delete push endpoint: %w", err)
	}
	return nil
}

// RegisterDevice creates an SNS platform endpoint for the token.
func (a *AWS) RegisterDevice(ctx context.Context, tenantID, userID, platform, token string) (string, error) {
	app := a.PlatformApps[platform]
	if app == "" {
		return "", nil
	}
	out, err := a.SNS.CreatePlatformEndpoint(ctx, &sns.CreatePlatformEndpointInput{
		PlatformApplicationArn: aws.String(app),
		Token:                  aws.String(token),
		CustomUserData:         aws.String(tenantID + "/" + userID),
	})
	if err != nil {
		return "", fmt.Errorf("register push endpoint: %w", err)
	}
	return aws.ToString(out.EndpointArn), nil
}

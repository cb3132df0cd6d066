// Package awsnotify sends the platform's codes and registers push
// endpoints in AWS: SMS and push endpoints through Amazon SNS, e-mail
// through Amazon SES. Only the functions that send or register import it.
package awsnotify

import (
	"context"
	"fmt"
	"strings"

	"github.com/loyalty-platform/platform/shared/aws/sesmail"
	"github.com/loyalty-platform/platform/shared/aws/snsapi"
	"github.com/loyalty-platform/platform/shared/platform/notify"
)

// Push registers push endpoints with SNS platform applications: the
// Pusher of the functions that store device tokens but send no codes.
// SNS is called through snsapi (signed requests rather than the SNS
// client).
type Push struct {
	SNS *snsapi.Client
	// PlatformApps maps IOS/ANDROID to SNS platform application ARNs.
	PlatformApps map[string]string
}

// AWS sends SMS through SNS and e-mail through SES v2 (sesmail: the
// SendEmail API signed here rather than the SES client, 750 KB smaller),
// and registers push endpoints (Push).
type AWS struct {
	*Push
	SES  *sesmail.Sender
	From string
}

// Send delivers m.
func (a *AWS) Send(ctx context.Context, m notify.Message) error {
	switch m.Channel {
	case notify.SMS:
		if err := a.SNS.PublishSMS(ctx, m.To, m.Text); err != nil {
			return fmt.Errorf("send sms: %w", err)
		}
	case notify.Email:
		err := a.SES.Send(ctx, a.From, m.To, m.Subject, m.Text)
		if err != nil {
			return fmt.Errorf("send email: %w", err)
		}
	default:
		return fmt.Errorf("send: unknown channel %q", m.Channel)
	}
	return nil
}

// UnregisterDevice deletes an SNS platform endpoint.
func (a *Push) UnregisterDevice(ctx context.Context, endpoint string) error {
	if !strings.HasPrefix(endpoint, "arn:") {
		return nil
	}
	if err := a.SNS.DeleteEndpoint(ctx, endpoint); err != nil {
		return fmt.Errorf("delete push endpoint: %w", err)
	}
	return nil
}

// RegisterDevice creates an SNS platform endpoint for the token.
func (a *Push) RegisterDevice(ctx context.Context, tenantID, userID, platform, token string) (string, error) {
	app := a.PlatformApps[platform]
	if app == "" {
		return "", nil
	}
	arn, err := a.SNS.CreatePlatformEndpoint(ctx, app, token, tenantID+"/"+userID)
	if err != nil {
		return "", fmt.Errorf("register push endpoint: %w", err)
	}
	return arn, nil
}

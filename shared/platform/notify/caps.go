package notify

import (
	"context"
	"errors"
	"os"
	"strconv"
	"time"

	"github.com/loyalty-platform/platform/shared/platform/allowance"
	"github.com/loyalty-platform/platform/shared/platform/apierr"
	"github.com/loyalty-platform/platform/shared/platform/metrics"
	"github.com/loyalty-platform/platform/shared/platform/web"
)

// Default hourly caps of one tenant's messages (TENANT_SMS_PER_HOUR,
// TENANT_EMAILS_PER_HOUR). They bound what a flood of sign-ups from many
// addresses can cost a tenant (text messages are billed per message, and
// more for some countries) while leaving room for a busy launch day.
const (
	DefaultSMSPerHour    = 500
	DefaultEmailsPerHour = 2000
)

// CapWindow is the window of the tenant caps.
const CapWindow = time.Hour

// Caps bound the messages each tenant may send in each clock hour: at most
// SMSPerHour text messages and EmailsPerHour e-mails (0 or less: no cap).
// A message is counted when it is reserved, before the work that sends it
// writes anything, so a refused request changes nothing.
type Caps struct {
	Counter       *allowance.Counter
	SMSPerHour    int
	EmailsPerHour int
}

// CapsFromEnv reads the caps from TENANT_SMS_PER_HOUR and
// TENANT_EMAILS_PER_HOUR (defaults DefaultSMSPerHour and
// DefaultEmailsPerHour; 0 turns a cap off).
func CapsFromEnv(c *allowance.Counter) *Caps {
	return &Caps{Counter: c,
		SMSPerHour:    count(os.Getenv("TENANT_SMS_PER_HOUR"), DefaultSMSPerHour),
		EmailsPerHour: count(os.Getenv("TENANT_EMAILS_PER_HOUR"), DefaultEmailsPerHour)}
}

// count parses a cap, or returns def when v is not a number >= 0.
func count(v string, def int) int {
	if n, err := strconv.Atoi(v); err == nil && n >= 0 {
		return n
	}
	return def
}

// ErrMessageLimit answers a request that would send a message beyond the
// tenant's hourly cap (429, with Retry-After).
var ErrMessageLimit = apierr.New(apierr.MessageLimitReached, "this application has sent as many codes as it may this hour; try again later")

// Reservation is a message counted against its tenant's cap.
type Reservation struct {
	use allowance.Use
}

// Reserve counts one message of the tenant on channel ch against the cap:
// the operator's (SMSPerHour, EmailsPerHour), or own when the tenant set
// a lower one (own nil: none; 0 refuses every message of the channel).
// Beyond the cap it returns ErrMessageLimit with the time until the hour
// ends, and records the MessagesRefused metric for the tenant.
func (c *Caps) Reserve(ctx context.Context, tenantID string, ch Channel, own *int) (Reservation, error) {
	if c == nil || c.Counter == nil {
		return Reservation{}, nil
	}
	limit := allowance.Limit{Name: "MESSAGES-" + string(ch), Max: c.EmailsPerHour, Window: CapWindow}
	if ch == SMS {
		limit.Max = c.SMSPerHour
	}
	if own != nil && (limit.Max <= 0 || *own < limit.Max) {
		if *own <= 0 {
			metrics.Count(ctx, tenantID, metrics.MessagesRefused, 1)
			e := *ErrMessageLimit
			now := time.Now()
			if c.Counter.Clock != nil {
				now = c.Counter.Clock.Now()
			}
			e.RetryAfter = now.Truncate(CapWindow).Add(CapWindow).Sub(now)
			return Reservation{}, &e
		}
		limit.Max = *own
	}
	use, err := c.Counter.Take(ctx, limit, tenantID)
	var ex *allowance.Exhausted
	if errors.As(err, &ex) {
		metrics.Count(ctx, tenantID, metrics.MessagesRefused, 1)
		web.Logger(ctx).Warn("message cap reached", "tenantId", tenantID, "channel", string(ch), "cap", limit.Max)
		e := *ErrMessageLimit
		e.RetryAfter = ex.RetryAfter
		return Reservation{}, &e
	}
	if err != nil {
		return Reservation{}, err
	}
	return Reservation{use: use}, nil
}

// Cancel gives back a reservation whose message was not sent (the request
// failed before it). Its failure is only logged: the cap then errs on the
// safe side.
func (c *Caps) Cancel(ctx context.Context, r Reservation) {
	if c == nil || c.Counter == nil {
		return
	}
	if err := c.Counter.GiveBack(ctx, r.use); err != nil {
		web.Logger(ctx).Warn("give back message reservation", "error", err.Error())
	}
}

package account

import (
	"context"
	"errors"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/loyalty-platform/platform/shared/domain/tenant"
	"github.com/loyalty-platform/platform/shared/domain/user"
	"github.com/loyalty-platform/platform/shared/platform/actor"
	"github.com/loyalty-platform/platform/shared/platform/allowance"
	"github.com/loyalty-platform/platform/shared/platform/apierr"
	"github.com/loyalty-platform/platform/shared/platform/notify"
	"github.com/loyalty-platform/platform/shared/platform/web"
)

// The calls that need no user session and create a user or a guest or
// send a code (POST /users, POST /guests, an activation code resend, a
// password reset request, adding a credential that gets a verification
// code, an SSO sign-up) count against an allowance per client address
// (API Gateway's source IP; an IPv6 address by its /64): at most
// AnonymousPerMinute such calls a minute, in fixed minutes, across every
// tenant. Beyond it they are 429 TOO_MANY_REQUESTS with Retry-After, and
// nothing is created or sent. Calls of admins (the service key or an admin
// session) are not counted.
const (
	// DefaultAnonymousPerMinute is the allowance unless
	// ANONYMOUS_CALLS_PER_MINUTE says otherwise. Mobile carriers put many
	// phones behind one address (carrier-grade NAT), so it is well above
	// what one person does: raise it where many users sign up from one
	// network at once.
	DefaultAnonymousPerMinute = 60
	// AnonymousWindow is the window of the allowance.
	AnonymousWindow = time.Minute
)

// ErrTooManyRequests answers a call beyond its address's allowance (429,
// with Retry-After).
var ErrTooManyRequests = apierr.New(apierr.TooManyRequests, "too many sign-ups and code requests from this network; try again later")

// AnonymousPerMinuteFromEnv returns ANONYMOUS_CALLS_PER_MINUTE, or
// DefaultAnonymousPerMinute when it is not a number >= 0 (0 turns the
// allowance off).
func AnonymousPerMinuteFromEnv() int {
	if v, err := strconv.Atoi(os.Getenv("ANONYMOUS_CALLS_PER_MINUTE")); err == nil && v >= 0 {
		return v
	}
	return DefaultAnonymousPerMinute
}

// admit counts a call of r against its client address's allowance, unless
// an admin makes it.
func (s *Service) admit(r *http.Request, caller actor.Actor) error {
	if s.Allowance == nil || caller.IsAdmin() {
		return nil
	}
	addr := "unknown"
	if gw, ok := web.GatewayContext(r); ok && gw.HTTP.SourceIP != "" {
		addr = gw.HTTP.SourceIP
	}
	key := allowance.ClientKey(addr)
	_, err := s.Allowance.Take(r.Context(), allowance.Limit{Name: "ANONYMOUS", Max: s.AnonymousPerMinute, Window: AnonymousWindow}, key)
	var ex *allowance.Exhausted
	if errors.As(err, &ex) {
		web.Logger(r.Context()).Warn("anonymous allowance exhausted", "client", key, "path", r.URL.Path)
		e := *ErrTooManyRequests
		e.RetryAfter = ex.RetryAfter
		return &e
	}
	return err
}

// smsCountryRefused is the error of a MOBILE credential outside the
// tenant's SMS countries; field names the request field.
func smsCountryRefused(t tenant.Tenant, field string) error {
	msg := "this application does not send text messages to this country; it accepts mobile numbers starting with " + strings.Join(t.Settings.SMSCountryCodes, ", ")
	if field != "" {
		msg = field + ": " + msg
	}
	return &apierr.Error{Code: apierr.SMSCountryNotAllowed, Message: msg, Field: field}
}

// checkSMSCountry refuses a MOBILE identifier outside the tenant's SMS
// countries (settings.smsCountryCodes).
func checkSMSCountry(t tenant.Tenant, provider, id, field string) error {
	if provider == user.ProviderMobile && !t.Settings.AllowsSMSTo(id) {
		return smsCountryRefused(t, field)
	}
	return nil
}

// reserveCode checks that a code may go to the credential (provider, id)
// of tenant t and counts it against the tenant's hourly cap: a MOBILE
// number outside the tenant's SMS countries is 422, a message beyond the
// cap 429. The caller cancels the reservation if it then sends nothing.
func (s *Service) reserveCode(ctx context.Context, t tenant.Tenant, provider, id, field string) (notify.Reservation, error) {
	if err := checkSMSCountry(t, provider, id, field); err != nil {
		return notify.Reservation{}, err
	}
	own := t.Settings.EmailsPerHour
	if channelOf(provider) == notify.SMS {
		own = t.Settings.SMSPerHour
	}
	return s.Caps.Reserve(ctx, t.ID, channelOf(provider), own)
}

// cancelCode gives back a reservation when err says its code was not sent.
func (s *Service) cancelCode(ctx context.Context, res notify.Reservation, err error) {
	if err != nil {
		s.Caps.Cancel(ctx, res)
	}
}

// channelOf is the channel codes for a credential provider travel by.
func channelOf(provider string) notify.Channel {
	if provider == user.ProviderEmail {
		return notify.Email
	}
	return notify.SMS
}

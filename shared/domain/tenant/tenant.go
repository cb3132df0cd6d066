// Package tenant is the tenant (merchant) domain: tenants, their settings and
// their service keys, the direct-invoke handler operators use to create
// tenants and rotate keys (invoke.go), and the routes a tenant's admin
// reads and changes its settings with (GET and PUT /tenant, handlers.go and
// settings.go).
//
// Every request resolves its tenant (and a service key its tenant), so each
// warm function caches them (Cache, shared by the function's Stores):
// a tenant or a key's lookup is trusted for CacheTTL (30 seconds), an
// unknown id or key for NegativeCacheTTL (5 seconds), at most CacheSize of
// each kind. A settings change or a key rotation therefore applies at once
// in the function that made it and within 30 seconds in the others; a
// rotated key stops earlier in a function that has read the tenant again
// (for its new key, or when its entry expired), since a key is accepted
// only while the tenant item names it.
package tenant

import (
	"net"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/loyalty-platform/platform/shared/domain/action"
	"github.com/loyalty-platform/platform/shared/domain/money"
	"github.com/loyalty-platform/platform/shared/platform/apierr"
)

// Tenant is a merchant using the platform.
type Tenant struct {
	ID       string    `json:"id" dynamodbav:"id"`
	Title    string    `json:"title" dynamodbav:"title"`
	Settings Settings  `json:"settings" dynamodbav:"settings"`
	Created  time.Time `json:"created" dynamodbav:"created"`
	Updated  time.Time `json:"updatedAt" dynamodbav:"updatedAt"`
}

// Settings are a tenant's options.
type Settings struct {
	// InitialPoints is the loyalty point balance of a new user (0 to
	// MaxInitialPoints).
	InitialPoints int `json:"initialPoints" dynamodbav:"initialPoints"`
	// SingleAccountPerDevice limits a device to one account
	// (x-client-platform with uniqueDeviceIdAndroid/uniqueDeviceIdIOS).
	SingleAccountPerDevice bool `json:"singleAccountPerDevice" dynamodbav:"singleAccountPerDevice"`
	// SessionHours is the lifetime of non-permanent sessions (up to
	// MaxSessionHours); 0 means the platform default.
	SessionHours int `json:"sessionHours,omitempty" dynamodbav:"sessionHours,omitempty"`
	// POSEndpoint receives check-in and checkout notifications: an
	// https URL (http only to the machine itself: localhost, 127.0.0.1,
	// ::1), at most MaxURLLength bytes.
	POSEndpoint string `json:"posEndpoint,omitempty" dynamodbav:"posEndpoint,omitempty"`
	// POSSecret signs POS notifications (HMAC-SHA256): MinPOSSecretLength
	// to MaxPOSSecretLength printable ASCII characters. It is write-only
	// over HTTP (GET /tenant tells only whether one is set).
	POSSecret string `json:"posSecret,omitempty" dynamodbav:"posSecret,omitempty"`
	// SSOClientIDs maps an SSO provider (SSOProviders: google, apple) to
	// the client ids accepted as token audiences (1 to MaxSSOClientIDs
	// each, 1 to MaxSSOClientIDLength printable ASCII characters without
	// spaces).
	SSOClientIDs map[string][]string `json:"ssoClientIds,omitempty" dynamodbav:"ssoClientIds,omitempty"`
	// SMSCountryCodes are the country calling codes ("+44", "+1") of the
	// mobile numbers the platform sends text messages to for this tenant:
	// a MOBILE credential with another code is refused wherever it would
	// get a code by SMS. Empty (a tenant created without the setting)
	// allows every country; the tenant's hourly SMS cap still applies.
	SMSCountryCodes []string `json:"smsCountryCodes,omitempty" dynamodbav:"smsCountryCodes,omitempty"`
	// RulesBudget is the most effects the rules apply for one originating
	// action, whatever the chain (MinRulesBudget to MaxRulesBudget);
	// absent means DefaultRulesBudget.
	RulesBudget *int `json:"rulesBudget,omitempty" dynamodbav:"rulesBudget,omitempty"`
	// Currency is the ISO 4217 code of the tenant's money (POS amounts,
	// app balances); empty is GBP. Its minor-unit digits (money.Lookup)
	// are the most decimal places an amount may have. Changing it does not
	// convert amounts already stored.
	Currency string `json:"currency,omitempty" dynamodbav:"currency,omitempty"`
	// Timezone is the IANA name of the tenant's time zone ("Europe/London",
	// "America/New_York"); empty is DefaultTimezone. A perk's
	// dateTimeRestriction is evaluated in it unless the redemption
	// provably happens at a location (see award.Service.Redeem).
	Timezone string `json:"timezone,omitempty" dynamodbav:"timezone,omitempty"`
	// PointsExpiringDays is how many days before a lot of points expires
	// the daily expiry records POINTS_EXPIRING for it (1 to 365); absent
	// means DefaultPointsExpiringDays.
	PointsExpiringDays *int `json:"pointsExpiringDays,omitempty" dynamodbav:"pointsExpiringDays,omitempty"`
	// SMSPerHour and EmailsPerHour are the tenant's own hourly caps of
	// the codes it sends by text message and by e-mail (0 to
	// MaxMessagesPerHour). They only lower the operator's caps
	// (TENANT_SMS_PER_HOUR, TENANT_EMAILS_PER_HOUR): the lower of the two
	// applies; absent means the operator's cap alone.
	SMSPerHour    *int `json:"smsPerHour,omitempty" dynamodbav:"smsPerHour,omitempty"`
	EmailsPerHour *int `json:"emailsPerHour,omitempty" dynamodbav:"emailsPerHour,omitempty"`
	// WebhookEndpoints is how many webhook endpoints the tenant may
	// register (1 to MaxWebhookEndpoints); absent means 10.
	WebhookEndpoints *int `json:"webhookEndpoints,omitempty" dynamodbav:"webhookEndpoints,omitempty"`
}

// MaxWebhookEndpoints bounds a tenant's settings.webhookEndpoints.
const MaxWebhookEndpoints = 100

// MaxMessagesPerHour bounds a tenant's own hourly message caps.
const MaxMessagesPerHour = 1_000_000

// DefaultPointsExpiringDays is the reminder of a tenant without
// settings.pointsExpiringDays.
const DefaultPointsExpiringDays = 30

// ExpiringDaysOrDefault is the tenant's reminder ahead of an expiry, in
// days.
func (s Settings) ExpiringDaysOrDefault() int {
	if s.PointsExpiringDays == nil {
		return DefaultPointsExpiringDays
	}
	return *s.PointsExpiringDays
}

// DefaultTimezone is the time zone of a tenant without settings.timezone.
const DefaultTimezone = "Europe/London"

// TimezoneOrDefault is the IANA name of the tenant's time zone: Timezone,
// or DefaultTimezone when it is not set.
func (s Settings) TimezoneOrDefault() string {
	if s.Timezone == "" {
		return DefaultTimezone
	}
	return s.Timezone
}

// Zone is the tenant's time zone, loaded as actions load a location's
// (action.Zone, from the zone database the action package embeds, so the
// Lambda image needs none).
func (s Settings) Zone() *time.Location { return action.Zone(s.TimezoneOrDefault()) }

// validZone reports whether name is an IANA time zone name (not "Local",
// the machine's zone, which means nothing to a tenant).
func validZone(name string) bool {
	if name == "Local" {
		return false
	}
	_, err := time.LoadLocation(name)
	return err == nil
}

// Bounds of settings.rulesBudget.
const (
	DefaultRulesBudget = 100
	MinRulesBudget     = 1
	MaxRulesBudget     = 1000
)

// RulesBudgetOrDefault is the tenant's rules budget: RulesBudget, or
// DefaultRulesBudget when it is not set.
func (s Settings) RulesBudgetOrDefault() int {
	if s.RulesBudget == nil {
		return DefaultRulesBudget
	}
	return *s.RulesBudget
}

// Money returns the tenant's currency (GBP when the setting is empty).
func (s Settings) Money() (money.Currency, error) { return money.Of(s.Currency) }

// MaxSMSCountryCodes is how many calling codes settings.smsCountryCodes
// may list.
const MaxSMSCountryCodes = 100

// Bounds of the other settings.
const (
	// MaxInitialPoints is the most settings.initialPoints may give a new
	// user (the most points an award holds).
	MaxInitialPoints = 1_000_000_000
	// MaxSessionHours is the longest settings.sessionHours (a year).
	MaxSessionHours = 8760
	// MaxURLLength bounds settings.posEndpoint.
	MaxURLLength = 2048
	// MinPOSSecretLength and MaxPOSSecretLength bound settings.posSecret.
	MinPOSSecretLength = 16
	MaxPOSSecretLength = 256
	// MaxSSOClientIDs is how many client ids one SSO provider may list,
	// and MaxSSOClientIDLength the longest one.
	MaxSSOClientIDs      = 20
	MaxSSOClientIDLength = 255
	// MaxTitleLength bounds a tenant's title.
	MaxTitleLength = 200
)

// SSOProviders are the SSO providers settings.ssoClientIds may name.
var SSOProviders = []string{"google", "apple"}

// callingCodePattern is a country calling code ("+44"), compiled on first
// use so that a cold start does not pay for it.
var callingCodePattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\+[1-9][0-9]{0,3}$`) })

// AllowsSMSTo reports whether a mobile number in E.164 form ("+447700900123")
// may receive text messages under these settings. Country calling codes
// form a prefix code, so a number has exactly one of them as its prefix.
func (s Settings) AllowsSMSTo(number string) bool {
	if len(s.SMSCountryCodes) == 0 {
		return true
	}
	for _, c := range s.SMSCountryCodes {
		if strings.HasPrefix(number, c) {
			return true
		}
	}
	return false
}

// idPattern is compiled on first use: its counted repetition makes it
// the costliest regexp to compile, and every cold start would pay for it.
var idPattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,62}$`) })

// Sentinel errors of the tenant domain.
var (
	ErrNotFound = apierr.New(apierr.NotFound, "tenant not found")
	ErrExists   = apierr.New(apierr.Conflict, "tenant already exists")
	// ErrConcurrent is an update that kept losing to other changes of the
	// same tenant made between its read and its write.
	ErrConcurrent = apierr.New(apierr.Conflict, "the tenant was changed by another request; retry")
)

// ValidID reports whether id is a well-formed tenant id.
func ValidID(id string) bool { return idPattern().MatchString(id) }

// Validate checks a tenant before it is stored.
func (t *Tenant) Validate() error {
	if !ValidID(t.ID) {
		return apierr.Invalid("id", "must be 1-63 lower-case letters, digits or '-'")
	}
	t.Title = strings.TrimSpace(t.Title)
	if t.Title == "" {
		return apierr.Invalid("title", "is required (1 to %d characters)", MaxTitleLength)
	}
	if utf8.RuneCountInString(t.Title) > MaxTitleLength {
		return apierr.Invalid("title", "must be 1 to %d characters", MaxTitleLength)
	}
	if p := t.Settings.InitialPoints; p < 0 || p > MaxInitialPoints {
		return apierr.Invalid("settings.initialPoints", "must be an integer from 0 to %d", MaxInitialPoints)
	}
	if h := t.Settings.SessionHours; h < 0 || h > MaxSessionHours {
		return apierr.Invalid("settings.sessionHours", "must be an integer from 1 to %d (hours a user session lasts; absent means 720)", MaxSessionHours)
	}
	if b := t.Settings.RulesBudget; b != nil && (*b < MinRulesBudget || *b > MaxRulesBudget) {
		return apierr.Invalid("settings.rulesBudget", "must be an integer from %d to %d (the most effects the rules apply for one originating action; absent means %d)", MinRulesBudget, MaxRulesBudget, DefaultRulesBudget)
	}
	for name, v := range map[string]*int{"smsPerHour": t.Settings.SMSPerHour, "emailsPerHour": t.Settings.EmailsPerHour} {
		if v != nil && (*v < 0 || *v > MaxMessagesPerHour) {
			return apierr.Invalid("settings."+name, "must be an integer from 0 to %d (codes an hour; the operator's cap applies when lower; null removes the tenant's own cap)", MaxMessagesPerHour)
		}
	}
	if n := t.Settings.WebhookEndpoints; n != nil && (*n < 1 || *n > MaxWebhookEndpoints) {
		return apierr.Invalid("settings.webhookEndpoints", "must be an integer from 1 to %d (webhook endpoints the tenant may register; absent means 10)", MaxWebhookEndpoints)
	}
	if d := t.Settings.PointsExpiringDays; d != nil && (*d < 1 || *d > 365) {
		return apierr.Invalid("settings.pointsExpiringDays", "must be an integer from 1 to 365 (days before points expire that POINTS_EXPIRING is recorded; absent means %d)", DefaultPointsExpiringDays)
	}
	if len(t.Settings.SMSCountryCodes) > MaxSMSCountryCodes {
		return apierr.Invalid("settings.smsCountryCodes", "must list at most %d calling codes", MaxSMSCountryCodes)
	}
	for i, c := range t.Settings.SMSCountryCodes {
		c = strings.TrimSpace(c)
		if !callingCodePattern().MatchString(c) {
			return apierr.Invalid("settings.smsCountryCodes", "each must be a country calling code such as +44 or +1 (a + and 1 to 4 digits)")
		}
		t.Settings.SMSCountryCodes[i] = c
	}
	t.Settings.Currency = strings.TrimSpace(t.Settings.Currency)
	if err := money.ValidateCode("settings.currency", t.Settings.Currency); err != nil {
		return err
	}
	t.Settings.Timezone = strings.TrimSpace(t.Settings.Timezone)
	if tz := t.Settings.Timezone; tz != "" && !validZone(tz) {
		return apierr.Invalid("settings.timezone", "must be an IANA time zone name such as Europe/London or America/New_York (absent means %s)", DefaultTimezone)
	}
	t.Settings.POSEndpoint = strings.TrimSpace(t.Settings.POSEndpoint)
	if e := t.Settings.POSEndpoint; e != "" && !validEndpoint(e) {
		return apierr.Invalid("settings.posEndpoint", "must be an https URL of at most %d characters (http only to localhost, 127.0.0.1 or ::1), without user name, password or fragment", MaxURLLength)
	}
	if s := t.Settings.POSSecret; s != "" && (len(s) < MinPOSSecretLength || len(s) > MaxPOSSecretLength || !printable(s, true)) {
		return apierr.Invalid("settings.posSecret", "must be %d to %d printable ASCII characters", MinPOSSecretLength, MaxPOSSecretLength)
	}
	return t.Settings.validateSSO()
}

// validateSSO checks settings.ssoClientIds: known providers, each with 1
// to MaxSSOClientIDs distinct client ids. A provider with an empty list
// is removed (it accepts no token either way).
func (s *Settings) validateSSO() error {
	for p, ids := range s.SSOClientIDs {
		if !slices.Contains(SSOProviders, p) {
			return apierr.Invalid("settings.ssoClientIds", "names the providers %s only, not %q", strings.Join(SSOProviders, " and "), clip(p))
		}
		if len(ids) == 0 {
			delete(s.SSOClientIDs, p)
			continue
		}
		field := "settings.ssoClientIds." + p
		if len(ids) > MaxSSOClientIDs {
			return apierr.Invalid(field, "must list at most %d client ids", MaxSSOClientIDs)
		}
		for i, id := range ids {
			if id == "" || len(id) > MaxSSOClientIDLength || !printable(id, false) {
				return apierr.Invalid(field, "each must be 1 to %d printable ASCII characters without spaces (the client id the provider issued)", MaxSSOClientIDLength)
			}
			if slices.Contains(ids[:i], id) {
				return apierr.Invalid(field, "lists %q twice", id)
			}
		}
	}
	if len(s.SSOClientIDs) == 0 {
		s.SSOClientIDs = nil
	}
	return nil
}

// validEndpoint reports whether e is a URL a POS notification may be
// posted to: https, or http to the machine itself (a POS simulator next to
// the local stack); a host; no user info or fragment.
func validEndpoint(e string) bool {
	if len(e) > MaxURLLength || !printable(e, false) {
		return false
	}
	u, err := url.Parse(e)
	if err != nil || u.Host == "" || u.User != nil || u.Fragment != "" || u.Opaque != "" {
		return false
	}
	switch u.Scheme {
	case "https":
		return true
	case "http":
		h := u.Hostname()
		if h == "localhost" {
			return true
		}
		ip := net.ParseIP(h)
		return ip != nil && ip.IsLoopback()
	}
	return false
}

// printable reports whether s is printable ASCII (and, unless spaces,
// holds no space).
func printable(s string, spaces bool) bool {
	for _, r := range s {
		if r > unicode.MaxASCII || !unicode.IsPrint(r) || (r == ' ' && !spaces) {
			return false
		}
	}
	return true
}

// clip shortens s for an error message.
func clip(s string) string {
	if len(s) > 32 {
		return s[:32] + "..."
	}
	return s
}

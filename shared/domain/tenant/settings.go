package tenant

import (
	"encoding/json"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/loyalty-platform/platform/shared/platform/apierr"
	"github.com/loyalty-platform/platform/shared/platform/clock"
	"github.com/loyalty-platform/platform/shared/platform/web"
)

// View is a tenant as its admin reads it (GET /tenant): every setting the
// merchant owns, the POS secret shown only as set or not.
type View struct {
	ID        string       `json:"id"`
	Title     string       `json:"title"`
	Settings  SettingsView `json:"settings"`
	Created   string       `json:"created"`
	UpdatedAt string       `json:"updatedAt"`
}

// SettingsView is Settings without the POS secret, which is write-only:
// POSSecretSet tells whether one is set. A setting that is not set is
// left out (its default applies).
type SettingsView struct {
	InitialPoints          int                 `json:"initialPoints"`
	SingleAccountPerDevice bool                `json:"singleAccountPerDevice"`
	SessionHours           int                 `json:"sessionHours,omitempty"`
	POSEndpoint            string              `json:"posEndpoint,omitempty"`
	POSSecretSet           bool                `json:"posSecretSet"`
	SSOClientIDs           map[string][]string `json:"ssoClientIds,omitempty"`
	SMSCountryCodes        []string            `json:"smsCountryCodes,omitempty"`
	RulesBudget            *int                `json:"rulesBudget,omitempty"`
	Currency               string              `json:"currency,omitempty"`
	Timezone               string              `json:"timezone,omitempty"`
	PointsExpiringDays     *int                `json:"pointsExpiringDays,omitempty"`
	SMSPerHour             *int                `json:"smsPerHour,omitempty"`
	EmailsPerHour          *int                `json:"emailsPerHour,omitempty"`
	WebhookEndpoints       *int                `json:"webhookEndpoints,omitempty"`
}

// ViewOf returns the admin's view of t.
func ViewOf(t Tenant) View {
	s := t.Settings
	return View{
		ID: t.ID, Title: t.Title, Created: clock.Stamp(t.Created), UpdatedAt: clock.Stamp(t.Updated),
		Settings: SettingsView{
			InitialPoints: s.InitialPoints, SingleAccountPerDevice: s.SingleAccountPerDevice, SessionHours: s.SessionHours,
			POSEndpoint: s.POSEndpoint, POSSecretSet: s.POSSecret != "", SSOClientIDs: s.SSOClientIDs,
			SMSCountryCodes: s.SMSCountryCodes, RulesBudget: s.RulesBudget, Currency: s.Currency, Timezone: s.Timezone,
			PointsExpiringDays: s.PointsExpiringDays, SMSPerHour: s.SMSPerHour, EmailsPerHour: s.EmailsPerHour,
			WebhookEndpoints: s.WebhookEndpoints,
		},
	}
}

// UpdateInput is the body of PUT /tenant: a JSON merge patch of the view.
// Title replaces the title; each setting sent replaces the stored one,
// null removes an optional one (its default applies again); ssoClientIds
// is merged per provider the same way. The read-only fields (id, created,
// updatedAt, settings.posSecretSet) may be sent back as GET returned them.
type UpdateInput struct {
	ID        *string         `json:"id"`
	Title     *string         `json:"title"`
	Settings  *SettingsUpdate `json:"settings"`
	Created   *string         `json:"created"`
	UpdatedAt *string         `json:"updatedAt"`
}

// SettingsUpdate holds the settings of an UpdateInput.
type SettingsUpdate struct {
	InitialPoints          *int                `json:"initialPoints"`
	SingleAccountPerDevice *bool               `json:"singleAccountPerDevice"`
	SessionHours           *int                `json:"sessionHours"`
	POSEndpoint            *string             `json:"posEndpoint"`
	POSSecret              *string             `json:"posSecret"`
	POSSecretSet           *bool               `json:"posSecretSet"`
	SSOClientIDs           *SSOClientIDsUpdate `json:"ssoClientIds"`
	SMSCountryCodes        []string            `json:"smsCountryCodes"`
	RulesBudget            *int                `json:"rulesBudget"`
	Currency               *string             `json:"currency"`
	Timezone               *string             `json:"timezone"`
	PointsExpiringDays     *int                `json:"pointsExpiringDays"`
	SMSPerHour             *int                `json:"smsPerHour"`
	EmailsPerHour          *int                `json:"emailsPerHour"`
	WebhookEndpoints       *int                `json:"webhookEndpoints"`
}

// SSOClientIDsUpdate holds the client ids of an update, per provider
// (SSOProviders).
type SSOClientIDsUpdate struct {
	Google []string `json:"google"`
	Apple  []string `json:"apple"`
}

// nullable are the fields of an UpdateInput whose null removes a setting.
var nullable = []string{
	"settings.sessionHours", "settings.posEndpoint", "settings.posSecret", "settings.ssoClientIds",
	"settings.ssoClientIds.google", "settings.ssoClientIds.apple", "settings.smsCountryCodes",
	"settings.rulesBudget", "settings.currency", "settings.timezone", "settings.pointsExpiringDays",
	"settings.smsPerHour", "settings.emailsPerHour", "settings.webhookEndpoints",
}

// patch is a decoded PUT /tenant body: the typed input, and the raw
// fields sent at each level (to tell a null from an absent field).
type patch struct {
	in       UpdateInput
	top      map[string]json.RawMessage
	settings map[string]json.RawMessage
	sso      map[string]json.RawMessage
}

// decodePatch reads a PUT /tenant body strictly: unknown fields, wrong
// types and nulls where no setting can be removed are 422, as are an
// empty body and an empty settings object.
func decodePatch(body []byte) (patch, error) {
	var p patch
	if err := web.DecodeBytes(body, &p.in, web.Nullable(nullable...)); err != nil {
		return patch{}, err
	}
	top, err := web.DecodePatch(body)
	if err != nil {
		return patch{}, err
	}
	p.top = top
	if raw, ok := top["settings"]; ok {
		if err := json.Unmarshal(raw, &p.settings); err != nil {
			return patch{}, apierr.Invalid("settings", "must be an object")
		}
		if len(p.settings) == 0 {
			return patch{}, apierr.Invalid("settings", "send at least one setting to change")
		}
		if raw, ok := p.settings["ssoClientIds"]; ok && !isNull(raw) {
			if err := json.Unmarshal(raw, &p.sso); err != nil {
				return patch{}, apierr.Invalid("settings.ssoClientIds", "must be an object")
			}
		}
	}
	return p, nil
}

func isNull(raw json.RawMessage) bool { return string(raw) == "null" }

// readOnly checks the read-only fields p sent against cur.
func (p patch) readOnly(cur Tenant) error {
	var secretSet *string
	if s := p.in.Settings; s != nil && s.POSSecretSet != nil {
		v := strconv.FormatBool(*s.POSSecretSet)
		secretSet = &v
	}
	return web.CheckReadOnly(
		web.ReadOnly("id", p.in.ID, cur.ID),
		web.ReadOnly("created", p.in.Created, clock.Stamp(cur.Created)),
		web.ReadOnly("updatedAt", p.in.UpdatedAt, clock.Stamp(cur.Updated)),
		web.ReadOnly("settings.posSecretSet", secretSet, strconv.FormatBool(cur.Settings.POSSecret != "")),
	)
}

// apply returns cur with p merged in (not validated yet).
func (p patch) apply(cur Tenant) (Tenant, error) {
	next := cur.clone()
	if p.in.Title != nil {
		next.Title = *p.in.Title
	}
	in := p.in.Settings
	if in == nil {
		return next, nil
	}
	s := &next.Settings
	for name, raw := range p.settings {
		null := isNull(raw)
		switch name {
		case "initialPoints":
			s.InitialPoints = *in.InitialPoints
		case "singleAccountPerDevice":
			s.SingleAccountPerDevice = *in.SingleAccountPerDevice
		case "sessionHours":
			s.SessionHours = 0
			if !null {
				if *in.SessionHours < 1 {
					return Tenant{}, apierr.Invalid("settings.sessionHours", "must be an integer from 1 to %d (hours a user session lasts; null means 720)", MaxSessionHours)
				}
				s.SessionHours = *in.SessionHours
			}
		case "posEndpoint":
			s.POSEndpoint = deref(in.POSEndpoint)
		case "posSecret":
			s.POSSecret = deref(in.POSSecret)
		case "smsCountryCodes":
			s.SMSCountryCodes = nil
			if len(in.SMSCountryCodes) > 0 {
				s.SMSCountryCodes = slices.Clone(in.SMSCountryCodes)
			}
		case "rulesBudget":
			s.RulesBudget = copied(in.RulesBudget)
		case "currency":
			s.Currency = deref(in.Currency)
		case "timezone":
			s.Timezone = deref(in.Timezone)
		case "pointsExpiringDays":
			s.PointsExpiringDays = copied(in.PointsExpiringDays)
		case "smsPerHour":
			s.SMSPerHour = copied(in.SMSPerHour)
		case "emailsPerHour":
			s.EmailsPerHour = copied(in.EmailsPerHour)
		case "webhookEndpoints":
			s.WebhookEndpoints = copied(in.WebhookEndpoints)
		case "ssoClientIds":
			if null {
				s.SSOClientIDs = nil
				continue
			}
			if s.SSOClientIDs == nil {
				s.SSOClientIDs = map[string][]string{}
			}
			for provider, ids := range map[string][]string{"google": in.SSOClientIDs.Google, "apple": in.SSOClientIDs.Apple} {
				if _, sent := p.sso[provider]; sent {
					s.SSOClientIDs[provider] = slices.Clone(ids)
				}
			}
		}
	}
	return next, nil
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func copied(n *int) *int {
	if n == nil {
		return nil
	}
	v := *n
	return &v
}

// changed names the fields of b that differ from a's (title,
// settings.<name>), sorted: the metadata of a TENANT_UPDATED action, which
// never holds a value.
func changed(a, b Tenant) []string {
	var out []string
	if a.Title != b.Title {
		out = append(out, "title")
	}
	va, vb := reflect.ValueOf(a.Settings), reflect.ValueOf(b.Settings)
	st := va.Type()
	for i := range st.NumField() {
		if !reflect.DeepEqual(va.Field(i).Interface(), vb.Field(i).Interface()) {
			name, _, _ := strings.Cut(st.Field(i).Tag.Get("json"), ",")
			out = append(out, "settings."+name)
		}
	}
	slices.Sort(out)
	return out
}

package tenant_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/loyalty-platform/platform/shared/domain/tenant"
	"github.com/loyalty-platform/platform/shared/platform/apierr"
	ts "github.com/loyalty-platform/platform/shared/testkit"
)

// TestSMSCountryCodes sets settings.smsCountryCodes at creation and
// changes it with updateSettings; malformed codes are refused.
func TestSMSCountryCodes(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	ctx := context.Background()
	created, err := h.Deps.Tenants.Handle(ctx, tenant.Request{Action: "create", Title: "Fish Bar", Settings: &tenant.Settings{SMSCountryCodes: []string{" +44", "+1"}}})
	if err != nil {
		t.Fatal(err)
	}
	id := created.Tenant.ID
	get := func() []string {
		t.Helper()
		got, err := h.Deps.Tenants.Handle(ctx, tenant.Request{Action: "get", TenantID: id})
		if err != nil {
			t.Fatal(err)
		}
		return got.Tenant.Settings.SMSCountryCodes
	}
	if got, want := get(), []string{"+44", "+1"}; !slices.Equal(got, want) {
		t.Errorf("after create: smsCountryCodes = %v, want %v", got, want)
	}
	if _, err := h.Deps.Tenants.Handle(ctx, tenant.Request{Action: "updateSettings", TenantID: id, Settings: &tenant.Settings{SMSCountryCodes: []string{"+353"}}}); err != nil {
		t.Fatal(err)
	}
	if got, want := get(), []string{"+353"}; !slices.Equal(got, want) {
		t.Errorf("after updateSettings: smsCountryCodes = %v, want %v", got, want)
	}

	tooMany := make([]string, tenant.MaxSMSCountryCodes+1)
	for i := range tooMany {
		tooMany[i] = "+1"
	}
	tests := []struct {
		name  string
		codes []string
	}{
		{"NoPlus", []string{"44"}},
		{"LeadingZero", []string{"+044"}},
		{"Empty", []string{""}},
		{"TooLong", []string{"+12345"}},
		{"Letters", []string{"+4a"}},
		{"TooMany", tooMany},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for _, req := range []tenant.Request{
				{Action: "create", Title: "x", Settings: &tenant.Settings{SMSCountryCodes: tc.codes}},
				{Action: "updateSettings", TenantID: id, Settings: &tenant.Settings{SMSCountryCodes: tc.codes}},
			} {
				_, err := h.Deps.Tenants.Handle(ctx, req)
				if got := apierr.CodeOf(err); got != apierr.ValidationFailed {
					t.Errorf("%s: code = %v, want VALIDATION_FAILED (err %v)", req.Action, got, err)
				}
			}
		})
	}
}

func TestAllowsSMSTo(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		codes  []string
		number string
		want   bool
	}{
		{"NoSetting", nil, "+33612345678", true},
		{"Listed", []string{"+44", "+1"}, "+447700900123", true},
		{"SecondListed", []string{"+44", "+1"}, "+12025550123", true},
		{"NotListed", []string{"+44", "+1"}, "+33612345678", false},
		{"NationalForm", []string{"+44"}, "07700900123", false},
		{"LongerCode", []string{"+1876"}, "+12025550123", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := (tenant.Settings{SMSCountryCodes: tc.codes}).AllowsSMSTo(tc.number); got != tc.want {
				t.Errorf("AllowsSMSTo(%q) with %v = %v, want %v", tc.number, tc.codes, got, tc.want)
			}
		})
	}
}

// TestRulesBudgetSetting sets settings.rulesBudget at creation and with
// updateSettings (absent reads as the default); values outside 1..1000
// are refused naming the field, and change nothing.
func TestRulesBudgetSetting(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	ctx := context.Background()
	n := func(v int) *int { return &v }
	created, err := h.Deps.Tenants.Handle(ctx, tenant.Request{Action: "create", Title: "Budget Bar", Settings: &tenant.Settings{RulesBudget: n(5)}})
	if err != nil {
		t.Fatal(err)
	}
	id := created.Tenant.ID
	get := func() tenant.Settings {
		t.Helper()
		got, err := h.Deps.Tenants.Handle(ctx, tenant.Request{Action: "get", TenantID: id})
		if err != nil {
			t.Fatal(err)
		}
		return got.Tenant.Settings
	}
	if got := get().RulesBudgetOrDefault(); got != 5 {
		t.Errorf("after create: rulesBudget = %d, want 5", got)
	}
	if _, err := h.Deps.Tenants.Handle(ctx, tenant.Request{Action: "updateSettings", TenantID: id, Settings: &tenant.Settings{RulesBudget: n(1000)}}); err != nil {
		t.Fatal(err)
	}
	if got := get().RulesBudgetOrDefault(); got != 1000 {
		t.Errorf("after updateSettings: rulesBudget = %d, want 1000", got)
	}
	for _, tc := range []struct {
		name  string
		value int
	}{{"Zero", 0}, {"Negative", -1}, {"AboveMax", 1001}} {
		t.Run(tc.name, func(t *testing.T) {
			for _, req := range []tenant.Request{
				{Action: "create", Title: "x", Settings: &tenant.Settings{RulesBudget: n(tc.value)}},
				{Action: "updateSettings", TenantID: id, Settings: &tenant.Settings{RulesBudget: n(tc.value)}},
			} {
				_, err := h.Deps.Tenants.Handle(ctx, req)
				if e, ok := apierr.As(err); !ok || e.Code != apierr.ValidationFailed || !strings.HasPrefix(e.Message, "settings.rulesBudget") {
					t.Errorf("%s: err %v, want VALIDATION_FAILED naming settings.rulesBudget", req.Action, err)
				}
			}
			if got := get().RulesBudgetOrDefault(); got != 1000 {
				t.Errorf("rulesBudget = %d after a refused change, want 1000", got)
			}
		})
	}
	if got := (tenant.Settings{}).RulesBudgetOrDefault(); got != 100 {
		t.Errorf("default rulesBudget = %d, want 100", got)
	}
}

// TestCurrency sets settings.currency at creation and changes it with
// updateSettings; an unknown code is refused, and no setting is GBP.
func TestCurrency(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	ctx := context.Background()
	created, err := h.Deps.Tenants.Handle(ctx, tenant.Request{Action: "create", Title: "Sushi Bar", Settings: &tenant.Settings{Currency: "JPY"}})
	if err != nil {
		t.Fatal(err)
	}
	id := created.Tenant.ID
	if cur, err := created.Tenant.Settings.Money(); err != nil || cur.Code != "JPY" || cur.Digits != 0 {
		t.Errorf("after create: currency = %+v (%v), want JPY with 0 digits", cur, err)
	}
	got, err := h.Deps.Tenants.Handle(ctx, tenant.Request{Action: "updateSettings", TenantID: id, Settings: &tenant.Settings{Currency: " BHD "}})
	if err != nil {
		t.Fatal(err)
	}
	if cur, err := got.Tenant.Settings.Money(); err != nil || cur.Code != "BHD" || cur.Digits != 3 {
		t.Errorf("after updateSettings: currency = %+v (%v), want BHD with 3 digits", cur, err)
	}
	if cur, err := (tenant.Settings{}).Money(); err != nil || cur.Code != "GBP" || cur.Digits != 2 {
		t.Errorf("no setting: currency = %+v (%v), want GBP", cur, err)
	}
	for _, code := range []string{"XXX", "gbp", "POUNDS", "£"} {
		t.Run(code, func(t *testing.T) {
			for _, req := range []tenant.Request{
				{Action: "create", Title: "x", Settings: &tenant.Settings{Currency: code}},
				{Action: "updateSettings", TenantID: id, Settings: &tenant.Settings{Currency: code}},
			} {
				_, err := h.Deps.Tenants.Handle(ctx, req)
				if e, ok := apierr.As(err); !ok || e.Code != apierr.ValidationFailed || e.Field != "settings.currency" {
					t.Errorf("%s: error = %v, want VALIDATION_FAILED naming settings.currency", req.Action, err)
				}
			}
		})
	}
}

// TestTimezone sets settings.timezone at creation and changes it with
// updateSettings; no setting is Europe/London, and a name that is not an
// IANA time zone is refused naming settings.timezone, changing nothing.
func TestTimezone(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	ctx := context.Background()
	created, err := h.Deps.Tenants.Handle(ctx, tenant.Request{Action: "create", Title: "Deli", Settings: &tenant.Settings{Timezone: " America/New_York "}})
	if err != nil {
		t.Fatal(err)
	}
	id := created.Tenant.ID
	if got := created.Tenant.Settings.Timezone; got != "America/New_York" {
		t.Errorf("after create: timezone = %q, want America/New_York", got)
	}
	get := func() tenant.Settings {
		t.Helper()
		got, err := h.Deps.Tenants.Handle(ctx, tenant.Request{Action: "get", TenantID: id})
		if err != nil {
			t.Fatal(err)
		}
		return got.Tenant.Settings
	}
	if _, err := h.Deps.Tenants.Handle(ctx, tenant.Request{Action: "updateSettings", TenantID: id, Settings: &tenant.Settings{Timezone: "Pacific/Kiritimati"}}); err != nil {
		t.Fatal(err)
	}
	if got := get(); got.Timezone != "Pacific/Kiritimati" || got.Zone().String() != "Pacific/Kiritimati" {
		t.Errorf("after updateSettings: timezone = %q (zone %v), want Pacific/Kiritimati", got.Timezone, got.Zone())
	}
	if s := (tenant.Settings{}); s.TimezoneOrDefault() != "Europe/London" || s.Zone().String() != "Europe/London" {
		t.Errorf("no setting: timezone = %q (zone %v), want Europe/London", s.TimezoneOrDefault(), s.Zone())
	}
	for _, tc := range []struct{ name, zone string }{
		{"Unknown", "Mars/Olympus"},
		{"Local", "Local"},
		{"Offset", "+02:00"},
		{"Path", "../../etc/passwd"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, req := range []tenant.Request{
				{Action: "create", Title: "x", Settings: &tenant.Settings{Timezone: tc.zone}},
				{Action: "updateSettings", TenantID: id, Settings: &tenant.Settings{Timezone: tc.zone}},
			} {
				_, err := h.Deps.Tenants.Handle(ctx, req)
				if e, ok := apierr.As(err); !ok || e.Code != apierr.ValidationFailed || e.Field != "settings.timezone" {
					t.Errorf("%s: error = %v, want VALIDATION_FAILED naming settings.timezone", req.Action, err)
				}
			}
			if got := get().Timezone; got != "Pacific/Kiritimati" {
				t.Errorf("timezone = %q after a refused change, want Pacific/Kiritimati", got)
			}
		})
	}
}

package tenant_test

import (
	"context"
	"slices"
	"testing"

	"github.com/loyalty-platform/platform/shared/apierr"
	"github.com/loyalty-platform/platform/shared/tenant"
	ts "github.com/loyalty-platform/platform/shared/testsupport"
)

// TestSMSCountryCodes sets settings.smsCountryCodes at creation and
// changes it with updateSettings; malformed codes are refused.
func TestSMSCountryCodes(t *testing.T) {
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

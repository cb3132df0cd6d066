package actionlog

import (
	"net/http"
	"net/url"
	"testing"

	"github.com/loyalty-platform/platform/shared/platform/apierr"
	"github.com/loyalty-platform/platform/shared/platform/clock"
)

// FuzzFilter: the filters of the action lists (when.timestamp.<op>,
// type, type.in, type.nin, paymentType...) give a filter of well-formed
// values or a 422; never a panic.
func FuzzFilter(f *testing.F) {
	for _, s := range []string{"", "type=CHECKIN_CREATED", "type.in=A_ONE,B_TWO&type.nin=C", "type=lower", "type.in=A__B",
		"paymentType=CARD_AT_POS", "paymentType.nin=BITCOIN", "when.timestamp.gt=2024-05-01T00:00:00Z",
		"when.timestamp.lte=2024-05-01T00:00:00Z&when.timestamp.gt=2025-01-01T00:00:00Z", "when.timestamp=now",
		"type[]=A&type=B,,C"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		if _, err := url.ParseQuery(raw); err != nil {
			return // refused before any handler (web.strictQuery)
		}
		r := &http.Request{URL: &url.URL{Path: "/actions", RawQuery: raw}, Header: http.Header{}}
		flt, err := filterOf(r)
		if err != nil {
			if e, ok := apierr.As(err); !ok || e.Code != apierr.ValidationFailed {
				t.Fatalf("filterOf(%q) = %v, want VALIDATION_FAILED", raw, err)
			}
			return
		}
		for _, v := range append(append(append([]string{}, flt.Types...), flt.NotTypes...), flt.PaymentTypes...) {
			if !typePattern().MatchString(v) || len(v) > 64 {
				t.Fatalf("filterOf(%q): type %q", raw, v)
			}
		}
		for _, c := range flt.Time {
			if len(c.Value) != len(clock.Format) {
				t.Fatalf("filterOf(%q): time %q", raw, c.Value)
			}
		}
		_ = scopeKey(r)
	})
}

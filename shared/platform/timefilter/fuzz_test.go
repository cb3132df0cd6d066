package timefilter_test

import (
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/loyalty-platform/platform/shared/platform/apierr"
	"github.com/loyalty-platform/platform/shared/platform/clock"
	"github.com/loyalty-platform/platform/shared/platform/timefilter"
)

// FuzzParse: any query string gives conditions or a 422 naming the
// parameter; every condition's value is in the fixed-width form (so the
// key conditions compare as instants), parses back to the same instant,
// and the key condition built from the conditions keeps every timestamp
// the conditions hold.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"updatedAt.gt=2024-05-01T12:30:00Z", "updatedAt=2024-05-01T12:30:00.123456789%2B02:00",
		"updatedAt.lte=2024-05-01T00:00:00Z&updatedAt.gt=2024-06-01T00:00:00Z", "updatedAt.neq=2024-05-01T00:00:00Z",
		"updatedAt.gt=yesterday", "updatedAt.gt=0000-01-01T00:00:00%2B01:00", "updatedAt.lte=9999-12-31T23:59:59-01:00",
		"updatedAt.eq=2024-02-30T00:00:00Z", "updatedAt.gt=2024-05-01T24:00:00Z", "updatedAt.in=x",
	} {
		f.Add(s, "2024-05-01T12:30:00.000Z")
	}
	f.Fuzz(func(t *testing.T, raw, probe string) {
		if _, err := url.ParseQuery(raw); err != nil {
			return // refused before any handler (web.strictQuery)
		}
		r := &http.Request{URL: &url.URL{Path: "/x", RawQuery: raw}}
		conds, err := timefilter.Parse(r, "updatedAt")
		if err != nil {
			if e, ok := apierr.As(err); !ok || e.Code != apierr.ValidationFailed || e.Field == "" {
				t.Fatalf("Parse(%q) = %v, want VALIDATION_FAILED naming the parameter", raw, err)
			}
			return
		}
		for _, c := range conds {
			if len(c.Value) != len(clock.Format) {
				t.Fatalf("Parse(%q): value %q is not in the fixed-width form", raw, c.Value)
			}
			back, err := time.Parse(clock.Format, c.Value)
			if err != nil || back.Format(clock.Format) != c.Value {
				t.Fatalf("Parse(%q): value %q does not read back: %v", raw, c.Value, err)
			}
		}
		ts, err := time.Parse(clock.Format, probe)
		if err != nil || ts.Format(clock.Format) != probe {
			return
		}
		values := map[string]types.AttributeValue{}
		cond := timefilter.KeyCondition("sk", conds, values)
		if timefilter.HoldAll(conds, probe) && !keyHolds(cond, values, probe+"#id") {
			t.Fatalf("Parse(%q): %s holds but the key condition %q %v drops %s", raw, probe, cond, values, probe)
		}
	})
}

// keyHolds evaluates the key conditions KeyCondition builds on sort key sk.
func keyHolds(cond string, values map[string]types.AttributeValue, sk string) bool {
	s := func(k string) string { return values[k].(*types.AttributeValueMemberS).Value }
	switch cond {
	case "":
		return true
	case "begins_with(sk, :tfeq)":
		return len(sk) >= len(s(":tfeq")) && sk[:len(s(":tfeq"))] == s(":tfeq")
	case "sk BETWEEN :tflo AND :tfhi":
		return s(":tflo") <= sk && sk <= s(":tfhi")
	case "sk > :tflo":
		return sk > s(":tflo")
	case "sk < :tfhi":
		return sk < s(":tfhi")
	}
	panic("unknown condition " + cond)
}

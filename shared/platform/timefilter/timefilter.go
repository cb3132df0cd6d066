// Package timefilter reads the date-time filters of list endpoints
// (`updatedAt`, `updatedAt.gt`, `when.timestamp.lte`, ...) and turns them
// into the key condition of an index whose sort key starts with the
// platform's fixed-width UTC timestamp (<timestamp>#<id>), so a time filter
// narrows the Query instead of filtering after it.
package timefilter

import (
	"net/http"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/loyalty-platform/platform/shared/platform/apierr"
	"github.com/loyalty-platform/platform/shared/platform/clock"
)

// Ops are the comparisons a filter takes, as parameter suffixes; the bare
// parameter compares eq.
var Ops = []string{"gt", "lte", "eq", "neq"}

// Cond is one condition: Op is gt, lte, eq or neq; Value is the instant in
// the platform's fixed-width form (clock.Format).
type Cond struct {
	Op    string
	Value string
}

// Holds reports whether a timestamp (fixed-width form) meets the condition.
func (c Cond) Holds(ts string) bool {
	switch c.Op {
	case "gt":
		return ts > c.Value
	case "lte":
		return ts <= c.Value
	case "eq":
		return ts == c.Value
	case "neq":
		return ts != c.Value
	}
	return false
}

// HoldAll reports whether a timestamp meets every condition.
func HoldAll(conds []Cond, ts string) bool {
	for _, c := range conds {
		if !c.Holds(ts) {
			return false
		}
	}
	return true
}

// Parse reads name and name.<op> (RFC 3339 date-times; the bare name
// compares eq). A value that does not parse, or that is outside the years
// 0000 to 9999 in UTC, is 422 naming the parameter.
func Parse(r *http.Request, name string) ([]Cond, error) {
	var out []Cond
	q := r.URL.Query()
	for _, op := range append([]string{""}, Ops...) {
		key := name
		if op != "" {
			key += "." + op
		}
		for _, v := range q[key] {
			t, err := time.Parse(time.RFC3339Nano, v)
			if err != nil {
				return nil, apierr.Invalid(key, "must be an RFC 3339 date-time such as 2024-05-01T12:30:00Z")
			}
			// An offset can carry a date at the ends of the four-digit
			// years out of them in UTC, where the fixed-width form (and
			// so the key order) no longer holds.
			if y := t.UTC().Year(); y < 0 || y > 9999 {
				return nil, apierr.Invalid(key, "must be from 0000-01-01T00:00:00Z to 9999-12-31T23:59:59Z")
			}
			o := op
			if o == "" {
				o = "eq"
			}
			out = append(out, Cond{Op: o, Value: clock.Stamp(t)})
		}
	}
	return out, nil
}

// KeyCondition returns the part of a key condition on the sort key attr
// (sort keys <timestamp>#<id>) that the conditions allow: gt and lte as
// bounds, eq as a prefix; neq is left to HoldAll. It is "" when no
// condition narrows the key. values gets the placeholders it uses.
func KeyCondition(attr string, conds []Cond, values map[string]types.AttributeValue) string {
	lo, hi, eq := "", "", ""
	for _, c := range conds {
		// '$' sorts just after '#', so <ts>$ bounds every key of <ts>.
		switch c.Op {
		case "gt":
			if b := c.Value + "$"; lo == "" || b > lo {
				lo = b
			}
		case "lte":
			if b := c.Value + "$"; hi == "" || b < hi {
				hi = b
			}
		case "eq":
			eq = c.Value + "#"
		}
	}
	s := func(v string) *types.AttributeValueMemberS { return &types.AttributeValueMemberS{Value: v} }
	switch {
	case eq != "":
		values[":tfeq"] = s(eq)
		return "begins_with(" + attr + ", :tfeq)"
	case lo != "" && hi != "":
		// An empty range (lo after hi) must still be a valid condition:
		// BETWEEN lo AND lo matches no key (no key ends in '$').
		values[":tflo"], values[":tfhi"] = s(lo), s(max(hi, lo))
		return attr + " BETWEEN :tflo AND :tfhi"
	case lo != "":
		values[":tflo"] = s(lo)
		return attr + " > :tflo"
	case hi != "":
		values[":tfhi"] = s(hi)
		return attr + " < :tfhi"
	}
	return ""
}

package perk

import (
	"fmt"
	"regexp"
	"strconv"
	"time"

	"github.com/loyalty-platform/platform/shared/platform/apierr"
)

// Expiry policies of a perk's points (points.expiry.policy).
const (
	// ExpiryNone: points never expire (the default).
	ExpiryNone = "NONE"
	// ExpiryAfterEarn: each lot expires `duration` after it was earned.
	ExpiryAfterEarn = "AFTER_EARN"
	// ExpiryAfterActivity: all of an award's lots expire `duration` after
	// the user's last earn or burn on the award.
	ExpiryAfterActivity = "AFTER_ACTIVITY"
	// ExpiryFixedDate: lots expire on the next `date` (MM-DD) after they
	// were earned, at least `duration` later when both are given.
	ExpiryFixedDate = "FIXED_DATE"
)

// Expiry is when a perk's points expire (points.expiry). Changing it
// applies to lots earned afterwards. Lots expire at the end of their last
// day in the tenant's time zone (settings.timezone): a lot earned on
// 2026-03-14 under AFTER_EARN P12M is spendable through 2027-03-14 and
// expires at 00:00 on 2027-03-15.
type Expiry struct {
	Policy   string `json:"policy" dynamodbav:"policy"`
	Duration string `json:"duration,omitempty" dynamodbav:"duration,omitempty"`
	Date     string `json:"date,omitempty" dynamodbav:"date,omitempty"`
}

// Period is a calendar period (ISO 8601 date part: P1Y, P12M, P2W, P30D,
// P1Y6M).
type Period struct{ Years, Months, Days int }

var periodRE = regexp.MustCompile(`^P(?:(\d{1,2})Y)?(?:(\d{1,3})M)?(?:(\d{1,3})W)?(?:(\d{1,4})D)?$`)

// ParsePeriod reads an ISO 8601 period of years, months, weeks and days;
// ok is false for anything else, for zero and for more than 10 years.
func ParsePeriod(s string) (Period, bool) {
	m := periodRE.FindStringSubmatch(s)
	if m == nil || s == "P" {
		return Period{}, false
	}
	n := func(i int) int { v, _ := strconv.Atoi(m[i]); return v }
	p := Period{Years: n(1), Months: n(2), Days: n(3)*7 + n(4)}
	// 10 years: 3,653 days at most.
	if approx := p.Years*366 + p.Months*31 + p.Days; approx == 0 || p.Years*12+p.Months > 120 || approx > 3660 {
		return Period{}, false
	}
	return p, true
}

// After returns t moved on by p (in t's zone).
func (p Period) After(t time.Time) time.Time { return t.AddDate(p.Years, p.Months, p.Days) }

// Validate checks an expiry policy; path names it ("points.expiry").
func (e *Expiry) Validate(path string) error {
	if e == nil {
		return nil
	}
	switch e.Policy {
	case ExpiryNone:
		if e.Duration != "" || e.Date != "" {
			return apierr.Invalid(path, "policy NONE takes neither duration nor date")
		}
		return nil
	case ExpiryAfterEarn, ExpiryAfterActivity:
		if e.Date != "" {
			return apierr.Invalid(path+".date", "is only for policy FIXED_DATE")
		}
		if e.Duration == "" {
			return apierr.Invalid(path+".duration", "is required for policy %s", e.Policy)
		}
	case ExpiryFixedDate:
		if _, _, ok := monthDay(e.Date); !ok {
			return apierr.Invalid(path+".date", "must be a day of the year MM-DD such as 12-31 (not 02-29)")
		}
	default:
		return apierr.Invalid(path+".policy", "must be one of NONE, AFTER_EARN, AFTER_ACTIVITY, FIXED_DATE")
	}
	if e.Duration != "" {
		if _, ok := ParsePeriod(e.Duration); !ok {
			return apierr.Invalid(path+".duration", "must be an ISO 8601 period of years, months, weeks or days such as P12M or P90D, more than zero and at most 10 years")
		}
	}
	return nil
}

// monthDay reads MM-DD (02-29 is refused: it is not a day of every year).
func monthDay(s string) (time.Month, int, bool) {
	if len(s) != 5 || s[2] != '-' {
		return 0, 0, false
	}
	m, err1 := strconv.Atoi(s[:2])
	d, err2 := strconv.Atoi(s[3:])
	if err1 != nil || err2 != nil || m < 1 || m > 12 || d < 1 || (m == 2 && d == 29) {
		return 0, 0, false
	}
	if time.Date(2027, time.Month(m), d, 0, 0, 0, 0, time.UTC).Day() != d {
		return 0, 0, false
	}
	return time.Month(m), d, true
}

// Expires reports whether the policy ever expires points.
func (e *Expiry) Expires() bool { return e != nil && e.Policy != "" && e.Policy != ExpiryNone }

// Activity reports whether lots expire after the last activity, and after
// which period.
func (e *Expiry) Activity() (Period, bool) {
	if e == nil || e.Policy != ExpiryAfterActivity {
		return Period{}, false
	}
	p, ok := ParsePeriod(e.Duration)
	return p, ok
}

// LotExpiry returns when a lot earned at earned expires under the policy
// in zone (the end of its last day there); ok is false when it never does
// (NONE) or expires by activity (AFTER_ACTIVITY: see ActivityExpiry).
func (e *Expiry) LotExpiry(earned time.Time, zone *time.Location) (time.Time, bool) {
	if !e.Expires() {
		return time.Time{}, false
	}
	local := earned.In(zone)
	switch e.Policy {
	case ExpiryAfterEarn:
		p, ok := ParsePeriod(e.Duration)
		if !ok {
			return time.Time{}, false
		}
		return endOfDay(p.After(local)), true
	case ExpiryFixedDate:
		m, d, ok := monthDay(e.Date)
		if !ok {
			return time.Time{}, false
		}
		floor := local.AddDate(0, 0, 1) // strictly after the earn's day
		if p, ok := ParsePeriod(e.Duration); ok && e.Duration != "" {
			if after := p.After(local); after.After(floor) {
				floor = after
			}
		}
		y := floor.Year()
		day := time.Date(y, m, d, 0, 0, 0, 0, zone)
		if day.Before(startOfDay(floor)) {
			day = time.Date(y+1, m, d, 0, 0, 0, 0, zone)
		}
		return endOfDay(day), true
	}
	return time.Time{}, false
}

// ActivityExpiry returns when an AFTER_ACTIVITY award's lots expire after
// activity at t.
func (e *Expiry) ActivityExpiry(t time.Time, zone *time.Location) (time.Time, bool) {
	p, ok := e.Activity()
	if !ok {
		return time.Time{}, false
	}
	return endOfDay(p.After(t.In(zone))), true
}

func startOfDay(t time.Time) time.Time {
	return time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, t.Location())
}

func endOfDay(t time.Time) time.Time {
	return time.Date(t.Year(), t.Month(), t.Day()+1, 0, 0, 0, 0, t.Location())
}

// String describes the policy for messages.
func (e *Expiry) String() string {
	if e == nil {
		return ExpiryNone
	}
	return fmt.Sprintf("%s %s %s", e.Policy, e.Duration, e.Date)
}

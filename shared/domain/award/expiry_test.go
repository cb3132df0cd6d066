package award_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/loyalty-platform/platform/shared/domain/perk"
	"github.com/loyalty-platform/platform/shared/domain/tenant"
	"github.com/loyalty-platform/platform/shared/platform/apierr"
	"github.com/loyalty-platform/platform/shared/platform/clock"
	ts "github.com/loyalty-platform/platform/shared/testkit"
)

const day = 24 * time.Hour

// runExpiry runs the daily points expiry for the harness's tenant (the
// whole run would reach other tests' tenants with this test's clock; the
// events test runs the schedule's handler) and returns its report.
func runExpiry(t *testing.T, h *ts.Harness) map[string]int {
	t.Helper()
	rep, err := h.Deps.Awards.ExpireTenantLots(context.Background(), h.Tenant.ID)
	if err != nil {
		t.Fatalf("expiry run: %v", err)
	}
	return map[string]int{"awards": rep.Awards, "expired": rep.Expired, "reminded": rep.Reminded}
}

// expiringPerk creates a perk with an expiry policy.
func expiringPerk(t *testing.T, h *ts.Harness, expiry map[string]any) string {
	t.Helper()
	return newPerk(t, h, map[string]any{"template": "PSEUDO_CURRENCY", "points": map[string]any{"expiry": expiry}})
}

// grantAt grants points earned at earnedAt ("" for now) and returns the award.
func grantAt(t *testing.T, h *ts.Harness, perkID, userID string, points int, earnedAt string) map[string]any {
	t.Helper()
	body := map[string]any{"userId": userID, "points": points}
	if earnedAt != "" {
		body["earnedAt"] = earnedAt
	}
	return h.Do("POST", "/pointperks/"+perkID+"/awards", body, h.Admin()).Expect(t, 200, "").Map(t)
}

// awardOf reads the user's award of perk through GET /users/{userId}/pointawards.
func awardOf(t *testing.T, h *ts.Harness, uid, perkID string) map[string]any {
	t.Helper()
	for _, a := range pointAwards(t, h, uid, "", h.Admin()) {
		if m := a.(map[string]any); m["perkId"] == perkID {
			return m
		}
	}
	t.Fatalf("user %s holds no award of %s", uid, perkID)
	return nil
}

// entryTypes lists the ledger's entries oldest first as "TYPE points".
func entryTypes(entries []map[string]any) []string {
	var out []string
	for i := len(entries) - 1; i >= 0; i-- {
		out = append(out, fmt.Sprintf("%s %v", entries[i]["type"], entries[i]["points"]))
	}
	return out
}

// TestExpiryPolicies checks each policy end to end: the expiry a lot
// gets, reads that stop counting it once it expired (before any run),
// the run's EXPIRY entry and POINTS_EXPIRED action, and a second run that
// changes nothing.
func TestExpiryPolicies(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	london, _ := time.LoadLocation("Europe/London")
	tests := []struct {
		name   string
		expiry map[string]any
		// lastDay is the lot's last day (in the tenant's zone) for an
		// earn now.
		lastDay func(now time.Time) time.Time
	}{
		{"AFTER_EARN", map[string]any{"policy": "AFTER_EARN", "duration": "P12M"}, func(now time.Time) time.Time { return now.In(london).AddDate(1, 0, 0) }},
		{"AFTER_ACTIVITY", map[string]any{"policy": "AFTER_ACTIVITY", "duration": "P90D"}, func(now time.Time) time.Time { return now.In(london).AddDate(0, 0, 90) }},
		{"FIXED_DATE", map[string]any{"policy": "FIXED_DATE", "date": "12-31"}, func(now time.Time) time.Time {
			l := now.In(london)
			y := l.Year()
			if l.Month() == 12 && l.Day() == 31 {
				y++
			}
			return time.Date(y, 12, 31, 12, 0, 0, 0, london)
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			uid := h.AdminUser(t, "Ex", "Piry")
			perk := expiringPerk(t, h, tc.expiry)
			awardID := uid + "-" + perk
			now := h.Clock.Now()
			a := grantAt(t, h, perk, uid, 40, "")
			last := tc.lastDay(now)
			want := clock.Stamp(time.Date(last.Year(), last.Month(), last.Day()+1, 0, 0, 0, 0, london))
			exp := pts(a)["expiring"].([]any)
			if len(exp) != 1 || exp[0].(map[string]any)["expiresAt"] != want || exp[0].(map[string]any)["points"] != 40.0 {
				t.Fatalf("expiring = %v, want 40 points at %s", exp, want)
			}
			expiresAt, _ := time.Parse(time.RFC3339, want)
			h.Clock.Advance(expiresAt.Sub(h.Clock.Now()) - time.Minute)
			if got := available(t, awardOf(t, h, uid, perk)); got != 40 {
				t.Fatalf("a minute before the expiry the award holds %d, want 40", got)
			}
			h.Clock.Advance(2 * time.Minute)
			if got := available(t, awardOf(t, h, uid, perk)); got != 0 {
				t.Errorf("after the expiry, before any run, the award shows %d points, want 0", got)
			}
			h.Do("POST", "/users/"+uid+"/pointawards/"+awardID+"/redeem", map[string]any{"valueToRedeem": 1}, h.Admin()).Expect(t, 422, "INSUFFICIENT_POINTS")
			rep := runExpiry(t, h)
			if rep["expired"] < 40 {
				t.Errorf("the run expired %d points, want at least this award's 40", rep["expired"])
			}
			entries := ledgerOf(t, h, uid, awardID, h.Admin(), 100)
			checkLedger(t, entries, 0)
			if got, want := fmt.Sprint(entryTypes(entries)), "[EARN 40 EXPIRY -40]"; got != want {
				t.Errorf("entries = %s, want %s", got, want)
			}
			expired := actionsOf(t, h, uid, "POINTS_EXPIRED")
			if len(expired) != 1 || expired[0].Metadata["points"] != 40.0 {
				t.Errorf("POINTS_EXPIRED actions = %v, want one of 40 points", expired)
			}
			if c := entries[0]["cause"].(map[string]any); len(expired) == 1 && c["actionId"] != expired[0].ID {
				t.Errorf("the EXPIRY entry's cause = %v, want the POINTS_EXPIRED action", c)
			}
			a = awardOf(t, h, uid, perk)
			if pts(a)["totalExpired"] != 40.0 || len(pts(a)["expiring"].([]any)) != 0 {
				t.Errorf("award points = %v, want totalExpired 40 and nothing expiring", pts(a))
			}
			before := len(entries)
			runExpiry(t, h)
			if got := len(ledgerOf(t, h, uid, awardID, h.Admin(), 100)); got != before {
				t.Errorf("a second run wrote %d more entries", got-before)
			}
		})
	}
}

// TestAfterActivityRenews checks that under AFTER_ACTIVITY a burn moves
// the expiry of every lot.
func TestAfterActivityRenews(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	uid := h.AdminUser(t, "Act", "Ive")
	perk := expiringPerk(t, h, map[string]any{"policy": "AFTER_ACTIVITY", "duration": "P30D"})
	awardID := uid + "-" + perk
	grantAt(t, h, perk, uid, 10, "")
	h.Clock.Advance(20 * day)
	h.Do("POST", "/users/"+uid+"/pointawards/"+awardID+"/redeem", map[string]any{"valueToRedeem": 1}, h.Admin()).Expect(t, 200, "")
	h.Clock.Advance(20 * day) // 40 days after the earn, 20 after the burn
	if got := available(t, awardOf(t, h, uid, perk)); got != 9 {
		t.Errorf("20 days after a burn the award holds %d, want 9 (the burn renewed the lots)", got)
	}
	h.Clock.Advance(12 * day)
	if got := available(t, awardOf(t, h, uid, perk)); got != 0 {
		t.Errorf("32 days after the last activity the award holds %d, want 0", got)
	}
}

// TestLotOrder checks that a burn takes the lot that expires first, and
// that the ledger answer lists the lots in that order.
func TestLotOrder(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	uid := h.AdminUser(t, "Lo", "Ts")
	perk := expiringPerk(t, h, map[string]any{"policy": "AFTER_EARN", "duration": "P12M"})
	awardID := uid + "-" + perk
	now := h.Clock.Now()
	grantAt(t, h, perk, uid, 10, "")                                          // expires in 12 months
	grantAt(t, h, perk, uid, 10, now.AddDate(0, -11, 0).Format(time.RFC3339)) // expires in about a month
	h.Do("POST", "/users/"+uid+"/pointawards/"+awardID+"/redeem", map[string]any{"valueToRedeem": 12}, h.Admin()).Expect(t, 200, "")
	page := h.Do("GET", "/users/"+uid+"/pointawards/"+awardID+"/ledger", nil, h.Admin()).Expect(t, 200, "").Map(t)
	burn := page["items"].([]any)[0].(map[string]any)
	var got []string
	for _, l := range burn["lots"].([]any) {
		m := l.(map[string]any)
		got = append(got, fmt.Sprintf("%s:%v", m["lotId"], m["points"]))
	}
	if want := fmt.Sprint([]string{awardID + ".2:10", awardID + ".1:2"}); fmt.Sprint(got) != want {
		t.Errorf("the burn drew %v, want %s (the lot that expires first, then the next)", got, want)
	}
	lots := page["lots"].([]any)
	if len(lots) != 1 || lots[0].(map[string]any)["lotId"] != awardID+".1" || lots[0].(map[string]any)["remaining"] != 8.0 {
		t.Errorf("lots = %v, want %s with 8 remaining", lots, awardID+".1")
	}
	t.Run("RefundReturnsToTheLotsDrawn", func(t *testing.T) {
		h.Do("POST", "/users/"+uid+"/pointawards/"+awardID+"/refund", map[string]any{"value": 12}, h.Admin()).Expect(t, 200, "")
		page := h.Do("GET", "/users/"+uid+"/pointawards/"+awardID+"/ledger", nil, h.Admin()).Expect(t, 200, "").Map(t)
		lots := page["lots"].([]any)
		if len(lots) != 2 || lots[0].(map[string]any)["lotId"] != awardID+".2" || lots[0].(map[string]any)["remaining"] != 10.0 {
			t.Errorf("lots after the refund = %v, want both lots whole again", lots)
		}
	})
}

// TestEarnedAt checks grants dated in the past: a lot already past its
// expiry is granted and expires at once, and bad dates are refused.
func TestEarnedAt(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	uid := h.AdminUser(t, "Ear", "Ned")
	perk := expiringPerk(t, h, map[string]any{"policy": "AFTER_EARN", "duration": "P12M"})
	awardID := uid + "-" + perk
	now := h.Clock.Now()
	t.Run("AlreadyExpired", func(t *testing.T) {
		a := grantAt(t, h, perk, uid, 25, now.AddDate(0, -13, 0).Format(time.RFC3339))
		if got := available(t, a); got != 0 {
			t.Errorf("a lot earned 13 months ago holds %d, want 0", got)
		}
		entries := ledgerOf(t, h, uid, awardID, h.Admin(), 100)
		checkLedger(t, entries, 0)
		if got, want := fmt.Sprint(entryTypes(entries)), "[EARN 25 EXPIRY -25]"; got != want {
			t.Errorf("entries = %s, want %s", got, want)
		}
	})
	bad := []struct{ name, earnedAt string }{
		{"Future", now.Add(time.Hour).Format(time.RFC3339)},
		{"ElevenYearsBack", now.AddDate(-11, 0, 0).Format(time.RFC3339)},
		{"NotADate", "last tuesday"},
	}
	for _, tc := range bad {
		t.Run(tc.name, func(t *testing.T) {
			h.Do("POST", "/pointperks/"+perk+"/awards", map[string]any{"userId": uid, "points": 1, "earnedAt": tc.earnedAt}, h.Admin()).Expect(t, 422, "VALIDATION_FAILED")
		})
	}
}

// TestRefundToAnExpiredLot checks that points given back to a lot that
// expired meanwhile expire at once.
func TestRefundToAnExpiredLot(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	uid := h.AdminUser(t, "Re", "Fund")
	perk := expiringPerk(t, h, map[string]any{"policy": "AFTER_EARN", "duration": "P30D"})
	awardID := uid + "-" + perk
	grantAt(t, h, perk, uid, 10, "")
	h.Do("POST", "/users/"+uid+"/pointawards/"+awardID+"/redeem", map[string]any{"valueToRedeem": 6}, h.Admin()).Expect(t, 200, "")
	h.Clock.Advance(40 * day)
	a := h.Do("POST", "/users/"+uid+"/pointawards/"+awardID+"/refund", map[string]any{"value": 6}, h.Admin()).Expect(t, 200, "").Map(t)
	if got := available(t, a); got != 0 {
		t.Errorf("after the refund to an expired lot the award holds %d, want 0", got)
	}
	entries := ledgerOf(t, h, uid, awardID, h.Admin(), 100)
	checkLedger(t, entries, 0)
	if got, want := fmt.Sprint(entryTypes(entries)), "[EARN 10 BURN -6 EXPIRY -4 REFUND 6 EXPIRY -6]"; got != want {
		t.Errorf("entries = %s, want %s", got, want)
	}
}

// TestExpiringReminder checks that the run records POINTS_EXPIRING once
// for points that expire within 30 days.
func TestExpiringReminder(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	uid := h.AdminUser(t, "Re", "Mind")
	perk := expiringPerk(t, h, map[string]any{"policy": "AFTER_EARN", "duration": "P60D"})
	grantAt(t, h, perk, uid, 7, "")
	runExpiry(t, h)
	if got := actionsOf(t, h, uid, "POINTS_EXPIRING"); len(got) != 0 {
		t.Fatalf("60 days ahead: %d reminders, want none", len(got))
	}
	h.Clock.Advance(35 * day)
	runExpiry(t, h)
	runExpiry(t, h)
	got := actionsOf(t, h, uid, "POINTS_EXPIRING")
	if len(got) != 1 || got[0].Metadata["points"] != 7.0 {
		t.Fatalf("reminders = %v, want one of 7 points", got)
	}
	if got := available(t, awardOf(t, h, uid, perk)); got != 7 {
		t.Errorf("a reminder changed the points: %d, want 7", got)
	}
}

// TestExpiryValidation checks that bad expiry policies are refused,
// naming the field (perk.Expiry.Validate, which POST and PUT /perks run
// on points.expiry).
func TestExpiryValidation(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		expiry perk.Expiry
		field  string
	}{
		{"UnknownPolicy", perk.Expiry{Policy: "SOMETIMES"}, "points.expiry.policy"},
		{"NoDuration", perk.Expiry{Policy: "AFTER_EARN"}, "points.expiry.duration"},
		{"BadDuration", perk.Expiry{Policy: "AFTER_EARN", Duration: "12 months"}, "points.expiry.duration"},
		{"TimeInDuration", perk.Expiry{Policy: "AFTER_EARN", Duration: "PT12H"}, "points.expiry.duration"},
		{"OverTenYears", perk.Expiry{Policy: "AFTER_EARN", Duration: "P11Y"}, "points.expiry.duration"},
		{"LeapDay", perk.Expiry{Policy: "FIXED_DATE", Date: "02-29"}, "points.expiry.date"},
		{"BadDate", perk.Expiry{Policy: "FIXED_DATE", Date: "13-01"}, "points.expiry.date"},
		{"NoneWithDuration", perk.Expiry{Policy: "NONE", Duration: "P1Y"}, "points.expiry"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := tc.expiry.Validate("points.expiry")
			if e, ok := apierr.As(err); !ok || e.Code != apierr.ValidationFailed || e.Field != tc.field {
				t.Errorf("Validate = %v, want VALIDATION_FAILED naming %s", err, tc.field)
			}
		})
	}
}

// TestAsOfCountsNoExpiredLot checks that the awards as of a date do not
// count a lot that had expired then, though no EXPIRY entry was written
// until later.
func TestAsOfCountsNoExpiredLot(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	uid := h.AdminUser(t, "As", "Of")
	perk := expiringPerk(t, h, map[string]any{"policy": "AFTER_EARN", "duration": "P10D"})
	grantAt(t, h, perk, uid, 30, "")
	h.Clock.Advance(5 * day)
	grantAt(t, h, perk, uid, 4, "")
	mid := h.Clock.Now()
	h.Clock.Advance(7 * day) // the first lot expired 1-2 days ago; no run yet
	after := h.Clock.Now()
	h.Clock.Advance(10 * day)
	runExpiry(t, h)
	for _, tc := range []struct {
		name string
		at   time.Time
		want int
	}{
		{"BothLots", mid, 34},
		{"FirstLotExpired", after, 4},
		{"BothExpired", h.Clock.Now(), 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			list := pointAwards(t, h, uid, "?asOf="+tc.at.Format(time.RFC3339Nano), h.Admin())
			for _, a := range list {
				if m := a.(map[string]any); m["perkId"] == perk {
					if got := available(t, m); got != tc.want {
						t.Errorf("as of %s: %d points, want %d", tc.at.Format(time.RFC3339), got, tc.want)
					}
					return
				}
			}
			t.Errorf("as of %s: no award of the perk", tc.at.Format(time.RFC3339))
		})
	}
}

// TestExpiringReminderSetting checks that settings.pointsExpiringDays
// moves the reminder.
func TestExpiringReminderSetting(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	days := 7
	h.SetSettings(tenant.Settings{PointsExpiringDays: &days})
	uid := h.AdminUser(t, "Set", "Ting")
	perk := expiringPerk(t, h, map[string]any{"policy": "AFTER_EARN", "duration": "P20D"})
	grantAt(t, h, perk, uid, 5, "")
	h.Clock.Advance(10 * day) // 11 days before the expiry: no reminder at 7
	runExpiry(t, h)
	if got := actionsOf(t, h, uid, "POINTS_EXPIRING"); len(got) != 0 {
		t.Fatalf("11 days ahead with a 7-day reminder: %d reminders, want none", len(got))
	}
	h.Clock.Advance(5 * day)
	runExpiry(t, h)
	if got := actionsOf(t, h, uid, "POINTS_EXPIRING"); len(got) != 1 {
		t.Fatalf("6 days ahead: %d reminders, want 1", len(got))
	}
}

package action_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/loyalty-platform/platform/shared/domain/action"
	"github.com/loyalty-platform/platform/shared/platform/apierr"
	"github.com/loyalty-platform/platform/shared/testkit"
)

func TestMain(m *testing.M) { testkit.Main(m) }

func TestDaypartOf(t *testing.T) {
	t.Parallel()
	tests := []struct {
		hour int
		want string
	}{
		{0, action.Night}, {4, action.Night}, {5, action.Morning}, {11, action.Morning},
		{12, action.Afternoon}, {16, action.Afternoon}, {17, action.Evening}, {20, action.Evening},
		{21, action.Night}, {23, action.Night},
	}
	for _, tc := range tests {
		if got := action.DaypartOf(tc.hour); got != tc.want {
			t.Errorf("DaypartOf(%d) = %s, want %s", tc.hour, got, tc.want)
		}
	}
}

func TestWhenAt(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		at   string
		zone string
		want action.When
	}{
		{"UTCSundayNight", "2024-12-29T23:30:00Z", "", action.When{Timestamp: "2024-12-29T23:30:00.000Z", MonthOfYear: 12, WeekOfYear: 52, DayOfMonth: 29, DayOfWeek: 7, Daypart: action.Night}},
		{"ISOWeek1OfNextYear", "2024-12-30T09:00:00Z", "UTC", action.When{Timestamp: "2024-12-30T09:00:00.000Z", MonthOfYear: 12, WeekOfYear: 1, DayOfMonth: 30, DayOfWeek: 1, Daypart: action.Morning}},
		{"LocalZoneMovesTheDay", "2024-03-01T03:15:00.250Z", "America/New_York", action.When{Timestamp: "2024-03-01T03:15:00.250Z", MonthOfYear: 2, WeekOfYear: 9, DayOfMonth: 29, DayOfWeek: 4, Daypart: action.Night}},
		{"LondonSummerAfternoon", "2024-07-05T11:30:00Z", "Europe/London", action.When{Timestamp: "2024-07-05T11:30:00.000Z", MonthOfYear: 7, WeekOfYear: 27, DayOfMonth: 5, DayOfWeek: 5, Daypart: action.Afternoon}},
		{"UnknownZoneIsUTC", "2024-07-05T17:00:00Z", "Mars/Olympus", action.When{Timestamp: "2024-07-05T17:00:00.000Z", MonthOfYear: 7, WeekOfYear: 27, DayOfMonth: 5, DayOfWeek: 5, Daypart: action.Evening}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			at, err := time.Parse(time.RFC3339Nano, tc.at)
			if err != nil {
				t.Fatal(err)
			}
			if got := action.WhenAt(at, action.Zone(tc.zone)); got != tc.want {
				t.Errorf("WhenAt = %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestTransactItemsRejects(t *testing.T) {
	t.Parallel()
	r := &action.Recorder{Table: "ActionsTable"}
	good := action.Action{Type: "CHECKIN_CREATED", TenantID: "t1", When: action.WhenAt(time.Now(), nil)}
	tests := []struct {
		name string
		edit func(*action.Action)
	}{
		{"LowerCaseType", func(a *action.Action) { a.Type = "checkin_created" }},
		{"EmptyType", func(a *action.Action) { a.Type = "" }},
		{"TrailingUnderscore", func(a *action.Action) { a.Type = "CHECKIN_" }},
		{"NoTenant", func(a *action.Action) { a.TenantID = "" }},
		{"OtherTenantInContext", func(a *action.Action) { a.Context.Tenant.ID = "t2" }},
		{"NoTimestamp", func(a *action.Action) { a.When = action.When{} }},
		{"LocalTimestamp", func(a *action.Action) { a.When.Timestamp = "2024-07-05T11:30:00+01:00" }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a := good
			tc.edit(&a)
			_, err := r.TransactItems(a)
			var e *apierr.Error
			if !errors.As(err, &e) || e.Code != apierr.ValidationFailed {
				t.Errorf("err = %v, want VALIDATION_FAILED", err)
			}
		})
	}
	if _, err := r.TransactItems(good); err != nil {
		t.Errorf("good action: %v", err)
	}
}

// TestRecorder writes actions to the Actions table and reads them back by
// user and by location, newest first.
func TestRecorder(t *testing.T) {
	t.Parallel()
	h := testkit.New(t)
	ctx := context.Background()
	rec := h.Deps.Actions
	tid := h.Tenant.ID
	base := time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)
	user := &action.UserRef{ID: "u1", Name: "Ada Lovelace", PrimaryPlatform: "IOS"}
	loc := &action.LocationRef{ID: "l1", Title: "Cafe", Geo: []float64{-0.12, 51.5}, Regions: []string{"london"}, Tags: []string{"flagship"}}
	var ids []string
	for i := 0; i < 3; i++ {
		a := action.Action{
			ID: action.NewID(), Type: action.CheckinCreated, TenantID: tid,
			When:     action.WhenAt(base.Add(time.Duration(i)*time.Minute), nil),
			Metadata: map[string]any{"n": i},
			Context:  action.Context{Tenant: action.TenantRef{ID: tid, Title: h.Tenant.Title}, User: user, Location: loc},
		}
		if i == 2 {
			a.Context.Location = nil
		}
		if err := rec.Put(ctx, a); err != nil {
			t.Fatalf("put: %v", err)
		}
		t.Run("PutTwiceIsANoOp", func(t *testing.T) {
			if err := rec.Put(ctx, a); err != nil {
				t.Errorf("second put: %v", err)
			}
		})
		ids = append(ids, a.ID)
	}
	got, err := rec.ByUser(ctx, tid, "u1", 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || got[0].ID != ids[2] || got[2].ID != ids[0] {
		t.Fatalf("by user = %+v, want 3 newest first", got)
	}
	a := got[2]
	if a.Environment != action.EnvironmentProduction || a.Context.Tenant.Title != h.Tenant.Title || a.Context.User.Name != "Ada Lovelace" ||
		a.Context.Location.Geo[1] != 51.5 || a.Context.Tags == nil || a.When.Daypart != action.Afternoon || a.Metadata["n"] != float64(0) {
		t.Errorf("action read back = %+v", a)
	}
	if got[0].Context.Location != nil {
		t.Errorf("an action without a location read back with one")
	}
	byLoc, err := rec.ByLocation(ctx, tid, "l1", 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(byLoc) != 2 || byLoc[0].ID != ids[1] {
		t.Errorf("by location = %+v", byLoc)
	}
	other, _ := h.NewTenant(h.Tenant.Settings)
	if got, _ := rec.ByUser(ctx, other.ID, "u1", 10); len(got) != 0 {
		t.Errorf("another tenant sees %d actions", len(got))
	}
}

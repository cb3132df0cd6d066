package webhook

import (
	"net/http"
	"testing"
	"time"
)

func TestBackoff(t *testing.T) {
	tests := []struct {
		attempt int
		want    time.Duration
	}{
		{1, 5 * time.Second}, {2, 5 * time.Minute}, {3, 30 * time.Minute}, {4, 2 * time.Hour}, {5, 5 * time.Hour},
		{6, 10 * time.Hour}, {7, 14 * time.Hour}, {8, 20 * time.Hour}, {9, 24 * time.Hour}, {10, 24 * time.Hour}, {15, 24 * time.Hour},
	}
	for _, tc := range tests {
		t.Run(tc.want.String(), func(t *testing.T) {
			if got := Backoff(tc.attempt, 0.5); got != tc.want {
				t.Errorf("Backoff(%d, 0.5) = %v, want %v", tc.attempt, got, tc.want)
			}
			lo, hi := Backoff(tc.attempt, 0), Backoff(tc.attempt, 0.999999)
			if lo < tc.want*9/10 || hi > tc.want*11/10 || lo >= hi {
				t.Errorf("jitter range [%v, %v], want within 10%% of %v", lo, hi, tc.want)
			}
		})
	}
}

// TestScheduleSpansSevenDays: with the schedule's own waits an event is
// attempted 13 times before its seven days run out (the README's table).
func TestScheduleSpansSevenDays(t *testing.T) {
	var elapsed time.Duration
	attempts := 1
	for {
		next := elapsed + Backoff(attempts, 0.5)
		if next > RetryWindow {
			break
		}
		elapsed = next
		attempts++
	}
	if got, want := attempts, 13; got != want {
		t.Errorf("attempts within %v = %d, want %d (last at %v)", RetryWindow, got, want, elapsed)
	}
}

func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name   string
		status int
		header string
		want   time.Duration
	}{
		{"Seconds429", 429, "120", 2 * time.Minute},
		{"Seconds503", 503, "30", 30 * time.Second},
		{"HTTPDate", 503, now.Add(time.Hour).Format(http.TimeFormat), time.Hour},
		{"CappedAtADay", 429, "999999", 24 * time.Hour},
		{"IgnoredOn500", 500, "120", 0},
		{"PastDate", 429, now.Add(-time.Hour).Format(http.TimeFormat), 0},
		{"Garbage", 429, "soon", 0},
		{"Absent", 429, "", 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := http.Header{}
			if tc.header != "" {
				h.Set("Retry-After", tc.header)
			}
			if got := retryAfter(tc.status, h, now); got != tc.want {
				t.Errorf("retryAfter = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestDerivedIDIsStableAndSorts(t *testing.T) {
	at := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	a, b := derivedID(at, "ep", "ev", ""), derivedID(at, "ep", "ev", "")
	if a != b || len(a) != 24 {
		t.Fatalf("derivedID = %q then %q, want one 24-character id", a, b)
	}
	if c := derivedID(at, "ep", "ev2", ""); c == a {
		t.Errorf("two events got one id %q", c)
	}
	if later := derivedID(at.Add(time.Millisecond), "ep", "ev", ""); later <= a {
		t.Errorf("a later id %q does not sort after %q", later, a)
	}
}

package clock

import (
	"testing"
	"time"
)

func TestStamp(t *testing.T) {
	plus2 := time.FixedZone("UTC+2", 2*60*60)
	tests := []struct {
		name string
		in   time.Time
		want string
	}{
		{"UTC", time.Date(2024, 3, 5, 7, 8, 9, 123_000_000, time.UTC), "2024-03-05T07:08:09.123Z"},
		{"OtherZoneIsWrittenInUTC", time.Date(2024, 3, 5, 1, 0, 0, 0, plus2), "2024-03-04T23:00:00.000Z"},
		{"SubMillisecondsAreCut", time.Date(2024, 3, 5, 7, 8, 9, 999_999_999, time.UTC), "2024-03-05T07:08:09.999Z"},
		{"WholeSecondKeepsTheMilliseconds", time.Date(2024, 12, 31, 23, 59, 59, 0, time.UTC), "2024-12-31T23:59:59.000Z"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Stamp(tt.in); got != tt.want {
				t.Errorf("Stamp(%v) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestStampSortsInTimeOrder(t *testing.T) {
	base := time.Date(2024, 3, 5, 7, 8, 9, 0, time.UTC)
	tests := []struct {
		name         string
		early, later time.Time
	}{
		{"Milliseconds", base.Add(9 * time.Millisecond), base.Add(10 * time.Millisecond)},
		{"AcrossASecond", base.Add(999 * time.Millisecond), base.Add(time.Second)},
		{"AcrossAYear", time.Date(2023, 12, 31, 23, 59, 59, 999_000_000, time.UTC), time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, want := Stamp(tt.early) < Stamp(tt.later), true
			if got != want {
				t.Errorf("Stamp(%v) < Stamp(%v) = %v, want %v", tt.early, tt.later, got, want)
			}
		})
	}
}

func TestFormatParsesStampBack(t *testing.T) {
	in := time.Date(2024, 3, 5, 7, 8, 9, 123_000_000, time.UTC)
	got, err := time.Parse(Format, Stamp(in))
	if err != nil {
		t.Fatalf("parse %q: %v", Stamp(in), err)
	}
	if want := in; !got.Equal(want) {
		t.Errorf("time.Parse(Format, Stamp(t)) = %v, want %v", got, want)
	}
}

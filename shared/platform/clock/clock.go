// Package clock gives the platform an injectable notion of now, so expiry
// (sessions, guests, check-ins, segments) is tested without sleeping, and
// the one form in which it writes instants down (Format, Stamp).
package clock

import (
	"sync"
	"time"
)

// Format is the platform's fixed-width UTC timestamp form (milliseconds,
// then Z), in which timestamps are stored and returned. Every timestamp in
// it has the same width, so timestamps sort as text in time order; it is
// also the layout to parse them back with time.Parse.
const Format = "2006-01-02T15:04:05.000Z"

// Stamp returns t in UTC written in Format.
func Stamp(t time.Time) string { return t.UTC().Format(Format) }

// Clock returns the current time.
type Clock interface {
	Now() time.Time
}

// System is the real clock.
type System struct{}

// Now returns time.Now in UTC.
func (System) Now() time.Time { return time.Now().UTC() }

// Manual is a clock that tests move by hand. Its zero value starts at the
// real time of its first use.
type Manual struct {
	mu     sync.Mutex
	offset time.Duration
}

// Now returns the real time plus the offset set by Advance.
func (m *Manual) Now() time.Time {
	m.mu.Lock()
	defer m.mu.Unlock()
	return time.Now().UTC().Add(m.offset)
}

// Advance moves the clock forward by d.
func (m *Manual) Advance(d time.Duration) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.offset += d
}

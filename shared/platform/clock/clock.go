// Package clock gives the platform an injectable notion of now, so expiry
// (sessions, guests, check-ins, segments) is tested without sleeping.
package clock

import (
	"sync"
	"time"
)

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

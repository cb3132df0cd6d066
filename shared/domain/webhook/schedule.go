package webhook

import (
	"math/rand/v2"
	"net/http"
	"strconv"
	"time"
)

// schedule is the wait before each retry: after the first attempt 5 s,
// then 5 min, 30 min, 2 h, 5 h, 10 h, 14 h, 20 h, 24 h, and every 24 h
// after that, until RetryWindow has passed since the event was queued for
// the endpoint (its first attempt, unless it waited behind an earlier
// event of the same user).
var schedule = []time.Duration{
	5 * time.Second, 5 * time.Minute, 30 * time.Minute, 2 * time.Hour, 5 * time.Hour,
	10 * time.Hour, 14 * time.Hour, 20 * time.Hour, 24 * time.Hour,
}

// Backoff returns the wait after failed attempt n (1 for the first
// attempt), with up to 10% jitter either way so that the retries of many
// events failing together do not arrive together. jitter is a number in
// [0, 1) (rand.Float64 in production).
func Backoff(n int, jitter float64) time.Duration {
	d := 24 * time.Hour
	if n >= 1 && n <= len(schedule) {
		d = schedule[n-1]
	}
	return d + time.Duration((jitter*0.2-0.1)*float64(d))
}

// maxRetryAfter bounds the wait an endpoint may ask for with Retry-After.
const maxRetryAfter = 24 * time.Hour

// retryAfter returns the wait a 429 or 503 answer asks for in its
// Retry-After header (seconds or an HTTP date), or 0 when it asks for none.
func retryAfter(status int, h http.Header, now time.Time) time.Duration {
	if status != http.StatusTooManyRequests && status != http.StatusServiceUnavailable {
		return 0
	}
	v := h.Get("Retry-After")
	if v == "" {
		return 0
	}
	var d time.Duration
	if s, err := strconv.Atoi(v); err == nil {
		d = time.Duration(s) * time.Second
	} else if t, err := http.ParseTime(v); err == nil {
		d = t.Sub(now)
	}
	switch {
	case d <= 0:
		return 0
	case d > maxRetryAfter:
		return maxRetryAfter
	}
	return d
}

// nextWait returns the wait after failed attempt n: what a 429 or 503 asked
// for with Retry-After, else the schedule's.
func nextWait(n, status int, h http.Header, now time.Time) time.Duration {
	if d := retryAfter(status, h, now); d > 0 {
		return d
	}
	return Backoff(n, rand.Float64())
}

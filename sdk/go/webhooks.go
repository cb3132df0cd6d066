package sdk

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// DefaultWebhookTolerance is how far a webhook's webhook-timestamp may be
// from now, either way, when VerifyWebhook is given no tolerance.
const DefaultWebhookTolerance = 5 * time.Minute

// VerifyWebhook's errors: no signature of the webhook-signature header is
// the body's under the secret (or a header is missing), or the
// webhook-timestamp is malformed or further from now than the tolerance.
var (
	ErrWebhookSignature = errors.New("sdk: webhook signature does not match")
	ErrWebhookTimestamp = errors.New("sdk: webhook timestamp outside the tolerance")
)

// Event is the body of a webhook the platform sends.
type Event struct {
	// ID is the event's id; the webhook-id header names the message, the
	// same on every retry, to deduplicate by.
	ID        string    `json:"id"`
	Type      string    `json:"type"`
	Timestamp time.Time `json:"timestamp"`
	TenantID  string    `json:"tenantId"`
	UserID    string    `json:"userId,omitempty"`
	// Sequence counts the events of the user (or of the tenant, for
	// events without a user) in the order they happened.
	Sequence int64           `json:"sequence"`
	Data     json.RawMessage `json:"data"`
}

// VerifyWebhook checks a webhook the platform sent, as the Standard
// Webhooks specification (v1) says, and returns its event: secret is the
// endpoint's secret ("whsec_" and base64, as the platform showed it), h
// the request's headers and body its exact bytes (read them before any
// JSON decoding). The webhook-timestamp must be within tolerance of now,
// either way (DefaultWebhookTolerance when tolerance is not positive), and
// one of the space-separated "v1,<base64>" signatures of webhook-signature
// (two while the endpoint's secret is being rotated) must be the
// HMAC-SHA256 of "{webhook-id}.{webhook-timestamp}.{body}" under the
// secret's key; they are compared in constant time. An error wraps
// ErrWebhookSignature or ErrWebhookTimestamp, or says the secret or the
// body is malformed.
func VerifyWebhook(secret string, h http.Header, body []byte, tolerance time.Duration) (Event, error) {
	return verifyWebhook(secret, h, body, tolerance, time.Now())
}

func verifyWebhook(secret string, h http.Header, body []byte, tolerance time.Duration, now time.Time) (Event, error) {
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	if err != nil || len(key) == 0 {
		return Event{}, errors.New("sdk: webhook secret is not whsec_ followed by standard base64")
	}
	id, stamp, sigs := h.Get("webhook-id"), h.Get("webhook-timestamp"), h.Get("webhook-signature")
	if id == "" || stamp == "" || sigs == "" {
		return Event{}, fmt.Errorf("%w: the webhook-id, webhook-timestamp and webhook-signature headers are required", ErrWebhookSignature)
	}
	sec, err := strconv.ParseInt(stamp, 10, 64)
	if err != nil {
		return Event{}, fmt.Errorf("%w: webhook-timestamp %q is not unix seconds", ErrWebhookTimestamp, stamp)
	}
	if tolerance <= 0 {
		tolerance = DefaultWebhookTolerance
	}
	if d := now.Sub(time.Unix(sec, 0)); d > tolerance || d < -tolerance {
		return Event{}, fmt.Errorf("%w: webhook-timestamp %d is %s from now", ErrWebhookTimestamp, sec, d.Round(time.Second))
	}
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(id + "." + stamp + "."))
	mac.Write(body)
	want := mac.Sum(nil)
	ok := false
	for _, sig := range strings.Fields(sigs) {
		version, value, found := strings.Cut(sig, ",")
		if !found || version != "v1" {
			continue
		}
		if got, err := base64.StdEncoding.DecodeString(value); err == nil && hmac.Equal(got, want) {
			ok = true
			break
		}
	}
	if !ok {
		return Event{}, fmt.Errorf("%w: no v1 signature of webhook-signature matches", ErrWebhookSignature)
	}
	var ev Event
	if err := json.Unmarshal(body, &ev); err != nil {
		return Event{}, fmt.Errorf("sdk: webhook body: %w", err)
	}
	return ev, nil
}

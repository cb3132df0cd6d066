// Package stdwebhook signs and verifies webhooks the way the Standard
// Webhooks specification (v1, symmetric) says: three headers, webhook-id,
// webhook-timestamp (the attempt's unix seconds) and webhook-signature, a
// space-separated list of "v1,<base64 HMAC-SHA256>" of "{id}.{timestamp}.{body}",
// one for each secret the endpoint holds (two during a rotation). A secret
// is written "whsec_" followed by the standard base64 of its key.
//
// It uses the standard library alone, so receivers' code and the SDKs can
// follow it line by line.
package stdwebhook

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// The headers of a signed webhook.
const (
	HeaderID        = "webhook-id"
	HeaderTimestamp = "webhook-timestamp"
	HeaderSignature = "webhook-signature"
)

// SecretPrefix starts every secret NewSecret makes.
const SecretPrefix = "whsec_"

// DefaultTolerance is how far a webhook's timestamp may be from now, either
// way, when Verify is given no tolerance.
const DefaultTolerance = 5 * time.Minute

// The key lengths the specification allows (24 to 64 bytes) and the one
// NewSecret makes.
const (
	minKey = 24
	maxKey = 64
	newKey = 32
)

// Verify's errors: the signature does not match any secret (or the headers
// are missing), or the timestamp is malformed or outside the tolerance.
var (
	ErrInvalidSignature = errors.New("stdwebhook: invalid signature")
	ErrTimestamp        = errors.New("stdwebhook: timestamp outside the tolerance")
)

// NewSecret returns a new endpoint secret: SecretPrefix followed by the
// standard base64 of 32 random bytes.
func NewSecret() (string, error) {
	key := make([]byte, newKey)
	if _, err := rand.Read(key); err != nil {
		return "", fmt.Errorf("stdwebhook: new secret: %w", err)
	}
	return SecretPrefix + base64.StdEncoding.EncodeToString(key), nil
}

// ParseSecret returns the key of a secret, written with or without
// SecretPrefix; the key must be 24 to 64 bytes long.
func ParseSecret(s string) ([]byte, error) {
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(s, SecretPrefix))
	if err != nil {
		return nil, fmt.Errorf("stdwebhook: secret is not whsec_ and standard base64: %w", err)
	}
	if len(key) < minKey || len(key) > maxKey {
		return nil, fmt.Errorf("stdwebhook: secret key has %d bytes, want %d to %d", len(key), minKey, maxKey)
	}
	return key, nil
}

// Sign returns the webhook-signature header of body sent as message id at
// ts: one "v1,<signature>" for each secret, in their order, separated by
// spaces.
func Sign(secrets []string, id string, ts time.Time, body []byte) (string, error) {
	if len(secrets) == 0 {
		return "", errors.New("stdwebhook: sign: no secret")
	}
	if err := checkID(id); err != nil {
		return "", err
	}
	stamp := strconv.FormatInt(ts.Unix(), 10)
	sigs := make([]string, len(secrets))
	for i, s := range secrets {
		key, err := ParseSecret(s)
		if err != nil {
			return "", fmt.Errorf("stdwebhook: sign with secret %d: %w", i+1, err)
		}
		sigs[i] = "v1," + base64.StdEncoding.EncodeToString(mac(key, id, stamp, body))
	}
	return strings.Join(sigs, " "), nil
}

// Headers returns the three headers of body sent as message id at ts,
// signed with every secret.
func Headers(secrets []string, id string, ts time.Time, body []byte) (http.Header, error) {
	sig, err := Sign(secrets, id, ts, body)
	if err != nil {
		return nil, err
	}
	h := http.Header{}
	h.Set(HeaderID, id)
	h.Set(HeaderTimestamp, strconv.FormatInt(ts.Unix(), 10))
	h.Set(HeaderSignature, sig)
	return h, nil
}

// Verify checks that h signs body with secret: its timestamp is within
// tolerance of now, either way (DefaultTolerance when tolerance is not
// positive), and one of its v1 signatures is the body's (compared in
// constant time; other versions are ignored). It returns an error wrapping
// ErrTimestamp or ErrInvalidSignature, or the secret's error.
func Verify(secret string, h http.Header, body []byte, now time.Time, tolerance time.Duration) error {
	key, err := ParseSecret(secret)
	if err != nil {
		return fmt.Errorf("stdwebhook: verify: %w", err)
	}
	id, stamp, sigs := h.Get(HeaderID), h.Get(HeaderTimestamp), h.Get(HeaderSignature)
	if id == "" || stamp == "" || sigs == "" {
		return fmt.Errorf("%w: the %s, %s and %s headers are required", ErrInvalidSignature, HeaderID, HeaderTimestamp, HeaderSignature)
	}
	sec, err := strconv.ParseInt(stamp, 10, 64)
	if err != nil {
		return fmt.Errorf("%w: %s %q is not unix seconds", ErrTimestamp, HeaderTimestamp, stamp)
	}
	if tolerance <= 0 {
		tolerance = DefaultTolerance
	}
	if d := now.Sub(time.Unix(sec, 0)); d > tolerance || d < -tolerance {
		return fmt.Errorf("%w: %s %d is %s from now, more than %s", ErrTimestamp, HeaderTimestamp, sec, d.Round(time.Second), tolerance)
	}
	want := mac(key, id, stamp, body)
	for _, sig := range strings.Fields(sigs) {
		version, value, ok := strings.Cut(sig, ",")
		if !ok || version != "v1" {
			continue
		}
		got, err := base64.StdEncoding.DecodeString(value)
		if err == nil && hmac.Equal(got, want) {
			return nil
		}
	}
	return fmt.Errorf("%w: no v1 signature of %s matches", ErrInvalidSignature, HeaderSignature)
}

// mac is the HMAC-SHA256 with key of "{id}.{stamp}.{body}".
func mac(key []byte, id, stamp string, body []byte) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(id))
	m.Write([]byte{'.'})
	m.Write([]byte(stamp))
	m.Write([]byte{'.'})
	m.Write(body)
	return m.Sum(nil)
}

// checkID refuses a message id that is empty or could not be a header
// value as it is (spaces, control characters, non-ASCII).
func checkID(id string) error {
	if id == "" {
		return errors.New("stdwebhook: sign: empty message id")
	}
	for _, r := range id {
		if r <= ' ' || r >= 0x7f {
			return fmt.Errorf("stdwebhook: sign: message id %q has a character a header cannot carry as it is", id)
		}
	}
	return nil
}

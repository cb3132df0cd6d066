// Package metadata is the room a POS or other client has for its own
// fields on a resource: `metadata`, an object of string values stored and
// returned as sent.
//
// Bounds: at most MaxKeys keys, each 1 to MaxKeyLen characters, each value
// at most MaxValueLen characters (characters are Unicode code points). A
// key whose value is "" is not stored (as on Stripe, where setting a key
// to "" unsets it): on create it is dropped, and a PUT that sends
// `metadata` replaces the stored object whole with the keys it sends that
// are not "" (so `{}` clears it, and an absent `metadata` leaves it as it
// was; null is 422 like any null field).
package metadata

import (
	"unicode/utf8"

	"github.com/loyalty-platform/platform/shared/platform/apierr"
)

// Bounds of a metadata object.
const (
	MaxKeys     = 50
	MaxKeyLen   = 40
	MaxValueLen = 500
)

// Field is the name of the metadata field in a body and in errors.
const Field = "metadata"

// Metadata is a resource's client-owned fields.
type Metadata map[string]string

// Clean validates m and returns what is stored: the keys whose value is
// not "" (nil when none is left). A violation is 422 VALIDATION_FAILED
// naming `metadata` or `metadata.<key>`.
func (m Metadata) Clean() (Metadata, error) {
	if len(m) > MaxKeys {
		return nil, apierr.Invalid(Field, "at most %d keys (%d given)", MaxKeys, len(m))
	}
	var out Metadata
	for k, v := range m {
		if err := CheckKey(k); err != nil {
			return nil, err
		}
		if !utf8.ValidString(v) || utf8.RuneCountInString(v) > MaxValueLen {
			return nil, apierr.Invalid(Field+"."+k, "must be a string of at most %d characters", MaxValueLen)
		}
		if v == "" {
			continue
		}
		if out == nil {
			out = Metadata{}
		}
		out[k] = v
	}
	return out, nil
}

// CheckKey checks a metadata key: 1 to MaxKeyLen characters.
func CheckKey(k string) error {
	if k == "" {
		return apierr.Invalid(Field, "a key must not be empty")
	}
	if !utf8.ValidString(k) || utf8.RuneCountInString(k) > MaxKeyLen {
		return apierr.Invalid(Field+"."+prefix(k), "a key must be 1 to %d characters", MaxKeyLen)
	}
	return nil
}

// Out is m as an answer shows it: {} rather than null when empty.
func (m Metadata) Out() Metadata {
	if m == nil {
		return Metadata{}
	}
	return m
}

// prefix is the first MaxKeyLen characters of a too-long key, for its
// error message (whole characters; invalid bytes become U+FFFD).
func prefix(k string) string {
	r := []rune(k)
	return string(r[:min(len(r), MaxKeyLen)])
}

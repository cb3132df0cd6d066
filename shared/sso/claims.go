package sso

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
)

// claims are the claims Verify reads beyond those go-oidc parses. They are
// parsed leniently: providers differ in types (Apple sends email_verified
// as the string "true"), and a claim of an unexpected type is read as
// absent rather than failing an otherwise valid token.
type claims struct {
	Email           lenientString `json:"email"`
	EmailVerified   lenientBool   `json:"email_verified"`
	GivenName       lenientString `json:"given_name"`
	FamilyName      lenientString `json:"family_name"`
	Name            lenientString `json:"name"`
	AuthorizedParty lenientString `json:"azp"`
	NotBefore       *lenientTime  `json:"nbf"`
}

// lenientString is a JSON string; any other JSON value reads as "".
type lenientString string

// UnmarshalJSON implements json.Unmarshaler.
func (s *lenientString) UnmarshalJSON(data []byte) error {
	var v string
	if err := json.Unmarshal(data, &v); err != nil {
		v = ""
	}
	*s = lenientString(v)
	return nil
}

// lenientBool is a JSON boolean or the string "true" or "false" (any case);
// any other value reads as false.
type lenientBool bool

// UnmarshalJSON implements json.Unmarshaler.
func (b *lenientBool) UnmarshalJSON(data []byte) error {
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		return nil
	}
	switch t := v.(type) {
	case bool:
		*b = lenientBool(t)
	case string:
		*b = lenientBool(strings.EqualFold(strings.TrimSpace(t), "true"))
	default:
		*b = false
	}
	return nil
}

// lenientTime is a JSON NumericDate (seconds since the epoch, possibly
// fractional, possibly sent as a string); any other value reads as 0.
type lenientTime float64

// UnmarshalJSON implements json.Unmarshaler.
func (t *lenientTime) UnmarshalJSON(data []byte) error {
	s := string(bytes.Trim(data, `"`))
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		f = 0
	}
	*t = lenientTime(f)
	return nil
}

package sso

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"time"
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

// registered are the registered claims go-oidc checks, parsed from the
// unverified payload exactly as go-oidc parses them (its idToken type is
// unexported): the same Go types and the same JSON decoding, so that
// rejectOffline judges the same values the full verification judges and
// never refuses a token go-oidc would accept. A payload these types cannot
// hold, go-oidc cannot hold either (it fails with "failed to unmarshal
// claims").
type registered struct {
	Issuer    string           `json:"iss"`
	Subject   string           `json:"sub"`
	Audience  oidcAudience     `json:"aud"`
	Expiry    oidcNumericDate  `json:"exp"`
	IssuedAt  oidcNumericDate  `json:"iat"`
	NotBefore *oidcNumericDate `json:"nbf"`
}

// oidcAudience is go-oidc's audience: a JSON string or array of strings.
type oidcAudience []string

// UnmarshalJSON implements json.Unmarshaler, as go-oidc's audience does.
func (a *oidcAudience) UnmarshalJSON(b []byte) error {
	var s string
	if json.Unmarshal(b, &s) == nil {
		*a = oidcAudience{s}
		return nil
	}
	var auds []string
	if err := json.Unmarshal(b, &auds); err != nil {
		return err
	}
	*a = auds
	return nil
}

// oidcNumericDate is go-oidc's jsonTime: a JSON number (or numeric
// string) of seconds since the epoch, a fraction truncated.
type oidcNumericDate time.Time

// UnmarshalJSON implements json.Unmarshaler, as go-oidc's jsonTime does.
func (d *oidcNumericDate) UnmarshalJSON(b []byte) error {
	var n json.Number
	if err := json.Unmarshal(b, &n); err != nil {
		return err
	}
	unix, err := n.Int64()
	if err != nil {
		f, ferr := n.Float64()
		if ferr != nil {
			return ferr
		}
		unix = int64(f)
	}
	*d = oidcNumericDate(time.Unix(unix, 0))
	return nil
}

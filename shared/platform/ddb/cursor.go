package ddb

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/loyalty-platform/platform/shared/platform/apierr"
)

// Cursor turns DynamoDB LastEvaluatedKeys into opaque page keys and back. A
// key is base64url(JSON) plus an HMAC over the tenant, the query scope and
// the JSON, so a key is useless in another tenant or another query and cannot
// be forged.
type Cursor struct {
	secret []byte
}

// NewCursor returns a Cursor signing with secret.
func NewCursor(secret []byte) Cursor { return Cursor{secret: secret} }

// Encode returns the page key for lek, or "" when lek is empty.
func (c Cursor) Encode(tenant, scope string, lek map[string]types.AttributeValue) (string, error) {
	if len(lek) == 0 {
		return "", nil
	}
	plain := map[string]string{}
	for k, v := range lek {
		switch t := v.(type) {
		case *types.AttributeValueMemberS:
			plain[k] = "S:" + t.Value
		case *types.AttributeValueMemberN:
			plain[k] = "N:" + t.Value
		default:
			return "", fmt.Errorf("encode page key: unsupported key attribute %s", k)
		}
	}
	body, err := json.Marshal(plain)
	if err != nil {
		return "", fmt.Errorf("encode page key: %w", err)
	}
	enc := base64.RawURLEncoding.EncodeToString(body)
	return enc + "." + c.sign(tenant, scope, enc), nil
}

// Decode checks and decodes a page key made by Encode for the same tenant and
// scope. An empty key is a nil map. A bad key is VALIDATION_FAILED.
func (c Cursor) Decode(tenant, scope, key string) (map[string]types.AttributeValue, error) {
	if key == "" {
		return nil, nil
	}
	bad := apierr.Invalid("startKey", "is not a key returned by this query")
	enc, sig, ok := strings.Cut(key, ".")
	if !ok || !hmac.Equal([]byte(sig), []byte(c.sign(tenant, scope, enc))) {
		return nil, bad
	}
	body, err := base64.RawURLEncoding.DecodeString(enc)
	if err != nil {
		return nil, bad
	}
	plain := map[string]string{}
	if err := json.Unmarshal(body, &plain); err != nil {
		return nil, bad
	}
	out := make(map[string]types.AttributeValue, len(plain))
	for k, v := range plain {
		switch {
		case strings.HasPrefix(v, "S:"):
			out[k] = &types.AttributeValueMemberS{Value: v[2:]}
		case strings.HasPrefix(v, "N:"):
			out[k] = &types.AttributeValueMemberN{Value: v[2:]}
		default:
			return nil, bad
		}
	}
	return out, nil
}

func (c Cursor) sign(tenant, scope, enc string) string {
	m := hmac.New(sha256.New, c.secret)
	m.Write([]byte(tenant))
	m.Write([]byte{0})
	m.Write([]byte(scope))
	m.Write([]byte{0})
	m.Write([]byte(enc))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil)[:18])
}

// EncodeOffset returns the page key for position offset of an in-memory,
// sorted result (small sets paged without a DynamoDB key).
func (c Cursor) EncodeOffset(tenant, scope string, offset int) (string, error) {
	return c.Encode(tenant, scope, map[string]types.AttributeValue{"o": &types.AttributeValueMemberN{Value: strconv.Itoa(offset)}})
}

// DecodeOffset checks a key made by EncodeOffset for the same tenant and
// scope and returns its position; an empty key is 0. A bad key is
// VALIDATION_FAILED.
func (c Cursor) DecodeOffset(tenant, scope, key string) (int, error) {
	if key == "" {
		return 0, nil
	}
	k, err := c.Decode(tenant, scope, key)
	if err != nil {
		return 0, err
	}
	n, ok := k["o"].(*types.AttributeValueMemberN)
	offset, convErr := 0, error(nil)
	if ok {
		offset, convErr = strconv.Atoi(n.Value)
	}
	if !ok || convErr != nil || offset < 0 {
		return 0, apierr.Invalid("startKey", "is not a key returned by this query")
	}
	return offset, nil
}

// PlainKey returns a key (string and number attributes) as text, unsigned:
// for keys a job keeps in its own checkpoint, never handed to a client.
func PlainKey(k Item) (string, error) {
	if len(k) == 0 {
		return "", nil
	}
	plain := map[string]string{}
	for name, v := range k {
		switch t := v.(type) {
		case *types.AttributeValueMemberS:
			plain[name] = "S:" + t.Value
		case *types.AttributeValueMemberN:
			plain[name] = "N:" + t.Value
		default:
			return "", fmt.Errorf("encode key: unsupported attribute %s", name)
		}
	}
	b, err := json.Marshal(plain)
	return string(b), err
}

// ParsePlainKey reads a key written by PlainKey ("" is nil).
func ParsePlainKey(s string) (Item, error) {
	if s == "" {
		return nil, nil
	}
	plain := map[string]string{}
	if err := json.Unmarshal([]byte(s), &plain); err != nil {
		return nil, fmt.Errorf("decode key: %w", err)
	}
	out := Item{}
	for name, v := range plain {
		switch {
		case strings.HasPrefix(v, "S:"):
			out[name] = &types.AttributeValueMemberS{Value: v[2:]}
		case strings.HasPrefix(v, "N:"):
			out[name] = &types.AttributeValueMemberN{Value: v[2:]}
		default:
			return nil, fmt.Errorf("decode key: attribute %s", name)
		}
	}
	return out, nil
}

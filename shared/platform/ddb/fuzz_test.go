package ddb_test

import (
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/loyalty-platform/platform/shared/platform/apierr"
	"github.com/loyalty-platform/platform/shared/platform/ddb"
)

var fuzzCursor = ddb.NewCursor([]byte("secret-secret-secret-secret-1234"))

// FuzzCursorDecode: any startKey a client sends decodes, or is refused
// with VALIDATION_FAILED; never a panic, never another error. A key that
// decodes re-encodes to a key that decodes to the same map (so a
// forged key cannot pass: only signed ones decode).
func FuzzCursorDecode(f *testing.F) {
	good, _ := fuzzCursor.Encode("t1", "users", map[string]types.AttributeValue{
		"pk": &types.AttributeValueMemberS{Value: "t1#USERS"}, "n": &types.AttributeValueMemberN{Value: "42"},
	})
	off, _ := fuzzCursor.EncodeOffset("t1", "users", 7)
	for _, s := range []string{good, off, "", ".", "abc", "abc.def", good + "x", strings.Replace(good, ".", "..", 1),
		"e30.AAAA", "bnVsbA.x", "%%%.%%%"} {
		f.Add("t1", "users", s)
	}
	f.Fuzz(func(t *testing.T, tenant, scope, key string) {
		m, err := fuzzCursor.Decode(tenant, scope, key)
		if err != nil {
			if apierr.CodeOf(err) != apierr.ValidationFailed {
				t.Fatalf("Decode(%q) = %v, want VALIDATION_FAILED", key, err)
			}
		} else if key != "" {
			again, err := fuzzCursor.Encode(tenant, scope, m)
			if err != nil {
				t.Fatalf("re-encode %v: %v", m, err)
			}
			back, err := fuzzCursor.Decode(tenant, scope, again)
			if err != nil || !reflect.DeepEqual(back, m) {
				t.Fatalf("round trip of %v: %v, %v", m, back, err)
			}
		}
		n, err := fuzzCursor.DecodeOffset(tenant, scope, key)
		if err != nil && apierr.CodeOf(err) != apierr.ValidationFailed {
			t.Fatalf("DecodeOffset(%q) = %v", key, err)
		}
		if n < 0 {
			t.Fatalf("DecodeOffset(%q) = %d", key, n)
		}
	})
}

// FuzzCursorRoundTrip: every key map of string and number attributes
// encodes to a page key that decodes to the same map for the same tenant
// and scope, and to VALIDATION_FAILED for any other.
func FuzzCursorRoundTrip(f *testing.F) {
	f.Add("t1", "users", "pk", "t1#USERS", "n", "42")
	f.Add("", "", "", "", "o", "-1")
	f.Add("t\x00", "s.x", "a.b", "S:x", "N:1", "1e9")
	f.Fuzz(func(t *testing.T, tenant, scope, k1, v1, k2, n string) {
		for _, s := range []string{k1, v1, k2, n} {
			if !utf8.ValidString(s) {
				return // DynamoDB keys are UTF-8 strings
			}
		}
		lek := map[string]types.AttributeValue{k1: &types.AttributeValueMemberS{Value: v1}}
		if k2 != k1 {
			lek[k2] = &types.AttributeValueMemberN{Value: n}
		}
		key, err := fuzzCursor.Encode(tenant, scope, lek)
		if err != nil {
			t.Fatalf("Encode(%v): %v", lek, err)
		}
		got, err := fuzzCursor.Decode(tenant, scope, key)
		if err != nil || !reflect.DeepEqual(got, lek) {
			t.Fatalf("Decode(Encode(%v)) = %v, %v", lek, got, err)
		}
		if _, err := fuzzCursor.Decode(tenant+"x", scope, key); apierr.CodeOf(err) != apierr.ValidationFailed {
			t.Fatalf("the key of tenant %q decodes for another tenant: %v", tenant, err)
		}
		if _, err := fuzzCursor.Decode(tenant, scope+"x", key); apierr.CodeOf(err) != apierr.ValidationFailed {
			t.Fatalf("the key of scope %q decodes for another scope: %v", scope, err)
		}
	})
}

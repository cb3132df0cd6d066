package ddb_test

import (
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/loyalty-platform/platform/shared/platform/apierr"
	"github.com/loyalty-platform/platform/shared/platform/ddb"
)

func TestCursor(t *testing.T) {
	c := ddb.NewCursor([]byte("secret-secret-secret-secret-1234"))
	lek := map[string]types.AttributeValue{
		"pk": &types.AttributeValueMemberS{Value: "t1#USERS"},
		"sk": &types.AttributeValueMemberS{Value: "2026-01-01T00:00:00.000Z#abc"},
		"n":  &types.AttributeValueMemberN{Value: "42"},
	}
	key, err := c.Encode("t1", "users", lek)
	if err != nil {
		t.Fatal(err)
	}
	t.Run("RoundTrip", func(t *testing.T) {
		got, err := c.Decode("t1", "users", key)
		if err != nil {
			t.Fatal(err)
		}
		if got["sk"].(*types.AttributeValueMemberS).Value != "2026-01-01T00:00:00.000Z#abc" || got["n"].(*types.AttributeValueMemberN).Value != "42" {
			t.Errorf("decoded = %v", got)
		}
	})
	t.Run("EmptyKeys", func(t *testing.T) {
		if k, _ := c.Encode("t1", "users", nil); k != "" {
			t.Errorf("empty LEK encoded as %q", k)
		}
		if m, err := c.Decode("t1", "users", ""); m != nil || err != nil {
			t.Errorf("empty key decoded as %v, %v", m, err)
		}
	})
	tampered := []byte(key)
	tampered[3] ^= 1
	rejected := []struct {
		name, tenant, scope, key string
	}{
		{"OtherTenant", "t2", "users", key},
		{"OtherScope", "t1", "users-sorted", key},
		{"Tampered", "t1", "users", string(tampered)},
		{"NoSignature", "t1", "users", key[:len(key)-25]},
		{"Garbage", "t1", "users", "not-a-key"},
		{"OtherSecret", "t1", "users", func() string {
			k, _ := ddb.NewCursor([]byte("another-secret-another-secret-12")).Encode("t1", "users", lek)
			return k
		}()},
	}
	for _, tc := range rejected {
		t.Run(tc.name, func(t *testing.T) {
			_, err := c.Decode(tc.tenant, tc.scope, tc.key)
			if got := apierr.CodeOf(err); got != apierr.ValidationFailed {
				t.Errorf("code = %v, want VALIDATION_FAILED (err %v)", got, err)
			}
		})
	}
	t.Run("Offset", func(t *testing.T) {
		k, err := c.EncodeOffset("t1", "lookup", 200)
		if err != nil {
			t.Fatal(err)
		}
		got, err := c.DecodeOffset("t1", "lookup", k)
		if err != nil || got != 200 {
			t.Errorf("offset = %d, %v; want 200", got, err)
		}
		if _, err := c.DecodeOffset("t1", "lookup", key); apierr.CodeOf(err) != apierr.ValidationFailed {
			t.Errorf("a key of another query decoded as an offset: %v", err)
		}
	})
}

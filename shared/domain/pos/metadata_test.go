package pos_test

import (
	"strings"
	"testing"

	ts "github.com/loyalty-platform/platform/shared/testkit"
)

// TestMetadata checks the POS's own fields on transactions and orders:
// stored and returned as sent, a PUT replacing them whole ("" keys not
// stored), every bound 422 naming the field with nothing written, and an
// unknown top-level field pointing to metadata.
func TestMetadata(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	uid := shopper(t, h, "Meta")
	many := map[string]any{}
	for i := 0; i < 51; i++ {
		many[strings.Repeat("k", 1+i%40)+string(rune('a'+i%26))+string(rune('a'+i/26))] = "v"
	}
	txn := func(code string, meta any) map[string]any {
		b := map[string]any{"shortCode": code, "totalPrice": 1, "paymentType": "CASH"}
		if meta != nil {
			b["metadata"] = meta
		}
		return b
	}
	t.Run("TransactionRoundTrip", func(t *testing.T) {
		sent := map[string]any{"till": "7", "receipt": "R-000123", "note": strings.Repeat("é", 500), strings.Repeat("k", 40): "x", "drop": ""}
		m := h.Do("POST", "/users/"+uid+"/transactions", txn("M-1", sent), h.Admin()).Expect(t, 201, "").Map(t)
		found := h.Do("GET", "/transactions?shortCode=M-1", nil, h.Admin()).Expect(t, 200, "").Map(t)
		for _, got := range []map[string]any{m, found} {
			md, _ := got["metadata"].(map[string]any)
			if len(md) != 4 || md["till"] != "7" || md["receipt"] != "R-000123" || md["drop"] != nil {
				t.Errorf("metadata = %v", got["metadata"])
			}
		}
		// The same body again is the same transaction.
		h.Do("POST", "/users/"+uid+"/transactions", txn("M-1", sent), h.Admin()).Expect(t, 201, "")
		h.Do("POST", "/users/"+uid+"/transactions", txn("M-1", map[string]any{"till": "8"}), h.Admin()).Expect(t, 409, "CONFLICT")
	})
	t.Run("NoMetadata", func(t *testing.T) {
		m := h.Do("POST", "/users/"+uid+"/transactions", txn("M-2", nil), h.Admin()).Expect(t, 201, "").Map(t)
		if _, ok := m["metadata"]; ok {
			t.Errorf("metadata without any = %v", m["metadata"])
		}
	})
	refused := []struct {
		name  string
		meta  any
		field string
	}{
		{"TooManyKeys", many, "metadata: "},
		{"KeyTooLong", map[string]any{strings.Repeat("k", 41): "v"}, "metadata.kkkk"},
		{"EmptyKey", map[string]any{"": "v"}, "metadata"},
		{"ValueTooLong", map[string]any{"k": strings.Repeat("v", 501)}, "metadata.k: "},
		{"NumberValue", map[string]any{"k": 1}, "metadata.k"},
		{"ObjectValue", map[string]any{"k": map[string]any{"a": "b"}}, "metadata.k"},
		{"NotObject", []string{"a"}, "metadata"},
	}
	for _, tc := range refused {
		t.Run("Transaction"+tc.name, func(t *testing.T) {
			r := h.Do("POST", "/users/"+uid+"/transactions", txn("BAD-"+tc.name, tc.meta), h.Admin()).Expect(t, 422, "VALIDATION_FAILED")
			if msg, _ := r.Map(t)["message"].(string); !strings.HasPrefix(msg, tc.field) {
				t.Errorf("message = %q, want it to name %s", msg, tc.field)
			}
			h.Do("GET", "/transactions?shortCode=BAD-"+tc.name, nil, h.Admin()).Expect(t, 404, "NOT_FOUND")
		})
	}
	t.Run("UnknownField", func(t *testing.T) {
		b := txn("M-3", nil)
		b["till"] = "7"
		r := h.Do("POST", "/users/"+uid+"/transactions", b, h.Admin()).Expect(t, 422, "VALIDATION_FAILED")
		if msg, _ := r.Map(t)["message"].(string); !strings.Contains(msg, "till: unknown field") || !strings.Contains(msg, "metadata") {
			t.Errorf("message = %q", msg)
		}
	})
	o := h.Do("POST", "/users/"+uid+"/orders", map[string]any{"metadata": map[string]any{"table": "12", "server": "Ann"}}, h.Admin()).Expect(t, 201, "").Map(t)
	oid := o["_id"].(string)
	if md, _ := o["metadata"].(map[string]any); md["table"] != "12" || md["server"] != "Ann" {
		t.Fatalf("order metadata = %v", o["metadata"])
	}
	updates := []struct {
		name string
		body map[string]any
		want map[string]any
	}{
		{"OtherFieldKeeps", map[string]any{"totalPrice": 3}, map[string]any{"table": "12", "server": "Ann"}},
		{"ReplacesWhole", map[string]any{"metadata": map[string]any{"table": "14", "server": ""}}, map[string]any{"table": "14"}},
		{"EmptyClears", map[string]any{"metadata": map[string]any{}}, nil},
	}
	for _, tc := range updates {
		t.Run("Order"+tc.name, func(t *testing.T) {
			h.Do("PUT", "/orders/"+oid, tc.body, h.Admin()).Expect(t, 200, "")
			got, _ := h.Do("GET", "/orders/"+oid, nil, h.Admin()).Expect(t, 200, "").Map(t)["metadata"].(map[string]any)
			if len(got) != len(tc.want) {
				t.Fatalf("metadata = %v, want %v", got, tc.want)
			}
			for k, v := range tc.want {
				if got[k] != v {
					t.Errorf("metadata = %v, want %v", got, tc.want)
				}
			}
		})
	}
	t.Run("OrderRefusedChangesNothing", func(t *testing.T) {
		h.Do("PUT", "/orders/"+oid, map[string]any{"metadata": map[string]any{"a": "b"}}, h.Admin()).Expect(t, 200, "")
		h.Do("PUT", "/orders/"+oid, map[string]any{"totalPrice": 9, "metadata": many}, h.Admin()).Expect(t, 422, "VALIDATION_FAILED")
		h.Do("PUT", "/orders/"+oid, map[string]any{"totalPrice": 9, "metadata": nil}, h.Admin()).Expect(t, 422, "VALIDATION_FAILED")
		got := h.Do("GET", "/orders/"+oid, nil, h.Admin()).Expect(t, 200, "").Map(t)
		if md, _ := got["metadata"].(map[string]any); len(md) != 1 || md["a"] != "b" || got["totalPrice"] == 9.0 {
			t.Errorf("order after a refused PUT = %v", got)
		}
	})
	t.Run("OtherTenant", func(t *testing.T) {
		other, key := h.NewTenant(h.Tenant.Settings)
		foreign := ts.Headers{"x-service-auth-token", key, "x-application-id", other.ID}
		h.Do("GET", "/orders/"+oid, nil, foreign).Expect(t, 404, "NOT_FOUND")
		h.Do("GET", "/transactions?shortCode=M-1", nil, foreign).Expect(t, 404, "NOT_FOUND")
	})
}

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

// TestMetadataSearch checks GET /transactions?metadata[key]=value: the
// tenant's transactions with that exact value, newest first and paged,
// refunds shown as they are now, and every malformed search 422.
func TestMetadataSearch(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	uid := shopper(t, h, "Search")
	create := func(code string, meta map[string]any) string {
		t.Helper()
		b := map[string]any{"shortCode": code, "totalPrice": 2, "paymentType": "CASH"}
		if meta != nil {
			b["metadata"] = meta
		}
		return h.Do("POST", "/users/"+uid+"/transactions", b, h.Admin()).Expect(t, 201, "").Map(t)["_id"].(string)
	}
	first := create("S-1", map[string]any{"till": "7", "shift": "am"})
	second := create("S-2", map[string]any{"till": "7"})
	create("S-3", map[string]any{"till": "8", "note": "till 7"})
	create("S-4", nil)
	h.Do("PUT", "/transactions/"+first+"?refund=true", nil, h.Admin()).Expect(t, 200, "")
	ids := func(page map[string]any) []string {
		var out []string
		for _, it := range page["items"].([]any) {
			out = append(out, it.(map[string]any)["_id"].(string))
		}
		return out
	}
	t.Run("NewestFirst", func(t *testing.T) {
		page := h.Do("GET", "/transactions?metadata[till]=7", nil, h.Admin()).Expect(t, 200, "").Map(t)
		got, want := ids(page), []string{second, first}
		if strings.Join(got, ",") != strings.Join(want, ",") {
			t.Fatalf("ids = %v, want %v", got, want)
		}
		if refunded := page["items"].([]any)[1].(map[string]any)["refunded"]; refunded != true {
			t.Errorf("the refunded transaction shows refunded = %v", refunded)
		}
	})
	t.Run("Paged", func(t *testing.T) {
		p1 := h.Do("GET", "/transactions?metadata%5Btill%5D=7&limit=1", nil, h.Admin()).Expect(t, 200, "").Map(t)
		next, _ := p1["page"].(map[string]any)["nextKey"].(string)
		if got := ids(p1); len(got) != 1 || got[0] != second || next == "" {
			t.Fatalf("page 1 = %v, nextKey %q", got, next)
		}
		p2 := h.Do("GET", "/transactions?metadata[till]=7&limit=1&startKey="+next, nil, h.Admin()).Expect(t, 200, "").Map(t)
		if got := ids(p2); len(got) != 1 || got[0] != first || p2["page"].(map[string]any)["nextKey"] != nil {
			t.Fatalf("page 2 = %v %v", got, p2["page"])
		}
	})
	t.Run("Exact", func(t *testing.T) {
		for _, q := range []string{"metadata[till]=77", "metadata[Till]=7", "metadata[shift]=AM", "metadata[note]=till"} {
			if got := ids(h.Do("GET", "/transactions?"+q, nil, h.Admin()).Expect(t, 200, "").Map(t)); len(got) != 0 {
				t.Errorf("%s = %v, want none", q, got)
			}
		}
	})
	for _, tc := range []struct{ name, query, field string }{
		{"TwoKeys", "metadata[till]=7&metadata[shift]=am", "metadata: "},
		{"TwoValues", "metadata[till]=7&metadata[till]=8", "metadata: "},
		{"EmptyValue", "metadata[till]=", "metadata[till]: "},
		{"EmptyKey", "metadata[]=7", "metadata: "},
		{"KeyTooLong", "metadata[" + strings.Repeat("k", 41) + "]=7", "metadata.kkkk"},
		{"NoBracket", "metadata[till=7", "metadata: "},
		{"WithShortCode", "metadata[till]=7&shortCode=S-2", "shortCode: "},
		{"LimitTooLarge", "metadata[till]=7&limit=101", "limit: "},
		{"BadStartKey", "metadata[till]=7&startKey=abc", "startKey"},
	} {
		t.Run("ErrValidation"+tc.name, func(t *testing.T) {
			r := h.Do("GET", "/transactions?"+tc.query, nil, h.Admin()).Expect(t, 422, "")
			if msg, _ := r.Map(t)["message"].(string); !strings.HasPrefix(msg, tc.field) {
				t.Errorf("message = %q, want it to name %s", msg, tc.field)
			}
		})
	}
	t.Run("OtherTenant", func(t *testing.T) {
		other, key := h.NewTenant(h.Tenant.Settings)
		foreign := ts.Headers{"x-service-auth-token", key, "x-application-id", other.ID}
		if got := ids(h.Do("GET", "/transactions?metadata[till]=7", nil, foreign).Expect(t, 200, "").Map(t)); len(got) != 0 {
			t.Errorf("another tenant finds %v", got)
		}
	})
	t.Run("UserRefused", func(t *testing.T) {
		_, token, _ := h.ActiveUser(t, "Nosy", "User")
		h.Do("GET", "/transactions?metadata[till]=7", nil, h.Anon(), ts.Token(token)).Expect(t, 401, "")
	})
}

// TestCreditMetadata checks a credit's metadata: answered, kept on the
// BALANCE credit's ledger entry and on the credit's action.
func TestCreditMetadata(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	uid := shopper(t, h, "Credit")
	perkID := newPerk(t, h, nil)
	for _, tc := range []struct {
		name string
		body map[string]any
		act  string
	}{
		{"Balance", map[string]any{"type": "BALANCE", "amount": 5, "metadata": map[string]any{"ticket": "Z-9", "drop": ""}}, "BALANCE_CREDITED"},
		{"Points", map[string]any{"type": "POINTS", "amount": 5, "perkId": perkID, "metadata": map[string]any{"ticket": "Z-9"}}, "AWARD_GRANTED"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := h.Do("POST", "/users/"+uid+"/credits", tc.body, h.Admin()).Expect(t, 200, "").Map(t)
			if md, _ := got["metadata"].(map[string]any); len(md) != 1 || md["ticket"] != "Z-9" {
				t.Errorf("answer metadata = %v", got["metadata"])
			}
			found := false
			for _, a := range actionsOf(t, h, uid, tc.act) {
				md, _ := a.Metadata["metadata"].(map[string]any)
				found = found || md["ticket"] == "Z-9"
			}
			if !found {
				t.Errorf("no %s action has the credit's metadata", tc.act)
			}
		})
	}
	t.Run("LedgerEntry", func(t *testing.T) {
		items := h.Do("GET", "/users/"+uid+"/balance/ledger", nil, h.Admin()).Expect(t, 200, "").Map(t)["items"].([]any)
		found := false
		for _, it := range items {
			md, _ := it.(map[string]any)["cause"].(map[string]any)["metadata"].(map[string]any)
			found = found || md["ticket"] == "Z-9"
		}
		if !found {
			t.Errorf("no ledger entry has the credit's metadata: %v", items)
		}
	})
	t.Run("ErrValidation", func(t *testing.T) {
		h.Do("POST", "/users/"+uid+"/credits", map[string]any{"type": "BALANCE", "amount": 5, "metadata": map[string]any{"k": 1}}, h.Admin()).Expect(t, 422, "VALIDATION_FAILED")
	})
}

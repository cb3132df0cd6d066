package pos_test

import (
	"slices"
	"testing"

	ts "github.com/loyalty-platform/platform/shared/testkit"
)

// TestWalletPaymentTypes checks that the wallet payment types and their
// older names are accepted, stored and returned as sent, and that an
// action list's paymentType filter treats a name and its alias as one.
func TestWalletPaymentTypes(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	uid := shopper(t, h, "Wally")
	for _, pt := range []string{"APPLE_PAY", "GOOGLE_PAY", "WALLET_A_PAY", "WALLET_B_PAY", "CASH"} {
		t.Run("Create"+pt, func(t *testing.T) {
			code := "W-" + pt
			m := h.Do("POST", "/users/"+uid+"/transactions", map[string]any{"shortCode": code, "totalPrice": 2, "paymentType": pt}, h.Admin()).Expect(t, 201, "").Map(t)
			if m["paymentType"] != pt {
				t.Errorf("created paymentType = %v, want %s", m["paymentType"], pt)
			}
			if got := h.Do("GET", "/transactions?shortCode="+code, nil, h.Admin()).Expect(t, 200, "").Map(t)["paymentType"]; got != pt {
				t.Errorf("found paymentType = %v, want %s", got, pt)
			}
		})
	}
	tests := []struct {
		name, query string
		want        []string
	}{
		{"Apple", "paymentType=APPLE_PAY", []string{"APPLE_PAY", "WALLET_A_PAY"}},
		{"AliasA", "paymentType.in=WALLET_A_PAY", []string{"APPLE_PAY", "WALLET_A_PAY"}},
		{"Google", "paymentType=GOOGLE_PAY", []string{"GOOGLE_PAY", "WALLET_B_PAY"}},
		{"BothWallets", "paymentType=APPLE_PAY,WALLET_B_PAY", []string{"APPLE_PAY", "GOOGLE_PAY", "WALLET_A_PAY", "WALLET_B_PAY"}},
		{"NotWalletB", "paymentType.nin=WALLET_B_PAY", []string{"APPLE_PAY", "CASH", "WALLET_A_PAY"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, a := range h.Do("GET", "/users/"+uid+"/actions?type=TRANSACTION_CREATED&"+tc.query, nil, h.Admin()).Expect(t, 200, "").Map(t)["actions"].([]any) {
				got = append(got, a.(map[string]any)["metadata"].(map[string]any)["paymentType"].(string))
			}
			slices.Sort(got)
			if !slices.Equal(got, tc.want) {
				t.Errorf("payment types = %v, want %v", got, tc.want)
			}
		})
	}
	h.Do("POST", "/users/"+uid+"/transactions", map[string]any{"shortCode": "W-X", "totalPrice": 2, "paymentType": "WALLET_C_PAY"}, h.Admin()).Expect(t, 422, "VALIDATION_FAILED")
	h.Do("GET", "/actions?paymentType=SAMSUNG_PAY", nil, h.Admin()).Expect(t, 422, "VALIDATION_FAILED")
}

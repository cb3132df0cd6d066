package sdk_test

import (
	"context"
	"errors"
	"net/http"
	"os"
	"strconv"
	"testing"
	"time"

	sdk "github.com/loyalty-platform/platform/sdk/go"
)

// stack returns a client of the running stack the environment names
// (LOYALTY_BASE_URL, LOYALTY_TENANT, LOYALTY_SERVICE_TOKEN; the platform's
// test localstack TestSDKs sets them), acting as the tenant's admin, or
// skips the test.
func stack(t *testing.T) *sdk.ClientWithResponses {
	t.Helper()
	base, tenant, key := os.Getenv("LOYALTY_BASE_URL"), os.Getenv("LOYALTY_TENANT"), os.Getenv("LOYALTY_SERVICE_TOKEN")
	if base == "" || tenant == "" || key == "" {
		t.Skip("set LOYALTY_BASE_URL, LOYALTY_TENANT and LOYALTY_SERVICE_TOKEN to a running stack (make run)")
	}
	c, err := sdk.New(base, sdk.WithTenant(tenant), sdk.WithServiceKey(key))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// check fails the test on a call's error or an unsuccessful answer.
func check(t *testing.T, what string, resp *http.Response, body []byte, err error) {
	t.Helper()
	if err := sdk.Check(resp, body, err); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// TestPayAtPOS walks README's "Pay at the till" through the Go client: a
// rule earning a point per unit of the order value, an order and its
// payment (each with an Idempotency-Key), completion with the points
// earned, a redemption, and the payment's refund taking back what is left.
func TestPayAtPOS(t *testing.T) {
	c := stack(t)
	ctx := context.Background()
	run := strconv.FormatInt(time.Now().UnixNano(), 36)

	user, err := c.CreateUserWithResponse(ctx, &sdk.CreateUserParams{AutoActivate: sdk.Ptr(true)}, sdk.CreateUserJSONRequestBody{
		FirstName: "Pos", LastName: "Tester",
		Credentials: []sdk.CredentialCreate{{Provider: sdk.Ptr(sdk.CredentialCreateProviderEMAIL), Id: "pos-" + run + "@example.com"}},
	})
	check(t, "create user", user.HTTPResponse, user.Body, err)
	userID := user.JSON201.Id

	loc, err := c.CreateLocationWithResponse(ctx, &sdk.CreateLocationParams{}, sdk.CreateLocationJSONRequestBody{
		Title: "Go Till " + run, Geo: sdk.LocationGeo{-0.1337, 51.5136},
	})
	check(t, "create location", loc.HTTPResponse, loc.Body, err)
	locationID := loc.JSON201.UnderscoreId

	perk, err := c.CreatePerkWithResponse(ctx, &sdk.CreatePerkParams{}, sdk.CreatePerkJSONRequestBody{
		Title: "Points", Template: sdk.PerkCreateInputTemplateSTAMPCARD, Points: &sdk.PointRules{Initial: sdk.Ptr(0)},
	})
	check(t, "create perk", perk.HTTPResponse, perk.Body, err)
	perkID := perk.JSON201.UnderscoreId
	awardID := userID + "-" + perkID

	rule, err := c.CreateRuleWithResponse(ctx, &sdk.CreateRuleParams{}, sdk.CreateRuleJSONRequestBody{
		Title: "1 point per pound", Trigger: sdk.RuleTriggerORDERCOMPLETED,
		Conditions: &[]sdk.RuleCondition{{Path: "context.location._id", Operator: sdk.RuleConditionOperatorEQ, Value: locationID}},
		Effects:    []sdk.RuleEffect{{Type: sdk.RuleEffectTypeGRANTPERK, PerkId: &perkID, PointsPerUnit: sdk.Ptr(1.0)}},
	})
	check(t, "create rule", rule.HTTPResponse, rule.Body, err)

	order, err := c.CreateOrderWithResponse(ctx, userID, &sdk.CreateOrderParams{IdempotencyKey: sdk.Ptr(sdk.NewKey())}, sdk.CreateOrderJSONRequestBody{
		LocationId: &locationID, Scenario: sdk.Ptr("PAYATPOS"), ShortCode: sdk.Ptr("G" + run),
		Basket: &[]sdk.BasketItem{{Id: "latte", Category: sdk.Ptr("coffee"), Title: sdk.Ptr("Latte")}},
	})
	check(t, "create order", order.HTTPResponse, order.Body, err)
	orderID := order.JSON201.UnderscoreId

	// The payment, sent twice with the same Idempotency-Key: the second
	// answer is the first one replayed.
	payment := sdk.CreateUserTransactionJSONRequestBody{
		OrderId: &orderID, ShortCode: "G" + run + "-P1", TotalPrice: 24, PaymentType: sdk.PaymentTypeCARDATPOS, LocationId: &locationID,
	}
	key := sdk.NewKey()
	var txnID string
	for i := range 2 {
		txn, err := c.CreateUserTransactionWithResponse(ctx, userID, &sdk.CreateUserTransactionParams{IdempotencyKey: &key}, payment)
		check(t, "create transaction", txn.HTTPResponse, txn.Body, err)
		if i == 1 && (txn.JSON201.UnderscoreId != txnID || txn.HTTPResponse.Header.Get("Idempotent-Replayed") != "true") {
			t.Errorf("the retry answered %s (Idempotent-Replayed %q), want %s replayed", txn.JSON201.UnderscoreId, txn.HTTPResponse.Header.Get("Idempotent-Replayed"), txnID)
		}
		txnID = txn.JSON201.UnderscoreId
	}

	done, err := c.UpdateOrderWithResponse(ctx, orderID, &sdk.UpdateOrderParams{IdempotencyKey: sdk.Ptr(sdk.NewKey())}, sdk.UpdateOrderJSONRequestBody{
		State: sdk.Ptr(sdk.OrderUpdateStateCOMPLETED),
	})
	check(t, "complete order", done.HTTPResponse, done.Body, err)
	if got := done.JSON200.PointsEarned[awardID]; got != 24 {
		t.Errorf("pointsEarned = %v, want %s: 24", done.JSON200.PointsEarned, awardID)
	}

	redeem, err := c.RedeemPointAwardWithResponse(ctx, userID, awardID, &sdk.RedeemPointAwardParams{IdempotencyKey: sdk.Ptr(sdk.NewKey())}, sdk.RedeemPointAwardJSONRequestBody{ValueToRedeem: 4})
	check(t, "redeem", redeem.HTTPResponse, redeem.Body, err)

	// GET /transactions?shortCode= answers the one transaction (the
	// answer is a union with the page a metadata search gives).
	found, err := c.FindTransactionWithResponse(ctx, &sdk.FindTransactionParams{ShortCode: &payment.ShortCode})
	check(t, "find transaction", found.HTTPResponse, found.Body, err)
	if got, err := found.JSON200.AsTransaction(); err != nil || got.UnderscoreId != txnID {
		t.Errorf("shortCode %s found %s (%v), want %s", payment.ShortCode, got.UnderscoreId, err, txnID)
	}

	refund, err := c.RefundTransactionWithResponse(ctx, txnID, &sdk.RefundTransactionParams{Refund: sdk.RefundTransactionParamsRefundTrue, IdempotencyKey: sdk.Ptr(sdk.NewKey())})
	check(t, "refund", refund.HTTPResponse, refund.Body, err)
	if r := refund.JSON200; r.PointsReversed != 20 || r.PointsNotReversed != 4 {
		t.Errorf("refund reversed %d, not reversed %d; want 20 and 4", r.PointsReversed, r.PointsNotReversed)
	}

	// A second refund is 409 CONFLICT, read as an *sdk.APIError.
	again, err := c.RefundTransactionWithResponse(ctx, txnID, &sdk.RefundTransactionParams{Refund: sdk.RefundTransactionParamsRefundTrue})
	var apiErr *sdk.APIError
	if err := sdk.Check(again.HTTPResponse, again.Body, err); !errors.As(err, &apiErr) || apiErr.Status != 409 || apiErr.Code != "CONFLICT" || apiErr.RequestID == "" {
		t.Errorf("second refund: %v, want a 409 CONFLICT APIError with a request id", err)
	}
}

// Package pos is the pay-at-POS loop: a till creates an order for a user
// (usually one checked in at its location; a check-in is not required), adds transactions, and completes the order;
// completing burns the order's redemptions, records ORDER_COMPLETED and
// checks the user out, and the rules then turn the order into points.
// Transactions paid with the app change the user's app balance (never below
// zero); refunds reverse what the order earned and, for app payments, give
// spent awards back. Credits change a balance or grant points arbitrarily.
package pos

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/loyalty-platform/platform/shared/domain/award"
	"github.com/loyalty-platform/platform/shared/domain/money"
	"github.com/loyalty-platform/platform/shared/platform/apierr"
)

// Order states (spec: Order `state`).
const (
	StateOpen      = "OPEN"
	StateCompleted = "COMPLETED"
)

// ScenarioPayAtPOS is the scenario of orders a POS creates.
const ScenarioPayAtPOS = "PAYATPOS"

// PaymentApp is the payment type that spends the user's app balance.
const PaymentApp = "APP"

// PaymentTypes are the API's payment types. APPLE_PAY and GOOGLE_PAY are
// the wallet payments; WALLET_A_PAY and WALLET_B_PAY are their older
// names, still accepted and stored and returned as sent, so that a client
// reads back what it wrote (an action list's paymentType filter treats a
// name and its alias as one).
var PaymentTypes = []string{
	"CASH_AT_POS", "CARD_AT_POS", "GIFT_CARD_AT_POS", "OTHER_AT_POS", "APPLE_PAY", "GOOGLE_PAY", "WALLET_A_PAY", "WALLET_B_PAY", "CARD_ON_FILE",
	"CARD_TENDERED", "GIFT_CARD", "CARDHOLDER_PRESENT", "CASH", "CARD", "OTHER", "APP", "PAY_BY_BANK",
}

// Limits of orders and transactions.
const (
	MaxBasket = 200
	// MaxBasketBytes bounds a basket encoded as JSON: the order stores
	// it and its ORDER_COMPLETED action copies it, and both must stay
	// well inside DynamoDB's 400 KB item, so that an order the API
	// accepted can always complete.
	MaxBasketBytes = 128 << 10
	MaxRedemptions = 20
	MaxQuantity    = 1000
	maxText        = 255
)

// Limits of money (exact: see shared/domain/money). An amount a client sends is
// at most MaxAmount; an app balance and an order's transactionsTotal at
// most MaxTotal, so that they stay well inside an int64 of minor units in
// every currency (a credit or transaction that would pass it is 422).
var (
	MaxAmount = money.MustParse("1000000000")
	MaxTotal  = money.MustParse("1000000000000000")
)

// Sentinel errors of the POS domain.
var (
	ErrOrderNotFound       = apierr.New(apierr.NotFound, "order not found")
	ErrTransactionNotFound = apierr.New(apierr.NotFound, "transaction not found")
	ErrOrderCompleted      = apierr.New(apierr.Conflict, "the order is COMPLETED: it cannot change")
	ErrRefunded            = apierr.New(apierr.Conflict, "the transaction is refunded already")
	ErrShortCodeTaken      = apierr.New(apierr.Conflict, "shortCode: another transaction with this shortCode has a different body")
	ErrInsufficientBalance = apierr.New(apierr.InsufficientBalance, "the user's app balance does not cover the payment")
	// ErrOrderTooLarge: the completion would write more than the 100
	// items one DynamoDB transaction holds.
	ErrOrderTooLarge   = apierr.Invalid("redemptions", "the order's redemptions need more than the 100 items one transaction holds (redemptions of many CLUB or LEVEL perks, each held through its own segment): complete an order of at most 18 of them")
	ErrConcurrent      = apierr.New(apierr.Conflict, "the order was changed by another request at once; retry")
	ErrUnknownLocation = apierr.Invalid("locationId", "no such location")
)

// BasketItem is one item of an order's basket.
type BasketItem struct {
	ID       string        `json:"id" dynamodbav:"id"`
	Category string        `json:"category,omitempty" dynamodbav:"category,omitempty"`
	Title    string        `json:"title,omitempty" dynamodbav:"title,omitempty"`
	Quantity *int          `json:"quantity,omitempty" dynamodbav:"quantity,omitempty"`
	Price    *money.Amount `json:"price,omitempty" dynamodbav:"price,omitempty"`
}

// Redemption is an award redeemed on an order: it burns value points
// (times quantity) of the award when the order completes.
type Redemption struct {
	AwardID  string `json:"awardId" dynamodbav:"awardId"`
	Token    string `json:"token,omitempty" dynamodbav:"token,omitempty"`
	Quantity *int   `json:"quantity,omitempty" dynamodbav:"quantity,omitempty"`
	// Value is the points one redemption burns (default: the perk's
	// points.redemption, else 1).
	Value *int `json:"value,omitempty" dynamodbav:"value,omitempty"`
}

// Points returns what the redemption burns given the perk's default.
func (r Redemption) Points(def int) int {
	v, q := def, 1
	if r.Value != nil {
		v = *r.Value
	}
	if r.Quantity != nil {
		q = *r.Quantity
	}
	return v * q
}

// codePattern is an UPPER_SNAKE_CASE code, compiled on first use so that a
// cold start does not pay for it.
var codePattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Z][A-Z0-9]*(_[A-Z0-9]+)*$`) })

// textOK reports whether s is at most max characters without control
// characters.
func textOK(s string, max int) bool {
	return utf8.RuneCountInString(s) <= max && !hasControl(s)
}

// hasControl reports whether s holds a control character.
func hasControl(s string) bool {
	return strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f })
}

// checkCode checks a required one-line text named field of a request: 1 to
// max characters, no control characters, each refusal with its own message
// (a present value is never told it is missing).
func checkCode(field, s string, max int) error {
	switch {
	case s == "":
		return apierr.Invalid(field, "is required (1 to %d characters)", max)
	case utf8.RuneCountInString(s) > max:
		return apierr.Invalid(field, "must be 1 to %d characters", max)
	case hasControl(s):
		return apierr.Invalid(field, "must not hold control characters")
	}
	return nil
}

// amount checks the money field named field of a body, when present: at
// most the currency's decimal places, from 0 to MaxAmount; and sets it to
// exactly the currency's digits.
func amount(field string, v *money.Amount, cur money.Currency) error {
	if v == nil {
		return nil
	}
	a, err := cur.Amount(field, *v)
	if err != nil {
		return err
	}
	if a.Sign() < 0 || a.Cmp(MaxAmount) > 0 {
		return apierr.Invalid(field, "must be a number from 0 to %s", MaxAmount)
	}
	*v = a
	return nil
}

// addTotal returns total + a, refusing (422 naming field) a total over
// MaxTotal.
func addTotal(field string, total, a money.Amount) (money.Amount, error) {
	sum, err := total.Add(a)
	if err != nil || sum.Cmp(MaxTotal) > 0 {
		return money.Amount{}, apierr.Invalid(field, "the total would pass %s", MaxTotal)
	}
	return sum, nil
}

func validateBasket(items []BasketItem, cur money.Currency) error {
	if len(items) > MaxBasket {
		return apierr.Invalid("basket", "at most %d items", MaxBasket)
	}
	for i, it := range items {
		at := fmt.Sprintf("basket[%d]", i)
		if it.ID == "" {
			return apierr.Invalid(at+".id", "is required (1 to 128 characters)")
		}
		if !textOK(it.ID, 128) {
			return apierr.Invalid(at+".id", "must be 1 to 128 characters, without control characters")
		}
		if !textOK(it.Category, 128) {
			return apierr.Invalid(at+".category", "must be at most 128 characters")
		}
		if !textOK(it.Title, maxText) {
			return apierr.Invalid(at+".title", "must be at most %d characters", maxText)
		}
		if it.Quantity != nil && (*it.Quantity < 1 || *it.Quantity > MaxQuantity) {
			return apierr.Invalid(at+".quantity", "must be an integer from 1 to %d", MaxQuantity)
		}
		if err := amount(at+".price", items[i].Price, cur); err != nil {
			return err
		}
	}
	if b, err := json.Marshal(items); err == nil && len(b) > MaxBasketBytes {
		return apierr.Invalid("basket", "is %d bytes as JSON: at most %d (the order and its ORDER_COMPLETED action each hold it)", len(b), MaxBasketBytes)
	}
	return nil
}

func validateRedemptions(userID string, rs []Redemption) error {
	if len(rs) > MaxRedemptions {
		return apierr.Invalid("redemptions", "at most %d", MaxRedemptions)
	}
	seen := map[string]bool{}
	for i, r := range rs {
		at := fmt.Sprintf("redemptions[%d]", i)
		uid, _, ok := splitAward(r.AwardID)
		if !ok || uid != userID {
			return apierr.Invalid(at+".awardId", "must be an award of the order's user")
		}
		if seen[r.AwardID] {
			return apierr.Invalid(at+".awardId", "is redeemed twice: use quantity")
		}
		seen[r.AwardID] = true
		if !textOK(r.Token, maxText) {
			return apierr.Invalid(at+".token", "must be at most %d characters", maxText)
		}
		if r.Quantity != nil && (*r.Quantity < 1 || *r.Quantity > 100) {
			return apierr.Invalid(at+".quantity", "must be an integer from 1 to 100")
		}
		if r.Value != nil && (*r.Value < 1 || *r.Value > 1_000_000_000) {
			return apierr.Invalid(at+".value", "must be an integer from 1 to 1000000000")
		}
	}
	return nil
}

// splitAward splits an award id (<userId>-<perkId>).
func splitAward(id string) (userID, perkID string, ok bool) { return award.ParseID(id) }

func paymentTypeOK(t string) bool { return slices.Contains(PaymentTypes, t) }

package pos

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/loyalty-platform/platform/shared/domain/action"
	"github.com/loyalty-platform/platform/shared/domain/award"
	"github.com/loyalty-platform/platform/shared/domain/ledger"
	"github.com/loyalty-platform/platform/shared/domain/money"
	"github.com/loyalty-platform/platform/shared/domain/perk"
	"github.com/loyalty-platform/platform/shared/domain/profile"
	"github.com/loyalty-platform/platform/shared/platform/actor"
	"github.com/loyalty-platform/platform/shared/platform/apierr"
	"github.com/loyalty-platform/platform/shared/platform/clock"
	"github.com/loyalty-platform/platform/shared/platform/ddb"
	"github.com/loyalty-platform/platform/shared/platform/metadata"
	"github.com/loyalty-platform/platform/shared/platform/web"
)

// Transaction is a POS transaction (spec: Pay-at-POS transaction shape).
type Transaction struct {
	ID           string        `json:"_id" dynamodbav:"id"`
	TenantID     string        `json:"tenantId" dynamodbav:"tenantId"`
	UserID       string        `json:"userId" dynamodbav:"userId"`
	ShortCode    string        `json:"shortCode" dynamodbav:"shortCode"`
	SubTotal     *money.Amount `json:"subTotal,omitempty" dynamodbav:"subTotal,omitempty"`
	TotalTax     *money.Amount `json:"totalTax,omitempty" dynamodbav:"totalTax,omitempty"`
	TotalPrice   money.Amount  `json:"totalPrice" dynamodbav:"totalPrice"`
	TotalTip     *money.Amount `json:"totalTip,omitempty" dynamodbav:"totalTip,omitempty"`
	TotalPayment *money.Amount `json:"totalPayment,omitempty" dynamodbav:"totalPayment,omitempty"`
	LocationID   string        `json:"locationId,omitempty" dynamodbav:"locationId,omitempty"`
	RegisterID   string        `json:"registerId,omitempty" dynamodbav:"registerId,omitempty"`
	OrderID      string        `json:"orderId" dynamodbav:"orderId"`
	PaymentType  string        `json:"paymentType" dynamodbav:"paymentType"`
	// Metadata is the POS's own fields, as sent (absent when none).
	Metadata metadata.Metadata `json:"metadata,omitempty" dynamodbav:"metadata,omitempty"`
	// OrderGenerated is true when the transaction came without orderId
	// and the platform made (and completed) its order.
	OrderGenerated bool   `json:"orderGenerated" dynamodbav:"orderGenerated"`
	Refunded       bool   `json:"refunded" dynamodbav:"refunded"`
	RefundedAt     string `json:"refundedAt,omitempty" dynamodbav:"refundedAt,omitempty"`
	Created        string `json:"created" dynamodbav:"created"`
}

// Charge is what the transaction takes from the app balance when paid with
// APP: totalPayment when given, else totalPrice.
func (t Transaction) Charge() money.Amount {
	if t.TotalPayment != nil {
		return *t.TotalPayment
	}
	return t.TotalPrice
}

// TransactionInput is the body of POST /users/{userId}/transactions and
// POST /transactions (which names the user in userId).
type TransactionInput struct {
	UserID       string        `json:"userId,omitempty"`
	ShortCode    string        `json:"shortCode"`
	SubTotal     *money.Amount `json:"subTotal,omitempty"`
	TotalTax     *money.Amount `json:"totalTax,omitempty"`
	TotalPrice   *money.Amount `json:"totalPrice"`
	TotalTip     *money.Amount `json:"totalTip,omitempty"`
	TotalPayment *money.Amount `json:"totalPayment,omitempty"`
	LocationID   string        `json:"locationId,omitempty"`
	RegisterID   string        `json:"registerId,omitempty"`
	OrderID      string        `json:"orderId,omitempty"`
	PaymentType  string        `json:"paymentType"`
	// Metadata is the POS's own fields (see shared/platform/metadata).
	Metadata metadata.Metadata `json:"metadata,omitempty"`
}

// validate checks a transaction body, its amounts in the tenant's currency
// (and sets them to exactly its digits).
func (in *TransactionInput) validate(cur money.Currency) error {
	if in.ShortCode == "" {
		return apierr.Invalid("shortCode", "is required: the POS's own id of the transaction (1 to 64 characters)")
	}
	if err := checkCode("shortCode", in.ShortCode, 64); err != nil {
		return err
	}
	if in.TotalPrice == nil {
		return apierr.Invalid("totalPrice", "is required")
	}
	for _, a := range []struct {
		name string
		v    *money.Amount
	}{{"subTotal", in.SubTotal}, {"totalTax", in.TotalTax}, {"totalPrice", in.TotalPrice}, {"totalTip", in.TotalTip}, {"totalPayment", in.TotalPayment}} {
		if err := amount(a.name, a.v, cur); err != nil {
			return err
		}
	}
	if in.LocationID != "" && !web.ValidID(in.LocationID) {
		return ErrUnknownLocation
	}
	if !textOK(in.RegisterID, 128) {
		return apierr.Invalid("registerId", "must be at most 128 characters")
	}
	if in.OrderID != "" && !web.ValidID(in.OrderID) {
		return apierr.Invalid("orderId", "no such order")
	}
	if in.PaymentType == "" {
		return apierr.Invalid("paymentType", "is required")
	}
	if !paymentTypeOK(in.PaymentType) {
		return apierr.Invalid("paymentType", "must be one of the payment types (CASH_AT_POS, CARD_AT_POS, APPLE_PAY, GOOGLE_PAY, ..., APP, PAY_BY_BANK)")
	}
	var err error
	in.Metadata, err = in.Metadata.Clean()
	return err
}

// hash identifies a transaction body: a repeat with the same short code
// and the same hash is the same transaction.
func (in TransactionInput) hash(userID string) string {
	in.UserID = userID
	b, _ := json.Marshal(in)
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// CreateTransaction records a transaction of a user (POST
// /users/{userId}/transactions, POST /transactions; admin). In one
// DynamoDB transaction: the short code's item (conditional on being new),
// the transaction, for APP the balance's decrease with its PAYMENT ledger
// entry (from the balance read, which must cover it: else 422
// INSUFFICIENT_BALANCE, nothing written; conditional on the balance's entry
// count, so a concurrent change makes it read again), with orderId the order's
// running total (conditional on it being OPEN: a COMPLETED order is 409)
// or, without one, a generated order completed at once, and the
// TRANSACTION_CREATED action. A repeat with the same short code and body
// answers the first transaction and changes nothing (replayed true); the
// same short code with another body is 409.
func (s *Service) CreateTransaction(ctx context.Context, caller actor.Actor, userID string, in TransactionInput) (Transaction, bool, error) {
	if err := caller.RequireAdmin(); err != nil {
		return Transaction{}, false, err
	}
	if userID == "" {
		return Transaction{}, false, apierr.Invalid("userId", "is required")
	}
	if !web.ValidID(userID) {
		return Transaction{}, false, profile.ErrNotFound
	}
	cur, err := s.currency(ctx, caller)
	if err != nil {
		return Transaction{}, false, err
	}
	if err := in.validate(cur); err != nil {
		return Transaction{}, false, err
	}
	hash := in.hash(userID)
	st := s.st()
	// replay answers a short code already taken: the first transaction for
	// the same body (replayed), else 409. done is false for a new code.
	replay := func() (t Transaction, done bool, err error) {
		code, found, err := st.code(ctx, caller.TenantID, in.ShortCode)
		if err != nil || !found {
			return Transaction{}, err != nil, err
		}
		if code.BodyHash != hash {
			return Transaction{}, true, ErrShortCodeTaken
		}
		r, err := st.txn(ctx, caller.TenantID, code.TransactionID)
		return r.Transaction, true, err
	}
	// The first attempt assumes the short code is new, as it mostly is, and
	// reads nothing for it: the code's conditional write fails on a repeat
	// (and the next attempt looks the code up), and when the first attempt
	// is refused for another reason the code is looked up before the
	// answer, so a repeat is answered as the first transaction whatever
	// changed since (a completed order, a spent balance).
	for attempt := 0; attempt < maxAttempts; attempt++ {
		if attempt > 0 {
			backoff(ctx, attempt)
			if t, done, err := replay(); done {
				return t, err == nil, err
			}
		}
		t, retry, err := s.createTransaction(ctx, caller, userID, in, hash, cur)
		if err != nil && attempt == 0 {
			if t, done, rerr := replay(); done {
				return t, rerr == nil, rerr
			}
		}
		if err != nil || !retry {
			return t, false, err
		}
	}
	return Transaction{}, false, ErrConcurrent
}

func (s *Service) createTransaction(ctx context.Context, caller actor.Actor, userID string, in TransactionInput, hash string, cur money.Currency) (Transaction, bool, error) {
	prof, err := s.Users.Get(ctx, caller.TenantID, userID)
	if err != nil {
		return Transaction{}, false, err
	}
	title, err := s.title(ctx, caller)
	if err != nil {
		return Transaction{}, false, err
	}
	var place *award.Place
	if in.LocationID != "" {
		p, err := s.place(ctx, caller.TenantID, in.LocationID)
		if err != nil {
			return Transaction{}, false, err
		}
		place = &p
	}
	now := s.Clock.Now()
	st := s.st()
	t := Transaction{
		ID: perk.NewID(now), TenantID: caller.TenantID, UserID: userID, ShortCode: in.ShortCode,
		SubTotal: in.SubTotal, TotalTax: in.TotalTax, TotalPrice: *in.TotalPrice, TotalTip: in.TotalTip, TotalPayment: in.TotalPayment,
		LocationID: in.LocationID, RegisterID: in.RegisterID, OrderID: in.OrderID, PaymentType: in.PaymentType, Created: clock.Stamp(now),
		Metadata: in.Metadata,
	}
	tx := &ddb.Tx{}
	codeItem, err := st.put(codeRecord{PK: codePK(t.TenantID, t.ShortCode), SK: "TXNCODE", TransactionID: t.ID, BodyHash: hash}, "", nil)
	if err != nil {
		return Transaction{}, false, err
	}
	codeAt := tx.Add("code", codeItem)
	orderAt := -1
	var comp completion
	var generated *orderRecord
	if in.OrderID != "" {
		o, err := st.order(ctx, t.TenantID, in.OrderID)
		if errors.Is(err, ErrOrderNotFound) {
			return Transaction{}, false, apierr.Invalid("orderId", "no such order")
		}
		if err != nil {
			return Transaction{}, false, err
		}
		if o.UserID != userID {
			return Transaction{}, false, apierr.Invalid("orderId", "is an order of another user")
		}
		if o.State == StateCompleted {
			return Transaction{}, false, ErrOrderCompleted
		}
		if _, err := addTotal("totalPrice", o.TransactionsTotal, t.TotalPrice); err != nil {
			return Transaction{}, false, err
		}
		orderAt = tx.Add("order", st.update(orderPK(t.TenantID, o.ID), "ORDER",
			"ADD transactionsTotal :p, transactionCount :one, version :one SET updatedAt = :now", "#st = :open",
			map[string]types.AttributeValue{":p": fv(t.TotalPrice), ":one": nv(1), ":now": sv(clock.Stamp(now)), ":open": sv(StateOpen)}))
		tx.Items()[orderAt].Update.ExpressionAttributeNames = map[string]string{"#st": "state"}
	} else {
		// Without orderId the platform makes the order and completes it
		// at once.
		o := orderRecord{Order: newOrder(t.TenantID, userID, now)}
		o.LocationID, o.TransactionsTotal, o.TransactionCount = t.LocationID, t.TotalPrice, 1
		t.OrderID, t.OrderGenerated = o.ID, true
		if comp, err = s.prepareCompletion(ctx, caller, tx, &o, t.PaymentType, now, &read{prof: prof, place: place}); err != nil {
			if errors.Is(err, award.ErrChanged) {
				return Transaction{}, true, nil // an award changed between two reads: read again
			}
			return Transaction{}, false, err
		}
		generated = &o
	}
	txnItem, err := st.put(txnRecord{PK: txnPK(t.TenantID, t.ID), SK: "TXN", Transaction: t}, "", nil)
	if err != nil {
		return Transaction{}, false, err
	}
	tx.Add("transaction", txnItem)
	if err := st.metaItems(tx, t); err != nil {
		return Transaction{}, false, err
	}
	meta := map[string]any{"transactionId": t.ID, "orderId": t.OrderID, "shortCode": t.ShortCode, "paymentType": t.PaymentType, "totalPrice": t.TotalPrice.Number()}
	for k, v := range map[string]*money.Amount{"subTotal": t.SubTotal, "totalTax": t.TotalTax, "totalTip": t.TotalTip, "totalPayment": t.TotalPayment} {
		if v != nil {
			meta[k] = v.Number()
		}
	}
	if t.RegisterID != "" {
		meta["registerId"] = t.RegisterID
	}
	created := s.act(t.TenantID, title, prof, place, ActionTransactionCreated, now, meta)
	// The payment: the balance (as read) less the charge, with its
	// PAYMENT entry; a balance that does not cover it refuses the
	// transaction (the order's refusals, checked above, come first).
	var paid *ledger.MoneyWrite
	if t.PaymentType == PaymentApp && t.Charge().Sign() > 0 {
		if prof.Balance.Cmp(t.Charge()) < 0 {
			return Transaction{}, false, ErrInsufficientBalance
		}
		w, err := ledger.AddMoney(tx, s.UsersTable, ledger.BalanceOf(prof), ledger.MoneyChange{
			TenantID: t.TenantID, UserID: userID, Type: ledger.MoneyPayment, Amount: t.Charge().Neg(), Currency: cur,
			Cause: ledger.MoneyCause{ActionID: created.ID, OrderID: t.OrderID, TransactionID: t.ID},
		}, now)
		if err != nil {
			return Transaction{}, false, fmt.Errorf("create transaction: %w", err)
		}
		paid = &w
		balanceAfter(created.Metadata, w.Entry)
	}
	// Recorded once its metadata is complete: its feed head holds a copy.
	if created, err = s.Actions.Record(tx, created); err != nil {
		return Transaction{}, false, err
	}
	err = tx.Run(ctx, s.DB)
	switch {
	case err == nil:
	case ddb.Failed(err, codeAt):
		return Transaction{}, true, nil // another request took the code: read it
	case paid != nil && paid.Raced(err):
		return Transaction{}, true, nil // the balance changed since it was read: read again
	case orderAt >= 0 && ddb.Failed(err, orderAt):
		return Transaction{}, false, ErrOrderCompleted
	case ddb.IsTransactionConflict(err):
		return Transaction{}, true, nil
	case generated != nil:
		retry, out := comp.failure(err)
		return Transaction{}, retry, out
	default:
		return Transaction{}, false, fmt.Errorf("create transaction: %w", err)
	}
	if generated != nil {
		// One run of the rules for the transaction and its order.
		comp.actions = append([]action.Action{created}, comp.actions...)
		s.after(ctx, comp)
	} else {
		s.react(ctx, created)
	}
	return t, false, nil
}

// FindTransaction returns the transaction of a POS short code (GET
// /transactions?shortCode=, admin).
func (s *Service) FindTransaction(ctx context.Context, caller actor.Actor, shortCode string) (Transaction, error) {
	if err := caller.RequireAdmin(); err != nil {
		return Transaction{}, err
	}
	if err := checkCode("shortCode", shortCode, 64); err != nil {
		return Transaction{}, err
	}
	code, found, err := s.st().code(ctx, caller.TenantID, shortCode)
	if err != nil {
		return Transaction{}, err
	}
	if !found {
		return Transaction{}, ErrTransactionNotFound
	}
	t, err := s.st().txn(ctx, caller.TenantID, code.TransactionID)
	return t.Transaction, err
}

// RefundResult is the answer of a refund: the transaction and what the
// refund did.
type RefundResult struct {
	Transaction
	BalanceRestored     money.Amount `json:"balanceRestored"`
	PointsReversed      int          `json:"pointsReversed"`
	PointsNotReversed   int          `json:"pointsNotReversed"`
	RedemptionsReturned int          `json:"redemptionsReturned"`
}

// Refund refunds a transaction once (PUT /transactions/{id}?refund=true,
// admin; a second refund is 409). In one DynamoDB transaction:
//   - the transaction marked refunded;
//   - for APP, the app balance restored, with its PAYMENT_REFUND ledger
//     entry (a deleted user's too: their history is kept);
//   - the order's totals: its amount moves from transactionsTotal to
//     refundedTotal (an OPEN order then completes on what is left);
//   - on a COMPLETED order, the share of the points the rules earned on it
//     that the money refunded since completion is of the money paid then
//     (rounded down; all of it once everything is refunded), taken back
//     from the awards (never below zero: what could not be taken back is
//     recorded on the action and the answer);
//   - for APP only, once per order, the order's redemptions given back to
//     their awards (a cash refund does not return spent awards; a
//     redemption already refunded through the award endpoints is not
//     given back twice);
//   - the TRANSACTION_REFUNDED action.
func (s *Service) Refund(ctx context.Context, caller actor.Actor, id string) (RefundResult, error) {
	if err := caller.RequireAdmin(); err != nil {
		return RefundResult{}, err
	}
	if !web.ValidID(id) {
		return RefundResult{}, ErrTransactionNotFound
	}
	st := s.st()
	for attempt := 0; attempt < maxAttempts; attempt++ {
		if attempt > 0 {
			backoff(ctx, attempt)
		}
		t, err := st.txn(ctx, caller.TenantID, id)
		if err != nil {
			return RefundResult{}, err
		}
		if t.Refunded {
			return RefundResult{}, ErrRefunded
		}
		res, retry, err := s.refund(ctx, caller, t.Transaction)
		if errors.Is(err, award.ErrChanged) {
			continue // an award changed between two reads of this refund
		}
		if err != nil || !retry {
			return res, err
		}
	}
	return RefundResult{}, ErrConcurrent
}

// refunding is what a refund adds to its transaction.
type refunding struct {
	res      RefundResult
	actions  []action.Action
	awardsAt []int
	reversed map[string]int
	returned bool
}

func (s *Service) refund(ctx context.Context, caller actor.Actor, t Transaction) (RefundResult, bool, error) {
	st := s.st()
	o, err := st.order(ctx, t.TenantID, t.OrderID)
	if err != nil {
		return RefundResult{}, false, err
	}
	// A deleted user's payment is refunded too: their history is kept.
	prof, err := s.Users.Kept(ctx, t.TenantID, t.UserID)
	if err != nil {
		return RefundResult{}, false, err
	}
	title, err := s.title(ctx, caller)
	if err != nil {
		return RefundResult{}, false, err
	}
	now := s.Clock.Now()
	rf := refunding{res: RefundResult{Transaction: t}, reversed: maps.Clone(o.PointsReversed), returned: o.RedemptionsReturned}
	if rf.reversed == nil {
		rf.reversed = map[string]int{}
	}
	rf.res.Refunded, rf.res.RefundedAt = true, clock.Stamp(now)
	tx := &ddb.Tx{}
	txnAt := tx.Add("transaction", st.update(txnPK(t.TenantID, t.ID), "TXN", "SET refunded = :t, refundedAt = :now", "refunded = :f",
		map[string]types.AttributeValue{":t": bv(true), ":f": bv(false), ":now": sv(clock.Stamp(now))}))
	restores := t.PaymentType == PaymentApp && t.Charge().Sign() > 0
	if restores {
		rf.res.BalanceRestored = t.Charge()
	}
	meta := map[string]any{"orderId": o.ID, "transactionId": t.ID}
	if o.State == StateCompleted {
		// Spent awards come back before the earn is taken back, so that a
		// reversal on the award an order also burned from takes from what
		// the award holds once the burn is returned (both changes of one
		// award are one write: see award.ErrChanged).
		if t.PaymentType == PaymentApp && !o.RedemptionsReturned && len(o.Redemptions) > 0 {
			if err := s.addReturns(ctx, tx, &rf, o, t, title, prof, meta, now); err != nil {
				return RefundResult{}, false, err
			}
		}
		if err := s.addReversal(ctx, tx, &rf, o, t, title, prof, meta, now); err != nil {
			return RefundResult{}, false, err
		}
	}
	// The order: the amount moves to refundedTotal; what the refund took
	// back is recorded; conditional on the version read.
	add := "transactionsTotal :neg, refundedTotal :p, version :one"
	if o.State == StateCompleted {
		add += ", refundedAfter :p"
	}
	reversed, err := attributevalue.Marshal(rf.reversed)
	if err != nil {
		return RefundResult{}, false, fmt.Errorf("refund transaction %s: %w", t.ID, err)
	}
	orderAt := tx.Add("order", st.update(orderPK(o.TenantID, o.ID), "ORDER",
		"SET pointsReversed = :rev, redemptionsReturned = :ret, updatedAt = :now ADD "+add, "version = :v",
		map[string]types.AttributeValue{
			":neg": fv(t.TotalPrice.Neg()), ":p": fv(t.TotalPrice), ":one": nv(1), ":rev": reversed, ":ret": bv(rf.returned),
			":now": sv(clock.Stamp(now)), ":v": nv(int64(o.Version)),
		}))
	res := rf.res
	am := map[string]any{
		"transactionId": t.ID, "orderId": o.ID, "paymentType": t.PaymentType, "amount": t.TotalPrice.Number(),
		"balanceRestored": res.BalanceRestored.Number(), "pointsReversed": res.PointsReversed, "pointsNotReversed": res.PointsNotReversed,
		"redemptionsReturned": res.RedemptionsReturned,
	}
	var place *award.Place
	if t.LocationID != "" {
		if p, err := s.place(ctx, t.TenantID, t.LocationID); err == nil {
			place = &p
		}
	}
	refunded := s.act(t.TenantID, title, prof, place, ActionTransactionRefunded, now, am)
	// The app payment given back: the balance (as read, a deleted user's
	// too) plus the charge, with its PAYMENT_REFUND entry.
	var restored *ledger.MoneyWrite
	if restores {
		cur, err := s.currency(ctx, caller)
		if err != nil {
			return RefundResult{}, false, err
		}
		w, err := ledger.AddMoney(tx, s.UsersTable, ledger.BalanceOf(prof), ledger.MoneyChange{
			TenantID: t.TenantID, UserID: t.UserID, Type: ledger.MoneyPaymentRefund, Amount: t.Charge(), Currency: cur,
			Cause: ledger.MoneyCause{ActionID: refunded.ID, OrderID: o.ID, TransactionID: t.ID}, Kept: true,
		}, now)
		if err != nil {
			return RefundResult{}, false, fmt.Errorf("refund transaction %s: %w", t.ID, err)
		}
		restored = &w
		balanceAfter(refunded.Metadata, w.Entry)
	}
	// Recorded once its metadata is complete: its feed head holds a copy.
	if refunded, err = s.Actions.Record(tx, refunded); err != nil {
		return RefundResult{}, false, err
	}
	actions := append(rf.actions, refunded)
	err = tx.Run(ctx, s.DB)
	switch {
	case err == nil:
	case ddb.Failed(err, txnAt):
		return RefundResult{}, false, ErrRefunded
	case ddb.Failed(err, orderAt), ddb.IsTransactionConflict(err), restored != nil && restored.Raced(err):
		return RefundResult{}, true, nil
	default:
		for _, at := range rf.awardsAt {
			if ddb.Failed(err, at) {
				return RefundResult{}, true, nil // an award changed since it was read
			}
		}
		if award.Raced(err) {
			return RefundResult{}, true, nil
		}
		return RefundResult{}, false, fmt.Errorf("refund transaction %s: %w", t.ID, err)
	}
	s.react(ctx, actions...)
	return res, false, nil
}

// addReversal adds to tx the taking back of the points refunding t takes
// from completed order o (see Refund).
func (s *Service) addReversal(ctx context.Context, tx *ddb.Tx, rf *refunding, o orderRecord, t Transaction, title string, prof profile.Profile, meta map[string]any, now time.Time) error {
	// The share (RefundedAfter + this refund) / EarnedBase, exact.
	part, err := o.RefundedAfter.Add(t.TotalPrice)
	if err != nil {
		return fmt.Errorf("refund transaction %s: %w", t.ID, err)
	}
	for _, awardID := range slices.Sorted(maps.Keys(o.PointsEarned)) {
		target := money.ShareFloor(o.PointsEarned[awardID], part, o.EarnedBase)
		due := target - rf.reversed[awardID]
		if due <= 0 {
			continue
		}
		rf.reversed[awardID] = target
		_, perkID, _ := splitAward(awardID)
		sub, err := s.Awards.LoadFor(ctx, t.TenantID, title, perkID, person(prof))
		if err != nil {
			s.log().WarnContext(ctx, "refund: the award of earned points is gone", "awardId", awardID, "error", err.Error())
			rf.res.PointsNotReversed += due
			continue
		}
		w, err := s.Awards.AddReverse(ctx, tx, sub, due, meta, now)
		if err != nil {
			return err
		}
		rf.res.PointsReversed += w.Taken
		rf.res.PointsNotReversed += w.Short
		if w.AwardAt >= 0 {
			rf.awardsAt = append(rf.awardsAt, w.AwardAt)
			rf.actions = append(rf.actions, w.Action)
		}
	}
	return nil
}

// addReturns adds to tx the giving back of completed order o's
// redemptions (see Refund).
func (s *Service) addReturns(ctx context.Context, tx *ddb.Tx, rf *refunding, o orderRecord, t Transaction, title string, prof profile.Profile, meta map[string]any, now time.Time) error {
	for _, red := range o.Redemptions {
		_, perkID, _ := splitAward(red.AwardID)
		sub, err := s.Awards.LoadFor(ctx, t.TenantID, title, perkID, person(prof))
		if err != nil {
			return err
		}
		def := 1
		if sub.Perk.Points.Redemption != nil && *sub.Perk.Points.Redemption > 0 {
			def = *sub.Perk.Points.Redemption
		}
		left, err := s.Awards.Refundable(ctx, tx, sub)
		if err != nil {
			return err
		}
		v := min(red.Points(def), left)
		if v <= 0 {
			continue // refunded already through the award endpoints
		}
		w, err := s.Awards.AddRefund(ctx, tx, sub, v, meta, now)
		if err != nil {
			return err
		}
		rf.awardsAt = append(rf.awardsAt, w.AwardAt)
		rf.actions = append(rf.actions, w.Action)
		rf.res.RedemptionsReturned++
	}
	rf.returned = true
	return nil
}

// person is a user as awards name them.
func person(p profile.Profile) award.Person {
	return award.Person{ID: p.ID, Name: p.FullName, PrimaryPlatform: p.PrimaryPlatform}
}

func bv(b bool) types.AttributeValue { return &types.AttributeValueMemberBOOL{Value: b} }

package pos

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"

	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/loyalty-platform/platform/shared/domain/action"
	"github.com/loyalty-platform/platform/shared/domain/award"
	"github.com/loyalty-platform/platform/shared/domain/checkin"
	"github.com/loyalty-platform/platform/shared/domain/money"
	"github.com/loyalty-platform/platform/shared/domain/perk"
	"github.com/loyalty-platform/platform/shared/domain/profile"
	"github.com/loyalty-platform/platform/shared/platform/actor"
	"github.com/loyalty-platform/platform/shared/platform/apierr"
	"github.com/loyalty-platform/platform/shared/platform/clock"
	"github.com/loyalty-platform/platform/shared/platform/ddb"
	"github.com/loyalty-platform/platform/shared/platform/metadata"
	"github.com/loyalty-platform/platform/shared/platform/metrics"
	"github.com/loyalty-platform/platform/shared/platform/web"
)

// Order is a POS order (spec: Pay-at-POS order shape) as the API returns
// it.
type Order struct {
	ID          string        `json:"_id" dynamodbav:"id"`
	TenantID    string        `json:"tenantId" dynamodbav:"tenantId"`
	UserID      string        `json:"userId" dynamodbav:"userId"`
	LocationID  string        `json:"locationId,omitempty" dynamodbav:"locationId,omitempty"`
	Scenario    string        `json:"scenario,omitempty" dynamodbav:"scenario,omitempty"`
	ShortCode   string        `json:"shortCode,omitempty" dynamodbav:"shortCode,omitempty"`
	State       string        `json:"state" dynamodbav:"state"`
	Basket      []BasketItem  `json:"basket" dynamodbav:"basket"`
	Redemptions []Redemption  `json:"redemptions" dynamodbav:"redemptions"`
	TotalPrice  *money.Amount `json:"totalPrice,omitempty" dynamodbav:"totalPrice,omitempty"`
	// Value is the order's value, what ORDER_COMPLETED carries and the
	// rules' pointsPerUnit reads: totalPrice when set, else the value the
	// POS gave, else TransactionsTotal. It is computed, never stored.
	Value *money.Amount `json:"value" dynamodbav:"-"`
	// TransactionsTotal is the sum of the totalPrice of the order's
	// transactions not refunded; RefundedTotal of those refunded;
	// TransactionCount how many transactions it ever had.
	TransactionsTotal money.Amount `json:"transactionsTotal" dynamodbav:"transactionsTotal"`
	RefundedTotal     money.Amount `json:"refundedTotal" dynamodbav:"refundedTotal"`
	TransactionCount  int          `json:"transactionCount" dynamodbav:"transactionCount"`
	// PointsEarned are the points the rules granted on the order, by
	// award id; PointsReversed those refunds took back.
	PointsEarned   map[string]int `json:"pointsEarned" dynamodbav:"pointsEarned"`
	PointsReversed map[string]int `json:"pointsReversed" dynamodbav:"pointsReversed"`
	Created        string         `json:"created" dynamodbav:"created"`
	UpdatedAt      string         `json:"updatedAt" dynamodbav:"updatedAt"`
	CompletedAt    string         `json:"completedAt,omitempty" dynamodbav:"completedAt,omitempty"`
	// Metadata is the POS's own fields, as sent (absent when none).
	Metadata metadata.Metadata `json:"metadata,omitempty" dynamodbav:"metadata,omitempty"`
}

// OrderInput is the body of POST /users/{userId}/orders and PUT
// /orders/{orderId} (state only on PUT).
type OrderInput struct {
	LocationID  *string       `json:"locationId"`
	Scenario    *string       `json:"scenario"`
	ShortCode   *string       `json:"shortCode"`
	Basket      *[]BasketItem `json:"basket"`
	Redemptions *[]Redemption `json:"redemptions"`
	TotalPrice  *money.Amount `json:"totalPrice"`
	Value       *money.Amount `json:"value"`
	State       *string       `json:"state"`
	// Metadata is the POS's own fields (see shared/platform/metadata): a
	// PUT that sends it replaces the stored object whole; absent leaves
	// it (null is 422, as for every field).
	Metadata *metadata.Metadata `json:"metadata"`
}

// validate checks an order body for userID, its amounts in the tenant's
// currency (and sets them to exactly its digits).
func (in *OrderInput) validate(userID string, cur money.Currency) error {
	if in.LocationID != nil && !web.ValidID(*in.LocationID) {
		return ErrUnknownLocation
	}
	if in.Scenario != nil && (!codePattern().MatchString(*in.Scenario) || len(*in.Scenario) > 32) {
		return apierr.Invalid("scenario", "must be an UPPER_SNAKE scenario such as PAYATPOS")
	}
	if in.ShortCode != nil && *in.ShortCode != "" && hasControl(*in.ShortCode) {
		return apierr.Invalid("shortCode", "must not hold control characters")
	}
	if in.ShortCode != nil && (*in.ShortCode == "" || !textOK(*in.ShortCode, 64)) {
		return apierr.Invalid("shortCode", "must be 1 to 64 characters")
	}
	if in.Basket != nil {
		if err := validateBasket(*in.Basket, cur); err != nil {
			return err
		}
	}
	if in.Redemptions != nil {
		if err := validateRedemptions(userID, *in.Redemptions); err != nil {
			return err
		}
	}
	if err := amount("totalPrice", in.TotalPrice, cur); err != nil {
		return err
	}
	if err := amount("value", in.Value, cur); err != nil {
		return err
	}
	if in.State != nil && *in.State != StateOpen && *in.State != StateCompleted {
		return apierr.Invalid("state", "must be OPEN or COMPLETED")
	}
	if in.Metadata != nil {
		m, err := in.Metadata.Clean()
		if err != nil {
			return err
		}
		in.Metadata = &m
	}
	return nil
}

// apply sets the fields in the body on r.
func (in *OrderInput) apply(r *orderRecord) {
	if in.Basket != nil {
		r.Basket = *in.Basket
	}
	if in.Redemptions != nil {
		r.Redemptions = *in.Redemptions
	}
	if in.TotalPrice != nil {
		r.TotalPrice = in.TotalPrice
	}
	if in.Value != nil {
		r.Declared = in.Value
	}
	if in.Metadata != nil {
		r.Metadata = *in.Metadata
	}
}

// empty tells whether the body names nothing to change.
func (in *OrderInput) empty() bool {
	return in.Basket == nil && in.Redemptions == nil && in.TotalPrice == nil && in.Value == nil && in.Metadata == nil &&
		(in.State == nil || *in.State == StateOpen)
}

// CreateOrder creates an OPEN order for a user (POST
// /users/{userId}/orders, admin).
func (s *Service) CreateOrder(ctx context.Context, caller actor.Actor, userID string, in OrderInput) (Order, error) {
	if err := caller.RequireAdmin(); err != nil {
		return Order{}, err
	}
	if !web.ValidID(userID) {
		return Order{}, profile.ErrNotFound
	}
	if in.State != nil && *in.State != StateOpen {
		return Order{}, apierr.Invalid("state", "a new order is OPEN: complete it with PUT /orders/{orderId}")
	}
	cur, err := s.currency(ctx, caller)
	if err != nil {
		return Order{}, err
	}
	if err := in.validate(userID, cur); err != nil {
		return Order{}, err
	}
	if _, err := s.Users.Get(ctx, caller.TenantID, userID); err != nil {
		return Order{}, err
	}
	if in.LocationID != nil {
		if _, err := s.place(ctx, caller.TenantID, *in.LocationID); err != nil {
			return Order{}, err
		}
	}
	now := s.Clock.Now()
	r := orderRecord{Order: newOrder(caller.TenantID, userID, now)}
	if in.LocationID != nil {
		r.LocationID = *in.LocationID
	}
	if in.Scenario != nil {
		r.Scenario = *in.Scenario
	}
	if in.ShortCode != nil {
		r.ShortCode = *in.ShortCode
	}
	in.apply(&r)
	put, err := s.st().putOrder(r)
	if err != nil {
		return Order{}, err
	}
	tx := &ddb.Tx{}
	tx.Add("order", put)
	if err := tx.Run(ctx, s.DB); err != nil {
		return Order{}, fmt.Errorf("create order: %w", err)
	}
	return r.view(), nil
}

// newOrder returns a new OPEN order of a user.
func newOrder(tenantID, userID string, now time.Time) Order {
	return Order{
		ID: perk.NewID(now), TenantID: tenantID, UserID: userID, State: StateOpen,
		Basket: []BasketItem{}, Redemptions: []Redemption{}, PointsEarned: map[string]int{}, PointsReversed: map[string]int{},
		Created: clock.Stamp(now), UpdatedAt: clock.Stamp(now),
	}
}

// GetOrder returns an order (GET /orders/{orderId}): an admin any of the
// tenant's, a user their own (another user's is 404).
func (s *Service) GetOrder(ctx context.Context, caller actor.Actor, id string) (Order, error) {
	if err := caller.RequireAuth(); err != nil {
		return Order{}, err
	}
	if !web.ValidID(id) {
		return Order{}, ErrOrderNotFound
	}
	r, err := s.st().order(ctx, caller.TenantID, id)
	if err != nil {
		return Order{}, err
	}
	if !caller.IsAdmin() && r.UserID != caller.UserID {
		return Order{}, ErrOrderNotFound
	}
	return r.view(), nil
}

// UpdateOrder changes an OPEN order (PUT /orders/{orderId}, admin): the
// basket, redemptions, totalPrice and value it names; `state: COMPLETED`
// completes it (Complete). Any change of a COMPLETED order is 409.
func (s *Service) UpdateOrder(ctx context.Context, caller actor.Actor, id string, in OrderInput) (Order, error) {
	if err := caller.RequireAdmin(); err != nil {
		return Order{}, err
	}
	if !web.ValidID(id) {
		return Order{}, ErrOrderNotFound
	}
	for _, f := range []struct {
		name string
		set  bool
	}{{"locationId", in.LocationID != nil}, {"scenario", in.Scenario != nil}, {"shortCode", in.ShortCode != nil}} {
		if f.set {
			return Order{}, apierr.Invalid(f.name, "cannot change after the order was created")
		}
	}
	cur, err := s.currency(ctx, caller)
	if err != nil {
		return Order{}, err
	}
	for attempt := 0; attempt < maxAttempts; attempt++ {
		r, err := s.st().order(ctx, caller.TenantID, id)
		if err != nil {
			return Order{}, err
		}
		if r.State == StateCompleted {
			return Order{}, ErrOrderCompleted
		}
		if err := in.validate(r.UserID, cur); err != nil {
			return Order{}, err
		}
		if in.empty() {
			return r.view(), nil
		}
		in.apply(&r)
		if in.State != nil && *in.State == StateCompleted {
			o, done, err := s.complete(ctx, caller, r, "")
			if err != nil || done {
				return o, err
			}
			continue
		}
		now := s.Clock.Now()
		r.UpdatedAt = clock.Stamp(now)
		r.Version++
		put, err := s.st().putOrder(r)
		if err != nil {
			return Order{}, err
		}
		tx := &ddb.Tx{}
		tx.Add("order", put)
		err = tx.Run(ctx, s.DB)
		if ddb.Failed(err, 0) {
			continue
		}
		if err != nil {
			return Order{}, fmt.Errorf("update order %s: %w", id, err)
		}
		return r.view(), nil
	}
	return Order{}, ErrConcurrent
}

// maxAttempts bounds the retries of a change that lost a race (an order
// changed, an app balance changed: a balance's changes are serialised by
// its ledger's entry count, so concurrent payments of one user retry).
const maxAttempts = 12

// backoff waits a little before a retry, growing with the attempt, with
// jitter so that racing writers spread out.
func backoff(ctx context.Context, attempt int) {
	d := time.Duration(5+rand.IntN(10*(attempt+1))) * time.Millisecond
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}

// complete completes the order read as r (done false: it changed since,
// read again): in one transaction the order (conditional on its version),
// each redemption burning its award's points (AddRedeem: a failure is
// 422 and the order stays OPEN), the ORDER_COMPLETED action and the user's
// checkout (a purchase checks out). The rules run on the new actions once
// it committed. paymentType names the payment of an order a transaction
// generated.
//
// The transaction holds 7 items (order, user check, ORDER_COMPLETED,
// checkout and its action, the user's feed head, the claim) and 3 a
// redemption of another award (award, ledger entry, AWARD_REDEEMED), up
// to 5 for a virtual award stored by this change (its initial entry) held
// through a segment (the membership's check): 67 for MaxRedemptions in
// general, up to 107 when the redemptions name many never-used virtual
// awards. Above DynamoDB's 100 items (ddb.ErrTooManyItems, refused before
// any call) those awards are stored first (storeVirtual) and the
// completion read again: 4 items a redemption at most, 87 in all. Each
// perk's points liability adds one item (its shard, merged per perk), so
// 19 or 20 redemptions of distinct CLUB or LEVEL perks, each held through
// its own segment, need 102 to 107 items even when their awards are
// stored: that completion is refused (ErrOrderTooLarge, 422, nothing
// written).
func (s *Service) complete(ctx context.Context, caller actor.Actor, r orderRecord, paymentType string) (Order, bool, error) {
	now := s.Clock.Now()
	tx := &ddb.Tx{}
	prep, err := s.prepareCompletion(ctx, caller, tx, &r, paymentType, now, nil)
	if errors.Is(err, award.ErrChanged) {
		return Order{}, false, nil // an award changed between two reads: read again
	}
	if err != nil {
		return Order{}, false, err
	}
	err = tx.Run(ctx, s.DB)
	if errors.Is(err, ddb.ErrTooManyItems) {
		// Many never-used virtual awards, each stored by this change with
		// its initial points: store them first, then complete with fewer
		// items (read again).
		stored, serr := s.storeVirtual(ctx, caller, r, now)
		if serr != nil {
			return Order{}, false, serr
		}
		if stored == 0 {
			// Nothing to store first: the redemptions alone need more
			// items than one transaction holds. Nothing was written.
			return Order{}, false, ErrOrderTooLarge
		}
		return Order{}, false, nil
	}
	if err != nil {
		if retry, out := prep.failure(err); !retry {
			return Order{}, false, out
		}
		return Order{}, false, nil
	}
	// When the rules changed anything on these actions (or found it
	// changed by the stream consumer that got there first), read the
	// order again: the points they earn on it are written on it in their
	// grants' transactions (AddEarned). Else the order is as written.
	if s.after(ctx, prep) > 0 {
		if fresh, err := s.st().order(ctx, r.TenantID, r.ID); err == nil {
			r = fresh
		}
	}
	return r.view(), true, nil
}

// storeVirtual stores, in transactions of their own, the virtual awards
// (global, CLUB and LEVEL perks with initial points) the redemptions of
// order r name that were never stored (award.Service.Materialise): the
// completion then changes stored awards, with fewer items. It returns how
// many it stored. The request's Idempotency-Key is not claimed by them
// (the completion claims it): storing an award with its initial points
// changes nothing a user or a retry sees.
func (s *Service) storeVirtual(ctx context.Context, caller actor.Actor, r orderRecord, now time.Time) (int, error) {
	title, err := s.title(ctx, caller)
	if err != nil {
		return 0, err
	}
	prof, err := s.Users.Get(ctx, r.TenantID, r.UserID)
	if err != nil {
		return 0, err
	}
	var subs []award.Subject
	for i, red := range r.Redemptions {
		_, perkID, _ := splitAward(red.AwardID)
		sub, err := s.Awards.LoadFor(ctx, r.TenantID, title, perkID, person(prof))
		if err != nil {
			if errors.Is(err, award.ErrPerkNotFound) {
				return 0, apierr.Invalid(fmt.Sprintf("redemptions[%d].awardId", i), "no such award")
			}
			return 0, err
		}
		subs = append(subs, sub)
	}
	n, err := s.Awards.Materialise(ddb.WithoutClaim(ctx), subs, now)
	if err != nil {
		return n, fmt.Errorf("store the awards of order %s: %w", r.ID, err)
	}
	return n, nil
}

// completion is what prepareCompletion added to a transaction.
type completion struct {
	orderAt  int
	redeems  []award.RedeemWrite
	checkout *checkin.CheckoutWrite
	checkAt  int
	actions  []action.Action
}

// failure tells what a cancelled transaction means for a completion.
func (c completion) failure(err error) (retry bool, out error) {
	if ddb.IsTransactionConflict(err) || ddb.Failed(err, c.orderAt) || c.checkout != nil && ddb.Failed(err, c.checkAt) || award.Raced(err) {
		return true, nil
	}
	for _, w := range c.redeems {
		if e := w.Failure(err); !errors.Is(e, err) {
			return errors.Is(e, award.ErrChanged), e
		}
	}
	return false, err
}

// read is what a change read before it completes an order: the user and
// the order's location (nil for none), so that they are not read twice.
type read struct {
	prof  profile.Profile
	place *award.Place
}

// prepareCompletion adds the completion of order r to tx (see complete)
// and sets r COMPLETED. pre is what the caller read already (nil: read the
// user and the location here).
func (s *Service) prepareCompletion(ctx context.Context, caller actor.Actor, tx *ddb.Tx, r *orderRecord, paymentType string, now time.Time, pre *read) (completion, error) {
	var c completion
	title, err := s.title(ctx, caller)
	if err != nil {
		return c, err
	}
	if pre == nil {
		pre = &read{}
		if pre.prof, err = s.Users.Get(ctx, r.TenantID, r.UserID); err != nil {
			return c, err
		}
		if r.LocationID != "" {
			p, err := s.place(ctx, r.TenantID, r.LocationID)
			if err != nil {
				return c, err
			}
			pre.place = &p
		}
	}
	prof, place := pre.prof, pre.place
	r.State, r.CompletedAt, r.UpdatedAt = StateCompleted, clock.Stamp(now), clock.Stamp(now)
	r.EarnedBase, r.RefundedAfter = r.TransactionsTotal, money.Amount{}
	r.Version++
	put, err := s.st().putOrder(*r)
	if err != nil {
		return c, err
	}
	c.orderAt = tx.Add("order", put)
	for i, red := range r.Redemptions {
		_, perkID, _ := splitAward(red.AwardID)
		// The user and the location were read once for the request (the
		// transaction checks the user is live): only the perk is read.
		sub, err := s.Awards.LoadFor(ctx, r.TenantID, title, perkID, person(prof))
		if err != nil {
			if errors.Is(err, award.ErrPerkNotFound) {
				return c, apierr.Invalid(fmt.Sprintf("redemptions[%d].awardId", i), "no such award")
			}
			return c, err
		}
		sub.Place = place
		// Orders are completed by the POS (an admin) at the order's
		// location: a dateTimeRestriction is evaluated in its zone.
		sub.AtPlace = caller.IsAdmin()
		def := 1
		if sub.Perk.Points.Redemption != nil && *sub.Perk.Points.Redemption > 0 {
			def = *sub.Perk.Points.Redemption
		}
		units := 1
		if red.Quantity != nil {
			units = *red.Quantity
		}
		w, err := s.Awards.AddRedeem(ctx, tx, sub, red.Points(def), units, map[string]any{"orderId": r.ID}, now)
		if err != nil {
			return c, err
		}
		c.redeems = append(c.redeems, w)
		c.actions = append(c.actions, w.Action)
	}
	basket, _ := json.Marshal(r.Basket)
	var basketAny any
	_ = json.Unmarshal(basket, &basketAny)
	meta := map[string]any{
		"orderId": r.ID, "value": r.value().Number(), "transactionsTotal": r.TransactionsTotal.Number(),
		"basket": basketAny, "redemptions": len(r.Redemptions),
	}
	for k, v := range map[string]string{"shortCode": r.ShortCode, "scenario": r.Scenario, "paymentType": paymentType, "locationId": r.LocationID} {
		if v != "" {
			meta[k] = v
		}
	}
	if r.TotalPrice != nil {
		meta["totalPrice"] = r.TotalPrice.Number()
	}
	done, err := s.Actions.Record(tx, s.act(r.TenantID, title, prof, place, ActionOrderCompleted, now, meta))
	if err != nil {
		return c, err
	}
	c.actions = append(c.actions, done)
	if s.Checkins != nil {
		w, held, err := s.Checkins.AddCheckout(ctx, tx, r.TenantID, prof, checkin.ReasonPurchase, now)
		if err != nil {
			return c, err
		}
		if held {
			c.checkout, c.checkAt = &w, w.At
			c.actions = append(c.actions, w.Action)
		}
	}
	return c, nil
}

// after runs, once a completion committed, what follows it: the checkout's
// POS notification and the rules on its actions. It returns how many
// actions the rules recorded.
func (s *Service) after(ctx context.Context, c completion) int {
	for _, a := range c.actions {
		if a.Type == ActionOrderCompleted {
			metrics.Count(ctx, a.TenantID, metrics.OrdersCompleted, 1)
			metrics.Count(ctx, a.TenantID, metrics.AwardsRedeemed, len(c.redeems))
		}
	}
	if c.checkout != nil {
		s.Checkins.Notify(ctx, *c.checkout, checkin.ReasonPurchase)
	}
	return s.react(ctx, c.actions...)
}

// AddEarned adds to tx the recording of points a rule granted on an order
// of userID (for a refund to take them back): the order's
// pointsEarned[awardId] grows by points and its version by one. A refund
// that landed between the order's completion and this grant takes its
// share of the grant back at once, in the same transaction (the award's
// grant and reversal are one write): the share of the earn is reversed
// whenever the refund and the rule land. Nothing is added for an empty
// orderId, no points, or an order that is not the user's (an action's
// metadata named an order the POS domain does not know). The order is
// written once per transaction (several grants on one order merge),
// conditional on its version as read.
func (s *Service) AddEarned(ctx context.Context, tx *ddb.Tx, tenantID, userID, orderID, awardID string, points int) error {
	if orderID == "" || points <= 0 || !web.ValidID(orderID) {
		return nil
	}
	key := ddb.Key(s.Table, key(orderPK(tenantID, orderID), "ORDER"))
	var r *orderRecord
	if prev, ok := tx.State(key); ok {
		r, _ = prev.(*orderRecord)
		if r == nil {
			return fmt.Errorf("earn on order %s: the transaction writes the order already", orderID)
		}
	} else {
		read, err := s.st().order(ctx, tenantID, orderID)
		if errors.Is(err, ErrOrderNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		r = &read
		r.PointsEarned, r.PointsReversed = maps.Clone(r.PointsEarned), maps.Clone(r.PointsReversed)
		if r.PointsEarned == nil {
			r.PointsEarned = map[string]int{}
		}
		if r.PointsReversed == nil {
			r.PointsReversed = map[string]int{}
		}
	}
	if r.UserID != userID {
		return nil
	}
	r.PointsEarned[awardID] += points
	if r.State == StateCompleted && r.RefundedAfter.Sign() > 0 {
		if due := money.ShareFloor(r.PointsEarned[awardID], r.RefundedAfter, r.EarnedBase) - r.PointsReversed[awardID]; due > 0 {
			if err := s.reverseOnLanding(ctx, tx, *r, awardID, due); err != nil {
				return err
			}
			r.PointsReversed[awardID] += due
		}
	}
	earnedAV, err := attributevalue.Marshal(r.PointsEarned)
	if err != nil {
		return fmt.Errorf("earn on order %s: %w", orderID, err)
	}
	reversedAV, err := attributevalue.Marshal(r.PointsReversed)
	if err != nil {
		return fmt.Errorf("earn on order %s: %w", orderID, err)
	}
	u := s.st().update(orderPK(tenantID, orderID), "ORDER", "SET pointsEarned = :pe, pointsReversed = :pr, version = :next", "version = :v",
		map[string]types.AttributeValue{":pe": earnedAV, ":pr": reversedAV, ":next": nv(int64(r.Version + 1)), ":v": nv(int64(r.Version))})
	_, err = tx.Merge("order", key, func(any) (types.TransactWriteItem, any, error) { return u, r, nil })
	return err
}

// reverseOnLanding adds to tx the reversal of due points of a rule's grant
// on order r that a refund made before the grant landed takes back.
func (s *Service) reverseOnLanding(ctx context.Context, tx *ddb.Tx, r orderRecord, awardID string, due int) error {
	_, perkID, _ := splitAward(awardID)
	prof, err := s.Users.Kept(ctx, r.TenantID, r.UserID)
	if err != nil {
		return err
	}
	title := ""
	if s.Tenants != nil {
		if title, err = s.Tenants.Title(ctx, r.TenantID); err != nil {
			return err
		}
	}
	sub, err := s.Awards.LoadFor(ctx, r.TenantID, title, perkID, person(prof))
	if err != nil {
		return err
	}
	_, err = s.Awards.AddReverse(ctx, tx, sub, due, map[string]any{"orderId": r.ID, "reason": "REFUNDED_BEFORE_GRANT"}, s.Clock.Now())
	return err
}

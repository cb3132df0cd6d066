package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/loyalty-platform/platform/shared/platform/clock"
	"github.com/loyalty-platform/platform/shared/platform/ddb"
)

// The raw side issues, for each operation of the mix, the DynamoDB calls
// a warm API request makes (the same operations, with the same tables,
// keys, expressions and item sizes, in the order the functions make them:
// one after another, and at once where a function reads in parallel,
// marked "at once" below), read from the calls the functions send for one
// request of each (and checked against the ddbCalls of the request log,
// which the table shows next to them):
//
//	GET /users/{id}     GetItem session, GetItem profile                          2
//	check-in            GetItem session, profile, location; TransactWriteItems
//	                    (check-in if the slot is empty, CHECKIN_CREATED, user)    4
//	checkout            GetItem session, profile, check-in, location;
//	                    TransactWriteItems (delete check-in, CHECKOUT)            5
//	grant               GetItem profile and perk at once; GetItem award;
//	                    TransactWriteItems (award, user, AWARD_GRANTED, the
//	                    ledger entry, the ADD to a liability shard); GetItem
//	                    rules version                                             5
//	redeem              GetItem session; GetItem perk and profile at once;
//	                    GetItem award; TransactWriteItems (award, user,
//	                    AWARD_REDEEMED, the ledger entry, the liability ADD);
//	                    GetItem rules version                                     6
//	GET /awards         GetItem profile; at once: Query perks, the user's
//	                    awards, memberships, segments                             5
//	POST /transactions  GetItem profile, check-in; TransactWriteItems (short
//	                    code, order, ORDER_COMPLETED, transaction,
//	                    TRANSACTION_CREATED); GetItem rules version               4
//
// Every TransactWriteItems that puts actions also updates the user's feed
// head (withHeads), as the recorder does.
//
// A request that records actions runs the tenant's rules on them before it
// answers: it reads the tenant's rules version (one consistent GetItem of
// <t>#RULES / VERSION) and, when it matches the cached rules', no rule. A
// warm container reads neither the tenant, the service key, the tenant's
// rules nor its enrichments: its cache holds them (setup's requests filled
// it) and reads them again once per tenant.CacheTTL, so over a long run the server's average can exceed the
// raw side's by those few calls. Writes go to keys of their own (users
// "raw<id>"), so that their conditions hold as the API's do.

// rawCalls is the number of DynamoDB calls of each operation's raw side.
var rawCalls = map[string]int{opGetUser: 2, opCheckin: 4, opCheckout: 5, opGrant: 5, opRedeem: 6, opAwards: 5, opTxn: 4}

type item = map[string]types.AttributeValue

func s(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
func n(v int64) types.AttributeValue {
	return &types.AttributeValueMemberN{Value: strconv.FormatInt(v, 10)}
}
func decimal(v string) types.AttributeValue { return &types.AttributeValueMemberN{Value: v} }
func b(v bool) types.AttributeValue         { return &types.AttributeValueMemberBOOL{Value: v} }
func m(v item) types.AttributeValue         { return &types.AttributeValueMemberM{Value: v} }
func key(pk, sk string) item                { return item{"pk": s(pk), "sk": s(sk)} }

func sha(v string) string {
	h := sha256.Sum256([]byte(v))
	return hex.EncodeToString(h[:])
}

// raw issues the raw calls of an operation.
type raw struct {
	e        *env
	fx       *fixture
	mu       sync.Mutex
	checkins map[int]string // the raw check-in id of each user checked in
	// state keeps the raw orders and payments the order and refund
	// phases pass on, by user.
	state state
	// refunds is set for the refund phase, whose card payment keeps what
	// its refund needs.
	refunds bool
	// noLiability leaves out the ADD to a shard of the perk's points
	// liability that every grant and redemption writes (liability.go).
	noLiability bool
	// conflicts counts the transactions tried again after losing a race.
	conflicts atomic.Int64
}

// rawUser is the key part of a user's raw twin.
func rawUser(u benchUser) string { return "raw" + u.ID }

// prepare gives every user's raw twin an award with plenty of points, as
// setup does for the users.
func (r *raw) prepare(ctx context.Context) error {
	for _, u := range r.fx.users {
		if err := r.putAward(ctx, u, r.fx.perk); err != nil {
			return err
		}
	}
	return nil
}

// putAward gives user u's raw twin an award of perk p with plenty of
// points.
func (r *raw) putAward(ctx context.Context, u benchUser, p string) error {
	t, now := r.e.tenant, clock.Stamp(time.Now())
	id := rawUser(u) + "-" + p
	_, err := r.e.db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(r.e.tables.Loyalty), Item: item{
		"pk": s(t + "#USER#" + rawUser(u)), "sk": s("AWARD#" + p), "id": s(id), "tenantId": s(t),
		"userId": s(rawUser(u)), "perkId": s(p), "created": s(now), "updatedAt": s(now),
		"gsi1pk": s(t + "#AWARDS"), "gsi1sk": s(now + "#" + id),
		"available": n(100_000_000), "granted": n(100_000_000), "redeemed": n(0), "refunded": n(0), "refundable": n(0), "redemptions": n(0),
	}})
	if err != nil {
		return fmt.Errorf("raw award: %w", err)
	}
	return nil
}

func (r *raw) get(ctx context.Context, table string, k item, consistent bool, projection ...string) (item, error) {
	in := &dynamodb.GetItemInput{TableName: aws.String(table), Key: k, ConsistentRead: aws.Bool(consistent)}
	if len(projection) > 0 {
		in.ProjectionExpression = aws.String(projection[0])
		in.ExpressionAttributeNames = map[string]string{"#state": "state"}
	}
	out, err := r.e.db.GetItem(ctx, in)
	if err != nil {
		return nil, fmt.Errorf("raw GetItem %s: %w", table, err)
	}
	return out.Item, nil
}

func (r *raw) query(ctx context.Context, in *dynamodb.QueryInput) error {
	if _, err := r.e.db.Query(ctx, in); err != nil {
		return fmt.Errorf("raw Query %s: %w", aws.ToString(in.TableName), err)
	}
	return nil
}

func (r *raw) tx(ctx context.Context, items ...types.TransactWriteItem) error {
	items = r.withHeads(items)
	// A lost race with another transaction on one item (a liability
	// shard, a user's feed head) is tried again, as ddb.Transact does.
	var err error
	for attempt := 0; attempt < 5; attempt++ {
		_, err = r.e.db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: items, ClientRequestToken: aws.String(newID() + newID()[:12])})
		if err == nil || !ddb.IsTransactionConflict(err) {
			break
		}
		r.conflicts.Add(1)
		time.Sleep(time.Duration(15*(attempt+1)) * time.Millisecond)
	}
	if err != nil {
		return fmt.Errorf("raw TransactWriteItems: %w", err)
	}
	return nil
}

// withHeads adds to items the feed head update of each user whose
// actions they put, as the recorder does (shared/domain/action feed.go):
// the actions less their keys, in order, and their number added to seq.
func (r *raw) withHeads(items []types.TransactWriteItem) []types.TransactWriteItem {
	var users []string
	events := map[string][]types.AttributeValue{}
	for _, it := range items {
		p := it.Put
		if p == nil || aws.ToString(p.TableName) != r.e.tables.Actions {
			continue
		}
		uid := p.Item["context"].(*types.AttributeValueMemberM).Value["user"].(*types.AttributeValueMemberM).Value["id"].(*types.AttributeValueMemberS).Value
		ev := item{}
		for k, v := range p.Item {
			if k != "pk" && k != "sk" && !strings.HasPrefix(k, "gsi") {
				ev[k] = v
			}
		}
		if events[uid] == nil {
			users = append(users, uid)
		}
		events[uid] = append(events[uid], m(ev))
	}
	for _, uid := range users {
		items = append(items, types.TransactWriteItem{Update: &types.Update{
			TableName: aws.String(r.e.tables.Actions), Key: key(r.e.tenant+"#FEED#USER#"+uid, "FEED"),
			UpdateExpression:         aws.String("SET tenantId = :t, #ev = :events ADD seq :k"),
			ExpressionAttributeNames: map[string]string{"#ev": "events"},
			ExpressionAttributeValues: item{
				":t": s(r.e.tenant), ":events": &types.AttributeValueMemberL{Value: events[uid]}, ":k": n(int64(len(events[uid]))),
			},
		}})
	}
	return items
}

const profileProjection = "id, tenantId, fullName, #state, isGuest, deleted, hasProfilePhoto, primaryPlatform, favouriteLocations, expiresAt, balance, moneySeq"

func (r *raw) session(ctx context.Context, u benchUser) error {
	_, err := r.get(ctx, r.e.tables.Sessions, key(r.e.tenant+"#SESSION#"+sha(u.Token), "SESSION"), false)
	return err
}

func (r *raw) profile(ctx context.Context, u benchUser) error {
	_, err := r.get(ctx, r.e.tables.Users, key(r.e.tenant+"#USER#"+u.ID, "PROFILE"), true, profileProjection)
	return err
}

func (r *raw) byPrefix(table, pk, prefix string, consistent bool) *dynamodb.QueryInput {
	return &dynamodb.QueryInput{
		TableName: aws.String(table), ConsistentRead: aws.Bool(consistent),
		KeyConditionExpression:    aws.String("pk = :pk AND begins_with(sk, :sk)"),
		ExpressionAttributeValues: item{":pk": s(pk), ":sk": s(prefix)},
	}
}

// userAlive is the condition check on the user the writes of a grant, a
// redemption and a check-in carry.
func (r *raw) userAlive(u benchUser) types.TransactWriteItem {
	return types.TransactWriteItem{ConditionCheck: &types.ConditionCheck{
		TableName: aws.String(r.e.tables.Users), Key: key(r.e.tenant+"#USER#"+u.ID, "PROFILE"),
		ConditionExpression:       aws.String("attribute_exists(pk) AND deleted = :false"),
		ExpressionAttributeValues: item{":false": b(false)},
	}}
}

// action returns an action item of the size and shape the recorder
// writes (context, time parts, metadata and the index keys). The actions
// of a check-in and a checkout have a place (its context and the location
// index's keys); a grant's, a redemption's and a payment's have none.
func (r *raw) action(u benchUser, typ string, atLocation bool, metadata item) types.TransactWriteItem {
	t, now, id := r.e.tenant, clock.Stamp(time.Now()), newID()
	ctx := item{
		"tenant": m(item{"id": s(t), "title": s("Local tenant")}),
		"user":   m(item{"id": s(rawUser(u)), "name": s("Bench User"), "primaryPlatform": s("UNKNOWN")}),
		"tags":   &types.AttributeValueMemberL{},
	}
	it := item{
		"pk": s(t + "#ACTION#" + id), "sk": s("ACTION"), "id": s(id), "tenantId": s(t), "type": s(typ), "environment": s("PRODUCTION"),
		"gsi1pk": s(t + "#USER#" + rawUser(u)), "gsi1sk": s(now + "#" + id),
		"gsi3pk": s(t + "#ACTIONS#" + strconv.Itoa(int(id[len(id)-1])%8)), "gsi3sk": s(now + "#" + id),
		"context":  m(ctx),
		"when":     m(item{"timestamp": s(now), "monthofyear": n(11), "weekofyear": n(48), "dayofmonth": n(25), "dayofweek": n(3), "daypart": s("afternoon")}),
		"metadata": m(metadata),
	}
	if atLocation {
		it["gsi2pk"], it["gsi2sk"] = s(t+"#LOCATION#"+r.fx.location), s(now+"#"+id)
		ctx["location"] = m(item{"id": s(r.fx.location), "title": s("Bench Cafe"), "regions": &types.AttributeValueMemberL{},
			"tags": &types.AttributeValueMemberL{}, "geo": &types.AttributeValueMemberL{Value: []types.AttributeValue{
				&types.AttributeValueMemberN{Value: "-0.1337"}, &types.AttributeValueMemberN{Value: "51.5136"}}}})
	}
	return types.TransactWriteItem{Put: &types.Put{TableName: aws.String(r.e.tables.Actions), Item: it, ConditionExpression: aws.String("attribute_not_exists(pk)")}}
}

// do runs the raw calls of operation op on user index i.
func (r *raw) do(ctx context.Context, op string, i int) error {
	if ok, err := r.rawOrder(ctx, op, i); ok {
		return err
	}
	u := r.fx.users[i]
	t := r.e.tenant
	tb := r.e.tables
	location := func(ctx context.Context) error {
		_, err := r.get(ctx, tb.Locations, key(t+"#LOC#"+r.fx.location, "LOCATION"), true)
		return err
	}
	perk := func(ctx context.Context) error {
		_, err := r.get(ctx, tb.Loyalty, key(t+"#PERKS", "PERK#"+r.fx.perk), true)
		return err
	}
	session := func(ctx context.Context) error { return r.session(ctx, u) }
	profile := func(ctx context.Context) error { return r.profile(ctx, u) }
	switch op {
	case opGetUser:
		if err := r.session(ctx, u); err != nil {
			return err
		}
		_, err := r.get(ctx, tb.Users, key(t+"#USER#"+u.ID, "PROFILE"), true)
		return err

	case opCheckin:
		// No read of the check-in slot: the write's condition finds it
		// empty (and would return the live check-in if it were not).
		if err := each(ctx, session, profile, location); err != nil {
			return err
		}
		now, id := clock.Stamp(time.Now()), newID()
		checkin := item{
			"pk": s(t + "#USER#" + rawUser(u)), "sk": s("CHECKIN"), "id": s(id), "tenantId": s(t), "userId": s(rawUser(u)),
			"locationId": s(r.fx.location), "locationTitle": s("Bench Cafe"), "userFullName": s("Bench User"),
			"gsi1pk": s(t + "#LOCATION#" + r.fx.location), "gsi1sk": s(now + "#" + id),
			"created": s(now), "updated": s(now), "expiresAt": n(time.Now().Add(30 * time.Minute).Unix()), "type": s("MANUAL"), "trigger": s("CODE"),
		}
		if err := r.tx(ctx,
			types.TransactWriteItem{Put: &types.Put{TableName: aws.String(tb.Checkins), Item: checkin, ConditionExpression: aws.String("attribute_not_exists(pk)"),
				ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld}},
			r.action(u, "CHECKIN_CREATED", true, item{"type": s("MANUAL"), "trigger": s("CODE"), "checkinId": s(id)}),
			r.userAlive(u),
		); err != nil {
			return err
		}
		r.setCheckin(i, id)
		return nil

	case opCheckout:
		if err := each(ctx, session, profile, func(ctx context.Context) error {
			_, err := r.get(ctx, tb.Checkins, key(t+"#USER#"+rawUser(u), "CHECKIN"), true)
			return err
		}, location); err != nil {
			return err
		}
		id := r.checkin(i)
		return r.tx(ctx,
			types.TransactWriteItem{Delete: &types.Delete{TableName: aws.String(tb.Checkins), Key: key(t+"#USER#"+rawUser(u), "CHECKIN"),
				ConditionExpression: aws.String("id = :id"), ExpressionAttributeValues: item{":id": s(id)}}},
			r.action(u, "CHECKOUT", true, item{"type": s("MANUAL"), "trigger": s("CODE"), "checkinId": s(id), "reason": s("REQUESTED"),
				"checkedInAt": s(clock.Stamp(time.Now())), "durationSeconds": n(0)}),
		)

	case opGrant:
		if err := together(ctx, profile, perk); err != nil {
			return err
		}
		cur, seq, err := r.award(ctx, u, i)
		if err != nil {
			return err
		}
		actionID := "raw-" + strconv.FormatInt(time.Now().UnixNano(), 36)
		if err := r.tx(ctx, r.withLiability(1, r.awardWrite(u, cur, seq, cur+1, "granted :one"),
			r.userAlive(u),
			r.action(u, "AWARD_GRANTED", false, item{"awardId": s(rawUser(u) + "-" + r.fx.perk), "perkId": s(r.fx.perk), "points": n(1), "source": s("API"),
				"pointsGranted": n(1), "pointsAvailable": n(cur + 1)}),
			r.entry(u, seq+1, "EARN", 1, cur+1, actionID),
		)...); err != nil {
			return err
		}
		return r.rulesVersion(ctx)

	case opRedeem:
		if err := r.session(ctx, u); err != nil {
			return err
		}
		if err := together(ctx, perk, profile); err != nil {
			return err
		}
		cur, seq, err := r.award(ctx, u, i)
		if err != nil {
			return err
		}
		actionID := "raw-" + strconv.FormatInt(time.Now().UnixNano(), 36)
		if err := r.tx(ctx, r.withLiability(-1, r.awardWrite(u, cur, seq, cur-1, "redeemed :one, redemptions :one, refundable :one"),
			r.userAlive(u),
			r.action(u, "AWARD_REDEEMED", false, item{"awardId": s(rawUser(u) + "-" + r.fx.perk), "perkId": s(r.fx.perk), "points": n(1), "pointsAvailable": n(cur - 1)}),
			r.entry(u, seq+1, "BURN", -1, cur-1, actionID),
		)...); err != nil {
			return err
		}
		return r.rulesVersion(ctx)

	case opAwards:
		if err := r.profile(ctx, u); err != nil {
			return err
		}
		var fs []func(context.Context) error
		for _, q := range []*dynamodb.QueryInput{
			r.byPrefix(tb.Loyalty, t+"#PERKS", "PERK#", true),
			r.byPrefix(tb.Loyalty, t+"#USER#"+u.ID, "AWARD#", true),
			{TableName: aws.String(tb.Audiences), IndexName: aws.String("gsi1"),
				KeyConditionExpression: aws.String("gsi1pk = :pk"), ExpressionAttributeValues: item{":pk": s(t + "#USER#" + u.ID)}},
			r.byPrefix(tb.Audiences, t+"#SEGMENTS", "SEGMENT#", true),
		} {
			fs = append(fs, func(ctx context.Context) error { return r.query(ctx, q) })
		}
		return together(ctx, fs...)

	case opTxn:
		// A new short code is written with the payment (its condition
		// refuses a code already used), with no read of it first.
		if err := each(ctx, profile, func(ctx context.Context) error {
			_, err := r.get(ctx, tb.Checkins, key(t+"#USER#"+u.ID, "CHECKIN"), true)
			return err
		}); err != nil {
			return err
		}
		code := fmt.Sprintf("R-%s-%d", randomHex(3), r.fx.seq.Add(1))
		now, orderID, txnID := clock.Stamp(time.Now()), newID(), newID()
		notExists := aws.String("attribute_not_exists(pk)")
		put := func(table string, it item) types.TransactWriteItem {
			return types.TransactWriteItem{Put: &types.Put{TableName: aws.String(table), Item: it, ConditionExpression: notExists}}
		}
		empty := &types.AttributeValueMemberL{}
		price := decimal("3.5") // the request's totalPrice
		if err := r.tx(ctx,
			put(tb.Pos, item{"pk": s(t + "#TXNCODE#" + code), "sk": s("TXNCODE"), "transactionId": s(txnID), "bodyHash": s(sha(code))}),
			put(tb.Pos, item{"pk": s(t + "#ORDER#" + orderID), "sk": s("ORDER"), "id": s(orderID), "tenantId": s(t), "userId": s(rawUser(u)),
				"version": n(1), "state": s("COMPLETED"), "redemptions": empty, "basket": empty, "created": s(now), "updatedAt": s(now), "completedAt": s(now),
				"earnedBase": price, "transactionsTotal": price, "refundedTotal": n(0), "refundedAfter": n(0), "transactionCount": n(1),
				"redemptionsReturned": b(false), "pointsEarned": m(item{}), "pointsReversed": m(item{})}),
			r.action(u, "ORDER_COMPLETED", false, item{"orderId": s(orderID), "value": price, "transactionsTotal": price, "redemptions": n(0),
				"basket": empty, "paymentType": s("CARD_AT_POS")}),
			put(tb.Pos, item{"pk": s(t + "#TXN#" + txnID), "sk": s("TXN"), "id": s(txnID), "tenantId": s(t), "userId": s(rawUser(u)),
				"orderId": s(orderID), "shortCode": s(code), "totalPrice": price, "paymentType": s("CARD_AT_POS"), "orderGenerated": b(true),
				"refunded": b(false), "created": s(now)}),
			r.action(u, "TRANSACTION_CREATED", false, item{"transactionId": s(txnID), "orderId": s(orderID), "shortCode": s(code), "totalPrice": price,
				"paymentType": s("CARD_AT_POS")}),
		); err != nil {
			return err
		}
		return r.rulesVersion(ctx)
	}
	return fmt.Errorf("unknown operation %s", op)
}

// rulesVersion reads the tenant's rules version, as a request that
// recorded actions does before it runs the rules on them (its cache holds
// the rules).
func (r *raw) rulesVersion(ctx context.Context) error {
	_, err := r.get(ctx, r.e.tables.Audiences, key(r.e.tenant+"#RULES", "VERSION"), true)
	return err
}

// together runs the calls fs at once, as the functions run the reads they
// make in parallel, and returns their errors.
func together(ctx context.Context, fs ...func(context.Context) error) error {
	errs := make([]error, len(fs))
	var wg sync.WaitGroup
	for i, f := range fs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = f(ctx)
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// each runs the calls fs one after another and stops at the first error.
func each(ctx context.Context, fs ...func(context.Context) error) error {
	for _, f := range fs {
		if err := f(ctx); err != nil {
			return err
		}
	}
	return nil
}

// awardUpdate is the conditional update of a user's raw award, with the
// expression the loyalty store uses.
func (r *raw) awardUpdate(u benchUser, p, cond, expr string, values item) types.TransactWriteItem {
	t, now, id := r.e.tenant, clock.Stamp(time.Now()), rawUser(u)+"-"+p
	v := item{":id": s(id), ":t": s(t), ":u": s(rawUser(u)), ":p": s(p), ":now": s(now), ":gpk": s(t + "#AWARDS"),
		":gsk": s(now + "#" + id), ":zero": n(0)}
	for k, x := range values {
		v[k] = x
	}
	return types.TransactWriteItem{Update: &types.Update{
		TableName: aws.String(r.e.tables.Loyalty), Key: key(t+"#USER#"+rawUser(u), "AWARD#"+p),
		ConditionExpression: aws.String(cond), UpdateExpression: aws.String(expr), ExpressionAttributeValues: v,
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	}}
}

// award reads user u's raw award of the mix's perk: its points and its
// ledger entry count.
func (r *raw) award(ctx context.Context, u benchUser, i int) (cur, seq int64, err error) {
	cur, seq, err = r.awardOf(ctx, u, r.fx.perk)
	if err != nil {
		return 0, 0, fmt.Errorf("raw award of user %d: %w", i, err)
	}
	return cur, seq, nil
}

// pointsOf reads a raw award's points and ledger entry count.
func pointsOf(a item) (cur, seq int64, err error) {
	avail, ok := a["available"].(*types.AttributeValueMemberN)
	if !ok {
		return 0, 0, fmt.Errorf("the raw award has no points (prepare makes it)")
	}
	cur, _ = strconv.ParseInt(avail.Value, 10, 64)
	if v, ok := a["seq"].(*types.AttributeValueMemberN); ok {
		seq, _ = strconv.ParseInt(v.Value, 10, 64)
	}
	return cur, seq, nil
}

// awardWrite is the write of user u's raw award from (cur, seq) as read
// to next points and one more entry, adding to the counters in add, as
// the award domain writes it.
func (r *raw) awardWrite(u benchUser, cur, seq, next int64, add string) types.TransactWriteItem {
	return r.awardWriteOf(u, r.fx.perk, cur, seq, next, add)
}

// awardWriteOf is awardWrite of user u's raw award of perk p.
func (r *raw) awardWriteOf(u benchUser, p string, cur, seq, next int64, add string) types.TransactWriteItem {
	set := "SET id = :id, tenantId = :t, userId = :u, perkId = :p, updatedAt = :now, created = if_not_exists(created, :now), gsi1pk = :gpk, gsi1sk = :gsk, "
	for _, c := range []string{"granted", "redeemed", "refunded", "refundable", "redemptions", "reversed", "adjusted"} {
		if !strings.Contains(add, c+" ") {
			set += c + " = if_not_exists(" + c + ", :zero), "
		}
	}
	return r.awardUpdate(u, p, "available = :cur AND (attribute_not_exists(seq) OR seq = :seq)",
		set+"available = :avail, seq = :next ADD "+add,
		item{":cur": n(cur), ":seq": n(seq), ":avail": n(next), ":next": n(seq + 1), ":one": n(1)})
}

// entry is the Put of a ledger entry of user u's raw award.
func (r *raw) entry(u benchUser, seq int64, typ string, points, after int64, actionID string) types.TransactWriteItem {
	return r.entryOf(u, r.fx.perk, seq, typ, points, after, actionID)
}

// entryOf is entry of user u's raw award of perk p.
func (r *raw) entryOf(u benchUser, p string, seq int64, typ string, points, after int64, actionID string) types.TransactWriteItem {
	t, uid := r.e.tenant, rawUser(u)
	return types.TransactWriteItem{Put: &types.Put{
		TableName: aws.String(r.e.tables.Loyalty),
		Item: item{"pk": s(t + "#USER#" + uid), "sk": s(fmt.Sprintf("LEDGER#%s#%010d", p, seq)),
			"id": s(fmt.Sprintf("%s-%s.%d", uid, p, seq)), "seq": n(seq), "type": s(typ), "points": n(points), "balanceAfter": n(after),
			"cause": m(item{"actionId": s(actionID), "source": s("API")}), "created": s(clock.Stamp(time.Now())), "tenantId": s(t), "userId": s(uid), "perkId": s(p)},
		ConditionExpression:                 aws.String("attribute_not_exists(pk)"),
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	}}
}

func (r *raw) setCheckin(i int, id string) {
	r.mu.Lock()
	r.checkins[i] = id
	r.mu.Unlock()
}

func (r *raw) checkin(i int) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.checkins[i]
}

// newID returns a 24-hex-digit id, as the platform's ids are.
func newID() string { return randomHex(12) }

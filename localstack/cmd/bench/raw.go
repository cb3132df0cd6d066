package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// The raw side issues, for each operation of the mix, the DynamoDB calls
// the API request makes (the same operations, one after another as the
// functions make them, with the same tables, keys, expressions and item
// sizes), read from the calls the functions send for one request of each
// (and checked against the ddbCalls of the request log, which the table
// shows next to them):
//
//	GET /users/{id}     GetItem session, GetItem profile                          2
//	check-in            GetItem session, profile, location, tenant, check-in;
//	                    TransactWriteItems (check-in, CHECKIN_CREATED, user)      6
//	checkout            GetItem session, profile, tenant, check-in, location;
//	                    TransactWriteItems (delete check-in, CHECKOUT)            6
//	grant               GetItem service key, tenant, perk, profile, award;
//	                    TransactWriteItems (award, user, AWARD_GRANTED);
//	                    Query rules, Query enrichments                            8
//	redeem              GetItem session, profile, perk, tenant;
//	                    TransactWriteItems (award, user, AWARD_REDEEMED);
//	                    Query rules, GetItem award, Query enrichments             8
//	GET /awards         GetItem service key, tenant, profile; Query memberships,
//	                    segments, perks, the user's awards, enrichments           8
//	POST /transactions  GetItem service key; Query rules; GetItem tenant, short
//	                    code, profile, profile, check-in; TransactWriteItems
//	                    (short code, order, ORDER_COMPLETED, transaction,
//	                    TRANSACTION_CREATED); Query rules                         9
//
// Writes go to keys of their own (users "raw<id>"), so that their
// conditions hold as the API's do.

// rawCalls is the number of DynamoDB calls of each operation's raw side.
var rawCalls = map[string]int{opGetUser: 2, opCheckin: 6, opCheckout: 6, opGrant: 8, opRedeem: 8, opAwards: 8, opTxn: 9}

type item = map[string]types.AttributeValue

func s(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
func n(v int64) types.AttributeValue {
	return &types.AttributeValueMemberN{Value: strconv.FormatInt(v, 10)}
}
func b(v bool) types.AttributeValue { return &types.AttributeValueMemberBOOL{Value: v} }
func m(v item) types.AttributeValue { return &types.AttributeValueMemberM{Value: v} }
func key(pk, sk string) item        { return item{"pk": s(pk), "sk": s(sk)} }

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
}

// rawUser is the key part of a user's raw twin.
func rawUser(u benchUser) string { return "raw" + u.ID }

// prepare gives every user's raw twin an award with plenty of points, as
// setup does for the users.
func (r *raw) prepare(ctx context.Context) error {
	for _, u := range r.fx.users {
		t, now := r.e.tenant, stamp()
		id := rawUser(u) + "-" + r.fx.perk
		_, err := r.e.db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(r.e.tables.Loyalty), Item: item{
			"pk": s(t + "#USER#" + rawUser(u)), "sk": s("AWARD#" + r.fx.perk), "id": s(id), "tenantId": s(t),
			"userId": s(rawUser(u)), "perkId": s(r.fx.perk), "created": s(now), "updatedAt": s(now),
			"gsi1pk": s(t + "#AWARDS"), "gsi1sk": s(now + "#" + id),
			"available": n(100_000_000), "granted": n(100_000_000), "redeemed": n(0), "refunded": n(0), "refundable": n(0), "redemptions": n(0),
		}})
		if err != nil {
			return fmt.Errorf("raw award: %w", err)
		}
	}
	return nil
}

func stamp() string { return time.Now().UTC().Format("2006-01-02T15:04:05.000Z") }

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
	_, err := r.e.db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: items, ClientRequestToken: aws.String(newID() + newID()[:12])})
	if err != nil {
		return fmt.Errorf("raw TransactWriteItems: %w", err)
	}
	return nil
}

const profileProjection = "id, tenantId, fullName, #state, isGuest, deleted, hasProfilePhoto, primaryPlatform, favouriteLocations, expiresAt"

func (r *raw) session(ctx context.Context, u benchUser) error {
	_, err := r.get(ctx, r.e.tables.Sessions, key(r.e.tenant+"#SESSION#"+sha(u.Token), "SESSION"), false)
	return err
}

func (r *raw) serviceKey(ctx context.Context) error {
	_, err := r.get(ctx, r.e.tables.Tenants, key("SERVICEKEY#"+sha(r.e.serviceToken), "KEY"), false)
	return err
}

func (r *raw) tenantItem(ctx context.Context) error {
	_, err := r.get(ctx, r.e.tables.Tenants, key(r.e.tenant, "TENANT"), false)
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

func (r *raw) rules(ctx context.Context) error {
	return r.query(ctx, r.byPrefix(r.e.tables.Audiences, r.e.tenant+"#RULES", "RULE#", true))
}

func (r *raw) enrichments(ctx context.Context) error {
	in := r.byPrefix(r.e.tables.Loyalty, r.e.tenant+"#ENRICHMENTS", "ENRICH#", true)
	in.FilterExpression = aws.String("loyaltyProvider = :p")
	in.ExpressionAttributeValues[":p"] = s("INTERNAL")
	return r.query(ctx, in)
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
// writes (context, time parts, metadata and the three index keys).
func (r *raw) action(u benchUser, typ string, metadata item) types.TransactWriteItem {
	t, now, id := r.e.tenant, stamp(), newID()
	it := item{
		"pk": s(t + "#ACTION#" + id), "sk": s("ACTION"), "id": s(id), "tenantId": s(t), "type": s(typ), "environment": s("PRODUCTION"),
		"gsi1pk": s(t + "#USER#" + rawUser(u)), "gsi1sk": s(now + "#" + id),
		"gsi2pk": s(t + "#LOCATION#" + r.fx.location), "gsi2sk": s(now + "#" + id),
		"gsi3pk": s(t + "#ACTIONS#" + strconv.Itoa(int(id[len(id)-1])%8)), "gsi3sk": s(now + "#" + id),
		"userId": s(rawUser(u)), "created": s(now),
		"context": m(item{
			"tenant": m(item{"id": s(t), "title": s("Local tenant")}),
			"user":   m(item{"id": s(rawUser(u)), "name": s("Bench User"), "primaryPlatform": s("UNKNOWN")}),
			"location": m(item{"id": s(r.fx.location), "title": s("Bench Cafe"), "regions": &types.AttributeValueMemberL{},
				"tags": &types.AttributeValueMemberL{}, "geo": &types.AttributeValueMemberL{Value: []types.AttributeValue{
					&types.AttributeValueMemberN{Value: "-0.1337"}, &types.AttributeValueMemberN{Value: "51.5136"}}}}),
			"tags": &types.AttributeValueMemberL{},
		}),
		"when":     m(item{"timestamp": s(now), "monthofyear": n(11), "weekofyear": n(48), "dayofmonth": n(25), "dayofweek": n(3), "daypart": s("afternoon")}),
		"metadata": m(metadata),
	}
	return types.TransactWriteItem{Put: &types.Put{TableName: aws.String(r.e.tables.Actions), Item: it, ConditionExpression: aws.String("attribute_not_exists(pk)")}}
}

// do runs the raw calls of operation op on user index i.
func (r *raw) do(ctx context.Context, op string, i int) error {
	u := r.fx.users[i]
	t := r.e.tenant
	tb := r.e.tables
	switch op {
	case opGetUser:
		if err := r.session(ctx, u); err != nil {
			return err
		}
		_, err := r.get(ctx, tb.Users, key(t+"#USER#"+u.ID, "PROFILE"), true)
		return err

	case opCheckin:
		for _, f := range []func(context.Context) error{
			func(ctx context.Context) error { return r.session(ctx, u) },
			func(ctx context.Context) error { return r.profile(ctx, u) },
			func(ctx context.Context) error {
				_, err := r.get(ctx, tb.Locations, key(t+"#LOC#"+r.fx.location, "LOCATION"), true)
				return err
			},
			r.tenantItem,
			func(ctx context.Context) error {
				_, err := r.get(ctx, tb.Checkins, key(t+"#USER#"+rawUser(u), "CHECKIN"), true)
				return err
			},
		} {
			if err := f(ctx); err != nil {
				return err
			}
		}
		now, id := stamp(), newID()
		checkin := item{
			"pk": s(t + "#USER#" + rawUser(u)), "sk": s("CHECKIN"), "id": s(id), "tenantId": s(t), "userId": s(rawUser(u)),
			"locationId": s(r.fx.location), "locationTitle": s("Bench Cafe"), "userFullName": s("Bench User"),
			"gsi1pk": s(t + "#LOCATION#" + r.fx.location), "gsi1sk": s(now + "#" + id),
			"created": s(now), "updated": s(now), "expiresAt": n(time.Now().Add(30 * time.Minute).Unix()), "type": s("MANUAL"), "trigger": s("CODE"),
		}
		if err := r.tx(ctx,
			types.TransactWriteItem{Put: &types.Put{TableName: aws.String(tb.Checkins), Item: checkin, ConditionExpression: aws.String("attribute_not_exists(pk)")}},
			r.action(u, "CHECKIN_CREATED", item{"type": s("MANUAL"), "trigger": s("CODE"), "checkinId": s(id)}),
			r.userAlive(u),
		); err != nil {
			return err
		}
		r.setCheckin(i, id)
		return nil

	case opCheckout:
		if err := r.session(ctx, u); err != nil {
			return err
		}
		if err := r.profile(ctx, u); err != nil {
			return err
		}
		if err := r.tenantItem(ctx); err != nil {
			return err
		}
		if _, err := r.get(ctx, tb.Checkins, key(t+"#USER#"+rawUser(u), "CHECKIN"), true); err != nil {
			return err
		}
		if _, err := r.get(ctx, tb.Locations, key(t+"#LOC#"+r.fx.location, "LOCATION"), true); err != nil {
			return err
		}
		id := r.checkin(i)
		return r.tx(ctx,
			types.TransactWriteItem{Delete: &types.Delete{TableName: aws.String(tb.Checkins), Key: key(t+"#USER#"+rawUser(u), "CHECKIN"),
				ConditionExpression: aws.String("id = :id"), ExpressionAttributeValues: item{":id": s(id)}}},
			r.action(u, "CHECKOUT", item{"type": s("MANUAL"), "trigger": s("CODE"), "checkinId": s(id), "reason": s("REQUESTED"),
				"checkedInAt": s(stamp()), "durationSeconds": n(0)}),
		)

	case opGrant:
		if err := r.serviceKey(ctx); err != nil {
			return err
		}
		if err := r.tenantItem(ctx); err != nil {
			return err
		}
		if _, err := r.get(ctx, tb.Loyalty, key(t+"#PERKS", "PERK#"+r.fx.perk), true); err != nil {
			return err
		}
		if err := r.profile(ctx, u); err != nil {
			return err
		}
		award, err := r.get(ctx, tb.Loyalty, key(t+"#USER#"+rawUser(u), "AWARD#"+r.fx.perk), true)
		if err != nil {
			return err
		}
		avail, ok := award["available"].(*types.AttributeValueMemberN)
		if !ok {
			return fmt.Errorf("raw grant: user %d's raw award has no points (prepare makes it)", i)
		}
		cur, _ := strconv.ParseInt(avail.Value, 10, 64)
		if err := r.tx(ctx, r.awardUpdate(u, "available = :cur",
			"SET id = :id, tenantId = :t, userId = :u, perkId = :p, updatedAt = :now, created = if_not_exists(created, :now), gsi1pk = :gpk, gsi1sk = :gsk, redeemed = if_not_exists(redeemed, :zero), refunded = if_not_exists(refunded, :zero), refundable = if_not_exists(refundable, :zero), redemptions = if_not_exists(redemptions, :zero), available = :avail ADD granted :delta",
			item{":cur": n(cur), ":avail": n(cur + 1), ":delta": n(1)}),
			r.userAlive(u),
			r.action(u, "AWARD_GRANTED", item{"awardId": s(rawUser(u) + "-" + r.fx.perk), "perkId": s(r.fx.perk), "points": n(1), "source": s("API")}),
		); err != nil {
			return err
		}
		if err := r.rules(ctx); err != nil {
			return err
		}
		return r.enrichments(ctx)

	case opRedeem:
		if err := r.session(ctx, u); err != nil {
			return err
		}
		if err := r.profile(ctx, u); err != nil {
			return err
		}
		if _, err := r.get(ctx, tb.Loyalty, key(t+"#PERKS", "PERK#"+r.fx.perk), true); err != nil {
			return err
		}
		if err := r.tenantItem(ctx); err != nil {
			return err
		}
		if err := r.tx(ctx, r.awardUpdate(u, "attribute_exists(pk) AND available >= :need",
			"SET id = :id, tenantId = :t, userId = :u, perkId = :p, updatedAt = :now, created = if_not_exists(created, :now), gsi1pk = :gpk, gsi1sk = :gsk, granted = if_not_exists(granted, :zero), refunded = if_not_exists(refunded, :zero), available = if_not_exists(available, :init) - :v, refundable = if_not_exists(refundable, :zero) + :v ADD redeemed :v, redemptions :one",
			item{":need": n(1), ":v": n(1), ":one": n(1), ":init": n(0)}),
			r.userAlive(u),
			r.action(u, "AWARD_REDEEMED", item{"awardId": s(rawUser(u) + "-" + r.fx.perk), "perkId": s(r.fx.perk), "points": n(1)}),
		); err != nil {
			return err
		}
		if err := r.rules(ctx); err != nil {
			return err
		}
		if _, err := r.get(ctx, tb.Loyalty, key(t+"#USER#"+rawUser(u), "AWARD#"+r.fx.perk), true); err != nil {
			return err
		}
		return r.enrichments(ctx)

	case opAwards:
		if err := r.serviceKey(ctx); err != nil {
			return err
		}
		if err := r.tenantItem(ctx); err != nil {
			return err
		}
		if err := r.profile(ctx, u); err != nil {
			return err
		}
		if err := r.query(ctx, &dynamodb.QueryInput{TableName: aws.String(tb.Audiences), IndexName: aws.String("gsi1"),
			KeyConditionExpression: aws.String("gsi1pk = :pk"), ExpressionAttributeValues: item{":pk": s(t + "#USER#" + u.ID)}}); err != nil {
			return err
		}
		for _, q := range []*dynamodb.QueryInput{
			r.byPrefix(tb.Audiences, t+"#SEGMENTS", "SEGMENT#", true),
			r.byPrefix(tb.Loyalty, t+"#PERKS", "PERK#", true),
			r.byPrefix(tb.Loyalty, t+"#USER#"+u.ID, "AWARD#", true),
		} {
			if err := r.query(ctx, q); err != nil {
				return err
			}
		}
		return r.enrichments(ctx)

	case opTxn:
		if err := r.serviceKey(ctx); err != nil {
			return err
		}
		if err := r.rules(ctx); err != nil {
			return err
		}
		if err := r.tenantItem(ctx); err != nil {
			return err
		}
		code := fmt.Sprintf("R-%s-%d", randomHex(3), r.fx.seq.Add(1))
		if _, err := r.get(ctx, tb.Pos, key(t+"#TXNCODE#"+code, "TXNCODE"), true); err != nil {
			return err
		}
		for range 2 {
			if err := r.profile(ctx, u); err != nil {
				return err
			}
		}
		if _, err := r.get(ctx, tb.Checkins, key(t+"#USER#"+u.ID, "CHECKIN"), true); err != nil {
			return err
		}
		now, orderID, txnID := stamp(), newID(), newID()
		notExists := aws.String("attribute_not_exists(pk)")
		put := func(table string, it item) types.TransactWriteItem {
			return types.TransactWriteItem{Put: &types.Put{TableName: aws.String(table), Item: it, ConditionExpression: notExists}}
		}
		empty := &types.AttributeValueMemberL{}
		if err := r.tx(ctx,
			put(tb.Pos, item{"pk": s(t + "#TXNCODE#" + code), "sk": s("TXNCODE"), "transactionId": s(txnID), "bodyHash": s(sha(code))}),
			put(tb.Pos, item{"pk": s(t + "#ORDER#" + orderID), "sk": s("ORDER"), "id": s(orderID), "tenantId": s(t), "userId": s(rawUser(u)),
				"version": n(1), "state": s("COMPLETED"), "redemptions": empty, "basket": empty, "created": s(now), "updatedAt": s(now), "completedAt": s(now),
				"earnedBase": n(3), "transactionsTotal": n(3), "refundedTotal": n(0), "refundedAfter": n(0), "transactionCount": n(1),
				"redemptionsReturned": b(false), "pointsEarned": m(item{}), "pointsReversed": m(item{})}),
			r.action(u, "ORDER_COMPLETED", item{"orderId": s(orderID), "value": n(3), "scenario": s("PAYATPOS")}),
			put(tb.Pos, item{"pk": s(t + "#TXN#" + txnID), "sk": s("TXN"), "id": s(txnID), "tenantId": s(t), "userId": s(rawUser(u)),
				"orderId": s(orderID), "shortCode": s(code), "totalPrice": n(3), "paymentType": s("CARD_AT_POS"), "orderGenerated": b(true),
				"refunded": b(false), "created": s(now), "gsi1pk": s(t + "#TXNS"), "gsi1sk": s(now + "#" + txnID)}),
			r.action(u, "TRANSACTION_CREATED", item{"transactionId": s(txnID), "orderId": s(orderID), "totalPrice": n(3), "paymentType": s("CARD_AT_POS")}),
		); err != nil {
			return err
		}
		return r.rules(ctx)
	}
	return fmt.Errorf("unknown operation %s", op)
}

// awardUpdate is the conditional update of a user's raw award, with the
// expression the loyalty store uses.
func (r *raw) awardUpdate(u benchUser, cond, expr string, values item) types.TransactWriteItem {
	t, now, id := r.e.tenant, stamp(), rawUser(u)+"-"+r.fx.perk
	v := item{":id": s(id), ":t": s(t), ":u": s(rawUser(u)), ":p": s(r.fx.perk), ":now": s(now), ":gpk": s(t + "#AWARDS"),
		":gsk": s(now + "#" + id), ":zero": n(0)}
	for k, x := range values {
		v[k] = x
	}
	return types.TransactWriteItem{Update: &types.Update{
		TableName: aws.String(r.e.tables.Loyalty), Key: key(t+"#USER#"+rawUser(u), "AWARD#"+r.fx.perk),
		ConditionExpression: aws.String(cond), UpdateExpression: aws.String(expr), ExpressionAttributeValues: v,
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

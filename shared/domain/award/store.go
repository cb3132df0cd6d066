package award

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash/fnv"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/loyalty-platform/platform/shared/platform/clock"
	"github.com/loyalty-platform/platform/shared/platform/ddb"
)

// Item layout of the Loyalty table for awards (every key starts with the
// tenant id):
//
//	pk = <t>#USER#<userId>   sk = AWARD#<perkId>   a user's award of a perk
//	gsi1: gsi1pk = <t>#AWARDS   gsi1sk = <updatedAt>#<awardId>   the tenant's awards by last change
//	gsi2: gsi2pk = <t>#LOTDUE#<shard 0-7>   gsi2sk = <dueAt>#<userId>#<perkId>
//	      awards whose lots expire, by when the expiry run next has work on
//	      them (sparse, keys only; the shard, of the user id, spreads the
//	      writes of a tenant's awards over eight keys)
//	pk = EXPIRY#LOTS   sk = <t>   the tenants whose perks ever had an expiry policy
//	pk = <t>#LIABILITY#<perkId>   sk = SHARD#<00-15>   a perk's points liability, one
//	      of LiabilityShards: outstanding and x#<expiresAt> (points of lots
//	      expiring then), each the sum of ADD deltas (liability.go)
//
// An award item holds liabilityCounted (true) once its perk's liability
// holds it; an award written before the marker existed has none, and is
// counted whole by its next write or by the liability rebuild
// (liability.go, rebuild.go).
//
// One item per (user, perk) is what makes "one award per user and perk"
// hold under any concurrency; a user's awards are one Query. Only awards
// that changed at least once are stored (virtual ones are derived from the
// perks and memberships). Every write keeps the counters: available,
// granted, redeemed, refunded, refundable (redeemed and not yet refunded)
// and redemptions (how many), reversed (taken back by reversals) and
// adjusted (the net of the admin's settings), so that available is
// always (initial for a virtual award) + granted - redeemed + refunded -
// reversed + adjusted.

const skAwardPrefix = "AWARD#"

func userPK(t, uid string) string { return t + "#USER#" + uid }

// dueShards is how many keys of the expiry index a tenant's awards spread
// over.
const dueShards = 8

func duePK(t, uid string) string {
	h := fnv.New32a()
	h.Write([]byte(uid))
	return fmt.Sprintf("%s#LOTDUE#%d", t, h.Sum32()%dueShards)
}
func dueSK(at, uid, perkID string) string { return at + "#" + uid + "#" + perkID }
func awardSK(perkID string) string        { return skAwardPrefix + perkID }
func tenantPK(t string) string            { return t + "#AWARDS" }
func indexSK(ts, id string) string        { return ts + "#" + id }
func num(n int) *types.AttributeValueMemberN {
	return &types.AttributeValueMemberN{Value: strconv.Itoa(n)}
}
func str(s string) *types.AttributeValueMemberS { return &types.AttributeValueMemberS{Value: s} }

func liabilityPK(t, perkID string) string { return t + "#LIABILITY#" + perkID }

// expiryAttrPrefix starts the name of a liability shard's attribute of
// one expiry instant: x#<expiresAt>.
const expiryAttrPrefix = "x#"

func expiryAttr(at string) string { return expiryAttrPrefix + at }

func liabilityKey(t, perkID string, shard int) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{"pk": str(liabilityPK(t, perkID)), "sk": str(fmt.Sprintf("SHARD#%02d", shard))}
}

func awardKey(t, uid, perkID string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{"pk": str(userPK(t, uid)), "sk": str(awardSK(perkID))}
}

// record is an award as stored.
type record struct {
	PK          string `dynamodbav:"pk"`
	SK          string `dynamodbav:"sk"`
	GSI1PK      string `dynamodbav:"gsi1pk"`
	GSI1SK      string `dynamodbav:"gsi1sk"`
	ID          string `dynamodbav:"id"`
	TenantID    string `dynamodbav:"tenantId"`
	UserID      string `dynamodbav:"userId"`
	PerkID      string `dynamodbav:"perkId"`
	Available   int    `dynamodbav:"available"`
	Granted     int    `dynamodbav:"granted"`
	Redeemed    int    `dynamodbav:"redeemed"`
	Refunded    int    `dynamodbav:"refunded"`
	Refundable  int    `dynamodbav:"refundable"`
	Redemptions int    `dynamodbav:"redemptions"`
	// Reversed counts the points reversals took back (a refunded order's
	// earn); Adjusted the net of the admin's settings of available.
	Reversed int `dynamodbav:"reversed"`
	Adjusted int `dynamodbav:"adjusted"`
	// Expired counts the points of lots that expired.
	Expired int `dynamodbav:"expired"`
	// Seq counts the award's ledger entries (0: none yet, or an award
	// stored before the ledger).
	Seq int `dynamodbav:"seq"`
	// Lots are the award's lots that hold points; Drawn what its burns not
	// yet refunded took from each lot; ActivityAt its last earn or burn
	// under an AFTER_ACTIVITY policy (see lots.go).
	Lots       []lot  `dynamodbav:"lots"`
	Drawn      []draw `dynamodbav:"drawn"`
	ActivityAt string `dynamodbav:"activityAt,omitempty"`
	Created    string `dynamodbav:"created"`
	UpdatedAt  string `dynamodbav:"updatedAt"`
	// LiabilityCounted tells that the perk's liability holds the award
	// (liability.go): set by every write of the award since the marker
	// exists (which adds the whole award when it was not set) and by the
	// liability rebuild; never removed. LiabilityCountedBy is the
	// operation of the rebuild that set it, if one did.
	LiabilityCounted   bool   `dynamodbav:"liabilityCounted,omitempty"`
	LiabilityCountedBy string `dynamodbav:"liabilityCountedBy,omitempty"`
}

// store is the award domain's access to DynamoDB.
type store struct {
	db    ddb.API
	table string
}

// get reads an award; found is false when it was never stored.
func (s *store) get(ctx context.Context, t, uid, perkID string) (rec record, found bool, err error) {
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(s.table), Key: awardKey(t, uid, perkID), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return record{}, false, fmt.Errorf("get award %s: %w", ID(uid, perkID), err)
	}
	if out.Item == nil {
		return record{}, false, nil
	}
	if err := attributevalue.UnmarshalMap(out.Item, &rec); err != nil {
		return record{}, false, fmt.Errorf("get award %s: %w", ID(uid, perkID), err)
	}
	return rec, true, nil
}

// ofUser returns every stored award of a user.
func (s *store) ofUser(ctx context.Context, t, uid string) ([]record, error) {
	in := &dynamodb.QueryInput{
		TableName:              aws.String(s.table),
		KeyConditionExpression: aws.String("pk = :pk AND begins_with(sk, :sk)"),
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":pk": str(userPK(t, uid)), ":sk": str(skAwardPrefix),
		},
		ConsistentRead: aws.Bool(true),
	}
	var out []record
	for {
		page, err := s.db.Query(ctx, in)
		if err != nil {
			return nil, fmt.Errorf("list awards of %s: %w", uid, err)
		}
		var recs []record
		if err := attributevalue.UnmarshalListOfMaps(page.Items, &recs); err != nil {
			return nil, fmt.Errorf("list awards of %s: %w", uid, err)
		}
		out = append(out, recs...)
		if len(page.LastEvaluatedKey) == 0 {
			return out, nil
		}
		in.ExclusiveStartKey = page.LastEvaluatedKey
	}
}

// segmentMarker is the Put, conditional on being new, of the marker that
// a segment grant sent with Idempotency-Key key granted member uid (see
// GrantSegment):
//
//	pk = <t>#SEGGRANT#<SHA-256 of the key>#<perkId>#<segmentId>   sk = <userId>
//
// Markers are a few bytes each and stay (the Loyalty table has no TTL).
func (s *store) segmentMarker(t, key, perkID, segmentID, uid string, now time.Time) types.TransactWriteItem {
	sum := sha256.Sum256([]byte(key))
	return types.TransactWriteItem{Put: &types.Put{
		TableName: aws.String(s.table),
		Item: map[string]types.AttributeValue{
			"pk": str(t + "#SEGGRANT#" + hex.EncodeToString(sum[:]) + "#" + perkID + "#" + segmentID), "sk": str(uid),
			"created": str(clock.Stamp(now)),
		},
		ConditionExpression: aws.String("attribute_not_exists(pk)"),
	}}
}

// change is one write of an award: the SET and ADD clauses beyond the
// keys and timestamps every write sets, its condition and their values.
type change struct {
	set       string
	add       string
	remove    string
	condition string
	values    map[string]types.AttributeValue
}

// item returns the Update of an award for a transaction. Every write sets
// the identity attributes, the index keys (so the tenant index lists it
// by this change) and the timestamps, and creates the counters it does not
// touch, so that a materialising write stores a whole award.
func (s *store) item(t, uid, perkID string, now string, c change) types.TransactWriteItem {
	id := ID(uid, perkID)
	set := "id = :id, tenantId = :t, userId = :u, perkId = :p, updatedAt = :now, created = if_not_exists(created, :now), " +
		"gsi1pk = :gpk, gsi1sk = :gsk"
	zero := strings.Contains(c.set, ":zero") || strings.Contains(c.add, ":zero") || strings.Contains(c.condition, ":zero")
	for _, counter := range []string{"available", "granted", "redeemed", "refunded", "refundable", "redemptions", "reversed", "adjusted", "expired", "seq"} {
		if !mentions(c.set, counter) && !mentions(c.add, counter) {
			set += ", " + counter + " = if_not_exists(" + counter + ", :zero)"
			zero = true
		}
	}
	if c.set != "" {
		set += ", " + c.set
	}
	expr := "SET " + set
	if c.add != "" {
		expr += " ADD " + c.add
	}
	if c.remove != "" {
		expr += " REMOVE " + c.remove
	}
	values := map[string]types.AttributeValue{
		":id": str(id), ":t": str(t), ":u": str(uid), ":p": str(perkID), ":now": str(now),
		":gpk": str(tenantPK(t)), ":gsk": str(indexSK(now, id)),
	}
	if zero {
		values[":zero"] = num(0)
	}
	for k, v := range c.values {
		values[k] = v
	}
	u := &types.Update{
		TableName: aws.String(s.table), Key: awardKey(t, uid, perkID),
		UpdateExpression: aws.String(expr), ExpressionAttributeValues: values,
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	}
	if c.condition != "" {
		u.ConditionExpression = aws.String(c.condition)
	}
	return types.TransactWriteItem{Update: u}
}

// mentions reports whether an update clause names attribute a as a target.
func mentions(clause, a string) bool {
	for i := 0; i+len(a) <= len(clause); i++ {
		if clause[i:i+len(a)] == a && (i == 0 || clause[i-1] == ' ' || clause[i-1] == ',') {
			rest := clause[i+len(a):]
			if len(rest) == 0 || rest[0] == ' ' || rest[0] == '=' {
				return true
			}
		}
	}
	return false
}

// oldItem returns the award as it was when the condition of transaction
// item i failed in err (ReturnValuesOnConditionCheckFailure), if DynamoDB
// returned it.
func oldItem(err error, i int) (record, bool) {
	item := ddb.CanceledItem(err, i)
	if item == nil {
		return record{}, false
	}
	var rec record
	if attributevalue.UnmarshalMap(item, &rec) != nil {
		return record{}, false
	}
	return rec, true
}

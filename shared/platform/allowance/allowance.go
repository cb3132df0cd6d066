// Package allowance counts uses of a limited allowance (so many calls per
// client address a minute, so many messages per tenant an hour) in fixed
// windows kept in DynamoDB. Each use is one conditional update of the
// window's counter item, so the count is exact however many functions
// count at once, and a refused use changes nothing.
//
// Item layout (in a table with pk, sk and the TTL attribute expiresAt):
//
//	pk = ALLOWANCE#<limit name>#<key>   sk = <window start, Unix seconds>
//	uses, expiresAt (the window's end plus a minute)
//
// The upper-case prefix cannot collide with the tenant-scoped items of the
// same table (tenant ids are lower-case).
package allowance

import (
	"context"
	"fmt"
	"net/netip"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/loyalty-platform/platform/shared/platform/clock"
	"github.com/loyalty-platform/platform/shared/platform/ddb"
)

// Limit is an allowance: at most Max uses per key in each Window. Windows
// are fixed (aligned to the Unix epoch), so a key may use up to 2*Max across
// the boundary of two windows.
type Limit struct {
	// Name tells the allowance apart from others in the same table.
	Name   string
	Max    int
	Window time.Duration
}

// Exhausted is the error of a use beyond the allowance: RetryAfter is the
// time left until the window ends.
type Exhausted struct {
	Limit      string
	RetryAfter time.Duration
}

// Error names the allowance.
func (e *Exhausted) Error() string {
	return fmt.Sprintf("allowance %s exhausted; retry in %s", e.Limit, e.RetryAfter)
}

// Use is one counted use, which GiveBack can return.
type Use struct {
	pk, sk string
}

// Counter counts uses in Table.
type Counter struct {
	DB    ddb.API
	Table string
	Clock clock.Clock
}

func (c *Counter) now() time.Time {
	if c.Clock == nil {
		return time.Now()
	}
	return c.Clock.Now()
}

// Take counts one use of key's allowance under l. Beyond l.Max uses in the
// current window it counts nothing and returns *Exhausted. A Max of 0 or
// less turns the limit off (every use is allowed and nothing is stored).
func (c *Counter) Take(ctx context.Context, l Limit, key string) (Use, error) {
	if l.Max <= 0 || l.Window <= 0 {
		return Use{}, nil
	}
	now := c.now()
	start := now.Truncate(l.Window)
	end := start.Add(l.Window)
	u := Use{pk: "ALLOWANCE#" + l.Name + "#" + key, sk: strconv.FormatInt(start.Unix(), 10)}
	_, err := c.DB.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                aws.String(c.Table),
		Key:                      u.key(),
		UpdateExpression:         aws.String("ADD #uses :one SET expiresAt = :exp"),
		ConditionExpression:      aws.String("attribute_not_exists(#uses) OR #uses < :max"),
		ExpressionAttributeNames: map[string]string{"#uses": "uses"},
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":one": &types.AttributeValueMemberN{Value: "1"},
			":max": &types.AttributeValueMemberN{Value: strconv.Itoa(l.Max)},
			":exp": &types.AttributeValueMemberN{Value: strconv.FormatInt(end.Add(time.Minute).Unix(), 10)},
		},
	})
	if ddb.IsConditionFailed(err) {
		return Use{}, &Exhausted{Limit: l.Name, RetryAfter: max(end.Sub(now).Round(time.Second), time.Second)}
	}
	if err != nil {
		return Use{}, fmt.Errorf("count %s use: %w", l.Name, err)
	}
	return u, nil
}

// GiveBack returns a use that served nothing (the work it was counted for
// failed before it cost anything), unless its window is gone.
func (c *Counter) GiveBack(ctx context.Context, u Use) error {
	if u.pk == "" {
		return nil
	}
	_, err := c.DB.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                aws.String(c.Table),
		Key:                      u.key(),
		UpdateExpression:         aws.String("ADD #uses :minus"),
		ConditionExpression:      aws.String("#uses > :zero"),
		ExpressionAttributeNames: map[string]string{"#uses": "uses"},
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":minus": &types.AttributeValueMemberN{Value: "-1"},
			":zero":  &types.AttributeValueMemberN{Value: "0"},
		},
	})
	if err != nil && !ddb.IsConditionFailed(err) {
		return fmt.Errorf("give back use: %w", err)
	}
	return nil
}

func (u Use) key() map[string]types.AttributeValue {
	return map[string]types.AttributeValue{
		"pk": &types.AttributeValueMemberS{Value: u.pk},
		"sk": &types.AttributeValueMemberS{Value: u.sk},
	}
}

// ClientKey returns the key of a client address for a per-address
// allowance: an IPv4 address as it is, an IPv6 address as its /64 network
// (one subscriber or host usually holds a whole /64, so counting single
// IPv6 addresses would let one client rotate through billions of them).
// Text that is no address is used as it is.
func ClientKey(addr string) string {
	a, err := netip.ParseAddr(addr)
	if err != nil {
		return addr
	}
	a = a.Unmap()
	if a.Is4() {
		return a.String()
	}
	p, err := a.WithZone("").Prefix(64)
	if err != nil {
		return a.String()
	}
	return p.String()
}

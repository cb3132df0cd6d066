package ddb

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// MaxTxItems is the most items one DynamoDB transaction may hold.
const MaxTxItems = 100

// ErrTooManyItems is the error of Run for a transaction of more than
// MaxTxItems items (with the claim of the request's Idempotency-Key, if
// any): Run refuses it before calling DynamoDB, which would reject it with
// a ValidationException. It is an internal error (500): every request path
// bounds its transactions below the limit or splits them (README,
// "Transactions and DynamoDB's 100-item limit"), so reaching it is a bug.
var ErrTooManyItems = errors.New("transaction above DynamoDB's limit of 100 items")

// Tx collects the writes of one TransactWriteItems call: one unit of work.
// Each domain adds its own items (built from its own keys), so that one
// change touching two domains (a grant and its action, a membership and
// what other domains do when a user joins) is written together or not at
// all, without any domain handing raw items across. Add returns the index
// of each item so that the caller can tell which of its conditions failed
// (see Failed).
//
// DynamoDB refuses a transaction that names one item twice, so a Tx never
// holds two items of one key:
//   - a ConditionCheck of an item the transaction checks or writes already
//     is folded into that item (its condition ANDed to the other's) and Add
//     returns the other's index, so that both owners see its outcome;
//   - a write of an item the transaction only checks so far takes the
//     check's place, with the check's condition ANDed to its own;
//   - two writes of one item are an owner's to merge (Merge); two plain
//     Adds of one item make Run fail before calling DynamoDB.
type Tx struct {
	items []types.TransactWriteItem
	// owners names who added each item, for error messages.
	owners []string
	// keys is the identity (table and key) of each item; states what Merge
	// keeps for an item (nil for items added with Add).
	keys   []string
	states []any
	// checks are the ConditionChecks folded into each item, folded again
	// into a write that Merge puts in its place.
	checks [][]*types.ConditionCheck
	// err is the first item added twice.
	err error
	// folds counts the conditions folded, so that each gets placeholders
	// of its own.
	folds int
}

// Add appends items on behalf of owner (a short name such as "award") and
// returns the index of the first one (a folded ConditionCheck answers the
// index of the item it was folded into).
func (t *Tx) Add(owner string, items ...types.TransactWriteItem) int {
	first := -1
	for _, it := range items {
		i := t.add(owner, it)
		if first < 0 {
			first = i
		}
	}
	if first < 0 {
		first = len(t.items)
	}
	return first
}

func (t *Tx) add(owner string, it types.TransactWriteItem) int {
	k := ItemKey(it)
	at := t.find(k)
	if at < 0 {
		return t.push(owner, k, it, nil)
	}
	prev := t.items[at]
	switch {
	case it.ConditionCheck != nil:
		t.items[at] = t.fold(prev, it.ConditionCheck)
		t.checks[at] = append(t.checks[at], it.ConditionCheck)
	case prev.ConditionCheck != nil:
		t.items[at] = t.fold(it, prev.ConditionCheck)
		t.owners[at] = owner
		t.checks[at] = append(t.checks[at], prev.ConditionCheck)
	default:
		if t.err == nil {
			t.err = fmt.Errorf("transaction writes %s twice (%s and %s)", k, t.owners[at], owner)
		}
	}
	return at
}

// Merge adds a write of one item on behalf of owner, merged with the
// owner's earlier write of the same item in this transaction: build gets
// the state it returned for that write (nil when the transaction does not
// write the item yet) and returns the item and the state to keep. A
// ConditionCheck of the item added before is folded into the write. Merge
// returns the item's index, the same for every write it merged.
func (t *Tx) Merge(owner string, key string, build func(prev any) (types.TransactWriteItem, any, error)) (int, error) {
	at := t.find(key)
	var prev any
	var checks []*types.ConditionCheck
	if at >= 0 {
		prev, checks = t.states[at], t.checks[at]
		if prev == nil {
			if t.items[at].ConditionCheck == nil {
				return -1, fmt.Errorf("transaction writes %s twice (%s and %s)", key, t.owners[at], owner)
			}
			if len(checks) == 0 {
				checks = []*types.ConditionCheck{t.items[at].ConditionCheck}
			}
		}
	}
	it, state, err := build(prev)
	if err != nil {
		return -1, err
	}
	if k := ItemKey(it); k != key {
		return -1, fmt.Errorf("merge of %s built an item of %s", key, k)
	}
	for _, c := range checks {
		it = t.fold(it, c)
	}
	if at < 0 {
		return t.push(owner, key, it, state), nil
	}
	t.items[at], t.owners[at], t.states[at], t.checks[at] = it, owner, state, checks
	return at, nil
}

// push appends a new item and returns its index.
func (t *Tx) push(owner, key string, it types.TransactWriteItem, state any) int {
	t.items = append(t.items, it)
	t.owners = append(t.owners, owner)
	t.keys = append(t.keys, key)
	t.states = append(t.states, state)
	t.checks = append(t.checks, nil)
	return len(t.items) - 1
}

// State returns what Merge keeps for the item of key (see ItemKey) and
// whether the transaction names the item at all.
func (t *Tx) State(key string) (any, bool) {
	at := t.find(key)
	if at < 0 {
		return nil, false
	}
	return t.states[at], true
}

// Has reports whether the transaction names the item of key (see ItemKey).
func (t *Tx) Has(key string) bool { return t.find(key) >= 0 }

func (t *Tx) find(k string) int {
	if k == "" {
		return -1
	}
	for i, have := range t.keys {
		if have == k {
			return i
		}
	}
	return -1
}

// Err returns why Run would fail before calling DynamoDB: an item
// written twice (nil when none).
func (t *Tx) Err() error { return t.err }

// Len is the number of items so far.
func (t *Tx) Len() int { return len(t.items) }

// Items returns the items in the order they were added.
func (t *Tx) Items() []types.TransactWriteItem { return t.items }

// Run writes the items in one transaction (Transact: a lost race with
// another transaction is retried a few times). An empty Tx writes nothing.
// In a request that holds an Idempotency-Key (ctx carries a Claim), the
// transaction also carries the claim's item, last: it holds at most
// MaxTxItems-1 items of its own, and a failure of the claim's condition
// is ErrClaimLost.
func (t *Tx) Run(ctx context.Context, api API) error {
	if t.err != nil {
		return t.err
	}
	if len(t.items) == 0 {
		return nil
	}
	if n := len(t.items); n > MaxTxItems-claimItems(ctx) {
		return fmt.Errorf("%w: %d items (%s) and %d of the request's Idempotency-Key", ErrTooManyItems, n, t.ownersSummary(), claimItems(ctx))
	}
	// The claim of the request's Idempotency-Key, if any, is appended by
	// Transact after the items: the indexes Add returned stay valid.
	return Transact(ctx, api, t.items)
}

// ownersSummary counts the items by owner, in the order owners first
// added one ("award 40, ledger 40, action 21"), for the error of a
// transaction that is too large.
func (t *Tx) ownersSummary() string {
	var names []string
	count := map[string]int{}
	for _, o := range t.owners {
		if count[o] == 0 {
			names = append(names, o)
		}
		count[o]++
	}
	parts := make([]string, len(names))
	for i, o := range names {
		parts[i] = fmt.Sprintf("%s %d", o, count[o])
	}
	return strings.Join(parts, ", ")
}

// Failed reports whether the condition of item i failed in err (a
// cancelled transaction).
func Failed(err error, i int) bool {
	reasons := CanceledReasons(err)
	return i >= 0 && i < len(reasons) && reasons[i] == "ConditionalCheckFailed"
}

// ItemKey returns the identity of the item a transaction item names: its
// table and its key (pk and sk), "" when it has none.
func ItemKey(it types.TransactWriteItem) string {
	var table *string
	var key map[string]types.AttributeValue
	switch {
	case it.Put != nil:
		table, key = it.Put.TableName, it.Put.Item
	case it.Update != nil:
		table, key = it.Update.TableName, it.Update.Key
	case it.Delete != nil:
		table, key = it.Delete.TableName, it.Delete.Key
	case it.ConditionCheck != nil:
		table, key = it.ConditionCheck.TableName, it.ConditionCheck.Key
	}
	return Key(aws.ToString(table), key)
}

// Key returns the identity of the item of key (pk, sk) in table, as
// ItemKey gives it.
func Key(table string, key map[string]types.AttributeValue) string {
	pk, ok := key["pk"].(*types.AttributeValueMemberS)
	if !ok {
		return ""
	}
	k := table + "\x00" + pk.Value
	if sk, ok := key["sk"].(*types.AttributeValueMemberS); ok {
		k += "\x00" + sk.Value
	}
	return k
}

// fold returns it with the condition of c ANDed to its own: nothing
// changes when it holds c's condition already (the same expression with
// the same values), else c's placeholders are renamed so that they cannot
// meet it's.
func (t *Tx) fold(it types.TransactWriteItem, c *types.ConditionCheck) types.TransactWriteItem {
	cond, names, values := target(&it)
	if holds(*cond, *values, *names, c) {
		return it
	}
	suffix, expr := "", aws.ToString(c.ConditionExpression)
	if collides(*values, *names, c) {
		t.folds++
		suffix = fmt.Sprintf("_f%d", t.folds)
		expr = placeholders().ReplaceAllString(expr, "${0}"+suffix)
	}
	if aws.ToString(*cond) == "" {
		*cond = aws.String(expr)
	} else {
		*cond = aws.String("(" + aws.ToString(*cond) + ") AND (" + expr + ")")
	}
	if len(c.ExpressionAttributeValues) > 0 {
		m := make(map[string]types.AttributeValue, len(*values)+len(c.ExpressionAttributeValues))
		for k, v := range *values {
			m[k] = v
		}
		for k, v := range c.ExpressionAttributeValues {
			m[k+suffix] = v
		}
		*values = m
	}
	if len(c.ExpressionAttributeNames) > 0 {
		m := make(map[string]string, len(*names)+len(c.ExpressionAttributeNames))
		for k, v := range *names {
			m[k] = v
		}
		for k, v := range c.ExpressionAttributeNames {
			m[k+suffix] = v
		}
		*names = m
	}
	return it
}

// target returns the condition, names and values of a transaction item,
// copied so that folding into them changes no map or item another owner
// holds.
func target(it *types.TransactWriteItem) (**string, *map[string]string, *map[string]types.AttributeValue) {
	switch {
	case it.Put != nil:
		p := *it.Put
		it.Put = &p
		return &p.ConditionExpression, &p.ExpressionAttributeNames, &p.ExpressionAttributeValues
	case it.Update != nil:
		u := *it.Update
		it.Update = &u
		return &u.ConditionExpression, &u.ExpressionAttributeNames, &u.ExpressionAttributeValues
	case it.Delete != nil:
		d := *it.Delete
		it.Delete = &d
		return &d.ConditionExpression, &d.ExpressionAttributeNames, &d.ExpressionAttributeValues
	}
	c := *it.ConditionCheck
	it.ConditionCheck = &c
	return &c.ConditionExpression, &c.ExpressionAttributeNames, &c.ExpressionAttributeValues
}

// holds reports whether condition cond (with names and values) contains
// c's condition as one of its AND-ed terms, with the same values and
// names: ANDing c would change nothing.
func holds(cond *string, values map[string]types.AttributeValue, names map[string]string, c *types.ConditionCheck) bool {
	have, want := aws.ToString(cond), aws.ToString(c.ConditionExpression)
	if want == "" {
		return true
	}
	if have != want && !strings.HasPrefix(have, want+" AND ") && !strings.HasSuffix(have, " AND "+want) &&
		!strings.Contains(have, " AND "+want+" AND ") {
		return false
	}
	for k, v := range c.ExpressionAttributeValues {
		if !sameValue(values[k], v) {
			return false
		}
	}
	for k, v := range c.ExpressionAttributeNames {
		if names[k] != v {
			return false
		}
	}
	return true
}

// collides reports whether c uses a placeholder the target's values or
// names hold already.
func collides(values map[string]types.AttributeValue, names map[string]string, c *types.ConditionCheck) bool {
	for k := range c.ExpressionAttributeValues {
		if _, ok := values[k]; ok {
			return true
		}
	}
	for k := range c.ExpressionAttributeNames {
		if _, ok := names[k]; ok {
			return true
		}
	}
	return false
}

func sameValue(a, b types.AttributeValue) bool {
	switch x := a.(type) {
	case *types.AttributeValueMemberS:
		y, ok := b.(*types.AttributeValueMemberS)
		return ok && x.Value == y.Value
	case *types.AttributeValueMemberN:
		y, ok := b.(*types.AttributeValueMemberN)
		return ok && x.Value == y.Value
	case *types.AttributeValueMemberBOOL:
		y, ok := b.(*types.AttributeValueMemberBOOL)
		return ok && x.Value == y.Value
	}
	return false
}

// placeholders matches the value (:v) and name (#n) placeholders of an
// expression; compiled on first use.
var placeholders = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[:#][A-Za-z0-9_]+`) })

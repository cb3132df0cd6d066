package ddb

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// MaxTxItems is the most items one DynamoDB transaction may hold.
const MaxTxItems = 100

// Tx collects the writes of one TransactWriteItems call. Each domain adds
// its own items (built from its own keys), so that one change touching two
// domains (a grant and its action, a membership and what other domains do
// when a user joins) is written together or not at all, without any domain
// handing raw items across. Add returns the index of each item so that the
// caller can tell which of its conditions failed (see Tx.Failed).
type Tx struct {
	items []types.TransactWriteItem
	// owners names who added each item, for error messages.
	owners []string
}

// Add appends items on behalf of owner (a short name such as "award") and
// returns the index of the first one.
func (t *Tx) Add(owner string, items ...types.TransactWriteItem) int {
	first := len(t.items)
	for _, it := range items {
		t.items = append(t.items, it)
		t.owners = append(t.owners, owner)
	}
	return first
}

// Len is the number of items so far.
func (t *Tx) Len() int { return len(t.items) }

// Items returns the items in the order they were added.
func (t *Tx) Items() []types.TransactWriteItem { return t.items }

// Run writes the items in one transaction (Transact: a lost race with
// another transaction is retried a few times). An empty Tx writes nothing.
func (t *Tx) Run(ctx context.Context, api API) error {
	if len(t.items) == 0 {
		return nil
	}
	if len(t.items) > MaxTxItems {
		return fmt.Errorf("transaction of %d items: at most %d", len(t.items), MaxTxItems)
	}
	return Transact(ctx, api, t.items)
}

// Failed reports whether the condition of item i failed in err (a
// cancelled transaction).
func Failed(err error, i int) bool {
	reasons := CanceledReasons(err)
	return i >= 0 && i < len(reasons) && reasons[i] == "ConditionalCheckFailed"
}

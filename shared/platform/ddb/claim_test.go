package ddb

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// txAPI answers TransactWriteItems with err and keeps what it was sent.
type txAPI struct {
	API
	sent [][]types.TransactWriteItem
	err  error
}

func (a *txAPI) TransactWriteItems(_ context.Context, in *dynamodb.TransactWriteItemsInput, _ ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error) {
	a.sent = append(a.sent, in.TransactItems)
	return &dynamodb.TransactWriteItemsOutput{}, a.err
}

func canceled(codes ...string) error {
	e := &types.TransactionCanceledException{}
	for _, c := range codes {
		e.CancellationReasons = append(e.CancellationReasons, types.CancellationReason{Code: aws.String(c)})
	}
	return e
}

func fence() types.TransactWriteItem {
	return types.TransactWriteItem{Update: &types.Update{TableName: aws.String("Ops"), Key: k("t#IDEM#x", "IDEM"),
		UpdateExpression: aws.String("SET committed = :t"), ConditionExpression: aws.String("token = :tok")}}
}

// TestClaimRidesLast: the claim of the context is appended after the
// Tx's items (their indexes unchanged), marks the claim committed on
// success, and a failure of its condition is ErrClaimLost, whatever else
// failed; without a claim nothing changes.
func TestClaimRidesLast(t *testing.T) {
	var tx Tx
	i := tx.Add("a", put("p1"))
	j := tx.Add("b", put("p2"))

	api := &txAPI{}
	if err := tx.Run(context.Background(), api); err != nil || len(api.sent[0]) != 2 {
		t.Fatalf("without a claim: %v, %d items", err, len(api.sent[0]))
	}

	c := NewClaim(fence())
	ctx := WithClaim(context.Background(), c)
	if err := tx.Run(ctx, api); err != nil {
		t.Fatal(err)
	}
	got := api.sent[1]
	if len(got) != 3 || ItemKey(got[i]) != ItemKey(put("p1")) || ItemKey(got[j]) != ItemKey(put("p2")) || ItemKey(got[2]) != ItemKey(fence()) {
		t.Fatalf("items sent = %d, want p1, p2 then the claim", len(got))
	}
	if !c.Committed() || c.Lost() || tx.Len() != 2 {
		t.Errorf("committed %v lost %v len %d, want committed, not lost, the Tx unchanged", c.Committed(), c.Lost(), tx.Len())
	}

	// A domain condition failed: the domain sees it at its index.
	c = NewClaim(fence())
	api.err = canceled("None", "ConditionalCheckFailed", "None")
	err := tx.Run(WithClaim(context.Background(), c), api)
	if !Failed(err, j) || errors.Is(err, ErrClaimLost) || c.Lost() || c.Committed() {
		t.Errorf("domain failure: %v (lost %v)", err, c.Lost())
	}
	// The claim's condition failed (with or without another): ErrClaimLost.
	for _, e := range []error{canceled("None", "None", "ConditionalCheckFailed"), canceled("ConditionalCheckFailed", "None", "ConditionalCheckFailed")} {
		c = NewClaim(fence())
		api.err = e
		err = tx.Run(WithClaim(context.Background(), c), api)
		if !errors.Is(err, ErrClaimLost) || !c.Lost() || c.Committed() || Failed(err, i) {
			t.Errorf("claim failure: %v (lost %v)", err, c.Lost())
		}
	}
	// Another error (a timeout): neither committed nor lost.
	c = NewClaim(fence())
	api.err = errors.New("timeout")
	if err := Transact(WithClaim(context.Background(), c), api, []types.TransactWriteItem{put("p3")}); err == nil || c.Lost() || c.Committed() {
		t.Errorf("timeout: %v (lost %v committed %v)", err, c.Lost(), c.Committed())
	}
}

// TestClaimLeavesRoom: a Tx of MaxTxItems items runs without a claim, and
// is refused before DynamoDB with one (the claim's item would be the
// 101st).
func TestClaimLeavesRoom(t *testing.T) {
	var tx Tx
	for n := 0; n < MaxTxItems; n++ {
		tx.Add("a", put(string(rune('A'+n%26))+string(rune('a'+n/26))))
	}
	api := &txAPI{}
	if err := tx.Run(context.Background(), api); err != nil {
		t.Fatalf("%d items without a claim: %v", MaxTxItems, err)
	}
	if err := tx.Run(WithClaim(context.Background(), NewClaim(fence())), api); err == nil || len(api.sent) != 1 {
		t.Errorf("%d items with a claim: %v, want refused before DynamoDB", MaxTxItems, err)
	}
}

// TestTxRefusesAboveLimit: Run sends a transaction of up to MaxTxItems
// items (the claim of an Idempotency-Key counted) and refuses a larger one
// with ErrTooManyItems, naming the owners, before calling DynamoDB.
func TestTxRefusesAboveLimit(t *testing.T) {
	tests := []struct {
		name     string
		items    int
		claim    bool
		wantSent bool
	}{
		{"NinetyNineItems", 99, false, true},
		{"HundredItems", 100, false, true},
		{"HundredAndOneItems", 101, false, false},
		{"NinetyNineItemsAndClaim", 99, true, true},
		{"HundredItemsAndClaim", 100, true, false},
		{"TwoHundredItems", 200, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var tx Tx
			for n := 0; n < tt.items; n++ {
				owner := "award"
				if n%2 == 1 {
					owner = "ledger"
				}
				tx.Add(owner, put(fmt.Sprintf("item-%d", n)))
			}
			ctx := context.Background()
			if tt.claim {
				ctx = WithClaim(ctx, NewClaim(fence()))
			}
			api := &txAPI{}
			err := tx.Run(ctx, api)
			if sent := len(api.sent) == 1; sent != tt.wantSent {
				t.Fatalf("sent to DynamoDB = %v, want %v (err %v)", sent, tt.wantSent, err)
			}
			if tt.wantSent {
				if err != nil {
					t.Fatalf("Run: %v", err)
				}
				return
			}
			if !errors.Is(err, ErrTooManyItems) {
				t.Fatalf("Run = %v, want ErrTooManyItems", err)
			}
			if want := fmt.Sprintf("%d items (award %d, ledger %d)", tt.items, (tt.items+1)/2, tt.items/2); !strings.Contains(err.Error(), want) {
				t.Errorf("Run = %q, want it to say %q", err, want)
			}
		})
	}
}

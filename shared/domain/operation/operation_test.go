package operation_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/loyalty-platform/platform/shared/domain/operation"
	"github.com/loyalty-platform/platform/shared/platform/apierr"
	ts "github.com/loyalty-platform/platform/shared/testkit"
)

func TestMain(m *testing.M) { ts.Main(m) }

func TestParseNonce(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, in, want string
		ok             bool
	}{
		{"Lower", "3f2504e0-4f89-41d3-9a0c-0305e82c3301", "3f2504e0-4f89-41d3-9a0c-0305e82c3301", true},
		{"UpperIsLowered", "3F2504E0-4F89-41D3-9A0C-0305E82C3301", "3f2504e0-4f89-41d3-9a0c-0305e82c3301", true},
		{"Spaces", " 3f2504e0-4f89-41d3-9a0c-0305e82c3301 ", "3f2504e0-4f89-41d3-9a0c-0305e82c3301", true},
		{"Missing", "", "", false},
		{"NoDashes", "3f2504e04f8941d39a0c0305e82c3301", "", false},
		{"Braces", "{3f2504e0-4f89-41d3-9a0c-0305e82c3301}", "", false},
		{"NotHex", "3g2504e0-4f89-41d3-9a0c-0305e82c3301", "", false},
		{"TooLong", "3f2504e0-4f89-41d3-9a0c-0305e82c33011", "", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := operation.ParseNonce(c.in)
			if c.ok != (err == nil) || got != c.want {
				t.Fatalf("ParseNonce(%q) = %q, %v", c.in, got, err)
			}
			if err != nil {
				e, _ := apierr.As(err)
				if e.Code != apierr.ValidationFailed || !strings.HasPrefix(e.Message, "x-platform-req-nonce: ") {
					t.Fatalf("error = %v", err)
				}
			}
		})
	}
}

func start(h *ts.Harness, nonce, fp string) (operation.Started, error) {
	return h.Deps.Operations.Start(context.Background(), h.Tenant.ID, operation.StartInput{
		Namespace: "test", Name: "job", EntityID: h.Tenant.ID, Nonce: nonce, Fingerprint: fp,
		Metadata: map[string]any{"a": 1},
	})
}

// TestStartOnce: of many concurrent starts with one nonce exactly one
// creates the operation; the others get it back as a repeat.
func TestStartOnce(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	const calls = 12
	var wg sync.WaitGroup
	res := make([]operation.Started, calls)
	errs := make([]error, calls)
	for i := range calls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res[i], errs[i] = start(h, "11111111-2222-4333-8444-555555555555", "fp")
		}()
	}
	wg.Wait()
	created := 0
	for i := range calls {
		if errs[i] != nil {
			t.Fatalf("start %d: %v", i, errs[i])
		}
		if res[i].Operation.ID != res[0].Operation.ID {
			t.Fatalf("ids differ: %s and %s", res[i].Operation.ID, res[0].Operation.ID)
		}
		if !res[i].Repeat {
			created++
		}
	}
	if created != 1 {
		t.Fatalf("%d calls created the operation", created)
	}
	if _, err := start(h, "11111111-2222-4333-8444-555555555555", "other"); !errors.Is(err, operation.ErrNonceReused) {
		t.Fatalf("other fingerprint: %v", err)
	}
	// The nonce is per tenant.
	other, _ := h.NewTenant(h.Tenant.Settings)
	o, err := h.Deps.Operations.Start(context.Background(), other.ID, operation.StartInput{Namespace: "test", Name: "job", Nonce: "11111111-2222-4333-8444-555555555555", Fingerprint: "fp"})
	if err != nil || o.Repeat || o.Operation.ID == res[0].Operation.ID {
		t.Fatalf("other tenant: %+v, %v", o, err)
	}
}

// TestLease: claims, commits and the end of an operation are fenced by the
// lease.
func TestLease(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	ctx := context.Background()
	ops := h.Deps.Operations
	st, err := start(h, "aaaaaaaa-2222-4333-8444-555555555555", "fp")
	if err != nil {
		t.Fatal(err)
	}
	id := st.Operation.ID
	if st.Operation.Status != operation.Pending || st.Operation.Result != nil || st.Operation.EndedAt != nil {
		t.Fatalf("new operation = %+v", st.Operation)
	}

	a, err := ops.Claim(ctx, h.Tenant.ID, id, "run-a", time.Minute)
	if err != nil || a.Operation.Status != operation.Running || a.Claims != 1 {
		t.Fatalf("claim a: %+v, %v", a, err)
	}
	t.Run("SecondClaimFindsTheLease", func(t *testing.T) {
		_, err := ops.Claim(ctx, h.Tenant.ID, id, "run-b", time.Minute)
		var le *operation.LeasedError
		if !errors.As(err, &le) || le.Owner != "run-a" {
			t.Fatalf("claim b: %v", err)
		}
	})
	t.Run("CommitExtendsTheLease", func(t *testing.T) {
		cp := a.Checkpoint
		cp.Rows, cp.Parts, cp.PartRuns = 10, 1, []int{1}
		if err := ops.Commit(ctx, a, cp, operation.Result{Total: 10, Imported: 10}, time.Minute, nil); err != nil {
			t.Fatal(err)
		}
		got, _ := ops.Get(ctx, h.Tenant.ID, id)
		if got.Result == nil || got.Result.Imported != 10 {
			t.Fatalf("after commit = %+v", got)
		}
	})
	t.Run("ExpiredLeaseIsTakenOver", func(t *testing.T) {
		h.Clock.Advance(2 * time.Minute)
		b, err := ops.Claim(ctx, h.Tenant.ID, id, "run-b", time.Minute)
		if err != nil || b.Claims != 2 || b.Checkpoint.Rows != 10 {
			t.Fatalf("claim b: %+v, %v", b, err)
		}
		// The stale run can no longer write: not a commit, not the end.
		if err := ops.Commit(ctx, a, a.Checkpoint, operation.Result{}, time.Minute, nil); !errors.Is(err, operation.ErrLeaseLost) {
			t.Fatalf("stale commit: %v", err)
		}
		if _, err := ops.Finish(ctx, a, operation.Result{}); !errors.Is(err, operation.ErrLeaseLost) {
			t.Fatalf("stale finish: %v", err)
		}
		// A commit with a stale checkpoint is refused too.
		stale := *b
		stale.Checkpoint.Parts = 0
		if err := ops.Commit(ctx, &stale, b.Checkpoint, operation.Result{}, time.Minute, nil); !errors.Is(err, operation.ErrLeaseLost) {
			t.Fatalf("commit over a stale checkpoint: %v", err)
		}
		t.Run("FailedExtraItemWritesNothing", func(t *testing.T) {
			item := types.TransactWriteItem{ConditionCheck: &types.ConditionCheck{
				TableName: aws.String(h.Deps.Config.Tables.Operations),
				Key: map[string]types.AttributeValue{
					"pk": &types.AttributeValueMemberS{Value: h.Tenant.ID + "#OP#nothing"},
					"sk": &types.AttributeValueMemberS{Value: "OP"},
				},
				ConditionExpression: aws.String("attribute_exists(pk)"),
			}}
			cp := b.Checkpoint
			cp.Rows = 99
			err := ops.Commit(ctx, b, cp, operation.Result{}, time.Minute, []types.TransactWriteItem{item})
			var failed *operation.ItemsFailedError
			if !errors.As(err, &failed) || len(failed.Indexes) != 1 || failed.Indexes[0] != 0 {
				t.Fatalf("commit = %v", err)
			}
			got, _ := ops.Get(ctx, h.Tenant.ID, id)
			if got.Result == nil || got.Result.Imported != 10 {
				t.Fatalf("a failed commit wrote: %+v", got.Result)
			}
		})
		done, err := ops.Finish(ctx, b, operation.Result{Total: 10, Imported: 10, Href: "/x"})
		if err != nil || done.Status != operation.Done || done.EndedAt == nil || done.Result.Href != "/x" {
			t.Fatalf("finish: %+v, %v", done, err)
		}
		if _, err := ops.Claim(ctx, h.Tenant.ID, id, "run-c", time.Minute); !errors.Is(err, operation.ErrFinished) {
			t.Fatalf("claim after done: %v", err)
		}
	})
	t.Run("UnknownOperation", func(t *testing.T) {
		if _, err := ops.Claim(ctx, h.Tenant.ID, "0123456789abcdef01234567", "x", time.Minute); !errors.Is(err, operation.ErrNotFound) {
			t.Fatalf("claim: %v", err)
		}
		if _, err := ops.Get(ctx, h.Tenant.ID, "not-an-id"); !errors.Is(err, operation.ErrNotFound) {
			t.Fatalf("get: %v", err)
		}
	})
	t.Run("ExpiredOperationIsGone", func(t *testing.T) {
		h.Clock.Advance(operation.Lifetime)
		if _, err := ops.Get(ctx, h.Tenant.ID, id); !errors.Is(err, operation.ErrNotFound) {
			t.Fatalf("get after its lifetime: %v", err)
		}
		// Its nonce is free again.
		st, err := start(h, "aaaaaaaa-2222-4333-8444-555555555555", "new")
		if err != nil || st.Repeat {
			t.Fatalf("start with an expired nonce: %+v, %v", st, err)
		}
	})
}

// TestFail: a failed operation carries error {code, message} and ends.
func TestFail(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	ctx := context.Background()
	st, err := start(h, "bbbbbbbb-2222-4333-8444-555555555555", "fp")
	if err != nil {
		t.Fatal(err)
	}
	l, err := h.Deps.Operations.Claim(ctx, h.Tenant.ID, st.Operation.ID, "r", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	op, err := h.Deps.Operations.Fail(ctx, l, operation.Error{Code: "VALIDATION_FAILED", Message: "file: bad"}, false, nil)
	if err != nil || op.Status != operation.Failed || op.Error == nil || op.Error.Code != "VALIDATION_FAILED" || op.EndedAt == nil {
		t.Fatalf("fail: %+v, %v", op, err)
	}
	got := h.Do("GET", "/operations/"+op.ID, nil, h.Admin()).Expect(t, 200, "").Map(t)
	if got["status"] != "FAILED" || got["error"].(map[string]any)["message"] != "file: bad" || got["result"] != nil {
		t.Fatalf("GET = %v", got)
	}
}

package operation_test

import (
	"slices"
	"testing"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/loyalty-platform/platform/shared/domain/operation"
)

func TestPartRunsStored(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		runs   operation.Runs
		stored string
	}{
		{"None", nil, ""},
		{"OneRun", operation.Runs{1, 1, 1}, "1x3"},
		{"SeveralRuns", operation.Runs{1, 1, 2, 3, 3, 3, 1}, "1x2,2x1,3x3,1x1"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			av, err := attributevalue.Marshal(operation.Checkpoint{PartRuns: c.runs})
			if err != nil {
				t.Fatal(err)
			}
			m := av.(*types.AttributeValueMemberM).Value
			got := ""
			if s, ok := m["partRuns"].(*types.AttributeValueMemberS); ok {
				got = s.Value
			}
			if got != c.stored {
				t.Fatalf("stored = %q, want %q", got, c.stored)
			}
			var back operation.Checkpoint
			if err := attributevalue.Unmarshal(av, &back); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(back.PartRuns, c.runs) {
				t.Fatalf("read back = %v, want %v", back.PartRuns, c.runs)
			}
		})
	}
	t.Run("ListOfNumbers", func(t *testing.T) {
		av := &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{
			"partRuns": &types.AttributeValueMemberL{Value: []types.AttributeValue{
				&types.AttributeValueMemberN{Value: "1"}, &types.AttributeValueMemberN{Value: "2"},
			}},
		}}
		var cp operation.Checkpoint
		if err := attributevalue.Unmarshal(av, &cp); err != nil {
			t.Fatal(err)
		}
		if want := (operation.Runs{1, 2}); !slices.Equal(cp.PartRuns, want) {
			t.Fatalf("read = %v, want %v", cp.PartRuns, want)
		}
	})
	t.Run("Malformed", func(t *testing.T) {
		for _, s := range []string{"1", "1x", "ax2", "1x0", "1x2,"} {
			av := &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{"partRuns": &types.AttributeValueMemberS{Value: s}}}
			var cp operation.Checkpoint
			if err := attributevalue.Unmarshal(av, &cp); err == nil {
				t.Errorf("%q read as %v", s, cp.PartRuns)
			}
		}
	})
}

package actionlog_test

import (
	"context"
	"testing"
	"time"

	"github.com/loyalty-platform/platform/shared/domain/action"
	ts "github.com/loyalty-platform/platform/shared/testkit"
)

// TestExportFormulaCells: text cells a spreadsheet would run as formulas
// (a user's name, a location's title, a payment type) are written with a
// leading apostrophe; the numeric columns are written as numbers.
func TestExportFormulaCells(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	at := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	a := action.Action{
		TenantID: h.Tenant.ID, Type: "A_ONE", When: action.WhenAt(at, nil), ID: "actformula" + action.NewID()[:8],
		Metadata: map[string]any{"paymentType": "-CARD"},
		Context: action.Context{
			User:     &action.UserRef{ID: "u1", Name: `=HYPERLINK("x")`},
			Location: &action.LocationRef{ID: "l1", Title: "@SUM(1+1)"},
		},
	}
	if err := h.Deps.Actions.Put(context.Background(), a); err != nil {
		t.Fatal(err)
	}
	op := h.WaitOperation(startExport(t, h, map[string]any{"from": "2026-05-01T00:00:00Z", "to": "2026-05-02T00:00:00Z", "types": []string{"A_ONE"}})["_id"].(string))
	rows := exportFile(t, h, op)
	if len(rows) != 2 {
		t.Fatalf("rows = %v", rows)
	}
	got := rows[1]
	for i, want := range map[int]string{3: "5", 5: "1", 9: `'=HYPERLINK("x")`, 11: "'@SUM(1+1)", 12: "'-CARD"} {
		if got[i] != want {
			t.Errorf("%s = %q, want %q", rows[0][i], got[i], want)
		}
	}
}

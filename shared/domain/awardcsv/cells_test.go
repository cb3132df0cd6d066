package awardcsv_test

import (
	"strings"
	"testing"

	ts "github.com/loyalty-platform/platform/shared/testkit"
)

// TestResultsFormulaCells: echoed cells a spreadsheet would run as
// formulas are written with a leading apostrophe; a number in the points
// column stays as written (-5); an escaped cell reads as its value.
func TestResultsFormulaCells(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	p := newPerk(t, h, map[string]any{"points": pointsOf(2, 50)})
	u := users(t, h, 1)[0]
	file := csvOf(
		[]string{"user_id", "perk_id", "points"},
		[]string{"=HYPERLINK(\"x\")", p, "1"},
		[]string{u, "@SUM(1+1)", "-5"},
		[]string{u, "'" + p, "3"},
		[]string{u, p, "-5+cmd"},
	)
	op := importFile(h, "dryRun=false", file)
	res := results(h, op)
	want := [][]string{
		{"'=HYPERLINK(\"x\")", p, "1", "fail"},
		{u, "'@SUM(1+1)", "-5", "fail"},
		{u, "'" + p, "3", "fail"}, // an apostrophe before a letter is part of the value
		{u, p, "'-5+cmd", "fail"},
	}
	for i, w := range want {
		if got := res[i+1][:4]; strings.Join(got, ",") != strings.Join(w, ",") {
			t.Errorf("row %d = %q, want %q (error %q)", i+1, got, w, res[i+1][len(res[i+1])-1])
		}
	}

	t.Run("EscapedCellsReadAsValues", func(t *testing.T) {
		op := importFile(h, "dryRun=false", csvOf([]string{"user_id", "perk_id", "points"}, []string{u, p, "'-5"}, []string{u, p, "'7"}))
		res := results(h, op)
		if got := column(t, res, "error"); !strings.HasPrefix(got[0], "points: must be an integer") || !strings.HasPrefix(got[1], "points: must be an integer") {
			t.Errorf("errors = %q", got)
		}
		if got := column(t, res, "points"); got[0] != "-5" || got[1] != "'7" {
			t.Errorf("points = %q, want -5 and '7", got)
		}
	})
}

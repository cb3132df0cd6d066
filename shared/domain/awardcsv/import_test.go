package awardcsv_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/loyalty-platform/platform/shared/domain/action"
	ts "github.com/loyalty-platform/platform/shared/testkit"
)

const resultsHeader1 = "user_id,perk_id,points,result,perk_awarded_1,award_awarded_1,points_available_1,error"

// TestImportLayouts: each accepted layout grants exactly the points its
// rows say (a new award holds what it is granted, clamped to the perk's
// max) and the results file reports every grant.
func TestImportLayouts(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	a := newPerk(t, h, map[string]any{"points": pointsOf(2, 50)})
	b := newPerk(t, h, map[string]any{"title": "Other", "points": pointsOf(5, 1000)})
	cases := []struct {
		name string
		// file builds the input from two new users.
		file func(u1, u2 string) string
		// want builds the results lines (header included).
		want func(u1, u2 string) [][]string
		// points are the awards after the import: user index -> perk -> available.
		points func() [2]map[string]int
	}{
		{
			name: "UserAndPerk",
			file: func(u1, u2 string) string {
				return csvOf([]string{"user_id", "perk_id"}, []string{u1, a}, []string{u2, a}, []string{u1, b})
			},
			want: func(u1, u2 string) [][]string {
				return [][]string{
					strings.Split(resultsHeader1, ","),
					{u1, a, "2", "ok", a, u1 + "-" + a, "2", ""},
					{u2, a, "2", "ok", a, u2 + "-" + a, "2", ""},
					{u1, b, "5", "ok", b, u1 + "-" + b, "5", ""},
				}
			},
			points: func() [2]map[string]int { return [2]map[string]int{{a: 2, b: 5}, {a: 2}} },
		},
		{
			name: "UserPerkAndPoints",
			// Header names in any case, with spaces and a byte order mark.
			file: func(u1, u2 string) string {
				return "\xef\xbb\xbf" + csvOf([]string{" User_ID", "PERK_ID ", "Points"}, []string{u1, a, "10"}, []string{u1, b, ""}, []string{u2, a, "100"}, []string{u2, b, "0"})
			},
			want: func(u1, u2 string) [][]string {
				return [][]string{
					strings.Split(resultsHeader1, ","),
					{u1, a, "10", "ok", a, u1 + "-" + a, "10", ""},
					{u1, b, "5", "ok", b, u1 + "-" + b, "5", ""},
					{u2, a, "100", "ok", a, u2 + "-" + a, "50", ""},
					{u2, b, "0", "ok", b, u2 + "-" + b, "0", ""},
				}
			},
			points: func() [2]map[string]int { return [2]map[string]int{{a: 10, b: 5}, {a: 50, b: 0}} },
		},
		{
			name: "PerkColumns",
			file: func(u1, u2 string) string {
				return csvOf([]string{"user_id", "perk_" + a, "Perk_" + b}, []string{u1, "3", "4"}, []string{u2, "", "7"})
			},
			want: func(u1, u2 string) [][]string {
				return [][]string{
					{"user_id", "perk_id", "points", "result", "perk_awarded_1", "award_awarded_1", "points_available_1", "perk_awarded_2", "award_awarded_2", "points_available_2", "error"},
					{u1, "", "", "ok", a, u1 + "-" + a, "3", b, u1 + "-" + b, "4", ""},
					{u2, "", "", "ok", b, u2 + "-" + b, "7", "", "", "", ""},
				}
			},
			points: func() [2]map[string]int { return [2]map[string]int{{a: 3, b: 4}, {b: 7}} },
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			us := users(t, h, 2)
			op := importFile(h, "dryRun=false", c.file(us[0], us[1]))
			rows := len(c.want(us[0], us[1])) - 1
			if op["status"] != "DONE" || counts(op) != [4]int{rows, rows, 0, 0} {
				t.Fatalf("operation = %v", op)
			}
			if op["namespace"] != "awards" || op["name"] != "import" || op["entityId"] != h.Tenant.ID {
				t.Fatalf("operation = %v", op)
			}
			msg := op["result"].(map[string]any)["message"]
			if want := fmt.Sprintf("done: %d rows, %d imported, 0 skipped, 0 with errors", rows, rows); msg != want {
				t.Fatalf("message = %q, want %q", msg, want)
			}
			equalRecords(t, results(h, op), c.want(us[0], us[1]))
			for i, want := range c.points() {
				got := awards(t, h, us[i])
				if fmt.Sprint(got) != fmt.Sprint(want) {
					t.Errorf("user %d awards = %v, want %v", i+1, got, want)
				}
			}
		})
	}
}

// TestImportDryRun: a dry run grants nothing, reports unknown users and
// perks, and reports the same rows ok as the real import grants, with the
// points the awards would hold.
func TestImportDryRun(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	a := newPerk(t, h, map[string]any{"points": pointsOf(2, 50)})
	u := users(t, h, 1)[0]
	h.Do("POST", "/perks/"+a+"/awards", map[string]any{"userId": u, "points": 4}, h.Admin()).Expect(t, 200, "")
	const nobody = "0123456789abcdef01234567"
	file := csvOf([]string{"user_id", "perk_id", "points"},
		[]string{u, a, "3"},
		[]string{nobody, a, "1"},
		[]string{u, nobody, "1"},
		[]string{u, a, "2"},   // the same award again: 4 + 3 + 2
		[]string{u, a, "100"}, // clamped to the perk's max
	)
	want := [][]string{
		strings.Split(resultsHeader1, ","),
		{u, a, "3", "ok", a, u + "-" + a, "7", ""},
		{nobody, a, "1", "fail", "", "", "", "user_id: no such user"},
		{u, nobody, "1", "fail", "", "", "", "perk_id: no such perk"},
		{u, a, "2", "ok", a, u + "-" + a, "9", ""},
		{u, a, "100", "ok", a, u + "-" + a, "50", ""},
	}
	for _, query := range []string{"", "dryRun=true", "dryRun=true&suppressEvents=false"} {
		t.Run("query="+query, func(t *testing.T) {
			op := importFile(h, query, file)
			if counts(op) != [4]int{5, 0, 3, 2} || op["metadata"].(map[string]any)["dryRun"] != true {
				t.Fatalf("operation = %v", op)
			}
			if msg := op["result"].(map[string]any)["message"]; msg != "dry run done (nothing written): 5 rows, 0 imported, 3 skipped, 2 with errors" {
				t.Fatalf("message = %q", msg)
			}
			equalRecords(t, results(h, op), want)
			if got := awards(t, h, u)[a]; got != 4 {
				t.Fatalf("a dry run changed the award: %d", got)
			}
			if n := len(granted(t, h, u)); n != 1 { // the API grant's
				t.Fatalf("a dry run recorded actions: %d", n)
			}
		})
	}
	t.Run("RealImportGrantsTheSameRows", func(t *testing.T) {
		op := importFile(h, "dryRun=false", file)
		if counts(op) != [4]int{5, 3, 0, 2} {
			t.Fatalf("operation = %v", op)
		}
		equalRecords(t, results(h, op), want)
		if got := awards(t, h, u)[a]; got != 50 {
			t.Fatalf("award = %d, want 50", got)
		}
	})
}

// TestImportBadRows: every bad row fails alone, is reported in the
// results file's error column, and grants nothing; the good rows around
// it are granted.
func TestImportBadRows(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	us := users(t, h, 3)
	good, member, outsider := us[0], us[1], us[2]
	a := newPerk(t, h, map[string]any{"points": pointsOf(2, 50)})
	disabled := newPerk(t, h, map[string]any{"enabled": false, "points": pointsOf(1, 10)})
	club := clubPerk(t, h, 10, member)
	const nobody = "0123456789abcdef01234567"
	bad := "points: must be an integer from 0 to 1000000000"
	cases := []struct {
		name string
		row  []string
		want string // the error column
	}{
		{"UnknownUser", []string{nobody, a, "1"}, "user_id: no such user"},
		{"UserIDNotAnID", []string{"not an id!", a, "1"}, "user_id: no such user"},
		{"MissingUser", []string{"", a, "1"}, "user_id: is required"},
		{"UnknownPerk", []string{outsider, nobody, "1"}, "perk_id: no such perk"},
		{"PerkIDNotAnID", []string{outsider, "x y", "1"}, "perk_id: no such perk"},
		{"MissingPerk", []string{outsider, "", "1"}, "perk_id: is required"},
		{"DisabledPerk", []string{outsider, disabled, "1"}, "perk_id: the perk is disabled"},
		{"NegativePoints", []string{outsider, a, "-1"}, bad},
		{"FractionPoints", []string{outsider, a, "1.5"}, bad},
		{"TextPoints", []string{outsider, a, "ten"}, bad},
		{"TooManyPoints", []string{outsider, a, "1000000001"}, bad},
		{"NotAMemberOfTheClub", []string{outsider, club, "1"}, "perk_id: the user is not a member of the perk's segment"},
		{"SeveralProblems", []string{"", "", "x"}, "user_id: is required|perk_id: is required|" + bad},
		{"ShortRow", []string{outsider, a}, "the row has 2 fields; the header has 3"},
	}
	recs := [][]string{{"user_id", "perk_id", "points"}, {good, a, "3"}}
	for _, c := range cases {
		recs = append(recs, c.row)
	}
	recs = append(recs, []string{member, club, "5"}, []string{good, a, "4"})
	for _, dry := range []bool{true, false} {
		t.Run(fmt.Sprintf("dryRun=%v", dry), func(t *testing.T) {
			op := importFile(h, fmt.Sprintf("dryRun=%v", dry), csvOf(recs...))
			n := len(cases) + 3
			want := [4]int{n, 3, 0, len(cases)}
			if dry {
				want = [4]int{n, 0, 3, len(cases)}
			}
			if op["status"] != "DONE" || counts(op) != want {
				t.Fatalf("operation = %v, want counts %v", op, want)
			}
			res := results(h, op)
			errs, result := column(t, res, "error"), column(t, res, "result")
			for i, c := range cases {
				t.Run(c.name, func(t *testing.T) {
					if errs[i+1] != c.want || result[i+1] != "fail" {
						t.Fatalf("result %q error %q, want fail %q", result[i+1], errs[i+1], c.want)
					}
					if got := column(t, res, "award_awarded_1")[i+1]; got != "" {
						t.Fatalf("award_awarded_1 = %q", got)
					}
				})
			}
			t.Run("GoodRows", func(t *testing.T) {
				avail := column(t, res, "points_available_1")
				last := len(cases) + 2
				if result[0] != "ok" || result[last-1] != "ok" || result[last] != "ok" {
					t.Fatalf("results = %v", result)
				}
				// The club's award starts from its initial 10.
				if avail[0] != "3" || avail[last-1] != "15" || avail[last] != "7" {
					t.Fatalf("points_available_1 = %v", avail)
				}
			})
		})
	}
	t.Run("Awards", func(t *testing.T) {
		if got := awards(t, h, good); fmt.Sprint(got) != fmt.Sprint(map[string]int{a: 7}) {
			t.Errorf("good = %v", got)
		}
		if got := awards(t, h, member); got[club] != 15 {
			t.Errorf("member = %v", got)
		}
		if got := awards(t, h, outsider); len(got) != 0 {
			t.Errorf("outsider = %v, want no awards", got)
		}
	})
}

// TestImportBadRowsPerkColumns: in the perk_<perkId> layout a row is all
// or nothing: one bad perk cell fails the whole row, also when the bad
// cell is a CLUB perk the user is not a member of (the membership is
// checked in the row's transaction).
func TestImportBadRowsPerkColumns(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	us := users(t, h, 6)
	a := newPerk(t, h, map[string]any{"points": pointsOf(0, 100)})
	disabled := newPerk(t, h, map[string]any{"enabled": false})
	club := clubPerk(t, h, 10, us[5])
	const nobody = "0123456789abcdef01234567"
	header := []string{"user_id", "perk_" + a, "perk_" + disabled, "perk_" + club, "perk_" + nobody}
	cases := []struct {
		name string
		row  []string
		want string // the error column ("" for ok)
	}{
		{"EmptyCells", []string{us[0], "", "", "", ""}, "no points in any perk_ column"},
		{"DisabledPerkFailsTheRow", []string{us[1], "3", "1", "", ""}, "perk_" + disabled + ": the perk is disabled"},
		{"BadPointsFailTheRow", []string{us[2], "3", "", "", "x"}, "perk_" + nobody + ": must be an integer from 0 to 1000000000"},
		{"UnknownPerkFailsTheRow", []string{us[3], "3", "", "", "1"}, "perk_" + nobody + ": no such perk"},
		{"NotAMemberFailsTheRow", []string{us[4], "3", "", "2", ""}, "perk_" + club + ": the user is not a member of the perk's segment"},
		{"MemberGetsBoth", []string{us[5], "3", "", "2", ""}, ""},
	}
	recs := [][]string{header}
	for _, c := range cases {
		recs = append(recs, c.row)
	}
	for _, dry := range []bool{true, false} {
		t.Run(fmt.Sprintf("dryRun=%v", dry), func(t *testing.T) {
			op := importFile(h, fmt.Sprintf("dryRun=%v", dry), csvOf(recs...))
			if op["status"] != "DONE" || counts(op)[0] != len(cases) || counts(op)[3] != len(cases)-1 {
				t.Fatalf("operation = %v", op)
			}
			res := results(h, op)
			errs := column(t, res, "error")
			for i, c := range cases {
				if errs[i] != c.want {
					t.Errorf("%s: error = %q, want %q", c.name, errs[i], c.want)
				}
			}
			okLine := res[6]
			want := []string{us[5], "", "", "ok", a, us[5] + "-" + a, "3", club, us[5] + "-" + club, "12"}
			if strings.Join(okLine[:10], ",") != strings.Join(want, ",") || okLine[len(okLine)-1] != "" {
				t.Fatalf("ok line = %q, want %q", okLine, want)
			}
		})
	}
	for i, u := range us {
		got := awards(t, h, u)
		switch i {
		case 5:
			if got[a] != 3 || got[club] != 12 {
				t.Errorf("member awards = %v", got)
			}
		default:
			if len(got) != 0 {
				t.Errorf("user %d of a failed row holds %v", i, got)
			}
		}
	}
}

// TestImportBadHeaders: a header that fits no layout FAILS the operation
// with VALIDATION_FAILED naming the problem, and leaves no results file.
func TestImportBadHeaders(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	var many []string
	for i := 0; i < 33; i++ {
		many = append(many, fmt.Sprintf("perk_p%02d", i))
	}
	cases := []struct {
		name, file, want string
	}{
		{"Empty", "", "file: the file is empty"},
		{"MissingUserID", "perk_id,points\nx,1\n", "the header lacks the user_id column"},
		{"PerkIDWithoutUserID", "perk_id\nx\n", "the header lacks the user_id column"},
		{"PerkColumnsWithoutUserID", "perk_abc\n1\n", "the header lacks the user_id column"},
		{"OnlyUserID", "user_id\nu\n", "the header lacks the perk_id column (or perk_<perkId> columns)"},
		{"UserIDAndPoints", "user_id,points\nu,1\n", "the points column goes with perk_id"},
		{"PerkIDMixedWithPerkColumns", "user_id,perk_id,perk_abc\nu,p,1\n", "the header mixes perk_id with perk_<perkId> columns"},
		{"PointsWithPerkColumns", "user_id,points,perk_abc\nu,1,1\n", "the points column goes with perk_id"},
		{"DuplicateColumn", "user_id,USER_ID,perk_id\nu,u,p\n", `the header names column "USER_ID" twice`},
		{"DuplicatePerkColumn", "user_id,perk_abc, PERK_ABC\nu,1,1\n", `the header names column "PERK_ABC" twice`},
		{"UnknownColumn", "user_id,perk_id,amount\nu,p,1\n", `unknown columns "amount"`},
		{"PerkColumnNotAnID", "user_id,perk_a b\nu,1\n", `unknown columns "perk_a b"`},
		{"EmptyColumnName", "user_id,,perk_id\nu,,p\n", "the header has an empty column name (column 2)"},
		{"ResultsFile", resultsHeader1 + "\n", `the header has the results file's columns "result", "perk_awarded_1", "award_awarded_1", "points_available_1", "error"`},
		{"TooManyPerkColumns", "user_id," + strings.Join(many, ",") + "\n", "the header has 33 perk_<perkId> columns: at most 32"},
		{"NotCSV", "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00", "not a CSV text file"},
		{"HeaderNotCSV", "\"user_id,perk_id\n", "the header row is not valid CSV"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			op := importFile(h, "dryRun=false", c.file)
			e, _ := op["error"].(map[string]any)
			if op["status"] != "FAILED" || e["code"] != "VALIDATION_FAILED" || !strings.Contains(e["message"].(string), c.want) {
				t.Fatalf("operation = %v, want FAILED with %q", op, c.want)
			}
			h.Do("GET", "/awards/imports/"+op["_id"].(string), nil, h.Admin()).Expect(t, 404, "NOT_FOUND")
		})
	}
	t.Run("HeaderOnly", func(t *testing.T) {
		op := importFile(h, "dryRun=false", "user_id,perk_id\n")
		if op["status"] != "DONE" || counts(op) != [4]int{0, 0, 0, 0} {
			t.Fatalf("operation = %v", op)
		}
		equalRecords(t, results(h, op), [][]string{strings.Split(resultsHeader1, ",")})
	})
}

// TestImportEvents: by default (suppressEvents=true) an import records no
// action; with suppressEvents=false each grant records AWARD_GRANTED with
// source IMPORT and the operation's id, in the grant's transaction.
func TestImportEvents(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	a := newPerk(t, h, map[string]any{"points": pointsOf(2, 50)})
	b := newPerk(t, h, map[string]any{"points": pointsOf(0, 50)})
	us := users(t, h, 2)
	quiet, loud := us[0], us[1]
	t.Run("SuppressedByDefault", func(t *testing.T) {
		op := importFile(h, "dryRun=false", csvOf([]string{"user_id", "perk_id"}, []string{quiet, a}, []string{quiet, b}))
		if counts(op) != [4]int{2, 2, 0, 0} {
			t.Fatalf("operation = %v", op)
		}
		if n := len(granted(t, h, quiet)); n != 0 {
			t.Fatalf("suppressed import recorded %d actions", n)
		}
	})
	t.Run("RecordedWhenNotSuppressed", func(t *testing.T) {
		op := importFile(h, "dryRun=false&suppressEvents=false", csvOf([]string{"user_id", "perk_" + a, "perk_" + b}, []string{loud, "3", "60"}))
		if counts(op) != [4]int{1, 1, 0, 0} {
			t.Fatalf("operation = %v", op)
		}
		acts := granted(t, h, loud)
		if len(acts) != 2 {
			t.Fatalf("AWARD_GRANTED actions = %d, want 2", len(acts))
		}
		byPerk := map[string]map[string]any{}
		for _, act := range acts {
			byPerk[act.Metadata["perkId"].(string)] = act.Metadata
			if act.Metadata["source"] != "IMPORT" || act.Metadata["operationId"] != op["_id"] {
				t.Errorf("metadata = %v", act.Metadata)
			}
			if act.Context.User == nil || act.Context.User.ID != loud || act.Context.User.Name != "Ann Import" || act.Context.Tenant.Title == "" {
				t.Errorf("context = %+v", act.Context)
			}
		}
		if m := byPerk[a]; m["awardId"] != loud+"-"+a || m["points"] != 3.0 || m["pointsGranted"] != 3.0 || m["pointsAvailable"] != 3.0 || m["balanceAfter"] != 3.0 {
			t.Errorf("metadata of %s = %v", a, m)
		}
		if m := byPerk[b]; m["points"] != 60.0 || m["pointsGranted"] != 50.0 || m["pointsAvailable"] != 50.0 || m["balanceAfter"] != 50.0 {
			t.Errorf("metadata of the clamped grant = %v", m)
		}
		// The row's two grants are one update of the user's feed head, in
		// the row's order, after the user's sign-up.
		seq, last, err := h.Deps.Actions.Head(context.Background(), h.Tenant.ID, action.ScopeOf(acts[0]))
		if err != nil {
			t.Fatal(err)
		}
		if len(last) != 2 || last[0].Metadata["perkId"] != a || last[1].Metadata["perkId"] != b || last[1].Sequence != seq || seq < 3 {
			t.Errorf("the user's feed head = %d %+v, want the two grants last", seq, last)
		}
	})
}

// TestImportNonce: the same nonce answers the same operation and grants
// nothing more; a new nonce imports the file again (an import is not
// idempotent), so the points double.
func TestImportNonce(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	a := newPerk(t, h, map[string]any{"points": pointsOf(2, 50)})
	u := users(t, h, 1)[0]
	file := csvOf([]string{"user_id", "perk_id", "points"}, []string{u, a, "6"})
	n := ts.Nonce()
	first := uploadNonce(h, "dryRun=false", file, n).Expect(t, 202, "").Map(t)
	id := first["_id"].(string)
	if first["nonce"] != n || first["status"] != "PENDING" {
		t.Fatalf("first answer = %v", first)
	}
	done := h.WaitOperation(id)
	if got := awards(t, h, u)[a]; got != 6 {
		t.Fatalf("award = %d, want 6", got)
	}
	t.Run("SameNonceSameOperation", func(t *testing.T) {
		again := uploadNonce(h, "dryRun=false", file, n).Expect(t, 202, "").Map(t)
		if again["_id"] != id || again["status"] != "DONE" || again["updatedAt"] != done["updatedAt"] {
			t.Fatalf("repeat = %v", again)
		}
		if got := awards(t, h, u)[a]; got != 6 {
			t.Fatalf("award after the repeat = %d, want 6", got)
		}
	})
	t.Run("SameNonceOtherFileIsConflict", func(t *testing.T) {
		uploadNonce(h, "dryRun=false", file+u+","+a+",1\n", n).Expect(t, 409, "CONFLICT")
	})
	t.Run("NewNonceGrantsAgain", func(t *testing.T) {
		op := importFile(h, "dryRun=false", file)
		if op["_id"] == id || counts(op) != [4]int{1, 1, 0, 0} {
			t.Fatalf("operation = %v", op)
		}
		if got := awards(t, h, u)[a]; got != 12 {
			t.Fatalf("award = %d, want 12", got)
		}
	})
}

// TestImportSameAwardTwice: rows granting one award add up, whatever
// separates them in the file (a transaction holds each award once, so the
// import commits between them and reads the award again).
func TestImportSameAwardTwice(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	fillerPerks := make([]string, 6)
	for i := range fillerPerks {
		fillerPerks[i] = newPerk(t, h, map[string]any{"points": pointsOf(0, 1000)})
	}
	fillers := users(t, h, 10)
	cases := []struct {
		name  string
		perk  func(member string) string
		query string
		// gap is the number of other rows between the two grants.
		gap   int
		first int // points of the award before the first grant
	}{
		{"Adjacent", func(string) string { return newPerk(t, h, map[string]any{"points": pointsOf(2, 100)}) }, "", 0, 0},
		{"GlobalPerk", func(string) string {
			return newPerk(t, h, map[string]any{"isGlobal": true, "template": "PSEUDO_CURRENCY", "points": pointsOf(10, 100)})
		}, "", 1, 10},
		{"ClubPerk", func(m string) string { return clubPerk(t, h, 20, m) }, "", 2, 20},
		// 60 rows with events fill a transaction (two items a row): the
		// second grant's row was read before the first grant committed.
		{"AfterAPartialCommit", func(string) string { return newPerk(t, h, map[string]any{"points": pointsOf(0, 100)}) }, "&suppressEvents=false", 60, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			u := users(t, h, 1)[0]
			p := c.perk(u)
			recs := [][]string{{"user_id", "perk_id", "points"}, {u, p, "3"}}
			for i := 0; i < c.gap; i++ {
				recs = append(recs, []string{fillers[i%10], fillerPerks[i/10], "1"})
			}
			recs = append(recs, []string{u, p, "4"})
			op := importFile(h, "dryRun=false"+c.query, csvOf(recs...))
			if op["status"] != "DONE" || counts(op) != [4]int{c.gap + 2, c.gap + 2, 0, 0} {
				t.Fatalf("operation = %v", op)
			}
			avail := column(t, results(h, op), "points_available_1")
			if avail[0] != strconv.Itoa(c.first+3) || avail[c.gap+1] != strconv.Itoa(c.first+7) {
				t.Fatalf("points_available_1 = %v", avail)
			}
			if got := awards(t, h, u)[p]; got != c.first+7 {
				t.Fatalf("award = %d, want %d", got, c.first+7)
			}
		})
	}
}

// TestImportUnreadableRows: a row that is not valid CSV or not UTF-8 text
// fails alone; the rows after it are granted.
func TestImportUnreadableRows(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	a := newPerk(t, h, map[string]any{"points": pointsOf(2, 50)})
	u := users(t, h, 1)[0]
	file := "user_id,perk_id,points\n" +
		u + "," + a + ",1\n" +
		u + `,bad "quote,1` + "\n" +
		u + "," + a + "\xff\xfe,1\n" +
		u + "," + a + ",2\n"
	op := importFile(h, "dryRun=false", file)
	if op["status"] != "DONE" || counts(op) != [4]int{4, 2, 0, 2} {
		t.Fatalf("operation = %v", op)
	}
	res := results(h, op)
	errs := column(t, res, "error")
	if !strings.Contains(errs[1], "CSV error on line 3") || errs[2] != "the row is not valid UTF-8 text" || errs[0] != "" || errs[3] != "" {
		t.Fatalf("errors = %q", errs)
	}
	if got := awards(t, h, u)[a]; got != 3 {
		t.Fatalf("award = %d, want 3", got)
	}
}

// TestImportSharedSegment: a CLUB and a LEVEL perk of one segment are
// checked with one membership check per row (a transaction names an item
// once), and rows checking the same membership go into separate
// transactions.
func TestImportSharedSegment(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	us := users(t, h, 2)
	member, outsider := us[0], us[1]
	seg := h.Do("POST", "/segments", map[string]any{"title": "S", "type": "PERSISTENT"}, h.Admin()).Expect(t, 201, "").Map(t)["_id"].(string)
	h.Do("POST", "/segments/"+seg+"/members", map[string]any{"userIds": []string{member}}, h.Admin()).Expect(t, 200, "")
	club := newPerk(t, h, map[string]any{"title": "Club", "template": "CLUB", "segmentId": seg, "points": pointsOf(1, 100)})
	level := newPerk(t, h, map[string]any{"title": "Level", "template": "LEVEL", "segmentId": seg, "points": pointsOf(0, 100)})
	for _, query := range []string{"dryRun=false", "dryRun=false&suppressEvents=false"} {
		t.Run(query, func(t *testing.T) {
			before := awards(t, h, member)
			columns := importFile(h, query, csvOf([]string{"user_id", "perk_" + club, "perk_" + level}, []string{member, "2", "3"}, []string{outsider, "2", "3"}))
			if counts(columns) != [4]int{2, 1, 0, 1} {
				t.Fatalf("operation = %v", columns)
			}
			want := "perk_" + club + ": the user is not a member of the perk's segment|perk_" + level + ": the user is not a member of the perk's segment"
			if errs := column(t, results(h, columns), "error"); errs[0] != "" || errs[1] != want {
				t.Fatalf("errors = %q", errs)
			}
			rows := importFile(h, query, csvOf([]string{"user_id", "perk_id", "points"}, []string{member, club, "1"}, []string{member, level, "1"}, []string{outsider, level, "1"}))
			if counts(rows) != [4]int{3, 2, 0, 1} {
				t.Fatalf("operation = %v", rows)
			}
			after := awards(t, h, member)
			if after[club] != max(before[club], 1)+3 || after[level] != before[level]+4 {
				t.Fatalf("awards %v -> %v", before, after)
			}
			if got := awards(t, h, outsider); len(got) != 0 {
				t.Fatalf("outsider holds %v", got)
			}
		})
	}
}

// TestImportIntoAnAwardStoredWithoutEntries: an award whose only change
// moved no points (a grant of 0 to a new award) is stored with an entry
// count of 0; an import grants to it like to any other award (its
// condition accepted only an award without the count).
func TestImportIntoAnAwardStoredWithoutEntries(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	u := users(t, h, 1)[0]
	p := newPerk(t, h, map[string]any{"points": pointsOf(0, 100)})
	h.Do("POST", "/pointperks/"+p+"/awards", map[string]any{"userId": u, "points": 0}, h.Admin()).Expect(t, 200, "")
	op := importFile(h, "dryRun=false", csvOf([]string{"user_id", "perk_id", "points"}, []string{u, p, "3"}))
	if op["status"] != "DONE" || counts(op) != [4]int{1, 1, 0, 0} {
		t.Fatalf("operation = %v", op)
	}
	if got := awards(t, h, u)[p]; got != 3 {
		t.Fatalf("award = %d, want 3", got)
	}
}

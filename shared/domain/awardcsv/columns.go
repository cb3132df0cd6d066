package awardcsv

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/loyalty-platform/platform/shared/domain/perk"
	"github.com/loyalty-platform/platform/shared/platform/csvcell"
	"github.com/loyalty-platform/platform/shared/platform/web"
)

// The CSV notation of the award import (spec "Bulk award import"). Column
// names are matched ignoring case and surrounding spaces; a UTF-8 byte
// order mark is dropped by the job framework.
//
//	(a) user_id, perk_id                   the perk's points.initial
//	(b) user_id, perk_id, points           points (an empty cell: points.initial)
//	(c) user_id, perk_<perkId>, ...        each non-empty cell: points of that perk
//
// Points are integers from 0 to perk.MaxPoints (the grant clamps the award
// to the perk's points.max).
//
// The results file has the columns user_id, perk_id, points, result (ok or
// fail), then per grant of the row perk_awarded_<n>, award_awarded_<n>,
// points_available_<n> (n from 1 to the number of perk columns), and error
// (the row's problems, "column: message", separated by "|").

// Column names.
const (
	colUserID = "user_id"
	colPerkID = "perk_id"
	colPoints = "points"
	// colEarnedAt is the optional column of when a row's points were
	// earned (RFC 3339; empty: now), in any layout.
	colEarnedAt = "earned_at"
	colResult   = "result"
	colError    = "error"
	perkPrefix  = "perk_"
)

// Values of the result column.
const (
	ResultOK   = "ok"
	ResultFail = "fail"
)

// MaxPerkColumns is the most perk_<perkId> columns a file may have: a row
// is one transaction (all or nothing), and each of its grants takes up to
// three of the transaction's items (the award, a membership check for a
// CLUB or LEVEL perk, the action when events are recorded).
const MaxPerkColumns = 32

// Row problems (the error column).
const (
	msgRequired     = "is required"
	msgNoUser       = "no such user"
	msgNoPerk       = "no such perk"
	msgDisabled     = "the perk is disabled"
	msgNotMember    = "the user is not a member of the perk's segment"
	msgNoPoints     = "no points in any perk_ column"
	msgAwardChanged = "the award changed while the row was imported; import the row again"
)

var msgBadPoints = fmt.Sprintf("must be an integer from 0 to %d", perk.MaxPoints)

// resultsColumnRe matches the columns only a results file has; it is
// compiled on first use so that a cold start does not pay for it.
var resultsColumnRe = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^(result|error|(perk_awarded|award_awarded|points_available)_[0-9]+)$`)
})

// layout is the shape of a file.
type layout int

const (
	layoutPerk    layout = iota // (a) user_id, perk_id
	layoutPoints                // (b) user_id, perk_id, points
	layoutColumns               // (c) user_id, perk_<perkId>...
)

// perkColumn is a perk_<perkId> column of layout (c).
type perkColumn struct {
	index  int
	name   string // as the header writes it (trimmed)
	perkID string // as the header writes it
}

// header is a validated import header.
type header struct {
	names  []string
	layout layout
	// user, perk and points are the indexes of those columns (-1 when
	// absent).
	user, perk, points int
	// earned is the index of the earned_at column (-1 when absent).
	earned int
	perks  []perkColumn
}

// parseHeader checks an import header: it must fit one layout, with known
// column names only, none twice. Its error message is the operation's
// error.
func parseHeader(names []string) (*header, error) {
	h := &header{names: names, user: -1, perk: -1, points: -1, earned: -1}
	seen := map[string]bool{}
	var unknown, results []string
	for i, raw := range names {
		name := strings.TrimSpace(raw)
		if name == "" {
			return nil, fmt.Errorf("the header has an empty column name (column %d)", i+1)
		}
		lower := strings.ToLower(name)
		if seen[lower] {
			return nil, fmt.Errorf("the header names column %q twice", trunc(name))
		}
		seen[lower] = true
		switch {
		case lower == colUserID:
			h.user = i
		case lower == colPerkID:
			h.perk = i
		case lower == colPoints:
			h.points = i
		case lower == colEarnedAt:
			h.earned = i
		case resultsColumnRe().MatchString(lower):
			results = append(results, strconv.Quote(name))
		case strings.HasPrefix(lower, perkPrefix) && web.ValidID(name[len(perkPrefix):]):
			h.perks = append(h.perks, perkColumn{index: i, name: name, perkID: name[len(perkPrefix):]})
		default:
			unknown = append(unknown, strconv.Quote(trunc(name)))
		}
	}
	switch {
	case len(results) > 0:
		return nil, fmt.Errorf("the header has the results file's columns %s: import a file of user_id and perk_id (and points) or perk_<perkId> columns, not a results file (it would grant its rows again)", list(results))
	case len(unknown) > 0:
		return nil, fmt.Errorf("unknown columns %s (the columns are user_id, perk_id and optionally points; or user_id and perk_<perkId> columns; earned_at is optional in both)", list(unknown))
	case h.user < 0:
		return nil, fmt.Errorf("the header lacks the user_id column")
	case h.perk >= 0 && len(h.perks) > 0:
		return nil, fmt.Errorf("the header mixes perk_id with perk_<perkId> columns: use either user_id, perk_id (and points), or user_id and perk_<perkId> columns")
	case h.points >= 0 && h.perk < 0:
		return nil, fmt.Errorf("the points column goes with perk_id: with perk_<perkId> columns each cell holds the points")
	case h.perk < 0 && len(h.perks) == 0:
		return nil, fmt.Errorf("the header lacks the perk_id column (or perk_<perkId> columns)")
	case len(h.perks) > MaxPerkColumns:
		return nil, fmt.Errorf("the header has %d perk_<perkId> columns: at most %d", len(h.perks), MaxPerkColumns)
	}
	switch {
	case len(h.perks) > 0:
		h.layout = layoutColumns
	case h.points >= 0:
		h.layout = layoutPoints
	default:
		h.layout = layoutPerk
	}
	return h, nil
}

func list(items []string) string {
	if len(items) > 5 {
		items = append(items[:5:5], "...")
	}
	return strings.Join(items, ", ")
}

// grants is the number of grants a row can hold: the groups of
// perk_awarded_<n> columns of the results file.
func (h *header) grants() int {
	if h.layout == layoutColumns {
		return len(h.perks)
	}
	return 1
}

// resultsHeader is the header of the results file.
func (h *header) resultsHeader() []string {
	out := []string{colUserID, colPerkID, colPoints, colResult}
	for n := 1; n <= h.grants(); n++ {
		out = append(out, fmt.Sprintf("perk_awarded_%d", n), fmt.Sprintf("award_awarded_%d", n), fmt.Sprintf("points_available_%d", n))
	}
	return append(out, colError)
}

// want is one grant a row asks for, before its perk is looked up.
type want struct {
	col    string // the column it came from, for messages
	perkID string
	// points, when set; nil means the perk's points.initial.
	points *int
}

// row is a parsed import row.
type row struct {
	userID string
	wants  []want
	// perkCell and pointsCell are the perk_id and points cells as written
	// (layouts a and b), for the results file.
	perkCell, pointsCell string
	// earnedCell is the earned_at cell as written ("": now).
	earnedCell string
	// whole is false for a row that is not the header's width (or not
	// readable at all): its cells are not checked further.
	whole bool
	errs  []string
}

// parseRow reads a record. Every cell problem is reported ("column:
// message"); the row is only usable when errs is empty.
func (h *header) parseRow(rec []string) row {
	var r row
	cell := func(i int) string {
		if i < 0 || i >= len(rec) {
			return ""
		}
		return csvcell.Read(strings.TrimSpace(rec[i]))
	}
	r.userID, r.perkCell, r.pointsCell, r.earnedCell = cell(h.user), cell(h.perk), cell(h.points), cell(h.earned)
	if len(rec) != len(h.names) {
		r.errs = append(r.errs, fmt.Sprintf("the row has %d fields; the header has %d", len(rec), len(h.names)))
		return r
	}
	r.whole = true
	if r.userID == "" {
		r.errs = append(r.errs, colUserID+": "+msgRequired)
	}
	if h.layout != layoutColumns {
		w := want{col: colPerkID, perkID: r.perkCell}
		if r.perkCell == "" {
			r.errs = append(r.errs, colPerkID+": "+msgRequired)
		}
		if r.pointsCell != "" {
			p, ok := parsePoints(r.pointsCell)
			if !ok {
				r.errs = append(r.errs, colPoints+": "+msgBadPoints)
			}
			w.points = &p
		}
		r.wants = []want{w}
		return r
	}
	bad := false
	for _, c := range h.perks {
		v := cell(c.index)
		if v == "" {
			continue
		}
		p, ok := parsePoints(v)
		if !ok {
			r.errs = append(r.errs, c.name+": "+msgBadPoints)
			bad = true
			continue
		}
		r.wants = append(r.wants, want{col: c.name, perkID: c.perkID, points: &p})
	}
	if len(r.wants) == 0 && !bad {
		r.errs = append(r.errs, msgNoPoints)
	}
	return r
}

// parsePoints reads a points cell: an integer from 0 to perk.MaxPoints.
func parsePoints(v string) (int, bool) {
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 || n > perk.MaxPoints {
		return 0, false
	}
	return n, true
}

// escapeLine returns a results line (see resultsHeader) as written:
// points and points_available_<n> are the numeric columns, the others text
// (csvcell).
func escapeLine(line []string) []string {
	return csvcell.Row(line, func(i int) bool {
		return i == 2 || (i > 3 && i < len(line)-1 && (i-4)%3 == 2)
	})
}

// joinList joins items with "|", escaping "|" and "\" inside them.
func joinList(items []string) string {
	if len(items) == 0 {
		return ""
	}
	esc := strings.NewReplacer(`\`, `\\`, `|`, `\|`)
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = esc.Replace(it)
	}
	return strings.Join(out, "|")
}

func trunc(s string) string {
	if len(s) > 60 {
		return s[:60] + "..."
	}
	return s
}

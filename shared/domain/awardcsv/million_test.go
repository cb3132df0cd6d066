package awardcsv_test

import (
	"os"
	"strconv"
	"testing"

	ts "github.com/loyalty-platform/platform/shared/testkit"
)

// TestLargeImport imports a generated file of AWARDCSV_ROWS rows (skipped
// when unset; e.g. 1000000) for real, in several invocations
// (MaxRowsPerRun), and reports the throughput and the peak heap and
// resident size of the process: the import streams its input and its
// results, so the heap stays flat whatever the file's size. The input is generated as the job reads it and the results
// parts are kept on disk (an S3 wrapper), so that the in-memory S3
// stand-in does not count in the heap.
//
//	AWARDCSV_ROWS=1000000 go run ./localstack/cmd/testenv -- go test -run TestLargeImport -timeout 2h -v ./shared/awardcsv/
func TestLargeImport(t *testing.T) {
	t.Parallel()
	n, _ := strconv.Atoi(os.Getenv("AWARDCSV_ROWS"))
	if n <= 0 {
		t.Skip("set AWARDCSV_ROWS to run the large import")
	}
	const nUsers, nPerks = 1000, 10
	h := ts.New(t)
	g := genFile{users: users(t, h, nUsers), rows: n}
	for i := 0; i < nPerks; i++ {
		g.perks = append(g.perks, newPerk(t, h, map[string]any{"points": pointsOf(0, 1_000_000_000)}))
	}
	got := h.RunLargeImport("awards", ts.GeneratedCSV{Header: genHeader, Rows: n, Row: g.row}, int64(max(n/4, 1)))
	if counts(got.Op) != [4]int{n, n, 0, 0} {
		t.Fatalf("operation = %v", got.Op)
	}
	if got.ResultLines != int64(n)+1 {
		t.Fatalf("results file has %d lines, want %d", got.ResultLines, n+1)
	}
	// Every award got the same share of the rows.
	for _, u := range g.users[:3] {
		held := awards(t, h, u)
		for _, p := range g.perks {
			if want := g.grantsOf(u, p); held[p] != want {
				t.Fatalf("award %s-%s = %d, want %d", u, p, held[p], want)
			}
		}
	}
}

const genHeader = "user_id,perk_id,points\n"

// genFile is a file of rows granting 1 point of perk (i/len(users)) %
// len(perks) to user i % len(users); every row has the same width.
type genFile struct {
	users, perks []string
	rows         int
}

func (g genFile) row(i int) string {
	return g.users[i%len(g.users)] + "," + g.perks[(i/len(g.users))%len(g.perks)] + ",1\n"
}

// grantsOf is the number of rows granting user u perk p.
func (g genFile) grantsOf(u, p string) int {
	n := 0
	for i := 0; i < g.rows; i += len(g.users) {
		for j := 0; j < len(g.users) && i+j < g.rows; j++ {
			if g.users[j] == u && g.perks[(i/len(g.users))%len(g.perks)] == p {
				n++
			}
		}
	}
	return n
}

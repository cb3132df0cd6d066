package locationcsv_test

import (
	"fmt"
	"os"
	"strconv"
	"testing"

	ts "github.com/loyalty-platform/platform/shared/testkit"
)

// TestLargeImport imports a generated file of LOCATIONCSV_ROWS new
// locations (skipped when unset; e.g. 1000000) for real, in several
// invocations (MaxRowsPerRun), and reports the throughput, the peak heap
// and the peak resident size of the process: the import streams its input
// and its results, and its title index has a fixed size, so memory stays
// flat whatever the file's size. The input is generated as the job reads
// it and the results parts are kept on disk (an S3 wrapper), so that the
// in-memory S3 stand-in does not count.
//
//	LOCATIONCSV_ROWS=1000000 go run ./localstack/cmd/testenv -- go test -run TestLargeImport -timeout 3h -v ./shared/locationcsv/
func TestLargeImport(t *testing.T) {
	t.Parallel()
	n, _ := strconv.Atoi(os.Getenv("LOCATIONCSV_ROWS"))
	if n <= 0 {
		t.Skip("set LOCATIONCSV_ROWS to run the large import")
	}
	h := ts.New(t)
	file := ts.GeneratedCSV{Header: genHeader, Rows: n, Row: genRow}
	got := h.RunLargeImport("locations", file, int64(max(n/10, 1)))
	if counts(got.Op) != [4]int{n, n, 0, 0} {
		t.Fatalf("operation = %v", got.Op)
	}
	if got.ResultLines != int64(n)+1 {
		t.Fatalf("results file has %d lines, want %d", got.ResultLines, n+1)
	}
}

const genHeader = "title,geo_longitude,geo_latitude,state,tags,address.city,description\n"

// genRow returns row i of the generated file, creating a location; every
// row has the same width.
func genRow(i int) string {
	return fmt.Sprintf("Large %07d,%09.4f,%08.4f,ACTIVE,food|late,London,A place to eat and drink\n", i, float64(i%360)-179.5, float64(i%180)-89.5)
}

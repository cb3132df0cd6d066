package locationcsv

import (
	"reflect"
	"strings"
	"testing"

	"github.com/loyalty-platform/platform/shared/testkit/fuzzcsv"
)

// FuzzImportRows reads a CSV file as the location import does (its header,
// then its rows) and checks that nothing panics, that every results line
// has the results header's width, and that a row that imports cleanly
// exports to a row that imports to the same cells (the export and the
// import read each other).
func FuzzImportRows(f *testing.F) {
	fuzzcsv.Seed(f,
		"title,geo_longitude,geo_latitude\nSoho,-0.13,51.51\n",
		"_id,title,geo_longitude,geo_latitude,state,tags,address.line1,address.city,contacts.email,services.checkins,openingHours.monday,zones.0.name,zones.0.tables,links.deliveroo.enabled,links.deliveroo.parameters,buttons_json,extended_json\n"+
			"a1,Camden,-0.14,51.54,ACTIVE,a|b\\|c,1 High St,London,x@example.com,true,09:00-17:00,Bar,1|2,yes,?x=1,\"[{\"\"title\"\":\"\"Go\"\"}]\",\"{\"\"k\"\":1}\"\n",
		"title,geo_longitude,geo_latitude\nx,181,0\n,NaN,1e9\n\"unterminated\n",
		"title,geo_longitude,geo_latitude,title\n",
		"title,geo_longitude\n",
		"title,geo_longitude,geo_latitude,zones.1.name,zones.0.key\nA,1,2,z,k\n",
		"title,geo_longitude,geo_latitude,result_location_id,result_action,result_errors\nA,1,2,x,CREATED,\n",
		"\xef\xbb\xbftitle,geo_longitude,geo_latitude\n\xff,0,0\n",
		"title,geo_longitude,geo_latitude,extended_json\nA,1,2,\"{\"\"n\"\":1e308}\"\nB,1,2,\"{\"\"n\"\":1e126}\"\nC,1,2,\"{\"\"n\"\":-1e-131,\"\"\"\":1}\"\n",
		"title,geo_longitude,geo_latitude,extended_json,buttons_json\nA,1,2,\""+strings.Repeat(`{""a"":`, 40)+"1"+strings.Repeat("}", 40)+"\",\"[[[[]]]]\"\n",
		"title,geo_longitude,geo_latitude,tags,description\n\"=HYPERLINK(\"\"x\"\")\",-5,-5,'-a|+b,@SUM(1+1)\n'=x,'-5,1,\"\t=y\",\"\r+z\"\n''=x,1,1,''@,'\n",
	)
	f.Fuzz(func(t *testing.T, data []byte) {
		h, recs, ok := fuzzcsv.Parse(data, 100, parseHeader)
		if !ok {
			return
		}
		width := len(h.resultsHeader())
		for _, rec := range recs {
			r := h.parseRow(rec)
			if got := len(h.resultLine(rec, r.id, "CREATED", r.errs)); got != width {
				t.Fatalf("results line of %q has %d cells, the results header %d", rec, got, width)
			}
			if len(r.errs) > 0 {
				continue
			}
			y := newLayout()
			y.add(r.loc)
			cols := y.columns()
			out := exportRow(cols, r.loc)
			h2, err := parseHeader(cols)
			if err != nil {
				t.Fatalf("the export header %q does not import: %v", cols, err)
			}
			r2 := h2.parseRow(out)
			if len(r2.errs) > 0 {
				t.Fatalf("row %q imports, its export %q does not: %v", rec, out, r2.errs)
			}
			if again := exportRow(cols, r2.loc); !reflect.DeepEqual(again, out) {
				t.Fatalf("row %q: export %q imports as %q", rec, out, again)
			}
		}
	})
}

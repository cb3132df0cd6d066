package awardcsv

import (
	"testing"

	"github.com/loyalty-platform/platform/shared/domain/perk"
	"github.com/loyalty-platform/platform/shared/testkit/fuzzcsv"
)

// FuzzImportRows reads a CSV file as the award import does (its header,
// then its rows) and checks that nothing panics, and that a row's grants
// fit the results file (at most grants() of them) with points from 0 to
// perk.MaxPoints.
func FuzzImportRows(f *testing.F) {
	fuzzcsv.Seed(f,
		"user_id,perk_id\nu1,p1\n",
		"user_id,perk_id,points\nu1,p1,5\nu2,p2,\nu3,p3,-1\nu4,p4,1.5\n",
		"USER_ID,perk_abc,perk_def\nu1,3,\nu2,,\nu3,x,4\n",
		"user_id,perk_id,perk_abc\n",
		"user_id,points\n",
		"user_id,perk_id,points,result,error\nu,p,1,ok,\n",
		"user_id,perk_id\n\"u\nx\",p\nu,p,extra\n",
		"user_id,PER\u212a_x\nu,1\n",
		"user_id,perk_id,points\nu,p,99999999999999999999\n",
		"user_id,perk_id,points\n\"=HYPERLINK(\"\"x\"\")\",@SUM(1+1),-5\n'=u,'@p,'-5\n'u,p,'7\n",
		"user_id,perk_id,points\nu,p,1e308\nu,p,1e126\n",
	)
	f.Fuzz(func(t *testing.T, data []byte) {
		h, recs, ok := fuzzcsv.Parse(data, 100, parseHeader)
		if !ok {
			return
		}
		_ = h.resultsHeader()
		for _, rec := range recs {
			r := h.parseRow(rec)
			if len(r.wants) > h.grants() {
				t.Fatalf("row %q asks %d grants, the results file has room for %d", rec, len(r.wants), h.grants())
			}
			for _, w := range r.wants {
				if w.points != nil && (*w.points < 0 || *w.points > perk.MaxPoints) {
					t.Fatalf("row %q: points %d", rec, *w.points)
				}
			}
			if len(r.errs) == 0 && (r.userID == "" || len(r.wants) == 0) {
				t.Fatalf("row %q is clean but grants nothing: %+v", rec, r)
			}
		}
	})
}

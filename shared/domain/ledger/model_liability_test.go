package ledger_test

import (
	"fmt"
	"net/url"
	"time"
)

// checkLiability checks GET /reports/points-liability against the model:
// per perk, outstanding is the sum of the model's stored awards'
// available as reads see it (expired lots not counted; a global perk's
// virtual awards count once stored), and expiring the model's lots that
// hold points, by the month of their last valid day.
func (r *runner) checkLiability() error {
	for p, id := range r.pids {
		want := 0
		months := map[string]int{}
		for _, mu := range r.m.users {
			a := mu.awards[p]
			if !a.exists {
				continue
			}
			v := a.view(r.m.day)
			want += v.avail
			for _, l := range v.lots {
				if l.expires && l.remaining > 0 {
					months[r.dateOf(l.day+lotDays).Format("2006-01")] += l.remaining
				}
			}
		}
		resp := r.h.Do("GET", "/reports/points-liability?perkId="+url.QueryEscape(id), nil, r.h.Admin())
		if resp.Status != 200 {
			return fmt.Errorf("liability of %s: %d %s", perkDefs[p].title, resp.Status, resp.Body)
		}
		perks, _ := decode(resp.Body)["perks"].([]any)
		if len(perks) != 1 {
			return fmt.Errorf("liability of %s: %s", perkDefs[p].title, resp.Body)
		}
		pm := perks[0].(map[string]any)
		if got := intOf(pm["outstanding"]); got != want {
			return fmt.Errorf("liability of %s: outstanding %d, want %d (the model's sum)", perkDefs[p].title, got, want)
		}
		got := map[string]int{}
		for _, e := range pm["expiring"].([]any) {
			m := e.(map[string]any)
			if n := intOf(m["points"]); n != 0 {
				got[fmt.Sprint(m["month"])] = n
			}
		}
		if fmt.Sprint(got) != fmt.Sprint(months) {
			return fmt.Errorf("liability of %s: expiring %v, the model has %v", perkDefs[p].title, got, months)
		}
	}
	return nil
}

// dateOf is the tenant's date of the model's day d.
func (r *runner) dateOf(d int) time.Time { return r.start.AddDate(0, 0, d) }

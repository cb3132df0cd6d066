package ledger_test

import (
	"fmt"
	"net/url"
)

// checkLiability checks GET /reports/points-liability against the model:
// per perk, outstanding is the sum of the model's awards' available (the
// model's perks never expire, so nothing is expiring).
func (r *runner) checkLiability() error {
	for p, id := range r.pids {
		want := 0
		for _, mu := range r.m.users {
			if a := mu.awards[p]; a.exists {
				want += a.avail
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
		for _, e := range pm["expiring"].([]any) {
			if n := intOf(e.(map[string]any)["points"]); n != 0 {
				return fmt.Errorf("liability of %s: %d points expiring, want none", perkDefs[p].title, n)
			}
		}
	}
	return nil
}

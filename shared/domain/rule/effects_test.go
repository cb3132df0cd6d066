package rule_test

import (
	"fmt"
	"testing"

	ts "github.com/loyalty-platform/platform/shared/testkit"
)

// TestSeveralEffects: the effects of one rule apply together, on the
// request's path (an order) and on the stream's (a check-in), whatever
// items they share (the user's, the order's, an award's, a membership).
func TestSeveralEffects(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	loc := shop(t, h, h.Admin(), "Multi")
	p, q := newPerk(t, h, h.Admin(), map[string]any{"title": "P"}), newPerk(t, h, h.Admin(), map[string]any{"title": "Q"})
	seg, clubSeg := newSegment(t, h), newSegment(t, h)
	club := newPerk(t, h, h.Admin(), map[string]any{"title": "Club", "template": "CLUB", "segmentId": clubSeg})
	add := func(s string) map[string]any { return map[string]any{"type": "ADD_TO_SEGMENT", "segmentId": s} }
	tests := []struct {
		name    string
		trigger string
		effects []map[string]any
		want    map[string]int
		member  []string // the segments the user is in after
	}{
		{"TwoPerksOnOrder", "ORDER_COMPLETED", []map[string]any{grant(p, 5), grant(q, 7)}, map[string]int{p: 5, q: 7}, nil},
		{"SamePerkTwiceOnOrder", "ORDER_COMPLETED", []map[string]any{grant(p, 10), {"type": "GRANT_PERK", "perkId": p, "pointsPerUnit": 1}}, map[string]int{p: 35}, nil},
		{"TwoPerksOnCheckin", "CHECKIN_CREATED", []map[string]any{grant(p, 5), grant(q, 7)}, map[string]int{p: 5, q: 7}, nil},
		{"SegmentAndPerkOnCheckin", "CHECKIN_CREATED", []map[string]any{add(seg), grant(p, 5)}, map[string]int{p: 5}, []string{seg}},
		{"TwoSegmentsAndPerksOnOrder", "ORDER_COMPLETED", []map[string]any{add(seg), grant(p, 1), add(clubSeg), grant(q, 2)}, map[string]int{p: 1, q: 2, club: 0}, []string{seg, clubSeg}},
		{"SegmentThenItsClubPerk", "CHECKIN_CREATED", []map[string]any{add(clubSeg), grant(club, 5)}, map[string]int{club: 5}, []string{clubSeg}},
		{"SegmentInAndOut", "CHECKIN_CREATED", []map[string]any{add(seg), {"type": "REMOVE_FROM_SEGMENT", "segmentId": seg}}, map[string]int{}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			uid := shopper(t, h, h.Admin(), tc.name)
			body := ruleBody(tc.trigger, tc.effects, cond("context.user._id", "EQ", uid))
			newRule(t, h, body)
			oid := ""
			if tc.trigger == "ORDER_COMPLETED" {
				oid = completeOrder(t, h, uid, map[string]any{"locationId": loc, "totalPrice": 25})
			} else {
				checkIn(t, h, h.Admin(), h.Tenant.ID, uid, loc)
			}
			h.WaitStreams()
			if got := points(t, h, h.Admin(), uid); fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("points = %v, want %v", got, tc.want)
			}
			if oid != "" {
				// The order records what each grant earned on it.
				earned := map[string]int{}
				for award, n := range h.Do("GET", "/orders/"+oid, nil, h.Admin()).Expect(t, 200, "").Map(t)["pointsEarned"].(map[string]any) {
					earned[award[len(uid)+1:]] = int(n.(float64))
				}
				want := map[string]int{}
				for k, v := range tc.want {
					if v > 0 {
						want[k] = v
					}
				}
				if fmt.Sprint(earned) != fmt.Sprint(want) {
					t.Errorf("the order's pointsEarned by perk = %v, want %v", earned, want)
				}
			}
			var in []string
			for _, s := range []string{seg, clubSeg} {
				for _, m := range members(t, h, s) {
					if m == uid {
						in = append(in, s)
					}
				}
			}
			if fmt.Sprint(in) != fmt.Sprint(tc.member) {
				t.Errorf("member of %v, want %v", in, tc.member)
			}
		})
	}
}

// TestEffectsLeftOut: an effect that cannot apply when the rule runs (its
// perk disabled or deleted, its segment deleted) is left out; the rule's
// other effects still apply.
func TestEffectsLeftOut(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	uid := shopper(t, h, h.Admin(), "Lou")
	loc := shop(t, h, h.Admin(), "Gaps")
	ok, off, gone := newPerk(t, h, h.Admin(), nil), newPerk(t, h, h.Admin(), nil), newPerk(t, h, h.Admin(), nil)
	seg, kept := newSegment(t, h), newSegment(t, h)
	id := newRule(t, h, ruleBody("CHECKIN_CREATED", []map[string]any{
		grant(off, 1), {"type": "ADD_TO_SEGMENT", "segmentId": seg}, grant(ok, 5), grant(gone, 2), {"type": "ADD_TO_SEGMENT", "segmentId": kept},
	}))
	h.Do("PUT", "/perks/"+off, map[string]any{"enabled": false}, h.Admin()).Expect(t, 200, "")
	h.Do("DELETE", "/perks/"+gone, nil, h.Admin()).Expect(t, 204, "")
	h.Do("DELETE", "/segments/"+seg, nil, h.Admin()).Expect(t, 204, "")
	in := checkIn(t, h, h.Admin(), h.Tenant.ID, uid, loc)
	h.WaitStreams()
	if got, want := points(t, h, h.Admin(), uid), map[string]int{ok: 5}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("points = %v, want %v", got, want)
	}
	if got := members(t, h, kept); len(got) != 1 || got[0] != uid {
		t.Errorf("members of the kept segment = %v, want [%s]", got, uid)
	}
	grants := actionsOf(t, h, h.Tenant.ID, uid, "AWARD_GRANTED")
	if len(grants) != 1 {
		t.Fatalf("AWARD_GRANTED = %d, want 1", len(grants))
	}
	ruleMeta(t, grants[0], id, in.ID, 1)
	joined := actionsOf(t, h, h.Tenant.ID, uid, "SEGMENT_JOINED")
	if len(joined) != 1 || joined[0].Metadata["segmentId"] != kept {
		t.Errorf("SEGMENT_JOINED = %+v, want one, of %s", joined, kept)
	}
}

package award

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sort"

	"github.com/loyalty-platform/platform/shared/domain/ledger"
	"github.com/loyalty-platform/platform/shared/domain/perk"
	"github.com/loyalty-platform/platform/shared/platform/actor"
	"github.com/loyalty-platform/platform/shared/platform/ddb"
	"github.com/loyalty-platform/platform/shared/platform/web"
)

// LedgerPage is the answer of GET /users/{userId}/pointawards/{awardId}/ledger.
type LedgerPage struct {
	Items []ledger.Entry `json:"items"`
	Page  web.Page       `json:"page"`
	// Lots are the award's lots that hold points now, in the order burns
	// take them (the first to expire first; those that never expire
	// last), on every page.
	Lots []Lot `json:"lots"`
}

// Lot is a lot of an award as the ledger answer shows it.
type Lot struct {
	LotID     string `json:"lotId"`
	Points    int    `json:"points"`
	Remaining int    `json:"remaining"`
	EarnedAt  string `json:"earnedAt"`
	ExpiresAt string `json:"expiresAt,omitempty"`
}

// Ledger returns a page of an award's ledger entries, newest first (GET
// /users/{userId}/pointawards/{awardId}/ledger; the user or an admin). An
// award of a perk the tenant does not have, or another user's, is 404; a
// deleted user's ledger stays readable by an admin (their history is
// kept). An award that never changed (a virtual award showing
// points.initial) has no entries yet.
func (s *Service) Ledger(ctx context.Context, caller actor.Actor, userID, awardID string, limit int, startKey string) (LedgerPage, error) {
	if err := caller.RequireUser(userID); err != nil {
		return LedgerPage{}, err
	}
	uid, perkID, ok := ParseID(awardID)
	if !ok || uid != userID {
		return LedgerPage{}, ErrNotFound
	}
	if _, err := s.Perks.Find(ctx, caller.TenantID, perkID); err != nil {
		if errors.Is(err, perk.ErrNotFound) {
			return LedgerPage{}, ErrNotFound
		}
		return LedgerPage{}, fmt.Errorf("ledger of %s: %w", awardID, err)
	}
	scope := "ledger|" + awardID
	start, err := s.Cursor.Decode(caller.TenantID, scope, startKey)
	if err != nil {
		return LedgerPage{}, err
	}
	items, next, err := ddb.QueryPage(ctx, s.DB, ledger.Query(s.Table, caller.TenantID, uid, perkID), start, limit, nil)
	if err != nil {
		return LedgerPage{}, fmt.Errorf("ledger of %s: %w", awardID, err)
	}
	out := LedgerPage{Items: make([]ledger.Entry, 0, len(items)), Lots: []Lot{}}
	rec, found, err := s.st().get(ctx, caller.TenantID, uid, perkID)
	if err != nil {
		return LedgerPage{}, fmt.Errorf("ledger of %s: %w", awardID, err)
	}
	if found {
		rec.reconcile()
		rec = rec.at(s.Clock.Now())
		lots := slices.Clone(rec.Lots)
		// sort.Slice rather than a generic sort: see take.
		sort.Slice(lots, func(i, j int) bool { return spendOrder(lots[i], lots[j]) < 0 })
		for _, l := range lots {
			out.Lots = append(out.Lots, Lot{LotID: l.ID, Points: l.Points, Remaining: l.Remaining, EarnedAt: l.EarnedAt, ExpiresAt: l.ExpiresAt})
		}
	}
	for _, it := range items {
		e, err := ledger.Decode(it)
		if err != nil {
			return LedgerPage{}, err
		}
		out.Items = append(out.Items, e)
	}
	nk, err := s.Cursor.Encode(caller.TenantID, scope, next)
	if err != nil {
		return LedgerPage{}, err
	}
	out.Page = web.Page{Limit: limit, Count: len(out.Items), StartKey: startKey, NextKey: nk}
	return out, nil
}

// handleLedger serves GET /users/{userId}/pointawards/{awardId}/ledger.
func (s *Service) handleLedger(r *http.Request, caller actor.Actor) (LedgerPage, error) {
	limit, start, err := web.Paging(r)
	if err != nil {
		return LedgerPage{}, err
	}
	return s.Ledger(r.Context(), caller, r.PathValue("userId"), r.PathValue("awardId"), limit, start)
}

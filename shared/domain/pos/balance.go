package pos

import (
	"context"
	"fmt"
	"net/http"

	"github.com/loyalty-platform/platform/shared/domain/ledger"
	"github.com/loyalty-platform/platform/shared/platform/actor"
	"github.com/loyalty-platform/platform/shared/platform/ddb"
	"github.com/loyalty-platform/platform/shared/platform/web"
)

// BalanceLedgerPage is the answer of GET /users/{userId}/balance/ledger.
type BalanceLedgerPage struct {
	Items []ledger.MoneyView `json:"items"`
	Page  web.Page           `json:"page"`
}

// BalanceLedger returns a page of the entries of a user's app balance,
// newest first (GET /users/{userId}/balance/ledger; the user or an admin):
// every credit, APP payment and APP refund, each with the balance it
// left. Another user's ledger, or an unknown user's, is 404; a deleted
// user's stays readable by an admin (their history is kept). A balance
// that never changed since the ledger began has no entries.
func (s *Service) BalanceLedger(ctx context.Context, caller actor.Actor, userID string, limit int, startKey string) (BalanceLedgerPage, error) {
	if err := caller.RequireUser(userID); err != nil {
		return BalanceLedgerPage{}, err
	}
	if _, err := s.Users.Kept(ctx, caller.TenantID, userID); err != nil {
		return BalanceLedgerPage{}, err
	}
	scope := "balance-ledger|" + userID
	start, err := s.Cursor.Decode(caller.TenantID, scope, startKey)
	if err != nil {
		return BalanceLedgerPage{}, err
	}
	items, next, err := ddb.QueryPage(ctx, s.DB, ledger.MoneyQuery(s.UsersTable, caller.TenantID, userID), start, limit, nil)
	if err != nil {
		return BalanceLedgerPage{}, fmt.Errorf("balance ledger of %s: %w", userID, err)
	}
	out := BalanceLedgerPage{Items: make([]ledger.MoneyView, 0, len(items))}
	for _, it := range items {
		e, err := ledger.DecodeMoney(it)
		if err != nil {
			return BalanceLedgerPage{}, fmt.Errorf("balance ledger of %s: %w", userID, err)
		}
		out.Items = append(out.Items, e.View())
	}
	nk, err := s.Cursor.Encode(caller.TenantID, scope, next)
	if err != nil {
		return BalanceLedgerPage{}, err
	}
	out.Page = web.Page{Limit: limit, Count: len(out.Items), StartKey: startKey, NextKey: nk}
	return out, nil
}

// handleBalanceLedger serves GET /users/{userId}/balance/ledger.
func (s *Service) handleBalanceLedger(r *http.Request, caller actor.Actor) (BalanceLedgerPage, error) {
	limit, start, err := web.Paging(r)
	if err != nil {
		return BalanceLedgerPage{}, err
	}
	return s.BalanceLedger(r.Context(), caller, r.PathValue("userId"), limit, start)
}

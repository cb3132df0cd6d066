package pos

import (
	"context"
	"fmt"

	"github.com/loyalty-platform/platform/shared/domain/award"
	"github.com/loyalty-platform/platform/shared/domain/ledger"
	"github.com/loyalty-platform/platform/shared/domain/money"
	"github.com/loyalty-platform/platform/shared/domain/profile"
	"github.com/loyalty-platform/platform/shared/platform/actor"
	"github.com/loyalty-platform/platform/shared/platform/apierr"
	"github.com/loyalty-platform/platform/shared/platform/ddb"
	"github.com/loyalty-platform/platform/shared/platform/metadata"
	"github.com/loyalty-platform/platform/shared/platform/web"
)

// Credit types.
const (
	CreditBalance = "BALANCE"
	CreditPoints  = "POINTS"
)

// SourceCredit is the source of the grants a POINTS credit makes.
const SourceCredit = "CREDIT"

// CreditInput is the body of POST /users/{userId}/credits.
type CreditInput struct {
	Type string `json:"type"`
	// Amount is money for BALANCE (negative takes it off, never below
	// zero; at most the tenant currency's decimal places) and whole
	// points (1 or more) for POINTS.
	Amount *money.Amount `json:"amount"`
	// PerkID is the perk whose award a POINTS credit grants.
	PerkID string `json:"perkId,omitempty"`
	Reason string `json:"reason,omitempty"`
	// Metadata is the POS's own fields (see shared/platform/metadata):
	// kept on the credit's action and, for BALANCE, on its ledger entry.
	Metadata metadata.Metadata `json:"metadata,omitempty"`
}

// CreditResult is the answer of a credit: the new balance (BALANCE) or the
// award after the grant (POINTS).
type CreditResult struct {
	Type    string        `json:"type"`
	Balance *money.Amount `json:"balance,omitempty"`
	Award   *award.Award  `json:"award,omitempty"`
	// Metadata is the credit's metadata as stored (absent when none).
	Metadata metadata.Metadata `json:"metadata,omitempty"`
}

// Credit credits a user arbitrarily (POST /users/{userId}/credits, admin):
// BALANCE changes the app balance by amount (one update conditional on the
// balance read, with its BALANCE_CREDITED action, so the answer is the
// balance this credit left; it never goes below zero: 422
// INSUFFICIENT_BALANCE); POINTS grants amount points of perkId as a grant
// does (AWARD_GRANTED, source CREDIT, with the reason).
func (s *Service) Credit(ctx context.Context, caller actor.Actor, userID string, in CreditInput) (CreditResult, error) {
	if err := caller.RequireAdmin(); err != nil {
		return CreditResult{}, err
	}
	if !web.ValidID(userID) {
		return CreditResult{}, profile.ErrNotFound
	}
	if in.Amount == nil {
		return CreditResult{}, apierr.Invalid("amount", "is required")
	}
	if !textOK(in.Reason, maxText) {
		return CreditResult{}, apierr.Invalid("reason", "must be at most %d characters", maxText)
	}
	m, err := in.Metadata.Clean()
	if err != nil {
		return CreditResult{}, err
	}
	in.Metadata = m
	switch in.Type {
	case CreditBalance:
		if in.PerkID != "" {
			return CreditResult{}, apierr.Invalid("perkId", "is only for POINTS credits")
		}
		cur, err := s.currency(ctx, caller)
		if err != nil {
			return CreditResult{}, err
		}
		amt, err := cur.Amount("amount", *in.Amount)
		if err != nil {
			return CreditResult{}, err
		}
		if amt.IsZero() || amt.Cmp(MaxAmount) > 0 || amt.Cmp(MaxAmount.Neg()) < 0 {
			return CreditResult{}, apierr.Invalid("amount", "must be a non-zero amount from -%s to %s", MaxAmount, MaxAmount)
		}
		return s.creditBalance(ctx, caller, userID, amt, cur, in.Reason, in.Metadata)
	case CreditPoints:
		if in.PerkID == "" {
			return CreditResult{}, apierr.Invalid("perkId", "is required for POINTS credits")
		}
		amt, whole := in.Amount.Int()
		if !whole || amt < 1 || amt > 1_000_000_000 {
			return CreditResult{}, apierr.Invalid("amount", "must be whole points from 1 to 1000000000")
		}
		meta := map[string]any{}
		if in.Reason != "" {
			meta["reason"] = in.Reason
		}
		if in.Metadata != nil {
			meta[metadata.Field] = in.Metadata
		}
		a, err := s.Awards.Grant(ctx, caller, in.PerkID, award.GrantInput{UserID: userID, Points: ptr(int(amt))}, award.GrantOptions{Source: SourceCredit, Meta: meta})
		if err != nil {
			return CreditResult{}, err
		}
		return CreditResult{Type: CreditPoints, Award: &a, Metadata: in.Metadata}, nil
	case "":
		return CreditResult{}, apierr.Invalid("type", "is required: BALANCE or POINTS")
	}
	return CreditResult{}, apierr.Invalid("type", "must be BALANCE or POINTS")
}

func ptr[T any](v T) *T { return &v }

func (s *Service) creditBalance(ctx context.Context, caller actor.Actor, userID string, amt money.Amount, cur money.Currency, reason string, md metadata.Metadata) (CreditResult, error) {
	for attempt := 0; attempt < maxAttempts; attempt++ {
		if attempt > 0 {
			backoff(ctx, attempt)
		}
		res, retry, err := s.tryCreditBalance(ctx, caller, userID, amt, cur, reason, md)
		if err != nil || !retry {
			return res, err
		}
	}
	return CreditResult{}, ErrConcurrent
}

// tryCreditBalance reads the balance and sets it to the balance plus amt
// with its CREDIT ledger entry and its action, conditional on the balance
// and its entry count being unchanged (retry true: it changed), so the
// answer is the balance this credit left. The sum is exact (integers of
// minor units); a balance over MaxTotal is refused.
func (s *Service) tryCreditBalance(ctx context.Context, caller actor.Actor, userID string, amt money.Amount, cur money.Currency, reason string, md metadata.Metadata) (CreditResult, bool, error) {
	prof, err := s.Users.Get(ctx, caller.TenantID, userID)
	if err != nil {
		return CreditResult{}, false, err
	}
	title, err := s.title(ctx, caller)
	if err != nil {
		return CreditResult{}, false, err
	}
	next, err := addTotal("amount", prof.Balance, amt)
	if err != nil {
		return CreditResult{}, false, err
	}
	if next.Sign() < 0 {
		return CreditResult{}, false, ErrInsufficientBalance
	}
	now := s.Clock.Now()
	tx := &ddb.Tx{}
	meta := map[string]any{"amount": amt.Number(), "balance": next.Number()}
	if reason != "" {
		meta["reason"] = reason
	}
	if md != nil {
		meta[metadata.Field] = md
	}
	a := s.act(caller.TenantID, title, prof, nil, ActionBalanceCredited, now, meta)
	w, err := ledger.AddMoney(tx, s.UsersTable, ledger.BalanceOf(prof), ledger.MoneyChange{
		TenantID: caller.TenantID, UserID: userID, Type: ledger.MoneyCredit, Amount: amt, Currency: cur,
		Cause: ledger.MoneyCause{ActionID: a.ID, Reason: reason, Metadata: md},
	}, now)
	if err != nil {
		return CreditResult{}, false, fmt.Errorf("credit %s: %w", userID, err)
	}
	balanceAfter(a.Metadata, w.Entry)
	if a, err = s.Actions.Record(tx, a); err != nil {
		return CreditResult{}, false, err
	}
	err = tx.Run(ctx, s.DB)
	switch {
	case w.Raced(err), ddb.IsTransactionConflict(err):
		return CreditResult{}, true, nil // the balance changed or the user is gone: read again
	case err != nil:
		return CreditResult{}, false, fmt.Errorf("credit %s: %w", userID, err)
	}
	s.react(ctx, a)
	return CreditResult{Type: CreditBalance, Balance: &w.Entry.BalanceAfter, Metadata: md}, false, nil
}

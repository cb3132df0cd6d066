package award

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/loyalty-platform/platform/shared/platform/ddb"
)

// materialiseChunk is the most awards one Materialise transaction stores:
// four items each (the award, its INITIAL entry, its perk's liability
// shard, the membership check of a CLUB or LEVEL perk) and the user's
// check stay below DynamoDB's 100 items.
const materialiseChunk = 20

// Materialise stores the virtual awards of subs (global, CLUB and LEVEL
// perks with initial points, held before they are stored) that are not
// stored yet: each award with its INITIAL EARN entry, as its first change
// would store it, in transactions of their own (materialiseChunk awards
// each, with the user's live check and, for a perk held through a
// segment, the membership's), conditional on each award's absence.
// Nothing else changes: an award already stored, or of a perk that is not
// virtual or has no initial points, is left alone, so Materialise is safe
// to repeat, and a later change of such an award applies to the stored
// one with fewer items in its transaction (an order completion with many
// redemptions of never-used awards: README, "Transactions and DynamoDB's
// 100-item limit"). An award stored meanwhile by another request is read
// again and left alone. The subjects must be of one user. A user who is
// not a member of the segment of a CLUB or LEVEL perk is ErrNotHeld, a
// deleted user ErrUserNotFound, as a redemption's (RedeemWrite.Failure).
// It returns how many awards it stored.
func (s *Service) Materialise(ctx context.Context, subs []Subject, now time.Time) (int, error) {
	stored := 0
	for start := 0; start < len(subs); start += materialiseChunk {
		chunk := subs[start:min(start+materialiseChunk, len(subs))]
		var (
			n     int
			retry bool
			err   error
		)
		for attempt := 0; attempt < 5; attempt++ {
			if n, retry, err = s.materialise(ctx, chunk, now); !retry {
				break
			}
		}
		if err != nil {
			return stored, err
		}
		stored += n
	}
	return stored, nil
}

// materialise runs one Materialise transaction for subs and returns how
// many awards it stored; retry is set when an award was stored meanwhile
// (read again).
func (s *Service) materialise(ctx context.Context, subs []Subject, now time.Time) (stored int, retry bool, err error) {
	tx := &ddb.Tx{}
	w := RedeemWrite{AwardAt: -1, UserAt: -1, MemberAt: -1}
	var awardsAt, membersAt []int
	seen := map[string]bool{}
	for _, sub := range subs {
		p := sub.Perk
		virtual := p.IsGlobal || p.HeldThroughSegment()
		if !virtual || p.Points.InitialOr() <= 0 || seen[p.ID] {
			continue
		}
		seen[p.ID] = true
		// A grant of nothing to a virtual award not stored yet stores it
		// with its initial points and writes no entry of its own; on a
		// stored award it would be a change, so a stored one is skipped.
		own := &ddb.Tx{}
		o := op{kind: opGrant, virtual: true, initial: p.Points.InitialOr(), max: p.Points.Max}
		awardAt, _, pend, err := s.change(ctx, own, sub, o, now)
		if err != nil {
			return 0, false, fmt.Errorf("store award %s: %w", ID(sub.Person.ID, p.ID), err)
		}
		if pend.found {
			continue
		}
		for i, it := range own.Items() {
			at := tx.Add("award", it)
			if i == awardAt {
				awardsAt = append(awardsAt, at)
			}
		}
		if p.HeldThroughSegment() {
			membersAt = append(membersAt, tx.Add("membership", s.Memberships.MemberCheck(sub.TenantID, p.SegmentID, sub.Person.ID, now)))
		}
		if w.UserAt < 0 {
			w.UserAt = tx.Add("user", s.Users.LiveCheck(sub.TenantID, sub.Person.ID))
		}
	}
	if tx.Len() == 0 {
		return 0, false, nil
	}
	err = tx.Run(ctx, s.DB)
	if err == nil {
		return len(awardsAt), false, nil
	}
	if ddb.IsTransactionConflict(err) {
		return 0, true, err
	}
	for _, at := range awardsAt {
		if ddb.Failed(err, at) {
			return 0, true, err // stored meanwhile: read again
		}
	}
	for _, at := range membersAt {
		if ddb.Failed(err, at) {
			w.MemberAt = at
		}
	}
	switch out := w.Failure(err); {
	case errors.Is(out, ErrChanged):
		return 0, true, out // a ledger entry written meanwhile: read again
	case !errors.Is(out, err):
		return 0, false, out
	}
	return 0, false, fmt.Errorf("store %d awards: %w", len(awardsAt), err)
}

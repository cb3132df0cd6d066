// Package orders builds the pay-at-POS domain (shared/domain/pos) on the
// loyalty domains, for the pos function, which serves it, and the rules
// function, which records on an order the points the rules grant on it.
package orders

import (
	"context"

	"github.com/loyalty-platform/platform/shared/domain/action"
	"github.com/loyalty-platform/platform/shared/domain/checkin"
	"github.com/loyalty-platform/platform/shared/domain/pos"
	"github.com/loyalty-platform/platform/shared/domain/rule"
	"github.com/loyalty-platform/platform/shared/platform/ddb"
	"github.com/loyalty-platform/platform/shared/wire"
	"github.com/loyalty-platform/platform/shared/wire/parts/rewards"
)

// New builds the pay-at-POS domain on the loyalty domains r (redemptions,
// credits, the rules an order triggers) and check-ins (a purchase checks
// out), and registers on r's rules the reaction that records on an order
// the points they grant on it (in the grant's transaction).
func New(b *wire.Base, r *rewards.Rewards, checkins *checkin.Service, actions *action.Recorder) *pos.Service {
	tables := b.Config.Tables
	s := &pos.Service{
		DB: b.DB, Table: tables.Pos, UsersTable: tables.Users, Clock: b.Clock, Cursor: b.Cursor, Log: b.Log,
		Users: b.Profiles(), Places: r.Awards.Places, Tenants: rewards.TitlesOf(b), Awards: r.Awards,
		Checkins: checkins, Actions: actions,
	}
	r.Rules.OnGrant.Add(func(ctx context.Context, tx *ddb.Tx, g rule.Granted) error {
		return s.AddEarned(ctx, tx, g.TenantID, g.UserID, g.OrderID, g.AwardID, g.Points)
	})
	return s
}

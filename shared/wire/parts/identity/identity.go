// Package identity builds the users domain's core and messaging for the
// three functions that serve it (shared/wire/accounts, users and avatars),
// each of which builds its part of the domain on the core.
package identity

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/loyalty-platform/platform/shared/aws/awsnotify"
	"github.com/loyalty-platform/platform/shared/aws/sesmail"
	"github.com/loyalty-platform/platform/shared/aws/snsapi"
	"github.com/loyalty-platform/platform/shared/domain/award"
	"github.com/loyalty-platform/platform/shared/domain/checkin"
	"github.com/loyalty-platform/platform/shared/domain/user"
	"github.com/loyalty-platform/platform/shared/platform/notify"
	"github.com/loyalty-platform/platform/shared/wire"
	"github.com/loyalty-platform/platform/shared/wire/parts/rewards"
)

// Messaging returns the notifier and the push registrar the configuration
// names: SNS and SES with NOTIFIER=aws, else the outbox that only logs.
func Messaging(b *wire.Base) (notify.Notifier, notify.Pusher, error) {
	if b.Notifier != nil && b.Pusher != nil {
		return b.Notifier, b.Pusher, nil
	}
	switch b.Config.Notifier {
	case "aws":
		n := &awsnotify.AWS{Push: push(b), SES: sesmail.New(b.AWS), From: b.Config.SenderEmail}
		return n, n, nil
	case "", "log":
		o := outbox(b)
		return o, o, nil
	}
	return nil, nil, errNotifier(b)
}

// Pusher returns the push registrar alone (SNS with NOTIFIER=aws, else the
// outbox that only logs), for the functions that store or remove device
// tokens but send no codes.
func Pusher(b *wire.Base) (notify.Pusher, error) {
	if b.Pusher != nil {
		return b.Pusher, nil
	}
	switch b.Config.Notifier {
	case "aws":
		return push(b), nil
	case "", "log":
		return outbox(b), nil
	}
	return nil, errNotifier(b)
}

func push(b *wire.Base) *awsnotify.Push {
	return &awsnotify.Push{SNS: snsapi.New(b.AWS), PlatformApps: map[string]string{
		"IOS": os.Getenv("SNS_APNS_APP_ARN"), "ANDROID": os.Getenv("SNS_GCM_APP_ARN"),
	}}
}

func outbox(b *wire.Base) *notify.Outbox {
	if os.Getenv("AWS_LAMBDA_FUNCTION_NAME") != "" && !wire.RunningLocally() {
		b.Log.Warn("NOTIFIER is not aws: codes and messages are only logged, never sent")
	}
	return &notify.Outbox{Log: b.Log}
}

func errNotifier(b *wire.Base) error {
	return fmt.Errorf("NOTIFIER=%q: want aws, or log (messages only logged)", b.Config.Notifier)
}

// Users builds the core of the users domain that each of its functions
// builds its part on (shared/domain/user): the store, the clock and the
// media URL; includes supply the include options other domains own (the
// users function's; nil for the others, which never read them).
func Users(b *wire.Base, includes user.Includes) *user.Service {
	return user.New(b.DB, b.Config.Tables, b.Clock, b.Config.MediaURL, includes)
}

// Includes are the parts of a user other domains own, which the users
// function's include options read: include=points, awards and
// include=segmentIds,segments (the loyalty domains) and include=checkin
// (check-ins).
func Includes(r *rewards.Rewards, checkins *checkin.Service) user.Includes {
	return includes{r: r, checkins: checkins}
}

// includes are the parts of a user the loyalty domains and check-ins own.
type includes struct {
	r        *rewards.Rewards
	checkins *checkin.Service
}

// Points implements user.Includes.
func (in includes) Points(ctx context.Context, tenantID, userID string) (int, error) {
	return in.r.Awards.Total(ctx, tenantID, userID)
}

// SegmentIDs implements user.Includes.
func (in includes) SegmentIDs(ctx context.Context, tenantID, userID string) ([]string, error) {
	return in.r.Audiences.SegmentsOf(ctx, tenantID, userID)
}

// Segments implements user.Includes.
func (in includes) Segments(ctx context.Context, tenantID, userID string) ([]user.SegmentRef, error) {
	refs, err := in.r.Audiences.UserSegments(ctx, tenantID, userID)
	out := make([]user.SegmentRef, 0, len(refs))
	for _, ref := range refs {
		out = append(out, user.SegmentRef{ID: ref.ID, Title: ref.Title, Included: ref.Included})
	}
	return out, err
}

// Awards implements user.Includes: the awards the user's award list shows
// (unvisualised included, the top tier only), summarised.
func (in includes) Awards(ctx context.Context, tenantID, userID string) ([]user.AwardSummary, error) {
	held, err := in.r.Awards.Holdings(ctx, tenantID, userID, award.Filter{IncludeUnvisualised: true})
	if err != nil {
		return nil, err
	}
	out := make([]user.AwardSummary, 0, len(held))
	for _, a := range held {
		s := user.AwardSummary{ID: a.ID, PerkID: a.PerkID, Title: a.Title, Template: a.Template, PointsAvailable: a.Points.Available}
		if len(a.Points.Expiring) > 0 {
			s.NextExpiry = &user.Expiry{Points: a.Points.Expiring[0].Points, ExpiresAt: a.Points.Expiring[0].ExpiresAt}
		}
		out = append(out, s)
	}
	return out, nil
}

// CurrentCheckin implements user.Includes: nil, nil when the user is not
// checked in.
func (in includes) CurrentCheckin(ctx context.Context, tenantID, userID string) (any, error) {
	c, err := in.checkins.Current(ctx, tenantID, userID)
	if errors.Is(err, checkin.ErrNotCheckedIn) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return c, nil
}

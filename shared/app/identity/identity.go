// Package identity builds the users domain for the users function (and
// the whole platform): users, sessions, guests, credentials, addresses and
// avatars, with the messaging, single sign-on and geocoding they need, and
// the parts of a user other domains own (points, segments, the current
// check-in, what a deletion removes). It is the only builder that links
// sign-up, login, SSO and SMS and e-mail sending.
package identity

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/aws/aws-sdk-go-v2/service/sesv2"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	"github.com/loyalty-platform/platform/shared/action"
	"github.com/loyalty-platform/platform/shared/app"
	"github.com/loyalty-platform/platform/shared/app/rewards"
	"github.com/loyalty-platform/platform/shared/blob"
	"github.com/loyalty-platform/platform/shared/checkin"
	"github.com/loyalty-platform/platform/shared/geo"
	"github.com/loyalty-platform/platform/shared/notify"
	"github.com/loyalty-platform/platform/shared/sso"
	"github.com/loyalty-platform/platform/shared/user"
)

// Messaging returns the notifier and the push registrar the configuration
// names: SNS and SES with NOTIFIER=aws, else the outbox that only logs.
func Messaging(b *app.Base) (notify.Notifier, notify.Pusher, error) {
	switch b.Config.Notifier {
	case "aws":
		n := &notify.AWS{SNS: sns.NewFromConfig(b.AWS), SES: sesv2.NewFromConfig(b.AWS), From: b.Config.SenderEmail, PlatformApps: map[string]string{
			"IOS": os.Getenv("SNS_APNS_APP_ARN"), "ANDROID": os.Getenv("SNS_GCM_APP_ARN"),
		}}
		return n, n, nil
	case "", "log":
		if os.Getenv("AWS_LAMBDA_FUNCTION_NAME") != "" && !app.RunningLocally() {
			b.Log.Warn("NOTIFIER is not aws: codes and messages are only logged, never sent")
		}
		o := &notify.Outbox{Log: b.Log}
		return o, o, nil
	}
	return nil, nil, fmt.Errorf("NOTIFIER=%q: want aws, or log (messages only logged)", b.Config.Notifier)
}

// Users builds the users domain; media stores the profile photos.
func Users(b *app.Base, n notify.Notifier, p notify.Pusher, media blob.API) *user.Service {
	return &user.Service{
		DB: b.DB, Tables: b.Config.Tables, Tenants: b.Tenants(), Clock: b.Clock, Notifier: n, Pusher: p, Cursor: b.Cursor,
		S3: media, MediaBucket: b.Config.Buckets.Media, MediaURL: b.Config.MediaURL,
		SSO: sso.NewVerifier(sso.FromEnv(), b.Clock), Geocoder: geo.FromEnv(b.AWS),
	}
}

// Attach gives the users domain the parts of a user other domains own:
// include=points and include=segmentIds,segments (the loyalty domains),
// include=checkin (check-ins), what deleting a user removes (their
// check-in, their name in the actions log), and the recorder of
// USER_CREATED and USER_ACTIVATED.
func Attach(u *user.Service, r *rewards.Rewards, checkins *checkin.Service, actions *action.Recorder) {
	u.Actions = actions
	u.Extras.Points = r.Awards.Total
	u.Extras.SegmentIDs = r.Audiences.SegmentsOf
	u.Extras.Segments = func(ctx context.Context, tenantID, userID string) ([]user.SegmentRef, error) {
		refs, err := r.Audiences.UserSegments(ctx, tenantID, userID)
		out := make([]user.SegmentRef, 0, len(refs))
		for _, ref := range refs {
			out = append(out, user.SegmentRef{ID: ref.ID, Title: ref.Title, Included: ref.Included})
		}
		return out, err
	}
	u.Extras.CurrentCheckin = func(ctx context.Context, tenantID, userID string) (any, error) {
		// The users domain's contract: nil, nil when not checked in.
		c, err := checkins.Current(ctx, tenantID, userID)
		if errors.Is(err, checkin.ErrNotCheckedIn) {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		return c, nil
	}
	u.Extras.OnDelete = append(u.Extras.OnDelete, checkins.Remove, actions.RedactUser)
}

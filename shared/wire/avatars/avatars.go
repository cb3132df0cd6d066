// Package avatars wires the avatars function: the profile photo in the
// media bucket (upload, removal) and deleting a user, which removes the
// photo, the user's push endpoints, check-in and name in the actions log
// with the rest of the user's data (shared/domain/avatar).
package avatars

import (
	"context"

	"github.com/loyalty-platform/platform/shared/aws/blob"
	"github.com/loyalty-platform/platform/shared/domain/avatar"
	"github.com/loyalty-platform/platform/shared/domain/user"
	"github.com/loyalty-platform/platform/shared/platform/web"
	"github.com/loyalty-platform/platform/shared/wire"
	"github.com/loyalty-platform/platform/shared/wire/parts/identity"
	"github.com/loyalty-platform/platform/shared/wire/parts/places"
)

// Function is what the avatars function runs.
type Function struct {
	Avatars *avatar.Service
}

// New builds the avatars function on b, storing photos in the media
// bucket through s3.
func New(b *wire.Base, s3 blob.API) (*Function, error) {
	p, err := identity.Pusher(b)
	if err != nil {
		return nil, err
	}
	a := avatar.New(identity.Users(b, nil), blob.Photos{S3: s3, Bucket: b.Config.Buckets.Media}, p)
	removeCheckin, redact := places.CheckinRemover(b), b.Actions()
	a.OnDeleted.Add(
		func(ctx context.Context, d user.Deleted) error { return removeCheckin(ctx, d.TenantID, d.UserID) },
		func(ctx context.Context, d user.Deleted) error { return redact.RedactUser(ctx, d.TenantID, d.UserID) },
	)
	return &Function{Avatars: a}, nil
}

// Routes are the function's routes.
func (f *Function) Routes() []web.Route { return f.Avatars.Routes() }

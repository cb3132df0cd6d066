// Package avatar is the avatars function's part of the users domain: what
// a user keeps in the media bucket, the profile photo (upload, removal),
// and deleting a user, which removes the photo with the rest of the
// user's data. It is built on the domain's core (shared/domain/user):
// the user record, its store and the user's API view.
package avatar

import (
	"context"

	"github.com/loyalty-platform/platform/shared/domain/user"
	"github.com/loyalty-platform/platform/shared/platform/hook"
	"github.com/loyalty-platform/platform/shared/platform/notify"
	"github.com/loyalty-platform/platform/shared/platform/web"
)

// Photos stores profile photos by key: the media bucket in S3
// (blob.Photos), so that this package links no S3 client.
type Photos interface {
	// PutJPEG stores a JPEG image under key, replacing any.
	PutJPEG(ctx context.Context, key string, jpeg []byte) error
	// Delete removes the object at key; a missing object is no error.
	Delete(ctx context.Context, key string) error
}

// Service serves the profile photos and deletes users.
type Service struct {
	users  *user.Service
	photos Photos
	pusher notify.Pusher
	// OnDeleted runs once a user is deleted (see user.Deleted): the
	// function's wiring adds the other domains' reactions.
	OnDeleted hook.After[user.Deleted]
}

// New returns the service on the users domain's core: photos stores the
// profile photos, pusher removes a deleted user's push endpoints.
func New(users *user.Service, photos Photos, pusher notify.Pusher) *Service {
	return &Service{users: users, photos: photos, pusher: pusher}
}

// Routes are the routes that write or remove objects in the media bucket
// (the avatars function): the profile photo, and deleting a user, which
// removes it.
func (s *Service) Routes() []web.Route {
	return []web.Route{
		{Method: "PUT", Path: "/users/{userId}/avatar", Handler: s.handleSetAvatar},
		{Method: "DELETE", Path: "/users/{userId}/avatar", Handler: s.handleDeleteAvatar},
		{Method: "DELETE", Path: "/users/{userId}", Handler: s.handleDelete},
	}
}

func (s *Service) st() *user.Store { return s.users.Store() }

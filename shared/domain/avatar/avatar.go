package avatar

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/loyalty-platform/platform/shared/domain/user"
	"github.com/loyalty-platform/platform/shared/platform/apierr"
	"github.com/loyalty-platform/platform/shared/platform/web"
)

// MaxAvatarBytes is the largest profile photo accepted: 4 MiB, because API
// Gateway hands a binary body to Lambda base64-encoded and a Lambda request
// is at most 6 MB (the 5 MB would not fit).
const MaxAvatarBytes = 4 << 20

// SetAvatar stores a JPEG profile photo (PUT /users/{userId}/avatar). The
// bytes must decode as a JPEG image; the content type alone is not trusted.
func (s *Service) SetAvatar(ctx context.Context, caller web.Caller, userID string, photo []byte) (user.User, error) {
	if err := caller.RequireUser(userID); err != nil {
		return user.User{}, err
	}
	if len(photo) == 0 {
		return user.User{}, apierr.Invalid("body", "a JPEG image is required")
	}
	if !bytes.HasPrefix(photo, []byte{0xFF, 0xD8, 0xFF}) {
		return user.User{}, apierr.New(apierr.UnsupportedMedia, "the photo must be a JPEG image")
	}
	if _, _, ok := jpegSize(photo); !ok {
		return user.User{}, apierr.New(apierr.UnsupportedMedia, "the photo is not a readable JPEG image")
	}
	r, err := s.st().GetUser(ctx, caller.TenantID, userID, s.users.Now())
	if err != nil {
		return user.User{}, err
	}
	if r.Deleted {
		return user.User{}, fmt.Errorf("set avatar: %w", user.ErrNotFound)
	}
	err = s.photos.PutJPEG(ctx, user.AvatarKey(userID), photo)
	if err != nil {
		return user.User{}, fmt.Errorf("store avatar of %s: %w", userID, err)
	}
	if err := s.users.UpdateUser(ctx, r, expression.Set(expression.Name("hasProfilePhoto"), expression.Value(true)),
		expression.Name("deleted").Equal(expression.Value(false))); err != nil {
		// The user was deleted (or changed) meanwhile: the photo must not
		// outlive the redaction. Best effort; the error answered is the
		// update's.
		if derr := s.photos.Delete(ctx, user.AvatarKey(userID)); derr != nil {
			web.Logger(ctx).Warn("remove orphaned avatar failed", "userId", userID, "error", derr.Error())
		}
		if errors.Is(err, user.ErrConcurrentUpdate) {
			if cur, gerr := s.st().GetUser(ctx, caller.TenantID, userID, s.users.Now()); gerr != nil || cur.Deleted {
				return user.User{}, fmt.Errorf("set avatar: %w", user.ErrNotFound)
			}
		}
		return user.User{}, err
	}
	return s.users.Get(ctx, caller, userID, nil)
}

// DeleteAvatar removes a user's profile photo (DELETE
// /users/{userId}/avatar).
func (s *Service) DeleteAvatar(ctx context.Context, caller web.Caller, userID string) error {
	if err := caller.RequireUser(userID); err != nil {
		return err
	}
	r, err := s.st().GetUser(ctx, caller.TenantID, userID, s.users.Now())
	if err != nil {
		return err
	}
	if r.Deleted {
		return fmt.Errorf("delete avatar: %w", user.ErrNotFound)
	}
	if err := s.photos.Delete(ctx, user.AvatarKey(userID)); err != nil {
		return fmt.Errorf("delete avatar of %s: %w", userID, err)
	}
	if !r.HasProfilePhoto {
		return nil
	}
	return s.users.UpdateUser(ctx, r, expression.Set(expression.Name("hasProfilePhoto"), expression.Value(false)),
		expression.Name("pk").AttributeExists())
}

// handleSetAvatar serves PUT /users/{userId}/avatar (body: image/jpeg, at
// most 4 MiB).
func (s *Service) handleSetAvatar(w http.ResponseWriter, r *http.Request) {
	caller := web.CallerOf(r)
	userID := r.PathValue("userId")
	if err := caller.RequireUser(userID); err != nil {
		web.Error(w, r, err)
		return
	}
	ct := strings.ToLower(strings.TrimSpace(strings.Split(r.Header.Get("Content-Type"), ";")[0]))
	if ct != "image/jpeg" && ct != "image/jpg" {
		web.Error(w, r, apierr.New(apierr.UnsupportedMedia, "Content-Type must be image/jpeg"))
		return
	}
	photo, err := web.ReadBody(r, MaxAvatarBytes)
	if err != nil {
		web.Error(w, r, err)
		return
	}
	u, err := s.SetAvatar(r.Context(), caller, userID, photo)
	if err != nil {
		web.Error(w, r, err)
		return
	}
	web.JSON(w, http.StatusOK, u)
}

// handleDeleteAvatar serves DELETE /users/{userId}/avatar.
func (s *Service) handleDeleteAvatar(w http.ResponseWriter, r *http.Request) {
	if err := s.DeleteAvatar(r.Context(), web.CallerOf(r), r.PathValue("userId")); err != nil {
		web.Error(w, r, err)
		return
	}
	web.Empty(w, http.StatusNoContent)
}

package avatar

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/loyalty-platform/platform/shared/domain/user"
	"github.com/loyalty-platform/platform/shared/platform/ddb"
	"github.com/loyalty-platform/platform/shared/platform/web"
)

// Delete redacts a user (DELETE /users/{userId}): names, birthdate, gender,
// contacts, extensions, card, tip, favourites, device tokens, external ids,
// password and codes are erased, credentials are released so their
// identifiers can register again, addresses and the profile photo are
// removed and every session ends. The record stays with `deleted: true`
// so history (awards, orders, actions) keeps a consistent user id. Deleting
// again repeats the clean-up and succeeds. The app balance's ledger
// entries are kept (an admin reads them: GET /users/{userId}/balance/ledger).
func (s *Service) Delete(ctx context.Context, caller web.Caller, userID string) error {
	if err := caller.RequireUser(userID); err != nil {
		return err
	}
	now := s.users.Now()
	st := s.st()
	r, err := st.GetUser(ctx, caller.TenantID, userID, now)
	if err != nil {
		return err
	}
	// 0. The device binding (one account per device) is released first, so a
	// retry after a failure still knows it.
	if r.DeviceKey != "" {
		_, err := s.st().DB.DeleteItem(ctx, &dynamodb.DeleteItemInput{
			TableName: aws.String(st.Users), Key: user.Key(r.DeviceKey, user.SKDevice),
			ConditionExpression:       aws.String("userId = :uid"),
			ExpressionAttributeValues: map[string]types.AttributeValue{":uid": &types.AttributeValueMemberS{Value: userID}},
		})
		if err != nil && !ddb.IsConditionFailed(err) {
			return fmt.Errorf("release device of %s: %w", userID, err)
		}
	}
	for _, endpoint := range r.PushEndpoints {
		if err := s.pusher.UnregisterDevice(ctx, endpoint); err != nil {
			web.Logger(ctx).Warn("remove push endpoint failed", "error", err.Error())
		}
	}
	// 1. Redact the record itself, atomically.
	upd := expression.Set(expression.Name("deleted"), expression.Value(true)).
		Set(expression.Name("firstName"), expression.Value("")).
		Set(expression.Name("lastName"), expression.Value("")).
		Set(expression.Name("fullName"), expression.Value("")).
		Set(expression.Name("hasProfilePhoto"), expression.Value(false)).
		Set(expression.Name("hasPaymentCard"), expression.Value(false)).
		Set(expression.Name("subscribed"), expression.Value(false)).
		Set(expression.Name("hasAgreedToShareData"), expression.Value(false)).
		Set(expression.Name("hasAgreedToReceiveMarketing"), expression.Value(false))
	for _, name := range []string{"birthdate", "gender", "contacts", "extended", "card", "defaultTip", "favouriteLocations",
		"favouriteProducts", "pushEndpoints", "externalPosId", "externalLoyaltyId", "passwordHash", "activationCode",
		"resetCode", "resetExpiresAt", "nameWords", "deviceKey"} {
		upd = upd.Remove(expression.Name(name))
	}
	upd = upd.Add(expression.Name("sessionEpoch"), expression.Value(1)) // voids logins in flight (account's putSessionAtEpoch)
	if err := s.users.UpdateUser(ctx, r, upd, expression.Name("pk").AttributeExists()); err != nil {
		return fmt.Errorf("delete user %s: %w", userID, err)
	}
	// 2. Release credentials, drop name entries and addresses. Each delete
	// is idempotent, so a retry after a failure finishes the job.
	items, err := st.UserItems(ctx, r.PK)
	if err != nil {
		return err
	}
	for _, it := range items {
		skv, ok := it["sk"].(*types.AttributeValueMemberS)
		if !ok || skv.Value == user.SKProfile {
			continue
		}
		sk := skv.Value
		var batch []types.TransactWriteItem
		batch = append(batch, types.TransactWriteItem{Delete: &types.Delete{TableName: aws.String(st.Users), Key: user.Key(r.PK, sk)}})
		p, okP := it["provider"].(*types.AttributeValueMemberS)
		ident, okI := it["identifier"].(*types.AttributeValueMemberS)
		if okP && okI && strings.HasPrefix(sk, "CRED#") {
			batch = append(batch, types.TransactWriteItem{Delete: &types.Delete{
				TableName: aws.String(st.Users), Key: user.Key(user.CredIndexPK(r.TenantID, p.Value, ident.Value), user.SKCredID),
				ConditionExpression:       aws.String("attribute_not_exists(pk) OR userId = :uid"),
				ExpressionAttributeValues: map[string]types.AttributeValue{":uid": &types.AttributeValueMemberS{Value: userID}},
			}})
		}
		if err := st.Transact(ctx, batch); err != nil && len(ddb.FailedConditions(err)) == 0 {
			return fmt.Errorf("delete user %s: %w", userID, err)
		}
	}
	// 3. The profile photo and the sessions.
	if err := s.photos.Delete(ctx, user.AvatarKey(userID)); err != nil {
		return fmt.Errorf("delete avatar of %s: %w", userID, err)
	}
	if _, err := st.DeleteSessions(ctx, caller.TenantID, userID); err != nil {
		return err
	}
	if err := s.OnDeleted.Run(ctx, user.Deleted{TenantID: caller.TenantID, UserID: userID}); err != nil {
		return fmt.Errorf("delete user %s: %w", userID, err)
	}
	return nil
}

// handleDelete serves DELETE /users/{userId}.
func (s *Service) handleDelete(w http.ResponseWriter, r *http.Request) {
	if err := s.Delete(r.Context(), web.CallerOf(r), r.PathValue("userId")); err != nil {
		web.Error(w, r, err)
		return
	}
	web.Empty(w, http.StatusNoContent)
}

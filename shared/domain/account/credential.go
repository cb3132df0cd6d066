package account

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/loyalty-platform/platform/shared/domain/tenant"
	"github.com/loyalty-platform/platform/shared/domain/user"
	"github.com/loyalty-platform/platform/shared/platform/actor"
	"github.com/loyalty-platform/platform/shared/platform/apierr"
	"github.com/loyalty-platform/platform/shared/platform/clock"
	"github.com/loyalty-platform/platform/shared/platform/ddb"
	"github.com/loyalty-platform/platform/shared/platform/notify"
	"github.com/loyalty-platform/platform/shared/platform/web"
)

// Errors of secondary credentials.
var (
	ErrCredentialNotFound = apierr.New(apierr.NotFound, "credential not found")
	ErrLastPrimary        = apierr.New(apierr.ValidationFailed, "credentialId: the user's last primary credential cannot be deleted")
	// ErrGuestCredential refuses a secondary credential for a guest: each
	// new guest could otherwise send verification codes to any number.
	ErrGuestCredential = apierr.New(apierr.ValidationFailed, "a guest cannot add credentials; register first")
)

// MaxCredentials is how many credentials one user may hold.
const MaxCredentials = 10

// NewCredentialInput is the body of POST /users/{userId}/credentials.
type NewCredentialInput struct {
	ID               string `json:"id"`
	Provider         string `json:"provider"`
	SkipVerification bool   `json:"skipVerification"`
}

// AddCredential gives a user a secondary, passwordless credential (POST
// /users/{userId}/credentials). Unless skipVerification (admin only), a
// verification code is sent to it.
func (s *Service) AddCredential(ctx context.Context, caller actor.Actor, userID string, in NewCredentialInput) (user.Credential, error) {
	// Two adds for one user at once contend on the user's code count; the
	// loser re-reads and tries again rather than answering 409.
	for attempt := 0; ; attempt++ {
		c, err := s.addCredential(ctx, caller, userID, in)
		if !errors.Is(err, user.ErrConcurrentUpdate) || attempt == 3 {
			return c, err
		}
	}
}

// addCredential is one attempt of AddCredential.
func (s *Service) addCredential(ctx context.Context, caller actor.Actor, userID string, in NewCredentialInput) (user.Credential, error) {
	if err := caller.RequireUser(userID); err != nil {
		return user.Credential{}, err
	}
	if in.SkipVerification && !caller.IsAdmin() {
		return user.Credential{}, web.ErrAdminOnly("skipVerification")
	}
	if strings.TrimSpace(in.ID) == "" {
		return user.Credential{}, apierr.Invalid("id", "is required")
	}
	provider := strings.ToUpper(strings.TrimSpace(in.Provider))
	if provider != user.ProviderEmail && provider != user.ProviderMobile {
		return user.Credential{}, apierr.Invalid("provider", "must be EMAIL or MOBILE")
	}
	id, err := user.NormalizeCredential(provider, in.ID)
	if err != nil {
		return user.Credential{}, apierr.Invalid("id", "must be a valid %s", strings.ToLower(provider))
	}
	t, err := s.tenant(ctx, caller.TenantID, "add credential")
	if err != nil {
		return user.Credential{}, err
	}
	if !in.SkipVerification {
		if err := checkSMSCountry(t, provider, id, "id"); err != nil {
			return user.Credential{}, err
		}
	}
	now := s.users.Now()
	st := s.st()
	r, err := st.GetUser(ctx, caller.TenantID, userID, now)
	if err != nil {
		return user.Credential{}, err
	}
	if r.Deleted {
		return user.Credential{}, fmt.Errorf("add credential: %w", user.ErrNotFound)
	}
	if r.IsGuest {
		return user.Credential{}, ErrGuestCredential
	}
	existing, err := st.Credentials(ctx, caller.TenantID, userID, now)
	if err != nil {
		return user.Credential{}, err
	}
	// Adding a credential the user already holds unverified sends a fresh
	// code (also after five wrong codes voided the old one).
	for _, c := range existing {
		if c.Provider == provider && c.Identifier == id && !c.IsVerified && !c.IsPrimary {
			return s.resendVerification(ctx, t, r, c)
		}
	}
	if len(existing) >= MaxCredentials {
		return user.Credential{}, apierr.Invalid("id", "a user may hold at most %d credentials", MaxCredentials)
	}
	c := user.CredRecord{
		PK: r.PK, SK: user.CredSK(provider, id), CredID: user.NewID(), UserID: userID, Identifier: id, Provider: provider,
		IsVerified: in.SkipVerification, Created: clock.Stamp(now), UpdatedAt: clock.Stamp(now), ExpiresAt: r.ExpiresAt,
	}.Indexed(caller.TenantID)
	if !in.SkipVerification {
		c.VerifyCode = newCode(4)
	}
	credItem, err := st.Put(st.Users, c, aws.String("attribute_not_exists(pk)"))
	if err != nil {
		return user.Credential{}, err
	}
	indexItem, err := st.PutIfFree(user.CredIndex{PK: user.CredIndexPK(caller.TenantID, provider, id), SK: user.SKCredID, UserID: userID, Provider: provider, Identifier: id, ExpiresAt: r.ExpiresAt}, "\x00", now)
	if err != nil {
		return user.Credential{}, err
	}
	// The user update counts the credential (so parallel adds cannot pass
	// MaxCredentials) and the code send (MaxCodeSends an hour, shared with
	// activation and reset codes), so re-adding an identifier cannot be
	// used to guess codes or to send unlimited messages.
	var upd expression.UpdateBuilder
	var cond *expression.ConditionBuilder
	if c.VerifyCode != "" {
		if upd, err = countCodeSend(r, now); err != nil {
			return user.Credential{}, err
		}
		sent := expression.Or(expression.Name("codeSends").AttributeNotExists(), expression.Name("codeSends").Equal(expression.Value(r.CodeSends))).
			And(expression.Or(expression.Name("codeWindow").AttributeNotExists(), expression.Name("codeWindow").Equal(expression.Value(r.CodeWindow))))
		cond = &sent
	}
	userItem, err := st.UserCounted(r, []user.CounterStep{{Name: "credentialCount", Read: len(existing), Delta: 1, Max: MaxCredentials}}, upd, cond)
	if err != nil {
		return user.Credential{}, err
	}
	var res notify.Reservation
	if c.VerifyCode != "" {
		if res, err = s.reserveCode(ctx, t, provider, id, "id"); err != nil {
			return user.Credential{}, err
		}
	}
	if err := st.Transact(ctx, []types.TransactWriteItem{credItem, indexItem, userItem}); err != nil {
		s.cancelCode(ctx, res, err)
		failed := ddb.FailedConditions(err)
		switch {
		case slices.Contains(failed, 0) || slices.Contains(failed, 1):
			return user.Credential{}, fmt.Errorf("add credential: %w", ErrCredentialExists)
		case slices.Contains(failed, 2):
			return user.Credential{}, s.userChanged(ctx, caller.TenantID, userID, "add credential")
		}
		return user.Credential{}, fmt.Errorf("add credential: %w", err)
	}
	if c.VerifyCode != "" {
		s.sendCode(ctx, caller.TenantID, c, "Your verification code", "Your verification code is "+c.VerifyCode)
	}
	return c.View(), nil
}

// resendVerification gives an unverified credential of the user r a new
// code and sends it, counting the send as AddCredential does.
func (s *Service) resendVerification(ctx context.Context, t tenant.Tenant, r user.Record, c user.CredRecord) (user.Credential, error) {
	tenantID := t.ID
	st := s.st()
	count, err := st.codeSendCounted(r, s.users.Now())
	if err != nil {
		return user.Credential{}, err
	}
	res, err := s.reserveCode(ctx, t, c.Provider, c.Identifier, "id")
	if err != nil {
		return user.Credential{}, err
	}
	c.VerifyCode, c.VerifyAttempts = newCode(4), 0
	err = st.Transact(ctx, []types.TransactWriteItem{{Update: &types.Update{
		TableName: aws.String(s.store.Users), Key: user.Key(c.PK, c.SK),
		UpdateExpression:          aws.String("SET verifyCode = :c, verifyAttempts = :zero"),
		ConditionExpression:       aws.String("attribute_exists(pk) AND isVerified = :false"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":c": &types.AttributeValueMemberS{Value: c.VerifyCode}, ":zero": &types.AttributeValueMemberN{Value: "0"}, ":false": &types.AttributeValueMemberBOOL{Value: false}},
	}}, count})
	if err != nil {
		s.cancelCode(ctx, res, err)
		failed := ddb.FailedConditions(err)
		switch {
		case slices.Contains(failed, 0):
			return user.Credential{}, fmt.Errorf("resend verification: %w", ErrCredentialExists)
		case slices.Contains(failed, 1):
			return user.Credential{}, s.userChanged(ctx, tenantID, r.ID, "resend verification")
		}
		return user.Credential{}, fmt.Errorf("resend verification: %w", err)
	}
	s.sendCode(ctx, tenantID, c, "Your verification code", "Your verification code is "+c.VerifyCode)
	return c.View(), nil
}

// userChanged explains a failed condition on a user record inside a
// transaction: the user is gone (not found) or another request changed it
// meanwhile (conflict, retry).
func (s *Service) userChanged(ctx context.Context, tenantID, userID, op string) error {
	r, err := s.st().GetUser(ctx, tenantID, userID, s.users.Now())
	if err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	if r.Deleted {
		return fmt.Errorf("%s: %w", op, user.ErrNotFound)
	}
	return fmt.Errorf("%s: %w", op, user.ErrConcurrentUpdate)
}

// credentialByID finds a user's credential by its _id.
func (s *Service) credentialByID(ctx context.Context, tenantID, userID, credID string) (user.CredRecord, error) {
	creds, err := s.st().Credentials(ctx, tenantID, userID, s.users.Now())
	if err != nil {
		return user.CredRecord{}, err
	}
	for _, c := range creds {
		if c.CredID == credID {
			return c, nil
		}
	}
	return user.CredRecord{}, fmt.Errorf("credential %s: %w", credID, ErrCredentialNotFound)
}

// VerifyCredential checks a credential's verification code (POST
// /users/{userId}/credentials/{credentialId}/verify). Five wrong codes void
// the code; a verified credential answers as it is.
func (s *Service) VerifyCredential(ctx context.Context, caller actor.Actor, userID, credID, code string) (user.Credential, error) {
	if err := caller.RequireUser(userID); err != nil {
		return user.Credential{}, err
	}
	if !web.ValidID(credID) {
		return user.Credential{}, fmt.Errorf("verify credential: %w", ErrCredentialNotFound)
	}
	if strings.TrimSpace(code) == "" {
		return user.Credential{}, apierr.Invalid("verificationCode", "is required")
	}
	c, err := s.credentialByID(ctx, caller.TenantID, userID, credID)
	if err != nil {
		return user.Credential{}, err
	}
	if c.IsVerified {
		return c.View(), nil
	}
	if c.VerifyCode == "" || c.VerifyAttempts >= MaxCodeAttempts {
		return user.Credential{}, ErrTokenVoided
	}
	k := user.Key(c.PK, c.SK)
	if !equalCode(c.VerifyCode, strings.TrimSpace(code)) {
		_, err := s.store.DB.UpdateItem(ctx, &dynamodb.UpdateItemInput{
			TableName: aws.String(s.store.Users), Key: k,
			UpdateExpression:          aws.String("ADD verifyAttempts :one"),
			ConditionExpression:       aws.String("attribute_exists(pk)"),
			ExpressionAttributeValues: map[string]types.AttributeValue{":one": &types.AttributeValueMemberN{Value: "1"}},
		})
		if err != nil && !ddb.IsConditionFailed(err) {
			return user.Credential{}, fmt.Errorf("count verification attempt: %w", err)
		}
		return user.Credential{}, ErrInvalidToken
	}
	now := clock.Stamp(s.users.Now())
	upd := expression.Set(expression.Name("isVerified"), expression.Value(true)).
		Set(expression.Name("updatedAt"), expression.Value(now)).
		Set(expression.Name("gsi3sk"), expression.Value(now+"#"+c.CredID)).
		Remove(expression.Name("verifyCode"))
	cond := expression.Name("verifyCode").Equal(expression.Value(c.VerifyCode)).
		And(expression.Name("verifyAttempts").LessThan(expression.Value(MaxCodeAttempts)))
	expr, err := expression.NewBuilder().WithUpdate(upd).WithCondition(cond).Build()
	if err != nil {
		return user.Credential{}, fmt.Errorf("verify credential: %w", err)
	}
	_, err = s.store.DB.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: aws.String(s.store.Users), Key: k, UpdateExpression: expr.Update(), ConditionExpression: expr.Condition(),
		ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values(),
	})
	if ddb.IsConditionFailed(err) {
		return user.Credential{}, ErrInvalidToken
	}
	if err != nil {
		return user.Credential{}, fmt.Errorf("verify credential %s: %w", credID, err)
	}
	c.IsVerified, c.UpdatedAt = true, now
	return c.View(), nil
}

// DeleteCredential removes a credential and releases its identifier
// (DELETE /users/{userId}/credentials/{credentialId}). A user's last
// primary credential cannot be deleted.
func (s *Service) DeleteCredential(ctx context.Context, caller actor.Actor, userID, credID string) error {
	if err := caller.RequireUser(userID); err != nil {
		return err
	}
	if !web.ValidID(credID) {
		return fmt.Errorf("delete credential: %w", ErrCredentialNotFound)
	}
	creds, err := s.st().Credentials(ctx, caller.TenantID, userID, s.users.Now())
	if err != nil {
		return err
	}
	var target *user.CredRecord
	primaries := 0
	for i, c := range creds {
		if c.IsPrimary {
			primaries++
		}
		if c.CredID == credID {
			target = &creds[i]
		}
	}
	if target == nil {
		return fmt.Errorf("delete credential %s: %w", credID, ErrCredentialNotFound)
	}
	if target.IsPrimary && primaries <= 1 {
		return ErrLastPrimary
	}
	// The user's counters go down in the same transaction; deleting a
	// primary needs another primary to remain, so two parallel deletes of
	// a user's last two primaries cannot both succeed.
	steps := []user.CounterStep{{Name: "credentialCount", Read: len(creds), Delta: -1}}
	if target.IsPrimary {
		steps = append(steps, user.CounterStep{Name: "primaryCount", Read: primaries, Delta: -1, Min: 1})
	}
	userItem, err := s.st().UserCounted(user.Record{PK: user.UserPK(caller.TenantID, userID), SK: user.SKProfile, ID: userID}, steps, expression.UpdateBuilder{}, nil)
	if err != nil {
		return err
	}
	err = s.st().Transact(ctx, []types.TransactWriteItem{
		{Delete: &types.Delete{TableName: aws.String(s.store.Users), Key: user.Key(target.PK, target.SK), ConditionExpression: aws.String("attribute_exists(pk)")}},
		{Delete: &types.Delete{
			TableName: aws.String(s.store.Users), Key: user.Key(user.CredIndexPK(caller.TenantID, target.Provider, target.Identifier), user.SKCredID),
			ConditionExpression:       aws.String("attribute_not_exists(pk) OR userId = :uid"),
			ExpressionAttributeValues: map[string]types.AttributeValue{":uid": &types.AttributeValueMemberS{Value: userID}},
		}},
		userItem,
	})
	if failed := ddb.FailedConditions(err); len(failed) > 0 {
		if slices.Contains(failed, 2) && !slices.Contains(failed, 0) {
			// Unless the user is gone, the primary count refused the delete.
			err := s.userChanged(ctx, caller.TenantID, userID, "delete credential")
			if errors.Is(err, user.ErrConcurrentUpdate) && target.IsPrimary {
				return ErrLastPrimary
			}
			if !errors.Is(err, user.ErrConcurrentUpdate) {
				return err
			}
		}
		return fmt.Errorf("delete credential %s: %w", credID, ErrCredentialNotFound)
	}
	if err != nil {
		return fmt.Errorf("delete credential %s: %w", credID, err)
	}
	return nil
}

// CredentialQuery is GET /credentials.
type CredentialQuery struct {
	ID       string
	Provider string
	Sort     string
	Limit    int
	StartKey string
}

func (q *CredentialQuery) validate() error {
	q.Provider = strings.ToUpper(strings.TrimSpace(q.Provider))
	if q.Provider != "" && q.Provider != user.ProviderEmail && q.Provider != user.ProviderMobile {
		return apierr.Invalid("provider", "must be email or mobile")
	}
	if len(q.Sort) > 64 {
		return apierr.Invalid("sort", "must be at most 64 characters")
	}
	keys := strings.Split(q.Sort, ",")
	for _, k := range keys {
		switch strings.TrimSpace(k) {
		case "", "created", "-created", "updatedAt", "-updatedAt":
		default:
			return apierr.Invalid("sort", "must be a comma list of created or updatedAt, each optionally prefixed with -")
		}
	}
	q.Sort = strings.TrimSpace(keys[0])
	if q.Sort == "" {
		q.Sort = "created"
	}
	return nil
}

// ListCredentials lists credentials (GET /credentials): an admin searches
// the tenant, a user sees only their own.
func (s *Service) ListCredentials(ctx context.Context, caller actor.Actor, q CredentialQuery) ([]user.Credential, web.Page, error) {
	if err := caller.RequireAuth(); err != nil {
		return nil, web.Page{}, err
	}
	if err := q.validate(); err != nil {
		return nil, web.Page{}, err
	}
	now := s.users.Now()
	page := web.Page{Limit: q.Limit, StartKey: q.StartKey}
	scope := strings.Join([]string{"credentials", caller.UserID, q.ID, q.Provider, q.Sort}, "\x00")
	// A user's own credentials, or a search by identifier: a small set,
	// sorted and paged in memory.
	if !caller.IsAdmin() || q.ID != "" {
		var creds []user.CredRecord
		if !caller.IsAdmin() {
			all, err := s.st().Credentials(ctx, caller.TenantID, caller.UserID, now)
			if err != nil {
				return nil, web.Page{}, err
			}
			creds = all
		} else {
			owners, err := s.st().OwnersOf(ctx, caller.TenantID, q.ID, now)
			if err != nil {
				return nil, web.Page{}, err
			}
			for _, uid := range owners {
				all, err := s.st().Credentials(ctx, caller.TenantID, uid, now)
				if err != nil {
					return nil, web.Page{}, err
				}
				creds = append(creds, all...)
			}
		}
		kept := creds[:0]
		for _, c := range creds {
			if q.Provider != "" && c.Provider != q.Provider {
				continue
			}
			if q.ID != "" && !strings.EqualFold(c.Identifier, strings.TrimSpace(q.ID)) && c.Identifier != normalizedAny(q.ID) {
				continue
			}
			kept = append(kept, c)
		}
		user.SortCredentials(kept, q.Sort)
		return s.pageCreds(caller.TenantID, scope, kept, page)
	}
	start, err := s.Cursor.Decode(caller.TenantID, scope, q.StartKey)
	if err != nil {
		return nil, web.Page{}, err
	}
	index := "gsi2"
	if strings.TrimPrefix(q.Sort, "-") == "updatedAt" {
		index = "gsi3"
	}
	kc := expression.Key(index + "pk").Equal(expression.Value(user.CredsPK(caller.TenantID)))
	expr, err := expression.NewBuilder().WithKeyCondition(kc).Build()
	if err != nil {
		return nil, web.Page{}, fmt.Errorf("list credentials: %w", err)
	}
	in := dynamodb.QueryInput{
		TableName: aws.String(s.store.Users), IndexName: aws.String(index),
		KeyConditionExpression: expr.KeyCondition(), ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values(),
		ScanIndexForward: aws.Bool(!strings.HasPrefix(q.Sort, "-")),
	}
	filter := func(_ context.Context, items []ddb.Item) ([]ddb.Item, error) {
		out := items[:0:0]
		for _, it := range items {
			var c user.CredRecord
			if err := attributevalue.UnmarshalMap(it, &c); err != nil {
				return nil, fmt.Errorf("list credentials: %w", err)
			}
			if (c.ExpiresAt > 0 && c.ExpiresAt <= now.Unix()) || (q.Provider != "" && c.Provider != q.Provider) {
				continue
			}
			out = append(out, it)
		}
		return out, nil
	}
	items, next, err := ddb.QueryPage(ctx, s.store.DB, in, start, q.Limit, filter)
	if err != nil {
		return nil, web.Page{}, fmt.Errorf("list credentials: %w", err)
	}
	var creds []user.CredRecord
	if err := attributevalue.UnmarshalListOfMaps(items, &creds); err != nil {
		return nil, web.Page{}, fmt.Errorf("list credentials: %w", err)
	}
	if page.NextKey, err = s.Cursor.Encode(caller.TenantID, scope, next); err != nil {
		return nil, web.Page{}, err
	}
	out := make([]user.Credential, 0, len(creds))
	for _, c := range creds {
		out = append(out, c.View())
	}
	page.Count = len(out)
	return out, page, nil
}

func normalizedAny(id string) string {
	if n, err := user.NormalizeCredential(ProviderFor(id), id); err == nil {
		return n
	}
	return id
}

// pageCreds pages an in-memory, sorted list with a signed offset key.
func (s *Service) pageCreds(tenantID, scope string, creds []user.CredRecord, page web.Page) ([]user.Credential, web.Page, error) {
	offset, err := s.Cursor.DecodeOffset(tenantID, scope, page.StartKey)
	if err != nil {
		return nil, web.Page{}, err
	}
	offset = min(offset, len(creds))
	end := min(offset+page.Limit, len(creds))
	if end < len(creds) {
		key, err := s.Cursor.EncodeOffset(tenantID, scope, end)
		if err != nil {
			return nil, web.Page{}, err
		}
		page.NextKey = key
	}
	out := make([]user.Credential, 0, end-offset)
	for _, c := range creds[offset:end] {
		out = append(out, c.View())
	}
	page.Count = len(out)
	return out, page, nil
}

// credentialList is the response of GET /credentials.
type credentialList struct {
	Items []user.Credential `json:"items"`
	Page  web.Page          `json:"page"`
}

// handleAddCredential serves POST /users/{userId}/credentials (the user,
// or an admin): 201 with the new credential.
func (s *Service) handleAddCredential(r *http.Request, a actor.Actor) (user.Credential, error) {
	in, err := web.Decoded[NewCredentialInput](r)
	if err != nil {
		return user.Credential{}, err
	}
	if !in.SkipVerification {
		// A verification code goes to the new credential.
		if err := s.admit(r, a); err != nil {
			return user.Credential{}, err
		}
	}
	return s.AddCredential(r.Context(), a, r.PathValue("userId"), in)
}

// verifyBody is the body of POST .../credentials/{credentialId}/verify.
type verifyBody struct {
	VerificationCode string `json:"verificationCode"`
}

// handleVerifyCredential serves POST
// /users/{userId}/credentials/{credentialId}/verify (the user, or an
// admin).
func (s *Service) handleVerifyCredential(r *http.Request, a actor.Actor) (user.Credential, error) {
	in, err := web.Decoded[verifyBody](r)
	if err != nil {
		return user.Credential{}, err
	}
	return s.VerifyCredential(r.Context(), a, r.PathValue("userId"), r.PathValue("credentialId"), in.VerificationCode)
}

// handleDeleteCredential serves DELETE
// /users/{userId}/credentials/{credentialId} (the user, or an admin): 204.
func (s *Service) handleDeleteCredential(r *http.Request, a actor.Actor) error {
	return s.DeleteCredential(r.Context(), a, r.PathValue("userId"), r.PathValue("credentialId"))
}

// handleListCredentials serves GET /credentials (any user, guest or
// admin; its paging parameters are checked first).
func (s *Service) handleListCredentials(r *http.Request, a actor.Actor) (credentialList, error) {
	limit, start, err := web.Paging(r)
	if err != nil {
		return credentialList{}, err
	}
	v := r.URL.Query()
	items, page, err := s.ListCredentials(r.Context(), a, CredentialQuery{ID: user.PlusFromQuery(v.Get("id")), Provider: v.Get("provider"), Sort: v.Get("sort"), Limit: limit, StartKey: start})
	return credentialList{Items: items, Page: page}, err
}

package directory

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/loyalty-platform/platform/shared/domain/user"
	"github.com/loyalty-platform/platform/shared/platform/actor"
	"github.com/loyalty-platform/platform/shared/platform/apierr"
	"github.com/loyalty-platform/platform/shared/platform/clock"
	"github.com/loyalty-platform/platform/shared/platform/ddb"
	"github.com/loyalty-platform/platform/shared/platform/metadata"
	"github.com/loyalty-platform/platform/shared/platform/web"
)

// UpdateInput is the body of PUT /users/{userId}. Absent fields are
// unchanged.
type UpdateInput struct {
	FirstName                   *string         `json:"firstName"`
	LastName                    *string         `json:"lastName"`
	FullName                    *string         `json:"fullName"`
	Birthdate                   *string         `json:"birthdate"`
	Gender                      *string         `json:"gender"`
	Subscribed                  *bool           `json:"subscribed"`
	Contacts                    *map[string]any `json:"contacts"`
	DefaultTip                  *tipInput       `json:"defaultTip"`
	FavouriteLocations          *[]string       `json:"favouriteLocations"`
	FavouriteProducts           *[]string       `json:"favouriteProducts"`
	Extended                    *map[string]any `json:"extended"`
	HasAgreedToShareData        *bool           `json:"hasAgreedToShareData"`
	HasAgreedToReceiveMarketing *bool           `json:"hasAgreedToReceiveMarketing"`
	ExternalPosID               *string         `json:"externalPosId"`
	ExternalLoyaltyID           *string         `json:"externalLoyaltyId"`
	PrimaryPlatform             *string         `json:"primaryPlatform"`
	APNDeviceToken              *string         `json:"apnDeviceToken"`
	GCMDeviceToken              *string         `json:"gcmDeviceToken"`
	Roles                       *[]string       `json:"roles"`
	// Metadata is the tenant's own fields on the user (admin only; see
	// shared/platform/metadata): sent, it replaces the stored object
	// whole; null or {} removes it.
	Metadata *metadata.Metadata `json:"metadata"`
	// Clear lists the optional fields sent as null: they are removed.
	Clear []string `json:"-"`
	// ReadOnly holds the read-only fields the body carried; Update checks
	// that each equals the stored value.
	ReadOnly map[string]json.RawMessage `json:"-"`
}

// checkUnchanged fails with "cannot be changed" for the first read-only
// field of in whose value differs from the user's current one; roles sent
// unchanged by a caller who may not change them are dropped.
func (in *UpdateInput) checkUnchanged(current user.User, admin bool) error {
	cur, err := json.Marshal(current)
	if err != nil {
		return fmt.Errorf("check read-only fields: %w", err)
	}
	var have map[string]any
	if err := json.Unmarshal(cur, &have); err != nil {
		return fmt.Errorf("check read-only fields: %w", err)
	}
	have["_id"] = have["id"]
	names := make([]string, 0, len(in.ReadOnly))
	for k := range in.ReadOnly {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		var sent any
		if err := json.Unmarshal(in.ReadOnly[k], &sent); err != nil || !reflect.DeepEqual(sent, have[k]) {
			return apierr.Invalid(k, "cannot be changed")
		}
	}
	if in.Roles != nil && !admin {
		sent, stored := slices.Clone(*in.Roles), slices.Clone(current.Roles)
		slices.Sort(sent)
		slices.Sort(stored)
		if slices.Equal(slices.Compact(sent), slices.Compact(stored)) {
			in.Roles = nil
		}
	}
	return nil
}

// tipInput is a defaultTip in an update body; amount is required.
type tipInput struct {
	Scheme string   `json:"scheme"`
	Amount *float64 `json:"amount"`
}

// clearable are the fields an update may remove by sending null.
var clearable = map[string]bool{
	"defaultTip": true, "extended": true, "contacts": true, "favouriteLocations": true, "favouriteProducts": true,
	"birthdate": true, "gender": true, "externalPosId": true, "externalLoyaltyId": true, "metadata": true,
}

// readOnlyFields are the fields of a User a client can never set through
// PUT /users/{userId}. A body may still carry them, so that a client can
// send back what GET returned: each must then equal the stored value (422
// "cannot be changed" otherwise).
var readOnlyFields = map[string]bool{
	"id": true, "_id": true, "tenantId": true, "state": true, "deleted": true, "isGuest": true, "balance": true,
}

// derivedFields are fields of a User the server computes (timestamps,
// flags, formatted values, included extras). A PUT body may carry them and
// they are ignored, whatever their value.
var derivedFields = map[string]bool{
	"created": true, "updatedAt": true, "additionalInformation": true, "hasProfilePhoto": true, "profilePhotoUrl": true,
	"hasPaymentCard": true, "card": true, "isRegisteredForPushNotifications": true, "tokens": true, "name": true,
	"credentials": true, "checkin": true, "segmentIds": true, "segments": true,
}

// DecodeUpdate reads a PUT /users/{userId} body: `points` is
// POINTS_NOT_EDITABLE, read-only fields are 422, and the rest is decoded
// strictly.
func DecodeUpdate(body []byte) (UpdateInput, error) {
	var raw map[string]json.RawMessage
	if err := web.DecodeBytes(body, &raw); err != nil {
		return UpdateInput{}, err
	}
	if len(raw) == 0 {
		return UpdateInput{}, apierr.Invalid("", "at least one field is required")
	}
	if _, ok := raw["points"]; ok {
		return UpdateInput{}, ErrPointsNotEditable
	}
	names := make([]string, 0, len(raw))
	for k := range raw {
		names = append(names, k)
	}
	sort.Strings(names)
	var in UpdateInput
	rest := map[string]json.RawMessage{}
	for _, k := range names {
		switch {
		case k == "password":
			return UpdateInput{}, apierr.Invalid(k, "cannot be changed here: use POST /users/reset")
		case readOnlyFields[k]:
			if in.ReadOnly == nil {
				in.ReadOnly = map[string]json.RawMessage{}
			}
			in.ReadOnly[k] = raw[k]
		case derivedFields[k]:
		default:
			rest[k] = raw[k]
		}
	}
	if len(rest) > 0 {
		writable, err := json.Marshal(rest)
		if err != nil {
			return UpdateInput{}, fmt.Errorf("decode update: %w", err)
		}
		if err := web.DecodeBytes(writable, &in, web.Nullable(slices.Collect(maps.Keys(clearable))...)); err != nil {
			return UpdateInput{}, err
		}
	}
	for _, k := range names {
		if _, ok := rest[k]; !ok || string(raw[k]) != "null" {
			continue
		}
		if !clearable[k] {
			return UpdateInput{}, apierr.Invalid(k, "cannot be null")
		}
		in.Clear = append(in.Clear, k)
	}
	return in, nil
}

func (in *UpdateInput) validate(admin bool) error {
	for field, p := range map[string]*string{"firstName": in.FirstName, "lastName": in.LastName, "fullName": in.FullName} {
		if p == nil {
			continue
		}
		*p = strings.TrimSpace(*p)
		if err := user.CheckName(field, *p); err != nil {
			return err
		}
		if *p == "" && field != "fullName" {
			return apierr.Invalid(field, "must not be empty")
		}
	}
	if in.Birthdate != nil {
		if err := user.CheckBirthdate(*in.Birthdate); err != nil {
			return err
		}
	}
	if in.Gender != nil && *in.Gender != "" && *in.Gender != "FEMALE" && *in.Gender != "MALE" {
		return apierr.Invalid("gender", "must be FEMALE or MALE")
	}
	if t := in.DefaultTip; t != nil {
		if t.Amount == nil {
			return apierr.Invalid("defaultTip.amount", "is required")
		}
		switch t.Scheme {
		case "PERCENTAGE":
			if *t.Amount < 0 || *t.Amount > 100 {
				return apierr.Invalid("defaultTip.amount", "must be a percentage from 0 to 100")
			}
		case "ABSOLUTE":
			if *t.Amount < 0 || *t.Amount > 1e6 {
				return apierr.Invalid("defaultTip.amount", "must be an amount from 0 to 1000000")
			}
		default:
			return apierr.Invalid("defaultTip.scheme", "must be ABSOLUTE or PERCENTAGE")
		}
	}
	for field, m := range map[string]*map[string]any{"extended": in.Extended, "contacts": in.Contacts} {
		if m != nil {
			if err := checkFreeJSON(field, *m); err != nil {
				return err
			}
		}
	}
	for field, l := range map[string]*[]string{"favouriteLocations": in.FavouriteLocations, "favouriteProducts": in.FavouriteProducts} {
		if l == nil {
			continue
		}
		if len(*l) > 200 {
			return apierr.Invalid(field, "at most 200 items")
		}
		for _, v := range *l {
			if strings.TrimSpace(v) == "" || len(v) > 200 {
				return apierr.Invalid(field, "items must be non-empty strings of at most 200 characters")
			}
		}
	}
	if in.PrimaryPlatform != nil {
		switch *in.PrimaryPlatform {
		case user.PlatformUnknown, user.PlatformIOS, user.PlatformAndroid:
		default:
			return apierr.Invalid("primaryPlatform", "must be UNKNOWN, IOS or ANDROID")
		}
	}
	for field, p := range map[string]*string{"apnDeviceToken": in.APNDeviceToken, "gcmDeviceToken": in.GCMDeviceToken, "externalPosId": in.ExternalPosID, "externalLoyaltyId": in.ExternalLoyaltyID} {
		if p != nil && len(*p) > 4096 {
			return apierr.Invalid(field, "is too long")
		}
	}
	if in.Metadata != nil || slices.Contains(in.Clear, metadata.Field) {
		if !admin {
			return apierr.Invalid(metadata.Field, "only an admin may change metadata")
		}
		if in.Metadata != nil {
			m, err := in.Metadata.Clean()
			if err != nil {
				return err
			}
			if m == nil {
				in.Metadata, in.Clear = nil, append(in.Clear, metadata.Field)
			} else {
				in.Metadata = &m
			}
		}
	}
	if in.Roles != nil {
		if !admin {
			return apierr.Invalid("roles", "only an admin may change roles")
		}
		if len(*in.Roles) == 0 {
			return apierr.Invalid("roles", "at least one role is required")
		}
		if err := user.CheckRoles(*in.Roles); err != nil {
			return err
		}
	}
	return nil
}

// Update changes a user's profile (PUT /users/{userId}).
func (s *Service) Update(ctx context.Context, caller actor.Actor, userID string, in UpdateInput) (user.User, error) {
	if err := caller.RequireUser(userID); err != nil {
		return user.User{}, err
	}
	now := s.users.Now()
	st := s.st()
	r, err := st.GetUser(ctx, caller.TenantID, userID, now)
	if err != nil {
		return user.User{}, err
	}
	if r.Deleted {
		return user.User{}, fmt.Errorf("update user: %w", user.ErrNotFound)
	}
	if len(in.ReadOnly) > 0 || in.Roles != nil {
		current, err := s.users.View(ctx, r, caller, nil)
		if err != nil {
			return user.User{}, fmt.Errorf("update user: %w", err)
		}
		if err := in.checkUnchanged(current, caller.IsAdmin()); err != nil {
			return user.User{}, err
		}
	}
	if err := in.validate(caller.IsAdmin()); err != nil {
		return user.User{}, err
	}
	var upd expression.UpdateBuilder
	set := func(name string, v any) { upd = upd.Set(expression.Name(name), expression.Value(v)) }
	setStr := func(name string, p *string, dst *string) {
		if p != nil {
			set(name, *p)
			*dst = *p
		}
	}
	// A fullName the user chose survives a change of first or last name; a
	// derived one ("first last") follows it.
	derivedFull := r.FullName == user.FullName("", r.FirstName, r.LastName)
	setStr("firstName", in.FirstName, &r.FirstName)
	setStr("lastName", in.LastName, &r.LastName)
	setStr("birthdate", in.Birthdate, &r.Birthdate)
	setStr("gender", in.Gender, &r.Gender)
	setStr("externalPosId", in.ExternalPosID, &r.ExternalPosID)
	setStr("externalLoyaltyId", in.ExternalLoyaltyID, &r.ExternalLoyaltyID)
	setStr("primaryPlatform", in.PrimaryPlatform, &r.PrimaryPlatform)
	for name, p := range map[string]*bool{"subscribed": in.Subscribed, "hasAgreedToShareData": in.HasAgreedToShareData, "hasAgreedToReceiveMarketing": in.HasAgreedToReceiveMarketing} {
		if p != nil {
			set(name, *p)
		}
	}
	if in.Contacts != nil {
		set("contacts", *in.Contacts)
	}
	if in.Extended != nil {
		set("extended", *in.Extended)
	}
	if in.Metadata != nil {
		set(metadata.Field, *in.Metadata)
	}
	if in.DefaultTip != nil {
		set("defaultTip", user.Tip{Scheme: in.DefaultTip.Scheme, Amount: *in.DefaultTip.Amount})
	}
	for _, name := range in.Clear {
		upd = upd.Remove(expression.Name(name))
	}
	if in.FavouriteLocations != nil {
		set("favouriteLocations", *in.FavouriteLocations)
	}
	if in.FavouriteProducts != nil {
		set("favouriteProducts", *in.FavouriteProducts)
	}
	if in.Roles != nil {
		set("roles", *in.Roles)
		upd = upd.Add(expression.Name("sessionEpoch"), expression.Value(1)) // voids logins in flight (account's putSessionAtEpoch)
	}
	if in.APNDeviceToken != nil || in.GCMDeviceToken != nil {
		// The whole map is built here and written once, so adding both
		// tokens, or removing one that was never set, is one valid update.
		endpoints := map[string]string{}
		for k, v := range r.PushEndpoints {
			endpoints[k] = v
		}
		for _, p := range []struct {
			platform string
			token    *string
		}{{user.PlatformIOS, in.APNDeviceToken}, {user.PlatformAndroid, in.GCMDeviceToken}} {
			if p.token == nil {
				continue
			}
			if old := endpoints[p.platform]; old != "" {
				if err := s.pusher.UnregisterDevice(ctx, old); err != nil {
					web.Logger(ctx).Warn("remove push endpoint failed", "error", err.Error())
				}
			}
			delete(endpoints, p.platform)
			if *p.token == "" {
				continue
			}
			endpoint, err := s.pusher.RegisterDevice(ctx, r.TenantID, r.ID, p.platform, *p.token)
			if err != nil {
				return user.User{}, fmt.Errorf("register push endpoint: %w", err)
			}
			if endpoint == "" {
				web.Logger(ctx).Warn("push notifications are not configured for this platform", "platform", p.platform)
				continue
			}
			endpoints[p.platform] = endpoint
		}
		if len(endpoints) == 0 {
			upd = upd.Remove(expression.Name("pushEndpoints"))
		} else {
			set("pushEndpoints", endpoints)
		}
	}
	var nameItems []types.TransactWriteItem
	if in.FirstName != nil || in.LastName != nil || in.FullName != nil {
		full := r.FullName
		if in.FullName != nil {
			full = *in.FullName
		}
		if (in.FullName == nil && derivedFull) || full == "" {
			full = user.FullName("", r.FirstName, r.LastName)
		}
		set("fullName", full)
		words := user.NameWords(full)
		set("nameWords", words)
		keep := map[string]bool{}
		for _, w := range words {
			keep[w] = true
			it, err := st.Put(st.Users, user.NameEntry{PK: r.PK, SK: user.NameSK(w), GSI1PK: user.NamesPK(r.TenantID), GSI1SK: w + "#" + r.ID, UserID: r.ID, ExpiresAt: r.ExpiresAt}, nil)
			if err != nil {
				return user.User{}, err
			}
			nameItems = append(nameItems, it)
		}
		for _, w := range r.NameWords {
			if !keep[w] {
				nameItems = append(nameItems, types.TransactWriteItem{Delete: &types.Delete{TableName: aws.String(st.Users), Key: user.Key(r.PK, user.NameSK(w))}})
			}
		}
	}
	stampNow := clock.Stamp(now)
	upd = upd.Set(expression.Name("updatedAt"), expression.Value(stampNow)).
		Set(expression.Name("gsi3sk"), expression.Value(stampNow+"#"+r.ID)).
		Add(expression.Name("version"), expression.Value(1))
	cond := expression.Name("version").Equal(expression.Value(r.Version)).And(expression.Name("deleted").Equal(expression.Value(false)))
	expr, err := expression.NewBuilder().WithUpdate(upd).WithCondition(cond).Build()
	if err != nil {
		return user.User{}, fmt.Errorf("update user %s: %w", userID, err)
	}
	items := append([]types.TransactWriteItem{{Update: &types.Update{
		TableName: aws.String(st.Users), Key: user.Key(r.PK, r.SK),
		UpdateExpression: expr.Update(), ConditionExpression: expr.Condition(),
		ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values(),
	}}}, nameItems...)
	if err := st.Transact(ctx, items); err != nil {
		if len(ddb.FailedConditions(err)) > 0 {
			return user.User{}, fmt.Errorf("update user %s: %w", userID, user.ErrConcurrentUpdate)
		}
		return user.User{}, fmt.Errorf("update user %s: %w", userID, err)
	}
	// Sessions carry the roles they were made with: a change of roles ends
	// them, so a demoted admin loses admin rights at once.
	if in.Roles != nil && !slices.Equal(*in.Roles, r.Roles) {
		if _, err := st.DeleteSessions(ctx, caller.TenantID, userID); err != nil {
			return user.User{}, err
		}
	}
	fresh, err := st.GetUser(ctx, caller.TenantID, userID, now)
	if err != nil {
		return user.User{}, err
	}
	return s.users.View(ctx, fresh, caller, nil)
}

// ListQuery holds the query parameters of GET /users.
type ListQuery struct {
	Name         string
	CredentialID string
	Role         string
	Sort         string
	CreatedAfter string
	UpdatedAfter string
	Include      map[string]bool
	Limit        int
	StartKey     string
}

// ParseAfter reads an updatedAfter/createdAfter value: an ISO date or an
// RFC 3339 date-time.
func ParseAfter(field, v string) (string, error) {
	if v == "" {
		return "", nil
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02"} {
		if t, err := time.Parse(layout, v); err == nil {
			// An offset can carry a date at the ends of the four-digit
			// years out of them in UTC, where the stored timestamps'
			// fixed-width order no longer holds.
			if y := t.UTC().Year(); y < 0 || y > 9999 {
				return "", apierr.Invalid(field, "must be from 0000-01-01 to 9999-12-31 in UTC")
			}
			return clock.Stamp(t), nil
		}
	}
	return "", apierr.Invalid(field, "must be an ISO 8601 date or date-time")
}

// MaxNameSearch is the longest name search (GET /users?name=): no name
// field is longer.
const MaxNameSearch = 100

// Validate checks a list query.
func (q *ListQuery) Validate() error {
	given := q.Name != ""
	q.Name = strings.TrimSpace(q.Name)
	if n := len([]rune(q.Name)); given && n < 3 {
		return apierr.Invalid("name", "must be at least 3 characters")
	} else if n > MaxNameSearch {
		return apierr.Invalid("name", "must be at most %d characters", MaxNameSearch)
	}
	switch q.Role {
	case "", "GUEST", "USER", "ADMIN":
	default:
		return apierr.Invalid("role", "must be GUEST, USER or ADMIN")
	}
	if q.Name != "" && q.Sort != "" {
		return apierr.Invalid("sort", "cannot be combined with name: a name search is ordered by the matching name")
	}
	switch q.Sort {
	case "":
		if q.Name == "" {
			q.Sort = "created"
		}
	case "created", "-created", "updatedAt", "-updatedAt":
	default:
		return apierr.Invalid("sort", "must be created, -created, updatedAt or -updatedAt")
	}
	return nil
}

func (q ListQuery) scope() string {
	return strings.Join([]string{"users", strings.ToLower(q.Name), q.CredentialID, q.Role, q.Sort, q.CreatedAfter, q.UpdatedAfter}, "\x00")
}

// keep reports whether a user passes the list's filters.
func (q ListQuery) keep(r user.Record, now time.Time) bool {
	if r.SK != user.SKProfile || r.Deleted || r.Expired(now) {
		return false
	}
	switch q.Role {
	case "GUEST":
		if !r.IsGuest {
			return false
		}
	case "USER", "ADMIN":
		if r.IsGuest || !containsString(r.Roles, q.Role) {
			return false
		}
	}
	if q.CreatedAfter != "" && r.Created <= q.CreatedAfter {
		return false
	}
	if q.UpdatedAfter != "" && r.UpdatedAt <= q.UpdatedAfter {
		return false
	}
	return true
}

func containsString(list []string, v string) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}

// List returns a page of the tenant's users (GET /users; admin only).
func (s *Service) List(ctx context.Context, caller actor.Actor, q ListQuery) ([]user.User, web.Page, error) {
	if err := caller.RequireAdmin(); err != nil {
		return nil, web.Page{}, err
	}
	if err := q.Validate(); err != nil {
		return nil, web.Page{}, err
	}
	page := web.Page{Limit: q.Limit, StartKey: q.StartKey}
	now := s.users.Now()
	st := s.st()
	if q.CredentialID != "" {
		// A credential names at most one user: no paging.
		if q.StartKey != "" {
			return nil, web.Page{}, apierr.Invalid("startKey", "is not a key returned by this query")
		}
		owners, err := st.OwnersOf(ctx, caller.TenantID, q.CredentialID, now)
		if err != nil {
			return nil, web.Page{}, err
		}
		var recs []user.Record
		for _, uid := range owners {
			r, err := st.GetUser(ctx, caller.TenantID, uid, now)
			if errors.Is(err, user.ErrNotFound) {
				continue
			}
			if err != nil {
				return nil, web.Page{}, err
			}
			if q.keep(r, now) {
				recs = append(recs, r)
			}
		}
		return s.views(ctx, recs, caller, q.Include, page)
	}
	start, err := s.cursor.Decode(caller.TenantID, q.scope(), q.StartKey)
	if err != nil {
		return nil, web.Page{}, err
	}
	var in dynamodb.QueryInput
	var filter ddb.Filter
	if q.Name != "" {
		in, filter = s.nameQuery(caller.TenantID, q, now)
	} else {
		in, filter = s.orderQuery(caller.TenantID, q, now)
	}
	items, next, err := ddb.QueryPage(ctx, s.st().DB, in, start, q.Limit, filter)
	if err != nil {
		return nil, web.Page{}, fmt.Errorf("list users: %w", err)
	}
	var recs []user.Record
	if err := attributevalue.UnmarshalListOfMaps(items, &recs); err != nil {
		return nil, web.Page{}, fmt.Errorf("list users: %w", err)
	}
	if page.NextKey, err = s.cursor.Encode(caller.TenantID, q.scope(), next); err != nil {
		return nil, web.Page{}, err
	}
	return s.views(ctx, recs, caller, q.Include, page)
}

func (s *Service) views(ctx context.Context, recs []user.Record, caller actor.Actor, include map[string]bool, page web.Page) ([]user.User, web.Page, error) {
	out := make([]user.User, 0, len(recs))
	for _, r := range recs {
		u, err := s.users.View(ctx, r, caller, include)
		if err != nil {
			return nil, web.Page{}, err
		}
		out = append(out, u)
	}
	page.Count = len(out)
	return out, page, nil
}

// orderQuery lists users by creation or update time.
func (s *Service) orderQuery(tenantID string, q ListQuery, now time.Time) (dynamodb.QueryInput, ddb.Filter) {
	index, after := "gsi2", q.CreatedAfter
	if strings.TrimPrefix(q.Sort, "-") == "updatedAt" {
		index, after = "gsi3", q.UpdatedAfter
	}
	kc := expression.Key(index + "pk").Equal(expression.Value(user.UsersPK(tenantID)))
	if after != "" {
		kc = kc.And(expression.Key(index + "sk").GreaterThan(expression.Value(after + "$")))
	}
	expr, _ := expression.NewBuilder().WithKeyCondition(kc).Build()
	in := dynamodb.QueryInput{
		TableName: aws.String(s.st().Users), IndexName: aws.String(index),
		KeyConditionExpression: expr.KeyCondition(), ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values(),
		ScanIndexForward: aws.Bool(!strings.HasPrefix(q.Sort, "-")),
	}
	filter := func(_ context.Context, items []ddb.Item) ([]ddb.Item, error) {
		out := items[:0:0]
		for _, it := range items {
			var r user.Record
			if err := attributevalue.UnmarshalMap(it, &r); err != nil {
				return nil, fmt.Errorf("list users: %w", err)
			}
			if q.keep(r, now) {
				out = append(out, it)
			}
		}
		return out, nil
	}
	return in, filter
}

// nameQuery searches the name index: a case-insensitive prefix of any word
// of the full name. A user whose name has several matching words is listed
// once, under the first of them.
func (s *Service) nameQuery(tenantID string, q ListQuery, now time.Time) (dynamodb.QueryInput, ddb.Filter) {
	prefix := strings.ToLower(q.Name)
	if w := user.NameWords(prefix); len(w) > 0 {
		prefix = w[0]
	}
	kc := expression.Key("gsi1pk").Equal(expression.Value(user.NamesPK(tenantID))).And(expression.Key("gsi1sk").BeginsWith(prefix))
	expr, _ := expression.NewBuilder().WithKeyCondition(kc).Build()
	in := dynamodb.QueryInput{
		TableName: aws.String(s.st().Users), IndexName: aws.String("gsi1"),
		KeyConditionExpression: expr.KeyCondition(), ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values(),
	}
	filter := func(ctx context.Context, items []ddb.Item) ([]ddb.Item, error) {
		var entries []user.NameEntry
		if err := attributevalue.UnmarshalListOfMaps(items, &entries); err != nil {
			return nil, fmt.Errorf("search users: %w", err)
		}
		ids := make([]string, len(entries))
		for i, e := range entries {
			ids[i] = e.UserID
		}
		recs, err := s.st().BatchGetUsers(ctx, tenantID, ids, now)
		if err != nil {
			return nil, err
		}
		byID := map[string]user.Record{}
		for _, r := range recs {
			byID[r.ID] = r
		}
		out := make([]ddb.Item, 0, len(entries))
		for _, e := range entries {
			r, ok := byID[e.UserID]
			if !ok || !q.keep(r, now) {
				continue
			}
			word := strings.TrimSuffix(e.GSI1SK, "#"+e.UserID)
			if first := firstMatch(r.NameWords, prefix); first != word {
				continue
			}
			if !matchesAll(r.NameWords, user.NameWords(q.Name)) {
				continue
			}
			it, err := attributevalue.MarshalMap(r)
			if err != nil {
				return nil, err
			}
			out = append(out, it)
		}
		return out, nil
	}
	return in, filter
}

// matchesAll reports whether every query word is a prefix of some name
// word ("ada tes" finds "Ada Tester").
func matchesAll(words, query []string) bool {
	for _, q := range query {
		if firstMatch(words, q) == "" {
			return false
		}
	}
	return true
}

func firstMatch(words []string, prefix string) string {
	best := ""
	for _, w := range words {
		if strings.HasPrefix(w, prefix) && (best == "" || w < best) {
			best = w
		}
	}
	return best
}

// LookupQuery is POST /users/lookup.
type LookupQuery struct {
	UserIDs  []string
	Sort     string
	Include  map[string]bool
	Limit    int
	StartKey string
}

// Lookup returns the users with the given ids, in the given order (or
// sorted), paged (POST /users/lookup; admin only).
func (s *Service) Lookup(ctx context.Context, caller actor.Actor, q LookupQuery) ([]user.User, web.Page, error) {
	if err := caller.RequireAdmin(); err != nil {
		return nil, web.Page{}, err
	}
	if len(q.UserIDs) == 0 {
		return nil, web.Page{}, apierr.Invalid("userIds", "at least one id is required")
	}
	if len(q.UserIDs) > 1000 {
		return nil, web.Page{}, apierr.Invalid("userIds", "at most 1000 ids")
	}
	for _, id := range q.UserIDs {
		if strings.TrimSpace(id) == "" || len(id) > 100 {
			return nil, web.Page{}, apierr.Invalid("userIds", "ids must be non-empty strings")
		}
	}
	lq := ListQuery{Sort: q.Sort}
	if err := lq.Validate(); err != nil {
		return nil, web.Page{}, err
	}
	sum := sha256.Sum256([]byte(strings.Join(q.UserIDs, "\x00")))
	scope := "lookup\x00" + hex.EncodeToString(sum[:]) + "\x00" + q.Sort
	offset, err := s.cursor.DecodeOffset(caller.TenantID, scope, q.StartKey)
	if err != nil {
		return nil, web.Page{}, err
	}
	now := s.users.Now()
	recs, err := s.st().BatchGetUsers(ctx, caller.TenantID, q.UserIDs, now)
	if err != nil {
		return nil, web.Page{}, err
	}
	kept := recs[:0]
	seen := map[string]bool{}
	for _, r := range recs {
		if !seen[r.ID] && lq.keep(r, now) {
			seen[r.ID] = true
			kept = append(kept, r)
		}
	}
	if q.Sort != "" {
		desc := strings.HasPrefix(q.Sort, "-")
		field := strings.TrimPrefix(q.Sort, "-")
		sort.SliceStable(kept, func(i, j int) bool {
			a, b := kept[i].Created+kept[i].ID, kept[j].Created+kept[j].ID
			if field == "updatedAt" {
				a, b = kept[i].UpdatedAt+kept[i].ID, kept[j].UpdatedAt+kept[j].ID
			}
			if desc {
				return a > b
			}
			return a < b
		})
	}
	page := web.Page{Limit: q.Limit, StartKey: q.StartKey}
	if offset > len(kept) {
		offset = len(kept)
	}
	end := min(offset+q.Limit, len(kept))
	if end < len(kept) {
		page.NextKey, err = s.cursor.EncodeOffset(caller.TenantID, scope, end)
		if err != nil {
			return nil, web.Page{}, err
		}
	}
	return s.views(ctx, kept[offset:end], caller, q.Include, page)
}

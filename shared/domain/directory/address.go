package directory

import (
	"context"
	"fmt"
	"net/http"
	"sort"
	"strings"

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
	"github.com/loyalty-platform/platform/shared/platform/web"
)

// MaxAddresses is how many delivery addresses one user may keep.
const MaxAddresses = 50

// ErrAddressNotFound is an unknown address id.
var ErrAddressNotFound = apierr.New(apierr.NotFound, "address not found")

// PostalAddress is the postal part of an Address. Every key is returned,
// "" when not given.
type PostalAddress struct {
	Line1      string `json:"line1" dynamodbav:"line1"`
	Line2      string `json:"line2" dynamodbav:"line2,omitempty"`
	City       string `json:"city" dynamodbav:"city,omitempty"`
	Region     string `json:"region" dynamodbav:"region,omitempty"`
	PostalCode string `json:"postalCode" dynamodbav:"postalCode,omitempty"`
	Country    string `json:"country" dynamodbav:"country,omitempty"`
}

// Address is a user's delivery address; `name` and `note` are returned as
// sent ("" when not sent).
type Address struct {
	ID          string         `json:"_id"`
	Name        string         `json:"name"`
	Address     *PostalAddress `json:"address"`
	Coordinates []float64      `json:"coordinates"`
	Note        string         `json:"note"`
}

// Validate checks an address body: `address` (with line1) and
// `coordinates` ([longitude, latitude], exactly two numbers in range) are
// required.
func (a *Address) Validate() error {
	if len(a.Name) > 100 {
		return apierr.Invalid("name", "must be at most 100 characters")
	}
	if len(a.Note) > 500 {
		return apierr.Invalid("note", "must be at most 500 characters")
	}
	if a.Address == nil {
		return apierr.Invalid("address", "is required")
	}
	p := a.Address
	for field, v := range map[string]*string{"line1": &p.Line1, "line2": &p.Line2, "city": &p.City, "region": &p.Region, "postalCode": &p.PostalCode, "country": &p.Country} {
		*v = strings.TrimSpace(*v)
		if len(*v) > 200 {
			return apierr.Invalid("address."+field, "must be at most 200 characters")
		}
	}
	if p.Line1 == "" {
		return apierr.Invalid("address.line1", "is required")
	}
	return ValidatePosition("coordinates", a.Coordinates, true)
}

// ValidatePosition checks a [longitude, latitude] pair.
func ValidatePosition(field string, pos []float64, required bool) error {
	if pos == nil && !required {
		return nil
	}
	if len(pos) != 2 {
		return apierr.Invalid(field, "must be exactly two numbers: [longitude, latitude]")
	}
	if pos[0] < -180 || pos[0] > 180 {
		return apierr.Invalid(field, "longitude must be from -180 to 180")
	}
	if pos[1] < -90 || pos[1] > 90 {
		return apierr.Invalid(field, "latitude must be from -90 to 90")
	}
	return nil
}

// addressRecord is an address as stored under its user.
type addressRecord struct {
	PK      string `dynamodbav:"pk"`
	SK      string `dynamodbav:"sk"`
	Address Address
	Created string `dynamodbav:"created"`
}

func addressSK(id string) string { return "ADDR#" + id }

// Addresses lists a user's addresses, oldest first (GET
// /users/{userId}/addresses).
func (s *Service) Addresses(ctx context.Context, caller actor.Actor, userID string) ([]Address, error) {
	if err := caller.RequireUser(userID); err != nil {
		return nil, err
	}
	r, err := s.st().GetUser(ctx, caller.TenantID, userID, s.users.Now())
	if err != nil {
		return nil, err
	}
	if r.Deleted {
		return nil, fmt.Errorf("list addresses: %w", user.ErrNotFound)
	}
	return s.addresses(ctx, caller.TenantID, userID)
}

func (s *Service) addresses(ctx context.Context, tenantID, userID string) ([]Address, error) {
	kc := expression.Key("pk").Equal(expression.Value(user.UserPK(tenantID, userID))).And(expression.Key("sk").BeginsWith("ADDR#"))
	expr, err := expression.NewBuilder().WithKeyCondition(kc).Build()
	if err != nil {
		return nil, fmt.Errorf("list addresses: %w", err)
	}
	out, err := s.st().DB.Query(ctx, &dynamodb.QueryInput{
		TableName: aws.String(s.st().Users), KeyConditionExpression: expr.KeyCondition(),
		ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values(), ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		return nil, fmt.Errorf("list addresses of %s: %w", userID, err)
	}
	var recs []addressRecord
	if err := attributevalue.UnmarshalListOfMaps(out.Items, &recs); err != nil {
		return nil, fmt.Errorf("list addresses of %s: %w", userID, err)
	}
	sort.SliceStable(recs, func(i, j int) bool { return recs[i].Created+recs[i].SK < recs[j].Created+recs[j].SK })
	list := make([]Address, 0, len(recs))
	for _, r := range recs {
		list = append(list, r.Address)
	}
	return list, nil
}

// SaveAddress creates (id "") or replaces an address and returns the user's
// whole address list.
func (s *Service) SaveAddress(ctx context.Context, caller actor.Actor, userID, id string, a Address) ([]Address, error) {
	if err := caller.RequireUser(userID); err != nil {
		return nil, err
	}
	if id != "" && !web.ValidID(id) {
		return nil, fmt.Errorf("update address: %w", ErrAddressNotFound)
	}
	if err := a.Validate(); err != nil {
		return nil, err
	}
	now := s.users.Now()
	r, err := s.st().GetUser(ctx, caller.TenantID, userID, now)
	if err != nil {
		return nil, err
	}
	if r.Deleted {
		return nil, fmt.Errorf("save address: %w", user.ErrNotFound)
	}
	st := s.st()
	cond := aws.String("attribute_exists(pk)")
	created := clock.Stamp(now)
	userItem := st.UserIsLive(caller.TenantID, userID)
	if id == "" {
		list, err := s.addresses(ctx, caller.TenantID, userID)
		if err != nil {
			return nil, err
		}
		if len(list) >= MaxAddresses {
			return nil, apierr.Invalid("address", "a user may keep at most %d addresses", MaxAddresses)
		}
		id, cond = user.NewID(), aws.String("attribute_not_exists(pk)")
		// The limit is enforced by a counter on the user record, so parallel
		// adds cannot pass it.
		userItem, err = st.UserCounted(r, []user.CounterStep{{Name: "addressCount", Read: len(list), Delta: 1, Max: MaxAddresses}}, expression.UpdateBuilder{}, nil)
		if err != nil {
			return nil, err
		}
	} else {
		out, err := s.st().DB.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(s.st().Users), Key: user.Key(r.PK, addressSK(id)), ConsistentRead: aws.Bool(true)})
		if err != nil {
			return nil, fmt.Errorf("get address %s: %w", id, err)
		}
		if out.Item == nil {
			return nil, fmt.Errorf("update address %s: %w", id, ErrAddressNotFound)
		}
		var old addressRecord
		if err := attributevalue.UnmarshalMap(out.Item, &old); err == nil && old.Created != "" {
			created = old.Created
		}
	}
	a.ID = id
	item, err := attributevalue.MarshalMap(addressRecord{PK: r.PK, SK: addressSK(id), Address: a, Created: created})
	if err != nil {
		return nil, fmt.Errorf("save address: %w", err)
	}
	err = st.Transact(ctx, []types.TransactWriteItem{
		{Put: &types.Put{TableName: aws.String(s.st().Users), Item: item, ConditionExpression: cond}},
		userItem,
	})
	if failed := ddb.FailedConditions(err); len(failed) > 0 {
		if failed[0] == 1 {
			return nil, s.addressLimitOrGone(ctx, caller.TenantID, userID)
		}
		return nil, fmt.Errorf("save address %s: %w", id, ErrAddressNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("save address %s: %w", id, err)
	}
	return s.addresses(ctx, caller.TenantID, userID)
}

// addressLimitOrGone explains a failed condition on the user record when
// adding an address: the user is gone (not found) or the limit is reached.
func (s *Service) addressLimitOrGone(ctx context.Context, tenantID, userID string) error {
	r, err := s.st().GetUser(ctx, tenantID, userID, s.users.Now())
	if err != nil {
		return fmt.Errorf("save address: %w", err)
	}
	if r.Deleted {
		return fmt.Errorf("save address: %w", user.ErrNotFound)
	}
	return apierr.Invalid("address", "a user may keep at most %d addresses", MaxAddresses)
}

// DeleteAddress removes an address and returns the remaining ones.
func (s *Service) DeleteAddress(ctx context.Context, caller actor.Actor, userID, id string) ([]Address, error) {
	if err := caller.RequireUser(userID); err != nil {
		return nil, err
	}
	if !web.ValidID(id) {
		return nil, fmt.Errorf("delete address: %w", ErrAddressNotFound)
	}
	list, err := s.addresses(ctx, caller.TenantID, userID)
	if err != nil {
		return nil, err
	}
	st := s.st()
	pk := user.UserPK(caller.TenantID, userID)
	count, err := st.UserCounted(user.Record{PK: pk, SK: user.SKProfile, ID: userID}, []user.CounterStep{{Name: "addressCount", Read: len(list), Delta: -1}}, expression.UpdateBuilder{}, nil)
	if err != nil {
		return nil, err
	}
	err = st.Transact(ctx, []types.TransactWriteItem{
		{Delete: &types.Delete{TableName: aws.String(s.st().Users), Key: user.Key(pk, addressSK(id)), ConditionExpression: aws.String("attribute_exists(pk)")}},
		count,
	})
	if failed := ddb.FailedConditions(err); len(failed) > 0 {
		if failed[0] == 1 {
			return nil, fmt.Errorf("delete address %s: %w", id, user.ErrNotFound)
		}
		return nil, fmt.Errorf("delete address %s: %w", id, ErrAddressNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("delete address %s: %w", id, err)
	}
	return s.addresses(ctx, caller.TenantID, userID)
}

// handleListAddresses serves GET /users/{userId}/addresses (the user, or
// an admin).
func (s *Service) handleListAddresses(r *http.Request, a actor.Actor) ([]Address, error) {
	return s.Addresses(r.Context(), a, r.PathValue("userId"))
}

// handleCreateAddress serves POST /users/{userId}/addresses (the user, or
// an admin): 201 with the user's addresses.
func (s *Service) handleCreateAddress(r *http.Request, a actor.Actor) ([]Address, error) {
	return s.saveAddress(r, a, "")
}

// handleUpdateAddress serves PUT /users/{userId}/addresses/{addressId}
// (the user, or an admin): the user's addresses.
func (s *Service) handleUpdateAddress(r *http.Request, a actor.Actor) ([]Address, error) {
	return s.saveAddress(r, a, r.PathValue("addressId"))
}

// saveAddress saves the address of the request's body as address id (""
// for a new one) of the path's user.
func (s *Service) saveAddress(r *http.Request, caller actor.Actor, id string) ([]Address, error) {
	var a Address
	if err := web.Decode(r, &addressBody{&a}); err != nil {
		return nil, err
	}
	return s.SaveAddress(r.Context(), caller, r.PathValue("userId"), id, a)
}

// handleDeleteAddress serves DELETE /users/{userId}/addresses/{addressId}
// (the user, or an admin): the remaining addresses.
func (s *Service) handleDeleteAddress(r *http.Request, a actor.Actor) ([]Address, error) {
	return s.DeleteAddress(r.Context(), a, r.PathValue("userId"), r.PathValue("addressId"))
}

// addressBody decodes an address create/update body; `_id` may not be sent.
type addressBody struct{ *Address }

// UnmarshalJSON decodes the body strictly into the address fields.
func (b *addressBody) UnmarshalJSON(data []byte) error {
	var in struct {
		Name        string         `json:"name"`
		Address     *PostalAddress `json:"address"`
		Coordinates []float64      `json:"coordinates"`
		Note        string         `json:"note"`
	}
	if err := web.DecodeBytes(data, &in); err != nil {
		return err
	}
	*b.Address = Address{Name: in.Name, Address: in.Address, Coordinates: in.Coordinates, Note: in.Note}
	return nil
}

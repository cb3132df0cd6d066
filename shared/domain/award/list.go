package award

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/loyalty-platform/platform/shared/domain/perk"
	"github.com/loyalty-platform/platform/shared/platform/actor"
	"github.com/loyalty-platform/platform/shared/platform/apierr"
	"github.com/loyalty-platform/platform/shared/platform/ddb"
	"github.com/loyalty-platform/platform/shared/platform/timefilter"
	"github.com/loyalty-platform/platform/shared/platform/web"
)

// Fields an award list may be narrowed to (the `fields` parameter).
var Fields = []string{"_id", "tenantId", "userId", "loyaltyProvider", "perkId", "points", "updatedAt"}

// ListQuery are the parameters of GET /awards.
type ListQuery struct {
	// UserID lists one user's awards (admins; a user always gets their
	// own).
	UserID   string
	Filter   Filter
	Fields   []string
	Limit    int
	StartKey string
	// Scope identifies the query for its paging keys.
	Scope string
}

// List returns a page of awards (GET /awards): a user's own awards, one
// user's for an admin with userId, or the tenant's awards for an admin
// (newest change first). The tenant-wide list is the stored awards: it
// does not list the virtual awards of global perks (every user holds
// those) and it lists CLUB and LEVEL awards whatever their user's
// membership today.
func (s *Service) List(ctx context.Context, caller actor.Actor, q ListQuery) ([]Award, web.Page, error) {
	if err := caller.RequireAuth(); err != nil {
		return nil, web.Page{}, err
	}
	if !caller.IsAdmin() {
		if q.UserID != "" && q.UserID != caller.UserID {
			return nil, web.Page{}, web.ErrAdminOnly("userId")
		}
		q.UserID = caller.UserID
	}
	if q.UserID == "" {
		return s.tenantList(ctx, caller.TenantID, q)
	}
	if !web.ValidID(q.UserID) {
		return nil, web.Page{}, ErrUserNotFound
	}
	if _, err := s.Users.Person(ctx, caller.TenantID, q.UserID); err != nil {
		return nil, web.Page{}, err
	}
	all, err := s.Holdings(ctx, caller.TenantID, q.UserID, q.Filter)
	if err != nil {
		return nil, web.Page{}, err
	}
	scope := "awards|" + q.UserID + "|" + q.Scope
	offset, err := s.Cursor.DecodeOffset(caller.TenantID, scope, q.StartKey)
	if err != nil {
		return nil, web.Page{}, err
	}
	offset = min(offset, len(all))
	end := min(offset+q.Limit, len(all))
	page := web.Page{Limit: q.Limit, Count: end - offset, StartKey: q.StartKey}
	if end < len(all) {
		if page.NextKey, err = s.Cursor.EncodeOffset(caller.TenantID, scope, end); err != nil {
			return nil, web.Page{}, err
		}
	}
	return all[offset:end], page, nil
}

// tenantList pages the tenant index (newest change first), presenting each
// award with its perk and keeping those the filter keeps.
func (s *Service) tenantList(ctx context.Context, tenantID string, q ListQuery) ([]Award, web.Page, error) {
	var (
		perks []perk.Perk
		ov    map[string]Overlay
	)
	if err := parallel(
		func() (err error) { perks, err = s.Perks.All(ctx, tenantID); return err },
		func() (err error) { ov, err = s.overlays(ctx, tenantID); return err },
	); err != nil {
		return nil, web.Page{}, fmt.Errorf("list awards: %w", err)
	}
	byID := make(map[string]perk.Perk, len(perks))
	for _, p := range perks {
		byID[p.ID] = p
	}
	scope := "awards|tenant|" + q.Scope
	start, err := s.Cursor.Decode(tenantID, scope, q.StartKey)
	if err != nil {
		return nil, web.Page{}, err
	}
	in := s.tenantQuery(tenantID, q.Filter.Updated)
	var presented []Award
	now := s.Clock.Now()
	keep := func(_ context.Context, items []ddb.Item) ([]ddb.Item, error) {
		var out []ddb.Item
		for _, it := range items {
			var rec record
			if err := attributevalue.UnmarshalMap(it, &rec); err != nil {
				return nil, err
			}
			p, ok := byID[rec.PerkID]
			if !ok {
				continue
			}
			a := view(p, rec.at(now), overlayOf(ov, p.ID))
			if !q.Filter.keeps(a) {
				continue
			}
			presented = append(presented, a)
			out = append(out, it)
		}
		return out, nil
	}
	items, next, err := ddb.QueryPage(ctx, s.DB, in, start, q.Limit, keep)
	if err != nil {
		return nil, web.Page{}, fmt.Errorf("list awards: %w", err)
	}
	// QueryPage's look-ahead for a next page runs keep on items that are
	// not in this page; the page is its first len(items) presented awards.
	presented = presented[:len(items)]
	nk, err := s.Cursor.Encode(tenantID, scope, next)
	if err != nil {
		return nil, web.Page{}, err
	}
	return presented, web.Page{Limit: q.Limit, Count: len(presented), StartKey: q.StartKey, NextKey: nk}, nil
}

// tenantQuery is the Query of the tenant index, newest first, with the
// updatedAt conditions a key condition can say (Filter.keeps checks them
// all again).
func (s *Service) tenantQuery(tenantID string, conds []timefilter.Cond) dynamodb.QueryInput {
	values := map[string]types.AttributeValue{":pk": str(tenantPK(tenantID))}
	cond := "gsi1pk = :pk"
	if kc := timefilter.KeyCondition("gsi1sk", conds, values); kc != "" {
		cond += " AND " + kc
	}
	return dynamodb.QueryInput{
		TableName: aws.String(s.Table), IndexName: aws.String("gsi1"),
		KeyConditionExpression: aws.String(cond), ExpressionAttributeValues: values,
		ScanIndexForward: aws.Bool(false),
	}
}

// project narrows awards to fields (none: whole awards).
func project(awards []Award, fields []string) ([]any, error) {
	out := make([]any, 0, len(awards))
	for _, a := range awards {
		if len(fields) == 0 {
			out = append(out, a)
			continue
		}
		b, err := json.Marshal(a)
		if err != nil {
			return nil, err
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			return nil, err
		}
		p := map[string]any{}
		for _, f := range fields {
			p[f] = m[f]
		}
		out = append(out, p)
	}
	return out, nil
}

// parseFields reads the `fields` parameter.
func parseFields(r *http.Request) ([]string, error) {
	fields := web.ListParam(r, "fields")
	for _, f := range fields {
		if !slices.Contains(Fields, f) {
			return nil, apierr.Invalid("fields", "unknown field %q: use %s", f, strings.Join(Fields, ", "))
		}
	}
	return fields, nil
}

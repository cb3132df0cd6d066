package audience

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/loyalty-platform/platform/shared/domain/action"
	"github.com/loyalty-platform/platform/shared/platform/actor"
	"github.com/loyalty-platform/platform/shared/platform/apierr"
	"github.com/loyalty-platform/platform/shared/platform/clock"
	"github.com/loyalty-platform/platform/shared/platform/ddb"
	"github.com/loyalty-platform/platform/shared/platform/web"
)

// AddInput is the body of POST /segments/{segmentId}/members.
type AddInput struct {
	UserIDs []string `json:"userIds"`
}

// AddResult is the answer of POST /segments/{segmentId}/members: each
// user id in one list.
type AddResult struct {
	// Added are the users who joined.
	Added []string `json:"added"`
	// Renewed are members of a ROLLING segment whose membership restarted.
	Renewed []string `json:"renewed"`
	// AlreadyMembers were members already (SCHEDULED and PERSISTENT
	// memberships are not changed by adding again).
	AlreadyMembers []string `json:"alreadyMembers"`
	// Unknown ids name no live user of the tenant.
	Unknown []string `json:"unknown"`
}

// Member is one membership as listed.
type Member struct {
	UserID    string `json:"userId"`
	SegmentID string `json:"segmentId"`
	JoinedAt  string `json:"joinedAt"`
	RenewedAt string `json:"renewedAt,omitempty"`
	// EndsAt is when the membership ends (absent: never).
	EndsAt string `json:"endsAt,omitempty"`
}

func (m membership) view() Member {
	v := Member{UserID: m.UserID, SegmentID: m.SegmentID, JoinedAt: m.JoinedAt, RenewedAt: m.RenewedAt}
	if m.EndsAt != 0 {
		v.EndsAt = clock.Stamp(time.Unix(m.EndsAt, 0))
	}
	return v
}

// maxAttempts bounds the retries of one membership change that lost a
// race with another.
const maxAttempts = 5

// AddMembers adds users to a segment (POST /segments/{segmentId}/members,
// admin): up to MaxMembersPerCall ids; unknown ids are reported, not
// refused. Each join is its own transaction: the membership, its
// SEGMENT_JOINED action and the OnJoin hooks (a membership that had ended
// without being removed yet is first recorded as left, EXPIRED).
func (s *Service) AddMembers(ctx context.Context, caller actor.Actor, segmentID string, in AddInput) (AddResult, error) {
	if err := caller.RequireAdmin(); err != nil {
		return AddResult{}, err
	}
	if !web.ValidID(segmentID) {
		return AddResult{}, ErrNotFound
	}
	if in.UserIDs == nil {
		return AddResult{}, apierr.Invalid("userIds", "is required: an array of user ids")
	}
	if len(in.UserIDs) == 0 {
		return AddResult{}, apierr.Invalid("userIds", "must hold at least one user id")
	}
	if len(in.UserIDs) > MaxMembersPerCall {
		return AddResult{}, ErrTooManyMembers
	}
	out := AddResult{Added: []string{}, Renewed: []string{}, AlreadyMembers: []string{}, Unknown: []string{}}
	var ids []string
	for i, id := range in.UserIDs {
		switch {
		case id == "":
			return AddResult{}, apierr.Invalid(fmt.Sprintf("userIds[%d]", i), "must not be empty")
		case slices.Contains(in.UserIDs[:i], id):
		case !web.ValidID(id):
			out.Unknown = append(out.Unknown, id)
		default:
			ids = append(ids, id)
		}
	}
	seg, _, err := s.st().getSegment(ctx, caller.TenantID, segmentID)
	if err != nil {
		return AddResult{}, err
	}
	var (
		people  map[string]Person
		current map[string]membership
		title   = caller.TenantTitle
	)
	fns := []func() error{
		func() (err error) { people, err = s.Users.People(ctx, caller.TenantID, ids); return err },
		func() (err error) {
			current, err = s.st().getMemberships(ctx, caller.TenantID, segmentID, ids)
			return err
		},
	}
	if title == "" && s.Tenants != nil {
		fns = append(fns, func() (err error) { title, err = s.Tenants.Title(ctx, caller.TenantID); return err })
	}
	if err := parallel(fns...); err != nil {
		return AddResult{}, fmt.Errorf("add members to %s: %w", segmentID, err)
	}
	for _, uid := range ids {
		p, ok := people[uid]
		if !ok {
			out.Unknown = append(out.Unknown, uid)
			continue
		}
		m, had := current[uid]
		result, err := s.join(ctx, title, seg, p, m, had)
		if err != nil {
			return AddResult{}, fmt.Errorf("add %s to %s: %w", uid, segmentID, err)
		}
		switch result {
		case joined:
			out.Added = append(out.Added, uid)
		case renewed:
			out.Renewed = append(out.Renewed, uid)
		default:
			out.AlreadyMembers = append(out.AlreadyMembers, uid)
		}
	}
	return out, nil
}

type joinResult int

const (
	joined joinResult = iota
	renewed
	unchanged
)

// join adds one user to a segment (see AddMembers). m is the membership
// read before, when had.
func (s *Service) join(ctx context.Context, tenantTitle string, seg Segment, p Person, m membership, had bool) (joinResult, error) {
	res, acts, err := s.joinOnce(ctx, tenantTitle, seg, p, m, had)
	if err == nil {
		s.react(ctx, acts...)
	}
	return res, err
}

func (s *Service) joinOnce(ctx context.Context, tenantTitle string, seg Segment, p Person, m membership, had bool) (joinResult, []action.Action, error) {
	for attempt := 0; attempt < maxAttempts; attempt++ {
		if attempt > 0 {
			fresh, err := s.st().getMemberships(ctx, seg.TenantID, seg.ID, []string{p.ID})
			if err != nil {
				return 0, nil, err
			}
			m, had = fresh[p.ID]
		}
		tx := &ddb.Tx{}
		w, err := s.addJoin(ctx, tx, tenantTitle, seg, p, m, had, s.Clock.Now())
		if err != nil || w.Result == unchanged {
			return w.Result, nil, err
		}
		err = tx.Run(ctx, s.DB)
		if err == nil {
			return w.Result, w.Actions, nil
		}
		if ddb.CanceledReasons(err) == nil && !ddb.IsTransactionConflict(err) {
			return 0, nil, err
		}
	}
	return 0, nil, ErrConcurrent
}

// JoinWrite is what AddJoin added to a transaction.
type JoinWrite struct {
	Result joinResult
	// At is the index of the membership's write: its failure means the
	// membership changed since it was read (read again).
	At int
	// Actions are the actions recorded (SEGMENT_JOINED, and SEGMENT_LEFT
	// of an ended membership not removed yet); hooks add theirs.
	Actions []action.Action
}

// Changed reports whether AddJoin added anything (false: the user was a
// member already and nothing changes).
func (w JoinWrite) Changed() bool { return w.Result != unchanged }

// AddJoin reads a user's membership of a segment and adds to tx what
// adding them does (see AddMembers): a join with its actions and hooks, a
// ROLLING renewal, or nothing for a member whose membership does not move.
func (s *Service) AddJoin(ctx context.Context, tx *ddb.Tx, tenantTitle string, seg Segment, p Person, meta map[string]any, now time.Time) (JoinWrite, error) {
	cur, err := s.st().getMemberships(ctx, seg.TenantID, seg.ID, []string{p.ID})
	if err != nil {
		return JoinWrite{}, err
	}
	m, had := cur[p.ID]
	return s.addJoinMeta(ctx, tx, tenantTitle, seg, p, m, had, meta, now)
}

func (s *Service) addJoin(ctx context.Context, tx *ddb.Tx, tenantTitle string, seg Segment, p Person, m membership, had bool, now time.Time) (JoinWrite, error) {
	return s.addJoinMeta(ctx, tx, tenantTitle, seg, p, m, had, nil, now)
}

func (s *Service) addJoinMeta(ctx context.Context, tx *ddb.Tx, tenantTitle string, seg Segment, p Person, m membership, had bool, meta map[string]any, now time.Time) (JoinWrite, error) {
	st := s.st()
	var end time.Time
	if seg.Expires() {
		horizon, err := ParseHorizon(*seg.ExpiryHorizon)
		if err != nil {
			return JoinWrite{}, err
		}
		end = EndOf(now, horizon)
	}
	var w JoinWrite
	switch {
	case had && m.live(now) && seg.Type == Rolling && m.EndsAt != 0 && end.Unix() > m.EndsAt:
		next := m
		next.setEnd(end)
		w.At = tx.Add("membership", st.memberRenew(next, m.EndsAt, now))
		w.Result = renewed
	case had && m.live(now):
		w.Result = unchanged
	default:
		if had {
			// Ended, not removed yet: record the leave first.
			a, err := s.addChange(ctx, tx, ActionLeft, tenantTitle, seg, p, ReasonExpired, meta, now, &s.OnLeave)
			if err != nil {
				return JoinWrite{}, err
			}
			w.Actions = append(w.Actions, a)
		}
		put, err := st.memberPut(newMembership(seg.TenantID, seg.ID, p.ID, now, end), now)
		if err != nil {
			return JoinWrite{}, err
		}
		w.At = tx.Add("membership", put)
		a, err := s.addChange(ctx, tx, ActionJoined, tenantTitle, seg, p, "", meta, now, &s.OnJoin)
		if err != nil {
			return JoinWrite{}, err
		}
		w.Actions = append(w.Actions, a)
		w.Result = joined
	}
	return w, nil
}

// LeaveWrite is what AddLeave added to a transaction.
type LeaveWrite struct {
	// At is the index of the membership's delete (conditional on it being
	// live): its failure means the user is not a member.
	At     int
	Action action.Action
}

// AddLeave adds to tx a user's leaving a segment (see RemoveMember) for
// reason: the membership's delete, SEGMENT_LEFT and the OnLeave hooks.
func (s *Service) AddLeave(ctx context.Context, tx *ddb.Tx, tenantTitle string, seg Segment, p Person, reason string, meta map[string]any, now time.Time) (LeaveWrite, error) {
	w := LeaveWrite{At: tx.Add("membership", s.st().memberDelete(seg.TenantID, seg.ID, p.ID, 0, now))}
	a, err := s.addChange(ctx, tx, ActionLeft, tenantTitle, seg, p, reason, meta, now, &s.OnLeave)
	w.Action = a
	return w, err
}

// IsMember reports whether a user is a live member of a segment.
func (s *Service) IsMember(ctx context.Context, tenantID, segmentID, userID string) (bool, error) {
	cur, err := s.st().getMemberships(ctx, tenantID, segmentID, []string{userID})
	if err != nil {
		return false, err
	}
	m, ok := cur[userID]
	return ok && m.live(s.Clock.Now()), nil
}

// Find returns a segment of a tenant (for other domains).
func (s *Service) Find(ctx context.Context, tenantID, id string) (Segment, error) {
	if !web.ValidID(id) {
		return Segment{}, ErrNotFound
	}
	seg, _, err := s.st().getSegment(ctx, tenantID, id)
	return seg, err
}

// changeAction returns the action of a membership change.
func changeAction(typ, tenantTitle string, seg Segment, p Person, reason string, extra map[string]any, now time.Time, end time.Time) action.Action {
	meta := map[string]any{"segmentId": seg.ID, "segmentTitle": seg.Title}
	maps.Copy(meta, extra)
	if reason != "" {
		meta["reason"] = reason
	}
	if typ == ActionJoined && !end.IsZero() {
		meta["endsAt"] = clock.Stamp(end)
	}
	return action.Action{
		ID: action.NewID(), Type: typ, TenantID: seg.TenantID, Metadata: meta, When: action.WhenAt(now, time.UTC),
		Context: action.Context{
			Tenant: action.TenantRef{ID: seg.TenantID, Title: tenantTitle},
			User:   &action.UserRef{ID: p.ID, Name: p.Name, PrimaryPlatform: p.PrimaryPlatform},
		},
	}
}

// addChange adds a membership change's action and runs its hooks into tx.
func (s *Service) addChange(ctx context.Context, tx *ddb.Tx, typ, tenantTitle string, seg Segment, p Person, reason string, meta map[string]any, now time.Time, hooks interface {
	Run(context.Context, *ddb.Tx, Change) error
}) (action.Action, error) {
	var end time.Time
	if typ == ActionJoined && seg.Expires() {
		h, err := ParseHorizon(*seg.ExpiryHorizon)
		if err != nil {
			return action.Action{}, err
		}
		end = EndOf(now, h)
	}
	a, err := s.Actions.Record(tx, changeAction(typ, tenantTitle, seg, p, reason, meta, now, end))
	if err != nil {
		return action.Action{}, err
	}
	return a, hooks.Run(ctx, tx, Change{TenantID: seg.TenantID, TenantTitle: tenantTitle, Segment: seg, User: p, Reason: reason, At: now, Actor: a})
}

// RemoveMember removes a user from a segment (DELETE
// /segments/{segmentId}/members/{userId}, admin): the membership, its
// SEGMENT_LEFT action (reason REMOVED) and the OnLeave hooks in one
// transaction. A user who is not a live member is 404.
func (s *Service) RemoveMember(ctx context.Context, caller actor.Actor, segmentID, userID string) error {
	if err := caller.RequireAdmin(); err != nil {
		return err
	}
	if !web.ValidID(segmentID) {
		return ErrNotFound
	}
	if !web.ValidID(userID) {
		return ErrNotMember
	}
	seg, _, err := s.st().getSegment(ctx, caller.TenantID, segmentID)
	if err != nil {
		return err
	}
	title := caller.TenantTitle
	if title == "" && s.Tenants != nil {
		if title, err = s.Tenants.Title(ctx, caller.TenantID); err != nil {
			return err
		}
	}
	people, err := s.Users.People(ctx, caller.TenantID, []string{userID})
	if err != nil {
		return err
	}
	p, ok := people[userID]
	if !ok {
		// A deleted user's membership may still be removed.
		p = Person{ID: userID}
	}
	for attempt := 0; attempt < maxAttempts; attempt++ {
		now := s.Clock.Now()
		tx := &ddb.Tx{}
		w, err := s.AddLeave(ctx, tx, title, seg, p, ReasonRemoved, nil, now)
		if err != nil {
			return err
		}
		err = tx.Run(ctx, s.DB)
		switch {
		case err == nil:
			s.react(ctx, w.Action)
			return nil
		case ddb.Failed(err, 0):
			return ErrNotMember
		case ddb.IsTransactionConflict(err):
			continue
		default:
			return fmt.Errorf("remove %s from %s: %w", userID, segmentID, err)
		}
	}
	return ErrConcurrent
}

// ListMembers returns a page of a segment's live members (GET
// /segments/{segmentId}/members, admin).
func (s *Service) ListMembers(ctx context.Context, caller actor.Actor, segmentID string, limit int, startKey string) ([]Member, web.Page, error) {
	if err := caller.RequireAdmin(); err != nil {
		return nil, web.Page{}, err
	}
	if !web.ValidID(segmentID) {
		return nil, web.Page{}, ErrNotFound
	}
	if _, _, err := s.st().getSegment(ctx, caller.TenantID, segmentID); err != nil {
		return nil, web.Page{}, err
	}
	scope := "members|" + segmentID
	start, err := s.Cursor.Decode(caller.TenantID, scope, startKey)
	if err != nil {
		return nil, web.Page{}, err
	}
	now := s.Clock.Now()
	keep := func(_ context.Context, items []ddb.Item) ([]ddb.Item, error) {
		var out []ddb.Item
		for _, it := range items {
			var m membership
			if err := attributevalue.UnmarshalMap(it, &m); err != nil {
				return nil, err
			}
			if m.live(now) {
				out = append(out, it)
			}
		}
		return out, nil
	}
	items, next, err := ddb.QueryPage(ctx, s.DB, s.st().membersQuery(caller.TenantID, segmentID), start, limit, keep)
	if err != nil {
		return nil, web.Page{}, fmt.Errorf("list members of %s: %w", segmentID, err)
	}
	var ms []membership
	if err := attributevalue.UnmarshalListOfMaps(items, &ms); err != nil {
		return nil, web.Page{}, fmt.Errorf("list members of %s: %w", segmentID, err)
	}
	out := make([]Member, 0, len(ms))
	for _, m := range ms {
		out = append(out, m.view())
	}
	nk, err := s.Cursor.Encode(caller.TenantID, scope, next)
	if err != nil {
		return nil, web.Page{}, err
	}
	return out, web.Page{Limit: limit, Count: len(out), StartKey: startKey, NextKey: nk}, nil
}

// SegmentsOf returns the segments a user is a live member of (segments
// since deleted are left out), in id order.
func (s *Service) SegmentsOf(ctx context.Context, tenantID, userID string) ([]string, error) {
	var (
		ms   []membership
		segs []Segment
	)
	if err := parallel(
		func() (err error) { ms, err = s.st().ofUser(ctx, tenantID, userID); return err },
		func() (err error) { segs, err = s.all(ctx, tenantID); return err },
	); err != nil {
		return nil, err
	}
	exists := map[string]bool{}
	for _, sg := range segs {
		exists[sg.ID] = true
	}
	now := s.Clock.Now()
	out := []string{}
	for _, m := range ms {
		if m.live(now) && exists[m.SegmentID] {
			out = append(out, m.SegmentID)
		}
	}
	slices.Sort(out)
	return out, nil
}

// SegmentRef is a segment as a user's include=segments lists it.
type SegmentRef struct {
	ID       string
	Title    string
	Included bool
}

// UserSegments returns every segment of the tenant, in creation order,
// marked whether the user is a live member.
func (s *Service) UserSegments(ctx context.Context, tenantID, userID string) ([]SegmentRef, error) {
	var (
		ms   []membership
		segs []Segment
	)
	if err := parallel(
		func() (err error) { ms, err = s.st().ofUser(ctx, tenantID, userID); return err },
		func() (err error) { segs, err = s.all(ctx, tenantID); return err },
	); err != nil {
		return nil, err
	}
	now := s.Clock.Now()
	in := map[string]bool{}
	for _, m := range ms {
		if m.live(now) {
			in[m.SegmentID] = true
		}
	}
	out := make([]SegmentRef, 0, len(segs))
	for _, sg := range segs {
		out = append(out, SegmentRef{ID: sg.ID, Title: sg.Title, Included: in[sg.ID]})
	}
	return out, nil
}

// MemberCheck is a ConditionCheck, for another domain's transaction, that
// a user is a live member of a segment at now.
func (s *Service) MemberCheck(tenantID, segmentID, userID string, now time.Time) types.TransactWriteItem {
	return s.st().memberCheck(tenantID, segmentID, userID, now)
}

// Members returns the live members of a segment, at most max (more is
// 422: use the bulk award import).
func (s *Service) Members(ctx context.Context, tenantID, segmentID string, max int) ([]string, error) {
	if _, _, err := s.st().getSegment(ctx, tenantID, segmentID); err != nil {
		if apierr.CodeOf(err) == apierr.NotFound {
			return nil, apierr.Invalid("segmentId", "no such segment")
		}
		return nil, err
	}
	in := s.st().membersQuery(tenantID, segmentID)
	now := s.Clock.Now()
	var out []string
	for {
		page, err := s.DB.Query(ctx, &in)
		if err != nil {
			return nil, fmt.Errorf("members of %s: %w", segmentID, err)
		}
		var ms []membership
		if err := attributevalue.UnmarshalListOfMaps(page.Items, &ms); err != nil {
			return nil, fmt.Errorf("members of %s: %w", segmentID, err)
		}
		for _, m := range ms {
			if m.live(now) {
				out = append(out, m.UserID)
			}
		}
		if len(out) > max {
			return nil, apierr.Invalid("segmentId", "the segment has more than %d members: grant it with the bulk award import (POST /awards/imports)", max)
		}
		if len(page.LastEvaluatedKey) == 0 {
			return out, nil
		}
		in.ExclusiveStartKey = page.LastEvaluatedKey
	}
}

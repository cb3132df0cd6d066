package location

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/loyalty-platform/platform/shared/platform/apierr"
	"github.com/loyalty-platform/platform/shared/platform/clock"
	"github.com/loyalty-platform/platform/shared/platform/ddb"
)

// MaxTagGroups is how many tag groups a tenant may have.
const MaxTagGroups = 100

// TagGroup is a titled set of location tags an app shows as a filter
// (for example "Cuisine": pizza, burgers). `sort` orders the groups.
type TagGroup struct {
	ID      string   `json:"id" dynamodbav:"id"`
	Title   string   `json:"title" dynamodbav:"title"`
	Sort    int      `json:"sort" dynamodbav:"sort"`
	Tags    []string `json:"tags" dynamodbav:"tags"`
	Created string   `json:"created" dynamodbav:"created"`
	Updated string   `json:"updated" dynamodbav:"updated"`
}

// TagGroupInput is the body of POST /locations/taggroups (title required)
// and PUT /locations/taggroups/{tagGroupId} (absent fields unchanged).
type TagGroupInput struct {
	Title *string   `json:"title"`
	Sort  *int      `json:"sort"`
	Tags  *[]string `json:"tags"`
}

// apply validates in and sets its fields on g.
func (in TagGroupInput) apply(g *TagGroup) error {
	if in.Title != nil {
		t := strings.TrimSpace(*in.Title)
		if t == "" {
			return apierr.Invalid("title", "is required")
		}
		if err := checkText("title", t, MaxShortText, false); err != nil {
			return err
		}
		g.Title = t
	}
	if in.Sort != nil {
		if *in.Sort < -1000000 || *in.Sort > 1000000 {
			return apierr.Invalid("sort", "must be from -1000000 to 1000000")
		}
		g.Sort = *in.Sort
	}
	if in.Tags != nil {
		tags, err := checkList("tags", *in.Tags)
		if err != nil {
			return err
		}
		g.Tags = tags
	}
	if g.Tags == nil {
		g.Tags = []string{}
	}
	return nil
}

// TagGroups returns the tenant's tag groups ordered by sort, then title.
func (s *Service) TagGroups(ctx context.Context, tenantID string) ([]TagGroup, error) {
	groups, err := s.st().tagGroups(ctx, tenantID)
	if err != nil {
		return nil, err
	}
	for i := range groups {
		if groups[i].Tags == nil {
			groups[i].Tags = []string{}
		}
	}
	sort.SliceStable(groups, func(i, j int) bool {
		a, b := groups[i], groups[j]
		if a.Sort != b.Sort {
			return a.Sort < b.Sort
		}
		if a.Title != b.Title {
			return strings.ToLower(a.Title) < strings.ToLower(b.Title)
		}
		return a.ID < b.ID
	})
	if groups == nil {
		groups = []TagGroup{}
	}
	return groups, nil
}

// CreateTagGroup adds a tag group; a tenant has at most MaxTagGroups (a
// counter written in the same transaction as the group, so parallel
// creates cannot exceed it).
func (s *Service) CreateTagGroup(ctx context.Context, tenantID string, in TagGroupInput) (TagGroup, error) {
	if in.Title == nil {
		return TagGroup{}, apierr.Invalid("title", "is required")
	}
	now := clock.Stamp(s.Clock.Now())
	g := TagGroup{ID: newID(), Created: now, Updated: now}
	if err := in.apply(&g); err != nil {
		return TagGroup{}, err
	}
	var err error
	for attempt := 0; attempt < maxWriteAttempts; attempt++ {
		backoff(attempt)
		// ddb.Transact already retried conflicts on the counter; many
		// parallel creates may still collide, so retry a little more.
		if err = s.st().createTagGroup(ctx, tenantID, g); !ddb.IsTransactionConflict(err) {
			break
		}
	}
	if err != nil {
		return TagGroup{}, err
	}
	return g, nil
}

// UpdateTagGroup changes the fields of a tag group that in sets. The write
// is conditional on the version read; a concurrent change makes it read
// again and re-apply in (a few times, then ErrTagGroupConflict), so parallel
// updates of different fields all persist.
func (s *Service) UpdateTagGroup(ctx context.Context, tenantID, id string, in TagGroupInput) (TagGroup, error) {
	if !validID(id) {
		return TagGroup{}, fmt.Errorf("update tag group: %w", ErrTagGroupNotFound)
	}
	for attempt := 0; attempt < maxWriteAttempts; attempt++ {
		backoff(attempt)
		r, err := s.st().getTagGroup(ctx, tenantID, id)
		if err != nil {
			return TagGroup{}, err
		}
		g := r.TagGroup
		if err := in.apply(&g); err != nil {
			return TagGroup{}, err
		}
		g.Updated = clock.Stamp(s.Clock.Now())
		err = s.st().replaceTagGroup(ctx, tenantID, g, r.Version)
		if !errors.Is(err, errTagGroupChanged) {
			if err != nil {
				return TagGroup{}, err
			}
			return g, nil
		}
	}
	return TagGroup{}, fmt.Errorf("update tag group %s: %w", id, ErrTagGroupConflict)
}

// DeleteTagGroup removes a tag group (the locations' tags stay).
func (s *Service) DeleteTagGroup(ctx context.Context, tenantID, id string) error {
	if !validID(id) {
		return fmt.Errorf("delete tag group: %w", ErrTagGroupNotFound)
	}
	return s.st().deleteTagGroup(ctx, tenantID, id)
}

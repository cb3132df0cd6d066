package rule

import (
	"context"
	"encoding/json"
	"fmt"
)

// ruleSet is a tenant's rules as the engine runs them: the enabled rules
// by the action type they trigger on (a short name such as CHECKIN under
// its type), in creation order, each with its conditions' values decoded
// once, and the tenant's rules version they were read at (see
// rulesVersion). It is shared between requests and never changed.
type ruleSet struct {
	version int64
	byType  map[string][]compiled
}

// compiled is an enabled rule with its conditions' values decoded.
type compiled struct {
	Rule
	wants []any
}

// newRuleSet indexes a tenant's rules read at version.
func newRuleSet(version int64, all []Rule) *ruleSet {
	s := &ruleSet{version: version, byType: map[string][]compiled{}}
	for _, r := range all {
		if !r.Enabled {
			continue
		}
		c := compiled{Rule: r, wants: make([]any, len(r.Conditions))}
		for i, cond := range r.Conditions {
			c.wants[i] = decodeValue(cond.Value)
		}
		typ := canonical(r.Trigger)
		s.byType[typ] = append(s.byType[typ], c)
	}
	return s
}

// on returns the enabled rules an action of type typ triggers.
func (s *ruleSet) on(typ string) []compiled {
	if s == nil {
		return nil
	}
	return s.byType[typ]
}

// matches reports whether every condition of the rule holds on doc.
func (c compiled) matches(doc map[string]any) bool {
	for i, cond := range c.Conditions {
		if !holdsValue(cond, c.wants[i], doc) {
			return false
		}
	}
	return true
}

// decodeValue is a condition's value as JSON decodes it (nil without one,
// or for one that does not decode: validation refuses those).
func decodeValue(raw json.RawMessage) any {
	var want any
	if len(raw) > 0 {
		_ = json.Unmarshal(raw, &want)
	}
	return want
}

// rulesOf returns a tenant's rules. Without a Cache it reads them every
// time. With one, each run first reads the tenant's rules version (one
// consistent GetItem, see rulesVersion) and reads the rules again only
// when the version differs from the cached one's (or the cache's window
// passed): every rule change bumps the version once it is written and
// before it answers (store.bump), so a rule created, changed or deleted in any container applies
// to the next action recorded after that change's answer, here and on the
// stream, without a query of the rules per action.
func (e *Engine) rulesOf(ctx context.Context, tenantID string) (*ruleSet, error) {
	if e.Cache == nil {
		all, err := e.st().all(ctx, tenantID)
		if err != nil {
			return nil, err
		}
		return newRuleSet(0, all), nil
	}
	version, err := e.st().version(ctx, tenantID)
	if err != nil {
		return nil, err
	}
	now := e.Clock.Now()
	if v, ok := e.Cache.Value(tenantID, cacheName, now); ok {
		if s, ok := v.(*ruleSet); ok && s.version == version {
			return s, nil
		}
	}
	// The version was read before the rules, and a change bumps it only
	// after its write: rules read with a version include every change
	// that bumped up to it, and a change written meanwhile bumps the
	// version past the one they are kept with (the next run reads again).
	all, err := e.st().all(ctx, tenantID)
	if err != nil {
		return nil, fmt.Errorf("rules of tenant %s: %w", tenantID, err)
	}
	s := newRuleSet(version, all)
	e.Cache.SetValue(tenantID, cacheName, s, now)
	return s, nil
}

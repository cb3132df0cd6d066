package location

import (
	"context"
	"fmt"

	"github.com/loyalty-platform/platform/shared/platform/clock"
)

// Seed writes locations for tenantID straight to the table with
// BatchWriteItem (no transactions): tests and benchmarks that need
// thousands of locations use it. Each location is validated and given an
// id, timestamps and a state as Create would.
func (s *Service) Seed(ctx context.Context, tenantID string, locs []Location) ([]Location, error) {
	now := clock.Stamp(s.Clock.Now())
	recs := make([]record, 0, len(locs))
	out := make([]Location, 0, len(locs))
	for i, l := range locs {
		if l.State == "" {
			l.State = DefaultState
		}
		if err := l.Validate(); err != nil {
			return nil, fmt.Errorf("seed location %d: %w", i, err)
		}
		l.ID, l.TenantID, l.Created, l.Updated = newID(), tenantID, now, now
		recs = append(recs, newRecord(l, 1))
		out = append(out, l)
	}
	if err := s.st().seed(ctx, recs); err != nil {
		return nil, err
	}
	s.cache.forget(tenantID)
	return out, nil
}

// DropCache forgets every cached summary, so the next list reads the table.
func (s *Service) DropCache() {
	s.cache.mu.Lock()
	defer s.cache.mu.Unlock()
	s.cache.tenants, s.cache.size = nil, 0
}

// ReadSummaries reads every summary of a tenant from the table, bypassing
// the cache, and returns how many there are (for benchmarks).
func (s *Service) ReadSummaries(ctx context.Context, tenantID string) (int, error) {
	sums, err := s.st().summaries(ctx, tenantID)
	return len(sums), err
}

// BatchGet reads locations by id (for benchmarks).
func (s *Service) BatchGet(ctx context.Context, tenantID string, ids []string) (int, error) {
	recs, err := s.st().batchGet(ctx, tenantID, ids)
	return len(recs), err
}

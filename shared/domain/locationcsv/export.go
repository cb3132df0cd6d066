package locationcsv

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/loyalty-platform/platform/shared/domain/location"
	"github.com/loyalty-platform/platform/shared/domain/operation"
	"github.com/loyalty-platform/platform/shared/platform/job"
)

// exportPart is how many locations go into one results part (one commit).
const exportPart = 500

// ExportRequest is the body of POST /locations/exports.
type ExportRequest struct {
	// Limit caps the number of locations exported (all when absent).
	Limit *int `json:"limit"`
	// Filters select the locations (all when absent).
	Filters *ExportFilters `json:"filters"`
}

// ExportFilters select the exported locations: State is one state or a
// comma-separated list; Tags and Regions match any listed tag or region
// (ignoring case).
type ExportFilters struct {
	State   string   `json:"state"`
	Tags    []string `json:"tags"`
	Regions []string `json:"regions"`
}

// exportParams are an export's parameters as stored in the operation's
// metadata (numbers come back from DynamoDB as float64).
type exportParams struct {
	limit  int64
	filter location.Filter
}

func exportParamsOf(md map[string]any) exportParams {
	var p exportParams
	if v, ok := md["limit"].(float64); ok {
		p.limit = int64(v)
	}
	f, _ := md["filters"].(map[string]any)
	if st, ok := f["state"].(string); ok {
		for _, s := range strings.Split(st, ",") {
			if s = strings.TrimSpace(s); s != "" {
				p.filter.States = append(p.filter.States, s)
			}
		}
	}
	p.filter.Tags = strings2(f["tags"])
	p.filter.Regions = strings2(f["regions"])
	return p
}

func strings2(v any) []string {
	list, _ := v.([]any)
	out := make([]string, 0, len(list))
	for _, x := range list {
		if s, ok := x.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

// exportKind runs location exports.
type exportKind struct{ s *Service }

var errEnough = errors.New("export: limit reached")

// Run writes the locations that match the export's filters, in title
// order, into the results file. A first pass over them fixes the header
// (the dot-notation columns in use); the second writes the rows, 500 per
// commit. A continued run skips the locations already written.
func (k exportKind) Run(ctx context.Context, r *job.Run) error {
	params := exportParamsOf(r.Operation().Metadata)
	tenantID, opID := r.TenantID(), r.Operation().ID
	cp, res := r.Checkpoint(), r.Result()
	if cp.Columns == nil {
		y := newLayout()
		var n int64
		err := k.s.Locations.Each(ctx, tenantID, params.filter, func(l location.Location) error {
			if params.limit > 0 && n >= params.limit {
				return errEnough
			}
			n++
			y.add(l)
			return nil
		})
		if err != nil && !errors.Is(err, errEnough) {
			return fmt.Errorf("export layout: %w", err)
		}
		// InputSize and Offset count locations, so that ETA works.
		cp.Columns, cp.InputSize = y.columns(), n
		res.Message = fmt.Sprintf("exporting %d locations", n)
		if err := r.Commit(ctx, nil, cp, res, nil); err != nil {
			return err
		}
		cp, res = r.Checkpoint(), r.Result()
	}
	skip := cp.Rows
	var lines [][]string
	commit := func(last bool) error {
		cp.Rows += int64(len(lines))
		cp.Offset = cp.Rows
		cp.InputDone = last
		res.Total = cp.Rows
		res.Imported, res.Skipped, res.Errors = 0, 0, 0
		res.EtaMs = r.ETA(cp)
		res.Message = fmt.Sprintf("exporting: %d of %d locations", cp.Rows, cp.InputSize)
		if last {
			res.EtaMs, res.Href = 0, "/locations/exports/"+opID
			res.Message = fmt.Sprintf("done: %d locations exported", cp.Rows)
		}
		if err := r.Commit(ctx, lines, cp, res, nil); err != nil {
			return err
		}
		cp, res, lines = r.Checkpoint(), r.Result(), lines[:0]
		return nil
	}
	var seen int64
	err := k.s.Locations.Each(ctx, tenantID, params.filter, func(l location.Location) error {
		if params.limit > 0 && seen >= params.limit {
			return errEnough
		}
		seen++
		if seen <= skip {
			return nil
		}
		lines = append(lines, exportRow(cp.Columns, l))
		if len(lines) >= exportPart || r.ShouldYield(int64(len(lines))) {
			if err := commit(false); err != nil {
				return err
			}
			if r.ShouldYield(0) {
				return job.ErrYield
			}
		}
		return nil
	})
	switch {
	case errors.Is(err, job.ErrYield), errors.Is(err, operation.ErrLeaseLost):
		return err
	case err != nil && !errors.Is(err, errEnough):
		return fmt.Errorf("export: %w", err)
	}
	return commit(true)
}

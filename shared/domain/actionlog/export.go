package actionlog

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/loyalty-platform/platform/shared/domain/action"
	"github.com/loyalty-platform/platform/shared/domain/operation"
	"github.com/loyalty-platform/platform/shared/platform/actor"
	"github.com/loyalty-platform/platform/shared/platform/apierr"
	"github.com/loyalty-platform/platform/shared/platform/clock"
	"github.com/loyalty-platform/platform/shared/platform/csvcell"
	"github.com/loyalty-platform/platform/shared/platform/ddb"
	"github.com/loyalty-platform/platform/shared/platform/job"
	"github.com/loyalty-platform/platform/shared/platform/timefilter"
	"github.com/loyalty-platform/platform/shared/platform/web"
)

// Limits of an export.
const (
	MaxExportLimit  = 10_000_000
	MaxExportSizeMB = 1024
	exportPage      = 1000 // actions per commit (one results part)
)

// ExportRequest is the body of POST /actions/exports.
type ExportRequest struct {
	// From and To bound when.timestamp (RFC 3339, both inclusive).
	From  string   `json:"from"`
	To    string   `json:"to"`
	Types []string `json:"types"`
	// Limit caps the actions written; MaxFileSizeMB the file's size (the
	// export stops at the first commit past it).
	Limit         *int     `json:"limit"`
	MaxFileSizeMB *int     `json:"maxFileSizeMB"`
	LocationIDs   []string `json:"locationIds"`
}

// metadata validates a request and returns it as the operation's metadata.
func (in ExportRequest) metadata() (map[string]any, error) {
	md := map[string]any{}
	var from, to time.Time
	for _, f := range []struct {
		name string
		v    string
		t    *time.Time
	}{{"from", in.From, &from}, {"to", in.To, &to}} {
		if f.v == "" {
			return nil, apierr.Invalid(f.name, "is required: an RFC 3339 date-time such as 2024-05-01T00:00:00Z")
		}
		t, err := time.Parse(time.RFC3339Nano, f.v)
		if err != nil {
			return nil, apierr.Invalid(f.name, "must be an RFC 3339 date-time such as 2024-05-01T00:00:00Z")
		}
		*f.t = t
		md[f.name] = clock.Stamp(t)
	}
	if to.Before(from) {
		return nil, apierr.Invalid("to", "must not be before from")
	}
	if len(in.Types) == 0 {
		return nil, apierr.Invalid("types", "is required: the action types to export")
	}
	if len(in.Types) > 100 {
		return nil, apierr.Invalid("types", "at most 100 types")
	}
	var types []any
	for i, t := range in.Types {
		if !typePattern().MatchString(t) || len(t) > 64 {
			return nil, apierr.Invalid(fmt.Sprintf("types[%d]", i), "must be an UPPER_SNAKE action type")
		}
		types = append(types, t)
	}
	md["types"] = types
	if in.Limit != nil {
		if *in.Limit < 1 || *in.Limit > MaxExportLimit {
			return nil, apierr.Invalid("limit", "must be from 1 to %d", MaxExportLimit)
		}
		md["limit"] = *in.Limit
	}
	if in.MaxFileSizeMB != nil {
		if *in.MaxFileSizeMB < 1 || *in.MaxFileSizeMB > MaxExportSizeMB {
			return nil, apierr.Invalid("maxFileSizeMB", "must be from 1 to %d", MaxExportSizeMB)
		}
		md["maxFileSizeMB"] = *in.MaxFileSizeMB
	}
	if len(in.LocationIDs) > 50 {
		return nil, apierr.Invalid("locationIds", "at most 50 locations")
	}
	var locs []any
	for i, l := range in.LocationIDs {
		if !web.ValidID(l) {
			return nil, apierr.Invalid(fmt.Sprintf("locationIds[%d]", i), "is not a location id")
		}
		locs = append(locs, l)
	}
	if len(locs) > 0 {
		md["locationIds"] = locs
	}
	return md, nil
}

// handleExport serves POST /actions/exports (admin, x-platform-req-nonce):
// it starts an export of the actions between from and to of the listed
// types; 202 with the Operation, and a repeated nonce answers the same
// operation.
func (s *Service) handleExport(r *http.Request, a actor.Actor) (operation.Operation, error) {
	nonce, err := operation.ParseNonce(r.Header.Get(web.HeaderNonce))
	if err != nil {
		return operation.Operation{}, err
	}
	in, err := web.Decoded[ExportRequest](r)
	if err != nil {
		return operation.Operation{}, err
	}
	md, err := in.metadata()
	if err != nil {
		return operation.Operation{}, err
	}
	return s.Jobs.Start(r.Context(), job.StartRequest{
		TenantID: a.TenantID, Namespace: Namespace, Name: NameExport, Nonce: nonce, Metadata: md,
	})
}

// exportParams are an export's parameters as stored in the operation's
// metadata (numbers come back from DynamoDB as float64).
type exportParams struct {
	scope   action.Scope
	filter  action.Filter
	limit   int64
	maxSize int64
}

func exportParamsOf(md map[string]any) exportParams {
	var p exportParams
	from, _ := md["from"].(string)
	to, _ := md["to"].(string)
	// from is inclusive: after the millisecond before it.
	if t, err := time.Parse(clock.Format, from); err == nil {
		from = clock.Stamp(t.Add(-time.Millisecond))
	}
	p.filter.Time = []timefilter.Cond{{Op: "gt", Value: from}, {Op: "lte", Value: to}}
	p.filter.Types = anyStrings(md["types"])
	p.scope.LocationIDs = anyStrings(md["locationIds"])
	if v, ok := md["limit"].(float64); ok {
		p.limit = int64(v)
	}
	if v, ok := md["maxFileSizeMB"].(float64); ok {
		p.maxSize = int64(v) << 20
	}
	return p
}

func anyStrings(v any) []string {
	list, _ := v.([]any)
	var out []string
	for _, x := range list {
		if s, ok := x.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

// Columns of the export file.
var exportColumns = []string{
	"_id", "type", "timestamp", "monthofyear", "weekofyear", "dayofmonth", "dayofweek", "daypart",
	"userId", "userName", "locationId", "locationTitle", "paymentType", "environment", "metadata",
}

// exportRow returns the cells of an action: monthofyear, weekofyear,
// dayofmonth and dayofweek are numbers, the others text (csvcell).
func exportRow(a action.Action) []string {
	row := []string{
		a.ID, a.Type, a.When.Timestamp, strconv.Itoa(a.When.MonthOfYear), strconv.Itoa(a.When.WeekOfYear),
		strconv.Itoa(a.When.DayOfMonth), strconv.Itoa(a.When.DayOfWeek), a.When.Daypart, "", "", "", "", "", a.Environment, "",
	}
	if u := a.Context.User; u != nil {
		row[8], row[9] = u.ID, u.Name
	}
	if l := a.Context.Location; l != nil {
		row[10], row[11] = l.ID, l.Title
	}
	if pt, ok := a.Metadata["paymentType"].(string); ok {
		row[12] = pt
	}
	if b, err := json.Marshal(a.Metadata); err == nil {
		row[14] = string(b)
	}
	return csvcell.Row(row, func(i int) bool { return i >= 3 && i <= 6 })
}

// exportKind runs action exports.
type exportKind struct{ s *Service }

// Run writes the actions that match the export, newest first, into the
// results file, exportPage per commit; the checkpoint keeps where the
// merged read stopped (Checkpoint.Cursor), so a continued or retried run
// goes on from there and writes no action twice. Memory stays at one page.
func (k exportKind) Run(ctx context.Context, r *job.Run) error {
	p := exportParamsOf(r.Operation().Metadata)
	tenantID, opID := r.TenantID(), r.Operation().ID
	cp, res := r.Checkpoint(), r.Result()
	if cp.Columns == nil {
		cp.Columns = exportColumns
	}
	for {
		start, err := ddb.ParsePlainKey(cp.Cursor)
		if err != nil {
			return job.BadFile("export: %s", err.Error())
		}
		full := p.maxSize > 0 && cp.PartBytes >= p.maxSize
		n := exportPage
		if k.s.ExportPage > 0 {
			n = k.s.ExportPage
		}
		if p.limit > 0 {
			n = int(min(int64(n), p.limit-cp.Rows))
		}
		var actions []action.Action
		var next ddb.Item
		if !full && n > 0 {
			if actions, next, err = k.s.Actions.List(ctx, tenantID, p.scope, p.filter, start, n); err != nil {
				return fmt.Errorf("export: %w", err)
			}
		}
		lines := make([][]string, 0, len(actions))
		for _, a := range actions {
			lines = append(lines, exportRow(a))
		}
		cp.Rows += int64(len(lines))
		cp.Offset = cp.Rows
		if cp.Cursor, err = ddb.PlainKey(next); err != nil {
			return fmt.Errorf("export: %w", err)
		}
		last := next == nil
		cp.InputDone = last
		res.Total, res.Imported, res.Skipped, res.Errors = cp.Rows, 0, 0, 0
		res.Message = fmt.Sprintf("exporting: %d actions", cp.Rows)
		if last {
			res.Href = "/actions/exports/" + opID
			res.Message = fmt.Sprintf("done: %d actions exported", cp.Rows)
			if full {
				res.Message += fmt.Sprintf(" (stopped at maxFileSizeMB %d)", p.maxSize>>20)
			}
		}
		var done bool
		if cp, res, done, err = r.Step(ctx, lines, cp, res, last); err != nil || done {
			return err
		}
	}
}

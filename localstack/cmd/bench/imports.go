package main

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"mime/multipart"
	"os"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/loyalty-platform/platform/shared/platform/ddb"
)

// rawWriters is the number of concurrent BatchWriteItem writers of the
// imports' raw side.
const rawWriters = 8

// importResult is one import measured with its raw side.
type importResult struct {
	Rows        int
	Elapsed     time.Duration // POST to operation DONE
	RawElapsed  time.Duration // BatchWriteItem of the same items
	RawItems    int
	ItemsPerRow float64
	AvgItemSize int // bytes (attribute names and values)
	// ItemsByTable counts the items written raw by table.
	ItemsByTable map[string]int
	// ExpiryEntries counts the EXPIRY ledger entries among them (lots
	// that expired as they were imported).
	ExpiryEntries int
}

func (r importResult) RowsPerSec() float64    { return float64(r.Rows) / r.Elapsed.Seconds() }
func (r importResult) RawRowsPerSec() float64 { return float64(r.Rows) / r.RawElapsed.Seconds() }

// locationFile returns a location import file of rows new locations.
func locationFile(rows int) []byte {
	return locationFileOf(randomHex(3), rows, "A place to eat and drink")
}

// locationFileOf returns a location import file of rows locations titled
// "Bench <prefix> <n>", each with description: a file made again with the
// same prefix and rows names the same locations (the re-imports), and
// another description of the same length changes every row and none of
// the summaries' fields.
func locationFileOf(prefix string, rows int, description string) []byte {
	var sb strings.Builder
	sb.WriteString("title,geo_longitude,geo_latitude,state,tags,regions,address.line1,address.city,contacts.email,services.checkins,openingHours.monday,description\n")
	for i := 0; i < rows; i++ {
		fmt.Fprintf(&sb, "Bench %s %06d,%.4f,%.4f,ACTIVE,food|late,north,%d High Street,London,s%d@example.com,true,08:00-22:00,%s\n",
			prefix, i, float64(i%360)-179.5, float64(i%180)-89.5, i, i, description)
	}
	return []byte(sb.String())
}

// awardShape is what an award import file holds beyond its grants of 1
// point, each (user, perk) once.
type awardShape struct {
	// Expiry is the perks' points.expiry (nil: their points never expire).
	Expiry map[string]any
	// EarnedMonths, when positive, gives every row an earned_at within
	// that many months back from when the file is made.
	EarnedMonths int
}

// earnedExpiry is the points.expiry of the perks of the award import with
// earned_at: each lot expires 12 months after it was earned.
var earnedExpiry = map[string]any{"policy": "AFTER_EARN", "duration": "P12M"}

// earnedMonths is how far back that import's earned_at reaches: twice the
// lots' life, so that about half of its lots have expired when they are
// imported (the import writes their EXPIRY entries and POINTS_EXPIRED
// actions at once) and the other half are granted with an expiry date.
// Dates within the last 12 months alone would expire no lot: a lot earned
// then is spendable through the same day 12 months later.
const earnedMonths = 24

// awardFile creates users and perks (with shape's points.expiry) through
// the API and returns an award import file of rows grants of 1 point, each
// (user, perk) once, with shape's earned_at column.
func (e *env) awardFile(ctx context.Context, rows int, shape awardShape) ([]byte, error) {
	const perPerkUsers = 500
	nUsers := min(rows, perPerkUsers)
	nPerks := (rows + nUsers - 1) / nUsers
	users := make([]string, nUsers)
	perks := make([]string, nPerks)
	err := parallel(ctx, nUsers, 8, func(ctx context.Context, i int) error {
		var u struct {
			ID string `json:"id"`
		}
		err := e.doJSON(ctx, call{method: "POST", path: "/users?autoActivate=true", headers: e.admin(), want: 201,
			body: map[string]any{"firstName": "Import", "lastName": fmt.Sprintf("User%d", i),
				"credentials": []map[string]any{{"provider": "EMAIL", "id": fmt.Sprintf("import.%d.%s@example.com", i, randomHex(3))}}}}, &u)
		users[i] = u.ID
		return err
	})
	if err != nil {
		return nil, err
	}
	points := map[string]any{"initial": 0, "max": 1_000_000}
	if shape.Expiry != nil {
		points["expiry"] = shape.Expiry
	}
	err = parallel(ctx, nPerks, 8, func(ctx context.Context, i int) error {
		var p struct {
			ID string `json:"_id"`
		}
		err := e.doJSON(ctx, call{method: "POST", path: "/perks", headers: e.admin(), want: 201,
			body: map[string]any{"title": fmt.Sprintf("Import card %d", i), "template": "STAMP_CARD",
				"points": points, "visualisation": map[string]any{"titleText": "Import card"}}}, &p)
		perks[i] = p.ID
		return err
	})
	if err != nil {
		return nil, err
	}
	var sb strings.Builder
	if shape.EarnedMonths <= 0 {
		sb.WriteString("user_id,perk_id,points\n")
		for i := 0; i < rows; i++ {
			fmt.Fprintf(&sb, "%s,%s,1\n", users[i%nUsers], perks[i/nUsers])
		}
		return []byte(sb.String()), nil
	}
	// Row i is earned at the fractional part of i times the golden ratio
	// along the span: any run of rows (a perk's, one transaction's) has
	// dates all over it. Whole seconds, as RFC 3339 without a fraction,
	// never after now.
	now := time.Now().UTC().Truncate(time.Second)
	from := now.AddDate(0, -shape.EarnedMonths, 0)
	span := now.Sub(from)
	sb.WriteString("user_id,perk_id,points,earned_at\n")
	for i := 0; i < rows; i++ {
		f := math.Mod(float64(i)*0.6180339887498949, 1)
		at := from.Add(time.Duration(f * float64(span))).Truncate(time.Second)
		fmt.Fprintf(&sb, "%s,%s,1,%s\n", users[i%nUsers], perks[i/nUsers], at.Format(time.RFC3339))
	}
	return []byte(sb.String()), nil
}

// storedItem is an item an import stored, with its table.
type storedItem struct {
	table string
	item  item
}

// runImport uploads file to path (a real import) and waits for its
// operation to be DONE with every row imported, then writes the items the
// import stored in tables once more, under another tenant of the same
// length, with raw BatchWriteItem (rawWriters at once), and returns both
// timings. The import's own bookkeeping (a marker per chunk, its fences
// and checkpoint in the operations table, its results file) is not
// written by the raw side: it is what the import costs beyond the rows.
// tables must name every table the rows write to (an award import whose
// lots expire at once records POINTS_EXPIRED in the Actions table).
func (e *env) runImport(ctx context.Context, path string, file []byte, rows int, tables ...string) (importResult, error) {
	before := map[string]map[[2]string]bool{}
	for _, table := range tables {
		keys, err := e.tenantKeys(ctx, table)
		if err != nil {
			return importResult{}, err
		}
		before[table] = keys
	}
	elapsed, err := e.timeImport(ctx, path, file, rows)
	res := importResult{Rows: rows, Elapsed: elapsed, ItemsByTable: map[string]int{}}
	if err != nil {
		return res, err
	}

	var items []storedItem
	for _, table := range tables {
		its, err := e.newTenantItems(ctx, table, before[table])
		if err != nil {
			return res, err
		}
		for _, it := range its {
			items = append(items, storedItem{table: table, item: it})
		}
		res.ItemsByTable[table] = len(its)
	}
	res.RawItems = len(items)
	res.ItemsPerRow = float64(len(items)) / float64(rows)
	size := 0
	for _, it := range items {
		size += itemSize(it.item)
		if isExpiryEntry(it.item) {
			res.ExpiryEntries++
		}
	}
	if len(items) > 0 {
		res.AvgItemSize = size / len(items)
	}
	// The raw side runs twice, under two other tenants, and the faster
	// run is the reference: DynamoDB Local's pace varies from one
	// batch of writes to the next, and the ratio errs on the low side.
	for i, prefix := range []string{"r", "q"} {
		for _, it := range items {
			for k, v := range it.item {
				if sv, ok := v.(*types.AttributeValueMemberS); ok && strings.HasPrefix(sv.Value, e.other()) {
					it.item[k] = s(prefix + sv.Value[1:])
				}
			}
		}
		start := time.Now()
		if err := e.batchWrite(ctx, items, rawWriters); err != nil {
			return res, err
		}
		if d := time.Since(start); i == 0 || d < res.RawElapsed {
			res.RawElapsed = d
		}
		for _, it := range items { // back under e.other()
			for k, v := range it.item {
				if sv, ok := v.(*types.AttributeValueMemberS); ok && strings.HasPrefix(sv.Value, prefix+e.tenant[1:]) {
					it.item[k] = s(e.other() + sv.Value[1:])
				}
			}
		}
	}
	return res, nil
}

// timeImport uploads file to path (a real import), waits for its
// operation to be DONE with imported rows imported, and returns the time
// from the upload's POST to then.
func (e *env) timeImport(ctx context.Context, path string, file []byte, imported int) (time.Duration, error) {
	var body bytes.Buffer
	w := multipart.NewWriter(&body)
	part, _ := w.CreateFormFile("file", "import.csv")
	_, _ = part.Write(file)
	_ = w.Close()

	start := time.Now()
	var op struct {
		ID string `json:"_id"`
	}
	if err := e.doJSON(ctx, call{method: "POST", path: path + "?dryRun=false", body: body.Bytes(), want: 202,
		headers: append(e.admin(), "Content-Type", w.FormDataContentType(), "x-platform-req-nonce", nonce())}, &op); err != nil {
		return 0, err
	}
	var done struct {
		Status string         `json:"status"`
		Result map[string]any `json:"result"`
		Error  any            `json:"error"`
	}
	for {
		if err := e.doJSON(ctx, call{method: "GET", path: "/operations/" + op.ID, headers: e.admin(), want: 200}, &done); err != nil {
			return 0, err
		}
		if done.Status == "DONE" || done.Status == "FAILED" {
			break
		}
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
	elapsed := time.Since(start)
	if done.Status != "DONE" || done.Result["imported"] != float64(imported) || done.Result["errors"] != float64(0) {
		return elapsed, fmt.Errorf("import %s: status %s, result %v, error %v", path, done.Status, done.Result, done.Error)
	}
	return elapsed, nil
}

// reimportResult is the three location imports of one set of rows: new
// locations, the same file again (nothing to write) and every row changed.
type reimportResult struct {
	Rows                    int
	New, Unchanged, Changed time.Duration
}

// reimports imports a file of rows new locations, the same file again and
// the file with every row's description changed (same length, no field
// of the summaries), one after another, with the settings of the other
// imports.
func (e *env) reimports(ctx context.Context, rows int) (reimportResult, error) {
	res := reimportResult{Rows: rows}
	prefix := randomHex(3)
	steps := []struct {
		name        string
		description string
		imported    int
		took        *time.Duration
	}{
		{"new", "A place to eat and drink", rows, &res.New},
		{"unchanged", "A place to eat and drink", 0, &res.Unchanged},
		{"changed", "A place to eat and dine!", rows, &res.Changed},
	}
	for _, st := range steps {
		fmt.Fprintf(os.Stderr, "bench: location import of %d rows, %s\n", rows, st.name)
		d, err := e.timeImport(ctx, "/locations/imports", locationFileOf(prefix, rows, st.description), st.imported)
		if err != nil {
			return res, fmt.Errorf("%s location import: %w", st.name, err)
		}
		*st.took = d
	}
	return res, nil
}

// isExpiryEntry reports whether it is a ledger entry of points that
// expired (sk LEDGER#..., type EXPIRY).
func isExpiryEntry(it item) bool {
	sk, _ := it["sk"].(*types.AttributeValueMemberS)
	typ, _ := it["type"].(*types.AttributeValueMemberS)
	return sk != nil && typ != nil && strings.HasPrefix(sk.Value, "LEDGER#") && typ.Value == "EXPIRY"
}

// tenantKeys returns the keys (pk, sk) of the bench tenant's items in
// table.
func (e *env) tenantKeys(ctx context.Context, table string) (map[[2]string]bool, error) {
	keys := map[[2]string]bool{}
	err := e.scanTenant(ctx, table, func(it item) {
		keys[keyOf(it)] = true
	})
	return keys, err
}

// newTenantItems returns the bench tenant's items in table that are not in
// before, with the tenant id at the start of every string attribute
// replaced by another id of the same length: the same items, under keys of
// their own.
func (e *env) newTenantItems(ctx context.Context, table string, before map[[2]string]bool) ([]item, error) {
	other := e.other()
	var out []item
	err := e.scanTenant(ctx, table, func(it item) {
		if before[keyOf(it)] {
			return
		}
		for k, v := range it {
			if sv, ok := v.(*types.AttributeValueMemberS); ok && strings.HasPrefix(sv.Value, e.tenant) {
				it[k] = s(other + sv.Value[len(e.tenant):])
			}
		}
		out = append(out, it)
	})
	return out, err
}

// other is a tenant id of the bench tenant's length, under which the
// raw side writes the items an import stored.
func (e *env) other() string { return "o" + e.tenant[1:] }

func (e *env) scanTenant(ctx context.Context, table string, f func(item)) error {
	p := dynamodb.NewScanPaginator(e.db, &dynamodb.ScanInput{
		TableName:                 aws.String(table),
		FilterExpression:          aws.String("begins_with(pk, :t)"),
		ExpressionAttributeValues: item{":t": s(e.tenant + "#")},
	})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return fmt.Errorf("scan %s: %w", table, err)
		}
		for _, it := range page.Items {
			f(it)
		}
	}
	return nil
}

func keyOf(it item) [2]string {
	var k [2]string
	if v, ok := it["pk"].(*types.AttributeValueMemberS); ok {
		k[0] = v.Value
	}
	if v, ok := it["sk"].(*types.AttributeValueMemberS); ok {
		k[1] = v.Value
	}
	return k
}

// batchWrite writes items, each to its table, with BatchWriteItem, 25 a
// request (a request may hold items of several tables), writers requests
// at once, retrying unprocessed items.
func (e *env) batchWrite(ctx context.Context, items []storedItem, writers int) error {
	groups := make([][]types.TransactWriteItem, len(items))
	for i, it := range items {
		groups[i] = []types.TransactWriteItem{{Put: &types.Put{TableName: aws.String(it.table), Item: it.item}}}
	}
	if err := ddb.BatchWrite(ctx, e.db, groups, writers); err != nil {
		return fmt.Errorf("raw batch write of %d items: %w", len(items), err)
	}
	return nil
}

// itemSize approximates DynamoDB's item size: attribute names plus values.
func itemSize(it item) int {
	size := 0
	for k, v := range it {
		size += len(k) + valueSize(v)
	}
	return size
}

func valueSize(v types.AttributeValue) int {
	switch x := v.(type) {
	case *types.AttributeValueMemberS:
		return len(x.Value)
	case *types.AttributeValueMemberN:
		return len(x.Value)/2 + 1
	case *types.AttributeValueMemberB:
		return len(x.Value)
	case *types.AttributeValueMemberBOOL, *types.AttributeValueMemberNULL:
		return 1
	case *types.AttributeValueMemberL:
		n := 3
		for _, e := range x.Value {
			n += 1 + valueSize(e)
		}
		return n
	case *types.AttributeValueMemberM:
		n := 3
		for k, e := range x.Value {
			n += 1 + len(k) + valueSize(e)
		}
		return n
	case *types.AttributeValueMemberSS:
		n := 0
		for _, e := range x.Value {
			n += len(e)
		}
		return n
	case *types.AttributeValueMemberNS:
		n := 0
		for _, e := range x.Value {
			n += len(e)/2 + 1
		}
		return n
	}
	return 0
}

// nonce returns a random GUID (version 4), as x-platform-req-nonce takes.
func nonce() string {
	h := randomHex(16)
	b := []byte(h)
	b[12] = '4'
	b[16] = "89ab"[int(b[16])%4]
	return string(b[0:8]) + "-" + string(b[8:12]) + "-" + string(b[12:16]) + "-" + string(b[16:20]) + "-" + string(b[20:32])
}

package main

import (
	"bytes"
	"context"
	"fmt"
	"mime/multipart"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/loyalty-platform/platform/shared/ddb"
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
}

func (r importResult) RowsPerSec() float64    { return float64(r.Rows) / r.Elapsed.Seconds() }
func (r importResult) RawRowsPerSec() float64 { return float64(r.Rows) / r.RawElapsed.Seconds() }

// locationFile returns a location import file of rows new locations.
func locationFile(rows int) []byte {
	var sb strings.Builder
	sb.WriteString("title,geo_longitude,geo_latitude,state,tags,regions,address.line1,address.city,contacts.email,services.checkins,openingHours.monday,description\n")
	prefix := randomHex(3)
	for i := 0; i < rows; i++ {
		fmt.Fprintf(&sb, "Bench %s %06d,%.4f,%.4f,ACTIVE,food|late,north,%d High Street,London,s%d@example.com,true,08:00-22:00,A place to eat and drink\n",
			prefix, i, float64(i%360)-179.5, float64(i%180)-89.5, i, i)
	}
	return []byte(sb.String())
}

// awardFile creates users and perks through the API and returns an award
// import file of rows grants of 1 point, each (user, perk) once.
func (e *env) awardFile(ctx context.Context, rows int) ([]byte, error) {
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
	err = parallel(ctx, nPerks, 8, func(ctx context.Context, i int) error {
		var p struct {
			ID string `json:"_id"`
		}
		err := e.doJSON(ctx, call{method: "POST", path: "/perks", headers: e.admin(), want: 201,
			body: map[string]any{"title": fmt.Sprintf("Import card %d", i), "template": "STAMP_CARD",
				"points": map[string]any{"initial": 0, "max": 1_000_000}, "visualisation": map[string]any{"titleText": "Import card"}}}, &p)
		perks[i] = p.ID
		return err
	})
	if err != nil {
		return nil, err
	}
	var sb strings.Builder
	sb.WriteString("user_id,perk_id,points\n")
	for i := 0; i < rows; i++ {
		fmt.Fprintf(&sb, "%s,%s,1\n", users[i%nUsers], perks[i/nUsers])
	}
	return []byte(sb.String()), nil
}

// runImport uploads file to path (a real import) and waits for its
// operation to be DONE with every row imported, then writes the items the
// import stored in table once more, under another tenant of the same
// length, with raw BatchWriteItem (rawWriters at once), and returns both
// timings. The import's own bookkeeping (a marker per chunk, its fences
// and checkpoint in the operations table, its results file) is not
// written by the raw side: it is what the import costs beyond the rows.
func (e *env) runImport(ctx context.Context, path, table string, file []byte, rows int) (importResult, error) {
	before, err := e.tenantKeys(ctx, table)
	if err != nil {
		return importResult{}, err
	}
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
		return importResult{}, err
	}
	var done struct {
		Status string         `json:"status"`
		Result map[string]any `json:"result"`
		Error  any            `json:"error"`
	}
	for {
		if err := e.doJSON(ctx, call{method: "GET", path: "/operations/" + op.ID, headers: e.admin(), want: 200}, &done); err != nil {
			return importResult{}, err
		}
		if done.Status == "DONE" || done.Status == "FAILED" {
			break
		}
		select {
		case <-ctx.Done():
			return importResult{}, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
	res := importResult{Rows: rows, Elapsed: time.Since(start)}
	if done.Status != "DONE" || done.Result["imported"] != float64(rows) {
		return res, fmt.Errorf("import %s: status %s, result %v, error %v", path, done.Status, done.Result, done.Error)
	}

	items, err := e.newTenantItems(ctx, table, before)
	if err != nil {
		return res, err
	}
	res.RawItems = len(items)
	res.ItemsPerRow = float64(len(items)) / float64(rows)
	size := 0
	for _, it := range items {
		size += itemSize(it)
	}
	if len(items) > 0 {
		res.AvgItemSize = size / len(items)
	}
	// The raw side runs twice, under two other tenants, and the faster
	// run is the reference: DynamoDB Local's pace varies from one
	// batch of writes to the next, and the ratio errs on the low side.
	for i, prefix := range []string{"r", "q"} {
		for _, it := range items {
			for k, v := range it {
				if sv, ok := v.(*types.AttributeValueMemberS); ok && strings.HasPrefix(sv.Value, e.other()) {
					it[k] = s(prefix + sv.Value[1:])
				}
			}
		}
		start = time.Now()
		if err := e.batchWrite(ctx, table, items, rawWriters); err != nil {
			return res, err
		}
		if d := time.Since(start); i == 0 || d < res.RawElapsed {
			res.RawElapsed = d
		}
		for _, it := range items { // back under e.other()
			for k, v := range it {
				if sv, ok := v.(*types.AttributeValueMemberS); ok && strings.HasPrefix(sv.Value, prefix+e.tenant[1:]) {
					it[k] = s(e.other() + sv.Value[1:])
				}
			}
		}
	}
	return res, nil
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

// batchWrite writes items with BatchWriteItem, 25 a request, writers
// requests at once, retrying unprocessed items.
func (e *env) batchWrite(ctx context.Context, table string, items []item, writers int) error {
	return ddb.BatchPut(ctx, e.db, table, items, writers)
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

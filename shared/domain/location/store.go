package location

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/loyalty-platform/platform/shared/platform/ddb"
)

// Item layout of the Locations table (every key starts with the tenant id):
//
//	pk = <t>#LOC#<locationId>  sk = LOCATION                   the location (record)
//	pk = <t>#LOCINDEX#<n>      sk = <lower(title)>\x1f<locId>  its summary (d: state, geo, services, tags, regions)
//	pk = <t>#LOCMETA           sk = META                       `version`: bumped after every location write
//	pk = <t>#TAGGROUPS         sk = <tagGroupId>               a tag group (`version`: bumped by every write)
//	pk = <t>#TAGGROUPMETA      sk = META                       `n`: how many tag groups the tenant has
//
// A location and its summary are written in one transaction (the record
// conditional on its version), so the summaries are an exact, strongly
// consistent index of the tenant's locations; the CSV import writes a new
// location's record and summary with BatchWriteItem instead
// (csv_support.go), so for the moments between its writes, or until a run
// that stopped between them is resumed, a location it creates may lack its
// summary or keep an old one. A location the import created carries its
// row's token in `origin` (see record). The summaries of a tenant are
// spread over summaryShards partitions (n = FNV-1a of the lower-cased title
// modulo summaryShards), so writes do not all land on one partition key and
// lists read the shards in parallel (about 150 bytes a summary: 10,000
// locations are about 1.5 MB) and merge them by key; they filter and sort in
// Go and BatchGet the records of one page. The summaries also serve the
// case-insensitive title lookup of the importer: one shard, one key prefix,
// since the sort key starts with the lower-cased title. \x1f (unit
// separator) never occurs in a title (control characters are rejected) and
// sorts before every printable character, so key order is title order. No
// GSI, no Scan; nothing in this table expires.

// summaryShards is how many partitions hold a tenant's summaries.
const summaryShards = 8

// shardOf returns the summary shard of a title.
func shardOf(title string) int {
	h := fnv.New32a()
	_, _ = h.Write([]byte(strings.ToLower(strings.TrimSpace(title))))
	return int(h.Sum32() % summaryShards)
}

const (
	skLocation = "LOCATION"
	skMeta     = "META"
	titleSep   = "\x1f"
)

func locationPK(t, id string) string    { return t + "#LOC#" + id }
func indexPK(t, title string) string    { return shardPK(t, shardOf(title)) }
func shardPK(t string, n int) string    { return t + "#LOCINDEX#" + strconv.Itoa(n) }
func metaPK(t string) string            { return t + "#LOCMETA" }
func tagGroupsPK(t string) string       { return t + "#TAGGROUPS" }
func tagGroupMetaPK(t string) string    { return t + "#TAGGROUPMETA" }
func indexSK(title, id string) string   { return strings.ToLower(title) + titleSep + id }
func titlePrefix(title string) string   { return strings.ToLower(strings.TrimSpace(title)) + titleSep }
func idOfIndexSK(sk string) string      { return sk[strings.LastIndex(sk, titleSep)+1:] }
func titleOfIndexSK(sk string) string   { return sk[:max(strings.LastIndex(sk, titleSep), 0)] }
func key(pk, sk string) ddb.Item        { return ddb.Item{"pk": str(pk), "sk": str(sk)} }
func str(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
func num(v int64) types.AttributeValue {
	return &types.AttributeValueMemberN{Value: strconv.FormatInt(v, 10)}
}

// record is a location as stored. Origin is the import's mark (see
// csv_support.go): it names the import row that created the location and
// is kept by every later write.
type record struct {
	PK      string `dynamodbav:"pk"`
	SK      string `dynamodbav:"sk"`
	Version int64  `dynamodbav:"version"`
	Origin  string `dynamodbav:"origin,omitempty"`
	Location
}

func newRecord(l Location, version int64) record {
	l.Distance = nil
	return record{PK: locationPK(l.TenantID, l.ID), SK: skLocation, Version: version, Location: l}
}

// summary is the index entry of a location: what lists filter and sort
// on. Tags and regions are lower-cased (filters ignore case); Services has
// bit i set when the location offers Services[i].
type summary struct {
	PK       string
	SK       string
	ID       string
	State    string
	Lon      float64
	Lat      float64
	Tags     []string
	Regions  []string
	Services uint32
}

func summaryOf(l Location) summary {
	s := summary{PK: indexPK(l.TenantID, l.Title), SK: indexSK(l.Title, l.ID), ID: l.ID, State: l.State, Lon: l.Geo[0], Lat: l.Geo[1]}
	for _, t := range l.Tags {
		s.Tags = append(s.Tags, strings.ToLower(t))
	}
	for _, r := range l.Regions {
		s.Regions = append(s.Regions, strings.ToLower(r))
	}
	s.Services = serviceMask(l.Services)
	return s
}

// serviceMask returns the bits of the services offered.
func serviceMask(services map[string]bool) uint32 {
	var m uint32
	for i, name := range Services {
		if services[name] {
			m |= 1 << i
		}
	}
	return m
}

// Separators of the packed summary: neither occurs in a state, number, tag
// or region (control characters are rejected in them).
const (
	fieldSep = "\x1e"
	listSep  = "\x1f"
)

// item returns the summary as stored: pk, sk and one packed attribute d
// (state, longitude, latitude, service bits, tags, regions), so a list
// decodes three attribute values per location instead of a dozen.
func (s summary) item() ddb.Item {
	d := strings.Join([]string{
		s.State,
		strconv.FormatFloat(s.Lon, 'g', -1, 64),
		strconv.FormatFloat(s.Lat, 'g', -1, 64),
		strconv.FormatUint(uint64(s.Services), 10),
		strings.Join(s.Tags, listSep),
		strings.Join(s.Regions, listSep),
	}, fieldSep)
	return ddb.Item{"pk": str(s.PK), "sk": str(s.SK), "d": str(d)}
}

// decodeSummary reads a stored summary.
func decodeSummary(it ddb.Item) (summary, error) {
	get := func(name string) string {
		if v, ok := it[name].(*types.AttributeValueMemberS); ok {
			return v.Value
		}
		return ""
	}
	s := summary{PK: get("pk"), SK: get("sk")}
	s.ID = idOfIndexSK(s.SK)
	parts := strings.Split(get("d"), fieldSep)
	if len(parts) != 6 {
		return summary{}, fmt.Errorf("summary %q: malformed", s.SK)
	}
	var err1, err2, err3 error
	s.State = parts[0]
	s.Lon, err1 = strconv.ParseFloat(parts[1], 64)
	s.Lat, err2 = strconv.ParseFloat(parts[2], 64)
	mask, err3 := strconv.ParseUint(parts[3], 10, 32)
	if err1 != nil || err2 != nil || err3 != nil {
		return summary{}, fmt.Errorf("summary %q: malformed", s.SK)
	}
	s.Services = uint32(mask)
	if parts[4] != "" {
		s.Tags = strings.Split(parts[4], listSep)
	}
	if parts[5] != "" {
		s.Regions = strings.Split(parts[5], listSep)
	}
	return s, nil
}

// store is the locations domain's access to DynamoDB.
type store struct {
	db    ddb.API
	table string
}

func (s *store) putItem(v any, cond string) (types.TransactWriteItem, error) {
	item, ok := v.(ddb.Item)
	if !ok {
		var err error
		if item, err = attributevalue.MarshalMap(v); err != nil {
			return types.TransactWriteItem{}, fmt.Errorf("marshal: %w", err)
		}
	}
	p := &types.Put{TableName: aws.String(s.table), Item: item}
	if cond != "" {
		p.ConditionExpression = aws.String(cond)
	}
	return types.TransactWriteItem{Put: p}, nil
}

// createItems returns the writes that create rec and its summary.
func (s *store) createItems(rec record) ([]types.TransactWriteItem, error) {
	put, err := s.putItem(rec, "attribute_not_exists(pk)")
	if err != nil {
		return nil, fmt.Errorf("create location %s: %w", rec.ID, err)
	}
	idx, err := s.putItem(summaryOf(rec.Location).item(), "")
	if err != nil {
		return nil, fmt.Errorf("create location %s: %w", rec.ID, err)
	}
	return []types.TransactWriteItem{put, idx}, nil
}

// create writes a new location and its summary.
func (s *store) create(ctx context.Context, rec record) error {
	items, err := s.createItems(rec)
	if err != nil {
		return err
	}
	if err := s.transact(ctx, items); err != nil {
		return fmt.Errorf("create location %s: %w", rec.ID, err)
	}
	return nil
}

// replaceItems returns the writes that overwrite the location old with rec
// (the same id; its version becomes old's + 1, its Origin stays) if
// nobody changed it since old was read, and its summary when that
// changed (moved when its key changed).
func (s *store) replaceItems(old record, rec record) ([]types.TransactWriteItem, error) {
	rec.Version, rec.Origin = old.Version+1, old.Origin
	put, err := s.putItem(rec, "attribute_exists(pk) AND version = :v")
	if err != nil {
		return nil, fmt.Errorf("update location %s: %w", rec.ID, err)
	}
	put.Put.ExpressionAttributeValues = map[string]types.AttributeValue{":v": &types.AttributeValueMemberN{Value: strconv.FormatInt(old.Version, 10)}}
	return append([]types.TransactWriteItem{put}, s.summaryItems(old, rec)...), nil
}

// summaryItems returns the writes that keep the summary of a location
// replaced (old by rec) up to date: none when it is unchanged, its Put,
// and the Delete of the old one when its key changed.
func (s *store) summaryItems(old, rec record) []types.TransactWriteItem {
	oldSum, newSum := summaryOf(old.Location).item(), summaryOf(rec.Location).item()
	if maps.EqualFunc(oldSum, newSum, func(a, b types.AttributeValue) bool {
		return a.(*types.AttributeValueMemberS).Value == b.(*types.AttributeValueMemberS).Value
	}) {
		return nil
	}
	items := []types.TransactWriteItem{{Put: &types.Put{TableName: aws.String(s.table), Item: newSum}}}
	if oldPK, oldSK := oldSum["pk"], oldSum["sk"]; oldPK.(*types.AttributeValueMemberS).Value != newSum["pk"].(*types.AttributeValueMemberS).Value ||
		oldSK.(*types.AttributeValueMemberS).Value != newSum["sk"].(*types.AttributeValueMemberS).Value {
		items = append(items, types.TransactWriteItem{Delete: &types.Delete{TableName: aws.String(s.table), Key: key(indexPK(old.TenantID, old.Title), indexSK(old.Title, old.ID))}})
	}
	return items
}

// replace overwrites the location old with rec (see replaceItems). A lost
// race is ErrConcurrentUpdate.
func (s *store) replace(ctx context.Context, old, rec record) error {
	items, err := s.replaceItems(old, rec)
	if err != nil {
		return err
	}
	if err := s.transact(ctx, items); err != nil {
		if len(ddb.FailedConditions(err)) > 0 {
			return fmt.Errorf("update location %s: %w", rec.ID, ErrConcurrentUpdate)
		}
		return fmt.Errorf("update location %s: %w", rec.ID, err)
	}
	return nil
}

// transact runs a transaction, retrying a few times when it lost a race with
// another transaction on the same items.
func (s *store) transact(ctx context.Context, items []types.TransactWriteItem) error {
	return ddb.Transact(ctx, s.db, items)
}

// get reads one location; a missing one is ErrNotFound.
func (s *store) get(ctx context.Context, tenantID, id string) (record, error) {
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(s.table), Key: key(locationPK(tenantID, id), skLocation), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return record{}, fmt.Errorf("get location %s: %w", id, err)
	}
	if out.Item == nil {
		return record{}, fmt.Errorf("get location %s: %w", id, ErrNotFound)
	}
	var r record
	if err := attributevalue.UnmarshalMap(out.Item, &r); err != nil {
		return record{}, fmt.Errorf("get location %s: %w", id, err)
	}
	return r, nil
}

// batchGet reads locations by id (at most 100 per request, the requests in
// parallel); missing ids are absent from the result.
func (s *store) batchGet(ctx context.Context, tenantID string, ids []string) (map[string]record, error) {
	return s.batchRead(ctx, tenantID, ids, false)
}

// batchIDs reads which of ids are locations as batchGet does, each item's
// id alone (a projection: no location's body is read).
func (s *store) batchIDs(ctx context.Context, tenantID string, ids []string) (map[string]bool, error) {
	recs, err := s.batchRead(ctx, tenantID, ids, true)
	if err != nil {
		return nil, err
	}
	out := make(map[string]bool, len(recs))
	for id := range recs {
		out[id] = true
	}
	return out, nil
}

// batchRead is batchGet; idOnly reads each item's id alone.
func (s *store) batchRead(ctx context.Context, tenantID string, ids []string, idOnly bool) (map[string]record, error) {
	var (
		mu       sync.Mutex
		wg       sync.WaitGroup
		firstErr error
	)
	out := make(map[string]record, len(ids))
	for i := 0; i < len(ids); i += 100 {
		chunk := ids[i:min(i+100, len(ids))]
		wg.Add(1)
		go func() {
			defer wg.Done()
			recs, err := s.batchGetChunk(ctx, tenantID, chunk, idOnly)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				if firstErr == nil {
					firstErr = err
				}
				return
			}
			for _, r := range recs {
				out[r.ID] = r
			}
		}()
	}
	wg.Wait()
	if firstErr != nil {
		return nil, firstErr
	}
	return out, nil
}

func (s *store) batchGetChunk(ctx context.Context, tenantID string, ids []string, idOnly bool) ([]record, error) {
	seen := map[string]bool{}
	keys := make([]map[string]types.AttributeValue, 0, len(ids))
	for _, id := range ids {
		if !seen[id] {
			seen[id] = true
			keys = append(keys, key(locationPK(tenantID, id), skLocation))
		}
	}
	ka := types.KeysAndAttributes{Keys: keys, ConsistentRead: aws.Bool(true)}
	if idOnly {
		ka.ProjectionExpression, ka.ExpressionAttributeNames = aws.String("#id"), map[string]string{"#id": "id"}
	}
	items, err := ddb.BatchGet(ctx, s.db, s.table, ka)
	if err != nil {
		return nil, fmt.Errorf("batch get locations: %w", err)
	}
	var recs []record
	if err := attributevalue.UnmarshalListOfMaps(items, &recs); err != nil {
		return nil, fmt.Errorf("batch get locations: %w", err)
	}
	return recs, nil
}

// summaries reads every summary of a tenant (the shards in parallel) and
// returns them in key order, which is title order.
func (s *store) summaries(ctx context.Context, tenantID string) ([]summary, error) {
	shards := make([][]summary, summaryShards)
	errs := make([]error, summaryShards)
	var wg sync.WaitGroup
	for n := range shards {
		wg.Add(1)
		go func() {
			defer wg.Done()
			shards[n], errs[n] = s.querySummaries(ctx, shardPK(tenantID, n), "")
		}()
	}
	wg.Wait()
	total := 0
	for n := range shards {
		if errs[n] != nil {
			return nil, errs[n]
		}
		total += len(shards[n])
	}
	// Merge the sorted shards.
	out := make([]summary, 0, total)
	next := make([]int, summaryShards)
	for len(out) < total {
		best := -1
		for n := range shards {
			if next[n] < len(shards[n]) && (best < 0 || shards[n][next[n]].SK < shards[best][next[best]].SK) {
				best = n
			}
		}
		out = append(out, shards[best][next[best]])
		next[best]++
	}
	return out, nil
}

// byTitle reads the summaries of the locations titled title (ignoring
// case).
func (s *store) byTitle(ctx context.Context, tenantID, title string) ([]summary, error) {
	return s.querySummaries(ctx, indexPK(tenantID, title), titlePrefix(title))
}

func (s *store) querySummaries(ctx context.Context, pk, prefix string) ([]summary, error) {
	in := &dynamodb.QueryInput{
		TableName:                 aws.String(s.table),
		KeyConditionExpression:    aws.String("pk = :pk"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":pk": str(pk)},
		ConsistentRead:            aws.Bool(true),
	}
	if prefix != "" {
		in.KeyConditionExpression = aws.String("pk = :pk AND begins_with(sk, :p)")
		in.ExpressionAttributeValues[":p"] = str(prefix)
	}
	var out []summary
	for {
		page, err := s.db.Query(ctx, in)
		if err != nil {
			return nil, fmt.Errorf("list location summaries: %w", err)
		}
		for _, it := range page.Items {
			sum, err := decodeSummary(it)
			if err != nil {
				return nil, fmt.Errorf("list location summaries: %w", err)
			}
			out = append(out, sum)
		}
		if len(page.LastEvaluatedKey) == 0 {
			return out, nil
		}
		in.ExclusiveStartKey = page.LastEvaluatedKey
	}
}

// version returns the tenant's locations version (0 before any write).
func (s *store) version(ctx context.Context, tenantID string) (int64, error) {
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{
		TableName: aws.String(s.table), Key: key(metaPK(tenantID), skMeta), ConsistentRead: aws.Bool(true),
		ProjectionExpression: aws.String("version"),
	})
	if err != nil {
		return 0, fmt.Errorf("read locations version: %w", err)
	}
	n, ok := out.Item["version"].(*types.AttributeValueMemberN)
	if !ok {
		return 0, nil
	}
	v, err := strconv.ParseInt(n.Value, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("read locations version: %w", err)
	}
	return v, nil
}

// bump increments the tenant's locations version (an atomic counter: no
// read, no condition, no transaction conflict).
func (s *store) bump(ctx context.Context, tenantID string) error {
	_, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: aws.String(s.table), Key: key(metaPK(tenantID), skMeta),
		UpdateExpression:          aws.String("ADD version :one"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":one": &types.AttributeValueMemberN{Value: "1"}},
	})
	if err != nil {
		return fmt.Errorf("bump locations version: %w", err)
	}
	return nil
}

// seed writes new locations and their summaries with BatchWriteItem (25
// items a request, several requests at once), without conditions: for
// tests and benchmarks that need many locations fast.
func (s *store) seed(ctx context.Context, recs []record) error {
	var items []types.WriteRequest
	for _, r := range recs {
		item, err := attributevalue.MarshalMap(r)
		if err != nil {
			return fmt.Errorf("seed locations: %w", err)
		}
		items = append(items,
			types.WriteRequest{PutRequest: &types.PutRequest{Item: item}},
			types.WriteRequest{PutRequest: &types.PutRequest{Item: summaryOf(r.Location).item()}})
	}
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		firstErr error
		sem      = make(chan struct{}, 8)
	)
	for i := 0; i < len(items); i += 25 {
		batch := items[i:min(i+25, len(items))]
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			req := map[string][]types.WriteRequest{s.table: batch}
			for attempt := 0; len(req) > 0; attempt++ {
				if attempt > 0 {
					time.Sleep(time.Duration(min(attempt, 8)*25) * time.Millisecond)
				}
				out, err := s.db.BatchWriteItem(ctx, &dynamodb.BatchWriteItemInput{RequestItems: req})
				if err != nil {
					mu.Lock()
					if firstErr == nil {
						firstErr = fmt.Errorf("seed locations: %w", err)
					}
					mu.Unlock()
					return
				}
				req = out.UnprocessedItems
			}
		}()
	}
	wg.Wait()
	if firstErr != nil {
		return firstErr
	}
	if len(recs) > 0 {
		return s.bump(ctx, recs[0].TenantID)
	}
	return nil
}

// --- tag groups ---

// tagGroupRecord is a tag group as stored. Version counts its writes: an
// update is conditional on the version it read (0 is an item written before
// versions existed, which has no version attribute).
type tagGroupRecord struct {
	PK      string `dynamodbav:"pk"`
	SK      string `dynamodbav:"sk"`
	Version int64  `dynamodbav:"version"`
	TagGroup
}

// errTagGroupChanged is a tag group update that lost a race: the caller
// reads again and re-applies its change.
var errTagGroupChanged = errors.New("tag group changed since it was read")

// tagGroupCountItem returns the Update of the tenant's tag group counter
// (pk <t>#TAGGROUPMETA, sk META, attribute n) by delta; an increment is
// conditional on the count staying under MaxTagGroups.
func (s *store) tagGroupCountItem(tenantID string, delta int) types.TransactWriteItem {
	u := &types.Update{
		TableName:                 aws.String(s.table),
		Key:                       key(tagGroupMetaPK(tenantID), skMeta),
		UpdateExpression:          aws.String("ADD n :d"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":d": num(int64(delta))},
	}
	if delta > 0 {
		u.ConditionExpression = aws.String("attribute_not_exists(n) OR n < :max")
		u.ExpressionAttributeValues[":max"] = num(int64(MaxTagGroups - delta + 1))
	}
	return types.TransactWriteItem{Update: u}
}

// ensureTagGroupCount creates the tenant's tag group counter from the
// groups stored when it does not exist yet (groups written before the
// counter existed).
func (s *store) ensureTagGroupCount(ctx context.Context, tenantID string) error {
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{
		TableName: aws.String(s.table), Key: key(tagGroupMetaPK(tenantID), skMeta), ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		return fmt.Errorf("read tag group count: %w", err)
	}
	if out.Item != nil {
		return nil
	}
	groups, err := s.tagGroups(ctx, tenantID)
	if err != nil {
		return err
	}
	item := key(tagGroupMetaPK(tenantID), skMeta)
	item["n"] = num(int64(len(groups)))
	_, err = s.db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(s.table), Item: item, ConditionExpression: aws.String("attribute_not_exists(pk)")})
	if err != nil && !ddb.IsConditionFailed(err) {
		return fmt.Errorf("create tag group count: %w", err)
	}
	return nil
}

// createTagGroup writes a new tag group and increments the tenant's counter
// in one transaction; a full tenant is ErrTooManyTagGroups.
func (s *store) createTagGroup(ctx context.Context, tenantID string, g TagGroup) error {
	if err := s.ensureTagGroupCount(ctx, tenantID); err != nil {
		return err
	}
	put, err := s.putItem(tagGroupRecord{PK: tagGroupsPK(tenantID), SK: g.ID, Version: 1, TagGroup: g}, "attribute_not_exists(pk)")
	if err != nil {
		return fmt.Errorf("create tag group %s: %w", g.ID, err)
	}
	err = s.transact(ctx, []types.TransactWriteItem{s.tagGroupCountItem(tenantID, 1), put})
	if slices.Contains(ddb.FailedConditions(err), 0) {
		return fmt.Errorf("create tag group %s: %w", g.ID, ErrTooManyTagGroups)
	}
	if err != nil {
		return fmt.Errorf("create tag group %s: %w", g.ID, err)
	}
	return nil
}

// replaceTagGroup overwrites a tag group read at version (its version
// becomes version + 1) if nobody changed or deleted it since; otherwise
// errTagGroupChanged.
func (s *store) replaceTagGroup(ctx context.Context, tenantID string, g TagGroup, version int64) error {
	item, err := attributevalue.MarshalMap(tagGroupRecord{PK: tagGroupsPK(tenantID), SK: g.ID, Version: version + 1, TagGroup: g})
	if err != nil {
		return fmt.Errorf("update tag group %s: %w", g.ID, err)
	}
	in := &dynamodb.PutItemInput{TableName: aws.String(s.table), Item: item,
		ConditionExpression:       aws.String("attribute_exists(pk) AND version = :v"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":v": num(version)},
	}
	if version == 0 {
		in.ConditionExpression, in.ExpressionAttributeValues = aws.String("attribute_exists(pk) AND attribute_not_exists(version)"), nil
	}
	_, err = s.db.PutItem(ctx, in)
	if ddb.IsConditionFailed(err) {
		return fmt.Errorf("update tag group %s: %w", g.ID, errTagGroupChanged)
	}
	if err != nil {
		return fmt.Errorf("update tag group %s: %w", g.ID, err)
	}
	return nil
}

// getTagGroup reads one tag group and its version.
func (s *store) getTagGroup(ctx context.Context, tenantID, id string) (tagGroupRecord, error) {
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(s.table), Key: key(tagGroupsPK(tenantID), id), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return tagGroupRecord{}, fmt.Errorf("get tag group %s: %w", id, err)
	}
	if out.Item == nil {
		return tagGroupRecord{}, fmt.Errorf("get tag group %s: %w", id, ErrTagGroupNotFound)
	}
	var r tagGroupRecord
	if err := attributevalue.UnmarshalMap(out.Item, &r); err != nil {
		return tagGroupRecord{}, fmt.Errorf("get tag group %s: %w", id, err)
	}
	return r, nil
}

func (s *store) tagGroups(ctx context.Context, tenantID string) ([]TagGroup, error) {
	in := &dynamodb.QueryInput{
		TableName:                 aws.String(s.table),
		KeyConditionExpression:    aws.String("pk = :pk"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":pk": str(tagGroupsPK(tenantID))},
		ConsistentRead:            aws.Bool(true),
	}
	var out []TagGroup
	for {
		page, err := s.db.Query(ctx, in)
		if err != nil {
			return nil, fmt.Errorf("list tag groups: %w", err)
		}
		var recs []tagGroupRecord
		if err := attributevalue.UnmarshalListOfMaps(page.Items, &recs); err != nil {
			return nil, fmt.Errorf("list tag groups: %w", err)
		}
		for _, r := range recs {
			out = append(out, r.TagGroup)
		}
		if len(page.LastEvaluatedKey) == 0 {
			return out, nil
		}
		in.ExclusiveStartKey = page.LastEvaluatedKey
	}
}

// deleteTagGroup removes a tag group and decrements the tenant's counter in
// one transaction; an unknown group is ErrTagGroupNotFound.
func (s *store) deleteTagGroup(ctx context.Context, tenantID, id string) error {
	if err := s.ensureTagGroupCount(ctx, tenantID); err != nil {
		return err
	}
	del := types.TransactWriteItem{Delete: &types.Delete{
		TableName: aws.String(s.table), Key: key(tagGroupsPK(tenantID), id),
		ConditionExpression: aws.String("attribute_exists(pk)"),
	}}
	err := s.transact(ctx, []types.TransactWriteItem{del, s.tagGroupCountItem(tenantID, -1)})
	if slices.Contains(ddb.FailedConditions(err), 0) {
		return fmt.Errorf("delete tag group %s: %w", id, ErrTagGroupNotFound)
	}
	if err != nil {
		return fmt.Errorf("delete tag group %s: %w", id, err)
	}
	return nil
}

package ddb_test

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/loyalty-platform/platform/shared/platform/apierr"
	"github.com/loyalty-platform/platform/shared/platform/ddb"
	ts "github.com/loyalty-platform/platform/shared/testkit"
)

func TestMain(m *testing.M) { ts.Main(m) }

// thing is a record as the tests store it, in a partition of the Loyalty
// table of its own.
type thing struct {
	PK      string `dynamodbav:"pk"`
	SK      string `dynamodbav:"sk"`
	Title   string `dynamodbav:"title"`
	Version int    `dynamodbav:"version"`
}

const things ddb.Kind = "thing"

var (
	errNoThing   = apierr.New(apierr.NotFound, "thing not found")
	errConflict  = apierr.New(apierr.Conflict, "the thing was changed by another request; retry")
	errTableGone = errors.New("table gone")
)

// partition is one test's partition of the Loyalty table of DynamoDB
// Local.
type partition struct {
	t     *testing.T
	db    ddb.API
	table string
	pk    string
}

func newPartition(t *testing.T) partition {
	h := ts.New(t)
	return partition{t: t, db: h.Deps.DB, table: h.Deps.Config.Tables.Loyalty, pk: h.Tenant.ID + "#THINGS"}
}

func (p partition) records(db ddb.API) ddb.Records {
	return ddb.Records{API: db, Table: p.table, Kind: things, NotFound: errNoThing, Conflict: errConflict}
}

func (p partition) key(id string) ddb.Item {
	return ddb.Item{"pk": &types.AttributeValueMemberS{Value: p.pk}, "sk": &types.AttributeValueMemberS{Value: "THING#" + id}}
}

func (p partition) thing(id, title string, version int) thing {
	return thing{PK: p.pk, SK: "THING#" + id, Title: title, Version: version}
}

func (p partition) query() dynamodb.QueryInput {
	return ddb.PrefixQuery(p.table, p.pk, "THING#")
}

// store writes things as they are, unconditionally.
func (p partition) store(things ...thing) {
	p.t.Helper()
	for _, th := range things {
		item, err := attributevalue.MarshalMap(th)
		if err != nil {
			p.t.Fatal(err)
		}
		if _, err := p.db.PutItem(context.Background(), &dynamodb.PutItemInput{TableName: aws.String(p.table), Item: item}); err != nil {
			p.t.Fatal(err)
		}
	}
}

// fill stores a thing of each id, its title the id upper-cased.
func (p partition) fill(ids ...string) {
	p.t.Helper()
	for _, id := range ids {
		p.store(p.thing(id, strings.ToUpper(id), 1))
	}
}

// failing is DynamoDB when it does not answer: every call fails.
type failing struct{ ddb.API }

func (failing) PutItem(context.Context, *dynamodb.PutItemInput, ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error) {
	return nil, errTableGone
}

func (failing) GetItem(context.Context, *dynamodb.GetItemInput, ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error) {
	return nil, errTableGone
}

func (failing) DeleteItem(context.Context, *dynamodb.DeleteItemInput, ...func(*dynamodb.Options)) (*dynamodb.DeleteItemOutput, error) {
	return nil, errTableGone
}

// counting counts the queries sent to DynamoDB.
type counting struct {
	ddb.API
	queries int
}

func (c *counting) Query(ctx context.Context, in *dynamodb.QueryInput, opts ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error) {
	c.queries++
	return c.API.Query(ctx, in, opts...)
}

// wantError fails t unless err is want's text and wraps wrapped.
func wantError(t *testing.T, what string, err error, want string, wrapped error) {
	t.Helper()
	if !errors.Is(err, wrapped) || err.Error() != want {
		t.Fatalf("%s error = %v, want %q wrapping %v", what, err, want, wrapped)
	}
}

func TestRecordsPut(t *testing.T) {
	p := newPartition(t)
	tests := []struct {
		name    string
		stored  *thing // before the put
		title   string
		version int
		fail    bool
		wantErr error  // nil when the put succeeds
		wantMsg string // the error's text, when it fails
	}{
		{"CreateNew", nil, "A", 1, false, nil, ""},
		{"CreateExisting", &thing{Title: "A", Version: 1}, "B", 1, false, errConflict, "put thing %s: CONFLICT: the thing was changed by another request; retry"},
		{"UpdateNextVersion", &thing{Title: "A", Version: 1}, "B", 2, false, nil, ""},
		{"UpdateStaleVersion", &thing{Title: "A", Version: 2}, "B", 2, false, errConflict, "put thing %s: CONFLICT: the thing was changed by another request; retry"},
		{"UpdateAbsent", nil, "B", 2, false, errConflict, "put thing %s: CONFLICT: the thing was changed by another request; retry"},
		{"DynamoDBFails", nil, "A", 1, true, errTableGone, "put thing %s: table gone"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			id := tt.name
			if tt.stored != nil {
				p.store(p.thing(id, tt.stored.Title, tt.stored.Version))
			}
			db := p.db
			if tt.fail {
				db = failing{p.db}
			}
			put := p.thing(id, tt.title, tt.version)
			err := p.records(db).Put(context.Background(), id, put, tt.version)
			if tt.wantErr != nil {
				wantError(t, "Put", err, strings.ReplaceAll(tt.wantMsg, "%s", id), tt.wantErr)
				return
			}
			if err != nil {
				t.Fatalf("Put: %v", err)
			}
			var got thing
			if err := p.records(p.db).Get(context.Background(), id, p.key(id), &got); err != nil {
				t.Fatalf("Get after Put: %v", err)
			}
			if got != put {
				t.Errorf("Get after Put = %+v, want %+v", got, put)
			}
		})
	}
}

func TestRecordsGetAndDelete(t *testing.T) {
	p := newPartition(t)
	stored := p.thing("a", "A", 3)
	p.store(stored, p.thing("doomed", "D", 1), p.thing("kept", "K", 1))
	tests := []struct {
		name    string
		delete  bool // Delete, else Get
		id      string
		fail    bool
		wantErr error
		wantMsg string
	}{
		{"GetFound", false, "a", false, nil, ""},
		{"GetAbsent", false, "b", false, errNoThing, "get thing b: NOT_FOUND: thing not found"},
		{"GetDynamoDBFails", false, "a", true, errTableGone, "get thing a: table gone"},
		{"DeletePresent", true, "doomed", false, nil, ""},
		{"DeleteAbsent", true, "b", false, errNoThing, "delete thing b: NOT_FOUND: thing not found"},
		{"DeleteDynamoDBFails", true, "kept", true, errTableGone, "delete thing kept: table gone"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db := p.db
			if tt.fail {
				db = failing{p.db}
			}
			var got thing
			var err error
			if tt.delete {
				err = p.records(db).Delete(context.Background(), tt.id, p.key(tt.id))
			} else {
				err = p.records(db).Get(context.Background(), tt.id, p.key(tt.id), &got)
			}
			if tt.wantErr != nil {
				wantError(t, tt.name, err, tt.wantMsg, tt.wantErr)
				return
			}
			if err != nil {
				t.Fatalf("%s: %v", tt.name, err)
			}
			if !tt.delete {
				if got != stored {
					t.Errorf("Get = %+v, want %+v", got, stored)
				}
				return
			}
			if err := p.records(p.db).Get(context.Background(), tt.id, p.key(tt.id), &got); !errors.Is(err, errNoThing) {
				t.Errorf("Get after Delete error = %v, want %v", err, errNoThing)
			}
		})
	}
}

// titles returns the titles of ths, in order.
func titles(ths []thing) []string {
	out := []string{}
	for _, th := range ths {
		out = append(out, th.Title)
	}
	return out
}

func TestPrefixQueryAndQueryAll(t *testing.T) {
	tests := []struct {
		name      string
		ids       []string
		pageLimit int32 // the query's own page size (0: none)
		want      []string
	}{
		{"None", nil, 0, []string{}},
		{"OnePage", []string{"b", "a", "c"}, 0, []string{"A", "B", "C"}},
		{"ManyPages", []string{"e", "b", "a", "d", "c"}, 2, []string{"A", "B", "C", "D", "E"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newPartition(t)
			p.fill(tt.ids...)
			// Another kind of item in the partition is not listed.
			p.store(thing{PK: p.pk, SK: "OTHER#x", Title: "OTHER"})
			q := p.query()
			if tt.pageLimit > 0 {
				q.Limit = aws.Int32(tt.pageLimit)
			}
			var got []thing
			if err := things.QueryAll(context.Background(), p.db, q, &got); err != nil {
				t.Fatalf("QueryAll: %v", err)
			}
			if got, want := titles(got), tt.want; !reflect.DeepEqual(got, want) {
				t.Errorf("QueryAll titles = %q, want %q", got, want)
			}
		})
	}
	t.Run("DecodeError", func(t *testing.T) {
		p := newPartition(t)
		p.fill("a")
		p.store(thing{PK: p.pk, SK: "THING#b"})
		if _, err := p.db.UpdateItem(context.Background(), &dynamodb.UpdateItemInput{
			TableName: aws.String(p.table), Key: p.key("b"), UpdateExpression: aws.String("SET version = :v"),
			ExpressionAttributeValues: map[string]types.AttributeValue{":v": &types.AttributeValueMemberS{Value: "not a number"}},
		}); err != nil {
			t.Fatal(err)
		}
		var got []thing
		err := things.QueryAll(context.Background(), p.db, p.query(), &got)
		if err == nil || !strings.HasPrefix(err.Error(), "decode thing: ") {
			t.Errorf("QueryAll error = %v, want decode thing: ...", err)
		}
	})
}

func TestKindDecode(t *testing.T) {
	s := func(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
	tests := []struct {
		name    string
		item    ddb.Item
		want    thing
		wantErr string // the error's text, when it fails
	}{
		{"Record", ddb.Item{"pk": s("t#THINGS"), "sk": s("THING#a"), "title": s("A"), "version": &types.AttributeValueMemberN{Value: "2"}},
			thing{PK: "t#THINGS", SK: "THING#a", Title: "A", Version: 2}, ""},
		{"NotARecord", ddb.Item{"version": s("two")},
			thing{}, "decode thing: unmarshal failed, cannot unmarshal string into Go value type int"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got thing
			err := things.Decode(tt.item, &got)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("Decode error = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("Decode = %+v, %v; want %+v", got, err, tt.want)
			}
		})
	}
}

func TestReadPage(t *testing.T) {
	cursor := ddb.NewCursor([]byte("secret"))
	// dropVowels keeps the things whose id is not a vowel.
	dropVowels := func(_ context.Context, items []ddb.Item) ([]ddb.Item, error) {
		return slices.DeleteFunc(items, func(it ddb.Item) bool {
			sk, _ := it["sk"].(*types.AttributeValueMemberS)
			return sk == nil || strings.ContainsAny(strings.TrimPrefix(sk.Value, "THING#"), "aeiou")
		}), nil
	}
	tests := []struct {
		name  string
		ids   []string
		limit int
		keep  ddb.Filter
		want  [][]string // the pages, in order
	}{
		{"Empty", nil, 2, nil, [][]string{{}}},
		{"OnePage", []string{"a", "b"}, 5, nil, [][]string{{"A", "B"}}},
		{"ExactPages", []string{"a", "b", "c", "d"}, 2, nil, [][]string{{"A", "B"}, {"C", "D"}}},
		{"LastPageShort", []string{"a", "b", "c", "d", "e"}, 2, nil, [][]string{{"A", "B"}, {"C", "D"}, {"E"}}},
		{"FilteredPagesAreFull", []string{"a", "b", "c", "d", "e", "f", "g"}, 2, dropVowels, [][]string{{"B", "C"}, {"D", "F"}, {"G"}}},
		{"FilteredToNothing", []string{"a", "e", "i"}, 2, dropVowels, [][]string{{}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newPartition(t)
			p.fill(tt.ids...)
			var got [][]string
			start := ""
			for range 10 {
				q := ddb.PageQuery{Tenant: "t", Scope: "things", StartKey: start, Limit: tt.limit, Keep: tt.keep}
				var page []thing
				next, err := things.ReadPage(context.Background(), p.db, cursor, p.query(), q, &page)
				if err != nil {
					t.Fatalf("ReadPage(%q): %v", start, err)
				}
				got = append(got, titles(page))
				if next == "" {
					break
				}
				start = next
			}
			if want := tt.want; !reflect.DeepEqual(got, want) {
				t.Errorf("pages = %q, want %q", got, want)
			}
		})
	}
}

func TestReadPageRefusesOtherKeys(t *testing.T) {
	cursor := ddb.NewCursor([]byte("secret"))
	p := newPartition(t)
	p.fill("a", "b", "c")
	db := &counting{API: p.db}
	var page []thing
	first := ddb.PageQuery{Tenant: "t", Scope: "things", Limit: 1}
	next, err := things.ReadPage(context.Background(), db, cursor, p.query(), first, &page)
	if err != nil || next == "" {
		t.Fatalf("first page: next = %q, err = %v; want a next key", next, err)
	}
	tests := []struct {
		name string
		q    ddb.PageQuery
	}{
		{"Garbage", ddb.PageQuery{Tenant: "t", Scope: "things", StartKey: "not-a-key", Limit: 1}},
		{"OtherScope", ddb.PageQuery{Tenant: "t", Scope: "others", StartKey: next, Limit: 1}},
		{"OtherTenant", ddb.PageQuery{Tenant: "u", Scope: "things", StartKey: next, Limit: 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db.queries = 0
			_, err := things.ReadPage(context.Background(), db, cursor, p.query(), tt.q, &page)
			e, ok := apierr.As(err)
			if got, want := ok && e.Code == apierr.ValidationFailed && e.Field == "startKey", true; got != want {
				t.Errorf("ReadPage error = %v, want VALIDATION_FAILED on startKey", err)
			}
			if got, want := db.queries, 0; got != want {
				t.Errorf("queries = %d, want %d (a bad key is refused before any read)", got, want)
			}
		})
	}
}

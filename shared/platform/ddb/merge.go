package ddb

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Stream is one of the queries a merged list reads: a Query in the list's
// order (every stream the same direction), and the attributes that make
// up an ExclusiveStartKey of it (the table's keys and, for an index, the
// index's keys).
type Stream struct {
	In      dynamodb.QueryInput
	KeyAttr []string
}

// Merge reads streams that share one sort order and returns up to limit
// items (those keep keeps; nil keeps all) merged by the string attribute
// sortAttr, from start (a key Merge returned, nil for the first page), and
// the key of the next page (nil when no kept item follows). Descending
// takes the greatest sortAttr first, as Queries with ScanIndexForward=false
// return them. Page keys hold each stream's position: the keys of the last
// item taken from it ("<i>|<attr>"), "<i>|-" for a stream still at its
// start; a stream missing from a key is exhausted. Cursor.Encode signs them
// like any key.
func Merge(ctx context.Context, api API, streams []Stream, sortAttr string, descending bool, start Item, limit int, keep func(Item) bool) ([]Item, Item, error) {
	type state struct {
		buf  []Item
		lek  Item
		done bool
		pos  Item // the page key position: keys of the last item taken
		head bool // still at its start (nothing taken, nothing skipped)
	}
	st := make([]*state, len(streams))
	for i := range streams {
		s := &state{head: true}
		st[i] = s
		if start == nil {
			continue
		}
		k, begin := keyOf(start, i)
		switch {
		case begin:
		case k == nil:
			s.done, s.head = true, false
		default:
			s.lek, s.pos, s.head = k, k, false
		}
	}
	// Each Query reads about twice a stream's even share of the page (at
	// least 25 items): a stream that runs dry before the page is full is
	// read again from where it stopped, so uneven streams cost a Query
	// more, not a page of items from every stream that the merge drops.
	perStream := int32(max(2*limit/max(len(streams), 1)+1, 25))
	fill := func(s *state, in dynamodb.QueryInput) error {
		for len(s.buf) == 0 && !s.done {
			in.ExclusiveStartKey = s.lek
			in.Limit = aws.Int32(perStream)
			out, err := api.Query(ctx, &in)
			if err != nil {
				return fmt.Errorf("query %s: %w", aws.ToString(in.TableName), err)
			}
			s.buf, s.lek = out.Items, out.LastEvaluatedKey
			s.done = len(out.LastEvaluatedKey) == 0
		}
		return nil
	}
	// next returns the stream of the next item in the merged order, or -1.
	next := func() (int, error) {
		best := -1
		for i, s := range st {
			if err := fill(s, streams[i].In); err != nil {
				return -1, err
			}
			if len(s.buf) == 0 {
				continue
			}
			if best >= 0 {
				a, b := sortValue(s.buf[0], sortAttr), sortValue(st[best].buf[0], sortAttr)
				if descending && a <= b || !descending && a >= b {
					continue
				}
			}
			best = i
		}
		return best, nil
	}
	var out []Item
	for len(out) < limit {
		i, err := next()
		if err != nil {
			return nil, nil, err
		}
		if i < 0 {
			return out, nil, nil
		}
		s := st[i]
		it := s.buf[0]
		s.buf = s.buf[1:]
		s.pos, s.head = project(it, streams[i].KeyAttr), false
		if keep == nil || keep(it) {
			out = append(out, it)
		}
	}
	// The page key is each stream's position now; look ahead (without
	// moving the positions) for a kept item to tell whether a page follows.
	key := Item{}
	for i, s := range st {
		switch {
		case s.head && !(s.done && len(s.buf) == 0):
			key[strconv.Itoa(i)+"|-"] = &types.AttributeValueMemberS{Value: "-"}
		case s.pos != nil && !(s.done && len(s.buf) == 0):
			for k, v := range s.pos {
				key[strconv.Itoa(i)+"|"+k] = v
			}
		}
	}
	for {
		i, err := next()
		if err != nil {
			return nil, nil, err
		}
		if i < 0 {
			return out, nil, nil
		}
		it := st[i].buf[0]
		st[i].buf = st[i].buf[1:]
		if keep == nil || keep(it) {
			if len(key) == 0 {
				return out, nil, nil
			}
			return out, key, nil
		}
	}
}

// keyOf returns stream i's position in a merged page key: its start key,
// or begin when it is still at its start; nil, false when it is exhausted.
func keyOf(key Item, i int) (Item, bool) {
	prefix := strconv.Itoa(i) + "|"
	var out Item
	for k, v := range key {
		rest, ok := strings.CutPrefix(k, prefix)
		if !ok {
			continue
		}
		if rest == "-" {
			return nil, true
		}
		if out == nil {
			out = Item{}
		}
		out[rest] = v
	}
	return out, false
}

func project(it Item, attrs []string) Item {
	out := make(Item, len(attrs))
	for _, a := range attrs {
		if v, ok := it[a]; ok {
			out[a] = v
		}
	}
	return out
}

func sortValue(it Item, attr string) string {
	if s, ok := it[attr].(*types.AttributeValueMemberS); ok {
		return s.Value
	}
	return ""
}

package location

import (
	"context"
	"fmt"
	"hash/fnv"
	"slices"
	"strings"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// TitleIndexLimit is the most locations a tenant may have for an import
// run to read their titles into a TitleIndex; an import of a larger
// tenant looks every title up in the table.
const TitleIndexLimit = 2_000_000

// Size of a TitleIndex: a Bloom filter of titleBits bits (4 MiB) and
// titleHashes hashes per title: under 0.1% false positives up to a
// million titles, about 2% at two million.
const (
	titleBits   = 1 << 25
	titleHashes = 7
)

// TitleMapLimit is the most titles a TitleIndex maps to their locations'
// ids; past it the index only tells which titles no location has.
const TitleMapLimit = 250_000

// TitleIndex tells an import run which titles (ignoring case) no location
// of the tenant has, so that the rows creating locations need no lookup,
// and, for a tenant of at most TitleMapLimit locations, which locations
// have a title, so that the rows updating them need no lookup either: their
// locations are read by id (BatchGetItem) and checked to still have the
// title. Without the map a title that may exist is looked up in the table
// (as every title is without an index). It is read once per run and kept
// up to date with Note after each commit; it does not see the locations
// other requests create or rename while the run goes on. The Bloom
// filter's size is fixed whatever the number of locations; the map holds
// 8 bytes and an id a title. It is safe for concurrent use.
type TitleIndex struct {
	mu   sync.RWMutex
	bits []uint64
	// ids maps the FNV-1a hash of a lower-cased title to the ids of the
	// locations that had it, and known holds the hash of each of those
	// ids (both nil past TitleMapLimit titles).
	ids   map[uint64][]string
	known map[uint64]struct{}
}

// LoadTitleIndex reads the titles of the tenant's locations (consistently,
// the summary shards in parallel). It returns nil when the tenant has more
// than limit locations.
func (s *Service) LoadTitleIndex(ctx context.Context, tenantID string, limit int) (*TitleIndex, error) {
	st := s.st()
	ix := &TitleIndex{bits: make([]uint64, titleBits/64), ids: map[uint64][]string{}, known: map[uint64]struct{}{}}
	counts := make([]int, summaryShards)
	errs := make([]error, summaryShards)
	var wg sync.WaitGroup
	for n := range summaryShards {
		wg.Add(1)
		go func() {
			defer wg.Done()
			counts[n], errs[n] = st.summaryTitles(ctx, shardPK(tenantID, n), limit+1, ix.addID)
		}()
	}
	wg.Wait()
	total := 0
	for n := range counts {
		if errs[n] != nil {
			return nil, errs[n]
		}
		total += counts[n]
	}
	if total > limit {
		return nil, nil
	}
	return ix, nil
}

// summaryTitles passes the lower-cased titles of a summary shard and their
// locations' ids to add, and returns how many there were; it stops after
// max.
func (s *store) summaryTitles(ctx context.Context, pk string, max int, add func(title, id string)) (int, error) {
	in := &dynamodb.QueryInput{
		TableName:                 aws.String(s.table),
		KeyConditionExpression:    aws.String("pk = :pk"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":pk": str(pk)},
		ProjectionExpression:      aws.String("sk"),
		ConsistentRead:            aws.Bool(true),
	}
	n := 0
	for {
		page, err := s.db.Query(ctx, in)
		if err != nil {
			return 0, fmt.Errorf("read location titles: %w", err)
		}
		for _, it := range page.Items {
			if v, ok := it["sk"].(*types.AttributeValueMemberS); ok {
				add(titleOfIndexSK(v.Value), idOfIndexSK(v.Value))
				n++
			}
		}
		if len(page.LastEvaluatedKey) == 0 || n >= max {
			return n, nil
		}
		in.ExclusiveStartKey = page.LastEvaluatedKey
	}
}

// titleHash returns the FNV-1a hash of a lower-cased title.
func titleHash(title string) uint64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte(title))
	return h.Sum64()
}

// positions returns the bits of a lower-cased title.
func positions(title string) [titleHashes]uint32 {
	sum := titleHash(title)
	h1, h2 := uint32(sum), uint32(sum>>32)|1
	var out [titleHashes]uint32
	for i := range out {
		out[i] = (h1 + uint32(i)*h2) % titleBits
	}
	return out
}

// add records a lower-cased title.
func (ix *TitleIndex) add(title string) {
	p := positions(title)
	ix.mu.Lock()
	defer ix.mu.Unlock()
	for _, b := range p {
		ix.bits[b/64] |= 1 << (b % 64)
	}
}

// addID records a lower-cased title and the id of a location that has it.
// The map is dropped when it would hold more than TitleMapLimit titles.
func (ix *TitleIndex) addID(title, id string) {
	ix.add(title)
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if ix.ids == nil {
		return
	}
	h := titleHash(title)
	if _, ok := ix.ids[h]; !ok && len(ix.ids) >= TitleMapLimit {
		ix.ids, ix.known = nil, nil
		return
	}
	if !slices.Contains(ix.ids[h], id) {
		ix.ids[h] = append(ix.ids[h], id)
	}
	ix.known[titleHash(id)] = struct{}{}
}

// mayBeID reports whether a location may have id (false: none had it
// when the index learnt of the tenant's locations, nor since by the
// run's commits); without the map, always true.
func (ix *TitleIndex) mayBeID(id string) bool {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	if ix.known == nil {
		return true
	}
	_, ok := ix.known[titleHash(id)]
	return ok
}

// candidates returns the ids of the locations that had the title (ignoring
// case) when the index learnt of them, and whether the index maps titles
// at all (false: look the title up).
func (ix *TitleIndex) candidates(title string) ([]string, bool) {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	if ix.ids == nil {
		return nil, false
	}
	return slices.Clone(ix.ids[titleHash(strings.ToLower(strings.TrimSpace(title)))]), true
}

// mayHave reports whether a location may have the title (ignoring case);
// false means none has.
func (ix *TitleIndex) mayHave(title string) bool {
	p := positions(strings.ToLower(strings.TrimSpace(title)))
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	for _, b := range p {
		if ix.bits[b/64]&(1<<(b%64)) == 0 {
			return false
		}
	}
	return true
}

// Note records the title of a committed write (a new location's, or an
// updated one's new title; its old title stays a possible one).
func (ix *TitleIndex) Note(w ImportWrite) {
	if !w.Writes() {
		return
	}
	ix.addID(strings.ToLower(w.Location.Title), w.Location.ID)
}

package stack

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
)

// Stream positions across restarts. Lambda's event source mapping keeps
// its position in each shard of the stream it reads (the last sequence
// number it processed) for as long as the mapping lives, so records written
// while no function ran are delivered when one runs again. The local
// stack's pollers keep theirs in PositionsFile under the stack's StateDir,
// rewritten after every batch a poller is done with (delivered, or skipped
// after its retries) and whenever the shards change:
//
//	{"mappings": {"rules/ActionsStream": {"table": "ActionsTable",
//	  "streamArn": "arn:aws:dynamodb:ddblocal:000000000000:table/ActionsTable/stream/2026-11-28T10:00:00.000",
//	  "shards": {"shardId-00000001795910738577-043278b3": {"last": "000000000000000004711"}}}}}
//
// On a start, a subscription with a saved mapping resumes: when the table's
// stream is still the one saved (the same DynamoDB Local, or one that keeps
// its tables on disk), each shard is read after its saved sequence number
// (AFTER_SEQUENCE_NUMBER), and from its start when nothing of it was
// handled yet or it is new; when the stream is another one (DynamoDB Local
// was restarted in memory, or the table made again), every shard of the new
// stream is read from its start (TRIM_HORIZON), not from its tip: the
// records written between the new stream's creation and the subscription
// are delivered. Without a saved mapping (the first start, or no StateDir:
// the tests) the event's StartingPosition applies, as for a new event
// source mapping. A file that cannot be read counts as a saved mapping of
// every subscription with no position: everything is read from the start,
// delivered at least once rather than lost (the rules apply once however
// often a record comes).
//
// Why a file and not a table of the stack's DynamoDB: a position is the
// mapping's state, which Lambda keeps, not the table's; a file costs the
// emulator nothing (the benchmarks run it at its limit); and a saved
// stream ARN tells a restarted in-memory DynamoDB Local from the one the
// positions were taken in. The file is replaced whole (written aside, then
// renamed), so a crash leaves the old positions or the new ones; it is
// not synced to the disk, so a power cut may lose the last positions, and
// those records come again.

// PositionsFile is the file under the stack's StateDir that holds the
// stream pollers' positions.
const PositionsFile = "streams.json"

// savedPositions is the content of PositionsFile.
type savedPositions struct {
	// Mappings are by "<function>/<event>" (rules/ActionsStream).
	Mappings map[string]savedMapping `json:"mappings"`
}

// savedMapping is the position of one subscription in its table's stream.
type savedMapping struct {
	Table     string                `json:"table"`
	StreamArn string                `json:"streamArn"`
	Shards    map[string]savedShard `json:"shards"`
}

// savedShard is the position in one shard.
type savedShard struct {
	// Last is the sequence number of the last record handled; empty when
	// none was.
	Last string `json:"last,omitempty"`
	// Done is set once the shard was read to its end (or skipped at the
	// mapping's start).
	Done bool `json:"done,omitempty"`
}

// positionStore reads and writes PositionsFile.
type positionStore struct {
	path string

	mu   sync.Mutex
	data savedPositions
	// unreadable is set when the file was there but could not be read.
	unreadable bool
}

// openPositions reads the positions saved under dir, which it creates
// when missing.
func openPositions(dir string) (*positionStore, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("stream positions: %w", err)
	}
	ps := &positionStore{path: filepath.Join(dir, PositionsFile), data: savedPositions{Mappings: map[string]savedMapping{}}}
	b, err := os.ReadFile(ps.path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return ps, nil
	case err != nil:
		return nil, fmt.Errorf("stream positions: %w", err)
	}
	var data savedPositions
	if err := json.Unmarshal(b, &data); err != nil {
		slog.Warn("stream positions unreadable: every stream is read from its start", "file", ps.path, "err", err)
		ps.unreadable = true
		return ps, nil
	}
	if data.Mappings != nil {
		ps.data = data
	}
	return ps, nil
}

// load returns the saved mapping of key, and whether there is one (a
// mapping with no shards when the file was unreadable).
func (ps *positionStore) load(key string) (savedMapping, bool) {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	m, ok := ps.data.Mappings[key]
	if !ok && ps.unreadable {
		return savedMapping{}, true
	}
	return m, ok
}

// save records the mapping of key and rewrites the file.
func (ps *positionStore) save(key string, m savedMapping) error {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	ps.data.Mappings[key] = m
	b, err := json.MarshalIndent(ps.data, "", "  ")
	if err != nil {
		return fmt.Errorf("save stream positions: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(ps.path), PositionsFile+".*")
	if err != nil {
		return fmt.Errorf("save stream positions: %w", err)
	}
	_, werr := tmp.Write(append(b, '\n'))
	cerr := tmp.Close()
	if err := errors.Join(werr, cerr); err != nil {
		_ = os.Remove(tmp.Name())
		return fmt.Errorf("save stream positions: %w", err)
	}
	if err := os.Rename(tmp.Name(), ps.path); err != nil {
		_ = os.Remove(tmp.Name())
		return fmt.Errorf("save stream positions: %w", err)
	}
	return nil
}

package job

import (
	"context"
	"slices"
	"strings"
	"testing"
)

// fakeEntry is a row of the skeleton's test format: the keys it writes
// (none: it writes nothing), its items, and what became of it.
type fakeEntry struct {
	Entry
	name     string
	keys     []string
	items    int
	shared   []string
	prepares int
	failed   string
}

// fakeCommitter records the chunks submitted; busy keys stay busy until
// waited for.
type fakeCommitter struct {
	chunks [][]string
	busy   map[string]bool
	waits  int
	last   *Chunk
}

func (c *fakeCommitter) Submit(ch *Chunk) error {
	var names []string
	for _, r := range ch.Rows {
		names = append(names, r.Line[0])
	}
	c.chunks = append(c.chunks, names)
	c.last = ch
	return nil
}

func (c *fakeCommitter) Busy(keys []string) bool {
	return slices.ContainsFunc(keys, func(k string) bool { return c.busy[k] })
}

func (c *fakeCommitter) Wait(keys []string) error {
	c.waits++
	for _, k := range keys {
		delete(c.busy, k)
	}
	return nil
}

func fakeParts(l ImportLimits) ImportParts[*fakeEntry] {
	return ImportParts[*fakeEntry]{
		Limits:  l,
		Prepare: func(_ context.Context, e *fakeEntry) error { e.prepares++; return nil },
		Watch:   func(e *fakeEntry) []string { return e.keys },
		Plan: func(e *fakeEntry) Plan {
			if e.failed != "" || len(e.keys) == 0 {
				return Plan{}
			}
			return Plan{Keys: e.keys, Writes: true, Items: e.items, Shared: e.shared}
		},
		Row: func(e *fakeEntry) Row {
			r := Row{Line: []string{e.name}, Outcome: RowImported}
			if e.failed != "" {
				r.Outcome, r.Line = RowFailed, []string{e.name, e.failed}
			}
			return r
		},
		Fail: func(e *fakeEntry, reason string) { e.failed = reason },
	}
}

// row returns a fake row named name that writes keys (separated by "+")
// with items transaction items.
// submitOne places one row of one item in an importer and submits it.
func submitOne(t *testing.T, limits ImportLimits) (*fakeCommitter, *fakeEntry) {
	t.Helper()
	c := &fakeCommitter{busy: map[string]bool{}}
	imp := newImporter(c, fakeParts(limits))
	e := row("a", "1", 1)
	if err := imp.Place(context.Background(), e); err != nil {
		t.Fatal(err)
	}
	if err := imp.Submit(); err != nil {
		t.Fatal(err)
	}
	return c, e
}

func row(name, keys string, items int, shared ...string) *fakeEntry {
	e := &fakeEntry{name: name, items: items, shared: shared}
	if keys != "" {
		e.keys = strings.Split(keys, "+")
	}
	return e
}

// TestImporterChunks: the skeleton places rows into chunks by the limits,
// submits the batch before a row that collides with it or does not fit,
// waits for a chunk in flight that writes a row's key, and prepares again
// a row whose key a commit wrote after its preparation.
func TestImporterChunks(t *testing.T) {
	limits := ImportLimits{Rows: 3, Items: 10, Cells: 1 << 20, Retries: 2, Changed: "changed"}
	cases := []struct {
		name  string
		rows  []*fakeEntry
		busy  string
		want  string // chunks, rows separated by "," and chunks by "|"
		waits int
	}{
		{name: "FullByRows", rows: []*fakeEntry{row("a", "1", 1), row("b", "2", 1), row("c", "3", 1), row("d", "4", 1)}, want: "a,b,c|d"},
		{name: "Collides", rows: []*fakeEntry{row("a", "1", 1), row("b", "2+1", 1), row("c", "3", 1)}, want: "a|b,c"},
		{name: "DoesNotFit", rows: []*fakeEntry{row("a", "1", 6), row("b", "2", 5), row("c", "3", 4)}, want: "a|b,c"},
		{name: "SharedCountOncePerChunk", rows: []*fakeEntry{row("a", "1", 4, "p"), row("b", "2", 5, "p"), row("c", "3", 2, "q")}, want: "a,b|c"},
		{name: "WritesNothing", rows: []*fakeEntry{row("a", "1", 1), row("b", "", 0), row("c", "1", 1)}, want: "a,b|c"},
		{name: "WaitsForChunkInFlight", rows: []*fakeEntry{row("a", "1", 1), row("b", "2", 1)}, busy: "2", want: "a,b", waits: 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := &fakeCommitter{busy: map[string]bool{}}
			if tc.busy != "" {
				c.busy[tc.busy] = true
			}
			imp := newImporter(c, fakeParts(limits))
			ctx := context.Background()
			for _, e := range tc.rows {
				if err := imp.Place(ctx, e); err != nil {
					t.Fatal(err)
				}
				if imp.Full() {
					if err := imp.Submit(); err != nil {
						t.Fatal(err)
					}
				}
			}
			if err := imp.Submit(); err != nil {
				t.Fatal(err)
			}
			var chunks []string
			for _, ch := range c.chunks {
				chunks = append(chunks, strings.Join(ch, ","))
			}
			if got, want := strings.Join(chunks, "|"), tc.want; got != want {
				t.Errorf("chunks = %s, want %s", got, want)
			}
			if got, want := c.waits, tc.waits; got != want {
				t.Errorf("waits = %d, want %d", got, want)
			}
		})
	}
}

// TestImporterCommits: a commit makes the rows prepared before it that
// watch its keys stale (prepared again when placed); a row whose
// conditions keep failing is prepared again Retries times and then fails;
// a row the database refuses fails with the reason.
func TestImporterCommits(t *testing.T) {
	limits := ImportLimits{Rows: 10, Items: 10, Cells: 1 << 20, Retries: 2, Changed: "changed"}
	ctx := context.Background()
	t.Run("StaleAfterCommit", func(t *testing.T) {
		c := &fakeCommitter{busy: map[string]bool{}}
		imp := newImporter(c, fakeParts(limits))
		a, b, other := row("a", "1", 1), row("b", "1", 1), row("c", "2", 1)
		if err := imp.Place(ctx, a); err != nil {
			t.Fatal(err)
		}
		if err := imp.Submit(); err != nil {
			t.Fatal(err)
		}
		c.last.Committed(0, 1)
		for _, e := range []*fakeEntry{b, other} {
			if err := imp.Place(ctx, e); err != nil {
				t.Fatal(err)
			}
		}
		if got, want := [2]int{b.prepares, other.prepares}, [2]int{1, 0}; got != want {
			t.Errorf("preparations = %v, want %v", got, want)
		}
		// Rows read after the commit forget it.
		imp.Forget(imp.Commits())
		late := row("d", "1", 1)
		late.Prepared = imp.Commits()
		if err := imp.Place(ctx, late); err != nil {
			t.Fatal(err)
		}
		if late.prepares != 0 {
			t.Errorf("a row prepared after the commit was prepared again")
		}
	})
	t.Run("ConflictRetriesThenFails", func(t *testing.T) {
		c, e := submitOne(t, limits)
		var outcomes []Outcome
		for range limits.Retries + 1 {
			r, err := c.last.Retry(ctx, 0, []int{0})
			if err != nil {
				t.Fatal(err)
			}
			outcomes = append(outcomes, r.Outcome)
		}
		if got, want := outcomes, []Outcome{RowImported, RowImported, RowFailed}; !slices.Equal(got, want) {
			t.Errorf("outcomes = %v, want %v", got, want)
		}
		if got, want := e.failed, "changed"; got != want {
			t.Errorf("failed = %q, want %q", got, want)
		}
	})
	t.Run("Refused", func(t *testing.T) {
		c, _ := submitOne(t, limits)
		r := c.last.Refuse(0, "too large")
		if got, want := r.Line, []string{"a", "too large"}; !slices.Equal(got, want) || r.Outcome != RowFailed {
			t.Errorf("refused row = %v %v, want %v failed", r.Outcome, got, want)
		}
	})
}

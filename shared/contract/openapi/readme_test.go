package openapi_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/loyalty-platform/platform/shared/contract/sam"
	"github.com/loyalty-platform/platform/shared/platform/apierr"
)

// TestReadmeErrorTable: the README's table of error codes ("The HTTP
// contract in short") lists every code of apierr once, with its status,
// and no other.
func TestReadmeErrorTable(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile(filepath.Join(filepath.Dir(sam.Path()), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(b), "| code | status | when |")
	if !ok {
		t.Fatal(`README.md has no error table ("| code | status | when |")`)
	}
	listed := map[string]int{}
	for _, line := range strings.Split(rest, "\n")[1:] {
		line = strings.TrimSpace(line)
		if !strings.HasPrefix(line, "|") {
			break
		}
		cells := strings.Split(line, "|")
		if len(cells) < 4 || strings.HasPrefix(strings.TrimSpace(cells[1]), "---") {
			continue
		}
		code := strings.TrimSpace(cells[1])
		status, err := strconv.Atoi(strings.TrimSpace(cells[2]))
		if err != nil {
			t.Errorf("README error table: %s has status %q", code, cells[2])
			continue
		}
		if _, dup := listed[code]; dup {
			t.Errorf("README error table lists %s twice", code)
		}
		listed[code] = status
	}
	for _, c := range apierr.Codes() {
		status, ok := listed[string(c)]
		switch {
		case !ok:
			t.Errorf("README error table lacks %s (%d)", c, c.Status())
		case status != c.Status():
			t.Errorf("README error table: %s is %d, apierr says %d", c, status, c.Status())
		}
		delete(listed, string(c))
	}
	for code := range listed {
		t.Errorf("README error table lists %s, which apierr does not have", code)
	}
}

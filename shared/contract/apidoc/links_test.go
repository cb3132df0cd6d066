package apidoc_test

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The repository stands alone: its Markdown documents link only to files
// in it (and to web addresses). TestMarkdownLinks checks every relative
// link of every .md file of the repository: its target must exist, inside
// the repository, and an #anchor into a Markdown file must name one of its
// headings.

var (
	fenceRe    = regexp.MustCompile("(?ms)^\\s*```.*?^\\s*```")
	codeSpanRe = regexp.MustCompile("`[^`\n]*`")
	inlineRe   = regexp.MustCompile(`!?\[[^\]\n]*\]\(\s*<?([^)\s>]*)>?(?:\s+"[^"]*")?\s*\)`)
	refDefRe   = regexp.MustCompile(`(?m)^\s{0,3}\[[^\]\n]+\]:\s*<?(\S+?)>?(?:\s+.*)?$`)
	schemeRe   = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.-]*:`)
	headingRe  = regexp.MustCompile(`(?m)^#{1,6}\s+(.+?)\s*#*\s*$`)
)

// linkTargets returns the link targets of a Markdown text, outside code.
func linkTargets(text string) []string {
	text = fenceRe.ReplaceAllString(text, "")
	text = codeSpanRe.ReplaceAllString(text, "")
	var out []string
	for _, m := range inlineRe.FindAllStringSubmatch(text, -1) {
		out = append(out, m[1])
	}
	for _, m := range refDefRe.FindAllStringSubmatch(text, -1) {
		out = append(out, m[1])
	}
	return out
}

// slug is the anchor GitHub gives a heading.
func slug(heading string) string {
	heading = codeSpanRe.ReplaceAllStringFunc(heading, func(s string) string { return strings.Trim(s, "`") })
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r > 127:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// anchors returns the heading anchors of a Markdown text.
func anchors(text string) map[string]bool {
	out := map[string]bool{}
	for _, m := range headingRe.FindAllStringSubmatch(fenceRe.ReplaceAllString(text, ""), -1) {
		s := slug(m[1])
		for i := 0; out[s]; i++ {
			s = fmt.Sprintf("%s-%d", slug(m[1]), i+1)
		}
		out[s] = true
	}
	return out
}

// checkLinks returns the problems of the links of the Markdown file at
// path (inside root).
func checkLinks(root, path string) ([]string, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var problems []string
	for _, target := range linkTargets(string(raw)) {
		if strings.HasPrefix(target, "http://") || strings.HasPrefix(target, "https://") || strings.HasPrefix(target, "mailto:") {
			continue
		}
		if schemeRe.MatchString(target) || strings.HasPrefix(target, "/") || strings.HasPrefix(target, `\`) {
			problems = append(problems, fmt.Sprintf("%s: link %q is not a file of the repository", path, target))
			continue
		}
		file, anchor, _ := strings.Cut(target, "#")
		dest := path
		if file != "" {
			dest = filepath.Join(filepath.Dir(path), filepath.FromSlash(file))
		}
		rel, err := filepath.Rel(root, dest)
		if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			problems = append(problems, fmt.Sprintf("%s: link %q points outside the repository", path, target))
			continue
		}
		info, err := os.Stat(dest)
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s: link %q: no such file in the repository", path, target))
			continue
		}
		if anchor != "" && !info.IsDir() && strings.HasSuffix(dest, ".md") {
			text, err := os.ReadFile(dest)
			if err != nil {
				return nil, err
			}
			if !anchors(string(text))[strings.ToLower(anchor)] {
				problems = append(problems, fmt.Sprintf("%s: link %q: no heading #%s in %s", path, target, anchor, rel))
			}
		}
	}
	return problems, nil
}

// markdownFiles lists the repository's own Markdown files (not installed
// packages nor build output).
func markdownFiles(root string) ([]string, error) {
	var out []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case ".git", "node_modules", "build":
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(strings.ToLower(d.Name()), ".md") {
			out = append(out, p)
		}
		return nil
	})
	return out, err
}

func TestMarkdownLinks(t *testing.T) {
	t.Parallel()
	root, err := filepath.Abs(filepath.Join("..", "..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	files, err := markdownFiles(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no Markdown file found: README.md at least")
	}
	for _, f := range files {
		problems, err := checkLinks(root, f)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range problems {
			t.Error(p)
		}
	}
}

// TestCheckLinks: the checker itself, on a small repository of its own.
func TestCheckLinks(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "docs"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "docs", "guide.md"), []byte("# Guide\n\n## The `make run` command\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, text string
		problems   int
	}{
		{"FileInRepo", "see [guide](docs/guide.md)", 0},
		{"Anchor", "see [run](docs/guide.md#the-make-run-command)", 0},
		{"OwnHeading", "# Top\n[top](#top)", 0},
		{"WebAddress", "[AWS](https://aws.amazon.com/lambda/) and <https://example.com>", 0},
		{"InCode", "`[x](../outside.md)` and\n```\n[y](missing.md)\n```\n", 0},
		{"Missing", "[x](docs/missing.md)", 1},
		{"MissingAnchor", "[x](docs/guide.md#nowhere)", 1},
		{"Outside", "[notes](../other/notes.md)", 1},
		{"Absolute", "[x](/etc/hosts)", 1},
		{"FileScheme", "[x](file:///etc/hosts)", 1},
		{"ReferenceStyle", "[x][d]\n\n[d]: ../notes.md\n", 1},
		{"Image", "![diagram](docs/missing.png)", 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := filepath.Join(root, "README.md")
			if err := os.WriteFile(p, []byte(tt.text), 0o644); err != nil {
				t.Fatal(err)
			}
			got, err := checkLinks(root, p)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != tt.problems {
				t.Errorf("checkLinks(%q) = %q, want %d problem(s)", tt.text, got, tt.problems)
			}
		})
	}
}

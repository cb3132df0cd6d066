package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/loyalty-platform/platform/shared/contract/sam"
	"github.com/loyalty-platform/platform/shared/testkit"
	"github.com/loyalty-platform/platform/shared/wire"
	"github.com/loyalty-platform/platform/shared/wire/whole"
)

// sessionMarker precedes, in README.md, each ```sh block of the curl
// session that TestReadmeSession runs.
const sessionMarker = "<!-- session: run in order by localstack/readme_test.go -->"

// readmePrelude stops the session at its first failing command, and
// makes every curl of the blocks fail on an answer that is not 2xx
// (writing the answer to stderr, so the test's log shows it). The
// answers the blocks read are text, so capturing them changes nothing
// but a final newline.
const readmePrelude = `set -euo pipefail
curl() {
  local out rc=0
  out=$(command curl --fail-with-body "$@") || rc=$?
  if [ "$rc" -ne 0 ]; then
    printf 'FAILED (curl exit %s): curl %s\n%s\n' "$rc" "$*" "$out" >&2
  fi
  printf '%s\n' "$out"
  return "$rc"
}
`

// TestReadmeSession runs the README's curl session ("A first session with
// curl" and "Pay at the till") as a reader would paste it: the marked
// blocks, in order, in one shell (bash, then zsh when it is installed)
// against the local stack's handler on a free port (PORT), with a tenant
// seeded as make run seeds its own. Every call must answer 2xx, and every
// line "#> text" of a block must be printed, in order, by the commands
// before it (what the README says they print).
func TestReadmeSession(t *testing.T) {
	t.Parallel()
	for _, tool := range []string{"bash", "curl", "jq", "od", "sed", "tr"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is not installed: the README's session needs it (.ci/run installs it)", tool)
		}
	}
	readme, err := os.ReadFile(filepath.Join(filepath.Dir(sam.Path()), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	blocks := sessionBlocks(string(readme))
	if len(blocks) < 4 {
		t.Fatalf("README.md has %d blocks marked %q, want the 4 of the session", len(blocks), sessionMarker)
	}
	script := strings.Join(blocks, "\n")
	var want []string
	for _, line := range strings.Split(script, "\n") {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(line), "#> "); ok {
			want = append(want, rest)
		}
	}
	if len(want) < 10 {
		t.Fatalf("the session states %d outputs (#> lines), want the numbers of each step", len(want))
	}

	st := testkit.Stack(t)
	deps, err := whole.New(context.Background(), wire.ConfigFromEnv())
	if err != nil {
		t.Fatal(err)
	}
	shells := []string{"bash"}
	if _, err := exec.LookPath("zsh"); err == nil {
		shells = append(shells, "zsh")
	}
	for _, shell := range shells {
		t.Run(shell, func(t *testing.T) {
			t.Parallel()
			// A tenant of its own (the session signs up the same e-mail
			// address every time), seeded as make run seeds "local".
			set := settings{TenantID: "readme-" + randomHex(t, 6), ServiceToken: "readme-" + randomHex(t, 16)}
			if err := seedTenant(context.Background(), deps, set); err != nil {
				t.Fatal(err)
			}
			l := &local{template: st.Template, stack: st, deps: deps, settings: set}
			h, err := l.handler()
			if err != nil {
				t.Fatal(err)
			}
			// The session's calls come from an address of their own, so
			// that the anonymous allowance of 127.0.0.1 (make run's, shared
			// by every test on this machine) is not theirs.
			peer := testkit.NewPeer()
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				r.RemoteAddr = net.JoinHostPort(peer, "40000")
				h.ServeHTTP(w, r)
			}))
			defer srv.Close()
			u, err := url.Parse(srv.URL)
			if err != nil {
				t.Fatal(err)
			}
			_, port, _ := net.SplitHostPort(u.Host)

			body := strings.ReplaceAll(script, "x-application-id: local'", "x-application-id: "+set.TenantID+"'")
			body = strings.ReplaceAll(body, "local-service-token", set.ServiceToken)
			if strings.Count(body, set.TenantID) == 0 || strings.Count(body, set.ServiceToken) == 0 {
				t.Fatal("the session names neither the tenant (T='x-application-id: local') nor the service key (local-service-token)")
			}
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, shell, "-c", readmePrelude+body)
			cmd.Dir = t.TempDir()
			cmd.Env = append(os.Environ(), "PORT="+port)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			start := time.Now()
			err = cmd.Run()
			t.Logf("%s ran the session in %s", shell, time.Since(start).Round(time.Millisecond))
			if err != nil {
				t.Fatalf("%s: %v\nstdout:\n%s\nstderr:\n%s", shell, err, stdout.String(), stderr.String())
			}
			got := lines(stdout.String())
			i := 0
			for _, line := range got {
				if i < len(want) && line == want[i] {
					i++
				}
			}
			if i < len(want) {
				t.Errorf("the session did not print %q (the README's #> lines, in order, from the %dth on)\nstdout:\n%s", want[i], i+1, stdout.String())
			}
		})
	}
}

// sessionBlocks returns the text of each ```sh block that follows a line
// holding sessionMarker.
func sessionBlocks(readme string) []string {
	var blocks []string
	var cur []string
	state := 0 // 0: prose, 1: after the marker, 2: in a marked block
	sc := bufio.NewScanner(strings.NewReader(readme))
	for sc.Scan() {
		line := sc.Text()
		switch {
		case state == 0 && strings.TrimSpace(line) == sessionMarker:
			state = 1
		case state == 1 && strings.HasPrefix(line, "```sh"):
			state, cur = 2, nil
		case state == 1 && strings.TrimSpace(line) != "":
			state = 0 // the marker is not followed by a block
		case state == 2 && strings.HasPrefix(line, "```"):
			blocks = append(blocks, strings.Join(cur, "\n"))
			state = 0
		case state == 2:
			cur = append(cur, line)
		}
	}
	return blocks
}

func lines(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		out = append(out, strings.TrimSpace(l))
	}
	return out
}

func randomHex(t *testing.T, n int) string {
	t.Helper()
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

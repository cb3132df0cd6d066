// Command bench measures the platform on one machine against references
// measured in the same run on the same DynamoDB Local, and prints one table
// of ratios (make bench):
//
//	go run ./localstack/cmd/bench [-requests 5000] [-import-rows 20000] ...
//	go run ./localstack/cmd/bench -soak [-soak-duration 10m] [-soak-requests N]
//
// It starts DynamoDB Local (or uses the one DYNAMODB_ENDPOINT names) and the
// local stack's server (the program `make run` runs: API Gateway's
// stand-in calling the functions' Lambda handlers) on a free loopback port
// with a tenant of its own, then measures:
//
//   - API: each operation of a mix (GET /users/{id}, check-in and
//     checkout, grant, redeem, GET /awards, POST /transactions) alone and
//     the mix, with a fixed number of requests from a fixed number of
//     workers, against the DynamoDB calls those requests make issued
//     directly with the same workers (raw.go lists them);
//   - imports: a location import, an award import and the same award
//     import with an earned_at on every row, on perks whose lots expire
//     (POST, the S3-triggered jobs function, operation DONE), each against
//     raw BatchWriteItem of the items the import stored, with 8 writers;
//     then three location imports of the same rows (new locations, the
//     same file again, every row changed), the re-imports against the
//     first;
//   - webhooks: a burst of actions with a webhook endpoint on a receiver
//     in the driver's process, from each action to its event's first
//     attempt, against raw signed POSTs and raw SQS messages of the same
//     size to the same receiver; then the same burst with an endpoint
//     that answers slowly beside (webhooks.go);
//   - cold start: each function's stripped linux/arm64 binary size and its
//     initialisation time (host build, the runtime harness, from exec to
//     its first request for an event; median of runs) against a hello-world
//     Go Lambda built with the same flags, started in turn with each of the
//     function's runs.
//
// The table (section, figure, value, reference, ratio, target) is printed
// with the machine and written as JSON (-out). With -soak it runs the mix
// for a fixed time or number of requests instead, reports the resident
// memory of the server and of DynamoDB Local in the first and the last
// minute, and exits 1 on any error.
//
// Settings come from flags or, when a flag is not given, from the
// environment: BENCH_REQUESTS, BENCH_CONCURRENCY, BENCH_IMPORT_ROWS,
// BENCH_REIMPORT_ROWS, BENCH_COLD_RUNS, BENCH_WEBHOOK_ACTIONS,
// SOAK_REQUESTS, SOAK_DURATION.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// settings are the driver's knobs.
type settings struct {
	Requests     int `json:"requests"`
	Concurrency  int `json:"concurrency"`
	ImportRows   int `json:"importRows"`
	ReimportRows int `json:"reimportRows"`
	ColdRuns     int `json:"coldRuns"`
	// WebhookActions is the actions of each burst of the webhooks section.
	WebhookActions int           `json:"webhookActions"`
	Functions      []string      `json:"functions,omitempty"`
	Sections       []string      `json:"sections"`
	Soak           bool          `json:"soak,omitempty"`
	SoakRequests   int           `json:"soakRequests,omitempty"`
	SoakDuration   time.Duration `json:"soakDuration,omitempty"`

	Server   string `json:"-"` // the local stack's binary; empty: built here
	BuildDir string `json:"-"`
	Out      string `json:"-"`
	Log      string `json:"-"`
	Hello    string `json:"-"` // hello-world host build; empty: built here
	HelloArm string `json:"-"`
	Markdown string `json:"-"` // a report to print as Markdown instead of running
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	set, err := parseSettings(os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	if set.Markdown != "" {
		if err := printMarkdown(os.Stdout, set.Markdown); err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			os.Exit(1)
		}
		return
	}
	if err := run(ctx, set, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil {
		return v
	}
	return def
}

func envDuration(name string, def time.Duration) time.Duration {
	if v, err := time.ParseDuration(os.Getenv(name)); err == nil {
		return v
	}
	return def
}

// allSections are the benchmark's sections, in the order they run.
var allSections = []string{"api", "liability", "imports", "webhooks", "cold"}

func parseSettings(args []string) (settings, error) {
	var set settings
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.IntVar(&set.Requests, "requests", envInt("BENCH_REQUESTS", 5000), "requests per API run (each operation, the mix, and each raw side)")
	fs.IntVar(&set.Concurrency, "concurrency", envInt("BENCH_CONCURRENCY", 8), "requests in flight (workers)")
	fs.IntVar(&set.ImportRows, "import-rows", envInt("BENCH_IMPORT_ROWS", 20000), "rows of each import file (0 skips the imports)")
	fs.IntVar(&set.ReimportRows, "reimport-rows", envInt("BENCH_REIMPORT_ROWS", 10000), "rows of the location imports of new, unchanged and changed locations (0 skips them)")
	fs.IntVar(&set.ColdRuns, "cold-runs", envInt("BENCH_COLD_RUNS", 10), "cold starts per function, the median is reported (0 skips them)")
	fs.IntVar(&set.WebhookActions, "webhook-actions", envInt("BENCH_WEBHOOK_ACTIONS", 2000), "actions of each burst of the webhooks section")
	sections := fs.String("sections", strings.Join(allSections, ","), "comma-separated sections to run: "+strings.Join(allSections, ", "))
	fns := fs.String("functions", "", "comma-separated functions to cold-start (default: every function)")
	fs.BoolVar(&set.Soak, "soak", false, "run the soak instead of the benchmark")
	fs.IntVar(&set.SoakRequests, "soak-requests", envInt("SOAK_REQUESTS", 0), "soak: stop after this many requests (0: only the duration bounds it)")
	fs.DurationVar(&set.SoakDuration, "soak-duration", envDuration("SOAK_DURATION", 10*time.Minute), "soak: stop after this long")
	fs.StringVar(&set.Server, "server", "", "the local stack's binary (default: go build ./localstack into the build directory)")
	fs.StringVar(&set.BuildDir, "build-dir", "build", "where make build and make build-host put the functions")
	fs.StringVar(&set.Out, "out", "", "the JSON report (default build/bench.json, build/soak.json)")
	fs.StringVar(&set.Log, "log", "", "the server's log (default build/bench/localstack.log)")
	fs.StringVar(&set.Hello, "hello", "", "hello-world Lambda, host build (default: built into the build directory)")
	fs.StringVar(&set.HelloArm, "hello-arm64", "", "hello-world Lambda, linux/arm64 build, for its size (default: build/bench/hello-arm64/bootstrap)")
	fs.StringVar(&set.Markdown, "markdown", "", "print the report in this JSON `file` (build/bench.json) as a Markdown table, and run nothing")
	if err := fs.Parse(args); err != nil {
		return set, err
	}
	if *fns != "" {
		set.Functions = strings.Split(*fns, ",")
	}
	set.Sections = strings.Split(*sections, ",")
	for _, sec := range set.Sections {
		if !slices.Contains(allSections, sec) {
			return set, fmt.Errorf("-sections: unknown section %q (%s)", sec, strings.Join(allSections, ", "))
		}
	}
	if set.Concurrency < 1 || set.Requests < 1 || set.WebhookActions < 1 {
		return set, fmt.Errorf("-concurrency, -requests and -webhook-actions must be positive")
	}
	if set.Soak && set.SoakDuration <= 0 && set.SoakRequests <= 0 {
		return set, fmt.Errorf("the soak needs a bound: -soak-duration or -soak-requests (SOAK_DURATION, SOAK_REQUESTS)")
	}
	if set.Out == "" {
		set.Out = filepath.Join(set.BuildDir, "bench.json")
		if set.Soak {
			set.Out = filepath.Join(set.BuildDir, "soak.json")
		}
	}
	if set.Log == "" {
		set.Log = filepath.Join(set.BuildDir, "bench", "localstack.log")
	}
	if set.HelloArm == "" {
		set.HelloArm = filepath.Join(set.BuildDir, "bench", "hello-arm64", "bootstrap")
	}
	return set, nil
}

// machine describes where the figures were measured.
type machine struct {
	CPU   string `json:"cpu"`
	Cores int    `json:"cores"`
	Go    string `json:"go"`
	OS    string `json:"os"`
	Date  string `json:"date"`
}

func thisMachine() machine {
	mc := machine{CPU: "unknown", Cores: runtime.NumCPU(), Go: runtime.Version(), OS: runtime.GOOS + "/" + runtime.GOARCH,
		Date: time.Now().UTC().Format("2006-01-02 15:04 UTC")}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				mc.CPU = strings.TrimSpace(v)
				break
			}
		}
	}
	return mc
}

// row is one line of the table. Ratio is value over reference for
// throughputs and reference over value for times and sizes, so that 1 is
// parity and more is better.
type row struct {
	Section   string  `json:"section"`
	Figure    string  `json:"figure"`
	Value     float64 `json:"value"`
	Reference float64 `json:"reference"`
	Unit      string  `json:"unit"`
	Ratio     float64 `json:"ratio"`
	Target    string  `json:"target,omitempty"`
}

// report is the JSON document of a run.
type report struct {
	Machine  machine  `json:"machine"`
	Settings settings `json:"settings"`
	Rows     []row    `json:"rows"`
	Elapsed  string   `json:"elapsed"`
	Notes    []string `json:"notes,omitempty"`
}

func higher(section, figure string, v, ref float64, unit, target string) row {
	r := row{Section: section, Figure: figure, Value: v, Reference: ref, Unit: unit, Target: target}
	if ref > 0 {
		r.Ratio = v / ref
	}
	return r
}

func lower(section, figure string, v, ref float64, unit, target string) row {
	r := row{Section: section, Figure: figure, Value: v, Reference: ref, Unit: unit, Target: target}
	if v > 0 {
		r.Ratio = ref / v
	}
	return r
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// repoRoot returns the directory holding go.mod, walking up from the
// working directory.
func repoRoot() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for d := wd; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("no go.mod above %s", wd)
		}
	}
}

// goBuild builds pkg into out; lambda builds use the Makefile's flags.
func goBuild(ctx context.Context, root, out, pkg string, lambda bool) error {
	args := []string{"build", "-o", out}
	if lambda {
		args = append(args, "-tags", "lambda.norpc", "-trimpath", "-ldflags=-s -w")
	}
	cmd := exec.CommandContext(ctx, "go", append(args, pkg)...)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build %s: %w\n%s", pkg, err, b)
	}
	return nil
}

func run(ctx context.Context, set settings, stdout io.Writer) error {
	started := time.Now()
	// The driver's own log stays quiet: the table is its output.
	slog.SetDefault(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
	root, err := repoRoot()
	if err != nil {
		return err
	}
	abs := func(p string) string {
		if filepath.IsAbs(p) {
			return p
		}
		return filepath.Join(root, p)
	}
	set.BuildDir, set.Out, set.Log, set.HelloArm = abs(set.BuildDir), abs(set.Out), abs(set.Log), abs(set.HelloArm)
	if set.Server == "" {
		set.Server = filepath.Join(set.BuildDir, "bench", "localstack")
		fmt.Fprintln(os.Stderr, "bench: building the local stack")
		if err := goBuild(ctx, root, set.Server, "./localstack", false); err != nil {
			return err
		}
	}
	fmt.Fprintln(os.Stderr, "bench: starting DynamoDB Local and the local stack")
	e, err := startEnv(ctx, abs(set.Server), set.Log)
	if err != nil {
		return err
	}
	defer e.close()
	rep := report{Machine: thisMachine(), Settings: set}
	if set.Soak {
		err = soak(ctx, e, set, &rep, stdout)
	} else {
		err = bench(ctx, e, root, set, &rep)
		rep.Elapsed = time.Since(started).Round(time.Second).String()
		printTable(stdout, rep)
	}
	if werr := writeJSON(set.Out, rep); werr != nil && err == nil {
		err = werr
	}
	return err
}

func writeJSON(path string, rep report) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	b, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

// bench runs the sections of set into rep.
func bench(ctx context.Context, e *env, root string, set settings, rep *report) error {
	if slices.Contains(set.Sections, "api") {
		if err := benchAPI(ctx, e, set, rep); err != nil {
			return err
		}
	}
	if slices.Contains(set.Sections, "liability") {
		if err := benchLiability(ctx, e, set, rep); err != nil {
			return err
		}
	}
	if slices.Contains(set.Sections, "imports") && set.ImportRows > 0 {
		if err := benchImports(ctx, e, set, rep); err != nil {
			return err
		}
	}
	if slices.Contains(set.Sections, "webhooks") {
		if err := benchWebhooks(ctx, e, root, set, rep); err != nil {
			return err
		}
	}
	if slices.Contains(set.Sections, "cold") && set.ColdRuns > 0 {
		if err := benchColdStarts(ctx, e, root, set, rep); err != nil {
			return err
		}
	}
	return nil
}

// rounds is the number of turns the API and its raw side take in each run.
const rounds = 4

// benchAPI measures each operation alone and the mix against their raw
// DynamoDB calls.
func benchAPI(ctx context.Context, e *env, set settings, rep *report) error {
	c := set.Concurrency
	fmt.Fprintln(os.Stderr, "bench: creating users")
	fx, err := e.setup(ctx, 2*c)
	if err != nil {
		return err
	}
	if err := e.setupOrders(ctx, fx); err != nil {
		return fmt.Errorf("set up the orders: %w", err)
	}
	rw := &raw{e: e, fx: fx, checkins: map[int]string{}}
	if err := rw.prepare(ctx); err != nil {
		return err
	}
	if err := rw.prepareOrders(ctx); err != nil {
		return err
	}
	apiLoad := func(seq []string, requests int) load {
		return load{workers: c, requests: requests, seq: seq, users: len(fx.users), do: func(ctx context.Context, op string, u int) error {
			return e.apiDo(ctx, fx, op, u)
		}}
	}
	rawLoad := func(seq []string, requests int) load {
		return load{workers: c, requests: requests, seq: seq, users: len(fx.users), do: rw.do}
	}
	// Warm both sides up: connections, the functions' caches, the JIT of
	// DynamoDB Local.
	warm := c * len(mixOps) * 2
	for _, l := range []load{apiLoad(mixOps, warm), rawLoad(mixOps, warm)} {
		if r := l.run(ctx); r.Errors > 0 {
			return fmt.Errorf("warm-up: %v", r.FirstErrors[0])
		}
	}

	target := "≥ 0.8"
	var noRules []time.Duration // the card payment's latencies, no rules
	for _, ph := range phases {
		fmt.Fprintf(os.Stderr, "bench: API %s\n", ph.name)
		rw.refunds = ph.name == "refund mix"
		offset := e.logSize()
		// The API and its raw side take turns, so that whatever else the
		// machine does weighs on both alike.
		var api, rawR result
		for range rounds {
			a := apiLoad(ph.seq, (set.Requests+rounds-1)/rounds).run(ctx)
			if a.Errors > 0 {
				return fmt.Errorf("API %s: %v", ph.name, a.FirstErrors[0])
			}
			r := rawLoad(ph.seq, (set.Requests+rounds-1)/rounds).run(ctx)
			if r.Errors > 0 {
				return fmt.Errorf("raw %s: %v", ph.name, r.FirstErrors[0])
			}
			api, rawR = api.merge(a), rawR.merge(r)
		}
		if ph.name == opTxn {
			noRules = api.Latency[opTxn]
		}
		rep.Rows = append(rep.Rows, higher("API", ph.name+" throughput", api.ReqPerSec(), rawR.ReqPerSec(), "req/s", target))
		if ph.name == "mix" {
			all, rawAll := api.All(), rawR.All()
			rep.Rows = append(rep.Rows,
				lower("API", "mix p50", ms(quantile(all, 0.5)), ms(quantile(rawAll, 0.5)), "ms", ""),
				lower("API", "mix p99", ms(quantile(all, 0.99)), ms(quantile(rawAll, 0.99)), "ms", ""))
			continue
		}
		for _, op := range ph.seq {
			name := op
			if len(ph.seq) > 1 {
				name = ph.name + ": " + op
			}
			rep.Rows = append(rep.Rows,
				lower("API", name+" p50", ms(quantile(api.Latency[op], 0.5)), ms(quantile(rawR.Latency[op], 0.5)), "ms", ""),
				lower("API", name+" p99", ms(quantile(api.Latency[op], 0.99)), ms(quantile(rawR.Latency[op], 0.99)), "ms", ""))
		}
		// The DynamoDB calls the server logged for these requests, next
		// to the raw side's: a check that the raw side is the same work.
		if calls, err := ddbCallsByRoute(e.logPath, offset, phaseRoute(ph.seq)); err == nil {
			for _, op := range logged(ph.seq) {
				if v := calls[op]; v[0] > 0 {
					rep.Rows = append(rep.Rows, row{Section: "API", Figure: op + " DynamoDB calls/request",
						Value: float64(v[1]) / float64(v[0]), Reference: float64(rawCalls[op]), Unit: "calls",
						Ratio: float64(rawCalls[op]) / (float64(v[1]) / float64(v[0]))})
				}
			}
		}
	}
	// Last: the rules stay, and would weigh on every phase after them.
	return benchRules(ctx, e, fx, set, noRules, rep)
}

// benchImports measures the location import, the award import and the
// award import with earned_at against raw BatchWriteItem of the items
// they stored.
func benchImports(ctx context.Context, e *env, set settings, rep *report) error {
	// DynamoDB Local's JVM compiles its write paths as they run: the
	// first large batch of writes is slower than the rest. A smaller
	// import and its raw side, untimed, warm both sides up alike.
	warm := max(1000, set.ImportRows/4)
	fmt.Fprintf(os.Stderr, "bench: warm-up location import of %d rows (not reported)\n", warm)
	if _, err := e.runImport(ctx, "/locations/imports", locationFile(warm), warm, e.tables.Locations); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "bench: location import of %d rows\n", set.ImportRows)
	loc, err := e.runImport(ctx, "/locations/imports", locationFile(set.ImportRows), set.ImportRows, e.tables.Locations)
	if err != nil {
		return err
	}
	rep.Rows = append(rep.Rows, higher("imports", fmt.Sprintf("location import (%d rows)", loc.Rows), loc.RowsPerSec(), loc.RawRowsPerSec(), "rows/s", ""))
	rep.Notes = append(rep.Notes, fmt.Sprintf("location import: %.2f items/row of %d bytes on average written raw", loc.ItemsPerRow, loc.AvgItemSize))
	if set.ReimportRows > 0 {
		// Rows that update or leave a location against rows that create
		// one: the same rows three times, the time of each import against
		// the first's (target: at most 1.5 times as long).
		re, err := e.reimports(ctx, set.ReimportRows)
		if err != nil {
			return err
		}
		n := re.Rows
		rep.Rows = append(rep.Rows,
			lower("imports", fmt.Sprintf("location import, new locations (%d rows; reference: raw BatchWriteItem at the location import's pace)", n), re.New.Seconds(), float64(n)/loc.RawRowsPerSec(), "s", ""),
			lower("imports", fmt.Sprintf("location import, the same file again: nothing to write (%d rows; reference: new)", n), re.Unchanged.Seconds(), re.New.Seconds(), "s", "≥ 0.67"),
			lower("imports", fmt.Sprintf("location import, every row changed (%d rows; reference: new)", n), re.Changed.Seconds(), re.New.Seconds(), "s", "≥ 0.67"))
	}
	fmt.Fprintf(os.Stderr, "bench: award import of %d rows\n", set.ImportRows)
	file, err := e.awardFile(ctx, set.ImportRows, awardShape{})
	if err != nil {
		return err
	}
	// A silent import (suppressEvents, the default) records no action
	// when no lot expires: its rows write the Loyalty table only.
	aw, err := e.runImport(ctx, "/awards/imports", file, set.ImportRows, e.tables.Loyalty)
	if err != nil {
		return err
	}
	rep.Rows = append(rep.Rows, higher("imports", fmt.Sprintf("award import (%d rows)", aw.Rows), aw.RowsPerSec(), aw.RawRowsPerSec(), "rows/s", ""))
	rep.Notes = append(rep.Notes, fmt.Sprintf("award import: %.2f items/row of %d bytes on average written raw", aw.ItemsPerRow, aw.AvgItemSize))

	// The same import with an earned_at on every row, on perks whose lots
	// expire 12 months after they were earned: a lot already past its
	// expiry is granted and expires at once (EARN and EXPIRY entries, and
	// a POINTS_EXPIRED action in the Actions table, even when silent).
	fmt.Fprintf(os.Stderr, "bench: award import with earned_at of %d rows\n", set.ImportRows)
	file, err = e.awardFile(ctx, set.ImportRows, awardShape{Expiry: earnedExpiry, EarnedMonths: earnedMonths})
	if err != nil {
		return err
	}
	ea, err := e.runImport(ctx, "/awards/imports", file, set.ImportRows, e.tables.Loyalty, e.tables.Actions)
	if err != nil {
		return err
	}
	if ea.ExpiryEntries == 0 {
		return fmt.Errorf("award import with earned_at: no lot of its %d rows expired as it was imported (the dates no longer reach past the perks' expiry)", ea.Rows)
	}
	rep.Rows = append(rep.Rows, higher("imports", fmt.Sprintf("award import with earned_at (%d rows)", ea.Rows), ea.RowsPerSec(), ea.RawRowsPerSec(), "rows/s", ""))
	rep.Notes = append(rep.Notes, fmt.Sprintf("award import with earned_at: %.2f items/row of %d bytes on average written raw (%d in %s, %d in %s); %d of %d lots expired as they were imported",
		ea.ItemsPerRow, ea.AvgItemSize, ea.ItemsByTable[e.tables.Loyalty], e.tables.Loyalty, ea.ItemsByTable[e.tables.Actions], e.tables.Actions, ea.ExpiryEntries, ea.Rows))
	return nil
}

// benchColdStarts measures every function's size and initialisation
// against the hello-world Lambda's.
func benchColdStarts(ctx context.Context, e *env, root string, set settings, rep *report) error {

	fmt.Fprintln(os.Stderr, "bench: cold starts")
	fns := set.Functions
	if len(fns) == 0 {
		var err error
		if fns, err = functionNames(root); err != nil {
			return err
		}
	}
	hello := set.Hello
	if hello == "" {
		hello = filepath.Join(set.BuildDir, "bench", "hello", "bootstrap")
		if err := goBuild(ctx, root, hello, "./localstack/cmd/bench/hello", true); err != nil {
			return err
		}
	}
	env := append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.TempDir()}, e.stackEnv()...)
	h, cs, err := coldStarts(ctx, fns, filepath.Join(set.BuildDir, "host"), set.BuildDir, hello, set.HelloArm, env, set.ColdRuns)
	if err != nil {
		return err
	}
	for _, f := range cs {
		rep.Rows = append(rep.Rows, lower("cold start", f.Function+" init", ms(f.Init), ms(f.HelloInit), "ms", ""))
		if f.Size > 0 && h.Size > 0 {
			rep.Rows = append(rep.Rows, lower("cold start", f.Function+" arm64 size", float64(f.Size)/(1<<20), float64(h.Size)/(1<<20), "MiB", ""))
		}
	}
	return nil
}

// printTable prints the machine and the rows.
func printTable(w io.Writer, rep report) {
	mc := rep.Machine
	fmt.Fprintf(w, "\nMachine: %s, %d cores, %s, %s; %s\n", mc.CPU, mc.Cores, mc.OS, mc.Go, mc.Date)
	if st := rep.Settings; st.Soak {
		fmt.Fprintf(w, "Settings: the mix, %d in flight, for %s or %d requests (0: no bound), whichever first; took %s\n\n",
			st.Concurrency, st.SoakDuration, st.SoakRequests, rep.Elapsed)
	} else {
		fmt.Fprintf(w, "Settings: %d requests per run, %d in flight, %d import rows, %d cold starts per function, sections %s; took %s\n\n",
			st.Requests, st.Concurrency, st.ImportRows, st.ColdRuns, strings.Join(st.Sections, ","), rep.Elapsed)
	}
	fmt.Fprintf(w, "%-10s  %-44s  %10s  %10s  %-6s  %6s  %s\n", "section", "figure", "value", "reference", "unit", "ratio", "target")
	for _, r := range rep.Rows {
		ref, ratio := "", ""
		if r.Reference != 0 {
			ref, ratio = num(r.Reference), strconv.FormatFloat(r.Ratio, 'f', 2, 64)
		}
		fmt.Fprintf(w, "%-10s  %-44s  %10s  %10s  %-6s  %6s  %s\n", r.Section, r.Figure, num(r.Value), ref, r.Unit, ratio, r.Target)
	}
	for _, n := range rep.Notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
	fmt.Fprintln(w)
}

// printMarkdown prints the report in path as a Markdown table headed by
// the machine and the date, for the README.
func printMarkdown(w io.Writer, path string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var rep report
	if err := json.Unmarshal(b, &rep); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	mc, st := rep.Machine, rep.Settings
	fmt.Fprintf(w, "Measured %s on %s, %d cores, %s, %s", mc.Date, mc.CPU, mc.Cores, mc.OS, mc.Go)
	if st.Soak {
		fmt.Fprintf(w, "; the soak: %d in flight for %s or %d requests.\n\n", st.Concurrency, st.SoakDuration, st.SoakRequests)
	} else {
		fmt.Fprintf(w, "; %d requests per run, %d in flight, %d import rows, median of %d cold starts.\n\n", st.Requests, st.Concurrency, st.ImportRows, st.ColdRuns)
	}
	fmt.Fprintln(w, "| section | figure | value | reference | ratio | target |")
	fmt.Fprintln(w, "|---|---|--:|--:|--:|---|")
	for _, r := range rep.Rows {
		ref, ratio := "", ""
		if r.Reference != 0 {
			ref, ratio = num(r.Reference)+" "+r.Unit, strconv.FormatFloat(r.Ratio, 'f', 2, 64)
		}
		fmt.Fprintf(w, "| %s | %s | %s %s | %s | %s | %s |\n", r.Section, r.Figure, num(r.Value), r.Unit, ref, ratio, r.Target)
	}
	if len(rep.Notes) > 0 {
		fmt.Fprintln(w)
	}
	for _, n := range rep.Notes {
		fmt.Fprintf(w, "- %s\n", n)
	}
	return nil
}

func num(v float64) string {
	switch {
	case v == float64(int64(v)):
		return strconv.FormatInt(int64(v), 10)
	case v >= 100:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case v >= 10:
		return strconv.FormatFloat(v, 'f', 1, 64)
	default:
		return strconv.FormatFloat(v, 'f', 2, 64)
	}
}

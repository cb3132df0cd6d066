// Package sam reads the project's AWS SAM template: the functions and their
// HttpApi routes, S3 triggers, DynamoDB stream events, SQS events and
// schedules, the DynamoDB tables (with their streams), the buckets and the
// SQS queues. The local stack and the tests wire everything from it, so the
// template stays the single truth.
package sam

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// Template is the part of template.yaml the project reads.
type Template struct {
	Functions  []Function
	Tables     []Table
	Buckets    []Bucket
	Queues     []Queue
	APIs       []HttpAPI
	Parameters map[string]Parameter
	// Resources is every resource in its plain form, by logical id: what
	// the checks of the template's operations (logs, alarms, retention)
	// read.
	Resources map[string]Resource
	// Conditions names the template's conditions.
	Conditions map[string]any
	// GlobalEnv is the environment every function gets
	// (Globals.Function.Environment.Variables), by variable name.
	GlobalEnv map[string]any
}

// Resource is one resource of the template, its values as plain Go values
// with CloudFormation's short-form tags in their long form (!Ref X is
// map[Ref:X], !Sub s is map[Fn::Sub:s], !GetAtt X.Y is map[Fn::GetAtt:X.Y]).
type Resource struct {
	Type                string
	DeletionPolicy      string
	UpdateReplacePolicy string
	Properties          map[string]any
}

// HttpAPI is one AWS::Serverless::HttpApi and the default throttling of
// its stage's routes (DefaultRouteSettings), each the name of the
// parameter a !Ref names or a literal value; empty when unset.
type HttpAPI struct {
	LogicalID            string
	ThrottlingBurstLimit string
	ThrottlingRateLimit  string
	// CORS is the API's CorsConfiguration; nil when it has none.
	CORS *CORS
}

// CORS is an HttpApi's CorsConfiguration, as API Gateway applies it: it
// answers the browsers' preflight requests itself and adds the
// Access-Control-* headers to the functions' answers. A list given as a
// !Ref to a CommaDelimitedList parameter holds the parameter's default
// (what a deployment that does not override it gets), and the parameter's
// name is kept in AllowOriginsParameter.
type CORS struct {
	AllowOrigins []string
	// AllowOriginsParameter names the parameter AllowOrigins comes from;
	// empty when the template lists the origins itself.
	AllowOriginsParameter string
	AllowHeaders          []string
	AllowMethods          []string
	ExposeHeaders         []string
	// MaxAge is how many seconds a browser may keep a preflight's answer;
	// 0 when unset.
	MaxAge           int
	AllowCredentials bool
}

// Parameter is one template parameter.
type Parameter struct {
	Type    string
	Default string
	// HasDefault tells an empty Default ("") from none.
	HasDefault bool
	MinValue   string
	MaxValue   string
}

// Function is one AWS::Serverless::Function.
type Function struct {
	LogicalID string
	// Name is the function's directory under functions/: the logical id
	// without its "Function" suffix, lower-cased (UsersFunction -> users).
	Name   string
	Routes []Route
	// Env is the function's own environment
	// (Properties.Environment.Variables), by variable name; the template's
	// GlobalEnv comes on top.
	Env      map[string]any
	S3Events []S3Event
	Streams  []StreamEvent // DynamoDB events: the table streams it reads
	// QueueEvents are its SQS events: the queues it consumes.
	QueueEvents []QueueEvent
	Schedules   []string
	// Timeout is how long one invocation may run: the function's Timeout,
	// else Globals.Function.Timeout, else Lambda's default of 3 seconds.
	// Lambda ends an invocation that runs longer as failed ("Task timed
	// out"); the local stack does the same.
	Timeout time.Duration
}

// DefaultTimeout is Lambda's Timeout of a function that sets none.
const DefaultTimeout = 3 * time.Second

// Route is one HttpApi event.
type Route struct {
	Event  string
	Method string
	Path   string
}

// Key returns the API Gateway route key ("GET /users/{userId}").
func (r Route) Key() string { return r.Method + " " + r.Path }

// S3Event is one S3 trigger of a function.
type S3Event struct {
	Bucket string // logical id of the bucket
	Prefix string
	Suffix string
}

// StreamEvent is one DynamoDB event of a function: an event source mapping
// that reads a table's stream in batches.
type StreamEvent struct {
	Event string
	// Table is the logical id of the table whose stream the event reads
	// (Stream: !GetAtt ActionsTable.StreamArn); empty when Stream names no
	// template table.
	Table string
	// StartingPosition is LATEST or TRIM_HORIZON.
	StartingPosition string
	// BatchSize is the most records in one invocation; 0 when unset
	// (Lambda's default is 100).
	BatchSize int
	// MaximumBatchingWindowInSeconds is how long Lambda may gather records
	// before it invokes; 0 when unset.
	MaximumBatchingWindowInSeconds int
	// MaximumRetryAttempts is how often a failed batch is retried; -1 when
	// unset, Lambda's default: retry until the records expire.
	MaximumRetryAttempts int
	// BisectBatchOnFunctionError splits a failing batch in two and retries
	// each half.
	BisectBatchOnFunctionError bool
	// FunctionResponseTypes lists ReportBatchItemFailures when the function
	// answers the records that failed.
	FunctionResponseTypes []string
}

// ReportsBatchItemFailures tells whether the function answers its failed
// records (FunctionResponseTypes: [ReportBatchItemFailures]).
func (e StreamEvent) ReportsBatchItemFailures() bool {
	return reportsFailures(e.FunctionResponseTypes)
}

// QueueEvent is one SQS event of a function: an event source mapping that
// receives a queue's messages in batches.
type QueueEvent struct {
	Event string
	// Queue is the logical id of the queue the event reads (Queue:
	// !GetAtt WebhookQueue.Arn); empty when Queue names no template queue.
	Queue string
	// BatchSize is the most messages in one invocation; 0 when unset
	// (Lambda's default is 10).
	BatchSize int
	// MaximumBatchingWindowInSeconds is how long Lambda may gather
	// messages before it invokes; 0 when unset.
	MaximumBatchingWindowInSeconds int
	// FunctionResponseTypes lists ReportBatchItemFailures when the function
	// answers the messages that failed.
	FunctionResponseTypes []string
	// MaximumConcurrency is the most invocations the event runs at once
	// (ScalingConfig.MaximumConcurrency); 0 when unset.
	MaximumConcurrency int
	// Enabled is false when the template turns the mapping off.
	Enabled bool
}

// ReportsBatchItemFailures tells whether the function answers its failed
// messages (FunctionResponseTypes: [ReportBatchItemFailures]).
func (e QueueEvent) ReportsBatchItemFailures() bool {
	return reportsFailures(e.FunctionResponseTypes)
}

func reportsFailures(types []string) bool {
	for _, t := range types {
		if t == "ReportBatchItemFailures" {
			return true
		}
	}
	return false
}

// Queue is one AWS::SQS::Queue, with SQS's defaults for what the template
// leaves out. A value given as a !Ref to a parameter is the parameter's
// default.
type Queue struct {
	LogicalID string
	// Name is the QueueName; empty when CloudFormation names the queue.
	Name string
	// Fifo is set for a FIFO queue (FifoQueue: true).
	Fifo bool
	// ContentBasedDeduplication deduplicates a FIFO queue's messages sent
	// without a deduplication id by the SHA-256 of their body.
	ContentBasedDeduplication bool
	// DeduplicationScope is "queue" or "messageGroup"; empty when unset
	// (queue).
	DeduplicationScope string
	// VisibilityTimeout is how long a received message stays invisible
	// (30 seconds when unset).
	VisibilityTimeout time.Duration
	// MessageRetentionPeriod is how long the queue keeps a message (4
	// days when unset).
	MessageRetentionPeriod time.Duration
	// DelaySeconds delays every message sent (0 when unset).
	DelaySeconds time.Duration
	// DeadLetterQueue is the logical id of the queue RedrivePolicy's
	// deadLetterTargetArn names (!GetAtt X.Arn); empty without a redrive
	// policy or for an ARN that names no template queue.
	DeadLetterQueue string
	// MaxReceiveCount is how often a message is received before SQS moves
	// it to the dead-letter queue; 0 without a redrive policy.
	MaxReceiveCount int
}

// SQS's defaults for a queue's VisibilityTimeout and MessageRetentionPeriod.
const (
	DefaultVisibilityTimeout = 30 * time.Second
	DefaultRetentionPeriod   = 4 * 24 * time.Hour
)

// Table is one AWS::DynamoDB::Table.
type Table struct {
	LogicalID  string
	HashKey    string
	RangeKey   string
	Attributes map[string]string
	Indexes    []Index
	TTL        string
	// StreamView is the view type of the table's stream
	// (StreamSpecification.StreamViewType: NEW_IMAGE, ...); empty when the
	// table has no stream.
	StreamView string
}

// Index is a global secondary index.
type Index struct {
	Name     string
	HashKey  string
	RangeKey string
}

// Bucket is one AWS::S3::Bucket.
type Bucket struct {
	LogicalID string
}

// Path returns the path of template.yaml at the repository root, found from
// this source file (for tests) or from the working directory.
func Path() string {
	if p := os.Getenv("SAM_TEMPLATE"); p != "" {
		return p
	}
	_, file, _, ok := runtime.Caller(0)
	if ok {
		p := filepath.Join(filepath.Dir(file), "..", "..", "..", "template.yaml")
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return "template.yaml"
}

// Load reads and parses the template at path.
func Load(path string) (*Template, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read template: %w", err)
	}
	return Parse(b)
}

// Parse parses template text.
func Parse(b []byte) (*Template, error) {
	var root yaml.Node
	if err := yaml.Unmarshal(b, &root); err != nil {
		return nil, fmt.Errorf("parse template: %w", err)
	}
	doc, ok := toValue(&root).(map[string]any)
	if !ok {
		return nil, fmt.Errorf("parse template: not a mapping")
	}
	res, _ := doc["Resources"].(map[string]any)
	t := &Template{Parameters: map[string]Parameter{}, Resources: map[string]Resource{}}
	t.Conditions, _ = doc["Conditions"].(map[string]any)
	globals, _ := doc["Globals"].(map[string]any)
	t.GlobalEnv = envVars(globals["Function"])
	globalFn, _ := globals["Function"].(map[string]any)
	timeout := seconds(globalFn["Timeout"], DefaultTimeout)
	params, _ := doc["Parameters"].(map[string]any)
	for name, v := range params {
		p, _ := v.(map[string]any)
		_, hasDefault := p["Default"]
		t.Parameters[name] = Parameter{Type: str(p["Type"]), Default: str(p["Default"]), HasDefault: hasDefault, MinValue: str(p["MinValue"]), MaxValue: str(p["MaxValue"])}
	}
	ids := make([]string, 0, len(res))
	for id := range res {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		r, _ := res[id].(map[string]any)
		props, _ := r["Properties"].(map[string]any)
		t.Resources[id] = Resource{Type: str(r["Type"]), DeletionPolicy: str(r["DeletionPolicy"]), UpdateReplacePolicy: str(r["UpdateReplacePolicy"]), Properties: props}
		switch r["Type"] {
		case "AWS::Serverless::Function":
			f := t.parseFunction(id, props)
			f.Timeout = seconds(props["Timeout"], timeout)
			t.Functions = append(t.Functions, f)
		case "AWS::DynamoDB::Table":
			t.Tables = append(t.Tables, parseTable(id, props))
		case "AWS::S3::Bucket":
			t.Buckets = append(t.Buckets, Bucket{LogicalID: id})
		case "AWS::SQS::Queue":
			t.Queues = append(t.Queues, t.parseQueue(id, props))
		case "AWS::Serverless::HttpApi":
			rs, _ := props["DefaultRouteSettings"].(map[string]any)
			t.APIs = append(t.APIs, HttpAPI{
				LogicalID: id, ThrottlingBurstLimit: ref(rs["ThrottlingBurstLimit"]), ThrottlingRateLimit: ref(rs["ThrottlingRateLimit"]),
				CORS: t.parseCORS(props["CorsConfiguration"]),
			})
		}
	}
	return t, nil
}

// parseCORS reads an HttpApi's CorsConfiguration (nil when absent),
// resolving a !Ref to a parameter to the parameter's default.
func (t *Template) parseCORS(v any) *CORS {
	m, ok := v.(map[string]any)
	if !ok {
		return nil
	}
	c := &CORS{
		AllowHeaders:     t.strings(m["AllowHeaders"]),
		AllowMethods:     t.strings(m["AllowMethods"]),
		ExposeHeaders:    t.strings(m["ExposeHeaders"]),
		MaxAge:           integer(m["MaxAge"], 0),
		AllowCredentials: boolean(m["AllowCredentials"]),
	}
	if r, ok := m["AllowOrigins"].(map[string]any); ok {
		c.AllowOriginsParameter = str(r["Ref"])
	}
	c.AllowOrigins = t.strings(m["AllowOrigins"])
	return c
}

// strings reads a list of strings: a YAML sequence, or a !Ref to a
// parameter whose default is a comma-separated list.
func (t *Template) strings(v any) []string {
	if r, ok := v.(map[string]any); ok {
		p, ok := t.Parameters[str(r["Ref"])]
		if !ok || p.Default == "" {
			return nil
		}
		out := strings.Split(p.Default, ",")
		for i := range out {
			out[i] = strings.TrimSpace(out[i])
		}
		return out
	}
	items, _ := v.([]any)
	out := make([]string, 0, len(items))
	for _, it := range items {
		out = append(out, str(it))
	}
	return out
}

// Queue returns the queue with the given logical id.
func (t *Template) Queue(logicalID string) (Queue, bool) {
	for _, q := range t.Queues {
		if q.LogicalID == logicalID {
			return q, true
		}
	}
	return Queue{}, false
}

// Function returns the function with the given directory name.
func (t *Template) Function(name string) (Function, bool) {
	for _, f := range t.Functions {
		if f.Name == name {
			return f, true
		}
	}
	return Function{}, false
}

func (t *Template) parseFunction(id string, props map[string]any) Function {
	f := Function{LogicalID: id, Name: strings.ToLower(strings.TrimSuffix(id, "Function")), Env: envVars(props)}
	evs, _ := props["Events"].(map[string]any)
	names := make([]string, 0, len(evs))
	for n := range evs {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		ev, _ := evs[n].(map[string]any)
		p, _ := ev["Properties"].(map[string]any)
		switch ev["Type"] {
		case "HttpApi":
			f.Routes = append(f.Routes, Route{Event: n, Method: str(p["Method"]), Path: str(p["Path"])})
		case "S3":
			s := S3Event{Bucket: ref(p["Bucket"])}
			if filter, ok := p["Filter"].(map[string]any); ok {
				key, _ := filter["S3Key"].(map[string]any)
				rules, _ := key["Rules"].([]any)
				for _, r := range rules {
					rm, _ := r.(map[string]any)
					switch strings.ToLower(str(rm["Name"])) {
					case "prefix":
						s.Prefix = str(rm["Value"])
					case "suffix":
						s.Suffix = str(rm["Value"])
					}
				}
			}
			f.S3Events = append(f.S3Events, s)
		case "DynamoDB":
			f.Streams = append(f.Streams, parseStreamEvent(n, p))
		case "SQS":
			f.QueueEvents = append(f.QueueEvents, t.parseQueueEvent(n, p))
		case "Schedule", "ScheduleV2":
			f.Schedules = append(f.Schedules, str(p["Schedule"])+str(p["ScheduleExpression"]))
		}
	}
	return f
}

// envVars returns Environment.Variables of a function's properties (or of
// Globals.Function); nil when there are none.
func envVars(v any) map[string]any {
	props, _ := v.(map[string]any)
	env, _ := props["Environment"].(map[string]any)
	vars, _ := env["Variables"].(map[string]any)
	return vars
}

func parseStreamEvent(name string, p map[string]any) StreamEvent {
	e := StreamEvent{
		Event:                          name,
		Table:                          streamTable(p["Stream"]),
		StartingPosition:               str(p["StartingPosition"]),
		BatchSize:                      integer(p["BatchSize"], 0),
		MaximumBatchingWindowInSeconds: integer(p["MaximumBatchingWindowInSeconds"], 0),
		MaximumRetryAttempts:           integer(p["MaximumRetryAttempts"], -1),
		BisectBatchOnFunctionError:     boolean(p["BisectBatchOnFunctionError"]),
	}
	types, _ := p["FunctionResponseTypes"].([]any)
	for _, typ := range types {
		if s := str(typ); s != "" {
			e.FunctionResponseTypes = append(e.FunctionResponseTypes, s)
		}
	}
	return e
}

func (t *Template) parseQueueEvent(name string, p map[string]any) QueueEvent {
	scaling, _ := p["ScalingConfig"].(map[string]any)
	e := QueueEvent{
		Event:                          name,
		Queue:                          getAttOf(p["Queue"], "Arn"),
		BatchSize:                      integer(t.scalar(p["BatchSize"]), 0),
		MaximumBatchingWindowInSeconds: integer(t.scalar(p["MaximumBatchingWindowInSeconds"]), 0),
		MaximumConcurrency:             integer(t.scalar(scaling["MaximumConcurrency"]), 0),
		Enabled:                        true,
	}
	if v, ok := p["Enabled"]; ok {
		e.Enabled = boolean(t.scalar(v))
	}
	types, _ := p["FunctionResponseTypes"].([]any)
	for _, typ := range types {
		if s := str(typ); s != "" {
			e.FunctionResponseTypes = append(e.FunctionResponseTypes, s)
		}
	}
	return e
}

func (t *Template) parseQueue(id string, props map[string]any) Queue {
	q := Queue{
		LogicalID:                 id,
		Name:                      str(t.scalar(props["QueueName"])),
		Fifo:                      boolean(t.scalar(props["FifoQueue"])),
		ContentBasedDeduplication: boolean(t.scalar(props["ContentBasedDeduplication"])),
		DeduplicationScope:        str(t.scalar(props["DeduplicationScope"])),
		VisibilityTimeout:         time.Duration(integer(t.scalar(props["VisibilityTimeout"]), int(DefaultVisibilityTimeout/time.Second))) * time.Second,
		MessageRetentionPeriod:    time.Duration(integer(t.scalar(props["MessageRetentionPeriod"]), int(DefaultRetentionPeriod/time.Second))) * time.Second,
		DelaySeconds:              time.Duration(integer(t.scalar(props["DelaySeconds"]), 0)) * time.Second,
	}
	if redrive, ok := props["RedrivePolicy"].(map[string]any); ok {
		q.DeadLetterQueue = getAttOf(redrive["deadLetterTargetArn"], "Arn")
		q.MaxReceiveCount = integer(t.scalar(redrive["maxReceiveCount"]), 0)
	}
	return q
}

// scalar returns v, or the default of the parameter a !Ref v names.
func (t *Template) scalar(v any) any {
	if m, ok := v.(map[string]any); ok {
		if name, ok := m["Ref"].(string); ok {
			if p, ok := t.Parameters[name]; ok && p.HasDefault {
				return p.Default
			}
		}
	}
	return v
}

// getAttOf returns the logical id of the resource whose attribute attr v
// names: !GetAtt X.<attr>, {"Fn::GetAtt": "X.<attr>"} or
// {"Fn::GetAtt": [X, <attr>]}; "" for anything else (a literal ARN).
func getAttOf(v any, attr string) string {
	m, ok := v.(map[string]any)
	if !ok {
		return ""
	}
	switch att := m["Fn::GetAtt"].(type) {
	case string:
		if id, a, ok := strings.Cut(att, "."); ok && a == attr {
			return id
		}
	case []any:
		if len(att) == 2 && str(att[1]) == attr {
			return str(att[0])
		}
	}
	return ""
}

// streamTable returns the logical id of the table whose stream ARN v names:
// !GetAtt X.StreamArn, {"Fn::GetAtt": "X.StreamArn"} or
// {"Fn::GetAtt": [X, StreamArn]}; "" for anything else (a literal ARN).
func streamTable(v any) string {
	return getAttOf(v, "StreamArn")
}

func parseTable(id string, props map[string]any) Table {
	t := Table{LogicalID: id, Attributes: map[string]string{}}
	for _, a := range list(props["AttributeDefinitions"]) {
		t.Attributes[str(a["AttributeName"])] = str(a["AttributeType"])
	}
	t.HashKey, t.RangeKey = keySchema(props["KeySchema"])
	for _, g := range list(props["GlobalSecondaryIndexes"]) {
		h, r := keySchema(g["KeySchema"])
		t.Indexes = append(t.Indexes, Index{Name: str(g["IndexName"]), HashKey: h, RangeKey: r})
	}
	if ttl, ok := props["TimeToLiveSpecification"].(map[string]any); ok {
		t.TTL = str(ttl["AttributeName"])
	}
	if spec, ok := props["StreamSpecification"].(map[string]any); ok {
		t.StreamView = str(spec["StreamViewType"])
	}
	return t
}

func keySchema(v any) (hash, rng string) {
	for _, k := range list(v) {
		switch k["KeyType"] {
		case "HASH":
			hash = str(k["AttributeName"])
		case "RANGE":
			rng = str(k["AttributeName"])
		}
	}
	return hash, rng
}

func list(v any) []map[string]any {
	items, _ := v.([]any)
	out := make([]map[string]any, 0, len(items))
	for _, it := range items {
		if m, ok := it.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

// integer reads a scalar as an int (YAML scalars are kept as text), or def
// when it is absent or not a number.
func integer(v any, def int) int {
	n, err := strconv.Atoi(strings.TrimSpace(str(v)))
	if err != nil {
		return def
	}
	return n
}

// seconds reads a scalar number of seconds (a function's Timeout) as a
// duration, or def when it is absent or not a positive number.
func seconds(v any, def time.Duration) time.Duration {
	n := integer(v, 0)
	if n <= 0 {
		return def
	}
	return time.Duration(n) * time.Second
}

// boolean reads a scalar as a YAML boolean (true, True, TRUE).
func boolean(v any) bool {
	b, _ := strconv.ParseBool(strings.TrimSpace(str(v)))
	return b
}

// ref returns the logical id named by a !Ref (or a plain string).
func ref(v any) string {
	if m, ok := v.(map[string]any); ok {
		return str(m["Ref"])
	}
	return str(v)
}

// toValue converts a YAML node to plain Go values, turning CloudFormation
// short-form tags (!Ref X, !Sub s, ...) into their long form ({Ref: X}).
func toValue(n *yaml.Node) any {
	var v any
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) == 0 {
			return nil
		}
		return toValue(n.Content[0])
	case yaml.MappingNode:
		m := map[string]any{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			m[n.Content[i].Value] = toValue(n.Content[i+1])
		}
		v = m
	case yaml.SequenceNode:
		s := make([]any, 0, len(n.Content))
		for _, c := range n.Content {
			s = append(s, toValue(c))
		}
		v = s
	case yaml.AliasNode:
		return toValue(n.Alias)
	default:
		v = n.Value
	}
	if strings.HasPrefix(n.Tag, "!") && !strings.HasPrefix(n.Tag, "!!") {
		name := strings.TrimPrefix(n.Tag, "!")
		if name != "Ref" && name != "Condition" {
			name = "Fn::" + name
		}
		return map[string]any{name: v}
	}
	return v
}

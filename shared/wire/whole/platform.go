// Package whole assembles every function of the platform at once, by
// calling each function's own wiring (shared/wire/<function>) on one base:
// the local stack (make run) serves all of them on one port and the tests
// run them in one process, so a function whose wiring is broken fails a
// test. The functions themselves never link it.
//
// In Lambda each function is its own process with its own S3 client and
// job runner; here the functions share one of each (a job a function
// starts is run by the jobs function's kinds on the same runner, as the
// tests expect of knobs they set on it).
package whole

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/loyalty-platform/platform/shared/aws/blob"
	"github.com/loyalty-platform/platform/shared/contract/apidoc"
	"github.com/loyalty-platform/platform/shared/domain/account"
	"github.com/loyalty-platform/platform/shared/domain/action"
	"github.com/loyalty-platform/platform/shared/domain/actionlog"
	"github.com/loyalty-platform/platform/shared/domain/audience"
	"github.com/loyalty-platform/platform/shared/domain/award"
	"github.com/loyalty-platform/platform/shared/domain/awardcsv"
	"github.com/loyalty-platform/platform/shared/domain/checkin"
	"github.com/loyalty-platform/platform/shared/domain/enrichment"
	"github.com/loyalty-platform/platform/shared/domain/location"
	"github.com/loyalty-platform/platform/shared/domain/locationcsv"
	"github.com/loyalty-platform/platform/shared/domain/operation"
	"github.com/loyalty-platform/platform/shared/domain/perk"
	"github.com/loyalty-platform/platform/shared/domain/pos"
	"github.com/loyalty-platform/platform/shared/domain/rule"
	"github.com/loyalty-platform/platform/shared/domain/segmentgrant"
	"github.com/loyalty-platform/platform/shared/domain/tenant"
	"github.com/loyalty-platform/platform/shared/domain/user"
	"github.com/loyalty-platform/platform/shared/domain/webhook"
	"github.com/loyalty-platform/platform/shared/platform/ddb"
	"github.com/loyalty-platform/platform/shared/platform/job"
	"github.com/loyalty-platform/platform/shared/platform/web"
	"github.com/loyalty-platform/platform/shared/wire"
	"github.com/loyalty-platform/platform/shared/wire/accounts"
	"github.com/loyalty-platform/platform/shared/wire/actions"
	"github.com/loyalty-platform/platform/shared/wire/audiences"
	"github.com/loyalty-platform/platform/shared/wire/avatars"
	"github.com/loyalty-platform/platform/shared/wire/awardimports"
	"github.com/loyalty-platform/platform/shared/wire/checkins"
	"github.com/loyalty-platform/platform/shared/wire/expiry"
	"github.com/loyalty-platform/platform/shared/wire/jobs"
	"github.com/loyalty-platform/platform/shared/wire/locationfiles"
	"github.com/loyalty-platform/platform/shared/wire/locations"
	"github.com/loyalty-platform/platform/shared/wire/loyalty"
	"github.com/loyalty-platform/platform/shared/wire/operations"
	"github.com/loyalty-platform/platform/shared/wire/parts/files"
	posfn "github.com/loyalty-platform/platform/shared/wire/pos"
	"github.com/loyalty-platform/platform/shared/wire/rules"
	"github.com/loyalty-platform/platform/shared/wire/tenants"
	"github.com/loyalty-platform/platform/shared/wire/users"
	"github.com/loyalty-platform/platform/shared/wire/webhookfanout"
	"github.com/loyalty-platform/platform/shared/wire/webhooks"
	"github.com/loyalty-platform/platform/shared/wire/webhooksender"
)

// Functions are the platform's functions, each as its wiring builds it.
type Functions struct {
	Accounts      *accounts.Function
	Actions       *actions.Function
	Audiences     *audiences.Function
	Avatars       *avatars.Function
	AwardImports  *awardimports.Function
	Checkins      *checkins.Function
	Expiry        *expiry.Function
	Jobs          *jobs.Function
	LocationFiles *locationfiles.Function
	Locations     *locations.Function
	Loyalty       *loyalty.Function
	Operations    *operations.Function
	POS           *posfn.Function
	Rules         *rules.Function
	Tenants       *tenants.Function
	Users         *users.Function
	Webhooks      *webhooks.Function
	WebhookFanout *webhookfanout.Function
	WebhookSender *webhooksender.Function
}

// Deps is the whole platform: one base, the functions, and short names for
// the services the tests reach into (each names the function whose
// instance it is).
type Deps struct {
	*wire.Base
	// S3 is the S3 client every function that stores files uses (the
	// tests and the local stack read the buckets with it).
	S3 *s3.Client
	// Jobs is the job runner the functions share (every kind registered).
	Jobs *job.Service
	Fn   Functions

	Tenants      *tenant.Service      // the tenants function's
	Accounts     *account.Service     // the accounts function's
	Users        *user.Service        // the users function's core
	Actions      *action.Recorder     // a recorder on the Actions table
	Checkins     *checkin.Service     // the checkins function's
	Locations    *location.Service    // the locations function's
	Operations   *operation.Service   // the job runner's
	Docs         *apidoc.Service      // the operations function's
	LocationJobs *locationcsv.Service // the jobs function's
	Perks        *perk.Service        // the loyalty function's
	Enrichments  *enrichment.Service  // the loyalty function's
	Awards       *award.Service       // the loyalty function's
	Audiences    *audience.Service    // the audiences function's
	AwardJobs    *awardcsv.Service    // the jobs function's
	ActionLog    *actionlog.Service   // the actions function's
	Rules        *rule.Engine         // the rules function's (the stream)
	POS          *pos.Service         // the pos function's
	Webhooks     *webhook.Service     // the webhooks function's
	// SegmentGrants is the legacy grant (the jobs function's).
	SegmentGrants *segmentgrant.Service
}

// New builds the whole platform from cfg with the real clock and the
// configured notifier.
func New(ctx context.Context, cfg wire.Config) (*Deps, error) {
	b, err := wire.NewBase(ctx, cfg)
	if err != nil {
		return nil, err
	}
	d := &Deps{Base: b, S3: blob.NewClient(b.AWS)}
	if err := d.Wire(); err != nil {
		return nil, err
	}
	return d, nil
}

// Wire (re)builds every function from the base, clock and notifier in d.
// Tests replace the clock or the notifier and call Wire again.
func (d *Deps) Wire() error {
	if d.Base == nil {
		d.Base = &wire.Base{}
	}
	b := d.Base
	if d.S3 == nil {
		d.S3 = blob.NewClient(b.AWS)
	}
	s3c := files.Of(d.S3)
	b.Cursor = ddb.NewCursor(b.Config.PagingSecret)
	d.Jobs = files.Jobs(b, s3c)
	f := &d.Fn
	var err error
	if f.Accounts, err = accounts.New(b); err != nil {
		return fmt.Errorf("accounts: %w", err)
	}
	if f.Avatars, err = avatars.New(b, s3c); err != nil {
		return fmt.Errorf("avatars: %w", err)
	}
	if f.Users, err = users.New(b); err != nil {
		return fmt.Errorf("users: %w", err)
	}
	f.Actions = actions.New(b, d.Jobs)
	f.Audiences = audiences.New(b)
	f.AwardImports = awardimports.New(b, d.Jobs)
	f.Checkins = checkins.New(b)
	f.Expiry = expiry.New(b)
	f.Jobs = jobs.New(b, d.Jobs)
	f.LocationFiles = locationfiles.New(b, d.Jobs)
	f.Locations = locations.New(b)
	f.Loyalty = loyalty.New(b, d.Jobs)
	f.Operations = operations.New(b)
	f.POS = posfn.New(b)
	f.Rules = rules.New(b)
	f.Tenants = tenants.New(b)
	f.Webhooks = webhooks.New(b)
	f.WebhookFanout = webhookfanout.New(b)
	f.WebhookSender = webhooksender.New(b)

	d.Tenants = f.Tenants.Tenants
	d.Accounts = f.Accounts.Accounts
	d.Users = f.Users.Users
	d.Actions = b.Actions()
	d.Checkins = f.Checkins.Checkins
	d.Locations = f.Locations.Locations
	d.Operations = d.Jobs.Ops
	d.Docs = f.Operations.Docs
	d.LocationJobs = f.Jobs.LocationJobs
	d.Perks, d.Enrichments, d.Awards = f.Loyalty.Perks, f.Loyalty.Enrichments, f.Loyalty.Awards
	d.Audiences = f.Audiences.Audiences
	d.AwardJobs = f.Jobs.AwardJobs
	d.ActionLog = f.Actions.ActionLog
	d.Rules = f.Rules.Rules
	d.POS = f.POS.POS
	d.Webhooks = f.Webhooks.Webhooks
	d.SegmentGrants = f.Jobs.SegmentGrants
	return nil
}

// Routes returns the HTTP routes of each API function, by function name
// (the directory under functions/), as the functions' wirings build them.
func (d *Deps) Routes() map[string][]web.Route {
	f := d.Fn
	return map[string][]web.Route{
		"accounts":      f.Accounts.Routes(),
		"users":         f.Users.Routes(),
		"avatars":       f.Avatars.Routes(),
		"checkins":      f.Checkins.Routes(),
		"locations":     f.Locations.Routes(),
		"locationfiles": f.LocationFiles.Routes(),
		"operations":    f.Operations.Routes(),
		"loyalty":       f.Loyalty.Routes(),
		"awardimports":  f.AwardImports.Routes(),
		"audiences":     f.Audiences.Routes(),
		"actions":       f.Actions.Routes(),
		"pos":           f.POS.Routes(),
		"tenants":       f.Tenants.Routes(),
		"webhooks":      f.Webhooks.Routes(),
	}
}

// FunctionNames lists the API functions in a stable order.
func (d *Deps) FunctionNames() []string {
	var out []string
	for n := range d.Routes() {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// LambdaHandler returns the API Gateway (payload 2.0) handler of an API
// function.
func (d *Deps) LambdaHandler(name string) (wire.LambdaHandler, error) {
	routes, ok := d.Routes()[name]
	if !ok {
		return nil, fmt.Errorf("no API function %q", name)
	}
	// The functions share one process here: each names itself in its
	// lines, as AWS_LAMBDA_FUNCTION_NAME does in Lambda.
	b := *d.Base
	b.Log = web.FunctionLogger(b.Log, name)
	return b.Lambda(routes), nil
}

// S3Handler returns the handler of a function triggered by S3 events.
func (d *Deps) S3Handler(name string) (func(context.Context, events.S3Event) error, error) {
	if name == "jobs" {
		return d.Fn.Jobs.Jobs.HandleS3, nil
	}
	return nil, fmt.Errorf("no S3-triggered function %q", name)
}

// EventHandler returns the Lambda handler of a function invoked with events
// of several sources: the jobs function gets S3 events and the SQS events
// of its failure queue (job.Service.HandleEvent dispatches them).
func (d *Deps) EventHandler(name string) (func(context.Context, json.RawMessage) (*events.SQSEventResponse, error), error) {
	if name == "jobs" {
		return d.Fn.Jobs.Jobs.HandleEvent, nil
	}
	return nil, fmt.Errorf("no event-triggered function %q", name)
}

// StreamHandler returns the handler of a function that consumes a
// DynamoDB stream: the rules and webhookfanout functions (the Actions
// table's stream).
func (d *Deps) StreamHandler(name string) (func(context.Context, events.DynamoDBEvent) (events.DynamoDBEventResponse, error), error) {
	switch name {
	case "rules":
		return d.Fn.Rules.Handle, nil
	case "webhookfanout":
		return d.Fn.WebhookFanout.Handle, nil
	}
	return nil, fmt.Errorf("no stream-triggered function %q", name)
}

// QueueHandler returns the handler of a function that consumes an SQS
// queue through an event source mapping: the webhooksender function (the
// FIFO delivery queue).
func (d *Deps) QueueHandler(name string) (func(context.Context, events.SQSEvent) (events.SQSEventResponse, error), error) {
	if name == "webhooksender" {
		return d.Fn.WebhookSender.Handle, nil
	}
	return nil, fmt.Errorf("no queue-triggered function %q", name)
}

// ScheduleHandler returns the handler of a function run by an EventBridge
// schedule: the expiry function.
func (d *Deps) ScheduleHandler(name string) (func(context.Context, events.EventBridgeEvent) (expiry.Report, error), error) {
	if name == "expiry" {
		return d.Fn.Expiry.Handle, nil
	}
	return nil, fmt.Errorf("no scheduled function %q", name)
}

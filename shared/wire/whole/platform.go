// Package platform assembles every function of the platform at once, from
// the same builders their mains use: the local stack (make run) serves all
// of them on one port and the tests run them in one process. The
// functions themselves never link it.
package whole

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/loyalty-platform/platform/shared/aws/amazonlocation"
	"github.com/loyalty-platform/platform/shared/aws/blob"
	"github.com/loyalty-platform/platform/shared/contract/apidoc"
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
	"github.com/loyalty-platform/platform/shared/platform/ddb"
	"github.com/loyalty-platform/platform/shared/platform/job"
	"github.com/loyalty-platform/platform/shared/platform/notify"
	"github.com/loyalty-platform/platform/shared/platform/web"
	"github.com/loyalty-platform/platform/shared/wire"
	"github.com/loyalty-platform/platform/shared/wire/awardfiles"
	"github.com/loyalty-platform/platform/shared/wire/files"
	"github.com/loyalty-platform/platform/shared/wire/identity"
	"github.com/loyalty-platform/platform/shared/wire/locationfiles"
	"github.com/loyalty-platform/platform/shared/wire/places"
	"github.com/loyalty-platform/platform/shared/wire/rewards"
)

// Deps is the whole platform: one base and every domain, shared by all
// functions (one job runner serves the locations, loyalty and jobs
// functions, as the tests expect of knobs they set on it).
type Deps struct {
	*wire.Base
	// S3 is the S3 client every function that stores files uses (the
	// tests and the local stack read the buckets with it).
	S3       *s3.Client
	Notifier notify.Notifier
	Pusher   notify.Pusher

	Tenants      *tenant.Service
	Users        *user.Service
	Actions      *action.Recorder
	Checkins     *checkin.Service
	Locations    *location.Service
	Operations   *operation.Service
	Docs         *apidoc.Service // GET /openapi.json, in the operations function
	Jobs         *job.Service
	LocationJobs *locationcsv.Service
	Rewards      *rewards.Rewards
	Perks        *perk.Service
	Enrichments  *enrichment.Service
	Awards       *award.Service
	Audiences    *audience.Service
	AwardJobs    *awardcsv.Service
	// SegmentGrants is the legacy grant, whose grant to a segment is a job.
	SegmentGrants *segmentgrant.Service
	ActionLog     *actionlog.Service
	Rules         *rule.Engine
	POS           *pos.Service
}

// New builds the whole platform from cfg with the real clock and the
// configured notifier.
func New(ctx context.Context, cfg wire.Config) (*Deps, error) {
	b, err := wire.NewBase(ctx, cfg)
	if err != nil {
		return nil, err
	}
	d := &Deps{Base: b, S3: blob.NewClient(b.AWS)}
	if d.Notifier, d.Pusher, err = identity.Messaging(b); err != nil {
		return nil, err
	}
	d.Wire()
	return d, nil
}

// Wire (re)builds the domains from the base, clock and notifier in d.
// Tests replace the clock or the notifier and call Wire again.
func (d *Deps) Wire() {
	if d.Base == nil {
		d.Base = &wire.Base{}
	}
	b := d.Base
	if d.S3 == nil {
		d.S3 = blob.NewClient(b.AWS)
	}
	s3c := files.Of(d.S3)
	b.Cursor = ddb.NewCursor(b.Config.PagingSecret)
	d.Actions = b.Actions()
	d.Tenants = b.TenantService()
	d.Jobs = files.Jobs(b, s3c)
	d.Operations = d.Jobs.Ops
	d.Docs = &apidoc.Service{}
	d.Locations = places.Locations(b)
	d.LocationJobs = locationfiles.New(b, d.Locations, d.Jobs, d.Actions)
	d.Checkins = places.Checkins(b, d.Locations, d.Actions)
	d.Rewards = rewards.New(b, d.Actions)
	d.Perks, d.Enrichments, d.Awards, d.Audiences = d.Rewards.Perks, d.Rewards.Enrichments, d.Rewards.Awards, d.Rewards.Audiences
	d.AwardJobs = awardfiles.Imports(b, d.Rewards, d.Jobs)
	d.SegmentGrants = awardfiles.SegmentGrants(d.Rewards, d.Jobs)
	d.ActionLog = files.ActionLog(b, d.Jobs)
	files.Register(d.Jobs, d.LocationJobs.Kinds(), d.AwardJobs.Kinds(), d.SegmentGrants.Kinds(), d.ActionLog.Kinds())
	d.Rules = d.Rewards.Rules
	d.POS = d.Rewards.POS(b, d.Checkins, d.Actions)
	d.Users = identity.Users(b)
	d.Users.Actions = d.Actions
	identity.Accounts(d.Users, b, d.Notifier, d.Pusher)
	identity.Profiles(d.Users, d.Pusher, amazonlocation.FromEnv(b.AWS), d.Rewards, d.Checkins)
	identity.Avatars(d.Users, blob.Photos{S3: s3c, Bucket: b.Config.Buckets.Media}, d.Pusher, d.Checkins.Remove, d.Actions)
}

// Routes returns the HTTP routes of each API function, by function name
// (the directory under functions/), as the functions' mains assemble them.
func (d *Deps) Routes() map[string][]web.Route {
	return map[string][]web.Route{
		"accounts":      d.Users.AccountRoutes(),
		"users":         d.Users.ProfileRoutes(),
		"avatars":       d.Users.AvatarRoutes(),
		"checkins":      d.Checkins.Routes(),
		"locations":     d.Locations.Routes(),
		"locationfiles": d.LocationJobs.Routes(),
		"operations":    append(d.Operations.Routes(), d.Docs.Routes()...),
		"loyalty":       slices.Concat(d.Rewards.LoyaltyRoutes(), d.SegmentGrants.Routes()),
		"awardimports":  d.AwardJobs.Routes(),
		"audiences":     d.Rewards.AudienceRoutes(),
		"actions":       d.ActionLog.Routes(),
		"pos":           d.POS.Routes(),
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
		return d.Jobs.HandleS3, nil
	}
	return nil, fmt.Errorf("no S3-triggered function %q", name)
}

// EventHandler returns the Lambda handler of a function invoked with events
// of several sources: the jobs function gets S3 events and the SQS events
// of its failure queue (job.Service.HandleEvent dispatches them).
func (d *Deps) EventHandler(name string) (func(context.Context, json.RawMessage) (*events.SQSEventResponse, error), error) {
	if name == "jobs" {
		return d.Jobs.HandleEvent, nil
	}
	return nil, fmt.Errorf("no event-triggered function %q", name)
}

// StreamHandler returns the handler of a function that consumes a
// DynamoDB stream: the rules function (the Actions table's stream).
func (d *Deps) StreamHandler(name string) (func(context.Context, events.DynamoDBEvent) (events.DynamoDBEventResponse, error), error) {
	if name == "rules" {
		return d.Rules.HandleStream, nil
	}
	return nil, fmt.Errorf("no stream-triggered function %q", name)
}

// ScheduleHandler returns the handler of a function run by an EventBridge
// schedule: the expiry function.
func (d *Deps) ScheduleHandler(name string) (func(context.Context, events.EventBridgeEvent) (rewards.ExpiryReport, error), error) {
	if name == "expiry" {
		return d.Rewards.ExpiryHandler(), nil
	}
	return nil, fmt.Errorf("no scheduled function %q", name)
}

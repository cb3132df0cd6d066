// Package app is the composition root: it reads the configuration from the
// environment once per cold start, builds the clients and stores, and gives
// each function its handler. functions/<name>/main.go, the local stack and
// the tests all build the platform through it, so they run the same code.
package app

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/sesv2"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	"github.com/awslabs/aws-lambda-go-api-proxy/httpadapter"
	"github.com/loyalty-platform/platform/shared/action"
	"github.com/loyalty-platform/platform/shared/audience"
	"github.com/loyalty-platform/platform/shared/award"
	"github.com/loyalty-platform/platform/shared/blob"
	"github.com/loyalty-platform/platform/shared/checkin"
	"github.com/loyalty-platform/platform/shared/clock"
	"github.com/loyalty-platform/platform/shared/enrichment"
	"github.com/loyalty-platform/platform/shared/ddb"
	"github.com/loyalty-platform/platform/shared/geo"
	"github.com/loyalty-platform/platform/shared/hook"
	"github.com/loyalty-platform/platform/shared/job"
	"github.com/loyalty-platform/platform/shared/location"
	"github.com/loyalty-platform/platform/shared/locationcsv"
	"github.com/loyalty-platform/platform/shared/notify"
	"github.com/loyalty-platform/platform/shared/operation"
	"github.com/loyalty-platform/platform/shared/perk"
	"github.com/loyalty-platform/platform/shared/sso"
	"github.com/loyalty-platform/platform/shared/tenant"
	"github.com/loyalty-platform/platform/shared/user"
	"github.com/loyalty-platform/platform/shared/web"
)

// Config is everything a function reads from its environment.
type Config struct {
	Tables  ddb.Tables
	Buckets blob.Buckets
	// PagingSecret signs paging keys. Locally a random secret is made per
	// process when PAGING_KEY_SECRET is unset.
	PagingSecret []byte
	// Notifier is "aws" (SNS and SES) or "log" (the local outbox).
	Notifier    string
	SenderEmail string
	MediaURL    string
	// SSO says where the identity providers' issuers are (the real ones
	// unless SSO_GOOGLE_ISSUER or SSO_APPLE_ISSUER override them).
	SSO sso.Config
}

// ConfigFromEnv reads the configuration.
func ConfigFromEnv() Config {
	c := Config{
		Tables:       ddb.TablesFromEnv(),
		Buckets:      blob.BucketsFromEnv(),
		PagingSecret: []byte(os.Getenv("PAGING_KEY_SECRET")),
		Notifier:     os.Getenv("NOTIFIER"),
		SenderEmail:  os.Getenv("SENDER_EMAIL"),
		MediaURL:     os.Getenv("MEDIA_URL"),
		SSO:          sso.FromEnv(),
	}
	if len(c.PagingSecret) == 0 {
		c.PagingSecret = make([]byte, 32)
		_, _ = rand.Read(c.PagingSecret)
	}
	if c.MediaURL == "" {
		c.MediaURL = "http://localhost:3000/media"
	}
	return c
}

// runningLocally reports whether the function runs against local
// endpoints (make run, make invoke) rather than in AWS.
func runningLocally() bool {
	return os.Getenv("AWS_ENDPOINT_URL") != "" || os.Getenv("AWS_ENDPOINT_URL_DYNAMODB") != ""
}

// Deps are the dependencies built once per cold start.
type Deps struct {
	Config   Config
	AWS      aws.Config
	DB       ddb.API
	S3       *s3.Client
	Clock    clock.Clock
	Notifier notify.Notifier
	Pusher   notify.Pusher
	Log      *slog.Logger
	Cursor   ddb.Cursor
	// SSO verifies identity providers' ID tokens (SSO and social login).
	SSO *sso.Verifier

	Tenants *tenant.Service
	Users   *user.Service
	// Actions records actions (the event log); Checkins is the check-in
	// domain.
	Actions  *action.Recorder
	Checkins *checkin.Service
	// Locations is the locations domain (locations function; check-ins
	// and the location jobs call it).
	Locations *location.Service
	// Operations are the asynchronous jobs' records (operations
	// function); Jobs starts and runs the jobs (jobs function);
	// LocationJobs is the location CSV import and export.
	Operations   *operation.Service
	Jobs         *job.Service
	LocationJobs *locationcsv.Service
	// Perks are the loyalty programme definitions (loyalty function).
	Perks *perk.Service
	// Enrichments are the award enrichments (loyalty function).
	Enrichments *enrichment.Service
	// Awards are users' awards and their points (loyalty function).
	Awards *award.Service
	// Audiences are the segments and their members (audiences function;
	// the expiry function runs their daily expiry).
	Audiences *audience.Service
}

// New builds the dependencies from cfg with the real clock and, unless cfg
// says "aws", the logging outbox.
func New(ctx context.Context, cfg Config) (*Deps, error) {
	awsCfg, err := ddb.LoadAWSConfig(ctx)
	if err != nil {
		return nil, err
	}
	log := web.NewLogger()
	d := &Deps{
		Config: cfg,
		AWS:    awsCfg,
		DB:     ddb.NewClient(awsCfg),
		S3:     blob.NewClient(awsCfg),
		Clock:  clock.System{},
		Log:    log,
	}
	switch cfg.Notifier {
	case "", "log", "aws":
	default:
		return nil, fmt.Errorf("NOTIFIER=%q: want aws, or log (messages only logged)", cfg.Notifier)
	}
	if os.Getenv("AWS_LAMBDA_FUNCTION_NAME") != "" && !runningLocally() {
		if cfg.Notifier != "aws" {
			log.Warn("NOTIFIER is not aws: codes and messages are only logged, never sent")
		}
		if os.Getenv("PAGING_KEY_SECRET") == "" {
			log.Warn("PAGING_KEY_SECRET is not set: paging keys are signed with a per-container secret and fail across containers")
		}
	}
	if cfg.Notifier == "aws" {
		n := &notify.AWS{SNS: sns.NewFromConfig(awsCfg), SES: sesv2.NewFromConfig(awsCfg), From: cfg.SenderEmail, PlatformApps: map[string]string{
			"IOS": os.Getenv("SNS_APNS_APP_ARN"), "ANDROID": os.Getenv("SNS_GCM_APP_ARN"),
		}}
		d.Notifier, d.Pusher = n, n
	} else {
		o := &notify.Outbox{Log: log}
		d.Notifier, d.Pusher = o, o
	}
	d.Wire()
	return d, nil
}

// Wire (re)builds the domain services from the clients, clock and notifier
// in d. Tests replace the clock or the notifier and call Wire again.
func (d *Deps) Wire() {
	d.Cursor = ddb.NewCursor(d.Config.PagingSecret)
	d.SSO = sso.NewVerifier(d.Config.SSO, d.Clock)
	tenants := &tenant.Store{DB: d.DB, Table: d.Config.Tables.Tenants}
	d.Tenants = &tenant.Service{Store: tenants, Clock: d.Clock}
	d.Users = &user.Service{
		DB:          d.DB,
		Tables:      d.Config.Tables,
		Tenants:     tenants,
		Clock:       d.Clock,
		Notifier:    d.Notifier,
		Pusher:      d.Pusher,
		Cursor:      d.Cursor,
		S3:          d.S3,
		MediaBucket: d.Config.Buckets.Media,
		MediaURL:    d.Config.MediaURL,
		SSO:         d.SSO,
		Geocoder:    geo.FromEnv(d.AWS),
	}
	d.wireLocations()
	d.Tenants.OnRotate = append(d.Tenants.OnRotate, d.Users.EndServiceSessions)
	d.wireCheckins(tenants)
	d.wireJobs(tenants)
	d.wireLoyalty()
	d.wireAudiences()
}

// wireAudiences builds segments and joins them to the loyalty domains:
// perks check their segment, awards read memberships, and joining or
// leaving records the actions of the CLUB and LEVEL perks held through
// the segment (in the membership's transaction).
func (d *Deps) wireAudiences() {
	d.Audiences = &audience.Service{
		DB: d.DB, Table: d.Config.Tables.Audiences, Clock: d.Clock, Cursor: d.Cursor, Log: d.Log,
		Users: audienceUsers{d.Users}, Perks: d.Perks, Actions: d.Actions,
		Tenants: tenantTitles{&tenant.Store{DB: d.DB, Table: d.Config.Tables.Tenants}},
	}
	d.Perks.Segments = d.Audiences
	d.Awards.Memberships = d.Audiences
	awards := d.Awards
	react := func(joined bool) hook.Func[audience.Change] {
		return func(ctx context.Context, tx *ddb.Tx, c audience.Change) error {
			return awards.OnSegment(ctx, tx, award.SegmentEvent{
				TenantID: c.TenantID, TenantTitle: c.TenantTitle, SegmentID: c.Segment.ID, Joined: joined, Reason: c.Reason,
				User: award.Person{ID: c.User.ID, Name: c.User.Name, PrimaryPlatform: c.User.PrimaryPlatform}, When: c.Actor.When,
			})
		}
	}
	d.Audiences.OnJoin.Add(react(true))
	d.Audiences.OnLeave.Add(react(false))
	audiences := d.Audiences
	d.Users.Extras.Points = awards.Total
	d.Users.Extras.SegmentIDs = audiences.SegmentsOf
	d.Users.Extras.Segments = func(ctx context.Context, tenantID, userID string) ([]user.SegmentRef, error) {
		refs, err := audiences.UserSegments(ctx, tenantID, userID)
		out := make([]user.SegmentRef, 0, len(refs))
		for _, r := range refs {
			out = append(out, user.SegmentRef{ID: r.ID, Title: r.Title, Included: r.Included})
		}
		return out, err
	}
}

// wireLoyalty builds the loyalty domains: perks.
func (d *Deps) wireLoyalty() {
	d.Perks = &perk.Service{DB: d.DB, Table: d.Config.Tables.Loyalty, Clock: d.Clock, Cursor: d.Cursor}
	d.Enrichments = &enrichment.Service{DB: d.DB, Table: d.Config.Tables.Loyalty, Clock: d.Clock, Cursor: d.Cursor, Perks: d.Perks}
	d.Awards = &award.Service{
		DB: d.DB, Table: d.Config.Tables.Loyalty, Clock: d.Clock, Cursor: d.Cursor,
		Perks: d.Perks, Users: awardUsers{d.Users}, Places: awardPlaces{d.Locations},
		Tenants: tenantTitles{&tenant.Store{DB: d.DB, Table: d.Config.Tables.Tenants}}, Actions: d.Actions,
		Enrichments: awardOverlays{d.Enrichments},
	}
}

// wireLocations builds the locations domain; a user's favourites come
// from the users domain.
func (d *Deps) wireLocations() {
	users := d.Users
	d.Locations = &location.Service{
		DB:     d.DB,
		Tables: d.Config.Tables,
		Clock:  d.Clock,
		Cursor: d.Cursor,
		Favourites: func(ctx context.Context, tenantID, userID string) ([]string, error) {
			p, err := users.Profile(ctx, tenantID, userID)
			return p.FavouriteLocations, err
		},
	}
}

// wireCheckins builds the action recorder and the check-in domain, and
// gives the users function the include=checkin extra.
func (d *Deps) wireCheckins(tenants *tenant.Store) {
	d.Actions = &action.Recorder{DB: d.DB, Table: d.Config.Tables.Actions}
	d.Checkins = &checkin.Service{
		DB:      d.DB,
		Table:   d.Config.Tables.Checkins,
		Users:   d.Users,
		Tenants: tenants,
		Actions: d.Actions,
		POS:     &checkin.POSNotifier{Clock: d.Clock},
		Clock:   d.Clock,
		Places:  placesOf(d.Locations),
	}
	d.Checkins.UsersTable = d.Config.Tables.Users // check-ins are conditional on the user being live
	checkins := d.Checkins
	d.Users.Extras.CurrentCheckin = func(ctx context.Context, tenantID, userID string) (any, error) {
		// The users domain's contract: nil, nil when not checked in.
		c, err := checkins.Current(ctx, tenantID, userID)
		if errors.Is(err, checkin.ErrNotCheckedIn) {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		return c, nil
	}
	d.Users.Extras.OnDelete = append(d.Users.Extras.OnDelete, checkins.Remove, d.Actions.RedactUser)
}

// wireJobs builds the operations, the job runner and the job kinds.
func (d *Deps) wireJobs(tenants *tenant.Store) {
	d.Operations = &operation.Service{DB: d.DB, Table: d.Config.Tables.Operations, Clock: d.Clock}
	d.Jobs = &job.Service{Ops: d.Operations, Bucket: d.Config.Buckets.Files, Clock: d.Clock, Log: d.Log}
	if d.S3 != nil {
		d.Jobs.S3, d.Jobs.Presign = d.S3, s3.NewPresignClient(d.S3)
	}
	d.LocationJobs = &locationcsv.Service{
		Locations: d.Locations, Jobs: d.Jobs, Actions: d.Actions, Clock: d.Clock,
		TenantTitle: func(ctx context.Context, tenantID string) (string, error) {
			t, err := tenants.Get(ctx, tenantID)
			return t.Title, err
		},
	}
	d.Jobs.Kinds = d.LocationJobs.Kinds()
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

// ScheduleHandler returns the handler of a function run by an EventBridge
// schedule: the expiry function.
func (d *Deps) ScheduleHandler(name string) (func(context.Context, events.EventBridgeEvent) (audience.ExpiryReport, error), error) {
	if name == "expiry" {
		return d.Audiences.HandleSchedule, nil
	}
	return nil, fmt.Errorf("no scheduled function %q", name)
}

// placesOf adapts the locations domain to what a check-in needs of a
// location.
func placesOf(locations *location.Service) checkin.Places {
	return checkin.PlacesFunc(func(ctx context.Context, tenantID, id string) (checkin.Place, error) {
		l, err := locations.Get(ctx, tenantID, id)
		if err != nil {
			return checkin.Place{}, err
		}
		return checkin.Place{
			ID: l.ID, Title: l.Title, State: l.State, Checkins: l.Services[checkin.ServiceName],
			Geo: l.Geo, Regions: l.Regions, Tags: l.Tags, Timezone: l.Timezone,
		}, nil
	})
}

// Routes returns the HTTP routes of each API function, by function name
// (the directory under functions/).
func (d *Deps) Routes() map[string][]web.Route {
	return map[string][]web.Route{
		"users":      d.Users.Routes(),
		"checkins":   d.Checkins.Routes(),
		"locations":  append(d.Locations.Routes(), d.LocationJobs.Routes()...),
		"operations": d.Operations.Routes(),
		"loyalty":    slices.Concat(d.Perks.Routes(), d.Awards.Routes(), d.Enrichments.Routes()),
		"audiences":  d.Audiences.Routes(),
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

// HTTPHandler returns the net/http handler of an API function.
func (d *Deps) HTTPHandler(name string) (http.Handler, error) {
	routes, ok := d.Routes()[name]
	if !ok {
		return nil, fmt.Errorf("no API function %q", name)
	}
	return web.Handler(routes, d.Users.Authenticator(), d.Log), nil
}

// LambdaHandler returns the API Gateway (payload 2.0) handler of an API
// function: its net/http handler behind the api-proxy adapter.
func (d *Deps) LambdaHandler(name string) (func(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error), error) {
	h, err := d.HTTPHandler(name)
	if err != nil {
		return nil, err
	}
	adapter := httpadapter.NewV2(h)
	return func(ctx context.Context, req events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
		return adapter.ProxyWithContext(ctx, withoutStage(req))
	}, nil
}

// withoutStage removes the stage from the paths of a request that came
// through a named API Gateway stage: HTTP APIs pass "/prod/users" for
// GET /users on stage prod (only the $default stage has no prefix), and the
// routes are the template's paths without it.
func withoutStage(req events.APIGatewayV2HTTPRequest) events.APIGatewayV2HTTPRequest {
	stage := req.RequestContext.Stage
	if stage == "" || stage == "$default" {
		return req
	}
	prefix := "/" + stage
	strip := func(p string) string {
		if p == prefix {
			return "/"
		}
		if rest, ok := strings.CutPrefix(p, prefix+"/"); ok {
			return "/" + rest
		}
		return p
	}
	req.RawPath = strip(req.RawPath)
	req.RequestContext.HTTP.Path = strip(req.RequestContext.HTTP.Path)
	return req
}

// Now is a shorthand for the configured clock.
func (d *Deps) Now() time.Time { return d.Clock.Now() }

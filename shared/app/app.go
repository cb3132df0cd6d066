// Package app is the composition root: it reads the configuration from the
// environment once per cold start, builds the clients and stores, and gives
// each function its handler. functions/<name>/main.go, the local stack and
// the tests all build the platform through it, so they run the same code.
package app

import (
	"context"
	"crypto/rand"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"sort"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/sesv2"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	"github.com/awslabs/aws-lambda-go-api-proxy/httpadapter"
	"github.com/loyalty-platform/platform/shared/blob"
	"github.com/loyalty-platform/platform/shared/clock"
	"github.com/loyalty-platform/platform/shared/ddb"
	"github.com/loyalty-platform/platform/shared/notify"
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

	Tenants *tenant.Service
	Users   *user.Service
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
	}
}

// Routes returns the HTTP routes of each API function, by function name
// (the directory under functions/).
func (d *Deps) Routes() map[string][]web.Route {
	return map[string][]web.Route{
		"users": d.Users.Routes(),
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
	return httpadapter.NewV2(h).ProxyWithContext, nil
}

// Now is a shorthand for the configured clock.
func (d *Deps) Now() time.Time { return d.Clock.Now() }

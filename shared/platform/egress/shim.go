package egress

import (
	"context"
	"errors"
	"net/http"
	"net/netip"
	"time"
)

var ErrForbiddenAddress = errors.New("forbidden address")

type Options struct {
	Local    bool
	Timeout  time.Duration
	Resolver interface {
		LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
	}
	UserAgent string
}

func CheckURL(raw string, local bool) error { return nil }
func NewClient(o Options) *http.Client {
	return &http.Client{Timeout: o.Timeout, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

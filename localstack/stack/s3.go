package stack

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"
	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
	"github.com/loyalty-platform/platform/shared/contract/sam"
)

// S3 is an in-process S3 server (gofakes3 with the in-memory backend).
type S3 struct {
	// Endpoint is the base URL of the server (http://127.0.0.1:PORT).
	Endpoint string

	srv      *http.Server
	notifier *notifier
	done     chan struct{}
}

// StartS3 serves an empty in-memory S3 on a free port of 127.0.0.1. It
// delivers ObjectCreated events to the S3 triggers of t's functions (see
// notify.go); t may be nil.
func StartS3(t *sam.Template) (*S3, error) {
	if t == nil {
		t = &sam.Template{}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("start s3: %w", err)
	}
	backend := s3mem.New()
	faker := gofakes3.New(backend)
	s := &S3{
		Endpoint: "http://" + ln.Addr().String(),
		notifier: newNotifier(t, backend),
		done:     make(chan struct{}),
	}
	s.srv = &http.Server{Handler: s.notifier.wrap(faker.Server()), ReadHeaderTimeout: 10 * time.Second}
	go func() {
		defer close(s.done)
		if err := s.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			slog.Error("s3 server stopped", "err", err)
		}
	}()
	return s, nil
}

// Close stops the server, letting requests in flight finish for a moment.
func (s *S3) Close() error {
	if s == nil {
		return nil
	}
	// Deliveries in flight are cancelled first: they may be using the
	// server.
	s.notifier.close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := s.srv.Shutdown(ctx)
	if err != nil {
		err = s.srv.Close()
	}
	<-s.done
	if err != nil {
		return fmt.Errorf("stop s3: %w", err)
	}
	return nil
}

// CreateBuckets creates the named buckets. Buckets that exist already are
// left as they are, so it can run on every start.
func CreateBuckets(ctx context.Context, client *s3.Client, names []string) error {
	for _, name := range names {
		_, err := client.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(name)})
		if err != nil && !bucketExists(err) {
			return fmt.Errorf("create bucket %s: %w", name, err)
		}
	}
	return nil
}

func bucketExists(err error) bool {
	var owned *types.BucketAlreadyOwnedByYou
	var exists *types.BucketAlreadyExists
	if errors.As(err, &owned) || errors.As(err, &exists) {
		return true
	}
	var api smithy.APIError
	if errors.As(err, &api) {
		switch api.ErrorCode() {
		case "BucketAlreadyOwnedByYou", "BucketAlreadyExists":
			return true
		}
	}
	return false
}

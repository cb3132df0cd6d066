//go:build !lambda.norpc

package ddb

import (
	"context"
	"fmt"
	"os"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
)

// LoadAWSConfig loads the SDK configuration once per cold start with the
// SDK's default chain (environment, shared files, profiles, SSO), for runs
// outside Lambda: tests, the local stack, tools. The region defaults to
// us-east-1 when the environment names none. Lambda builds (tag
// lambda.norpc) use the lean loader in awsconfig_lambda.go instead.
func LoadAWSConfig(ctx context.Context) (aws.Config, error) {
	opts := []func(*config.LoadOptions) error{}
	if os.Getenv("AWS_REGION") == "" && os.Getenv("AWS_DEFAULT_REGION") == "" {
		opts = append(opts, config.WithRegion("us-east-1"))
	}
	cfg, err := config.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return aws.Config{}, fmt.Errorf("load aws config: %w", err)
	}
	return cfg, nil
}

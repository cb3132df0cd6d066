package stack

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/loyalty-platform/platform/shared/contract/sam"
)

func testConfig() aws.Config {
	return aws.Config{Region: DefaultRegion, Credentials: credentials.NewStaticCredentialsProvider("local", "local", "")}
}

// TestMain starts one DynamoDB Local for the package's tests unless
// DYNAMODB_ENDPOINT names one already (as testenv does for a whole run).
func TestMain(m *testing.M) {
	os.Exit(runTests(m))
}

func runTests(m *testing.M) int {
	if os.Getenv(EnvDynamoDBEndpoint) == "" {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		db, err := StartDynamoDB(ctx, "")
		cancel()
		if err != nil {
			fmt.Fprintln(os.Stderr, "StartDynamoDB:", err)
			return 1
		}
		defer db.Close()
		os.Setenv(EnvDynamoDBEndpoint, db.Endpoint)
	}
	return m.Run()
}

func loadTemplate(t *testing.T) *sam.Template {
	t.Helper()
	tmpl, err := sam.Load(sam.Path())
	if err != nil {
		t.Fatalf("load template: %v", err)
	}
	if len(tmpl.Tables) == 0 || len(tmpl.Buckets) == 0 {
		t.Fatalf("template has %d tables and %d buckets; want some of each", len(tmpl.Tables), len(tmpl.Buckets))
	}
	return tmpl
}

func TestCreateTables(t *testing.T) {
	tmpl := loadTemplate(t)
	endpoint := os.Getenv(EnvDynamoDBEndpoint)
	db := dynamodb.NewFromConfig(testConfig(), func(o *dynamodb.Options) { o.BaseEndpoint = aws.String(endpoint) })
	ctx := context.Background()

	// Tables of their own, so runs sharing one DynamoDB Local do not meet.
	prefix := "stacktest" + time.Now().Format("150405.000000") + "-"
	name := func(id string) string { return prefix + id }
	for range 2 { // the second run finds every table in place
		if err := CreateTables(ctx, db, tmpl, name); err != nil {
			t.Fatalf("CreateTables: %v", err)
		}
	}
	for _, tbl := range tmpl.Tables {
		out, err := db.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(name(tbl.LogicalID))})
		if err != nil {
			t.Fatalf("DescribeTable %s: %v", tbl.LogicalID, err)
		}
		d := out.Table
		if got := keyOf(d.KeySchema); got != tbl.HashKey+"/"+tbl.RangeKey {
			t.Errorf("%s key = %s, want %s/%s", tbl.LogicalID, got, tbl.HashKey, tbl.RangeKey)
		}
		if d.BillingModeSummary != nil && d.BillingModeSummary.BillingMode != types.BillingModePayPerRequest {
			t.Errorf("%s billing mode = %s", tbl.LogicalID, d.BillingModeSummary.BillingMode)
		}
		if len(d.GlobalSecondaryIndexes) != len(tbl.Indexes) {
			t.Errorf("%s has %d indexes, want %d", tbl.LogicalID, len(d.GlobalSecondaryIndexes), len(tbl.Indexes))
		}
		for _, idx := range tbl.Indexes {
			i := slices.IndexFunc(d.GlobalSecondaryIndexes, func(g types.GlobalSecondaryIndexDescription) bool {
				return aws.ToString(g.IndexName) == idx.Name
			})
			if i < 0 {
				t.Errorf("%s: index %s missing", tbl.LogicalID, idx.Name)
				continue
			}
			g := d.GlobalSecondaryIndexes[i]
			if got := keyOf(g.KeySchema); got != idx.HashKey+"/"+idx.RangeKey {
				t.Errorf("%s.%s key = %s, want %s/%s", tbl.LogicalID, idx.Name, got, idx.HashKey, idx.RangeKey)
			}
			if g.Projection == nil || g.Projection.ProjectionType != types.ProjectionTypeAll {
				t.Errorf("%s.%s projection = %+v, want ALL", tbl.LogicalID, idx.Name, g.Projection)
			}
		}
		if tbl.TTL != "" {
			ttl, err := db.DescribeTimeToLive(ctx, &dynamodb.DescribeTimeToLiveInput{TableName: aws.String(name(tbl.LogicalID))})
			if err != nil {
				t.Fatalf("DescribeTimeToLive %s: %v", tbl.LogicalID, err)
			}
			if d := ttl.TimeToLiveDescription; d == nil || aws.ToString(d.AttributeName) != tbl.TTL || d.TimeToLiveStatus != types.TimeToLiveStatusEnabled {
				t.Errorf("%s time to live = %+v, want %s enabled", tbl.LogicalID, d, tbl.TTL)
			}
		}
	}
}

func keyOf(ks []types.KeySchemaElement) string {
	var hash, rng string
	for _, k := range ks {
		switch k.KeyType {
		case types.KeyTypeHash:
			hash = aws.ToString(k.AttributeName)
		case types.KeyTypeRange:
			rng = aws.ToString(k.AttributeName)
		}
	}
	return hash + "/" + rng
}

func TestS3RoundTrip(t *testing.T) {
	srv, err := StartS3(nil)
	if err != nil {
		t.Fatalf("StartS3: %v", err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	client := s3.NewFromConfig(testConfig(), func(o *s3.Options) {
		o.BaseEndpoint = aws.String(srv.Endpoint)
		o.UsePathStyle = true
	})
	ctx := context.Background()
	names := BucketNames(loadTemplate(t))
	for range 2 { // the second run finds the buckets in place
		if err := CreateBuckets(ctx, client, names); err != nil {
			t.Fatalf("CreateBuckets: %v", err)
		}
	}
	want := []byte("hello, bucket")
	for _, b := range names {
		if _, err := client.PutObject(ctx, &s3.PutObjectInput{
			Bucket: aws.String(b), Key: aws.String("dir/hello.txt"),
			Body: bytes.NewReader(want), ContentType: aws.String("text/plain"),
		}); err != nil {
			t.Fatalf("PutObject %s: %v", b, err)
		}
		out, err := client.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(b), Key: aws.String("dir/hello.txt")})
		if err != nil {
			t.Fatalf("GetObject %s: %v", b, err)
		}
		got, err := io.ReadAll(out.Body)
		_ = out.Body.Close()
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("GetObject %s = %q, %v; want %q", b, got, err, want)
		}
	}
}

func TestStart(t *testing.T) {
	t.Setenv(EnvEndpoint, "")
	t.Setenv("AWS_ACCESS_KEY_ID", "")
	ctx := context.Background()
	st, err := Start(ctx, Options{})
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	defer st.Close()
	if st.External || st.DynamoDBEndpoint != os.Getenv(EnvDynamoDBEndpoint) || st.S3Endpoint == "" {
		t.Fatalf("stack = %+v", st)
	}
	for _, tbl := range st.Template.Tables {
		if _, err := st.DB.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(TableName(tbl.LogicalID))}); err != nil {
			t.Errorf("DescribeTable %s: %v", tbl.LogicalID, err)
		}
	}
	out, err := st.S3.ListBuckets(ctx, &s3.ListBucketsInput{})
	if err != nil {
		t.Fatalf("ListBuckets: %v", err)
	}
	var buckets []string
	for _, b := range out.Buckets {
		buckets = append(buckets, aws.ToString(b.Name))
	}
	for _, want := range []string{"platform-files", "platform-media"} {
		if !slices.Contains(buckets, want) {
			t.Errorf("buckets = %v, want %s among them", buckets, want)
		}
	}
	env := st.Env()
	for _, want := range []string{
		"AWS_ENDPOINT_URL_DYNAMODB=" + st.DynamoDBEndpoint,
		"AWS_ENDPOINT_URL_S3=" + st.S3Endpoint,
		"AWS_ACCESS_KEY_ID=local",
	} {
		if !slices.Contains(env, want) {
			t.Errorf("Env() = %v, want %s", env, want)
		}
	}
	if err := st.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	if err := st.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

func TestStartDynamoDBWithoutJar(t *testing.T) {
	_, err := StartDynamoDB(context.Background(), t.TempDir())
	if err == nil || !strings.Contains(err.Error(), "npm ci") {
		t.Fatalf("StartDynamoDB in an empty folder: %v; want an error telling to run npm ci", err)
	}
}

func TestStartDynamoDBCanceled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	db, err := StartDynamoDB(ctx, "")
	if err == nil {
		_ = db.Close()
		t.Fatal("StartDynamoDB with a canceled context succeeded")
	}
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("StartDynamoDB with a canceled context: %v", err)
	}
}

func TestNames(t *testing.T) {
	t.Setenv("USERS_TABLE", "")
	t.Setenv("FILES_BUCKET", "")
	t.Setenv("MEDIA_BUCKET", "custom-media")
	for _, c := range []struct{ got, want string }{
		{EnvName("UsersTable"), "USERS_TABLE"},
		{EnvName("PosTable"), "POS_TABLE"},
		{TableName("UsersTable"), "UsersTable"},
		{BucketName("FilesBucket"), "platform-files"},
		{BucketName("MediaBucket"), "custom-media"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}

package stack

import (
	"os"
	"strings"
	"unicode"

	"github.com/loyalty-platform/platform/shared/aws/bucket"
	"github.com/loyalty-platform/platform/shared/contract/sam"
)

// EnvName returns the environment variable that carries the physical name of
// a template resource: the logical id in upper snake case (UsersTable ->
// USERS_TABLE, FilesBucket -> FILES_BUCKET), as template.yaml sets them.
func EnvName(logicalID string) string {
	var b strings.Builder
	for i, r := range logicalID {
		if i > 0 && unicode.IsUpper(r) {
			b.WriteByte('_')
		}
		b.WriteRune(unicode.ToUpper(r))
	}
	return b.String()
}

// TableName returns the physical name of a template table: the value of its
// environment variable (USERS_TABLE for UsersTable) or else the logical id,
// which is what ddb.TablesFromEnv defaults to.
func TableName(logicalID string) string {
	if v := os.Getenv(EnvName(logicalID)); v != "" {
		return v
	}
	return logicalID
}

// BucketName returns the physical name of a template bucket: the value of
// its environment variable (FILES_BUCKET for FilesBucket) or else
// "platform-" and the lower-cased logical id without "Bucket"
// (platform-files), which is what bucket.NamesFromEnv defaults to.
func BucketName(logicalID string) string {
	if v := os.Getenv(EnvName(logicalID)); v != "" {
		return v
	}
	return "platform-" + strings.ToLower(strings.TrimSuffix(logicalID, "Bucket"))
}

// BucketNames returns the physical names of the template's buckets and of
// the buckets the application reads from its environment, without
// duplicates.
func BucketNames(t *sam.Template) []string {
	var names []string
	seen := map[string]bool{}
	add := func(n string) {
		if n != "" && !seen[n] {
			seen[n] = true
			names = append(names, n)
		}
	}
	for _, b := range t.Buckets {
		add(BucketName(b.LogicalID))
	}
	app := bucket.NamesFromEnv()
	add(app.Files)
	add(app.Media)
	return names
}

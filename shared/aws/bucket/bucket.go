// Package bucket names the platform's S3 buckets: the physical names
// template.yaml sets, or the local defaults. It links no S3 client, so a
// function that reads its configuration but stores no files does not link
// the S3 SDK (shared/aws/blob holds the client).
package bucket

import "os"

// Names holds the physical bucket names that template.yaml sets; locally
// they default to fixed names.
type Names struct {
	Files string
	Media string
}

// NamesFromEnv reads the bucket names from the environment (FILES_BUCKET,
// MEDIA_BUCKET).
func NamesFromEnv() Names {
	b := Names{Files: os.Getenv("FILES_BUCKET"), Media: os.Getenv("MEDIA_BUCKET")}
	if b.Files == "" {
		b.Files = "platform-files"
	}
	if b.Media == "" {
		b.Media = "platform-media"
	}
	return b
}

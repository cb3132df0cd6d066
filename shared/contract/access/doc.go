// Package access holds the platform's access matrix: a test that sends
// every route of template.yaml, as every kind of caller who must not reach
// another user's or another tenant's data, and checks that none does.
package access

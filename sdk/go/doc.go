// Package sdk pins the Go client generator of the API: oapi-codegen, a
// tool directive of this module (kept apart from the platform's module so
// that its dependencies stay out of the functions' build), and the runtime
// package its generated clients import. The contract test TestGenerators
// (shared/contract/openapi) generates a client from the OpenAPI document
// with it and builds and vets that client in this module's dependency set.
package sdk

import _ "github.com/oapi-codegen/runtime" // the generated clients' runtime, kept in go.mod and go.sum

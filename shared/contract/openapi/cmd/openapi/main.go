// Command openapi prints the merged OpenAPI document of the whole API as
// JSON (make openapi).
package main

import (
	"fmt"
	"os"

	"github.com/loyalty-platform/platform/shared/contract/openapi"
)

func main() {
	doc, err := openapi.Document()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Stdout.Write(append(doc, '\n'))
}

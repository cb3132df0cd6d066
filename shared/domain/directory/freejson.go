package directory

import (
	"encoding/json"
	"fmt"

	"github.com/loyalty-platform/platform/shared/platform/apierr"
)

// Limits of the free-form objects a client may store on a user (`extended`,
// `contacts`): they must fit DynamoDB's item rules and leave room in the
// 400 KB item.
const (
	maxFreeJSONBytes = 16 << 10
	maxFreeJSONDepth = 10
)

// checkFreeJSON checks a free-form object against the user's own limits:
// at most maxFreeJSONDepth levels and maxFreeJSONBytes of JSON. (Numbers
// and keys DynamoDB cannot hold are refused when the body is decoded, see
// ddb.CheckJSON.)
func checkFreeJSON(field string, v map[string]any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return apierr.Invalid(field, "must be a JSON object")
	}
	if len(b) > maxFreeJSONBytes {
		return apierr.Invalid(field, "must be at most %d bytes of JSON", maxFreeJSONBytes)
	}
	return walkFreeJSON(field, v, 1)
}

func walkFreeJSON(path string, v any, depth int) error {
	if depth > maxFreeJSONDepth {
		return apierr.Invalid(path, "is nested more than %d levels deep", maxFreeJSONDepth)
	}
	switch t := v.(type) {
	case map[string]any:
		for k, x := range t {
			if err := walkFreeJSON(path+"."+k, x, depth+1); err != nil {
				return err
			}
		}
	case []any:
		for i, x := range t {
			if err := walkFreeJSON(fmt.Sprintf("%s[%d]", path, i), x, depth+1); err != nil {
				return err
			}
		}
	}
	return nil
}

package web

import (
	"encoding/json"
	"fmt"
	"slices"

	"github.com/loyalty-platform/platform/shared/platform/apierr"
)

// DecodePatch reads the body of a PUT that changes some fields of a stored
// resource: a JSON object holding at least one field, returned as its
// top-level fields (422 otherwise). The body is expected to have been
// decoded strictly into the resource's input type already (DecodeBytes), so
// the fields are known ones.
func DecodePatch(body []byte) (map[string]json.RawMessage, error) {
	var patch map[string]json.RawMessage
	if err := json.Unmarshal(body, &patch); err != nil {
		return nil, apierr.Invalid("", "the body must be a JSON object")
	}
	if len(patch) == 0 {
		return nil, apierr.Invalid("", "send at least one field to change")
	}
	return patch, nil
}

// MergePatch overlays the top-level fields of patch (see DecodePatch) on
// the JSON form of cur and decodes the result into next (a pointer to a
// new value of cur's type): a field present replaces cur's (objects and
// arrays as a whole), null removes it, a field absent from patch is
// unchanged, and the fields named in skip (read-only ones, checked by the
// caller) are left as they are. what names the resource in errors: a
// result that does not decode into next is 422 "the body does not make a
// valid <what>". The result is not validated. MergePatch takes any, as
// encoding/json does, so that its code is in a binary once.
func MergePatch(what string, cur any, patch map[string]json.RawMessage, skip []string, next any) error {
	b, err := json.Marshal(cur)
	if err != nil {
		return fmt.Errorf("encode %s: %w", what, err)
	}
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(b, &doc); err != nil {
		return fmt.Errorf("decode %s: %w", what, err)
	}
	for k, v := range patch {
		if slices.Contains(skip, k) {
			continue
		}
		if string(v) == "null" {
			delete(doc, k)
			continue
		}
		doc[k] = v
	}
	merged, err := json.Marshal(doc)
	if err != nil {
		return fmt.Errorf("encode %s: %w", what, err)
	}
	if err := json.Unmarshal(merged, next); err != nil {
		return apierr.Invalid("", "the body does not make a valid %s", what)
	}
	return nil
}

package web

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"

	"github.com/loyalty-platform/platform/shared/platform/apierr"
)

// Nulls returns the paths (as validation errors name them: address.zip,
// items[0].id) of every null value in a JSON document, in document order.
// Endpoints use it to refuse null where a field is not nullable, since
// encoding/json would silently treat null as absent.
func Nulls(body []byte) []string {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var out []string
	var walk func(path string) bool
	walk = func(path string) bool {
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		switch t := tok.(type) {
		case nil:
			out = append(out, path)
		case json.Delim:
			for i := 0; dec.More(); i++ {
				next := fmt.Sprintf("%s[%d]", path, i)
				if t == '{' {
					kt, err := dec.Token()
					if err != nil {
						return false
					}
					key, _ := kt.(string)
					if next = key; path != "" {
						next = path + "." + key
					}
				}
				if !walk(next) {
					return false
				}
			}
			if _, err := dec.Token(); err != nil {
				return false
			}
		}
		return true
	}
	walk("")
	return out
}

// A DecodeOption changes how DecodeBytes (and Decode, DecodeOptional,
// Decoded) read a body.
type DecodeOption func(*decodeOptions)

type decodeOptions struct {
	nullable map[string]bool
}

// Nullable lets the fields at paths (named as validation errors name them:
// description, discount.combinationRule) be null: the endpoint gives null a
// meaning, such as removing the field on an update. Every other null is
// refused (see checkNulls).
func Nullable(paths ...string) DecodeOption {
	return func(o *decodeOptions) {
		if o.nullable == nil {
			o.nullable = map[string]bool{}
		}
		for _, p := range paths {
			o.nullable[p] = true
		}
	}
}

// checkNulls refuses a null that would be lost: encoding/json decodes null
// into a string, number, bool, struct, slice, map or pointer as if the
// field were absent, so a client's null would silently mean "not sent".
// A null is accepted only where the target is free-form JSON (any,
// json.RawMessage: the endpoint reads the value itself, as the users and
// locations updates do) or at a path the endpoint declared Nullable.
// Anything else is VALIDATION_FAILED "<path>: cannot be null". Free-form
// values are not looked into. Syntax errors are left to the decoder.
func checkNulls(data []byte, t reflect.Type, nullable map[string]bool) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := walkNulls(dec, t, "", nullable); !errors.Is(err, errSyntax) {
		return err
	}
	return nil
}

// acceptsNull reports whether t keeps a null as a value of its own: an
// interface (nil) or json.RawMessage (the text null).
func acceptsNull(t reflect.Type) bool {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t == nil || t == rawMessage || t.Kind() == reflect.Interface
}

func walkNulls(dec *json.Decoder, t reflect.Type, path string, nullable map[string]bool) error {
	tok, err := dec.Token()
	if err != nil {
		return errSyntax
	}
	if tok == nil {
		if acceptsNull(t) || nullable[path] {
			return nil
		}
		if path == "" {
			return apierr.Invalid("", "the body must be a JSON object")
		}
		return apierr.Invalid(path, "cannot be null")
	}
	delim, ok := tok.(json.Delim)
	if !ok {
		return nil
	}
	ct := checked(t)
	if ct == nil {
		return skipValue(dec)
	}
	switch delim {
	case '{':
		var fields map[string]reflect.Type
		var elem reflect.Type
		switch ct.Kind() {
		case reflect.Struct:
			fields = jsonFields(ct)
		case reflect.Map:
			elem = ct.Elem()
		}
		for dec.More() {
			kt, err := dec.Token()
			if err != nil {
				return errSyntax
			}
			key, _ := kt.(string)
			at := key
			if path != "" {
				at = path + "." + key
			}
			next := elem
			if fields != nil {
				next = fields[key]
			}
			if err := walkNulls(dec, next, at, nullable); err != nil {
				return err
			}
		}
	case '[':
		var elem reflect.Type
		if ct.Kind() == reflect.Slice || ct.Kind() == reflect.Array {
			elem = ct.Elem()
		}
		for i := 0; dec.More(); i++ {
			if err := walkNulls(dec, elem, fmt.Sprintf("%s[%d]", path, i), nullable); err != nil {
				return err
			}
		}
	}
	if _, err := dec.Token(); err != nil {
		return errSyntax
	}
	return nil
}

// skipValue reads the rest of an object or array whose opening delimiter
// the decoder has just read.
func skipValue(dec *json.Decoder) error {
	for level := 1; level > 0; {
		tok, err := dec.Token()
		if err != nil {
			return errSyntax
		}
		switch tok {
		case json.Delim('{'), json.Delim('['):
			level++
		case json.Delim('}'), json.Delim(']'):
			level--
		}
	}
	return nil
}

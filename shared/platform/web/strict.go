package web

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"

	"github.com/loyalty-platform/platform/shared/platform/apierr"
	"github.com/loyalty-platform/platform/shared/platform/ddb"
)

// checkKeys walks a JSON document against the Go type it will be decoded
// into and refuses what encoding/json lets through: object keys that match
// a field only case-insensitively, keys given twice, and unknown keys in
// nested objects (named by their full path, such as address.zip or
// credentials[0].extra). Syntax errors are left to the decoder.
//
// It also refuses values DynamoDB could not store (see ddb.CheckJSON): every
// number must be one DynamoDB holds, the keys of maps must not be empty, and
// each free-form value (any, raw JSON) is checked as a whole, its size
// included.
func checkKeys(data []byte, t reflect.Type) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := walkKeys(dec, data, t, ""); !errors.Is(err, errSyntax) {
		return err
	}
	return nil
}

// errSyntax ends the walk at the first token that does not read: the
// decoder reports the syntax error. (The walk must stop there: the
// decoder's More keeps answering true before a bad token.)
var errSyntax = errors.New("syntax error")

var (
	unmarshaler = reflect.TypeFor[json.Unmarshaler]()
	rawMessage  = reflect.TypeFor[json.RawMessage]()
)

// checked returns the type to check a value against, or nil when the value
// is free-form (any, raw JSON, or a type with its own UnmarshalJSON).
func checked(t reflect.Type) reflect.Type {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil || t == rawMessage || t.Kind() == reflect.Interface || reflect.PointerTo(t).Implements(unmarshaler) {
		return nil
	}
	return t
}

func walkKeys(dec *json.Decoder, data []byte, t reflect.Type, path string) error {
	start := dec.InputOffset()
	tok, err := dec.Token()
	if err != nil {
		return errSyntax
	}
	if t != nil && checked(t) == nil {
		return checkFree(dec, data, start, tok, path)
	}
	if n, ok := tok.(json.Number); ok {
		if why := ddb.CheckNumber(string(n)); why != "" {
			return apierr.Invalid(path, "%s", why)
		}
	}
	delim, ok := tok.(json.Delim)
	if !ok {
		return nil
	}
	t = checked(t)
	switch delim {
	case '{':
		var fields map[string]reflect.Type
		var elem reflect.Type
		if t != nil {
			switch t.Kind() {
			case reflect.Struct:
				fields = jsonFields(t)
			case reflect.Map:
				elem = t.Elem()
			}
		}
		seen := map[string]bool{}
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
			if t != nil && seen[key] {
				return apierr.Invalid(at, "is given twice")
			}
			if why := ddb.CheckName(key); why != "" {
				return apierr.Invalid(path, "%s", why)
			}
			seen[key] = true
			next := elem
			if fields != nil {
				ft, known := fields[key]
				if !known {
					if _, custom := fields["metadata"]; custom && path == "" {
						return apierr.Invalid(at, "unknown field: put custom fields in metadata (string values)")
					}
					return apierr.Invalid(at, "unknown field")
				}
				next = ft
			}
			if err := walkKeys(dec, data, next, at); err != nil {
				return err
			}
		}
		_, _ = dec.Token()
	case '[':
		var elem reflect.Type
		if t != nil && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array) {
			elem = t.Elem()
		}
		for i := 0; dec.More(); i++ {
			if err := walkKeys(dec, data, elem, fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
		_, _ = dec.Token()
	}
	return nil
}

// checkFree checks a free-form value, whose first token tok the decoder
// has just read (it started at offset start of data), with
// ddb.CheckJSON, and names a value that breaks a rule by its full path.
func checkFree(dec *json.Decoder, data []byte, start int64, tok json.Token, path string) error {
	if _, ok := tok.(json.Delim); ok {
		if err := skipValue(dec); err != nil {
			return err
		}
	}
	raw := bytes.TrimLeft(data[start:dec.InputOffset()], " \t\r\n")
	raw = bytes.TrimLeft(bytes.TrimPrefix(bytes.TrimPrefix(raw, []byte(":")), []byte(",")), " \t\r\n")
	if _, err := ddb.CheckJSON(raw); err != nil {
		var ve *ddb.ValueError
		if errors.As(err, &ve) {
			return apierr.Invalid(ve.At(path), "%s", ve.Reason)
		}
		return errSyntax
	}
	return nil
}

var fieldCache sync.Map // reflect.Type -> map[string]reflect.Type

// jsonFields returns the JSON names of a struct's decodable fields (the
// promoted fields of embedded structs included) and their types.
func jsonFields(t reflect.Type) map[string]reflect.Type {
	if f, ok := fieldCache.Load(t); ok {
		return f.(map[string]reflect.Type)
	}
	out := map[string]reflect.Type{}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" {
			et := f.Type
			if et.Kind() == reflect.Pointer {
				et = et.Elem()
			}
			if et.Kind() == reflect.Struct {
				for k, v := range jsonFields(et) {
					if _, dup := out[k]; !dup {
						out[k] = v
					}
				}
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		out[name] = f.Type
	}
	fieldCache.Store(t, out)
	return out
}

// typeErrorPath names the value a *json.UnmarshalTypeError is about by its
// full path (map keys and array indexes included, such as links.x.enabled
// or tags[0]), which encoding/json's Field leaves out. It finds the
// innermost value of data whose text ends at, or whose opening delimiter
// ends just before, the error's offset, and falls back to Field when that
// path does not agree with Field (an error from inside a custom
// UnmarshalJSON has an offset into another document).
func typeErrorPath(data []byte, typ *json.UnmarshalTypeError) string {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	stop, found, path := false, false, ""
	var walk func(at string)
	walk = func(at string) {
		before := dec.InputOffset()
		tok, err := dec.Token()
		if err != nil {
			stop = true
			return
		}
		if d, ok := tok.(json.Delim); ok {
			for i := 0; dec.More() && !stop; i++ {
				next := fmt.Sprintf("%s[%d]", at, i)
				if d == '{' {
					kt, err := dec.Token()
					if err != nil {
						stop = true
						return
					}
					key, _ := kt.(string)
					if next = key; at != "" {
						next = at + "." + key
					}
				}
				walk(next)
			}
			if stop {
				return
			}
			if _, err := dec.Token(); err != nil {
				stop = true
				return
			}
		}
		if before < typ.Offset && typ.Offset <= dec.InputOffset() {
			stop, found, path = true, true, at
		}
	}
	walk("")
	if !found || path == "" || !sameFields(path, typ.Field) {
		return typ.Field
	}
	return path
}

// sameFields reports whether the struct field names of field (as
// encoding/json reports them: dotted, without map keys or indexes) appear
// in path in order.
func sameFields(path, field string) bool {
	segs := strings.FieldsFunc(path, func(r rune) bool { return r == '.' || r == '[' })
	i := 0
	for _, f := range strings.Split(field, ".") {
		if f == "" {
			continue
		}
		// encoding/json names a field of an embedded struct with the
		// struct's type name first (Definition.points.initial).
		if !slices.Contains(segs[i:], f) && f[0] >= 'A' && f[0] <= 'Z' {
			continue
		}
		for i < len(segs) && segs[i] != f {
			i++
		}
		if i == len(segs) {
			return false
		}
		i++
	}
	return true
}

package web

import (
	"bytes"
	"encoding/json"
	"fmt"
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

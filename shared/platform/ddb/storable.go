package ddb

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"
)

// DynamoDB's limits on the values it stores, which free JSON a client sends
// (such as a location's `extended`) must keep.
const (
	// MaxItemBytes is the largest item DynamoDB stores, attribute names
	// included.
	MaxItemBytes = 400 << 10
	// MaxNesting is the deepest nesting of an item: the item is the first
	// level, so an attribute's value nests maps and lists at most
	// MaxNesting-1 deep.
	MaxNesting = 32
	// MaxDigits is the most significant digits a number may have.
	MaxDigits = 38
	// MinExponent and MaxExponent bound the decimal exponent of a
	// number's first significant digit: a non-zero magnitude from 1E-130
	// to 9.9999999999999999999999999999999999999E+125.
	MinExponent = -130
	MaxExponent = 125
)

// ValueError says where in a JSON value, and why, DynamoDB could not store
// it. Path is relative to the value checked (`n`, `a[2].b`), empty for the
// value itself.
type ValueError struct {
	Path   string
	Reason string
}

// Error returns the path and the reason.
func (e *ValueError) Error() string {
	if e.Path == "" {
		return e.Reason
	}
	return e.Path + ": " + e.Reason
}

// At returns the path of the error below base: base itself, base.n or
// base[2] (base may be empty).
func (e *ValueError) At(base string) string {
	switch {
	case e.Path == "":
		return base
	case base == "" || e.Path[0] == '[':
		return base + e.Path
	default:
		return base + "." + e.Path
	}
}

// CheckNumber returns why DynamoDB could not store the JSON number text, or
// "" when it can: at most MaxDigits significant digits, and zero or a
// magnitude whose first significant digit has an exponent from
// MinExponent to MaxExponent. Free JSON is decoded to 64-bit floats before
// it is stored, so the number must keep to the range as a float too:
// 9.99999999999999999e125 rounds to 1e126 and is refused.
func CheckNumber(text string) string {
	digits, exp, ok := numberShape(text)
	switch {
	case !ok:
		return fmt.Sprintf("%s is not a number", quoteNumber(text))
	case digits > MaxDigits:
		return fmt.Sprintf("number %s has more than %d significant digits", quoteNumber(text), MaxDigits)
	case digits > 0 && (exp < MinExponent || exp > MaxExponent):
		return outOfRange(text)
	case digits > 0:
		f, _ := strconv.ParseFloat(text, 64)
		if d, e, _ := numberShape(strconv.FormatFloat(f, 'g', -1, 64)); d == 0 || e < MinExponent || e > MaxExponent {
			return outOfRange(text)
		}
	}
	return ""
}

func outOfRange(text string) string {
	return fmt.Sprintf("number %s is out of range (1E%d to under 1E%d)", quoteNumber(text), MinExponent, MaxExponent+1)
}

// numberShape reads a JSON number: its count of significant digits and the
// decimal exponent of the first one (digits is 0 for zero).
func numberShape(s string) (digits, exp int, ok bool) {
	i := 0
	if i < len(s) && s[i] == '-' {
		i++
	}
	first, last, point := -1, -1, -1 // indexes among the mantissa's digits
	n := 0
mantissa:
	for ; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= '0' && c <= '9':
			if c != '0' {
				if first < 0 {
					first = n
				}
				last = n
			}
			n++
		case c == '.' && point < 0:
			point = n
		default:
			break mantissa
		}
	}
	if n == 0 {
		return 0, 0, false
	}
	if point < 0 {
		point = n
	}
	e := 0
	if i < len(s) {
		if s[i] != 'e' && s[i] != 'E' {
			return 0, 0, false
		}
		x, err := strconv.Atoi(s[i+1:])
		if err != nil {
			var ne *strconv.NumError
			if !errors.As(err, &ne) || ne.Err != strconv.ErrRange {
				return 0, 0, false
			}
			// An exponent beyond int: far out of range either way.
			x = 1 << 30
			if s[i+1] == '-' {
				x = -x
			}
		}
		e = max(min(x, 1<<30), -(1 << 30))
	}
	if first < 0 {
		return 0, 0, true
	}
	return last - first + 1, e + point - first - 1, true
}

// quoteNumber shortens a long number for a message.
func quoteNumber(s string) string {
	if len(s) > 40 {
		return s[:37] + "..."
	}
	return s
}

// CheckName returns why DynamoDB could not store a map key or attribute
// name, or "" when it can (any non-empty string).
func CheckName(name string) string {
	if name == "" {
		return "keys must not be empty"
	}
	return ""
}

// CheckJSON checks that DynamoDB can store the JSON value data, as an
// attribute of an item, as it
// decodes (numbers, map keys and nesting as CheckNumber, CheckName and
// MaxNesting say) and returns its size as DynamoDB counts it: strings by
// their UTF-8 bytes, numbers by their digits, maps and lists with 3 bytes
// of their own and 1 an element, map keys by their bytes.
// A value larger than MaxItemBytes is refused as well. The error is a
// *ValueError naming the first place that breaks a rule; text that is not
// one JSON value is an error without a path.
func CheckJSON(data []byte) (int, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	size, err := checkValue(dec, "", 0)
	if err != nil {
		return 0, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return 0, &ValueError{Reason: "is not one JSON value"}
	}
	if size > MaxItemBytes {
		return 0, &ValueError{Reason: fmt.Sprintf("is larger than the %d KB DynamoDB stores in one item", MaxItemBytes>>10)}
	}
	return size, nil
}

func checkValue(dec *json.Decoder, path string, level int) (int, error) {
	tok, err := dec.Token()
	if err != nil {
		return 0, &ValueError{Path: path, Reason: "is not valid JSON"}
	}
	switch v := tok.(type) {
	case nil, bool:
		return 1, nil
	case string:
		return len(v), nil
	case json.Number:
		if why := CheckNumber(string(v)); why != "" {
			return 0, &ValueError{Path: path, Reason: why}
		}
		return numberSize(string(v)), nil
	case json.Delim:
		if level++; level > MaxNesting-1 {
			return 0, &ValueError{Path: path, Reason: fmt.Sprintf("is nested deeper than %d levels", MaxNesting-1)}
		}
		size := 3 // a map's or list's own bytes
		for i := 0; dec.More(); i++ {
			at := fmt.Sprintf("%s[%d]", path, i)
			if v == '{' {
				kt, err := dec.Token()
				if err != nil {
					return 0, &ValueError{Path: path, Reason: "is not valid JSON"}
				}
				key, _ := kt.(string)
				if at = key; path != "" {
					at = path + "." + key
				}
				if why := CheckName(key); why != "" {
					return 0, &ValueError{Path: path, Reason: why}
				}
				size += len(key)
			}
			n, err := checkValue(dec, at, level)
			if err != nil {
				return 0, err
			}
			size += n + 1
			if size > MaxItemBytes {
				return 0, &ValueError{Path: path, Reason: fmt.Sprintf("is larger than the %d KB DynamoDB stores in one item", MaxItemBytes>>10)}
			}
		}
		if _, err := dec.Token(); err != nil {
			return 0, &ValueError{Path: path, Reason: "is not valid JSON"}
		}
		return size, nil
	}
	return 0, &ValueError{Path: path, Reason: "is not valid JSON"}
}

// numberSize is DynamoDB's size of a number: a byte per two significant
// digits and one more.
func numberSize(text string) int {
	digits, _, _ := numberShape(text)
	return (digits+1)/2 + 1
}

// unstorable are the starts of the messages with which DynamoDB refuses a
// value it cannot hold.
var unstorable = []string{
	"Item size has exceeded", "Item size to update has exceeded", "Number overflow", "Number underflow",
	"Nesting Levels have exceeded", "Empty attribute name", "Attempting to store more than 38 significant digits",
}

// IsUnstorable reports whether DynamoDB refused a write because a value does
// not fit its rules (an item over MaxItemBytes, a number out of range,
// nesting too deep, an empty name): a ValidationException of a single
// write, or of an item of a cancelled transaction. CheckJSON keeps client
// values from getting that far; this names what slipped through.
func IsUnstorable(err error) bool {
	matches := func(msg string) bool {
		for _, m := range unstorable {
			if strings.Contains(msg, m) {
				return true
			}
		}
		return false
	}
	var tce *types.TransactionCanceledException
	if errors.As(err, &tce) {
		for _, r := range tce.CancellationReasons {
			if aws.ToString(r.Code) == "ValidationException" && matches(aws.ToString(r.Message)) {
				return true
			}
		}
		return false
	}
	var api smithy.APIError
	return errors.As(err, &api) && api.ErrorCode() == "ValidationException" && matches(api.ErrorMessage())
}

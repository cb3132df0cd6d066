package web

import (
	"strings"
	"unicode/utf8"

	"github.com/loyalty-platform/platform/shared/platform/apierr"
)

// CheckText checks an optional text field of a request body, named path in
// its errors: nil (the field left out) is fine; otherwise the text must be
// 1 to max characters as sent (an empty string is refused: leave the field
// out instead) and hold no control characters other than tab and line
// breaks. A refused text is VALIDATION_FAILED.
func CheckText(path string, v *string, max int) error {
	if v == nil {
		return nil
	}
	n := utf8.RuneCountInString(*v)
	if n == 0 || n > max {
		return apierr.Invalid(path, "must be 1 to %d characters", max)
	}
	if strings.ContainsFunc(*v, func(r rune) bool { return r < 0x20 && r != '\n' && r != '\r' && r != '\t' || r == 0x7f }) {
		return apierr.Invalid(path, "must not hold control characters")
	}
	return nil
}

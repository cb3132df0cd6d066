package web

import "github.com/loyalty-platform/platform/shared/platform/apierr"

// ReadOnlyField is a field a client may send back as GET returned it but
// may not change: Got is what the request sent (nil when it left the field
// out), Want the stored value.
type ReadOnlyField struct {
	Name string
	Got  *string
	Want string
}

// CheckReadOnly returns VALIDATION_FAILED naming the first field that was
// sent with another value than the stored one, or nil.
func CheckReadOnly(fields ...ReadOnlyField) error {
	for _, f := range fields {
		if f.Got != nil && *f.Got != f.Want {
			return apierr.Invalid(f.Name, "is read-only (send it unchanged or leave it out)")
		}
	}
	return nil
}

// ReadOnly returns the read-only field name, sent as got and stored as
// want.
func ReadOnly(name string, got *string, want string) ReadOnlyField {
	return ReadOnlyField{Name: name, Got: got, Want: want}
}

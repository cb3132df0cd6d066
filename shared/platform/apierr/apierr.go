// Package apierr holds the platform's error codes and the one table that maps
// each code to an HTTP status. Domain packages return *Error values (usually
// wrapped with context); the web layer turns them into {code, message} bodies.
package apierr

import (
	"errors"
	"fmt"
	"net/http"
	"time"
)

// Code is an UPPER_SNAKE error code returned to clients.
type Code string

// The error codes of the API. The OpenAPI document lists the same set.
const (
	Unauthorized         Code = "UNAUTHORIZED"
	NotFound             Code = "NOT_FOUND"
	Conflict             Code = "CONFLICT"
	ValidationFailed     Code = "VALIDATION_FAILED"
	CredentialExists     Code = "CREDENTIAL_EXISTS"
	AlreadyActive        Code = "ALREADY_ACTIVE"
	InvalidToken         Code = "INVALID_TOKEN"
	UserPending          Code = "USER_PENDING"
	PointsNotEditable    Code = "POINTS_NOT_EDITABLE"
	ProfilePhotoRequired Code = "PROFILE_PHOTO_REQUIRED"
	InsufficientPoints   Code = "INSUFFICIENT_POINTS"
	AlreadyCheckedIn     Code = "ALREADY_CHECKED_IN"
	DeviceTaken          Code = "DEVICE_ALREADY_REGISTERED"
	PayloadTooLarge      Code = "PAYLOAD_TOO_LARGE"
	UnsupportedMedia     Code = "UNSUPPORTED_MEDIA_TYPE"
	TooManyAttempts      Code = "TOO_MANY_ATTEMPTS"
	Internal             Code = "INTERNAL"

	// Loyalty (awards).
	PerkDisabled           Code = "PERK_DISABLED"
	AwardNotHeld           Code = "AWARD_NOT_HELD"
	OutsideWindow          Code = "OUTSIDE_REDEMPTION_WINDOW"
	LocationNotAllowed     Code = "LOCATION_NOT_ALLOWED"
	RedemptionLimitReached Code = "REDEMPTION_LIMIT_REACHED"
	RefundExceedsRedeemed  Code = "REFUND_EXCEEDS_REDEEMED"

	// POS.
	InsufficientBalance Code = "INSUFFICIENT_BALANCE"

	// Idempotency-Key (shared/platform/idempotency): the key was used before with
	// another request; a request with the key is still being served; the
	// request with the key made its change but its response was lost
	// (read the resource instead of retrying).
	IdempotencyKeyReused                Code = "IDEMPOTENCY_KEY_REUSED"
	IdempotencyInProgress               Code = "IDEMPOTENCY_IN_PROGRESS"
	IdempotencyCommittedWithoutResponse Code = "IDEMPOTENCY_COMMITTED_WITHOUT_RESPONSE"

	// Abuse defences: the per-address allowance of anonymous sign-ups and
	// code requests, the tenant's hourly cap of SMS and e-mails, the
	// tenant's SMS countries and the list of common passwords.
	TooManyRequests      Code = "TOO_MANY_REQUESTS"
	MessageLimitReached  Code = "MESSAGE_LIMIT_REACHED"
	SMSCountryNotAllowed Code = "SMS_COUNTRY_NOT_ALLOWED"
	PasswordTooCommon    Code = "PASSWORD_TOO_COMMON"
)

// statuses is the single table from error code to HTTP status.
var statuses = map[Code]int{
	Unauthorized:         http.StatusUnauthorized,
	NotFound:             http.StatusNotFound,
	Conflict:             http.StatusConflict,
	ValidationFailed:     http.StatusUnprocessableEntity,
	CredentialExists:     http.StatusUnprocessableEntity,
	AlreadyActive:        http.StatusUnprocessableEntity,
	InvalidToken:         http.StatusUnprocessableEntity,
	UserPending:          http.StatusUnprocessableEntity,
	PointsNotEditable:    http.StatusUnprocessableEntity,
	ProfilePhotoRequired: http.StatusUnprocessableEntity,
	InsufficientPoints:   http.StatusUnprocessableEntity,
	AlreadyCheckedIn:     http.StatusConflict,
	DeviceTaken:          http.StatusUnprocessableEntity,
	PayloadTooLarge:      http.StatusRequestEntityTooLarge,
	UnsupportedMedia:     http.StatusUnsupportedMediaType,
	TooManyAttempts:      http.StatusTooManyRequests,
	Internal:             http.StatusInternalServerError,

	PerkDisabled:           http.StatusUnprocessableEntity,
	AwardNotHeld:           http.StatusUnprocessableEntity,
	OutsideWindow:          http.StatusUnprocessableEntity,
	LocationNotAllowed:     http.StatusUnprocessableEntity,
	RedemptionLimitReached: http.StatusUnprocessableEntity,
	RefundExceedsRedeemed:  http.StatusUnprocessableEntity,

	InsufficientBalance: http.StatusUnprocessableEntity,

	IdempotencyKeyReused:                http.StatusUnprocessableEntity,
	IdempotencyInProgress:               http.StatusConflict,
	IdempotencyCommittedWithoutResponse: http.StatusConflict,

	TooManyRequests:      http.StatusTooManyRequests,
	MessageLimitReached:  http.StatusTooManyRequests,
	SMSCountryNotAllowed: http.StatusUnprocessableEntity,
	PasswordTooCommon:    http.StatusUnprocessableEntity,
}

// Codes returns every known code; the contract test compares it with the
// OpenAPI document.
func Codes() []Code {
	out := make([]Code, 0, len(statuses))
	for c := range statuses {
		out = append(out, c)
	}
	return out
}

// Status returns the HTTP status of a code; unknown codes are 500.
func (c Code) Status() int {
	if s, ok := statuses[c]; ok {
		return s
	}
	return http.StatusInternalServerError
}

// Error is an error a client may see. Message must never carry internal
// details: it is written to the response body as is.
type Error struct {
	Code    Code
	Message string
	// Field names the offending input field of a validation error, if any.
	Field string
	// RetryAfter, when positive, is how long the client should wait before
	// trying again; the web layer sends it as the Retry-After header.
	RetryAfter time.Duration
}

// Error returns the message with its code.
func (e *Error) Error() string { return string(e.Code) + ": " + e.Message }

// Is reports whether target is an *Error with the same code and message, so
// sentinel errors work with errors.Is even after wrapping.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Code == e.Code && t.Message == e.Message
}

// New returns an error with code and message.
func New(code Code, message string) *Error { return &Error{Code: code, Message: message} }

// Errorf returns an error with code and a formatted message.
func Errorf(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// Invalid returns a VALIDATION_FAILED error naming field.
func Invalid(field, format string, args ...any) *Error {
	msg := fmt.Sprintf(format, args...)
	if field != "" {
		msg = field + ": " + msg
	}
	return &Error{Code: ValidationFailed, Message: msg, Field: field}
}

// CodeOf returns the code of the first *Error in err's chain, or Internal.
func CodeOf(err error) Code {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return Internal
}

// As returns the first *Error in err's chain.
func As(err error) (*Error, bool) {
	var e *Error
	ok := errors.As(err, &e)
	return e, ok
}

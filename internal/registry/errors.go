package registry

import "fmt"

// Code names a rule a request broke; the engine maps it to an API error code.
type Code string

// The rules a request can break.
const (
	UnknownEntityType Code = "UNKNOWN_ENTITY_TYPE"
	InvalidRecord     Code = "INVALID_RECORD"
	InvalidID         Code = "INVALID_ID"
	RefNotFound       Code = "REF_NOT_FOUND"
	RefPending        Code = "REF_PENDING"
	Conflict          Code = "CONFLICT"
	AlreadyCleared    Code = "ARTIFACT_CLEARED"
	InvalidInput      Code = "BAD_USER_INPUT"
)

// Error is a broken rule with a message a person can act on.
type Error struct {
	Code    Code
	Message string
}

func (e *Error) Error() string { return e.Message }

// Errorf returns an Error.
func Errorf(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// Package apperr defines the errors a client can act on: each has a stable
// code (sent as extensions.code) and a message meant for a person.
package apperr

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"
)

// Code is a stable, machine-readable error code.
type Code string

// The codes clients can switch on. They never change meaning once shipped.
const (
	BadUserInput      Code = "BAD_USER_INPUT"
	InvalidContent    Code = "INVALID_CONTENT"
	InvalidID         Code = "INVALID_ID"
	NotFound          Code = "NOT_FOUND"
	SessionExpired    Code = "SESSION_EXPIRED"
	PaginationLimit   Code = "PAGINATION_LIMIT"
	InvalidCursor     Code = "INVALID_CURSOR"
	Conflict          Code = "CONFLICT"
	RefNotFound       Code = "REF_NOT_FOUND"
	RefPending        Code = "REF_PENDING"
	UnknownEntityType Code = "UNKNOWN_ENTITY_TYPE"
	// UnknownDomain refuses a session of a domain the server has no entity
	// types for (a domain file loaded at start, or defineEntityType).
	UnknownDomain     Code = "UNKNOWN_DOMAIN"
	InvalidRecord     Code = "INVALID_RECORD"
	TurnInProgress    Code = "TURN_IN_PROGRESS"
	NoOpenTurn        Code = "NO_OPEN_TURN"
	SubscriberTooSlow Code = "SUBSCRIBER_TOO_SLOW"
	// SubscriptionLimit refuses a subscription over a cap: per WebSocket,
	// per API key or per replica (the message names which, and its setting).
	SubscriptionLimit Code = "SUBSCRIPTION_LIMIT"
	Internal          Code = "INTERNAL"
	// Access.
	Unauthenticated Code = "UNAUTHENTICATED"
	Forbidden       Code = "FORBIDDEN"
	// Request limits.
	QueryTooDeep      Code = "QUERY_TOO_DEEP"
	TooManyAliases    Code = "TOO_MANY_ALIASES"
	TooManyRootFields Code = "TOO_MANY_ROOT_FIELDS"
	QueryTooComplex   Code = "QUERY_TOO_COMPLEX"
	RequestTooLarge   Code = "REQUEST_TOO_LARGE"
	BatchingDisabled  Code = "BATCHING_DISABLED"
	Timeout           Code = "TIMEOUT"
	// RateLimited answers a request over its key's or tenant's request
	// rate or requests in flight (HTTP 429, with Retry-After): wait that
	// long, then retry.
	RateLimited Code = "RATE_LIMITED"
	// Cancelled answers an operation whose request was cancelled before it
	// finished: its client went away, or the server is shutting down.
	Cancelled Code = "CANCELLED"
	// InputTooLarge answers an argument over a size limit: a string too
	// long, a list too long, nesting too deep, or too much text at once.
	InputTooLarge Code = "INPUT_TOO_LARGE"
	// Unavailable answers a request the database could not serve (it is
	// down or unreachable): retry it later.
	Unavailable Code = "UNAVAILABLE"
	// IntrospectionDisabled answers __schema and __type unless the server
	// runs with -introspection.
	IntrospectionDisabled Code = "INTROSPECTION_DISABLED"
	// ArtifactCleared answers a change to generated content that was
	// already cleared (saved and done with, or discarded).
	ArtifactCleared Code = "ARTIFACT_CLEARED"
	// HTTP: requests that are not GraphQL-over-HTTP requests at all.

	// InvalidRequest is a body or parameters that are not a GraphQL request:
	// malformed JSON, bytes after the JSON object, a missing or non-string
	// query, variables or extensions that are not an object (HTTP 400).
	InvalidRequest Code = "INVALID_REQUEST"
	// MethodNotAllowed is a mutation or subscription over GET, or a method
	// other than GET, POST and OPTIONS (HTTP 405, with Allow).
	MethodNotAllowed Code = "METHOD_NOT_ALLOWED"
	// UnsupportedMediaType is a POST whose body is not application/json
	// (HTTP 415).
	UnsupportedMediaType Code = "UNSUPPORTED_MEDIA_TYPE"
)

// RetryAfterSeconds is how long a client should wait before retrying an
// UNAVAILABLE request: HTTP answers it as 503 with this Retry-After.
const RetryAfterSeconds = 1

// Error is an error with a code and a message a person can act on.
type Error struct {
	Code    Code
	Message string
	// Field names the input field at fault, when there is one.
	Field string
	// Cause is the error behind this one, for the log; never shown.
	Cause error
	// format and args made Message; kept so that a door can name the
	// Operations in it its own way (MessageNaming).
	format string
	args   []any
}

func (e *Error) Error() string { return e.Message }

// Unwrap returns the cause, so that errors.Is sees through to it.
func (e *Error) Unwrap() error { return e.Cause }

// New returns an error with the code and a formatted message.
func New(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: message(format, args), format: format, args: args}
}

// Invalid returns a BAD_USER_INPUT error about one input field.
func Invalid(field, format string, args ...any) *Error {
	return &Error{Code: BadUserInput, Field: field, Message: message(format, args), format: format, args: args}
}

// UnknownRef returns REF_NOT_FOUND for a ref this session lacks, naming the
// input field that gave it (refs[2], ref, genRef, filters[0].value).
func UnknownRef(field, ref string) *Error {
	return &Error{Code: RefNotFound, Field: field, Message: message("this session has no ref %q", []any{ref})}
}

// TooLarge returns an INPUT_TOO_LARGE error about one input field.
func TooLarge(field, format string, args ...any) *Error {
	return &Error{Code: InputTooLarge, Field: field, Message: message(format, args), format: format, args: args}
}

// MessageNaming is the message with each Operation among its arguments
// given by name: the name a door has for the operation (MCP its tool's).
// Message names each as GraphQL does, as does a nil name.
func (e *Error) MessageNaming(name func(Operation) string) string {
	if name == nil {
		return e.Message
	}
	args := slices.Clone(e.args)
	named := false
	for i, a := range args {
		if op, ok := a.(Operation); ok {
			args[i], named = name(op), true
		}
	}
	if !named {
		return e.Message
	}
	return message(e.format, args)
}

// quotedMax bounds each string a message quotes (%q): messages quote the
// input they refuse, which may be a megabyte, and a person needs its start.
// What the server itself lists (%s: the kinds, the types) stays whole.
const quotedMax = 120

// message formats an error's message with each string argument quoted by
// %q and longer than quotedMax cut, at a rune boundary, and marked with an
// ellipsis.
func message(format string, args []any) string {
	args = append([]any(nil), args...) // a caller's xs... stays as it was
	for i, verb := range verbs(format) {
		if i >= len(args) || verb != 'q' {
			continue
		}
		s, ok := args[i].(string)
		if !ok || len(s) <= quotedMax {
			continue
		}
		cut := quotedMax
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		args[i] = s[:cut] + "…"
	}
	return fmt.Sprintf(format, args...)
}

// verbs lists the verb of each argument a format string uses, in order.
func verbs(format string) []byte {
	var out []byte
	for i := 0; i < len(format); i++ {
		if format[i] != '%' {
			continue
		}
		i++
		for i < len(format) && strings.IndexByte("+-# 0123456789.*", format[i]) >= 0 {
			i++
		}
		if i < len(format) && format[i] != '%' {
			out = append(out, format[i])
		}
	}
	return out
}

// CodeOf returns the code of err, or "" when err carries none.
func CodeOf(err error) Code {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}

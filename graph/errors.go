package graph

import (
	"context"
	"errors"
	"log/slog"
	"runtime/debug"
	"strings"
	"unicode/utf8"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"sessiongraph/ent"
	"sessiongraph/internal/access"
	"sessiongraph/internal/apperr"
)

// presentError gives every error a stable extensions.code. Errors of our own
// keep their message; gqlgen's parse and validation errors keep theirs; ent
// errors are translated; anything else is logged and reported as INTERNAL
// without its details, which may name tables or SQL.
func presentError(log *slog.Logger) graphql.ErrorPresenterFunc {
	return func(ctx context.Context, err error) *gqlerror.Error {
		gqlErr := graphql.DefaultErrorPresenter(ctx, err)
		var ae *apperr.Error
		switch {
		case errors.As(err, &ae):
			gqlErr.Message = ae.Message
			setCode(gqlErr, string(ae.Code))
			if ae.Field != "" {
				gqlErr.Extensions["field"] = ae.Field
			}
		case ent.IsValidationError(err):
			var ve *ent.ValidationError
			errors.As(err, &ve)
			gqlErr.Message = "invalid value for " + ve.Name + ": " + ve.Unwrap().Error()
			setCode(gqlErr, string(apperr.BadUserInput))
		case ent.IsNotFound(err):
			setCode(gqlErr, string(apperr.NotFound))
		case errors.Is(err, context.DeadlineExceeded) || errors.Is(ctx.Err(), context.DeadlineExceeded):
			// lib/pq reports a statement cancelled by the deadline as its own
			// error; the request's context says why.
			gqlErr.Message = "the request took too long and was cancelled"
			setCode(gqlErr, string(apperr.Timeout))
		case errors.Is(err, context.Canceled) || errors.Is(ctx.Err(), context.Canceled):
			// The client went away (it completed a subscription, closed its
			// socket or dropped its request) or the server is stopping: no
			// error of ours, and seldom anyone left to read the answer.
			log.DebugContext(ctx, "operation cancelled", "error", err, "path", gqlErr.Path.String())
			gqlErr.Message = errCancelled.Message
			setCode(gqlErr, string(errCancelled.Code))
		case gqlErr.Extensions["code"] != nil:
			// gqlgen's own errors (parse, validation) already carry a code.
		case gqlErr.Err == nil:
			// An error gqlgen made itself, such as a bad variable type.
			setCode(gqlErr, string(apperr.BadUserInput))
		default:
			log.ErrorContext(ctx, "internal error", "error", err, "path", gqlErr.Path.String())
			gqlErr.Message = "internal error"
			setCode(gqlErr, string(apperr.Internal))
		}
		gqlErr.Message = cutQuoted(gqlErr.Message)
		return gqlErr
	}
}

// errCancelled answers an operation whose request was cancelled.
var errCancelled = access.ErrCancelled

// recoverPanic turns a resolver panic into an INTERNAL error; the panic value
// and the stack that raised it go to the log (a panic is a bug of ours),
// never to the client.
func recoverPanic(log *slog.Logger) graphql.RecoverFunc {
	return func(ctx context.Context, p any) error {
		// Called in the deferred recover: the stack still holds the panic's frames.
		log.ErrorContext(ctx, "resolver panic", "panic", p, "stack", string(debug.Stack()))
		return apperr.New(apperr.Internal, "internal error")
	}
}

// quotedMax bounds each piece of input an error message repeats, as
// apperr's messages do: gqlparser and gqlgen repeat a name or value whole,
// quoted (an unknown field, fragment or argument) or not (an unknown
// operationName, a bad enum value), and a name may be a megabyte long.
const quotedMax = 120

// cutQuoted cuts every double-quoted part of msg, and every run without a
// space, that is longer than quotedMax bytes, at a rune boundary, marking
// the cut with an ellipsis. What the server lists is separated by spaces
// and stays whole.
func cutQuoted(msg string) string {
	if len(msg) <= quotedMax {
		return msg
	}
	var b strings.Builder
	for i := 0; i < len(msg); {
		switch msg[i] {
		case ' ':
			b.WriteByte(' ')
			i++
		case '"':
			end := i + 1
			for end < len(msg) && msg[end] != '"' {
				if msg[end] == '\\' {
					end++
				}
				end++
			}
			end = min(end, len(msg))
			b.WriteByte('"')
			b.WriteString(cutText(msg[i+1 : end]))
			if end < len(msg) {
				b.WriteByte('"')
				end++
			}
			i = end
		default:
			end := i
			for end < len(msg) && msg[end] != ' ' && msg[end] != '"' {
				end++
			}
			b.WriteString(cutText(msg[i:end]))
			i = end
		}
	}
	return b.String()
}

// cutText is s cut to quotedMax bytes at a rune boundary, with an ellipsis.
func cutText(s string) string {
	if len(s) <= quotedMax {
		return s
	}
	cut := quotedMax
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

func setCode(e *gqlerror.Error, code string) {
	if e.Extensions == nil {
		e.Extensions = map[string]any{}
	}
	e.Extensions["code"] = code
}

// addErrorsAtIndexes reports each non-nil error of a list field's items
// at its item's index, beside the field's data (null at that index).
func addErrorsAtIndexes(ctx context.Context, errs []error) {
	for i, err := range errs {
		if err != nil {
			graphql.AddError(graphql.WithPathContext(ctx, graphql.NewPathWithIndex(i)), err)
		}
	}
}

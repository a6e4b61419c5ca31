package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"sessiongraph/ent"
	"sessiongraph/internal/access"
	"sessiongraph/internal/apperr"
)

// confine runs every tool call and resource read as the request's
// principal (so the engine confines it to the key's tenant, as it does a
// GraphQL operation), after the same argument checks as GraphQL's, once
// the server's one admission (access.Admission) has admitted it: a tool
// that writes as a mutation, a read as a query, each within its class's
// deadline. It gives each error its stable code, and names operations in
// its hints by their tools.
func confine(cfg Config, t *tools) mcp.Middleware {
	admission := cfg.Admission
	if admission == nil {
		admission = &access.Admission{}
	}
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method != "tools/call" && method != "resources/read" {
				return next(ctx, method, req)
			}
			p := principalOf(req)
			if p == nil {
				return refuse(cfg.Logger, ctx, method, access.ErrNoKeyHeader, t.name)
			}
			ctx = access.WithPrincipal(ctx, p)
			class, what := access.Query, "this read"
			if call, ok := req.(*mcp.CallToolRequest); ok {
				args, err := checkArguments(call.Params.Arguments, t.inputs[call.Params.Name])
				if err != nil {
					return refuse(cfg.Logger, ctx, method, err, t.name)
				}
				call.Params.Arguments = args
				if what = call.Params.Name; t.writes[what] {
					class = access.Mutation
				}
			}
			ctx, release, err := admission.Admit(ctx, p, class, what)
			if err != nil {
				return refuse(cfg.Logger, ctx, method, err, t.name)
			}
			defer release()
			res, err := next(ctx, method, req)
			if err != nil {
				return refuse(cfg.Logger, ctx, method, err, t.name)
			}
			if r, ok := res.(*mcp.CallToolResult); ok && r.IsError {
				return toolError(cfg.Logger, ctx, r.GetError(), t.name), nil
			}
			return res, nil
		}
	}
}

// principalOf is the principal the bearer check carried in the request.
func principalOf(req mcp.Request) *access.Principal {
	extra := req.GetExtra()
	if extra == nil || extra.TokenInfo == nil {
		return nil
	}
	p, _ := extra.TokenInfo.Extra[principalKey].(*access.Principal)
	return p
}

// refuse answers a failed call: a tool call as a tool error (the model
// reads it), a resource read as a JSON-RPC error with the code in its data.
// Its message names each operation it hints at by name.
func refuse(log *slog.Logger, ctx context.Context, method string, err error, name func(apperr.Operation) string) (mcp.Result, error) {
	var wire *jsonrpc.Error
	if errors.As(err, &wire) {
		return nil, err // the SDK's own: unknown tool, resource not found
	}
	if method == "tools/call" {
		return toolError(log, ctx, err, name), nil
	}
	e := present(log, ctx, err, name)
	data, _ := json.Marshal(e)
	return nil, &jsonrpc.Error{Code: jsonrpcCode(e.Code), Message: e.Code + ": " + e.Message, Data: data}
}

// jsonrpcCode is the JSON-RPC code of a refused resource read: invalid
// params for what the client got wrong, internal error for the rest.
func jsonrpcCode(code string) int64 {
	switch apperr.Code(code) {
	case apperr.Internal, apperr.Unavailable, apperr.Timeout, apperr.Cancelled:
		return jsonrpc.CodeInternalError
	}
	return jsonrpc.CodeInvalidParams
}

// Error is a refusal as a client sees it: the stable code it can switch on
// (the same as GraphQL's extensions.code), the message, and the input field
// at fault when there is one.
type Error struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	Field   string `json:"field,omitempty"`
	// RetryAfter, for a refusal over a limit (RATE_LIMITED), is how many
	// seconds to wait before sending again.
	RetryAfter int `json:"retryAfter,omitempty"`
}

// ErrorMeta is the key of a tool error's _meta that holds its Error.
const ErrorMeta = "sessiongraph/error"

// toolError is a tool call's error result: its text starts with the code,
// and its _meta holds {code, message, field} under ErrorMeta. Not in
// structuredContent: clients (the TypeScript SDK's among them) check that
// against the tool's output schema, error or not.
func toolError(log *slog.Logger, ctx context.Context, err error, name func(apperr.Operation) string) *mcp.CallToolResult {
	e := present(log, ctx, err, name)
	return &mcp.CallToolResult{
		Meta:    mcp.Meta{ErrorMeta: e},
		IsError: true,
		Content: []mcp.Content{&mcp.TextContent{Text: e.Code + ": " + e.Message}},
	}
}

// present gives an error its code, as the GraphQL endpoint does: our own
// errors keep their code and message, each operation it names given by
// name (a tool's); the SDK's refusals of arguments that do not fit a tool's
// schema are BAD_USER_INPUT; anything else is logged and reported as
// INTERNAL without details, which may name tables or SQL.
func present(log *slog.Logger, ctx context.Context, err error, name func(apperr.Operation) string) Error {
	var ae *apperr.Error
	var refused *access.Refusal
	switch {
	case err == nil:
		return Error{Code: string(apperr.Internal), Message: "internal error"}
	case errors.As(err, &refused):
		return Error{Code: string(refused.Err.Code), Message: refused.Err.Message, RetryAfter: refused.RetryAfterSeconds()}
	case errors.As(err, &ae):
		return Error{Code: string(ae.Code), Message: ae.MessageNaming(name), Field: ae.Field}
	case ent.IsValidationError(err):
		var ve *ent.ValidationError
		errors.As(err, &ve)
		return Error{Code: string(apperr.BadUserInput), Message: "invalid value for " + ve.Name + ": " + ve.Unwrap().Error(), Field: ve.Name}
	case ent.IsNotFound(err):
		return Error{Code: string(apperr.NotFound), Message: err.Error()}
	case errors.Is(err, context.DeadlineExceeded) || errors.Is(ctx.Err(), context.DeadlineExceeded):
		return Error{Code: string(apperr.Timeout), Message: "the request took too long and was cancelled"}
	case errors.Is(err, context.Canceled) || errors.Is(ctx.Err(), context.Canceled):
		return Error{Code: string(apperr.Cancelled), Message: "the request was cancelled before it finished; send it again"}
	case isArgumentsError(err):
		return Error{Code: string(apperr.BadUserInput), Message: err.Error()}
	}
	log.ErrorContext(ctx, "internal error", "error", err, "over", "mcp")
	return Error{Code: string(apperr.Internal), Message: "internal error"}
}

// isArgumentsError reports the SDK's refusal of arguments before the tool
// ran: they did not fit its input schema, or did not decode into it.
func isArgumentsError(err error) bool {
	var syntax *json.SyntaxError
	var typ *json.UnmarshalTypeError
	return strings.HasPrefix(err.Error(), `validating "arguments"`) ||
		errors.As(err, &syntax) || errors.As(err, &typ) || strings.HasPrefix(err.Error(), "json: ")
}

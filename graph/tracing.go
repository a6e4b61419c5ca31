package graph

import (
	"context"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"sessiongraph/internal/tracing"
)

// Tracing makes each GraphQL operation a span ("query SessionPage") and
// each root field a child span, so a trace shows which field spent the
// time; deeper fields are left out, as they would be thousands of spans.
type Tracing struct {
	Tracer trace.Tracer
}

// NewTracing traces with tp's tracer.
func NewTracing(tp trace.TracerProvider) Tracing {
	return Tracing{Tracer: tp.Tracer(tracing.Name)}
}

var _ interface {
	graphql.HandlerExtension
	graphql.ResponseInterceptor
	graphql.RootFieldInterceptor
} = Tracing{}

// ExtensionName implements graphql.HandlerExtension.
func (Tracing) ExtensionName() string { return "Tracing" }

// Validate implements graphql.HandlerExtension.
func (Tracing) Validate(graphql.ExecutableSchema) error { return nil }

// InterceptResponse spans one response: the whole of a query or mutation,
// or one event of a subscription.
func (t Tracing) InterceptResponse(ctx context.Context, next graphql.ResponseHandler) *graphql.Response {
	if !graphql.HasOperationContext(ctx) {
		return next(ctx)
	}
	oc := graphql.GetOperationContext(ctx)
	kind, name := "operation", oc.OperationName
	if oc.Operation != nil {
		kind = string(oc.Operation.Operation)
		if name == "" {
			name = oc.Operation.Name
		}
	}
	ctx, sp := t.Tracer.Start(ctx, kind+" "+name, trace.WithAttributes(
		attribute.String("graphql.operation.type", kind),
		attribute.String("graphql.operation.name", name),
	))
	defer sp.End()
	res := next(ctx)
	if res != nil && len(res.Errors) > 0 {
		sp.SetStatus(codes.Error, res.Errors[0].Message)
		if code, ok := res.Errors[0].Extensions["code"].(string); ok {
			sp.SetAttributes(attribute.String("graphql.error.code", code))
		}
	}
	return res
}

var rootTypes = map[ast.Operation]string{ast.Query: "Query", ast.Mutation: "Mutation", ast.Subscription: "Subscription"}

// InterceptRootField spans each root field.
func (t Tracing) InterceptRootField(ctx context.Context, next graphql.RootResolver) graphql.Marshaler {
	fc := graphql.GetRootFieldContext(ctx)
	if fc == nil {
		return next(ctx)
	}
	root := "Query"
	if oc := graphql.GetOperationContext(ctx); oc.Operation != nil {
		root = rootTypes[oc.Operation.Operation]
	}
	ctx, sp := t.Tracer.Start(ctx, root+"."+fc.Field.Name)
	defer sp.End()
	return next(ctx)
}

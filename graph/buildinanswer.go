package graph

import (
	"context"
	"encoding/json"

	"github.com/99designs/gqlgen/graphql"

	"sessiongraph/internal/apperr"
	"sessiongraph/internal/engine"
)

// checkBuildsInAnswer checks the options of every build the write's answer
// selects (its context fields) before the write runs: the builds are made
// after the commit, so an option no build can use must refuse the request
// while nothing is written yet.
func checkBuildsInAnswer(ctx context.Context) error {
	oc := graphql.GetOperationContext(ctx)
	for _, f := range graphql.CollectFieldsCtx(ctx, nil) {
		if f.Name != "context" {
			continue
		}
		raw, ok := f.ArgumentMap(oc.Variables)["options"]
		if !ok || raw == nil {
			continue
		}
		// GraphQL has checked the options' shape; the values are what is
		// left to check, as the build itself would.
		b, err := json.Marshal(raw)
		if err != nil {
			return apperr.Invalid("options", "the context options cannot be read: %v", err)
		}
		var in engine.ContextOptions
		if err := json.Unmarshal(b, &in); err != nil {
			return apperr.Invalid("options", "the context options cannot be read: %v", err)
		}
		if err := engine.CheckContextOptions(&in); err != nil {
			return err
		}
	}
	return nil
}

//go:build ignore

// entc generates the ent client and, through entgql, graph/schema/ent.graphql.
// Run it from the repository root (where gqlgen.yml lives): `make generate`.
package main

import (
	"log"

	"entgo.io/contrib/entgql"
	"entgo.io/ent/entc"
	"entgo.io/ent/entc/gen"
)

func main() {
	ex, err := entgql.NewExtension(
		entgql.WithConfigPath("./gqlgen.yml"),
		entgql.WithSchemaGenerator(),
		entgql.WithSchemaPath("./graph/schema/ent.graphql"),
		entgql.WithWhereInputs(true),
	)
	if err != nil {
		log.Fatalf("creating entgql extension: %v", err)
	}
	err = entc.Generate("./ent/schema", &gen.Config{
		Features: []gen.Feature{
			gen.FeatureVersionedMigration,
			gen.FeatureLock,
			gen.FeatureModifier,
			gen.FeatureExecQuery,
			gen.FeatureUpsert,
			gen.FeatureIntercept,
		},
	},
		entc.Extensions(ex),
		// After the extension, so that a template here replaces entgql's of
		// the same name (ent/template says which and why).
		func(cfg *gen.Config) error {
			cfg.Templates = append(cfg.Templates, gen.MustParse(
				gen.NewTemplate("sessiongraph").Funcs(entgql.TemplateFuncs).ParseDir("./ent/template")))
			return nil
		},
	)
	if err != nil {
		log.Fatalf("running ent codegen: %v", err)
	}
}

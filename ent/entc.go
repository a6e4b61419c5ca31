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
		// Our own templates (adopt.tmpl, gql_compiled_page.tmpl). entgql's
		// come patched by patches/ (`make generate` runs this with their
		// overlay).
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

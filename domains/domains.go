// Package domains reads domain files: the entity types of a domain, in YAML.
// kitchen.yaml, the kitchen domain, is embedded as the default.
package domains

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"os"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"gopkg.in/yaml.v3"

	"sessiongraph/ent/schema/schematype"
	"sessiongraph/internal/registry"
)

//go:embed kitchen.yaml
var kitchen []byte

// Schema is the JSON Schema of a domain file (domain.schema.json): every
// key, its type and what it means. Parse checks a file against it first.
//
//go:embed domain.schema.json
var Schema []byte

// schema is Schema compiled once.
var schema = sync.OnceValues(func() (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(Schema))
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("domain.schema.json", doc); err != nil {
		return nil, err
	}
	return c.Compile("domain.schema.json")
})

// validate checks a domain file's YAML against Schema, as the JSON it
// stands for.
func validate(b []byte) error {
	var doc any
	if err := yaml.Unmarshal(b, &doc); err != nil {
		return fmt.Errorf("domain file: %w", err)
	}
	j, err := json.Marshal(doc)
	if err != nil {
		return fmt.Errorf("domain file: %w", err)
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(j))
	if err != nil {
		return fmt.Errorf("domain file: %w", err)
	}
	sch, err := schema()
	if err != nil {
		return fmt.Errorf("domain.schema.json: %w", err)
	}
	if err := sch.Validate(inst); err != nil {
		return fmt.Errorf("domain file does not match domain.schema.json (docs/domains.md): %w", err)
	}
	return nil
}

// Kitchen returns the embedded kitchen domain.
func Kitchen() (*registry.Domain, error) { return Parse(kitchen) }

// Load reads a domain file.
func Load(path string) (*registry.Domain, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	d, err := Parse(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return d, nil
}

type file struct {
	Domain      string       `yaml:"domain"`
	EntityTypes []entityType `yaml:"entityTypes"`
}

type entityType struct {
	Name            string                      `yaml:"name"`
	Table           string                      `yaml:"table"`
	IDField         string                      `yaml:"idField"`
	LabelField      string                      `yaml:"labelField"`
	LabelTemplate   string                      `yaml:"labelTemplate"`
	FKFields        []schematype.FKField        `yaml:"fkFields"`
	NestedRelations []schematype.NestedRelation `yaml:"nestedRelations"`
	DetailFields    []string                    `yaml:"detailFields"`
	DataLegend      string                      `yaml:"dataLegend"`
	ContentMarkers  []string                    `yaml:"contentMarkers"`
	Condensed       *bool                       `yaml:"condensed"`
}

// Parse reads a domain from YAML after checking it against Schema; unknown
// keys are errors, so a typo does not silently drop a setting.
func Parse(b []byte) (*registry.Domain, error) {
	if err := validate(b); err != nil {
		return nil, err
	}
	var f file
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("domain file: %w", err)
	}
	if f.Domain == "" {
		return nil, fmt.Errorf("domain file: the domain key is missing")
	}
	types := make([]registry.EntityType, len(f.EntityTypes))
	for i, t := range f.EntityTypes {
		types[i] = registry.EntityType{
			Name: t.Name, Table: t.Table, IDField: t.IDField,
			LabelField: t.LabelField, LabelTemplate: t.LabelTemplate,
			FKFields: t.FKFields, NestedRelations: t.NestedRelations, DetailFields: t.DetailFields,
			DataLegend: t.DataLegend, ContentMarkers: t.ContentMarkers,
			Condensed: t.Condensed == nil || *t.Condensed,
		}
	}
	d, err := registry.NewDomain(f.Domain, types)
	if err != nil {
		return nil, err
	}
	return d, d.Check()
}

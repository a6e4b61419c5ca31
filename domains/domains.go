// Package domains reads domain files: the entity types of a domain, in YAML.
// kitchen.yaml, the seeds' domain, is embedded as the default.
package domains

import (
	"bytes"
	_ "embed"
	"fmt"
	"os"

	"gopkg.in/yaml.v3"

	"sessiongraph/ent/schema/schematype"
	"sessiongraph/internal/registry"
)

//go:embed kitchen.yaml
var kitchen []byte

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

// Parse reads a domain from YAML; unknown keys are errors, so a typo does
// not silently drop a setting.
func Parse(b []byte) (*registry.Domain, error) {
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

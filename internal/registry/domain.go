package registry

import (
	"fmt"
	"regexp"
	"strings"

	"sessiongraph/ent/schema/schematype"
	"sessiongraph/internal/apperr"
)

// EntityType is one kind of entity a domain knows (the seeds'
// EntityDefinition).
type EntityType struct {
	Name            string
	Table           string
	IDField         string
	LabelField      string
	LabelTemplate   string
	FKFields        []schematype.FKField
	NestedRelations []schematype.NestedRelation
	// DetailFields turn on detail tracking: a record carrying all of them is
	// a full read, one missing any is a summary.
	DetailFields   []string
	DataLegend     string
	ContentMarkers []string
	Condensed      bool
}

// Domain is the set of entity types of one domain, such as kitchen.
type Domain struct {
	Name    string
	Types   []EntityType
	byName  map[string]*EntityType
	byTable map[string]*EntityType
}

// NewDomain indexes types; it fails on a name or table used twice, or on a
// name that would make ambiguous refs.
func NewDomain(name string, types []EntityType) (*Domain, error) {
	d := &Domain{Name: name, Types: types, byName: map[string]*EntityType{}, byTable: map[string]*EntityType{}}
	for i := range d.Types {
		t := &d.Types[i]
		if !ValidTypeName(t.Name) {
			return nil, fmt.Errorf("entity type %q: a name is lower-case words joined by underscores, not starting with gen_ and not ending in a number", t.Name)
		}
		if t.Table == "" {
			return nil, fmt.Errorf("entity type %q has no table", t.Name)
		}
		if t.IDField == "" {
			t.IDField = "id"
		}
		if d.byName[t.Name] != nil || d.byTable[t.Table] != nil {
			return nil, fmt.Errorf("entity type %q or its table %q appears twice", t.Name, t.Table)
		}
		d.byName[t.Name], d.byTable[t.Table] = t, t
	}
	return d, nil
}

// Check verifies that every FK and nested relation names a type of the domain.
func (d *Domain) Check() error {
	for _, t := range d.Types {
		for _, fk := range t.FKFields {
			if d.byName[fk.TargetType] == nil || fk.Field == "" || fk.Table == "" || fk.NameColumn == "" {
				return fmt.Errorf("entity type %q: FK field %q needs a field, a known target type (got %q), a table and a name column", t.Name, fk.Field, fk.TargetType)
			}
		}
		for _, n := range t.NestedRelations {
			if d.byName[n.EntityType] == nil || n.Field == "" {
				return fmt.Errorf("entity type %q: nested relation %q needs a field and a known entity type (got %q)", t.Name, n.Field, n.EntityType)
			}
		}
	}
	return nil
}

// Type returns the entity type with the name.
func (d *Domain) Type(name string) (*EntityType, error) {
	if t := d.byName[name]; t != nil {
		return t, nil
	}
	return nil, unknownType("entity type", name, d)
}

// TypeOfTable returns the entity type stored in table.
func (d *Domain) TypeOfTable(table string) (*EntityType, error) {
	if t := d.byTable[table]; t != nil {
		return t, nil
	}
	return nil, unknownType("table", table, d)
}

func unknownType(what, name string, d *Domain) error {
	known := make([]string, 0, len(d.Types))
	for _, t := range d.Types {
		if what == "table" {
			known = append(known, t.Table)
		} else {
			known = append(known, t.Name)
		}
	}
	return apperr.New(apperr.UnknownEntityType, "domain %q has no %s %q; it knows %s", d.Name, what, name, strings.Join(known, ", "))
}

var placeholder = regexp.MustCompile(`\{([A-Za-z0-9_]+)\}`)

// Label computes a record's human label: the template filled from its fields
// (meal_plan: "{date} {meal_type}"), else its label field, else "".
func (t *EntityType) Label(record map[string]any) string {
	if t.LabelTemplate != "" {
		filled := placeholder.ReplaceAllStringFunc(t.LabelTemplate, func(m string) string {
			v, ok := record[m[1:len(m)-1]]
			if !ok || v == nil {
				return ""
			}
			return fmt.Sprint(v)
		})
		return strings.Join(strings.Fields(filled), " ")
	}
	if t.LabelField != "" {
		if v, ok := record[t.LabelField].(string); ok {
			return v
		}
	}
	return ""
}

// Detail levels of a read (seed 000's detail tracking).
const (
	DetailFull    = "FULL"
	DetailSummary = "SUMMARY"
)

// DetailLevel says whether a record is a full or a summary read, or "" when
// the type does not track detail.
func (t *EntityType) DetailLevel(record map[string]any) string {
	if len(t.DetailFields) == 0 {
		return ""
	}
	for _, f := range t.DetailFields {
		if v, ok := record[f]; !ok || v == nil {
			return DetailSummary
		}
	}
	return DetailFull
}

// fk returns the FK definition of a field, if the field is one.
func (t *EntityType) fk(field string) *schematype.FKField {
	for i := range t.FKFields {
		if t.FKFields[i].Field == field {
			return &t.FKFields[i]
		}
	}
	return nil
}

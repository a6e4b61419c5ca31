package registry

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"sessiongraph/ent/schema/schematype"
	"sessiongraph/internal/apperr"
)

// EntityType is one kind of entity a domain knows: its table, ref prefix,
// label and relations.
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

// MaxLabelBytes bounds a computed label: the engine cuts a ref's label to
// it, so rendering past it would be work thrown away.
const MaxLabelBytes = 1000

// valueScanBytes bounds the bytes of one field value a rendering reads, so
// that a huge value of mostly spaces (which add nothing to a label) costs
// no more than a short one.
const valueScanBytes = 4 * MaxLabelBytes

// Label computes a record's human label: the template filled from its fields
// (meal_plan: "{date} {meal_type}"), else its label field, else "". A
// template's placeholders are filled with the fields' text, numbers or
// booleans (an object or a list names nothing and fills nothing), runs of
// spaces become one, and rendering stops just past MaxLabelBytes: its cost
// is bounded by the template, not by the record, since it runs for every
// record of a read while the session is locked.
func (t *EntityType) Label(record map[string]any) string {
	if t.LabelTemplate != "" {
		var w labelWriter
		tmpl := t.LabelTemplate
		for i := 0; i < len(tmpl) && !w.full(); {
			name, n := placeholderAt(tmpl, i)
			if n == 0 {
				w.write(tmpl[i : i+1])
				i++
				continue
			}
			w.value(record[name])
			i += n
		}
		return w.b.String()
	}
	if t.LabelField != "" {
		if v, ok := record[t.LabelField].(string); ok {
			return v
		}
	}
	return ""
}

// placeholderAt returns the field name of the placeholder ({name}, name of
// letters, digits and _) that starts at s[i], and its length; 0 when none
// does.
func placeholderAt(s string, i int) (string, int) {
	if s[i] != '{' {
		return "", 0
	}
	j := i + 1
	for j < len(s) && (s[j] == '_' || 'a' <= s[j] && s[j] <= 'z' || 'A' <= s[j] && s[j] <= 'Z' || '0' <= s[j] && s[j] <= '9') {
		j++
	}
	if j == i+1 || j == len(s) || s[j] != '}' {
		return "", 0
	}
	return s[i+1 : j], j + 1 - i
}

// Placeholders counts the placeholders of a label template.
func Placeholders(tmpl string) int {
	n := 0
	for i := 0; i < len(tmpl); i++ {
		if _, l := placeholderAt(tmpl, i); l > 0 {
			n++
			i += l - 1
		}
	}
	return n
}

// labelWriter writes a label's text with runs of white space made one
// space and trimmed at both ends (what strings.Fields and a join do), up to
// just past MaxLabelBytes.
type labelWriter struct {
	b     strings.Builder
	space bool
}

func (w *labelWriter) full() bool { return w.b.Len() > MaxLabelBytes+utf8.UTFMax }

// write writes s, reading at most valueScanBytes of it.
func (w *labelWriter) write(s string) {
	for i, r := range s {
		if w.full() || i >= valueScanBytes {
			return
		}
		if unicode.IsSpace(r) {
			w.space = w.b.Len() > 0
			continue
		}
		if w.space {
			w.b.WriteByte(' ')
			w.space = false
		}
		w.b.WriteRune(r)
	}
}

// value writes a field's value: text as it is, a number or a boolean as Go
// prints it, anything else not at all.
func (w *labelWriter) value(v any) {
	switch v := v.(type) {
	case string:
		w.write(v)
	case bool, float64, float32, int, int64, int32, json.Number, uint, uint64:
		w.write(fmt.Sprint(v))
	}
}

// Detail levels of a read: a summary read or a full one.
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

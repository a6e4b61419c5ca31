package registry

import (
	"fmt"

	"github.com/google/uuid"

	"sessiongraph/ent/schema/schematype"
	"sessiongraph/internal/apperr"
)

// Read registers the records the runtime read from t's table (or, with
// action ActionUpdated, wrote to it) and returns them as the LLM should see
// them (read output translation):
//   - each record's id becomes its ref, reused when the entity is known;
//   - its label and detail level are recorded;
//   - an FK field holding a known entity becomes that ref plus
//     _<field>_label; an unknown one is registered as linked and queued for
//     enrichment;
//   - nested relations are translated the same way, recursively;
//   - any other UUID left in the record is replaced by its ref, or by
//     "[unregistered id]", so that no UUID reaches a prompt.
func (r *Registry) Read(d *Domain, t *EntityType, records []map[string]any, action string, step *int) ([]map[string]any, error) {
	out := make([]map[string]any, len(records))
	for i, rec := range records {
		if err := r.stop(); err != nil {
			return nil, err
		}
		tr, err := r.readRecord(d, t, rec, action, step, fmt.Sprintf("records[%d]", i))
		if err != nil {
			return nil, err
		}
		out[i] = tr
	}
	return out, nil
}

func (r *Registry) readRecord(d *Domain, t *EntityType, rec map[string]any, action string, step *int, path string) (map[string]any, error) {
	id, err := recordID(t, rec, path)
	if err != nil {
		return nil, err
	}
	e, err := r.touch(t, id, action, step)
	if err != nil {
		return nil, err
	}
	r.setLabel(e, t.Label(rec))
	if level := t.DetailLevel(rec); level != "" {
		e.DetailLevel = level
		if level == DetailFull {
			turn := r.Turn
			e.FullTurn = &turn
		}
	}

	out := make(map[string]any, len(rec)+len(t.FKFields))
	for _, field := range sortedKeys(rec) {
		v := rec[field]
		switch {
		case field == t.IDField:
			out[field] = e.Ref
		case t.fk(field) != nil:
			if err := r.readFK(d, t.fk(field), v, out, step); err != nil {
				return nil, err
			}
		case nestedType(d, t, field) != nil:
			children, err := r.readNested(d, nestedType(d, t, field), v, action, step, path+"."+field)
			if err != nil {
				return nil, err
			}
			out[field] = children
		default:
			out[field] = r.scrub(v)
		}
	}
	return out, nil
}

// recordID returns the UUID in a record's id field.
func recordID(t *EntityType, rec map[string]any, path string) (uuid.UUID, error) {
	raw, ok := rec[t.IDField]
	if !ok || raw == nil {
		e := apperr.New(apperr.InvalidRecord, "%s has no %q field: every %s record needs its id", path, t.IDField, t.Name)
		e.Field = path + "." + t.IDField
		return uuid.Nil, e
	}
	s, _ := raw.(string)
	id, ok := ParseUUID(s)
	if !ok {
		return uuid.Nil, apperr.New(apperr.InvalidID, "%s.%s is %v, not a UUID", path, t.IDField, raw)
	}
	return id, nil
}

// readFK translates one FK field (a UUID, or a list of them) into out.
func (r *Registry) readFK(d *Domain, fk *schematype.FKField, v any, out map[string]any, step *int) error {
	switch val := v.(type) {
	case string:
		ref, label, err := r.linkFK(d, fk, val, step)
		if err != nil {
			return err
		}
		out[fk.Field] = ref
		if label != "" {
			out["_"+fk.Field+"_label"] = label
		}
	case []any:
		refs := make([]any, len(val))
		for i, item := range val {
			s, _ := item.(string)
			ref, _, err := r.linkFK(d, fk, s, step)
			if err != nil {
				return err
			}
			refs[i] = ref
		}
		out[fk.Field] = refs
	default:
		out[fk.Field] = r.scrub(v)
	}
	return nil
}

// linkFK returns the ref of the entity an FK value points at, registering it
// as linked and queueing it for enrichment when it is new (lazy FK
// registration). A value that is not a UUID passes through scrubbed.
func (r *Registry) linkFK(d *Domain, fk *schematype.FKField, v string, step *int) (ref, label string, err error) {
	id, ok := ParseUUID(v)
	if !ok {
		return r.scrub(v).(string), "", nil
	}
	if e, known := r.byID[id]; known {
		return e.Ref, e.Label, nil
	}
	target, err := d.Type(fk.TargetType)
	if err != nil {
		return "", "", err
	}
	e := r.register(target.Name, id, ActionLinked, step)
	table, col := fk.Table, fk.NameColumn
	e.EnrichTable, e.EnrichNameColumn = &table, &col
	return e.Ref, "", nil
}

// readNested translates a list of child records carried inside a parent.
func (r *Registry) readNested(d *Domain, t *EntityType, v any, action string, step *int, path string) (any, error) {
	list, ok := v.([]any)
	if !ok {
		return r.scrub(v), nil
	}
	out := make([]any, len(list))
	for i, item := range list {
		child, ok := item.(map[string]any)
		if !ok {
			out[i] = r.scrub(item)
			continue
		}
		tr, err := r.readRecord(d, t, child, action, step, fmt.Sprintf("%s[%d]", path, i))
		if err != nil {
			return nil, err
		}
		out[i] = tr
	}
	return out, nil
}

func nestedType(d *Domain, t *EntityType, field string) *EntityType {
	for _, n := range t.NestedRelations {
		if n.Field == field {
			child, _ := d.Type(n.EntityType)
			return child
		}
	}
	return nil
}

// Unregistered stands in for a UUID that no ref of the session names.
const Unregistered = "[unregistered id]"

// scrub replaces every UUID inside v with its ref, or Unregistered.
func (r *Registry) scrub(v any) any {
	switch val := v.(type) {
	case string:
		if !ContainsUUID(val) {
			return val
		}
		return replaceUUIDs(val, func(s string) string {
			if id, err := uuid.Parse(s); err == nil {
				if e, ok := r.byID[id]; ok {
					return e.Ref
				}
			}
			return Unregistered
		})
	case []any:
		out := make([]any, len(val))
		for i, item := range val {
			out[i] = r.scrub(item)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(val))
		for k, item := range val {
			out[r.scrub(k).(string)] = r.scrub(item)
		}
		return out
	case []string:
		out := make([]any, len(val))
		for i, item := range val {
			out[i] = r.scrub(item)
		}
		return out
	case map[string]string:
		out := make(map[string]any, len(val))
		for k, item := range val {
			out[r.scrub(k).(string)] = r.scrub(item)
		}
		return out
	case []map[string]any:
		out := make([]any, len(val))
		for i, item := range val {
			out[i] = r.scrub(item)
		}
		return out
	}
	return v
}

// UUIDsIn returns every UUID that appears anywhere in v, so the engine can
// load the entries a read needs in one query.
func UUIDsIn(v any) []uuid.UUID {
	seen := map[uuid.UUID]bool{}
	var out []uuid.UUID
	eachString(v, func(s string) {
		for at := nextUUID(s, 0); at >= 0; at = nextUUID(s, at+uuidLen) {
			if id, err := uuid.Parse(s[at : at+uuidLen]); err == nil && !seen[id] {
				seen[id] = true
				out = append(out, id)
			}
		}
	})
	return out
}

// RefsIn returns the ref-shaped strings anywhere in v.
func RefsIn(v any) []string {
	var out []string
	eachString(v, func(s string) {
		if IsRef(s) {
			out = append(out, s)
		}
	})
	return out
}

// eachString calls f with every string in a JSON-shaped value, map keys
// included.
func eachString(v any, f func(string)) {
	switch val := v.(type) {
	case string:
		f(val)
	case []any:
		for _, item := range val {
			eachString(item, f)
		}
	case []map[string]any:
		for _, item := range val {
			eachString(item, f)
		}
	case map[string]any:
		for k, item := range val {
			f(k)
			eachString(item, f)
		}
	}
}

// AddEnrichedLabels adds _<field>_label to every FK field of translated
// records whose ref now has a label, nested relations included (enriched
// labels, added after enrichment so the first read already shows
// the names).
func (r *Registry) AddEnrichedLabels(d *Domain, t *EntityType, records []map[string]any) []map[string]any {
	out := make([]map[string]any, len(records))
	for i, rec := range records {
		out[i] = r.labelRecord(d, t, rec)
	}
	return out
}

func (r *Registry) labelRecord(d *Domain, t *EntityType, rec map[string]any) map[string]any {
	out := make(map[string]any, len(rec))
	for k, v := range rec {
		out[k] = v
	}
	for _, fk := range t.FKFields {
		if ref, ok := rec[fk.Field].(string); ok {
			if e, known := r.byRef[ref]; known && e.Label != "" {
				out["_"+fk.Field+"_label"] = e.Label
			}
		}
	}
	for _, n := range t.NestedRelations {
		child := nestedType(d, t, n.Field)
		list, ok := rec[n.Field].([]any)
		if child == nil || !ok {
			continue
		}
		items := make([]any, len(list))
		for i, item := range list {
			if m, ok := item.(map[string]any); ok {
				items[i] = r.labelRecord(d, child, m)
			} else {
				items[i] = item
			}
		}
		out[n.Field] = items
	}
	return out
}

package registry

import (
	"fmt"
	"maps"
	"slices"

	"sessiongraph/internal/apperr"
)

// Filter is one condition of a runtime query: field op value.
type Filter struct {
	Field string
	Op    string
	Value any
}

// Translated filters, ready for the database.
type TranslatedFilters struct {
	Filters []Filter
	// Pending lists gen refs that have no entity yet; they were taken out of
	// the filters and are answered from their artifacts instead (read
	// rerouting).
	Pending []string
}

// TranslateFilters turns refs into UUIDs in the id and FK fields of t's
// filters, single values and lists alike.
// UUIDs pass through; an unknown ref is REF_NOT_FOUND, a ref of another type
// is BAD_USER_INPUT. A pending gen ref in the id field is taken out and
// listed in Pending (read rerouting); when no id is left the filter becomes
// `in []`, which matches no row, so running the rest is never wider than
// asked. A pending gen ref in an FK field is REF_PENDING: nothing in the
// database points at an unsaved entity.
func (r *Registry) TranslateFilters(t *EntityType, filters []Filter) (TranslatedFilters, error) {
	var out TranslatedFilters
	for i, f := range filters {
		want := t.Name
		if fk := t.fk(f.Field); fk != nil {
			want = fk.TargetType
		} else if f.Field != t.IDField {
			out.Filters = append(out.Filters, f)
			continue
		}
		isID := f.Field == t.IDField
		path := fmt.Sprintf("filters[%d].value", i)
		values, list := f.Value.([]any)
		if !list {
			values = []any{f.Value}
		}
		ids := make([]any, 0, len(values))
		for j, item := range values {
			s, _ := item.(string)
			p := path
			if list {
				p = fmt.Sprintf("%s[%d]", path, j)
			}
			id, pending, err := r.entityID(s, p, want)
			if err != nil {
				return TranslatedFilters{}, err
			}
			if pending && !isID {
				return TranslatedFilters{}, pendingError(p, s)
			}
			if pending {
				out.Pending = append(out.Pending, s)
				continue
			}
			ids = append(ids, id)
		}
		switch {
		case len(ids) == 0:
			f.Op, f.Value = "in", []any{}
		case list:
			f.Value = ids
		default:
			f.Value = ids[0]
		}
		out.Filters = append(out.Filters, f)
	}
	return out, nil
}

// entityID returns the UUID a ref (or UUID) names; pending is true for a
// generated ref that is not saved yet. want is the entity type the field
// holds.
func (r *Registry) entityID(v, path, want string) (id string, pending bool, err error) {
	if u, ok := ParseUUID(v); ok {
		return u.String(), false, nil
	}
	if !IsRef(v) {
		return "", false, apperr.New(apperr.BadUserInput, "%s is %q, which is neither a ref (recipe_1) nor a UUID", path, v)
	}
	e, err := r.lookup(v, path)
	if err != nil {
		return "", false, err
	}
	if e.EntityType != want {
		return "", false, apperr.New(apperr.BadUserInput, "%s is %s, a %s; this field holds a %s", path, v, e.EntityType, want)
	}
	if e.EntityID == nil {
		return "", true, nil
	}
	return e.EntityID.String(), false, nil
}

func pendingError(path, ref string) error {
	return apperr.New(apperr.RefPending, "%s is %s, which is generated but not saved yet: save it (%s) before records that point at it", path, ref, apperr.OpRecordCreated)
}

// TranslatedPayload is a record ready to write to the database.
type TranslatedPayload struct {
	Data map[string]any
	// Saves names the generated ref the payload's id field held: the record
	// being created is that artifact, so pass it to recordCreated. Nil when
	// it held none (the API's null, not an empty string).
	Saves *string
}

// TranslatePayload turns refs into UUIDs in the id, FK and nested fields of a
// record the runtime is about to create or update (payload
// translation). A gen ref in an FK field that is not saved yet is
// REF_PENDING: save it first.
func (r *Registry) TranslatePayload(d *Domain, t *EntityType, data map[string]any) (TranslatedPayload, error) {
	var out TranslatedPayload
	var saves string
	var err error
	out.Data, err = r.payload(d, t, data, "data", &saves)
	if saves != "" {
		out.Saves = &saves
	}
	return out, err
}

func (r *Registry) payload(d *Domain, t *EntityType, data map[string]any, path string, saves *string) (map[string]any, error) {
	out := maps.Clone(data)
	for _, field := range slices.Sorted(maps.Keys(data)) {
		v := data[field]
		switch {
		case field == t.IDField:
			s, _ := v.(string)
			id, pending, err := r.entityID(s, path+"."+field, t.Name)
			if err != nil {
				return nil, err
			}
			if pending {
				if path == "data" {
					*saves = s
				}
				delete(out, field) // the database assigns the new entity's id
				continue
			}
			out[field] = id
		case t.fk(field) != nil:
			tr, err := r.payloadFK(v, path+"."+field, t.fk(field).TargetType)
			if err != nil {
				return nil, err
			}
			out[field] = tr
		case nestedType(d, t, field) != nil:
			list, ok := v.([]any)
			if !ok {
				continue
			}
			child := nestedType(d, t, field)
			items := make([]any, len(list))
			for i, item := range list {
				m, ok := item.(map[string]any)
				if !ok {
					items[i] = item
					continue
				}
				tr, err := r.payload(d, child, m, fmt.Sprintf("%s.%s[%d]", path, field, i), saves)
				if err != nil {
					return nil, err
				}
				items[i] = tr
			}
			out[field] = items
		}
	}
	return out, nil
}

func (r *Registry) payloadFK(v any, path, want string) (any, error) {
	one := func(s, path string) (any, error) {
		id, pending, err := r.entityID(s, path, want)
		if err != nil {
			return nil, err
		}
		if pending {
			return nil, pendingError(path, s)
		}
		return id, nil
	}
	switch val := v.(type) {
	case string:
		return one(val, path)
	case []any:
		out := make([]any, len(val))
		for i, item := range val {
			s, _ := item.(string)
			id, err := one(s, fmt.Sprintf("%s[%d]", path, i))
			if err != nil {
				return nil, err
			}
			out[i] = id
		}
		return out, nil
	}
	return v, nil
}

// ReadRefs answers reads of generated refs from their artifacts, in the
// shape a database read returns (read rerouting): the content
// with the ref in the id field. Refs whose data lives in the database come
// back in fromDatabase: database entities, and generated ones once saved
// (from the save on, the row is the truth, as TranslateFilters gives its
// UUID; the artifact kept until the turn ends is for linked records, not
// for reads). A generated entity cleared without being saved exists only
// in the archive, so it is answered from there.
func (r *Registry) ReadRefs(d *Domain, refs []string) (records []map[string]any, fromDatabase []string, err error) {
	for i, ref := range refs {
		e, err := r.lookup(ref, fmt.Sprintf("refs[%d]", i))
		if err != nil {
			return nil, nil, err
		}
		if e.Artifact == nil || e.EntityID != nil {
			fromDatabase = append(fromDatabase, ref)
			continue
		}
		rec, err := r.AsRecord(d, e)
		if err != nil {
			return nil, nil, err
		}
		records = append(records, rec)
	}
	return records, fromDatabase, nil
}

// AsRecord is a generated entry's content as a database read would return
// it: scrubbed of UUIDs, with the ref in the type's id field.
func (r *Registry) AsRecord(d *Domain, e *Entry) (map[string]any, error) {
	t, err := d.Type(e.EntityType)
	if err != nil {
		return nil, err
	}
	rec, _ := r.scrub(e.Artifact.Content).(map[string]any)
	if rec == nil {
		rec = map[string]any{}
	}
	rec[t.IDField] = e.Ref
	return rec, nil
}

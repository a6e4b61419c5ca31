package engine

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"time"

	"entgo.io/ent/dialect/sql"

	"sessiongraph/ent"
	"sessiongraph/ent/entitytype"
	"sessiongraph/internal/apperr"
	"sessiongraph/internal/registry"
)

// Domains reads and defines the domains' entity types, keeping each
// domain in memory: every registry write needs it, and it changes rarely.
type Domains struct {
	client *ent.Client
	// ttl bounds how long a domain another replica may have changed is used.
	ttl     time.Duration
	mu      sync.Mutex
	entries map[string]cachedDomain
}

type cachedDomain struct {
	domain *registry.Domain
	loaded time.Time
}

// Domain returns a domain's entity types, from the cache when fresh.
func (ds *Domains) Domain(ctx context.Context, name string) (*registry.Domain, error) {
	return ds.domain(ctx, ds.client.EntityType, name)
}

// domain loads through types, which inside a write must be the
// transaction's client: a write that waited for a second pool connection
// while holding its first could deadlock the pool under load.
func (ds *Domains) domain(ctx context.Context, types *ent.EntityTypeClient, name string) (*registry.Domain, error) {
	ds.mu.Lock()
	c, ok := ds.entries[name]
	ds.mu.Unlock()
	if ok && time.Since(c.loaded) < ds.ttl {
		return c.domain, nil
	}
	rows, err := types.Query().Where(entitytype.Domain(name)).Order(entitytype.ByName()).All(ctx)
	if err != nil {
		return nil, err
	}
	ets := make([]registry.EntityType, len(rows))
	for i, r := range rows {
		ets[i] = toRegistryType(r)
	}
	d, err := registry.NewDomain(name, ets)
	if err != nil {
		return nil, err
	}
	if ok && reflect.DeepEqual(d.Types, c.domain.Types) {
		// Unchanged: keep the value, which the remembered builds are keyed
		// by, so that a build after the refresh can still be patched.
		d = c.domain
	}
	ds.mu.Lock()
	ds.entries[name] = cachedDomain{domain: d, loaded: time.Now()}
	ds.mu.Unlock()
	return d, nil
}

// requireDomain answers UNKNOWN_DOMAIN, naming the domains there are, for a
// domain without entity types: a session of it could read nothing.
// It asks the database rather than the domain cache, which would keep an
// entry for every name a client tried.
func (ds *Domains) requireDomain(ctx context.Context, name string) error {
	exists, err := ds.client.EntityType.Query().Where(entitytype.Domain(name)).Exist(ctx)
	if err != nil || exists {
		return err
	}
	known, err := ds.client.EntityType.Query().Unique(true).Order(entitytype.ByDomain()).Select(entitytype.FieldDomain).Strings(ctx)
	if err != nil {
		return err
	}
	ae := apperr.New(apperr.UnknownDomain, "domain %q has no entity types: load its domain file (-domain-file) or define them (%s) first; the domains are %s",
		name, apperr.OpUpsertEntityType, strings.Join(known, ", "))
	ae.Field = "domain"
	return ae
}

func (ds *Domains) forgetDomain(name string) {
	ds.mu.Lock()
	delete(ds.entries, name)
	ds.mu.Unlock()
}

// EntityTypes lists a domain's entity types.
func (ds *Domains) EntityTypes(ctx context.Context, domain string) ([]*ent.EntityType, error) {
	return ds.client.EntityType.Query().Where(entitytype.Domain(domain)).Order(entitytype.ByName()).All(ctx)
}

// UpsertEntityTypeInput defines or redefines one entity type of a domain.
type UpsertEntityTypeInput struct {
	Domain string
	registry.EntityType
}

// UpsertEntityType creates or replaces an entity type, after checking that
// the domain it leaves behind is consistent (FK targets and nested types
// exist, names make unambiguous refs).
func (ds *Domains) UpsertEntityType(ctx context.Context, in UpsertEntityTypeInput) (*ent.EntityType, error) {
	if err := requireText("domain", in.Domain, 200); err != nil {
		return nil, err
	}
	if err := checkLabelTemplate(in.LabelTemplate); err != nil {
		return nil, err
	}
	current, err := ds.Domain(ctx, in.Domain)
	if err != nil {
		return nil, err
	}
	types := []registry.EntityType{in.EntityType}
	for _, t := range current.Types {
		if t.Name != in.Name && t.Table == in.Table {
			return nil, tableTaken(in.Domain, in.Table, t.Name)
		}
		if t.Name != in.Name {
			types = append(types, t)
		}
	}
	d, err := registry.NewDomain(in.Domain, types)
	if err == nil {
		err = d.Check()
	}
	if err != nil {
		return nil, apperr.Invalid("input", "%v", err)
	}
	err = ds.upsertTypes(ctx, d.Name, d.Types[:1])
	ds.forgetDomain(in.Domain)
	if ent.IsConstraintError(err) {
		// Another replica mapped the table since this one read the domain.
		return nil, tableTaken(in.Domain, in.Table, "")
	}
	if err != nil {
		return nil, err
	}
	return ds.client.EntityType.Query().Where(entitytype.Domain(in.Domain), entitytype.Name(in.Name)).Only(ctx)
}

// checkLabelTemplate refuses a label template over the size or placeholder
// limit: every record of every read renders it.
func checkLabelTemplate(tmpl string) error {
	if len(tmpl) > MaxLabelTemplateBytes {
		return apperr.TooLarge("labelTemplate", "the label template is %d bytes; at most %d are allowed: a label is a short name", len(tmpl), MaxLabelTemplateBytes)
	}
	if n := registry.Placeholders(tmpl); n > MaxLabelPlaceholders {
		return apperr.TooLarge("labelTemplate", "the label template has %d placeholders; at most %d are allowed", n, MaxLabelPlaceholders)
	}
	return nil
}

// tableTaken answers an upsert of a type whose table another type of the
// domain maps already (other, or "" when another replica mapped it since
// this one read the domain): each table holds one entity type, so that a
// read by table knows what it reads.
func tableTaken(domain, table, other string) error {
	holder := "another entity type"
	if other != "" {
		holder = fmt.Sprintf("entity type %q", other)
	}
	e := apperr.New(apperr.Conflict, "table %q already holds %s of domain %q, and a table holds one entity type: redefine that type (same name), or give this one its own table",
		table, holder, domain)
	e.Field = "table"
	return e
}

// SyncDomain writes a domain file's entity types to the database at start;
// types the file does not name are left as they are.
func (ds *Domains) SyncDomain(ctx context.Context, d *registry.Domain) error {
	if err := ds.upsertTypes(ctx, d.Name, d.Types); err != nil {
		return err
	}
	ds.forgetDomain(d.Name)
	return nil
}

func (ds *Domains) upsertTypes(ctx context.Context, domain string, types []registry.EntityType) error {
	bulk := make([]*ent.EntityTypeCreate, len(types))
	for i, t := range types {
		bulk[i] = ds.client.EntityType.Create().SetDomain(domain).SetName(t.Name).SetTableName(t.Table).
			SetIDField(t.IDField).SetLabelField(t.LabelField).SetLabelTemplate(t.LabelTemplate).
			SetFkFields(nonNil(t.FKFields)).SetNestedRelations(nonNil(t.NestedRelations)).
			SetDetailFields(nonNil(t.DetailFields)).SetDataLegend(t.DataLegend).
			SetContentMarkers(nonNil(t.ContentMarkers)).SetCondensed(t.Condensed)
	}
	return ds.client.EntityType.CreateBulk(bulk...).
		OnConflict(sql.ConflictColumns(entitytype.FieldDomain, entitytype.FieldName)).
		UpdateNewValues().Exec(ctx)
}

func toRegistryType(r *ent.EntityType) registry.EntityType {
	return registry.EntityType{
		Name: r.Name, Table: r.TableName, IDField: r.IDField,
		LabelField: r.LabelField, LabelTemplate: r.LabelTemplate,
		FKFields: r.FkFields, NestedRelations: r.NestedRelations, DetailFields: r.DetailFields,
		DataLegend: r.DataLegend, ContentMarkers: r.ContentMarkers, Condensed: r.Condensed,
	}
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// errNoTypeName answers a request that names its entity type neither way.
func errNoTypeName() error {
	return apperr.Invalid("entityType", "give entityType (the type's name, such as recipe) or table (its database table, such as recipes)")
}

// typeByNameOrTable resolves the entity type a request names by entityType
// or, for a runtime that only knows where its records came from, by table.
// Exactly one of the two is needed; both are accepted when they name the
// same type. recordRead, recordUpdated, applyEnrichment and
// translateFilters all resolve their type here.
func typeByNameOrTable(d *registry.Domain, entityType, table *string) (*registry.EntityType, error) {
	switch {
	case entityType == nil && table == nil:
		return nil, errNoTypeName()
	case table == nil:
		t, err := d.Type(*entityType)
		return t, err
	case entityType == nil:
		t, err := d.TypeOfTable(*table)
		return t, err
	}
	byName, err := d.Type(*entityType)
	if err != nil {
		return nil, err
	}
	byTable, err := d.TypeOfTable(*table)
	if err != nil {
		return nil, err
	}
	if byName != byTable {
		return nil, apperr.Invalid("table", "entityType %q and table %q disagree: table %q holds entity type %q; give only one of them",
			*entityType, *table, *table, byTable.Name)
	}
	return byName, nil
}

package mcpserver

import (
	"context"

	"sessiongraph/ent"
	"sessiongraph/internal/engine"
)

// session reads the session a read tool names; another tenant's is
// NOT_FOUND, as over GraphQL.
func (t *tools) session(ctx context.Context, sessionID string) (*ent.Session, error) {
	id, err := parseID("sessionID", sessionID)
	if err != nil {
		return nil, err
	}
	return t.engine.Sessions.Session(ctx, id)
}

// RefsIn names refs of a session.
type RefsIn struct {
	SessionID string   `json:"sessionID"`
	Refs      []string `json:"refs"`
}

// ResolvedRef is what a ref stands for, for the runtime's code.
type ResolvedRef struct {
	Ref        string  `json:"ref"`
	EntityType string  `json:"entityType"`
	EntityID   *string `json:"entityID,omitempty" jsonschema:"absent while the entity is a pending generated one"`
	Pending    bool    `json:"pending"`
}

// ResolveRefsOut are the refs resolved, in the order asked.
type ResolveRefsOut struct {
	Refs []ResolvedRef `json:"refs"`
}

func (t *tools) resolveRefs(ctx context.Context, in RefsIn) (*ResolveRefsOut, error) {
	s, err := t.session(ctx, in.SessionID)
	if err != nil {
		return nil, err
	}
	rs, err := t.engine.Reads.ResolveRefs(ctx, s, in.Refs)
	if err != nil {
		return nil, err
	}
	out := &ResolveRefsOut{Refs: make([]ResolvedRef, len(rs))}
	for i, r := range rs {
		out.Refs[i] = ResolvedRef{Ref: r.Ref, EntityType: r.EntityType, Pending: r.Pending}
		if r.EntityID != nil {
			id := r.EntityID.String()
			out.Refs[i].EntityID = &id
		}
	}
	return out, nil
}

// TranslatePayloadIn is a record about to be saved.
type TranslatePayloadIn struct {
	SessionID  string         `json:"sessionID"`
	EntityType string         `json:"entityType"`
	Data       map[string]any `json:"data"`
}

// TranslatePayloadOut is the record with ids in place of refs.
type TranslatePayloadOut struct {
	Data  map[string]any `json:"data"`
	Saves *string        `json:"saves,omitempty" jsonschema:"the gen ref the record saves: pass it to record_created as genRef"`
}

func (t *tools) translatePayload(ctx context.Context, in TranslatePayloadIn) (*TranslatePayloadOut, error) {
	s, err := t.session(ctx, in.SessionID)
	if err != nil {
		return nil, err
	}
	p, err := t.engine.Reads.TranslatePayload(ctx, s, in.EntityType, in.Data)
	if err != nil {
		return nil, err
	}
	return &TranslatePayloadOut{Data: p.Data, Saves: p.Saves}, nil
}

// Filter is one condition of a runtime query.
type Filter struct {
	Field string `json:"field"`
	Op    string `json:"op"`
	Value any    `json:"value,omitempty"`
}

// TranslateFiltersIn are filters on an entity type (or table) with refs.
type TranslateFiltersIn struct {
	SessionID  string   `json:"sessionID"`
	EntityType *string  `json:"entityType,omitempty"`
	Table      *string  `json:"table,omitempty"`
	Filters    []Filter `json:"filters"`
}

// TranslateFiltersOut are the filters ready for the database.
type TranslateFiltersOut struct {
	Filters     []Filter `json:"filters"`
	PendingRefs []string `json:"pendingRefs"`
}

func (t *tools) translateFilters(ctx context.Context, in TranslateFiltersIn) (*TranslateFiltersOut, error) {
	s, err := t.session(ctx, in.SessionID)
	if err != nil {
		return nil, err
	}
	filters := make([]*engine.FilterInput, len(in.Filters))
	for i, f := range in.Filters {
		filters[i] = &engine.FilterInput{Field: f.Field, Op: f.Op, Value: f.Value}
	}
	r, err := t.engine.Reads.TranslateFilters(ctx, s, in.EntityType, in.Table, filters)
	if err != nil {
		return nil, err
	}
	out := &TranslateFiltersOut{Filters: make([]Filter, len(r.Filters)), PendingRefs: r.PendingRefs}
	for i, f := range r.Filters {
		out.Filters[i] = Filter{Field: f.Field, Op: f.Op, Value: f.Value}
	}
	if out.PendingRefs == nil {
		out.PendingRefs = []string{}
	}
	return out, nil
}

// ReadRefsOut answers a read of refs.
type ReadRefsOut struct {
	Records      []map[string]any `json:"records"`
	FromDatabase []string         `json:"fromDatabase"`
}

func (t *tools) readRefs(ctx context.Context, in RefsIn) (*ReadRefsOut, error) {
	s, err := t.session(ctx, in.SessionID)
	if err != nil {
		return nil, err
	}
	r, err := t.engine.Reads.ReadRefs(ctx, s, in.Refs)
	if err != nil {
		return nil, err
	}
	return &ReadRefsOut{Records: r.Records, FromDatabase: r.FromDatabase}, nil
}

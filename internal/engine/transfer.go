package engine

import (
	"context"

	"github.com/google/uuid"

	"sessiongraph/internal/access"
	"sessiongraph/internal/apperr"
	"sessiongraph/internal/store"
)

// ExportSession reads a session, every row of it and its events, as one
// self-contained document (store.Export) at schemaVersion, the version of
// the database's schema. ADMIN only.
func (e *Engine) ExportSession(ctx context.Context, id uuid.UUID, schemaVersion uint) (*store.Export, error) {
	if err := access.RequireAdmin(ctx, "exporting a session"); err != nil {
		return nil, err
	}
	if _, err := e.Session(ctx, id); err != nil {
		return nil, err
	}
	return e.store.ExportSession(ctx, id, schemaVersion)
}

// ImportSession writes an exported session into this database, whose schema
// is at schemaVersion: the document must come from the same version (import
// it where it was made, or into a database at its version, then migrate).
// ADMIN only.
func (e *Engine) ImportSession(ctx context.Context, x *store.Export, schemaVersion uint) (uuid.UUID, error) {
	if err := access.RequireAdmin(ctx, "importing a session"); err != nil {
		return uuid.Nil, err
	}
	switch {
	case x.Format != store.ExportFormat:
		return uuid.Nil, apperr.Invalid("format", "the document's format is %q, not %q", x.Format, store.ExportFormat)
	case x.SchemaVersion != schemaVersion:
		return uuid.Nil, apperr.Invalid("schemaVersion", "the session was exported at schema version %d and this database is at %d: "+
			"import it into a database at version %d, then migrate it", x.SchemaVersion, schemaVersion, x.SchemaVersion)
	}
	return e.store.ImportSession(ctx, x)
}

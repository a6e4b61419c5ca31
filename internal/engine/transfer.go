package engine

import (
	"context"
	"io"

	"github.com/google/uuid"

	"sessiongraph/ent"
	"sessiongraph/internal/access"
	"sessiongraph/internal/apperr"
	"sessiongraph/internal/store"
)

// Transfer exports a session with its rows and imports one.
type Transfer struct {
	client *ent.Client
	store  *store.Store
}

// ExportSession reads a session, every row of it and its events, as one
// self-contained document (store.Export) at schemaVersion, the version of
// the database's schema. ADMIN only.
func (tf *Transfer) ExportSession(ctx context.Context, id uuid.UUID, schemaVersion uint) (*store.Export, error) {
	if err := access.RequireAdmin(ctx, "exporting a session"); err != nil {
		return nil, err
	}
	if _, err := sessionByID(ctx, tf.client, id); err != nil {
		return nil, err
	}
	return tf.store.ExportSession(ctx, id, schemaVersion)
}

// importLimits are the API's checks of an operation's text, applied to
// each row of an imported document: the command line is a door too.
var importLimits = store.ImportLimits{TextBytes: MaxTextBytes, Nesting: MaxNesting, RowBytes: maxImportRowBytes}

// maxImportRowBytes bounds one row of an imported document as JSON text,
// and so the memory one row takes. The largest rows are the server's own:
// a receipt of a build at the largest token budget (two million tokens,
// some 8 MB of text), or a turn holding three texts of MaxTextBytes and an
// execution summary; JSON's escapes can lengthen a text.
const maxImportRowBytes = 8 * MaxInputBytes

// ImportSession writes the exported session read from r into this
// database, whose schema is at schemaVersion: the document must come from
// the same version (import it where it was made, or into a database at its
// version, then migrate). Its text passes the API's input checks, its
// session's tenant is a name as an API key's is, and the store refuses
// whatever is not the session's own (store.ImportSession). ADMIN only.
func (tf *Transfer) ImportSession(ctx context.Context, r io.Reader, schemaVersion uint) (store.Imported, error) {
	if err := access.RequireAdmin(ctx, "importing a session"); err != nil {
		return store.Imported{}, err
	}
	doc, err := store.ReadImport(r, importLimits)
	if err != nil {
		return store.Imported{}, err
	}
	switch {
	case doc.Format != store.ExportFormat:
		return store.Imported{}, apperr.Invalid("format", "the document's format is %q, not %q", doc.Format, store.ExportFormat)
	case doc.SchemaVersion != schemaVersion:
		return store.Imported{}, apperr.Invalid("schemaVersion", "the session was exported at schema version %d and this database is at %d: "+
			"import it into a database at version %d, then migrate it", doc.SchemaVersion, schemaVersion, doc.SchemaVersion)
	}
	s, err := doc.Session()
	if err != nil {
		return store.Imported{}, err
	}
	if err := access.CheckName("session.tenant", s.Tenant); err != nil {
		return store.Imported{}, err
	}
	return tf.store.ImportSession(ctx, doc)
}

package grown

import (
	"context"
	"database/sql"
	_ "embed" // pages.sql
	"fmt"
)

// PagesSQL loads the nested page's sessions, as many as the setting
// grown.sessions says, into a migrated database.
//
//go:embed pages.sql
var PagesSQL string

// LoadPages loads sessions sessions of 10 turns and 20 refs each, the shape
// of the nested page's (20 sessions × 10 turns + 20 refs), into a migrated
// database and gathers statistics: the page's rows alone, at a size the
// page's cost should not depend on.
func LoadPages(ctx context.Context, db *sql.DB, sessions int) error {
	if _, err := db.ExecContext(ctx, fmt.Sprintf("SET grown.sessions = %d;\n%s", sessions, PagesSQL)); err != nil {
		return fmt.Errorf("load %d sessions: %w", sessions, err)
	}
	if _, err := db.ExecContext(ctx, `VACUUM ANALYZE`); err != nil {
		return fmt.Errorf("analyze %d sessions: %w", sessions, err)
	}
	return nil
}

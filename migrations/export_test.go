package migrations

import (
	"context"
	"database/sql"
)

// ApplyTo brings the database at dsn to version, for tests of an upgrade.
func ApplyTo(ctx context.Context, dsn string, version uint) error {
	db, err := sql.Open("postgres", dsn)
	if err != nil {
		return err
	}
	defer db.Close()
	m, err := open(ctx, db)
	if err != nil {
		return err
	}
	return m.Migrate(version)
}

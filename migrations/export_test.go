package migrations

import (
	"context"

	"github.com/golang-migrate/migrate/v4"
)

// ApplyTo brings the database at dsn to version, for tests of an upgrade.
func ApplyTo(ctx context.Context, dsn string, version uint) error {
	return migrating(ctx, dsn, func(m *migrate.Migrate) error { return m.Migrate(version) })
}

//go:build ignore

// main writes the next versioned migration: the difference between what the
// files in migrations/ build and what the ent schema wants, in golang-migrate
// format, with atlas.sum updated. `make migration NAME=add_x` runs it.
//
// Atlas replays the existing migrations into a scratch database to learn the
// current state, so it needs a PostgreSQL: DATABASE_URL's server, or the one
// the embedded default finds or starts.
//
// With --hash it only rewrites atlas.sum, after a migration was written or
// edited by hand (`make migration-hash`).
package main

import (
	"context"
	"database/sql"
	"fmt"
	"log"
	"net/url"
	"os"

	atlas "ariga.io/atlas/sql/migrate"
	"ariga.io/atlas/sql/sqltool"
	"entgo.io/ent/dialect"
	"entgo.io/ent/dialect/sql/schema"
	_ "github.com/lib/pq"

	"sessiongraph/ent/migrate"
	"sessiongraph/internal/devdb"
)

const scratch = "sessiongraph_migration_scratch"

func main() {
	if len(os.Args) != 2 || os.Args[1] == "" {
		log.Fatal("usage: go run -mod=mod ent/migrate/main.go <name>|--hash   (or: make migration NAME=<name>)")
	}
	if os.Args[1] == "--hash" {
		if err := rehash(); err != nil {
			log.Fatalf("hashing migrations: %v", err)
		}
		return
	}
	ctx := context.Background()
	devURL, err := scratchDatabase(ctx)
	if err != nil {
		log.Fatalf("scratch database: %v", err)
	}
	dir, err := sqltool.NewGolangMigrateDir("migrations")
	if err != nil {
		log.Fatalf("migrations dir: %v", err)
	}
	err = migrate.NamedDiff(ctx, devURL, os.Args[1],
		schema.WithDir(dir),
		schema.WithMigrationMode(schema.ModeReplay),
		schema.WithDialect(dialect.Postgres),
		schema.WithFormatter(sqltool.GolangMigrateFormatter),
		schema.WithDropColumn(true),
		schema.WithDropIndex(true),
	)
	if err != nil {
		log.Fatalf("generating migration: %v", err)
	}
}

// scratchDatabase returns the URL of an empty database to replay into.
func scratchDatabase(ctx context.Context) (string, error) {
	admin := os.Getenv("DATABASE_URL")
	if admin == "" {
		cluster, err := devdb.Ensure(ctx, devdb.Options{Database: "postgres", LocalServer: true})
		if err != nil {
			return "", err
		}
		admin = cluster.AdminDSN
	}
	u, err := url.Parse(admin)
	if err != nil {
		return "", err
	}
	u.Path = "/postgres"
	db, err := sql.Open("postgres", u.String())
	if err != nil {
		return "", err
	}
	defer db.Close()
	for _, stmt := range []string{
		fmt.Sprintf("DROP DATABASE IF EXISTS %s WITH (FORCE)", scratch),
		fmt.Sprintf("CREATE DATABASE %s", scratch),
	} {
		if _, err := db.ExecContext(ctx, stmt); err != nil {
			return "", err
		}
	}
	u.Path = "/" + scratch
	return u.String(), nil
}

// rehash rewrites atlas.sum for the files now in migrations/.
func rehash() error {
	dir, err := sqltool.NewGolangMigrateDir("migrations")
	if err != nil {
		return err
	}
	sum, err := dir.Checksum()
	if err != nil {
		return err
	}
	return atlas.WriteSumFile(dir, sum)
}

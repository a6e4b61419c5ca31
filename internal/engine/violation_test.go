package engine

import (
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/assert"
)

// A second open turn is refused by the one-open-turn index, which a Citus
// coordinator reports without the constraint field, naming the worker's
// shard of the index in the message; both read as the open-turn conflict,
// and no other index does. (The errors below are the two servers' own, as
// they answered the same insert.)
func TestAnOpenTurnConflictIsReadOnPostgreSQLAndOnCitus(t *testing.T) {
	for _, c := range []struct {
		name string
		err  *pgconn.PgError
		open bool
	}{
		{"PostgreSQL", &pgconn.PgError{Code: "23505", ConstraintName: "turn_one_open_per_session",
			Message: `duplicate key value violates unique constraint "turn_one_open_per_session"`}, true},
		{"Citus", &pgconn.PgError{Code: "23505",
			Message: `duplicate key value violates unique constraint "turn_one_open_per_session_102040"`}, true},
		{"another index on Citus", &pgconn.PgError{Code: "23505",
			Message: `duplicate key value violates unique constraint "turn_session_id_number_102040"`}, false},
		{"another index", &pgconn.PgError{Code: "23505", ConstraintName: "turn_session_id_number"}, false},
		{"another error", &pgconn.PgError{Code: "23503",
			Message: `insert or update on table "turns_102040" violates foreign key constraint "turn_one_open_per_session_102040"`}, false},
	} {
		assert.Equal(t, c.open, isOpenTurnConflict(c.err), c.name)
	}
}

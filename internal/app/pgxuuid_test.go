package app

import (
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A UUID goes to PostgreSQL as its 16 bytes, alone, in an array and as a
// null element of one, without pgx's detour through a string and an error.
func TestUUIDsAreEncodedAsTheirBytes(t *testing.T) {
	u := uuid.New()
	m := pgtype.NewMap()
	encodeUUIDs(m)

	got, err := m.Encode(pgtype.UUIDOID, pgtype.BinaryFormatCode, u, nil)
	require.NoError(t, err)
	assert.Equal(t, u[:], got)

	want, err := m.Encode(pgtype.UUIDArrayOID, pgtype.BinaryFormatCode, []pgtype.UUID{{Bytes: u, Valid: true}, {}}, nil)
	require.NoError(t, err)
	got, err = m.Encode(pgtype.UUIDArrayOID, pgtype.BinaryFormatCode, []*uuid.UUID{&u, nil}, nil)
	require.NoError(t, err)
	assert.Equal(t, want, got, "an array with a null")

	text, err := m.Encode(pgtype.UUIDOID, pgtype.TextFormatCode, u, nil)
	require.NoError(t, err)
	assert.Equal(t, u.String(), string(text))

	// The detour allocated an error, a string and the parsed value per UUID.
	plain := pgtype.NewMap()
	cost := func(m *pgtype.Map) float64 {
		buf := make([]byte, 0, 64)
		return testing.AllocsPerRun(100, func() { _, _ = m.Encode(pgtype.UUIDOID, pgtype.BinaryFormatCode, u, buf[:0]) })
	}
	assert.Less(t, cost(m), cost(plain), "fewer allocations than pgx's own path")
}

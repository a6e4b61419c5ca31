package schema

import "github.com/google/uuid"

// newID returns a time-ordered UUID (v7) so that primary-key inserts append to
// the B-tree instead of scattering across it.
func newID() uuid.UUID {
	return uuid.Must(uuid.NewV7())
}

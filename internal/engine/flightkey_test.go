package engine_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"sessiongraph/internal/engine"
)

// TestTheFlightKeyNamesEveryField: builds being made are shared by their
// flight key, so two builds that differ in any field of their key (or of
// their options) must not share one. Each field made non-zero alone gives
// a key of its own; a field added to the key or the options and left out
// of flightKey fails here.
func TestTheFlightKeyNamesEveryField(t *testing.T) {
	zero, each := engine.FlightKeysOfEveryField()
	assert.GreaterOrEqual(t, len(each), 10, "the key's fields and the options'")
	seen := map[string]string{zero: "the zero key"}
	for field, key := range each {
		if other, ok := seen[key]; ok {
			t.Errorf("%s gives the same flight key as %s", field, other)
		}
		seen[key] = field
	}
}

package app

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestThePoolIsSizedFromTheMachineAndTheDatabase(t *testing.T) {
	for _, c := range []struct{ cores, maxConnections, reserved, want int }{
		{2, 100, 3, 8},   // this machine: 4 per core
		{16, 100, 3, 32}, // a third of what PostgreSQL accepts, for three replicas
		{16, 500, 3, 64}, // 4 per core again once max_connections allows
		{1, 5, 3, 2},     // never below 2
		{64, 10000, 0, 256},
	} {
		assert.Equal(t, c.want, poolSize(c.cores, c.maxConnections, c.reserved), "%+v", c)
	}
}

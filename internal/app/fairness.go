package app

import (
	"runtime"
	"time"

	"sessiongraph/internal/access"
	"sessiongraph/internal/config"
)

// operationsPerCore is how many queries and mutations run at once per core
// when -operations is 0, keyOperationsPerCore how many of them one key's
// when -key-operations is 0 (never all of them). An operation alternates
// between the server's CPU, PostgreSQL's and waiting (a round trip, a
// commit's flush), so a key alone needs more than one per core to keep the
// cores busy: on 2 cores, with the rates lifted, a key alone ran 790-830
// operations a second at two at once and 1,060 at three, against 1,380-1,490
// unbounded. Beside other tenants working, its bound is divided among them
// (access.Slots): a flood beside one victim runs one at a time on 2 cores.
const (
	operationsPerCore    = 2
	keyOperationsPerCore = 2
)

// newSlots returns the replica's operation slots (access.Slots) of the
// settings, sized from the cores where they say 0, a tenant working for
// linger after its last operation.
func newSlots(f config.Fairness, linger time.Duration) *access.Slots {
	size, keyMost := slotSizes(f.Operations, f.KeyOperations, runtime.GOMAXPROCS(0))
	return access.NewSlots(size, keyMost, linger)
}

// slotSizes is the number of operation slots and one key's most: size if
// positive, else operationsPerCore per core; keyMost if positive, else
// keyOperationsPerCore per core, and never all the slots but one of
// several, so that another tenant's operation always finds one free.
func slotSizes(size, keyMost, cores int) (int, int) {
	if size <= 0 {
		size = operationsPerCore * max(1, cores)
	}
	if keyMost <= 0 {
		keyMost = min(keyOperationsPerCore*max(1, cores), max(1, size-1))
	}
	return size, min(keyMost, size)
}

// Admission returns the replica's admission, for tests that watch who
// waits in it.
func (a *App) Admission() *access.Admission { return a.admission }

// Slots returns the replica's operation slots, for tests that watch who
// waits for one.
func (a *App) Slots() *access.Slots { return a.admission.Slots }

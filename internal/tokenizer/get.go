package tokenizer

import (
	"errors"
	"fmt"
	"sync"
)

// ErrFellBack reports that a BPE encoding could not be loaded and Get
// returned the Chars4 counter in its place. The counter still works, so a
// caller logs the error and carries on:
//
//	c, err := tokenizer.Get(name)
//	if errors.Is(err, tokenizer.ErrFellBack) {
//		log.Print(err) // counts are approximate; c.Name() is Chars4
//	} else if err != nil {
//		return err // unknown name; c is nil
//	}
//
// A failed load is not retried: the data is embedded, so a second attempt
// would fail the same way. Every later Get for that name returns the
// fallback and the error again, so each caller learns of it.
var ErrFellBack = errors.New("BPE encoding unavailable, counting with chars4")

// Get returns the counter for a name. Unknown names are a BAD_USER_INPUT
// error naming the known ones, with a nil Counter. BPE encodings are loaded
// on first use, once per process, and shared by every caller. If loading
// fails, Get returns the Chars4 counter together with an error wrapping
// ErrFellBack and the cause; the counter's Name is Chars4, so counts stored
// with it are labelled by what produced them.
func Get(name Name) (Counter, error) { return shared.get(name) }

// shared holds the process's encodings.
var shared = newEncodings(loadBPE)

// encodings lazily loads each BPE encoding once. It is a type rather than
// bare globals so tests can build one whose loading fails.
type encodings struct {
	load  func(Name) (Counter, error)
	slots map[Name]*slot
}

// slot holds one encoding's load result; the map of slots is fixed at
// construction, so reading it needs no lock.
type slot struct {
	once    sync.Once
	counter Counter
	err     error
}

func newEncodings(load func(Name) (Counter, error)) *encodings {
	return &encodings{load: load, slots: map[Name]*slot{CL100K: {}, O200K: {}}}
}

func (e *encodings) get(name Name) (Counter, error) {
	if name == Chars4 {
		return chars4Counter{}, nil
	}
	s, ok := e.slots[name]
	if !ok {
		return nil, unknown(string(name))
	}
	s.once.Do(func() { s.counter, s.err = e.loadSafely(name) })
	if s.err != nil {
		return chars4Counter{}, fmt.Errorf("tokenizer %s: %w: %w", name, ErrFellBack, s.err)
	}
	return s.counter, nil
}

// loadSafely turns a panic into an error: the rank-file parser indexes
// without checks, and a panic inside once.Do would leave the slot marked
// done with neither a counter nor an error.
func (e *encodings) loadSafely(name Name) (c Counter, err error) {
	defer func() {
		if r := recover(); r != nil {
			c, err = nil, fmt.Errorf("loading %s panicked: %v", name, r)
		}
	}()
	return e.load(name)
}

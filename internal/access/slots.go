package access

import (
	"context"
	"sync"
	"time"

	"github.com/google/uuid"
)

// Slots bounds how many queries and mutations a replica runs at once, and
// gives each slot that frees to a waiting operation of the tenant with the
// fewest operations running, within it of the key with the fewest running
// (an admin key is a tenant of its own), each key's operations in the
// order they came; between equals, to the one served longest ago.
//
// What it shares is the replica's CPU. The rate and in-flight limits bound
// how much one key asks, the pool shares how many connections it holds, but
// neither how many of its operations compete for the cores with everyone
// else's: four searches of one key at once on two cores (gqlgen's work and
// PostgreSQL's) made another tenant's p99 7x its idle one. With Slots, a
// key that floods waits on itself: another tenant's operation runs as soon
// as a slot frees, ahead of every operation the flood has waiting.
//
// A key runs at most KeyMost operations at once, so that a slot is free
// when another tenant's operation comes, without waiting for one of the
// flood's to end; and while n tenants are working (they run an operation,
// wait for a slot, or ended one within Linger), at most KeyMost/n (at
// least one): a key alone keeps all of KeyMost, a flood beside another
// tenant gives up its share of the cores while that tenant works.
//
// That bound still let a flood take a core: one operation at a time, each
// started the moment the last ended, kept one core busy (the server's
// work, then PostgreSQL's) beside the other tenant's, and on two cores
// that tenant's statements and commits waited for a core behind it: its
// p99 3-4x its idle one, 99 % of its slowest operations' time spent in
// the database. So a key with operations waiting while other tenants
// work rests after each operation as long as it ran before it starts
// another: a flood beside a working tenant runs at most half the time. A
// key that waits for nothing (it sends one operation after the other, as
// a conversation does) never rests, nor does a key alone.
type Slots struct {
	// Size is how many operations run at once, KeyMost how many of them
	// one key's.
	Size, KeyMost int
	// Linger is how long a tenant counts as working after its last
	// operation ended.
	Linger time.Duration

	mu      sync.Mutex
	running int
	byKey   map[uuid.UUID]int
	byGroup map[string]int
	// waiting holds the groups with an operation waiting.
	waiting map[string]*waitGroup
	// served counts the slots given, to order equals by their last one: an
	// entry per key and tenant that ever ran, as many as there are keys.
	served  uint64
	last    map[string]uint64
	lastKey map[uuid.UUID]uint64
	// ended is when each group's last operation ended, for the groups
	// that may still be within Linger of it.
	ended map[string]time.Time
	// resting is until when each key that rests may not start an
	// operation; restTimer dispatches when the earliest rest ends.
	resting   map[uuid.UUID]time.Time
	restTimer timer
	// rests counts each key's rests, as many entries as keys that rested.
	rests map[uuid.UUID]int
	// clock tells the time and sets the rest timer: the system's, or in
	// tests one they advance.
	clock clock
}

// clock is the time Slots reads and the timers it sets.
type clock interface {
	Now() time.Time
	AfterFunc(d time.Duration, f func()) timer
}

// timer is a timer a clock set, which Slots may stop.
type timer interface{ Stop() bool }

// systemClock is the system's time and timers.
type systemClock struct{}

func (systemClock) Now() time.Time { return time.Now() }

func (systemClock) AfterFunc(d time.Duration, f func()) timer { return time.AfterFunc(d, f) }

// waitGroup is one tenant's (or admin key's) keys with operations waiting.
type waitGroup struct {
	name  string
	lines map[uuid.UUID]*waitLine
}

// waitLine is one key's waiting operations, oldest first.
type waitLine struct {
	key     uuid.UUID
	waiters []*waiter
}

// waiter is one operation waiting for a slot: ready is closed once it has
// one.
type waiter struct {
	ready chan struct{}
	given bool
}

// NewSlots returns Slots running size operations at once, at most keyMost
// of one key's (0: any number), a tenant working for linger after its last
// operation.
func NewSlots(size, keyMost int, linger time.Duration) *Slots {
	if keyMost <= 0 {
		keyMost = size
	}
	return &Slots{Size: max(1, size), KeyMost: max(1, keyMost), Linger: linger, byKey: map[uuid.UUID]int{}, byGroup: map[string]int{},
		waiting: map[string]*waitGroup{}, last: map[string]uint64{}, lastKey: map[uuid.UUID]uint64{}, ended: map[string]time.Time{},
		resting: map[uuid.UUID]time.Time{}, rests: map[uuid.UUID]int{}, clock: systemClock{}}
}

// keyBound is how many operations one key may run now: KeyMost divided
// among the tenants working (and starting's, when not ""), at least one.
func (s *Slots) keyBound(starting string) int {
	return max(1, s.KeyMost/max(1, s.working(starting)))
}

// working is how many tenants are working: they run an operation, wait
// for a slot, or ended one within Linger (and starting, when not "").
func (s *Slots) working(starting string) int {
	working := make(map[string]bool, len(s.byGroup)+len(s.waiting)+len(s.ended)+1)
	for g := range s.byGroup {
		working[g] = true
	}
	for g := range s.waiting {
		working[g] = true
	}
	now := s.clock.Now()
	for g, at := range s.ended {
		if now.Sub(at) >= s.Linger {
			delete(s.ended, g)
			continue
		}
		working[g] = true
	}
	if starting != "" {
		working[starting] = true
	}
	return len(working)
}

// isResting reports whether key rests now, forgetting a rest that ended.
func (s *Slots) isResting(key uuid.UUID, now time.Time) bool {
	until, ok := s.resting[key]
	if ok && !now.Before(until) {
		delete(s.resting, key)
		return false
	}
	return ok
}

// rest makes key rest for d (or to the end of a longer rest it has), and
// dispatches when the rest ends.
func (s *Slots) rest(key uuid.UUID, now time.Time, d time.Duration) {
	if until := now.Add(d); until.After(s.resting[key]) {
		s.resting[key] = until
	}
	s.rests[key]++
	if s.restTimer != nil {
		s.restTimer.Stop()
		s.restTimer = nil
	}
	s.rearm(now)
}

// rearm forgets the rests that ended and, unless it is set, sets the
// timer that dispatches when the earliest rest still to come ends.
func (s *Slots) rearm(now time.Time) {
	var earliest time.Time
	for key, until := range s.resting {
		if !now.Before(until) {
			delete(s.resting, key)
			continue
		}
		if earliest.IsZero() || until.Before(earliest) {
			earliest = until
		}
	}
	if earliest.IsZero() || s.restTimer != nil {
		return
	}
	s.restTimer = s.clock.AfterFunc(earliest.Sub(now), func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.restTimer = nil
		s.dispatch()
		s.rearm(s.clock.Now())
	})
}

// Rests returns how many times key has rested.
func (s *Slots) Rests(key uuid.UUID) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.rests[key]
}

// Resting reports whether key rests: it may not start an operation until
// its rest ends.
func (s *Slots) Resting(key uuid.UUID) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.isResting(key, s.clock.Now())
}

// Take waits for a slot for an operation of p, and returns what gives it
// back. It fails with ctx's error when ctx ends first.
func (s *Slots) Take(ctx context.Context, p *Principal) (giveBack func(), err error) {
	group := groupOf(p)
	s.mu.Lock()
	if s.running < s.Size && len(s.waiting) == 0 && s.byKey[p.KeyID] < s.keyBound(group) && !s.isResting(p.KeyID, s.clock.Now()) {
		s.occupy(group, p.KeyID)
		s.mu.Unlock()
		return s.giveBack(group, p.KeyID), nil
	}
	w := &waiter{ready: make(chan struct{})}
	s.enqueue(group, p.KeyID, w)
	s.dispatch() // a key under its bound may pass keys at theirs
	s.mu.Unlock()

	select {
	case <-w.ready:
		return s.giveBack(group, p.KeyID), nil
	case <-ctx.Done():
		s.mu.Lock()
		given := w.given
		if !given {
			s.dequeue(group, p.KeyID, w)
		}
		s.mu.Unlock()
		if given {
			s.giveBack(group, p.KeyID)()
		}
		return nil, ctx.Err()
	}
}

// Waiting returns how many operations of key wait for a slot.
func (s *Slots) Waiting(key uuid.UUID) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, g := range s.waiting {
		if l := g.lines[key]; l != nil {
			n += len(l.waiters)
		}
	}
	return n
}

// Running returns how many operations of key hold a slot.
func (s *Slots) Running(key uuid.UUID) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.byKey[key]
}

func groupOf(p *Principal) string {
	if p.IsAdmin() {
		return "key " + p.KeyID.String()
	}
	return "tenant " + p.Tenant
}

func (s *Slots) occupy(group string, key uuid.UUID) {
	s.running++
	s.byKey[key]++
	s.byGroup[group]++
	s.served++
	s.last[group] = s.served
	s.lastKey[key] = s.served
}

func (s *Slots) giveBack(group string, key uuid.UUID) func() {
	var once sync.Once
	started := s.clock.Now()
	return func() {
		once.Do(func() {
			s.mu.Lock()
			defer s.mu.Unlock()
			now := s.clock.Now()
			if s.waits(key) && s.working("") > 1 {
				s.rest(key, now, now.Sub(started))
			}
			s.running--
			if s.byKey[key]--; s.byKey[key] == 0 {
				delete(s.byKey, key)
			}
			if s.byGroup[group]--; s.byGroup[group] == 0 {
				delete(s.byGroup, group)
			}
			if s.Linger > 0 {
				s.ended[group] = now
			}
			s.dispatch()
		})
	}
}

func (s *Slots) enqueue(group string, key uuid.UUID, w *waiter) {
	g := s.waiting[group]
	if g == nil {
		g = &waitGroup{name: group, lines: map[uuid.UUID]*waitLine{}}
		s.waiting[group] = g
	}
	l := g.lines[key]
	if l == nil {
		l = &waitLine{key: key}
		g.lines[key] = l
	}
	l.waiters = append(l.waiters, w)
}

// dequeue removes w, which gave up waiting, from its line.
func (s *Slots) dequeue(group string, key uuid.UUID, w *waiter) {
	g := s.waiting[group]
	l := g.lines[key]
	for i, x := range l.waiters {
		if x == w {
			l.waiters = append(l.waiters[:i], l.waiters[i+1:]...)
			break
		}
	}
	s.prune(g, l)
}

// dispatch gives the free slots to waiting operations, one at a time: to
// the group with the fewest running, its key with the fewest running (of
// those under KeyMost), that key's oldest operation.
func (s *Slots) dispatch() {
	for s.running < s.Size && len(s.waiting) > 0 {
		bound, now := s.keyBound(""), s.clock.Now()
		var g *waitGroup
		var l *waitLine
		for _, cg := range s.waiting {
			cl := s.nextLine(cg, bound, now)
			if cl == nil {
				continue
			}
			if g == nil || s.byGroup[cg.name] < s.byGroup[g.name] ||
				s.byGroup[cg.name] == s.byGroup[g.name] && s.last[cg.name] < s.last[g.name] {
				g, l = cg, cl
			}
		}
		if g == nil {
			return // nothing waits, or every waiting key is at its bound or rests
		}
		w := l.waiters[0]
		l.waiters = l.waiters[1:]
		w.given = true
		close(w.ready)
		s.occupy(g.name, l.key)
		s.prune(g, l)
	}
}

// waits reports whether key has an operation waiting for a slot.
func (s *Slots) waits(key uuid.UUID) bool {
	for _, g := range s.waiting {
		if g.lines[key] != nil {
			return true
		}
	}
	return false
}

// nextLine returns g's key with the fewest running that may take a slot
// (fewer than bound, not resting; between equals, the one served longest
// ago), or nil.
func (s *Slots) nextLine(g *waitGroup, bound int, now time.Time) *waitLine {
	var best *waitLine
	for _, l := range g.lines {
		n := s.byKey[l.key]
		if n >= bound || s.isResting(l.key, now) {
			continue
		}
		if best == nil || n < s.byKey[best.key] || n == s.byKey[best.key] && s.lastKey[l.key] < s.lastKey[best.key] {
			best = l
		}
	}
	return best
}

// prune drops l from g, and g from the groups waiting, once they have no
// one waiting.
func (s *Slots) prune(g *waitGroup, l *waitLine) {
	if len(l.waiters) > 0 {
		return
	}
	delete(g.lines, l.key)
	if len(g.lines) == 0 {
		delete(s.waiting, g.name)
	}
}

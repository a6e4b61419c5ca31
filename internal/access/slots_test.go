package access

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sessiongraph/ent/apikey"
)

// testClock is a clock the test advances. It holds one timer, the one
// Slots keeps (it stops its timer before it sets another); the timer's
// function runs in Advance, on the test's goroutine, once its time comes.
type testClock struct {
	mu      sync.Mutex
	now, at time.Time
	fire    func()
}

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *testClock) AfterFunc(d time.Duration, f func()) timer {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.at, c.fire = c.now.Add(d), f
	return c
}

func (c *testClock) Stop() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	set := c.fire != nil
	c.fire = nil
	return set
}

// Advance moves the time on by d, and runs the timer if its time came.
func (c *testClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	fire := c.fire
	if fire != nil && !c.at.After(c.now) {
		c.fire = nil
	} else {
		fire = func() {}
	}
	c.mu.Unlock()
	fire()
}

// newSlots is NewSlots on a clock the test advances.
func newSlots(size, keyMost int, linger time.Duration) (*Slots, *testClock) {
	s := NewSlots(size, keyMost, linger)
	c := &testClock{now: time.Date(2026, 11, 28, 9, 0, 0, 0, time.UTC)}
	s.clock = c
	return s, c
}

func clientOf(tenant string) *Principal {
	return &Principal{KeyID: uuid.New(), Role: apikey.RoleClient, Tenant: tenant}
}

// taking starts a Take of p in the background; the give-back arrives on
// the channel once it has a slot.
func taking(t *testing.T, s *Slots, ctx context.Context, p *Principal) <-chan func() {
	c := make(chan func(), 1)
	go func() {
		giveBack, err := s.Take(ctx, p)
		if err == nil {
			c <- giveBack
		}
	}()
	return c
}

func given(t *testing.T, c <-chan func()) func() {
	t.Helper()
	select {
	case g := <-c:
		return g
	case <-time.After(10 * time.Second):
		require.FailNow(t, "no slot was given")
		return nil
	}
}

func waitingOf(t *testing.T, s *Slots, key uuid.UUID, n int) {
	t.Helper()
	require.Eventually(t, func() bool { return s.Waiting(key) == n }, 10*time.Second, time.Millisecond)
}

// A freed slot goes to the tenant with the fewest running, then to its key
// with the fewest running; a key's own operations in the order they came.
func TestAFreedSlotGoesToTheTenantAndKeyWithTheFewestRunning(t *testing.T) {
	s, clock := newSlots(2, 0, 0)
	flood, sameTenant, victim := clientOf("acme"), clientOf("acme"), clientOf("globex")
	ctx := context.Background()
	a, err := s.Take(ctx, flood)
	require.NoError(t, err)
	b, err := s.Take(ctx, flood)
	require.NoError(t, err)
	clock.Advance(10 * time.Millisecond) // a and b run

	first := taking(t, s, ctx, flood)
	waitingOf(t, s, flood.KeyID, 1)
	second := taking(t, s, ctx, flood)
	waitingOf(t, s, flood.KeyID, 2)
	other := taking(t, s, ctx, sameTenant)
	waitingOf(t, s, sameTenant.KeyID, 1)
	last := taking(t, s, ctx, victim)
	waitingOf(t, s, victim.KeyID, 1)

	// Giving back decides, before it returns, who has the slot.
	a()
	assert.Equal(t, []int{1, 2, 1}, []int{s.Running(victim.KeyID), s.Waiting(flood.KeyID), s.Waiting(sameTenant.KeyID)},
		"globex runs nothing, acme two: globex first")
	v := given(t, last)
	b()
	assert.Equal(t, []int{1, 2}, []int{s.Running(sameTenant.KeyID), s.Waiting(flood.KeyID)},
		"within acme, the key that runs nothing before the flooding one")
	o := given(t, other)
	v()
	// The flood's key had operations waiting while globex worked: it rests
	// as long as its operation ran before it starts another.
	assert.True(t, s.Resting(flood.KeyID), "a slot is free, but the flood's key rests")
	assert.Equal(t, 2, s.Waiting(flood.KeyID))
	clock.Advance(10 * time.Millisecond) // as long as a ran
	f := given(t, first)
	assert.Equal(t, []int{1, 1}, []int{s.Running(flood.KeyID), s.Waiting(flood.KeyID)}, "the flood's first write before its second")
	o()
	given(t, second)()
	f()
	assert.Zero(t, s.Running(flood.KeyID)+s.Running(victim.KeyID)+s.Running(sameTenant.KeyID))
}

// A key at its bound waits even with a slot free, which another key takes.
func TestAKeyAtItsBoundLeavesTheLastSlotToAnother(t *testing.T) {
	s, _ := newSlots(3, 2, 0)
	flood, victim := clientOf("acme"), clientOf("globex")
	ctx := context.Background()
	a, err := s.Take(ctx, flood)
	require.NoError(t, err)
	_, err = s.Take(ctx, flood)
	require.NoError(t, err)
	third := taking(t, s, ctx, flood)
	waitingOf(t, s, flood.KeyID, 1)

	v, err := s.Take(ctx, victim)
	require.NoError(t, err, "the slot the flood may not take is free")
	v()
	assert.Equal(t, 1, s.Waiting(flood.KeyID), "the freed slot is not the flood's: it is at its bound")
	a()
	given(t, third)
}

// An operation that stops waiting (its request's deadline, its client
// gone) leaves the line, and the slot goes to the next.
func TestAnOperationThatStopsWaitingLeavesTheLine(t *testing.T) {
	s, _ := newSlots(1, 0, 0)
	p, q := clientOf("acme"), clientOf("globex")
	a, err := s.Take(context.Background(), p)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	errs := make(chan error, 1)
	go func() {
		_, err := s.Take(ctx, p)
		errs <- err
	}()
	waitingOf(t, s, p.KeyID, 1)
	next := taking(t, s, context.Background(), q)
	waitingOf(t, s, q.KeyID, 1)
	cancel()
	assert.ErrorIs(t, <-errs, context.Canceled)
	waitingOf(t, s, p.KeyID, 0)
	a()
	given(t, next)()
	assert.Zero(t, s.Running(p.KeyID)+s.Running(q.KeyID))
}

// While another tenant works (runs, waits, or ran within Linger; here a
// Linger longer than the test), a key's bound is divided among the tenants
// working: the flood, alone at two, is held to one beside the victim, even
// with slots free, and gets its two back only when the victim has stopped
// working (Linger 0 below).
func TestAKeysBoundIsDividedAmongTheTenantsWorking(t *testing.T) {
	for _, c := range []struct {
		linger time.Duration
		after  int
	}{{time.Hour, 1}, {0, 2}} {
		s, _ := newSlots(4, 2, c.linger)
		flood, victim := clientOf("acme"), clientOf("globex")
		ctx := context.Background()
		a, err := s.Take(ctx, flood)
		require.NoError(t, err)
		_, err = s.Take(ctx, flood)
		require.NoError(t, err, "alone, the flood runs two")
		v, err := s.Take(ctx, victim)
		require.NoError(t, err)
		a()
		third := taking(t, s, ctx, flood)
		waitingOf(t, s, flood.KeyID, 1)
		assert.Equal(t, 1, s.Running(flood.KeyID), "beside the victim, one: two slots are free, the flood waits")
		v()
		assert.Equal(t, c.after, s.Running(flood.KeyID), "linger %s", c.linger)
		if c.after == 2 {
			given(t, third)
		}
	}
}

// A key with operations waiting while another tenant works rests, after
// each of its operations, as long as that operation ran, before it starts
// another, even with slots free: a flood beside a working tenant runs at
// most half the time. The other tenant's operation takes a free slot
// meanwhile, and the flood's waiting operation starts once the rest ends.
func TestAKeyWithABacklogRestsWhileAnotherTenantWorks(t *testing.T) {
	s, clock := newSlots(4, 1, time.Hour)
	flood, victim := clientOf("acme"), clientOf("globex")
	ctx := context.Background()
	v, err := s.Take(ctx, victim)
	require.NoError(t, err)
	v() // globex works (within Linger)
	a, err := s.Take(ctx, flood)
	require.NoError(t, err)
	next := taking(t, s, ctx, flood)
	waitingOf(t, s, flood.KeyID, 1)
	clock.Advance(time.Second) // the operation's work
	a()
	assert.True(t, s.Resting(flood.KeyID), "the flood's key rests")
	assert.Equal(t, []int{0, 1}, []int{s.Running(flood.KeyID), s.Waiting(flood.KeyID)}, "its next operation waits, three slots free")
	v, err = s.Take(ctx, victim)
	require.NoError(t, err, "globex's operation runs at once")
	v()
	clock.Advance(time.Second - time.Nanosecond) // the rest is as long as the operation ran
	assert.True(t, s.Resting(flood.KeyID))
	assert.Equal(t, 1, s.Waiting(flood.KeyID))
	clock.Advance(time.Nanosecond)
	given(t, next)() // and the flood's once the rest ends
	assert.False(t, s.Resting(flood.KeyID))
	assert.Equal(t, 1, s.Rests(flood.KeyID))
}

// A key rests only when it has operations waiting and another tenant
// works: alone, or sending one operation after the other, it never does.
func TestAKeyAloneOrWithoutABacklogNeverRests(t *testing.T) {
	ctx := context.Background()
	t.Run("alone, with a backlog", func(t *testing.T) {
		s, _ := newSlots(4, 1, time.Hour)
		flood := clientOf("acme")
		a, err := s.Take(ctx, flood)
		require.NoError(t, err)
		next := taking(t, s, ctx, flood)
		waitingOf(t, s, flood.KeyID, 1)
		a()
		assert.Zero(t, s.Rests(flood.KeyID))
		assert.Equal(t, 1, s.Running(flood.KeyID), "its next operation started as the first ended")
		given(t, next)()
	})
	t.Run("beside a working tenant, without a backlog", func(t *testing.T) {
		s, _ := newSlots(4, 1, time.Hour)
		one, other := clientOf("acme"), clientOf("globex")
		o, err := s.Take(ctx, other)
		require.NoError(t, err)
		defer o()
		for range 3 {
			a, err := s.Take(ctx, one)
			require.NoError(t, err, "nothing waits: it starts at once")
			a()
			assert.Zero(t, s.Rests(one.KeyID))
		}
	})
}

// Two operations of a resting key ending close together: the shorter's
// rest does not cut the longer's short.
func TestARestNeverShortensALongerOne(t *testing.T) {
	s, clock := newSlots(8, 4, time.Hour)
	flood, victim := clientOf("acme"), clientOf("globex")
	ctx := context.Background()
	v, err := s.Take(ctx, victim)
	require.NoError(t, err)
	v() // globex works (within Linger): the flood may run two at once
	long, err := s.Take(ctx, flood)
	require.NoError(t, err)
	clock.Advance(time.Second) // the long operation's work
	short, err := s.Take(ctx, flood)
	require.NoError(t, err)
	next := taking(t, s, ctx, flood)
	waitingOf(t, s, flood.KeyID, 1)
	long()
	short()
	assert.Equal(t, 2, s.Rests(flood.KeyID))
	clock.Advance(time.Second - time.Nanosecond) // past the short one's rest
	assert.True(t, s.Resting(flood.KeyID), "still within the long operation's rest")
	assert.Equal(t, 1, s.Waiting(flood.KeyID))
	clock.Advance(time.Nanosecond)
	given(t, next)()
}

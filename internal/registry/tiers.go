package registry

// DefaultWindow is how many turns a ref stays active after it was last
// referenced: the last two turns.
const DefaultWindow = 2

// Tiers sorts entries into three tiers, each ref in one:
// Generated (pending artifacts), Active (referenced within the window) and
// Retained (older, kept by Understand with a reason).
type Tiers struct {
	Active, Generated, Retained []*Entry
}

// ActiveSince is the oldest turn a ref may have been last referenced in and
// still be active at turn with the window: with the default window, at
// turn 3 refs of turns 2 and 3 are active and those of turn 1 are not.
func ActiveSince(turn, window int) int { return turn - window + 1 }

// SortTiers places each entry in its tier; entries in none are left out.
func SortTiers(entries []*Entry, turn, window int) Tiers {
	var t Tiers
	since := ActiveSince(turn, window)
	for _, e := range entries {
		switch {
		case e.Pending():
			t.Generated = append(t.Generated, e)
		case e.TurnLastReferenced >= since:
			t.Active = append(t.Active, e)
		case e.ActiveReason != nil:
			t.Retained = append(t.Retained, e)
		}
	}
	return t
}

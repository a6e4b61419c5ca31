package contextbuild

import (
	"fmt"

	"sessiongraph/internal/registry"
)

// Make formats node's context from the snapshot within the options' budget.
// It only reads the snapshot; it never writes.
func Make(n Node, s *Snapshot, o Options, c Counter) (Build, error) {
	o = WithDefaults(n, o)
	if n == Messages {
		return buildMessages(s, o, c), nil
	}
	var drafts []draft
	var names Tiers
	switch n {
	case Understand:
		drafts, names = buildUnderstand(s, o.TurnsWindow)
	case Think:
		drafts, names = buildThink(s, o.TurnsWindow)
	case Act:
		drafts, names = buildAct(s, o.TurnsWindow)
	case Reply:
		drafts, names = buildReply(s, o.TurnsWindow)
	default:
		return Build{}, fmt.Errorf("unknown node %q", n)
	}
	b := Build{Node: n, Budget: o.Budget, Tiers: names}
	b.Text, b.TokenCount, b.Sections, b.Notes = fit(drafts, o.Budget, c)
	b.TruncatedTurns = max(0, s.TurnCount-shown(n, s))
	if s.OlderEntries > 0 {
		b.Notes = append(b.Notes, fmt.Sprintf("%d older refs outside the window are not shown", s.OlderEntries))
	}
	return b, nil
}

// shown is how many turns a node's build includes.
func shown(n Node, s *Snapshot) int {
	past := map[Node]int{Understand: UnderstandTurns, Think: ThinkDepth, Act: FullDetailTurns, Reply: ThinkDepth}[n]
	k := len(pastTurns(s, past))
	if current(s) != nil {
		k++
	}
	return k
}

// WithDefaults fills the options a request left out with the node's
// defaults; loading and building must agree on them.
func WithDefaults(n Node, o Options) Options {
	if o.TurnsWindow <= 0 {
		o.TurnsWindow = registry.DefaultWindow
	}
	if o.Budget <= 0 {
		o.Budget = DefaultBudget(n)
	}
	if o.ModelLimit <= 0 {
		o.ModelLimit = DefaultModelLimit
	}
	if o.KeepRecent <= 0 {
		o.KeepRecent = DefaultKeepRecent
	}
	if o.Strategy == "" {
		o.Strategy = SlidingWindow
	}
	return o
}

// TurnsNeeded is how many of the newest turns a node's build reads.
func TurnsNeeded(n Node, o Options) int {
	o = WithDefaults(n, o)
	switch n {
	case Understand:
		return UnderstandTurns + 1
	case Think, Reply:
		return ThinkDepth + 1
	case Act:
		return FullDetailTurns + 1
	}
	return o.KeepRecent/2 + 1
}

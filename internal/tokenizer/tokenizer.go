// Package tokenizer counts the tokens a text costs in a prompt, so that
// budgets are measured in the unit models charge for. The BPE encodings
// cl100k_base and o200k_base ship inside the binary; chars4 is the
// 4-characters rule, used when no encoding is wanted or one fails to load.
package tokenizer

import (
	"context"
	"slices"
	"strings"

	"sessiongraph/internal/apperr"
)

// Name identifies a tokenizer.
type Name string

// The tokenizers a session or a request can choose.
const (
	CL100K Name = "cl100k_base"
	O200K  Name = "o200k_base"
	Chars4 Name = "chars4" // the 4-characters rule: ceil(len(runes)/4)
)

// Default is the tokenizer used when a session or request names none.
const Default = CL100K

// known is the order names are listed in, in errors and in Known.
var known = []Name{CL100K, O200K, Chars4}

// Counter counts tokens. Safe for concurrent use.
type Counter interface {
	// Count returns the number of tokens text encodes to.
	Count(text string) int
	// Name returns the tokenizer that actually counts, which is Chars4
	// when a BPE encoding failed to load (see ErrFellBack).
	Name() Name
}

// WithContext returns c counting only while ctx lasts: once ctx is done,
// a count stops at the next run of text and answers what it has so far.
// Counting runs inside writes and builds; a request whose deadline passed
// or whose client left should stop spending CPU on it. The caller checks
// ctx.Err() afterwards and throws the count away.
func WithContext(ctx context.Context, c Counter) Counter {
	return ctxCounter{Counter: c, ctx: ctx}
}

type ctxCounter struct {
	Counter
	ctx context.Context
}

func (c ctxCounter) Count(text string) int {
	if c.ctx.Err() != nil {
		return 0
	}
	if b, ok := c.Counter.(bpeCounter); ok {
		return b.countUntil(text, c.ctx.Done())
	}
	return c.Counter.Count(text)
}

// AddsUpAcrossSections passes on what the wrapped counter says (see
// bpeCounter), so that wrapping changes no build.
func (c ctxCounter) AddsUpAcrossSections() bool {
	a, ok := c.Counter.(interface{ AddsUpAcrossSections() bool })
	return ok && a.AddsUpAcrossSections()
}

// Known returns every valid tokenizer name, Default first.
func Known() []Name { return slices.Clone(known) }

// Parse maps user input such as "cl100k_base", "CL100K_BASE", "o200k_base"
// or "chars4" to a Name; anything else is a BAD_USER_INPUT error listing
// the valid names. An empty input is an error too: treating absence as
// Default is the caller's decision, not the parser's.
func Parse(s string) (Name, error) {
	n := Name(strings.ToLower(strings.TrimSpace(s)))
	if !slices.Contains(known, n) {
		return "", unknown(s)
	}
	return n, nil
}

func unknown(s string) error {
	names := make([]string, len(known))
	for i, n := range known {
		names[i] = string(n)
	}
	return apperr.New(apperr.BadUserInput,
		"unknown tokenizer %q: use one of %s", s, strings.Join(names, ", "))
}

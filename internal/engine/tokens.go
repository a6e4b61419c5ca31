package engine

import (
	"context"
	"errors"
	"log/slog"

	"github.com/google/uuid"
	lru "github.com/hashicorp/golang-lru/v2"

	"sessiongraph/internal/tokenizer"
)

// counter returns the token counter a session names, counting only while
// ctx lasts (callers check ctx.Err() after counting). An unknown name (which
// openSession refuses) or an encoding that failed to load falls back to the
// 4-characters rule, logged, so that counting never fails a write.
func counter(ctx context.Context, name string) tokenizer.Counter {
	c, err := tokenizer.Get(tokenizer.Name(name))
	switch {
	case err == nil:
	case errors.Is(err, tokenizer.ErrFellBack) && c != nil:
		slog.Warn("token counting fell back to the 4-characters rule", "tokenizer", name, "error", err)
	default:
		c, _ = tokenizer.Get(tokenizer.Chars4)
	}
	return tokenizer.WithContext(ctx, c)
}

// countTokens counts text with the session's tokenizer, or answers ctx's
// error when the request ended while it counted.
func countTokens(ctx context.Context, tokenizerName, text string) (int, error) {
	n := counter(ctx, tokenizerName).Count(text)
	return n, ctx.Err()
}

// sessionTokenizersSize is how many sessions' tokenizer names a replica
// remembers: a few bytes each.
const sessionTokenizersSize = 10_000

// sessionTokenizers remembers each session's tokenizer as its writes saw it
// under the session's lock, so that a write can count its text before it
// takes the lock. A session's tokenizer is chosen when it opens and never
// changes, so a remembered name is the session's; the write checks it under
// the lock anyway. A session this replica has not written to is counted
// under the lock, once the session is known to be the caller's, active and
// in a turn: an id sent at random costs no counting.
type sessionTokenizers struct{ names *lru.Cache[uuid.UUID, string] }

func newSessionTokenizers() sessionTokenizers {
	names, err := lru.New[uuid.UUID, string](sessionTokenizersSize)
	if err != nil {
		panic(err) // only for a size below 1
	}
	return sessionTokenizers{names: names}
}

// known is the tokenizer a write of this replica last saw the session have,
// if one did.
func (st sessionTokenizers) known(session uuid.UUID) (string, bool) {
	return st.names.Get(session)
}

// saw remembers the tokenizer a write read under the session's lock.
func (st sessionTokenizers) saw(session uuid.UUID, name string) { st.names.Add(session, name) }

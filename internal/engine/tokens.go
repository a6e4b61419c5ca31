package engine

import (
	"errors"
	"log/slog"

	"sessiongraph/internal/tokenizer"
)

// counter returns the token counter a session names; an unknown name (which
// openSession refuses) or an encoding that failed to load falls back to the
// 4-characters rule, logged, so that counting never fails a write.
func (e *Engine) counter(name string) tokenizer.Counter {
	c, err := tokenizer.Get(tokenizer.Name(name))
	if err == nil {
		return c
	}
	if errors.Is(err, tokenizer.ErrFellBack) && c != nil {
		slog.Warn("token counting fell back to the 4-characters rule", "tokenizer", name, "error", err)
		return c
	}
	fallback, _ := tokenizer.Get(tokenizer.Chars4)
	return fallback
}

package engine

import (
	"context"
	"errors"
	"log/slog"

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

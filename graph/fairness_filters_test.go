package graph_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sessiongraph/internal/apitest"
	"sessiongraph/internal/engine"
)

// nestedOr is a filter of depth levels, each an `or` of two: the shape
// whose building cost doubled per level.
func nestedOr(depth int) map[string]any {
	if depth == 0 {
		return map[string]any{"externalKey": "k"}
	}
	return map[string]any{"or": []any{nestedOr(depth - 1), nestedOr(depth - 1)}}
}

func TestAFilterOfTooManyPredicatesIsRefusedBeforeItIsBuilt(t *testing.T) {
	s := apitest.New(t)
	// 2^11 = 2,048 leaves: over the bound, although every list has 2 items
	// and the nesting is 11 deep, well within the other limits.
	res := s.Do(t, `query($w: SessionWhereInput) { sessions(first: 1, where: $w) { totalCount } }`,
		map[string]any{"w": nestedOr(11)})
	require.Len(t, res.Errors, 1)
	assert.Equal(t, "INPUT_TOO_LARGE", res.Errors[0].Code())
	assert.Contains(t, res.Errors[0].Message, fmt.Sprint(engine.MaxPredicates))
	assert.Equal(t, "where", strings.SplitN(res.Errors[0].Extensions["field"].(string), ".", 2)[0])

	ok := s.Do(t, `query($w: SessionWhereInput) { sessions(first: 1, where: $w) { totalCount } }`,
		map[string]any{"w": nestedOr(8)})
	assert.Empty(t, ok.Errors, "256 predicates are a filter a person may build")
}

func TestASearchPatternOverTheLimitIsRefusedWithItsPath(t *testing.T) {
	s := apitest.New(t)
	long := strings.Repeat("é", engine.MaxPatternBytes) // twice the limit in bytes
	for _, where := range []map[string]any{
		{"externalKeyContainsFold": long},
		{"and": []any{map[string]any{"tenant": "a"}, map[string]any{"hasRefsWith": []any{map[string]any{"labelContains": long}}}}},
	} {
		res := s.Do(t, `query($w: SessionWhereInput) { sessions(first: 1, where: $w) { totalCount } }`, map[string]any{"w": where})
		require.Len(t, res.Errors, 1)
		e := res.Errors[0]
		assert.Equal(t, "INPUT_TOO_LARGE", e.Code())
		assert.Regexp(t, `^where\..*(externalKeyContainsFold|labelContains)$`, e.Extensions["field"])
		assert.LessOrEqual(t, len(e.Message), 400, "the message quotes at most a short start of the pattern")
	}
	ok := s.Do(t, `query($w: SessionWhereInput) { sessions(first: 1, where: $w) { totalCount } }`,
		map[string]any{"w": map[string]any{"externalKeyContainsFold": strings.Repeat("a", engine.MaxPatternBytes)}})
	assert.Empty(t, ok.Errors)
}

package graph

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// Brackets are counted outside strings, block strings and comments, and
// the count stops once past the limit.
func TestBracketDepthCountsOnlyTheQuerysOwnBrackets(t *testing.T) {
	assert.Equal(t, 3, bracketDepth(`{ a(x: {y: 1}) }`, 100))
	assert.Equal(t, 2, bracketDepth(`{ a(s: "{{{{ \" [[[") }`, 100))
	assert.Equal(t, 2, bracketDepth("{ a(s: \"\"\"{{{{\n[[[\"\"\") }", 100))
	assert.Equal(t, 1, bracketDepth("{ # {{{{{\n a }", 100))
	assert.Equal(t, 11, bracketDepth(strings.Repeat("{", 5000), 10))
}

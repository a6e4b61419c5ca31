package dashboard_test

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// kindTable is one line of internal/eventkind/kinds.txt: a kind, its flags
// and the keys of its payload.
type kindTable struct {
	kind    string
	system  bool
	payload []string
}

func readKinds(t *testing.T) []kindTable {
	t.Helper()
	raw, err := os.ReadFile("../internal/eventkind/kinds.txt")
	require.NoError(t, err)
	var kinds []kindTable
	for _, line := range strings.Split(string(raw), "\n") {
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		cols := strings.Split(line, "|")
		require.Len(t, cols, 6, "a line of kinds.txt: %s", line)
		k := kindTable{kind: strings.TrimSpace(cols[0]), system: slices.Contains(strings.Fields(cols[2]), "system")}
		for _, key := range strings.Split(cols[4], ",") {
			k.payload = append(k.payload, strings.TrimSuffix(strings.TrimSpace(key), "?"))
		}
		kinds = append(kinds, k)
	}
	return kinds
}

// The session view applies every kind of event a session has, each by a
// rule that reads only the payload keys its kind carries: a kind added to
// internal/eventkind/kinds.txt fails this test until the view says what its
// event changes (dashboard/static/js/eventchanges.js, one line a kind).
func TestEveryEventKindHasARuleOnTheSessionPage(t *testing.T) {
	t.Parallel()
	src, err := os.ReadFile("static/js/eventchanges.js")
	require.NoError(t, err)
	block := regexp.MustCompile(`(?s)\nconst rules = \{\n(.*?)\n\};\n`).FindSubmatch(src)
	require.NotNil(t, block, "eventchanges.js has its rules table")
	line := regexp.MustCompile(`^  '([a-z_.]+)': \(.*\) => .*,$`)
	key := regexp.MustCompile(`\bp\.([A-Za-z]+)`)
	rules := map[string][]string{} // kind → payload keys its rule reads
	for _, l := range strings.Split(string(block[1]), "\n") {
		m := line.FindStringSubmatch(l)
		require.NotNil(t, m, "one rule a line: %s", l)
		var keys []string
		for _, k := range key.FindAllStringSubmatch(l, -1) {
			keys = append(keys, k[1])
		}
		rules[m[1]] = keys
	}

	for _, k := range readKinds(t) {
		keys, ok := rules[k.kind]
		if k.system {
			require.False(t, ok, "%s belongs to no session: no rule", k.kind)
			continue
		}
		require.True(t, ok, "%s has a rule", k.kind)
		for _, used := range keys {
			require.Contains(t, k.payload, used, "%s's rule reads a key its payload has", k.kind)
		}
		delete(rules, k.kind)
	}
	require.Empty(t, rules, "every rule is for a kind of kinds.txt")
}

package registry

import (
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The pattern the scan replaces, kept as its reference.
var uuidPattern = regexp.MustCompile(`(?i)[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)

// The hyphen-to-hyphen scan finds exactly what the regexp finds, in texts
// built to be near misses: UUIDs glued together, cut short, with a wrong
// character, overlapping, in upper case, among runs of hyphens.
func TestUUIDScanFindsWhatThePatternFinds(t *testing.T) {
	rnd := rand.New(rand.NewPCG(13, 2))
	pieces := []string{"-", "--", "a", "F", "0", "é", "_", " ", "g",
		"3f2b1c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d", "3F2B1C4D-5E6F-4A7B-8C9D-0E1F2A3B4C5D",
		"3f2b1c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5", "3f2b1c4d5e6f-4a7b-8c9d-0e1f2a3b4c5d", "3f2b1c4d-5e6f-4a7b-8c9d-"}
	for range 20000 {
		var b strings.Builder
		for range rnd.IntN(12) {
			b.WriteString(pieces[rnd.IntN(len(pieces))])
		}
		s := b.String()
		var got [][]int
		for at := nextUUID(s, 0); at >= 0; at = nextUUID(s, at+uuidLen) {
			got = append(got, []int{at, at + uuidLen})
		}
		require.Equal(t, uuidPattern.FindAllStringIndex(s, -1), got, "in %q", s)
		require.Equal(t, uuidPattern.MatchString(s), ContainsUUID(s), "in %q", s)
		require.Equal(t, uuidPattern.ReplaceAllString(s, "<>"), replaceUUIDs(s, func(string) string { return "<>" }), "in %q", s)
	}
}

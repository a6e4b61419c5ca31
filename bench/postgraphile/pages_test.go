package main

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// PostGraphile sends a bigint as a string and a timestamp with an offset;
// sessiongraph a number and UTC. The check takes them as the same values.
func TestAPostGraphileAnswerWithItsOwnSpellingsIsTheSameAnswer(t *testing.T) {
	sg := `{"data":{"sessions":{"edges":[{"node":{"id":"0193","currentTurn":10,"lastActiveAt":"2026-11-20T09:10:00Z",
		"turns":{"edges":[{"node":{"number":1}},{"node":{"number":2}}]}}}]}}}`
	pg := `{"data":{"sessions":{"edges":[{"node":{"id":"0193","currentTurn":"10","lastActiveAt":"2026-11-20T10:10:00.000000+01:00",
		"turns":{"edges":[{"node":{"number":"1"}},{"node":{"number":"2"}}]}}}]}}}`
	nodes, err := sameAnswer([]byte(sg), []byte(pg))
	require.NoError(t, err)
	require.Equal(t, 3, nodes)
}

// A different value, a missing object or an error is named by its path.
func TestADifferentAnswerIsRefusedWithWhereItDiffers(t *testing.T) {
	sg := `{"data":{"sessions":{"edges":[{"node":{"id":"a","turns":{"edges":[{"node":{"number":1}}]}}}]}}}`
	for pg, want := range map[string]string{
		`{"data":{"sessions":{"edges":[{"node":{"id":"a","turns":{"edges":[{"node":{"number":"2"}}]}}}]}}}`: `.data.sessions.edges[0].node.turns.edges[0].node.number: 1 against 2`,
		`{"data":{"sessions":{"edges":[{"node":{"id":"a","turns":{"edges":[]}}}]}}}`:                        `.data.sessions.edges[0].node.turns.edges: a list of 1 against []`,
		`{"data":{"sessions":{"edges":[{"node":{"id":"b","turns":{"edges":[{"node":{"number":1}}]}}}]}}}`:   `.data.sessions.edges[0].node.id: a against b`,
		`{"errors":[{"message":"boom"}],"data":null}`:                                                       `not a data answer: {"errors":[{"message":"boom"}],"data":null}`,
	} {
		_, err := sameAnswer([]byte(sg), []byte(pg))
		require.EqualError(t, err, want)
	}
}

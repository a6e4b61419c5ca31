package graph

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A body decodeParams takes decodes to exactly what the stream decoder
// makes of it (numbers as json.Number, null objects nil, keys matched as
// encoding/json matches them); one it does not take gets the stream
// decoder's error.
func TestDecodeParamsDecodesAsTheStreamDecoder(t *testing.T) {
	for _, body := range []string{
		`{"query":"{ viewer { role } }","variables":null}`,
		`{"query":"query($n: Int) { sessions(first: $n) { totalCount } }","variables":{"n":12345678901234567890,"f":1.5,"l":[1,{"x":null}]}}`,
		`{"Query":"{ a }","OPERATIONNAME":"A","query":"{ b }","extensions":{"persistedQuery":{"version":1,"sha256Hash":"ab"}}}`,
		` {"query":"{ a }"} `,
		`{"extensions":{"persistedQuery":{"version":1,"sha256Hash":"ab"}}}`,
	} {
		fast, ok := decodeParams([]byte(body))
		require.True(t, ok, body)
		slow, err := decodeStream([]byte(body))
		require.NoError(t, err, body)
		assert.Equal(t, slow, fast, body)
	}
	for _, body := range []string{
		``, `{`, `[]`, `{"query":"{ a }"} {}`, `{"query":5}`, `{"variables":[]}`, `{"extensions":"x"}`, `null`,
		`{"query":"{ a }","variables":{"a":1}} x`,
	} {
		_, fastErr := decodeBody([]byte(body))
		_, slowErr := decodeStream([]byte(body))
		require.Error(t, slowErr, body)
		assert.Equal(t, slowErr.Error(), fastErr.Error(), body)
	}
}

package compiled

import (
	"bytes"
	"strings"
	"testing"

	"github.com/99designs/gqlgen/graphql"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// PostgreSQL 15's text of
// ARRAY[NULL, 'NULL', 'null', ”, ' ', 'a,b', '{x}', 'q"q', E'b\\s', E'\t\n', 'é日本', 'plain']::text
// reads back as those values, and the row after it starts where it ends.
func TestArrayElemsReadPostgreSQLsTextOfATextArray(t *testing.T) {
	text := "{NULL,\"NULL\",\"null\",\"\",\" \",\"a,b\",\"{x}\",\"q\\\"q\",\"b\\\\s\",\"\t\n\",é日本,plain},{}"
	got, rest, err := arrayElems(text, nil)
	require.NoError(t, err)
	v := func(s string) pgValue { return pgValue{s: s, valid: true} }
	e := func(s string) pgValue { return pgValue{s: s, valid: true, escaped: true} }
	assert.Equal(t, []pgValue{{}, v("NULL"), v("null"), v(""), v(" "), v("a,b"), v("{x}"), e(`q\"q`), e(`b\\s`), v("\t\n"), v("é日本"), v("plain")}, got)
	var texts []string
	for _, g := range got {
		texts = append(texts, g.text())
	}
	assert.Equal(t, []string{"", "NULL", "null", "", " ", "a,b", "{x}", `q"q`, `b\s`, "\t\n", "é日本", "plain"}, texts)
	assert.Equal(t, ",{}", rest)

	got, rest, err = arrayElems("{}}", got[:0])
	require.NoError(t, err)
	assert.Empty(t, got)
	assert.Equal(t, "}", rest)

	for _, bad := range []string{"", "{", `{"a`, "{a", "x}", `{"a"x}`} {
		_, _, err := arrayElems(bad, nil)
		assert.Error(t, err, "%q", bad)
	}
}

// A string is escaped byte for byte as gqlgen's MarshalString escapes it.
func TestAppendQuotedIsGqlgensString(t *testing.T) {
	var all []byte
	for c := range 256 {
		all = append(all, byte(c))
	}
	for _, s := range []string{"", "plain", `q"q \ b`, "\t\r\n\b\f\x00\x1f\x7f", "é日本 </script> \u2028 <&>", "\xff\xfe invalid", string(all)} {
		var want bytes.Buffer
		graphql.MarshalString(s).MarshalGQL(&want)
		assert.Equal(t, want.String(), string(appendQuoted([]byte("x"), s, false)[1:]), "%q", s)
		// The same string as an array's quoted element, its quotes and
		// backslashes escaped.
		escaped := strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s)
		assert.Equal(t, want.String(), string(appendQuoted(nil, escaped, true)), "%q", s)
	}
}

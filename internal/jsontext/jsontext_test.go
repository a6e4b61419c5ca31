package jsontext_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"

	"sessiongraph/internal/jsontext"
)

func TestInvalidTextIsFoundWithItsPath(t *testing.T) {
	for _, c := range []struct {
		doc, path string
		bad       bool
	}{
		{`{"query":"{ a }","variables":{"in":{"externalKey":"caf\u00e9 ☕ \ud83d\ude00"}}}`, "", false},
		{"{\"variables\":{\"in\":{\"externalKey\":\"a\xffb\"}}}", "variables.in.externalKey", true},
		{"{\"variables\":{\"in\":{\"externalKey\":\"\xc0\xaf\"}}}", "variables.in.externalKey", true},     // overlong '/'
		{"{\"variables\":{\"in\":{\"externalKey\":\"\xed\xa0\x80\"}}}", "variables.in.externalKey", true}, // an encoded surrogate
		{`{"variables":{"in":{"items":[1,"ok","\ud800"]}}}`, "variables.in.items[2]", true},
		{`{"variables":{"k":"\udc00\ud800"}}`, "variables.k", true},
		{`{"variables":{"k":"\ud800\u0041"}}`, "variables.k", true},
		{`{"variables":{"k":"x\ud800"}}`, "variables.k", true},
		{`{"variables":{"\ud800":"x"}}`, `variables["\ufffd"]`, true},
		{"{\"query\":\"{ a(x: \\\"\xff\\\") }\"}", "query", true},
		{`{"a":[{"b":"\\ud800"}],"c":"\"\\"}`, "", false}, // an escaped backslash, not an escape
	} {
		var v any
		if !assert.NoError(t, json.Unmarshal([]byte(c.doc), &v), c.doc) {
			continue
		}
		path, bad := jsontext.InvalidText([]byte(c.doc))
		assert.Equal(t, c.bad, bad, c.doc)
		assert.Equal(t, c.path, path, c.doc)
	}
}

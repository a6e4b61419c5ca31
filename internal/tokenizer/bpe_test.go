package tokenizer

import (
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The expected counts below were produced by this package and matched, token
// for token, by an independent implementation (js-tiktoken 1.0.21 with its
// own copy of the rank files).
var knownCounts = []struct {
	text          string
	cl100k, o200k int
}{
	{"", 0, 0},
	{"hello world", 2, 2},
	{"tiktoken is great!", 6, 6},
	{"The quick brown fox jumps over the lazy dog.", 10, 10},
	{"Hello, 世界! 🎉", 10, 6},
	{"naïve café résumé", 7, 5},
	{"func main() {\n\tfmt.Println(\"hi\")\n}\n", 10, 10},
	{"   ", 1, 1},
	// Special tokens inside a turn are text to pay for, not control tokens.
	{"<|endoftext|>", 7, 7},
	{paragraph, 400, 399},
}

func TestCL100KCountsMatchTheReferenceEncoder(t *testing.T) {
	c, err := Get(CL100K)
	require.NoError(t, err)
	assert.Equal(t, CL100K, c.Name())
	for _, tc := range knownCounts {
		assert.Equal(t, tc.cl100k, c.Count(tc.text), "text %.40q", tc.text)
	}
}

func TestO200KCountsMatchTheReferenceEncoder(t *testing.T) {
	c, err := Get(O200K)
	require.NoError(t, err)
	assert.Equal(t, O200K, c.Name())
	for _, tc := range knownCounts {
		assert.Equal(t, tc.o200k, c.Count(tc.text), "text %.40q", tc.text)
	}
}

func TestBPEEncodingsRoundTripToTheOriginalText(t *testing.T) {
	for _, name := range []Name{CL100K, O200K} {
		c, err := Get(name)
		require.NoError(t, err)
		enc := c.(bpeCounter).enc
		for _, tc := range knownCounts {
			tokens := enc.EncodeOrdinary(tc.text)
			assert.Equal(t, tc.text, enc.Decode(tokens), "%s text %.40q", name, tc.text)
		}
	}
	// The token ids themselves, as published for tiktoken's own tests.
	c, _ := Get(O200K)
	assert.Equal(t, []int{24912, 2375}, c.(bpeCounter).enc.EncodeOrdinary("hello world"))
	c, _ = Get(CL100K)
	assert.Equal(t, []int{83, 1609, 5963, 374, 2294, 0}, c.(bpeCounter).enc.EncodeOrdinary("tiktoken is great!"))
}

func TestGetLoadsEachEncodingOncePerProcess(t *testing.T) {
	for _, name := range []Name{CL100K, O200K} {
		first, err := Get(name)
		require.NoError(t, err)
		second, err := Get(name)
		require.NoError(t, err)
		assert.Same(t, first.(bpeCounter).enc, second.(bpeCounter).enc, "%s loaded twice", name)
	}
}

func TestEightGoroutinesLoadAndCountConcurrently(t *testing.T) {
	// A fresh set of encodings, so the first load itself is raced too.
	var loads sync.Map
	encs := newEncodings(func(n Name) (Counter, error) {
		calls, _ := loads.LoadOrStore(n, new(int))
		*calls.(*int)++ // safe: once.Do serialises loads of one name
		return loadBPE(n)
	})

	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 3 {
				name := []Name{CL100K, O200K, Chars4}[(g+i)%3]
				c, err := encs.get(name)
				if !assert.NoError(t, err) {
					return
				}
				for _, tc := range knownCounts {
					want := map[Name]int{CL100K: tc.cl100k, O200K: tc.o200k, Chars4: chars4Counter{}.Count(tc.text)}[name]
					assert.Equal(t, want, c.Count(tc.text), "%s text %.40q", name, tc.text)
				}
			}
		})
	}
	wg.Wait()

	for _, name := range []Name{CL100K, O200K} {
		calls, ok := loads.Load(name)
		require.True(t, ok, "%s never loaded", name)
		assert.Equal(t, 1, *calls.(*int), "%s load count", name)
	}
}

package tokenizer

import (
	"strings"
	"testing"
)

// BenchmarkCount measures one count of a ~2,000-character turn; loading is
// done before the timer starts, as it is once per process in production.
func BenchmarkCount(b *testing.B) {
	for _, name := range Known() {
		b.Run(string(name), func(b *testing.B) {
			c, err := Get(name)
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(len(paragraph)))
			b.ReportAllocs()
			for b.Loop() {
				c.Count(paragraph)
			}
		})
	}
}

// BenchmarkCountWithRegex measures the same count through tiktoken-go and
// regexp2, the path Count took before its scanners, for comparison.
func BenchmarkCountWithRegex(b *testing.B) {
	for _, name := range []Name{CL100K, O200K} {
		b.Run(string(name), func(b *testing.B) {
			c, err := Get(name)
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(len(paragraph)))
			b.ReportAllocs()
			for b.Loop() {
				c.(bpeCounter).countWithRegex(paragraph)
			}
		})
	}
}

// BenchmarkCountPrompts measures text that needs merges: code, JSON,
// tables and non-English words, where the merge cache earns its keep.
func BenchmarkCountPrompts(b *testing.B) {
	text := strings.Join(prompts, "")
	for _, name := range []Name{CL100K, O200K} {
		b.Run(string(name), func(b *testing.B) {
			c, err := Get(name)
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(len(text)))
			b.ReportAllocs()
			for b.Loop() {
				c.Count(text)
			}
		})
	}
}

// BenchmarkCountLongRun measures the worst case the run guard allows: 100 KB
// without a single space, which uncut takes about ten seconds.
func BenchmarkCountLongRun(b *testing.B) {
	c, err := Get(CL100K)
	if err != nil {
		b.Fatal(err)
	}
	text := strings.Repeat("a", 100_000)
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	for b.Loop() {
		c.Count(text)
	}
}

// BenchmarkCountLongRuns measures 128 KiB whose runs have no space: one
// letter repeated, and CJK text. Each 500-rune run is one piece to merge,
// the merge's worst case; counting runs inside beginTurn's and endTurn's
// write, so its cost is time the session's other writes wait.
func BenchmarkCountLongRuns(b *testing.B) {
	texts := map[string]string{"letter": strings.Repeat("a", 128<<10), "cjk": strings.Repeat("漢字", 128<<10/6)}
	for _, kind := range []string{"letter", "cjk"} {
		b.Run(kind, func(b *testing.B) {
			c, err := Get(CL100K)
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(len(texts[kind])))
			for b.Loop() {
				c.Count(texts[kind])
			}
		})
	}
}

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

//go:build race

package tokenizer

// raceEnabled shrinks the random corpus: under the race detector regexp2,
// the reference, runs ten times slower.
const raceEnabled = true

package tokenizer

import (
	"sync"

	"github.com/pkoukk/tiktoken-go"
	tiktoken_loader "github.com/pkoukk/tiktoken-go-loader"
)

// bpeCounter counts with a real BPE encoding.
type bpeCounter struct {
	name Name
	enc  *tiktoken.Tiktoken
}

// Count encodes text as ordinary text: a "<|endoftext|>" inside a turn is
// data to be charged for, not a control token (and tiktoken's Encode
// panics on disallowed special tokens). Runs longer than maxRun are
// encoded in cuts so that one pathological turn cannot stall a write.
func (b bpeCounter) Count(text string) int {
	n := 0
	for seg := range segments(text, maxRun) {
		if seg != "" {
			n += len(b.enc.EncodeOrdinary(seg))
		}
	}
	return n
}

// Name returns the encoding's name.
func (b bpeCounter) Name() Name { return b.name }

// offlineOnce installs the embedded rank files as tiktoken's loader. Its
// default loader downloads them, which this machine and most deployments
// cannot do; SetBpeLoader writes an unguarded global, so it runs once,
// before any load.
var offlineOnce sync.Once

// loadBPE reads an embedded encoding and builds its counter. It takes
// hundreds of milliseconds, so Get runs it at most once per name.
func loadBPE(name Name) (Counter, error) {
	offlineOnce.Do(func() { tiktoken.SetBpeLoader(tiktoken_loader.NewOfflineLoader()) })
	enc, err := tiktoken.GetEncoding(string(name))
	if err != nil {
		return nil, err // Get names the encoding when it wraps this
	}
	return bpeCounter{name: name, enc: enc}, nil
}

// AddsUpAcrossSections reports that BPE counts add up across a blank line
// followed by "##": both encodings' pre-tokenizers end a piece at a run of
// newlines before "#", so no token spans the join (see contextbuild).
func (b bpeCounter) AddsUpAcrossSections() bool { return true }

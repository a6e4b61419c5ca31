package tokenizer

import (
	"path"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/pkoukk/tiktoken-go"
	tiktoken_loader "github.com/pkoukk/tiktoken-go-loader"
)

// bpeCounter counts with a real BPE encoding.
type bpeCounter struct {
	name Name
	enc  *tiktoken.Tiktoken
	// ranks is enc's own vocabulary and pieceEnd its pattern as a scanner;
	// together they count without regexp2, which took ~85% of the time.
	// A nil ranks sends every text to enc.
	ranks    map[string]int
	pieceEnd pieceEnd
	cache    *mergeCache
	counts   *countCache
}

// Count encodes text as ordinary text: a "<|endoftext|>" inside a turn is
// data to be charged for, not a control token (and tiktoken's Encode
// panics on disallowed special tokens). Runs longer than maxRun are
// encoded in cuts so that one pathological turn cannot stall a write.
func (b bpeCounter) Count(text string) int { return b.countUntil(text, nil) }

// countUntil is Count that gives up, answering what it has counted, when
// done closes; it looks between runs of at most maxRun runes.
func (b bpeCounter) countUntil(text string, done <-chan struct{}) int {
	// tiktoken reads invalid UTF-8 as one U+FFFD per bad byte; rather than
	// imitate that, such rare text takes the original path.
	if b.ranks == nil || !utf8.ValidString(text) {
		return b.countWithRegex(text)
	}
	if !cacheable(text) {
		n, _ := b.countPieces(text, done)
		return n
	}
	if n, ok := b.counts.get(text); ok {
		return n
	}
	n, whole := b.countPieces(text, done)
	if whole {
		b.counts.put(text, n)
	}
	return n
}

// countPieces counts text piece by piece, and reports whether it counted
// all of it before done closed.
func (b bpeCounter) countPieces(text string, done <-chan struct{}) (int, bool) {
	n := 0
	for seg := range segments(text, maxRun) {
		select {
		case <-done:
			return n, false
		default:
		}
		for i := 0; i < len(seg); {
			end := b.pieceEnd(seg, i)
			if end <= i { // cannot happen (see pieceEnd), but must not loop
				return b.countWithRegex(text), true
			}
			n += pieceTokens(seg[i:end], b.ranks, b.cache)
			i = end
		}
	}
	return n, true
}

// countWithRegex is the original count, through tiktoken-go and regexp2:
// the reference the scanners are tested against.
func (b bpeCounter) countWithRegex(text string) int {
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

// AddsUpAcrossSections reports that BPE counts add up across a blank line
// followed by "##": both encodings' pre-tokenizers end a piece at a run of
// newlines before "#", so no token spans the join (see contextbuild).
func (b bpeCounter) AddsUpAcrossSections() bool { return true }

// offlineOnce installs the embedded rank files as tiktoken's loader. Its
// default loader downloads them, which this machine and most deployments
// cannot do; SetBpeLoader writes an unguarded global, so it runs once,
// before any load.
var offlineOnce sync.Once

// loadBPE reads an embedded encoding and builds its counter. It takes
// hundreds of milliseconds, so Get runs it at most once per name.
func loadBPE(name Name) (Counter, error) {
	offlineOnce.Do(func() { tiktoken.SetBpeLoader(&loaded) })
	enc, err := tiktoken.GetEncoding(string(name))
	if err != nil {
		return nil, err // Get names the encoding when it wraps this
	}
	c := bpeCounter{name: name, enc: enc, cache: new(mergeCache), counts: new(countCache)}
	switch name {
	case CL100K:
		c.pieceEnd = cl100kPieceEnd
	case O200K:
		c.pieceEnd = o200kPieceEnd
	}
	if c.pieceEnd != nil {
		c.ranks = loaded.ranks(name)
	}
	return c, nil
}

// loaded is the offline loader, keeping each vocabulary it hands tiktoken:
// tiktoken merges with that very map but does not expose it, and parsing
// the file a second time would double the load time and the memory.
var loaded rankFiles

type rankFiles struct {
	mu     sync.Mutex
	byName map[Name]map[string]int
}

// LoadTiktokenBpe implements tiktoken.BpeLoader.
func (f *rankFiles) LoadTiktokenBpe(file string) (map[string]int, error) {
	ranks, err := tiktoken_loader.NewOfflineLoader().LoadTiktokenBpe(file)
	if err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.byName == nil {
		f.byName = make(map[Name]map[string]int)
	}
	f.byName[Name(strings.TrimSuffix(path.Base(file), ".tiktoken"))] = ranks
	return ranks, nil
}

// ranks returns the vocabulary tiktoken loaded for name, or nil.
func (f *rankFiles) ranks(name Name) map[string]int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.byName[name]
}

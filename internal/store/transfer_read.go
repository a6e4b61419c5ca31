package store

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"sessiongraph/ent"
	"sessiongraph/ent/session"
	"sessiongraph/internal/apperr"
	"sessiongraph/internal/jsontext"
)

// ImportLimits are the checks an imported document's text passes, as an
// operation's arguments pass them at the API's door: the caller gives the
// API's limits.
type ImportLimits struct {
	// TextBytes bounds each string and key, decoded.
	TextBytes int
	// Nesting bounds how deep a row's column value nests objects and lists.
	Nesting int
	// RowBytes bounds one row as JSON text, and so what a row holds in
	// memory: the import holds a batch of rows at a time.
	RowBytes int
}

// ImportDocument reads an exported session's document from its start, row
// by row, so that a document of any size is imported in the memory of a
// batch of rows: first its format and schema version (ReadImport), then its
// session (Session), then the rows of its lists, in Export's order
// (ImportSession).
type ImportDocument struct {
	// Format and SchemaVersion are the document's own.
	Format        string
	SchemaVersion uint

	dec        *json.Decoder
	budget     *rowBudget
	limits     ImportLimits
	session    *ent.Session
	sessionRow json.RawMessage
	// list is the index in transferLists of the list being read (-1 before
	// the first); in is true inside its array, whose next row is index.
	list  int
	in    bool
	index int
	seen  []bool
}

// ReadImport begins to read a document from r: its format and schema
// version, which come first, before its session.
func ReadImport(r io.Reader, limits ImportLimits) (*ImportDocument, error) {
	budget := &rowBudget{r: r}
	d := &ImportDocument{dec: json.NewDecoder(budget), budget: budget, limits: limits, list: -1, seen: make([]bool, len(transferLists))}
	d.dec.UseNumber()
	if err := d.delim('{'); err != nil {
		return nil, err
	}
	for range 2 {
		key, err := d.key()
		if err != nil {
			return nil, err
		}
		var v any
		switch key {
		case "format":
			v = &d.Format
		case "schemaVersion":
			v = &d.SchemaVersion
		default:
			return nil, apperr.Invalid(key, "the document holds %q before its format and schemaVersion: an exported session begins with them", key)
		}
		if err := d.decode(key, v); err != nil {
			return nil, err
		}
	}
	return d, nil
}

// Session reads the document's session row, which follows its format and
// schema version, and checks its columns as ent checks a session's.
func (d *ImportDocument) Session() (*ent.Session, error) {
	if key, err := d.key(); err != nil || key != "session" {
		return nil, errors.Join(err, apperr.Invalid("session", "the document holds %q where its session belongs: after its format and schemaVersion", key))
	}
	raw, err := d.row("session", grownSessionColumns)
	if err != nil {
		return nil, err
	}
	var s ent.Session
	if err := json.Unmarshal(raw, &s); err != nil || s.ID == [16]byte{} {
		return nil, apperr.Invalid("session", "the document's session is not a session row: %v", err)
	}
	for _, c := range []struct {
		column string
		err    error
	}{
		{"tenant", session.TenantValidator(s.Tenant)}, {"external_key", session.ExternalKeyValidator(s.ExternalKey)},
		{"user_id", session.UserIDValidator(s.UserID)}, {"domain", session.DomainValidator(s.Domain)},
		{"status", session.StatusValidator(s.Status)}, {"current_turn", session.CurrentTurnValidator(s.CurrentTurn)},
		{"token_count", session.TokenCountValidator(s.TokenCount)}, {"failed_turns", session.FailedTurnsValidator(s.FailedTurns)},
		{"ttl_seconds", session.TTLSecondsValidator(s.TTLSeconds)}, {"event_sequence", session.EventSequenceValidator(s.EventSequence)},
	} {
		if c.err != nil {
			return nil, apperr.Invalid("session."+c.column, "session.%s: %v", c.column, c.err)
		}
	}
	d.session, d.sessionRow = &s, raw
	return d.session, nil
}

// next reads the document's next row: its list, its index there and its
// text, checked as the API checks text. It answers io.EOF after the last.
func (d *ImportDocument) next() (*transferList, int, json.RawMessage, error) {
	for {
		d.budget.reset(d.limits.RowBytes)
		if d.in {
			if d.dec.More() {
				l := &transferLists[d.list]
				i := d.index
				d.index++
				raw, err := d.row(fmt.Sprintf("%s[%d]", l.list, i), l.grown)
				return l, i, raw, err
			}
			if err := d.delim(']'); err != nil {
				return nil, 0, nil, err
			}
			d.in = false
		}
		d.budget.reset(d.limits.RowBytes)
		tok, err := d.dec.Token()
		if err != nil {
			return nil, 0, nil, d.syntax(err)
		}
		if tok == json.Delim('}') {
			if _, err := d.dec.Token(); err != io.EOF {
				return nil, 0, nil, apperr.Invalid("", "the document goes on after its end, at byte %d", d.dec.InputOffset())
			}
			return nil, 0, nil, io.EOF
		}
		key, _ := tok.(string)
		i := listIndex(key)
		switch {
		case key == "format" || key == "schemaVersion" || key == "session":
			return nil, 0, nil, apperr.Invalid(key, "the document holds %s twice", key)
		case i < 0:
			return nil, 0, nil, apperr.Invalid(key, "the document holds %q, which the format %s does not have", key, ExportFormat)
		case d.seen[i]:
			return nil, 0, nil, apperr.Invalid(key, "the document holds %s twice", key)
		case i < d.list:
			return nil, 0, nil, apperr.Invalid(key, "%s come after %s in the document: its lists are in the order %s",
				key, transferLists[d.list].list, listOrder())
		}
		d.seen[i], d.list, d.index = true, i, 0
		if err := d.delim('['); err != nil {
			return nil, 0, nil, err
		}
		d.in = true
	}
}

// row reads the next value as one row at path, checked as the API checks
// an operation's text.
func (d *ImportDocument) row(path string, grown []string) (json.RawMessage, error) {
	var raw json.RawMessage
	if err := d.decode(path, &raw); err != nil {
		return nil, err
	}
	if len(raw) > d.limits.RowBytes {
		return nil, rowTooLarge(path, d.limits.RowBytes)
	}
	if len(raw) == 0 || raw[0] != '{' {
		return nil, apperr.Invalid(path, "%s is not a row: a row is an object of its table's columns", path)
	}
	return raw, d.limits.checkText(path, raw, grown)
}

func (d *ImportDocument) key() (string, error) {
	d.budget.reset(d.limits.RowBytes)
	tok, err := d.dec.Token()
	if err != nil {
		return "", d.syntax(err)
	}
	key, ok := tok.(string)
	if !ok {
		return "", apperr.Invalid("", "the document is not an exported session: %v at byte %d, where a key was expected", tok, d.dec.InputOffset())
	}
	return key, nil
}

func (d *ImportDocument) delim(want json.Delim) error {
	d.budget.reset(d.limits.RowBytes)
	tok, err := d.dec.Token()
	if err != nil {
		return d.syntax(err)
	}
	if tok != want {
		return apperr.Invalid("", "the document is not an exported session: %v at byte %d, where %v was expected", tok, d.dec.InputOffset(), want)
	}
	return nil
}

func (d *ImportDocument) decode(path string, v any) error {
	d.budget.reset(d.limits.RowBytes)
	if err := d.dec.Decode(v); err != nil {
		if errors.Is(err, errRowTooLarge) {
			return rowTooLarge(path, d.limits.RowBytes)
		}
		return d.syntax(fmt.Errorf("%s: %w", path, err))
	}
	return nil
}

// syntax names what made the document unreadable, and where.
func (d *ImportDocument) syntax(err error) error {
	var tooLarge *apperr.Error
	switch {
	case errors.As(err, &tooLarge):
		return err
	case errors.Is(err, errRowTooLarge):
		return rowTooLarge("a key", d.limits.RowBytes)
	case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
		return apperr.Invalid("", "the document ends at byte %d, before its end: it was cut short", d.dec.InputOffset())
	}
	return apperr.Invalid("", "the document is not an exported session (at byte %d): %v", d.dec.InputOffset(), err)
}

func rowTooLarge(path string, max int) error {
	return apperr.TooLarge(path, "%s is more than %d bytes of JSON, which is more than a row may hold", path, max)
}

// grownSessionColumns are the session's columns that the server grows
// past an argument's size (checkText).
var grownSessionColumns = []string{session.FieldReasoningSummary}

// errRowTooLarge stops the decoder within a row larger than a row may be,
// before it has read the row whole.
var errRowTooLarge = errors.New("row too large")

// rowBudget is the document's reader, which lets the decoder read at most a
// row's worth of bytes for each value: the decoder reads a value whole
// before it answers, so without it one huge row would be held whole.
type rowBudget struct {
	r    io.Reader
	left int
}

// reset allows the next value n bytes beyond those the decoder has read
// ahead.
func (b *rowBudget) reset(n int) { b.left = n + 1 }

func (b *rowBudget) Read(p []byte) (int, error) {
	if b.left <= 0 {
		return 0, errRowTooLarge
	}
	if len(p) > b.left {
		p = p[:b.left]
	}
	n, err := b.r.Read(p)
	b.left -= n
	return n, err
}

// checkText refuses what the API's door refuses in an operation's text:
// bytes that are not UTF-8 (found in the raw text, before a decoder turns
// them into U+FFFD), a NUL, which PostgreSQL cannot store, a string or key
// over TextBytes, a column value nested deeper than Nesting. path names
// the row; the error names the field. The grown columns hold text the
// server wrote and grows past an argument's size (a receipt's text, a
// session's reasoning summary): only the row's size bounds them.
func (l ImportLimits) checkText(path string, raw []byte, grown []string) error {
	if at, bad := jsontext.InvalidText(raw); bad {
		at = join(path, at)
		return apperr.Invalid(at, "%s is not valid UTF-8", at)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var row map[string]any
	if err := dec.Decode(&row); err != nil {
		return apperr.Invalid(path, "%s is not a row: %v", path, err)
	}
	for column, v := range row {
		if f := l.fault(column, 0); f != nil {
			f.problem = "holds a key that " + f.problem
			return f.error(path)
		}
		within := l
		if slices.Contains(grown, column) {
			within.TextBytes = l.RowBytes
		}
		if f := within.fault(v, 1); f != nil {
			f.path = append(f.path, "."+column)
			return f.error(path)
		}
	}
	return nil
}

// textFault is a string, key or nesting that checkText refuses, and the
// path to it from its row, innermost step first.
type textFault struct {
	path    []string
	code    apperr.Code
	problem string
}

func (f *textFault) error(row string) error {
	var at strings.Builder
	at.WriteString(row)
	for i := len(f.path) - 1; i >= 0; i-- {
		at.WriteString(f.path[i])
	}
	return &apperr.Error{Code: f.code, Field: at.String(), Message: at.String() + " " + f.problem}
}

// fault finds the first string or key of v that checkText refuses; v
// nests depth deep in its row (a column's value is 1 deep).
func (l ImportLimits) fault(v any, depth int) *textFault {
	switch v := v.(type) {
	case string:
		switch {
		case len(v) > l.TextBytes:
			return &textFault{code: apperr.InputTooLarge, problem: fmt.Sprintf("is %d bytes; at most %d are allowed", len(v), l.TextBytes)}
		case strings.IndexByte(v, 0) >= 0:
			return &textFault{code: apperr.BadUserInput, problem: `contains a NUL character (\u0000), which cannot be stored: remove it`}
		}
	case map[string]any:
		if depth > l.Nesting {
			return &textFault{code: apperr.InputTooLarge, problem: fmt.Sprintf("nests more than %d objects and lists deep", l.Nesting)}
		}
		for k, x := range v {
			if f := l.fault(k, depth); f != nil {
				f.problem = "holds a key that " + f.problem
				return f
			}
			if f := l.fault(x, depth+1); f != nil {
				f.path = append(f.path, "."+k)
				return f
			}
		}
	case []any:
		if depth > l.Nesting {
			return &textFault{code: apperr.InputTooLarge, problem: fmt.Sprintf("nests more than %d objects and lists deep", l.Nesting)}
		}
		for i, x := range v {
			if f := l.fault(x, depth+1); f != nil {
				f.path = append(f.path, fmt.Sprintf("[%d]", i))
				return f
			}
		}
	}
	return nil
}

// join is the path of field (as jsontext names it) in row.
func join(row, field string) string {
	if field == "" || strings.HasPrefix(field, "[") {
		return row + field
	}
	return row + "." + field
}

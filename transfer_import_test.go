package main

import (
	"bufio"
	"bytes"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/google/uuid"
	"github.com/lib/pq"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sessiongraph/internal/apitest"
	"sessiongraph/internal/engine"
)

// document is an exported session taken apart, for a test to change.
type document map[string]any

// exportDocument exports session id of s with the binary.
func exportDocument(t *testing.T, s *apitest.Server, id string) document {
	t.Helper()
	out, stderr, code := runBinary(t, binaryEnv("DATABASE_URL="+s.DSN), "export-session", id)
	require.Equal(t, 0, code, stderr)
	dec := json.NewDecoder(strings.NewReader(out))
	dec.UseNumber()
	var d document
	require.NoError(t, dec.Decode(&d))
	return d
}

// clone is a deep copy of d.
func (d document) clone(t *testing.T) document {
	t.Helper()
	b, err := json.Marshal(d)
	require.NoError(t, err)
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var c document
	require.NoError(t, dec.Decode(&c))
	return c
}

func (d document) session() map[string]any { return d["session"].(map[string]any) }

// row is the i-th row of list (turns, refs, ...).
func (d document) row(list string, i int) map[string]any { return d[list].([]any)[i].(map[string]any) }

// rows counts the rows of list.
func (d document) rows(list string) int { return len(d[list].([]any)) }

// add appends a copy of the i-th row of list, changed by set, and answers
// its index.
func (d document) add(list string, i int, set map[string]any) int {
	row := map[string]any{}
	for k, v := range d.row(list, i) {
		row[k] = v
	}
	for k, v := range set {
		row[k] = v
	}
	d[list] = append(d[list].([]any), row)
	return len(d[list].([]any)) - 1
}

// find is the index of the row of list whose column is v.
func (d document) find(t *testing.T, list, column string, v any) int {
	t.Helper()
	for i, r := range d[list].([]any) {
		if fmt.Sprint(r.(map[string]any)[column]) == fmt.Sprint(v) {
			return i
		}
	}
	t.Fatalf("no row of %s has %s %v", list, column, v)
	return -1
}

// write writes d to a file, each replacement applied to its text, and
// answers its path.
func (d document) write(t *testing.T, replace ...string) string {
	t.Helper()
	// In the order export writes it, then any key it does not write.
	var buf bytes.Buffer
	buf.WriteByte('{')
	keys := []string{"format", "schemaVersion", "session", "sessionKeys", "turns", "refs", "artifacts", "stepResults", "turnItems", "contextReceipts", "modelCalls", "events"}
	for k := range d {
		if !slices.Contains(keys, k) {
			keys = append(keys, k)
		}
	}
	for i, k := range keys {
		v, err := json.Marshal(d[k])
		require.NoError(t, err)
		if i > 0 {
			buf.WriteByte(',')
		}
		fmt.Fprintf(&buf, "%q:%s", k, v)
	}
	buf.WriteByte('}')
	b := buf.Bytes()
	for i := 0; i+1 < len(replace); i += 2 {
		require.Contains(t, string(b), replace[i])
		b = bytes.ReplaceAll(b, []byte(replace[i]), []byte(replace[i+1]))
	}
	path := filepath.Join(t.TempDir(), "session.json")
	require.NoError(t, os.WriteFile(path, b, 0o600))
	return path
}

// sessionRows is every row of session id, each table's as JSON text, and
// its key's row: what a refused import must leave as it was.
func sessionRows(t *testing.T, db *sql.DB, id string) map[string]string {
	t.Helper()
	out := map[string]string{}
	var row string
	require.NoError(t, db.QueryRow(`SELECT to_jsonb(s)::text FROM sessions s WHERE id = $1`, id).Scan(&row))
	out["sessions"] = row
	require.NoError(t, db.QueryRow(`SELECT COALESCE(jsonb_agg(to_jsonb(k) ORDER BY k.id), '[]')::text FROM session_keys k
		WHERE k.id IN (SELECT k2.id FROM session_keys k2 JOIN sessions s ON s.tenant = k2.tenant AND s.external_key = k2.external_key WHERE s.id = $1)`, id).Scan(&row))
	out["session_keys"] = row
	for _, table := range []string{"turns", "refs", "artifacts", "step_results", "turn_items", "context_receipts", "model_calls", "events"} {
		q := fmt.Sprintf(`SELECT COALESCE(jsonb_agg(to_jsonb(r) ORDER BY r.id), '[]')::text FROM %s r WHERE r.session_id = $1`, pq.QuoteIdentifier(table))
		require.NoError(t, db.QueryRow(q, id).Scan(&row))
		out[table] = row
	}
	return out
}

// refusal is a change to a valid document that the import must refuse
// whole: its code and what its message says.
type refusal struct {
	name   string
	change func(t *testing.T, d document, victim document) (replace []string)
	code   string
	says   []string
}

// importFixture is a database with a victim session of another tenant,
// and a valid document of a session exported from another database.
type importFixture struct {
	to              *apitest.Server
	db              *sql.DB
	doc, victimDoc  document
	docID, victimID string
	marker          string
	victimBefore    map[string]string
}

func newImportFixture(t *testing.T) *importFixture {
	t.Helper()
	from := apitest.New(t)
	f := &importFixture{marker: "doc-" + uuid.NewString()}
	f.docID = seedUserSession(t, from, "acme", "u-1", f.marker)
	from.MustDo(t, `mutation($s: ID!) { recordContext(input: {sessionID: $s, node: THINK}) { receipt { id } } }`, map[string]any{"s": f.docID}, nil)
	from.MustDo(t, `mutation($s: ID!) { recordModelCall(input: {sessionID: $s, node: THINK, model: "gpt-4o", inputTokens: 900,
		outputTokens: 80, latencyMs: 700, cost: 0.0004}) { modelCall { id } } }`, map[string]any{"s": f.docID}, nil)
	f.doc = exportDocument(t, from, f.docID)
	for _, list := range []string{"sessionKeys", "turns", "refs", "artifacts", "stepResults", "turnItems", "contextReceipts", "modelCalls", "events"} {
		require.NotZero(t, f.doc.rows(list), "the document holds %s", list)
	}

	f.to = apitest.New(t)
	f.victimID = seedUserSession(t, f.to, "globex", "u-2", "victim-"+uuid.NewString())
	f.victimDoc = exportDocument(t, f.to, f.victimID)
	db, err := sql.Open("postgres", f.to.DSN)
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	f.db = db
	f.victimBefore = sessionRows(t, db, f.victimID)
	return f
}

// refuses imports the document changed by r and checks that it was
// refused whole: the victim's rows as they were, no row of the document
// anywhere.
func (f *importFixture) refuses(t *testing.T, r refusal) {
	t.Helper()
	d := f.doc.clone(t)
	replace := r.change(t, d, f.victimDoc)
	path := d.write(t, replace...)
	_, stderr, code := runBinary(t, binaryEnv("DATABASE_URL="+f.to.DSN), "import-session", "-file", path)
	assert.Equal(t, 1, code, stderr)
	assert.Contains(t, stderr, "sessiongraph import-session: "+r.code+": ")
	for _, s := range r.says {
		assert.Contains(t, stderr, s)
	}
	assert.Equal(t, f.victimBefore, sessionRows(t, f.db, f.victimID), "the victim's rows are as they were")
	assert.Equal(t, map[string]int{}, traces(t, f.db, f.marker), "no row of the document was written")
	assert.Equal(t, map[string]int{}, traces(t, f.db, f.docID), "no row names the document's session")
}

// A document whose rows name another session (another tenant's live one)
// is refused whole, naming the row and the field: the victim shows no
// injected turn, ref or event, and nothing of the document was written.
// So are rows whose ids are another session's rows', and keys that are not
// the session's own.
func TestAnImportOfRowsOfAnotherSessionIsRefusedWhole(t *testing.T) {
	f := newImportFixture(t)
	other := func(list string, i int, set map[string]any) func(*testing.T, document, document) []string {
		return func(t *testing.T, d, victim document) []string {
			set["id"] = uuid.NewString()
			set["session_id"] = f.victimID
			d.add(list, i, set)
			return nil
		}
	}
	for _, r := range []refusal{
		{name: "a turn", change: other("turns", 0, map[string]any{"number": 50, "user_message": "injected " + f.marker}),
			code: "BAD_USER_INPUT", says: []string{"turns[1].session_id is " + f.victimID + ", not the document's session " + f.docID}},
		{name: "a ref", change: other("refs", 0, map[string]any{"ref": "recipe_777", "entity_id": uuid.NewString(), "label": f.marker}),
			code: "BAD_USER_INPUT", says: []string{"refs[2].session_id is " + f.victimID}},
		{name: "an event", change: other("events", 0, map[string]any{"sequence": 999, "tenant": "globex", "payload": map[string]any{"m": f.marker}}),
			code: "BAD_USER_INPUT", says: []string{"events[" + fmt.Sprint(f.doc.rows("events")) + "].session_id is " + f.victimID}},
		{name: "a step result", change: other("stepResults", 0, map[string]any{"turn": 1, "step": 9, "description": f.marker}),
			code: "BAD_USER_INPUT", says: []string{"stepResults[" + fmt.Sprint(f.doc.rows("stepResults")) + "].session_id is " + f.victimID}},
		{name: "a receipt", change: other("contextReceipts", 0, map[string]any{"text": f.marker}),
			code: "BAD_USER_INPUT", says: []string{"contextReceipts[1].session_id is " + f.victimID}},
		{name: "a model call", change: other("modelCalls", 0, map[string]any{"model": f.marker}),
			code: "BAD_USER_INPUT", says: []string{"modelCalls[1].session_id is " + f.victimID}},
		{name: "an artifact", change: other("artifacts", 0, map[string]any{"label": f.marker}),
			code: "BAD_USER_INPUT", says: []string{"artifacts[1].session_id is " + f.victimID}},
		{name: "an artifact of the victim's ref", change: func(t *testing.T, d, victim document) []string {
			read := victim.find(t, "refs", "ref", "recipe_1")
			d.add("artifacts", 0, map[string]any{"id": uuid.NewString(), "ref_id": victim.row("refs", read)["id"], "label": f.marker})
			return nil
		}, code: "BAD_USER_INPUT", says: []string{"artifacts[1].ref_id", "is not a ref of the document"}},
		{name: "an event of another tenant", change: func(t *testing.T, d, _ document) []string {
			n := d.rows("events")
			d.add("events", n-1, map[string]any{"id": uuid.NewString(), "sequence": n + 1, "tenant": "globex", "payload": map[string]any{"m": f.marker}})
			d.session()["event_sequence"] = n + 1
			return nil
		}, code: "BAD_USER_INPUT", says: []string{fmt.Sprintf(`events[%d].tenant is "globex", not the session's tenant "acme"`, f.doc.rows("events"))}},
		{name: "the victim's key", change: func(t *testing.T, d, victim document) []string {
			key := victim.row("sessionKeys", 0)
			d.row("sessionKeys", 0)["id"] = key["id"]
			d.row("sessionKeys", 0)["tenant"] = key["tenant"]
			d.row("sessionKeys", 0)["external_key"] = key["external_key"]
			return nil
		}, code: "BAD_USER_INPUT", says: []string{"sessionKeys[0] is not the key of the document's session"}},
		{name: "the victim's id", change: func(t *testing.T, d, _ document) []string {
			return []string{f.docID, f.victimID}
		}, code: "CONFLICT", says: []string{"session " + f.victimID + " exists already in this database"}},
		{name: "the id of the victim's turn", change: func(t *testing.T, d, victim document) []string {
			d.row("turns", 0)["id"] = victim.row("turns", 0)["id"]
			d.row("turns", 0)["user_message"] = f.marker
			return nil
		}, code: "CONFLICT", says: []string{fmt.Sprintf("turns[0].id %s exists already in this database (a row of turns of another session)", f.victimDoc.row("turns", 0)["id"])}},
		{name: "the id of the victim's event, as a ref's", change: func(t *testing.T, d, victim document) []string {
			d.row("refs", 0)["id"] = victim.row("events", 0)["id"]
			return nil
		}, code: "CONFLICT", says: []string{fmt.Sprintf("refs[0].id %s exists already in this database (a row of events of another session)", f.victimDoc.row("events", 0)["id"])}},
	} {
		t.Run(r.name, func(t *testing.T) { f.refuses(t, r) })
	}

	// The document as exported imports, and the victim is as it was.
	_, stderr, code := runBinary(t, binaryEnv("DATABASE_URL="+f.to.DSN), "import-session", "-file", f.doc.write(t))
	require.Equal(t, 0, code, stderr)
	assert.Equal(t, f.victimBefore, sessionRows(t, f.db, f.victimID))
}

// Numbers are the database's: an imported session's events are numbered
// 1, 2, 3… up to its counter, its refs of each type 1, 2, 3… up to that
// type's counter, named after their type, and its turns, steps, receipts
// and events' turns come no later than its current turn and newest event.
func TestAnImportWhoseNumbersDisagreeWithItsCountersIsRefused(t *testing.T) {
	f := newImportFixture(t)
	n := f.doc.rows("events")
	for _, r := range []refusal{
		{name: "an event past its counter", change: func(t *testing.T, d, _ document) []string {
			d.row("events", n-1)["sequence"] = 999
			return nil
		}, code: "BAD_USER_INPUT", says: []string{fmt.Sprintf("events[%d].sequence is 999, where %d follows", n-1, n)}},
		{name: "an event more than the counter", change: func(t *testing.T, d, _ document) []string {
			d.add("events", n-1, map[string]any{"id": uuid.NewString(), "sequence": n + 1, "payload": map[string]any{"m": f.marker}})
			return nil
		}, code: "BAD_USER_INPUT", says: []string{fmt.Sprintf("the session's event_sequence is %d but the document holds %d events", n, n+1)}},
		{name: "a ref past its counter", change: func(t *testing.T, d, _ document) []string {
			d.add("refs", d.find(t, "refs", "ref", "recipe_1"), map[string]any{"id": uuid.NewString(), "ref": "recipe_777",
				"entity_id": uuid.NewString(), "label": f.marker})
			return nil
		}, code: "BAD_USER_INPUT", says: []string{"refs[2] is recipe_777, past the session's counter of recipe refs (1)"}},
		{name: "a counter past its refs", change: func(t *testing.T, d, _ document) []string {
			d.session()["ref_counters"] = map[string]any{"recipe": 3}
			return nil
		}, code: "BAD_USER_INPUT", says: []string{"the session's counter of recipe refs is 3 but the document holds 1 of them"}},
		{name: "a gen counter past its refs", change: func(t *testing.T, d, _ document) []string {
			d.session()["gen_counters"] = map[string]any{"meal_plan": 1, "recipe": 2}
			return nil
		}, code: "BAD_USER_INPUT", says: []string{"the session's counter of gen_recipe refs is 2 but the document holds 0 of them"}},
		{name: "a ref named for another type", change: func(t *testing.T, d, _ document) []string {
			d.row("refs", d.find(t, "refs", "ref", "recipe_1"))["entity_type"] = "meal_plan"
			return nil
		}, code: "BAD_USER_INPUT", says: []string{`is recipe_1, which is not a ref of its entity_type "meal_plan"`}},
		{name: "a turn past the current turn", change: func(t *testing.T, d, _ document) []string {
			d.add("turns", 0, map[string]any{"id": uuid.NewString(), "number": 50, "user_message": f.marker})
			return nil
		}, code: "BAD_USER_INPUT", says: []string{"turns[1] is turn 50, past the session's current turn 1"}},
		{name: "a turn numbered 0", change: func(t *testing.T, d, _ document) []string {
			d.row("turns", 0)["number"] = 0
			return nil
		}, code: "BAD_USER_INPUT", says: []string{"turns[0].number"}},
		{name: "a receipt past the newest event", change: func(t *testing.T, d, _ document) []string {
			d.row("contextReceipts", 0)["event_sequence"] = 999
			return nil
		}, code: "BAD_USER_INPUT", says: []string{fmt.Sprintf("contextReceipts[0].event_sequence is 999, past the session's event_sequence %d", n)}},
		{name: "a model call past the current turn", change: func(t *testing.T, d, _ document) []string {
			d.row("modelCalls", 0)["turn"] = 50
			return nil
		}, code: "BAD_USER_INPUT", says: []string{"modelCalls[0] is a model call of turn 50, past the session's current turn 1"}},
		{name: "an event past the current turn", change: func(t *testing.T, d, _ document) []string {
			d.row("events", n-1)["turn"] = 50
			return nil
		}, code: "BAD_USER_INPUT", says: []string{fmt.Sprintf("events[%d] is an event of turn 50, past the session's current turn 1", n-1)}},
		{name: "an event of a negative turn", change: func(t *testing.T, d, _ document) []string {
			d.row("events", 0)["turn"] = -1
			return nil
		}, code: "BAD_USER_INPUT", says: []string{"events[0].turn is -1"}},
		{name: "a model call of a receipt the document lacks", change: func(t *testing.T, d, _ document) []string {
			d.row("modelCalls", 0)["receipt_id"] = uuid.NewString()
			return nil
		}, code: "BAD_USER_INPUT", says: []string{"importing modelCalls[0…0]", "model_calls_context_receipts_model_calls"}},
		{name: "a step naming a ref the document lacks", change: func(t *testing.T, d, _ document) []string {
			d.row("stepResults", 0)["refs"] = []any{"recipe_777"}
			return nil
		}, code: "BAD_USER_INPUT", says: []string{"names ref recipe_777, which the document does not hold"}},
	} {
		t.Run(r.name, func(t *testing.T) { f.refuses(t, r) })
	}
}

// A row a document holds twice is the document's fault, and the message
// says which: not "exists already in this database".
func TestAnImportOfADocumentHoldingARowTwiceSaysWhich(t *testing.T) {
	f := newImportFixture(t)
	for _, r := range []refusal{
		{name: "a turn number", change: func(t *testing.T, d, _ document) []string {
			d.add("turns", 0, map[string]any{"id": uuid.NewString()})
			return nil
		}, code: "BAD_USER_INPUT", says: []string{"turns[1]: the document holds turn 1 twice"}},
		{name: "a row", change: func(t *testing.T, d, _ document) []string {
			d.add("turns", 0, nil)
			return nil
		}, code: "BAD_USER_INPUT", says: []string{fmt.Sprintf("turns[1]: the document holds the id %s twice", f.doc.row("turns", 0)["id"])}},
		{name: "an id in two lists", change: func(t *testing.T, d, _ document) []string {
			d.row("stepResults", 0)["id"] = d.row("turns", 0)["id"]
			return nil
		}, code: "BAD_USER_INPUT", says: []string{fmt.Sprintf("stepResults[0]: the document holds the id %s twice", f.doc.row("turns", 0)["id"])}},
		{name: "a ref", change: func(t *testing.T, d, _ document) []string {
			d.add("refs", d.find(t, "refs", "ref", "recipe_1"), map[string]any{"id": uuid.NewString(), "entity_id": uuid.NewString()})
			return nil
		}, code: "BAD_USER_INPUT", says: []string{"refs[2]: the document holds ref recipe_1 twice"}},
		{name: "an entity", change: func(t *testing.T, d, _ document) []string {
			i := d.find(t, "refs", "ref", "recipe_1")
			d.add("refs", i, map[string]any{"id": uuid.NewString(), "ref": "recipe_2"})
			d.session()["ref_counters"] = map[string]any{"recipe": 2}
			return nil
		}, code: "BAD_USER_INPUT", says: []string{fmt.Sprintf("refs[2]: the document holds two refs of entity %s", f.doc.row("refs", f.doc.find(t, "refs", "ref", "recipe_1"))["entity_id"])}},
		{name: "an artifact of one ref", change: func(t *testing.T, d, _ document) []string {
			d.add("artifacts", 0, map[string]any{"id": uuid.NewString()})
			return nil
		}, code: "BAD_USER_INPUT", says: []string{"artifacts[1]: the document holds two artifacts of ref gen_meal_plan_1"}},
		{name: "a step", change: func(t *testing.T, d, _ document) []string {
			d.add("stepResults", 0, map[string]any{"id": uuid.NewString()})
			return nil
		}, code: "BAD_USER_INPUT", says: []string{fmt.Sprintf("stepResults[%d]: the document holds step %v of turn 1 twice", f.doc.rows("stepResults"), f.doc.row("stepResults", 0)["step"])}},
		{name: "an item", change: func(t *testing.T, d, _ document) []string {
			d.add("turnItems", 0, map[string]any{"id": uuid.NewString()})
			return nil
		}, code: "BAD_USER_INPUT", says: []string{fmt.Sprintf("turnItems[%d]: the document holds item 1 of turn 1 twice", f.doc.rows("turnItems"))}},
		{name: "a list", change: func(t *testing.T, d, _ document) []string {
			return []string{`"turns":`, `"turns":[],"turns":`}
		}, code: "BAD_USER_INPUT", says: []string{"the document holds turns twice"}},
	} {
		t.Run(r.name, func(t *testing.T) { f.refuses(t, r) })
	}
}

// The command line is a door like the API: a document's text passes the
// same checks as an operation's arguments (raw-byte UTF-8, no NUL, each
// string at most engine.MaxTextBytes bytes), and names its row and field.
func TestAnImportChecksItsTextAsTheAPIDoes(t *testing.T) {
	f := newImportFixture(t)
	message := func(t *testing.T, d, _ document) string {
		i := d.find(t, "turns", "number", 1)
		d.row("turns", i)["user_message"] = "MESSAGE-" + f.marker
		return "MESSAGE-" + f.marker
	}
	for _, r := range []refusal{
		{name: "an invalid byte", change: func(t *testing.T, d, v document) []string {
			return []string{message(t, d, v), "a\xffb " + f.marker}
		}, code: "BAD_USER_INPUT", says: []string{"turns[0].user_message is not valid UTF-8"}},
		{name: "a lone surrogate", change: func(t *testing.T, d, v document) []string {
			return []string{message(t, d, v), `a\ud800b ` + f.marker}
		}, code: "BAD_USER_INPUT", says: []string{"turns[0].user_message is not valid UTF-8"}},
		{name: "a NUL", change: func(t *testing.T, d, v document) []string {
			return []string{message(t, d, v), `a\u0000b ` + f.marker}
		}, code: "BAD_USER_INPUT", says: []string{`turns[0].user_message contains a NUL character (\u0000)`}},
		{name: "a string over the limit", change: func(t *testing.T, d, v document) []string {
			return []string{message(t, d, v), strings.Repeat("x", engine.MaxTextBytes+1) + f.marker}
		}, code: "INPUT_TOO_LARGE", says: []string{fmt.Sprintf("turns[0].user_message is %d bytes; at most %d are allowed", engine.MaxTextBytes+1+len(f.marker), engine.MaxTextBytes)}},
		{name: "a tenant that does not show", change: func(t *testing.T, d, _ document) []string {
			d.session()["tenant"] = "ac\u200bme"
			return nil
		}, code: "BAD_USER_INPUT", says: []string{"session.tenant holds the invisible or control character U+200B"}},
		{name: "a list out of order", change: func(t *testing.T, d, _ document) []string {
			return []string{`"artifacts":`, `"events":[],"artifacts":`}
		}, code: "BAD_USER_INPUT", says: []string{"artifacts come after events in the document: its lists are in the order sessionKeys, turns, refs, artifacts, stepResults, turnItems, contextReceipts, modelCalls, events"}},
		{name: "a list the format lacks", change: func(t *testing.T, d, _ document) []string {
			d["comments"] = []any{}
			return nil
		}, code: "BAD_USER_INPUT", says: []string{`the document holds "comments", which the format sessiongraph.session/v1 does not have`}},
	} {
		t.Run(r.name, func(t *testing.T) { f.refuses(t, r) })
	}

	// The text the server itself grows past an argument's limit, a
	// receipt's text and the session's reasoning summary, is bounded by
	// its row's size only.
	d := f.doc.clone(t)
	long := strings.Repeat("y", engine.MaxTextBytes+1)
	d.row("contextReceipts", 0)["text"] = long
	d.session()["reasoning_summary"] = long
	_, stderr, code := runBinary(t, binaryEnv("DATABASE_URL="+f.to.DSN), "import-session", "-file", d.write(t))
	require.Equal(t, 0, code, stderr)
	var n int
	require.NoError(t, f.db.QueryRow(`SELECT length(s.reasoning_summary) + length(r.text) FROM sessions s JOIN context_receipts r ON r.session_id = s.id
		WHERE s.id = $1`, f.docID).Scan(&n))
	assert.Equal(t, 2*len(long), n)
}

// writeLargeDocument writes d with turns more turns, each holding about
// 8 KB of text, streamed to a file (the test holds no large document
// itself), and answers its path and size.
func writeLargeDocument(t *testing.T, d document, turns int) (string, int64) {
	t.Helper()
	d = d.clone(t)
	current := d.session()["current_turn"].(json.Number)
	first, err := current.Int64()
	require.NoError(t, err)
	d.session()["current_turn"] = first + int64(turns)
	path := filepath.Join(t.TempDir(), "large.json")
	file, err := os.Create(path)
	require.NoError(t, err)
	defer file.Close()
	w := bufio.NewWriter(file)
	text := strings.Repeat("The user asked for a recipe with what is in the fridge. ", 146)
	for i, k := range []string{"format", "schemaVersion", "session", "sessionKeys", "turns", "refs", "artifacts", "stepResults", "turnItems", "contextReceipts", "modelCalls", "events"} {
		if i > 0 {
			w.WriteByte(',')
		} else {
			w.WriteByte('{')
		}
		v, err := json.Marshal(d[k])
		require.NoError(t, err)
		if k != "turns" {
			fmt.Fprintf(w, "%q:%s", k, v)
			continue
		}
		fmt.Fprintf(w, "%q:%s", k, v[:len(v)-1])
		for n := range turns {
			row := map[string]any{}
			for c, v := range d.row("turns", 0) {
				row[c] = v
			}
			row["id"], row["number"], row["assistant_summary"] = uuid.NewString(), first+1+int64(n), text
			b, err := json.Marshal(row)
			require.NoError(t, err)
			w.WriteByte(',')
			w.Write(b)
		}
		w.WriteByte(']')
	}
	w.WriteByte('}')
	require.NoError(t, w.Flush())
	info, err := file.Stat()
	require.NoError(t, err)
	return path, info.Size()
}

// importPeak imports the document at path with the binary and answers
// the most memory the process held (its peak resident set, which the
// kernel counts whatever the machine's load).
func importPeak(t *testing.T, dsn, path string) int64 {
	t.Helper()
	cmd := exec.Command(binaryPath, "import-session", "-file", path)
	cmd.Env = binaryEnv("DATABASE_URL=" + dsn)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	return cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss << 10
}

// An import streams its document: one five times larger takes no more
// memory but the same batch of rows (it took seven times the document's
// size when the document was read whole).
func TestAnImportTakesTheMemoryOfABatchWhateverTheDocumentsSize(t *testing.T) {
	from := apitest.New(t)
	d := exportDocument(t, from, seedUserSession(t, from, "acme", "u-1", "large-"+uuid.NewString()))

	smallPath, small := writeLargeDocument(t, d, 1000)
	largePath, large := writeLargeDocument(t, d, 5000)
	smallPeak := importPeak(t, apitest.New(t).DSN, smallPath)
	largePeak := importPeak(t, apitest.New(t).DSN, largePath)
	t.Logf("a document of %d MB took %d MB at most, one of %d MB %d MB", small>>20, smallPeak>>20, large>>20, largePeak>>20)
	assert.Less(t, largePeak-smallPeak, (large-small)/4,
		"a document %d MB larger takes %d MB more", (large-small)>>20, (largePeak-smallPeak)>>20)
}

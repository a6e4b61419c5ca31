package engine

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/google/uuid"

	"sessiongraph/ent/turn"
	"sessiongraph/internal/contextbuild"
)

// The turns a build shows are read, as its refs are (entriesread.go), by
// one statement of a fixed shape scanned into the build's own Turn: ent's
// generic read of them (every column built into the statement, a scanner
// allocated per column per row, then copied into an ent.Turn) was most of
// a chat read's allocations. TestAPatchedBuildIsTheBuildMadeFromTheRows
// compares the two reads, every node's, after every write of its random
// sessions.

// shownTurnsStatements are the statements of a turnsQuery, by the bits
// its statement sets: 1 the execution summaries (every node but MESSAGES
// shows them), 2 only turns before a number (a page of a SLIDING_WINDOW
// read), 4 a limit, 8 confined to a tenant. A failed turn is not part of
// the conversation an LLM is shown; the newest come first, from the
// (session_id, number) index.
var shownTurnsStatements = func() (out [16]string) {
	for i := range out {
		n := 1
		next := func() string { n++; return "$" + strconv.Itoa(n) }
		q := `SELECT t.number, t.user_message, t.assistant_message, t.status = '` + string(turn.StatusOpen) + `', t.user_tokens, t.assistant_tokens, t.item_count`
		if i&1 != 0 {
			q += `, t.assistant_summary, t.execution_summary`
		}
		q += `
FROM turns AS t
WHERE t.session_id = $1 AND t.status <> '` + string(turn.StatusFailed) + `'`
		if i&2 != 0 {
			q += ` AND t.number < ` + next()
		}
		limit := ""
		if i&4 != 0 {
			limit = `
LIMIT ` + next()
		}
		if i&8 != 0 {
			q += `
	AND t.session_id IN (SELECT sessions.id FROM sessions WHERE sessions.tenant = ` + next() + `)`
		}
		out[i] = q + `
ORDER BY t.number DESC` + limit
	}
	return out
}()

// turnsQuery is a read of the turns a build shows: the turns of a
// session, with their execution summaries when summaries is set, only
// those numbered below before when it is above 0, at most limit when it is
// above 0, confined to tenant when it names one (as access.Confine confines
// ent's queries).
type turnsQuery struct {
	session   uuid.UUID
	summaries bool
	before    int
	limit     int
	tenant    string
}

// statement is q's statement and its arguments.
func (q turnsQuery) statement() (string, []any) {
	args, shape := []any{q.session}, 0
	if q.summaries {
		shape |= 1
	}
	if q.before > 0 {
		args, shape = append(args, q.before), shape|2
	}
	if q.limit > 0 {
		args, shape = append(args, q.limit), shape|4
	}
	if q.tenant != "" {
		args, shape = append(args, q.tenant), shape|8
	}
	return shownTurnsStatements[shape], args
}

// scanTurns scans the rows of q's statement, newest first, and closes them.
func scanTurns(rows *sql.Rows, q turnsQuery) ([]contextbuild.Turn, error) {
	defer rows.Close()
	turns := make([]contextbuild.Turn, 0, q.limit)
	// One set of scan targets for all the rows.
	var (
		t       contextbuild.Turn
		summary []byte
	)
	dest := []any{&t.Number, &t.UserMessage, &t.AssistantMessage, &t.Open, &t.UserTokens, &t.AssistantTokens, &t.ItemCount}
	if q.summaries {
		dest = append(dest, &t.AssistantSummary, &summary)
	}
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			return nil, err
		}
		row := t
		if len(summary) > 0 { // NULL: no summary, as ent reads it
			if err := json.Unmarshal(summary, &row.Summary); err != nil {
				return nil, fmt.Errorf("the execution summary of turn %d: %w", row.Number, err)
			}
		}
		turns = append(turns, row)
	}
	return turns, rows.Err()
}

package engine

// This file follows a fact through the prompts recorded as receipts: which
// builds held it, and the first build that lost it.

import (
	"context"
	"encoding/base64"
	"hash/fnv"
	"io"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"entgo.io/ent/dialect/sql"
	"github.com/google/uuid"

	"sessiongraph/ent"
	"sessiongraph/ent/contextreceipt"
	"sessiongraph/ent/session"
	"sessiongraph/internal/access"
	"sessiongraph/internal/apperr"
	"sessiongraph/internal/contextbuild"
)

// Limits of a fact search: each call reads a bounded number of receipts,
// whatever the sessions hold, and pages on from where it stopped.
const (
	// MaxFactBytes bounds the text or ref followed.
	MaxFactBytes = 1000
	// MaxTraceReceipts is how many of a session's receipts a trace reads.
	MaxTraceReceipts = 2000
	// FactScanReceipts is how many receipts a search across sessions reads
	// per page.
	FactScanReceipts = 2000
)

// Fact is what to follow: a text, matched ignoring case, or a ref, held by a
// build that names it as a whole word or lists it in a tier.
type Fact struct {
	Text string
	Ref  string
}

// FactTrace is where a fact stood in a session's recorded builds.
type FactTrace struct {
	// Receipts are the builds read, oldest first.
	Receipts []FactReceipt
	// FirstLoss is the first build that lost the fact after an earlier build
	// of the same node held it; nil when none did.
	FirstLoss *FactLoss
	// More is true when the session has more receipts than a trace reads.
	More bool
}

// FactReceipt is one recorded build and whether it held the fact: nil when
// its text was not kept (hash only, or past retention) and no tier tells.
type FactReceipt struct {
	ID   uuid.UUID
	Turn int
	Node contextbuild.Node
	Held *bool
}

// FactLoss names the build that last held a fact and the next build of the
// same node, which did not.
type FactLoss struct {
	HeldIn, LostIn FactReceipt
}

// held is the SQL that tells whether a receipt (columns of t) held a fact.
// A ref is held by a build that lists it in a tier, whatever became of the
// text, or that names it anywhere in its text, in whatever notation its
// node uses (THINK's `recipe_1`, UNDERSTAND's table cell | recipe_1 |): as
// a whole word, so neither recipe_10 nor gen_recipe_1 is recipe_1. NULL
// when the text is needed and was not kept.
func (f Fact) held(t *sql.Selector) *sql.Predicate {
	text := t.C(contextreceipt.FieldText)
	if f.Text != "" {
		return sql.P(func(b *sql.Builder) {
			b.WriteString("strpos(lower(" + text + "), lower(").Arg(f.Text).WriteString(")) > 0")
		})
	}
	return sql.P(func(b *sql.Builder) {
		b.WriteString("CASE WHEN ")
		for i, tier := range []string{"active", "generated", "retained"} {
			if i > 0 {
				b.WriteString(" OR ")
			}
			b.WriteString("(" + t.C(contextreceipt.FieldTiers) + " -> '" + tier + "') @> jsonb_build_array(").Arg(f.Ref).WriteString("::text)")
		}
		// strpos first: the pattern is tried only on texts that contain the ref.
		b.WriteString(" THEN true ELSE strpos(" + text + ", ").Arg(f.Ref).
			WriteString(") > 0 AND " + text + " ~ ").Arg(refWord(f.Ref)).WriteString(" END")
	})
}

// refWord is the PostgreSQL pattern of a ref as a whole word: not preceded
// or followed by a letter, a digit or an underscore, which refs are made of.
func refWord(ref string) string {
	// QuoteMeta's escapes (a backslash before punctuation) mean the same in
	// PostgreSQL's regular expressions.
	return `(^|[^[:alnum:]_])` + regexp.QuoteMeta(ref) + `($|[^[:alnum:]_])`
}

func (f Fact) check() error {
	switch {
	case (f.Text == "") == (f.Ref == ""):
		return apperr.Invalid("fact", "give either text or ref, not both and not neither")
	case len(f.Text) > MaxFactBytes || len(f.Ref) > MaxFactBytes:
		return apperr.TooLarge("fact", "a fact is at most %d bytes", MaxFactBytes)
	case !utf8.ValidString(f.Text) || !utf8.ValidString(f.Ref):
		return apperr.Invalid("fact", "the fact is not valid UTF-8")
	}
	return nil
}

// factRow is one receipt as a fact query reads it: no text, only whether
// it held the fact.
type factRow struct {
	ID        uuid.UUID `json:"id"`
	SessionID uuid.UUID `json:"session_id"`
	Turn      int       `json:"turn"`
	Node      string    `json:"node"`
	CreatedAt time.Time `json:"created_at"`
	Held      *bool     `json:"held"`
}

// readFacts runs q (receipts, confined to the caller's tenant by the
// interceptors) for the columns of factRow.
func readFacts(ctx context.Context, q *ent.ContextReceiptQuery, f Fact) ([]factRow, error) {
	var rows []factRow
	err := q.Modify(func(s *sql.Selector) {
		s.Select(s.C(contextreceipt.FieldID), s.C(contextreceipt.FieldSessionID), s.C(contextreceipt.FieldTurn),
			s.C(contextreceipt.FieldNode), s.C(contextreceipt.FieldCreatedAt))
		s.AppendSelectExprAs(f.held(s), "held")
	}).Scan(ctx, &rows)
	return rows, err
}

// TraceFact follows a fact through a session's recorded builds of the
// given nodes (every node when none), oldest first: whether each held it,
// and the first that lost it after an earlier build of its node held it.
func (rc *Receipts) TraceFact(ctx context.Context, s *ent.Session, f Fact, nodes []contextbuild.Node) (*FactTrace, error) {
	if err := f.check(); err != nil {
		return nil, err
	}
	q := rc.client.ContextReceipt.Query().Where(contextreceipt.SessionID(s.ID)).
		Order(ent.Asc(contextreceipt.FieldTurn), ent.Asc(contextreceipt.FieldCreatedAt), ent.Asc(contextreceipt.FieldID)).
		Limit(MaxTraceReceipts + 1)
	if len(nodes) > 0 {
		q.Where(contextreceipt.NodeIn(nodes...))
	}
	rows, err := readFacts(ctx, q, f)
	if err != nil {
		return nil, err
	}
	t := &FactTrace{}
	if len(rows) > MaxTraceReceipts {
		rows, t.More = rows[:MaxTraceReceipts], true
	}
	lastHeld := map[contextbuild.Node]*FactReceipt{}
	for _, r := range rows {
		fr := FactReceipt{ID: r.ID, Turn: r.Turn, Node: contextbuild.Node(r.Node), Held: r.Held}
		t.Receipts = append(t.Receipts, fr)
		switch {
		case r.Held == nil:
		case *r.Held:
			lastHeld[fr.Node] = &t.Receipts[len(t.Receipts)-1]
		case lastHeld[fr.Node] != nil && t.FirstLoss == nil:
			t.FirstLoss = &FactLoss{HeldIn: *lastHeld[fr.Node], LostIn: fr}
		}
	}
	return t, nil
}

// FactSearch is one page of sessions whose recorded builds held a text.
type FactSearch struct {
	// SessionIDs are the sessions found in this page, most recent build first.
	SessionIDs []uuid.UUID
	// Scanned is how many receipts the page read.
	Scanned int
	// Next, passed back as after, continues the search with older
	// receipts; nil when none are left.
	Next *string
}

// factCursor is where a search across sessions stopped: the last receipt
// it read, newest first, and a tag of the search that handed it out.
type factCursor struct {
	CreatedAt time.Time
	ID        uuid.UUID
	Search    string // factSearchTag of the search
}

// factSearchTag names a search: its tenant, node and fact. A cursor is a
// position in one search's receipts; in another search (another fact,
// node or tenant) it is refused rather than read as a position there.
func factSearchTag(tenant string, f Fact, node contextbuild.Node) string {
	h := fnv.New64a()
	for _, part := range []string{tenant, string(node), f.Text, f.Ref} {
		_, _ = io.WriteString(h, part)
		_, _ = h.Write([]byte{0})
	}
	return strconv.FormatUint(h.Sum64(), 16)
}

// SearchFact finds the sessions whose builds of node held a fact, reading
// at most FactScanReceipts receipts from the newest (or from after), so
// that a page costs the same at any size; a search goes on page by page.
// The caller's tenant confines the receipts read.
func (rc *Receipts) SearchFact(ctx context.Context, f Fact, node contextbuild.Node, afterCursor *string) (*FactSearch, error) {
	if err := f.check(); err != nil {
		return nil, err
	}
	tenant, err := access.TenantScope(ctx)
	if err != nil {
		return nil, err
	}
	search := factSearchTag(tenant, f, node)
	after, err := parseFactCursor(afterCursor, search)
	if err != nil {
		return nil, err
	}
	q := rc.client.ContextReceipt.Query().Where(contextreceipt.NodeEQ(node)).
		Order(ent.Desc(contextreceipt.FieldCreatedAt), ent.Desc(contextreceipt.FieldID)).Limit(FactScanReceipts)
	if after != nil {
		q.Where(contextreceipt.Or(contextreceipt.CreatedAtLT(after.CreatedAt),
			contextreceipt.And(contextreceipt.CreatedAt(after.CreatedAt), contextreceipt.IDLT(after.ID))))
	}
	rows, err := readFacts(ctx, q, f)
	if err != nil {
		return nil, err
	}
	out := &FactSearch{Scanned: len(rows)}
	found := map[uuid.UUID]bool{}
	for _, r := range rows {
		if r.Held != nil && *r.Held && !found[r.SessionID] {
			found[r.SessionID] = true
			out.SessionIDs = append(out.SessionIDs, r.SessionID)
		}
	}
	if len(rows) == FactScanReceipts {
		last := rows[len(rows)-1]
		next := (&factCursor{CreatedAt: last.CreatedAt, ID: last.ID, Search: search}).String()
		out.Next = &next
	}
	return out, nil
}

// String is the cursor as a client passes it back: opaque, URL-safe.
func (c *factCursor) String() string {
	return base64.RawURLEncoding.EncodeToString([]byte(c.CreatedAt.UTC().Format(time.RFC3339Nano) + " " + c.ID.String() + " " + c.Search))
}

// parseFactCursor reads a cursor String gave for the search tagged search;
// nil for nil. Only the spelling String writes is read, and a cursor of
// another search is refused.
func parseFactCursor(s *string, search string) (*factCursor, error) {
	if s == nil {
		return nil, nil
	}
	bad := &apperr.Error{Code: apperr.InvalidCursor, Field: "after",
		Message: "this is not a cursor a fact search gave: pass its next back unchanged"}
	raw, err := base64.RawURLEncoding.Strict().DecodeString(*s)
	if err != nil {
		return nil, bad
	}
	parts := strings.Split(string(raw), " ")
	if len(parts) != 3 {
		return nil, bad
	}
	c := &factCursor{Search: parts[2]}
	if c.CreatedAt, err = time.Parse(time.RFC3339Nano, parts[0]); err != nil {
		return nil, bad
	}
	if c.ID, err = uuid.Parse(parts[1]); err != nil {
		return nil, bad
	}
	if c.String() != *s {
		return nil, bad
	}
	if c.Search != search {
		return nil, &apperr.Error{Code: apperr.InvalidCursor, Field: "after",
			Message: "this cursor was handed out by a search for another fact, node or tenant: pass back the next of the same search"}
	}
	return c, nil
}

// FactSessions returns the sessions a search page found, in its order.
func (rc *Receipts) FactSessions(ctx context.Context, f *FactSearch) ([]*ent.Session, error) {
	if len(f.SessionIDs) == 0 {
		return []*ent.Session{}, nil
	}
	rows, err := rc.client.Session.Query().Where(session.IDIn(f.SessionIDs...)).All(ctx)
	if err != nil {
		return nil, err
	}
	byID := make(map[uuid.UUID]*ent.Session, len(rows))
	for _, s := range rows {
		byID[s.ID] = s
	}
	out := make([]*ent.Session, 0, len(rows))
	for _, id := range f.SessionIDs {
		if s := byID[id]; s != nil {
			out = append(out, s)
		}
	}
	return out, nil
}

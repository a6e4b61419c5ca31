package store

import (
	"database/sql"
	"errors"

	"github.com/google/uuid"

	"sessiongraph/ent/artifact"
	"sessiongraph/ent/contextreceipt"
	"sessiongraph/ent/event"
	"sessiongraph/ent/modelcall"
	"sessiongraph/ent/ref"
	"sessiongraph/ent/sessionkey"
	"sessiongraph/ent/stepresult"
	"sessiongraph/ent/turn"
	"sessiongraph/ent/turnitem"
	"sessiongraph/internal/apperr"
	"sessiongraph/internal/registry"
)

// transferList is one list of rows of an exported document: its name
// there, its table, the order export writes its rows in, and the rules an
// imported row of it follows beyond belonging to its session.
type transferList struct {
	list, table, order string
	// grown are the columns whose text the server wrote and grows past an
	// argument's size limit (checkText).
	grown []string
	// check applies the list's rules to a row, before it is written.
	check func(im *importer, at string, r *rowKeys) error
	// twice names the unique key of its table that a row the database
	// skipped holds: the key of a row the document holds before it (the
	// session is new here, so nothing else can hold its keys).
	twice func(im *importer, at string, r *rowKeys) error
}

// transferLists are the lists of rows of a session, in the order of the
// document and of an import (a row's references first).
var transferLists = []transferList{
	{list: "sessionKeys", table: sessionkey.Table, order: "r.id", check: checkKey, twice: keyTwice},
	{list: "turns", table: turn.Table, order: "r.id", check: checkTurn, twice: turnTwice},
	{list: "refs", table: ref.Table, order: "r.id", check: checkRef, twice: refTwice},
	{list: "artifacts", table: artifact.Table, order: "r.id", check: checkArtifact, twice: artifactTwice},
	{list: "stepResults", table: stepresult.Table, order: "r.id", check: checkStep, twice: stepTwice},
	{list: "turnItems", table: turnitem.Table, order: "r.id", check: checkItem, twice: itemTwice},
	{list: "contextReceipts", table: contextreceipt.Table, order: "r.id", grown: []string{contextreceipt.FieldText}, check: checkReceipt, twice: anotherTwice},
	{list: "modelCalls", table: modelcall.Table, order: "r.id", check: checkModelCall, twice: anotherTwice},
	{list: "events", table: event.Table, order: "r.sequence", check: checkEvent, twice: anotherTwice},
}

func listIndex(list string) int {
	for i, l := range transferLists {
		if l.list == list {
			return i
		}
	}
	return -1
}

func listOrder() string {
	var s string
	for i, l := range transferLists {
		if i > 0 {
			s += ", "
		}
		s += l.list
	}
	return s
}

// rowKeys are the columns of an imported row that tie it to its session
// and number it; the rest of the row is carried as it is.
type rowKeys struct {
	ID            uuid.UUID  `json:"id"`
	SessionID     uuid.UUID  `json:"session_id"`
	Tenant        string     `json:"tenant"`
	ExternalKey   string     `json:"external_key"`
	Number        int        `json:"number"`
	Status        string     `json:"status"`
	Ref           string     `json:"ref"`
	EntityType    string     `json:"entity_type"`
	EntityID      *uuid.UUID `json:"entity_id"`
	Action        string     `json:"action"`
	RefID         uuid.UUID  `json:"ref_id"`
	Turn          int        `json:"turn"`
	Step          int        `json:"step"`
	Position      int        `json:"position"`
	Revision      int        `json:"revision"`
	Kind          string     `json:"kind"`
	Sequence      int64      `json:"sequence"`
	EventSequence int64      `json:"event_sequence"`
}

// valid runs ent's checks of a row's columns, which a row written as the
// document has it would skip.
func valid(at string, checks ...columnCheck) error {
	for _, c := range checks {
		if c.err != nil {
			return apperr.Invalid(at+"."+c.column, "%s.%s is %v: %v", at, c.column, c.value, c.err)
		}
	}
	return nil
}

type columnCheck struct {
	column string
	value  any
	err    error
}

// A session's key is its own: the document cannot point another key at it.
func checkKey(im *importer, at string, r *rowKeys) error {
	s := im.session
	if r.ID != KeyID(s.Tenant, s.ExternalKey) || r.Tenant != s.Tenant || r.ExternalKey != s.ExternalKey {
		return apperr.Invalid(at, "%s is not the key of the document's session (tenant %q, external key %q): a document carries its session's own key only",
			at, s.Tenant, s.ExternalKey)
	}
	return nil
}

func keyTwice(im *importer, at string, r *rowKeys) error {
	var named uuid.UUID
	if err := im.queryRow(`SELECT session_id FROM session_keys WHERE id = $1`, []any{r.ID}, &named); err != nil {
		return err
	}
	if named == im.session.ID {
		return apperr.Invalid(at, "%s: the document holds its session's key twice", at)
	}
	return apperr.New(apperr.Conflict, "the session's key (tenant %q, external key %q) names session %s in this database: a key names one session",
		im.session.Tenant, im.session.ExternalKey, named)
}

// A turn's number comes from the session's counter, current_turn.
func checkTurn(im *importer, at string, r *rowKeys) error {
	if err := valid(at, columnCheck{"number", r.Number, turn.NumberValidator(r.Number)},
		columnCheck{"status", r.Status, turn.StatusValidator(turn.Status(r.Status))}); err != nil {
		return err
	}
	if r.Number > im.session.CurrentTurn {
		return apperr.Invalid(at+".number", "%s is turn %d, past the session's current turn %d: the session's counter numbers its turns",
			at, r.Number, im.session.CurrentTurn)
	}
	return nil
}

func turnTwice(im *importer, at string, r *rowKeys) error {
	if found, err := im.exists(`SELECT EXISTS (SELECT 1 FROM turns WHERE session_id = $1 AND number = $2)`, r.Number); found || err != nil {
		return orErr(err, apperr.Invalid(at, "%s: the document holds turn %d twice", at, r.Number))
	}
	if r.Status == string(turn.StatusOpen) {
		return apperr.Invalid(at, "%s: the document holds two open turns: a session has at most one, its current turn", at)
	}
	return anotherTwice(im, at, r)
}

// A ref is named after its type and number, and its number comes from its
// type's counter on the session: refs of a type are numbered 1, 2, 3…
// without gaps up to the counter (finish counts them).
func checkRef(im *importer, at string, r *rowKeys) error {
	if err := valid(at, columnCheck{"ref", r.Ref, ref.RefValidator(r.Ref)}, columnCheck{"entity_type", r.EntityType, ref.EntityTypeValidator(r.EntityType)},
		columnCheck{"action", r.Action, ref.ActionValidator(r.Action)}); err != nil {
		return err
	}
	p, ok := registry.ParseRef(r.Ref)
	if !ok || p.EntityType != r.EntityType {
		return apperr.Invalid(at+".ref", "%s is %s, which is not a ref of its entity_type %q: a ref is its type and number (%s), or gen_ and those for a generated entity",
			at, r.Ref, r.EntityType, registry.RefName(r.EntityType, 1))
	}
	counters, counter := im.session.RefCounters, p.EntityType
	if p.Generated {
		counters, counter = im.session.GenCounters, "gen_"+p.EntityType
	}
	if n := counters[p.EntityType]; p.N > n {
		return apperr.Invalid(at+".ref", "%s is %s, past the session's counter of %s refs (%d): a ref's number comes from its type's counter",
			at, r.Ref, counter, n)
	}
	im.refs[counter]++
	return nil
}

func refTwice(im *importer, at string, r *rowKeys) error {
	if found, err := im.exists(`SELECT EXISTS (SELECT 1 FROM refs WHERE session_id = $1 AND ref = $2)`, r.Ref); found || err != nil {
		return orErr(err, apperr.Invalid(at, "%s: the document holds ref %s twice", at, r.Ref))
	}
	if r.EntityID != nil {
		if found, err := im.exists(`SELECT EXISTS (SELECT 1 FROM refs WHERE session_id = $1 AND entity_id = $2)`, *r.EntityID); found || err != nil {
			return orErr(err, apperr.Invalid(at, "%s: the document holds two refs of entity %s: a session has one ref per entity", at, *r.EntityID))
		}
	}
	return anotherTwice(im, at, r)
}

// An artifact is the content of a ref of its session (flush checks its
// ref_id against the refs written before it).
func checkArtifact(_ *importer, at string, r *rowKeys) error {
	return valid(at, columnCheck{"entity_type", r.EntityType, artifact.EntityTypeValidator(r.EntityType)},
		columnCheck{"status", r.Status, artifact.StatusValidator(artifact.Status(r.Status))},
		columnCheck{"revision", r.Revision, artifact.RevisionValidator(r.Revision)})
}

func artifactTwice(im *importer, at string, r *rowKeys) error {
	var name string
	if err := im.queryRow(`SELECT ref FROM refs WHERE session_id = $1 AND id = $2 AND EXISTS (SELECT 1 FROM artifacts WHERE session_id = $1 AND ref_id = $2)`,
		[]any{im.session.ID, r.RefID}, &name); !errors.Is(err, sql.ErrNoRows) {
		return orErr(err, apperr.Invalid(at, "%s: the document holds two artifacts of ref %s: a ref has one", at, name))
	}
	return anotherTwice(im, at, r)
}

// A step belongs to a turn the session has numbered.
func checkStep(im *importer, at string, r *rowKeys) error {
	if err := valid(at, columnCheck{"turn", r.Turn, stepresult.TurnValidator(r.Turn)}, columnCheck{"step", r.Step, stepresult.StepValidator(r.Step)},
		columnCheck{"kind", r.Kind, stepresult.KindValidator(stepresult.Kind(r.Kind))}); err != nil {
		return err
	}
	if r.Turn > im.session.CurrentTurn {
		return apperr.Invalid(at+".turn", "%s is a step of turn %d, past the session's current turn %d", at, r.Turn, im.session.CurrentTurn)
	}
	return nil
}

func stepTwice(im *importer, at string, r *rowKeys) error {
	if found, err := im.exists(`SELECT EXISTS (SELECT 1 FROM step_results WHERE session_id = $1 AND turn = $2 AND step = $3)`, r.Turn, r.Step); found || err != nil {
		return orErr(err, apperr.Invalid(at, "%s: the document holds step %d of turn %d twice", at, r.Step, r.Turn))
	}
	return anotherTwice(im, at, r)
}

// An item is of a turn the session had, at a place in it.
func checkItem(im *importer, at string, r *rowKeys) error {
	if err := valid(at, columnCheck{"turn", r.Turn, turnitem.TurnValidator(r.Turn)}, columnCheck{"position", r.Position, turnitem.PositionValidator(r.Position)},
		columnCheck{"kind", r.Kind, turnitem.KindValidator(turnitem.Kind(r.Kind))}); err != nil {
		return err
	}
	if r.Turn > im.session.CurrentTurn {
		return apperr.Invalid(at+".turn", "%s is an item of turn %d, past the session's current turn %d", at, r.Turn, im.session.CurrentTurn)
	}
	return nil
}

func itemTwice(im *importer, at string, r *rowKeys) error {
	if found, err := im.exists(`SELECT EXISTS (SELECT 1 FROM turn_items WHERE session_id = $1 AND turn = $2 AND position = $3)`, r.Turn, r.Position); found || err != nil {
		return orErr(err, apperr.Invalid(at, "%s: the document holds item %d of turn %d twice", at, r.Position, r.Turn))
	}
	return anotherTwice(im, at, r)
}

// A receipt is of a state the session was in: a turn and an event it had.
func checkReceipt(im *importer, at string, r *rowKeys) error {
	s := im.session
	switch err := contextreceipt.TurnValidator(r.Turn); {
	case err != nil:
		return valid(at, columnCheck{"turn", r.Turn, err})
	case r.Turn > s.CurrentTurn:
		return apperr.Invalid(at+".turn", "%s is a receipt of turn %d, past the session's current turn %d", at, r.Turn, s.CurrentTurn)
	case r.EventSequence > s.EventSequence:
		return apperr.Invalid(at+".event_sequence", "%s.event_sequence is %d, past the session's event_sequence %d: a receipt shows a state the session was in",
			at, r.EventSequence, s.EventSequence)
	}
	return nil
}

// A model call is of a turn the session had; its receipt, of the session
// and written before it, is the table's foreign key's to check.
func checkModelCall(im *importer, at string, r *rowKeys) error {
	switch err := modelcall.TurnValidator(r.Turn); {
	case err != nil:
		return valid(at, columnCheck{"turn", r.Turn, err})
	case r.Turn > im.session.CurrentTurn:
		return apperr.Invalid(at+".turn", "%s is a model call of turn %d, past the session's current turn %d", at, r.Turn, im.session.CurrentTurn)
	}
	return nil
}

// A session's events are its tenant's, numbered 1, 2, 3… in order by its
// counter, event_sequence (finish checks that the last is the counter), each
// of a turn the session had, or of none (a null turn reads as 0).
func checkEvent(im *importer, at string, r *rowKeys) error {
	if err := valid(at, columnCheck{"kind", r.Kind, event.KindValidator(r.Kind)},
		columnCheck{"turn", r.Turn, event.TurnValidator(r.Turn)}); err != nil {
		return err
	}
	if r.Turn > im.session.CurrentTurn {
		return apperr.Invalid(at+".turn", "%s is an event of turn %d, past the session's current turn %d", at, r.Turn, im.session.CurrentTurn)
	}
	if r.Tenant != im.session.Tenant {
		return apperr.Invalid(at+".tenant", "%s.tenant is %q, not the session's tenant %q", at, r.Tenant, im.session.Tenant)
	}
	if r.Sequence != im.events+1 {
		return apperr.Invalid(at+".sequence", "%s.sequence is %d, where %d follows: a session's events are numbered 1, 2, 3… in order by its counter",
			at, r.Sequence, im.events+1)
	}
	im.events++
	return nil
}

// anotherTwice explains a skipped row that holds none of the keys its
// list knows of twice: one the schema has and this file does not yet.
func anotherTwice(_ *importer, at string, _ *rowKeys) error {
	return apperr.Invalid(at, "%s: the document holds a row that has one of its unique columns already", at)
}

// orErr is err if there is one, else refused.
func orErr(err, refused error) error {
	if err != nil {
		return err
	}
	return refused
}

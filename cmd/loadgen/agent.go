package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/google/uuid"
)

// Operation names, as the report prints them.
const (
	opOpenSession     = "openSession"
	opBeginTurn       = "beginTurn"
	opRecordRead      = "recordRead-20"
	opRecordGenerated = "recordGenerated"
	opPromote         = "recordCreated-promote"
	opThink           = "context-THINK"
	opAct             = "context-ACT"
	opReply           = "context-REPLY"
	opEndTurn         = "endTurn"
	opSessionsPage    = "sessionsPage"
	// opAgentTurn is not a request: it is the sum, per turn, of beginTurn,
	// the recordRead of 20 records, the THINK build and endTurn (with
	// -short-turns -closing, the read rides on endTurn as a closing write).
	opAgentTurn = "agentTurn"
	// In -chat runs, a turn is a chat pair: recordExchange (-chat exchange)
	// or beginTurn then endTurn (-chat two-calls); opChatPair is their sum.
	opRecordExchange = "recordExchange"
	opChatPair       = "chatPair"
)

// The names are also profile labels: `go tool pprof -tagfocus op=context-THINK`.

// operationOrder is the order of the report's rows.
var operationOrder = []string{opOpenSession, opBeginTurn, opRecordRead, opRecordGenerated, opPromote,
	opThink, opAct, opReply, opEndTurn, opSessionsPage, opAgentTurn, opRecordExchange, opChatPair}

const (
	openSessionOp = `mutation OpenSession($in: OpenSessionInput!) {
  openSession(input: $in) { created session { id } }
}`
	beginTurnOp = `mutation BeginTurn($id: ID!, $message: String!) {
  beginTurn(input: {sessionID: $id, userMessage: $message}) { turn { number } }
}`
	recordReadOp = `mutation RecordRead($id: ID!, $table: String!, $records: [Map!]!, $step: Int) {
  recordRead(input: {sessionID: $id, table: $table, records: $records, step: $step}) {
    records refs { ref action } enrichmentQueue { ref entityType entityID table nameColumn }
  }
}`
	recordGeneratedOp = `mutation RecordGenerated($id: ID!, $content: Map!, $step: Int) {
  recordGenerated(input: {sessionID: $id, entityType: "recipe", content: $content, step: $step}) { ref { ref label } }
}`
	promoteOp = `mutation Promote($id: ID!, $entity: UUID!, $gen: String!, $label: String!, $step: Int) {
  recordCreated(input: {sessionID: $id, entityType: "recipe", entityID: $entity, genRef: $gen, label: $label, step: $step}) {
    promoted ref { ref action turnPromoted }
  }
}`
	contextOp = `query Context($id: ID!, $node: ContextNode!) {
  session(id: $id) { context(node: $node) {
    text tokenCount budget truncatedTurns notes
    sections { name tokenCount truncated }
    tiers { active generated retained }
  } }
}`
	recordExchangeOp = `mutation RecordExchange($id: ID!, $user: String!, $assistant: String!) {
  recordExchange(input: {sessionID: $id, userMessage: $user, assistantMessage: $assistant}) { turn { number } }
}`
	endTurnOp = `mutation EndTurn($id: ID!, $message: String!, $summary: ExecutionSummaryInput) {
  endTurn(input: {sessionID: $id, assistantMessage: $message, summary: $summary}) { turn { number status } }
}`
	// closeTurnOp ends a turn with its closing writes, whose answers are
	// what the calls alone answer.
	closeTurnOp = `mutation CloseTurn($id: ID!, $message: String!, $summary: ExecutionSummaryInput, $closing: [ClosingWriteInput!]) {
  endTurn(input: {sessionID: $id, assistantMessage: $message, summary: $summary, closing: $closing}) {
    turn { number status } closing { records refs }
  }
}`
)

// readTables are the kitchen tables an agent reads, each with its FK fields
// (domains/kitchen.yaml): every read registers linked refs.
var readTables = []string{"recipe_ingredients", "inventory", "meal_plans", "tasks"}

var userMessages = []string{
	"what recipes do i have?",
	"what's in my pantry?",
	"suggest something with rice for tonight",
	"plan dinners for the week",
	"save that recipe and add the shopping tasks",
	"which of these can i cook with what i have?",
}

// agent runs kitchen-domain sessions one after another, turn after turn,
// the way an agent runtime's pipeline calls the API.
type agent struct {
	c     *graphqlClient
	rng   *rand.Rand
	key   string // prefix of its sessions' external keys
	turns int    // per session
	n     int    // sessions opened so far
	short bool   // turns of beginTurn, recordRead-20 and endTurn only
	chat  string // "exchange" or "two-calls": turns are chat pairs (-chat)
	// closing: a short turn's read goes with endTurn as its closing write.
	closing bool
}

// kitchen is one session's view of the runtime's database: the entities its
// reads return again and again, so refs are both registered and touched.
type kitchen struct {
	recipes, ingredients, mealPlans []uuid.UUID
	rows                            map[string][]uuid.UUID // ids of each table's rows
}

func newKitchen() *kitchen {
	ids := func(n int) []uuid.UUID {
		out := make([]uuid.UUID, n)
		for i := range out {
			out[i] = uuid.New()
		}
		return out
	}
	k := &kitchen{recipes: ids(10), ingredients: ids(30), mealPlans: ids(7), rows: map[string][]uuid.UUID{}}
	for _, t := range readTables {
		k.rows[t] = ids(30)
	}
	return k
}

// run opens sessions until ctx ends.
func (a *agent) run(ctx context.Context) {
	for ctx.Err() == nil {
		if err := a.session(ctx); err != nil && ctx.Err() == nil {
			time.Sleep(50 * time.Millisecond) // the error is counted; do not spin on it
		}
	}
}

// session runs one session of a.turns turns. Each turn but the last
// generates a recipe, and the next turn saves it (promotion by gen ref).
func (a *agent) session(ctx context.Context) error {
	a.n++
	var opened struct {
		OpenSession struct{ Session struct{ ID string } }
	}
	if _, err := a.c.do(ctx, opOpenSession, openSessionOp, map[string]any{"in": map[string]any{
		"tenant": loadTenant, "externalKey": fmt.Sprintf("%s-%d", a.key, a.n), "userID": a.key,
		"systemPrompt": "You are Alfred, a kitchen assistant. Use refs such as recipe_1, never ids.",
	}}, &opened); err != nil {
		return err
	}
	id := opened.OpenSession.Session.ID
	k := newKitchen()
	pending := "" // the gen ref generated last turn, saved this turn
	for turn := 1; turn <= a.turns; turn++ {
		var err error
		if pending, err = a.turn(ctx, id, k, turn, pending); err != nil {
			return err
		}
	}
	return nil
}

// turn runs one turn and returns the gen ref it generated, if any.
func (a *agent) turn(ctx context.Context, id string, k *kitchen, turn int, pending string) (string, error) {
	if a.chat != "" {
		return "", a.chatPair(ctx, id, turn)
	}
	var core time.Duration // begin + read + THINK + end
	step := func(op, query string, vars map[string]any, out any) error {
		vars["id"] = id
		took, err := a.c.do(ctx, op, query, vars, out)
		switch op {
		case opBeginTurn, opRecordRead, opThink, opEndTurn:
			core += took
		}
		return err
	}
	if err := step(opBeginTurn, beginTurnOp, map[string]any{"message": userMessages[(turn-1)%len(userMessages)]}, nil); err != nil {
		return "", err
	}
	table := readTables[(turn-1)%len(readTables)]
	if a.short && a.closing {
		// The turn's last step read the records; the runtime sends them with
		// the end of the turn and takes their translation from its answer.
		err := step(opEndTurn, closeTurnOp, map[string]any{"message": assistantMessage(turn, table), "summary": executionSummary(turn, table),
			"closing": []any{map[string]any{"read": map[string]any{"table": table, "records": k.read(a.rng, table, 20), "step": 1}}}}, nil)
		a.c.rec.add(opAgentTurn, core)
		return "", err
	}
	if err := step(opRecordRead, recordReadOp, map[string]any{"table": table, "records": k.read(a.rng, table, 20), "step": 1}, nil); err != nil {
		return "", err
	}
	if a.short {
		err := step(opEndTurn, endTurnOp, map[string]any{"message": assistantMessage(turn, table), "summary": executionSummary(turn, table)}, nil)
		a.c.rec.add(opAgentTurn, core)
		return "", err
	}
	if pending != "" {
		if err := step(opPromote, promoteOp, map[string]any{"entity": uuid.NewString(), "gen": pending,
			"label": fmt.Sprintf("Coconut Rice %d", turn-1), "step": 2}, nil); err != nil {
			return "", err
		}
		pending = ""
	}
	if turn < a.turns {
		var gen struct {
			RecordGenerated struct{ Ref struct{ Ref string } }
		}
		if err := step(opRecordGenerated, recordGeneratedOp, map[string]any{"content": generatedRecipe(turn), "step": 3}, &gen); err != nil {
			return "", err
		}
		pending = gen.RecordGenerated.Ref.Ref
	}
	for _, node := range []struct{ op, name string }{{opThink, "THINK"}, {opAct, "ACT"}, {opReply, "REPLY"}} {
		if err := step(node.op, contextOp, map[string]any{"node": node.name}, nil); err != nil {
			return "", err
		}
	}
	if err := step(opEndTurn, endTurnOp, map[string]any{"message": assistantMessage(turn, table), "summary": executionSummary(turn, table)}, nil); err != nil {
		return "", err
	}
	a.c.rec.add(opAgentTurn, core)
	return pending, nil
}

// read returns n records of table as the runtime's database would: ids from
// the table's rows (some already known to the session) and FKs into the
// session's recipes, ingredients and meal plans.
func (k *kitchen) read(rng *rand.Rand, table string, n int) []map[string]any {
	pick := func(ids []uuid.UUID) string { return ids[rng.IntN(len(ids))].String() }
	rows := k.rows[table]
	out := make([]map[string]any, n)
	for i := range out {
		id := rows[rng.IntN(len(rows))].String()
		switch table {
		case "recipe_ingredients":
			out[i] = map[string]any{"id": id, "name": fmt.Sprintf("ingredient line %d", i), "quantity": 1 + i%4, "unit": "cup",
				"recipe_id": pick(k.recipes), "ingredient_id": pick(k.ingredients)}
		case "inventory":
			out[i] = map[string]any{"id": id, "name": fmt.Sprintf("pantry item %d", i), "quantity": 1 + i%5, "unit": "kg",
				"location": "pantry", "expires_on": "2026-12-01", "ingredient_id": pick(k.ingredients)}
		case "meal_plans":
			out[i] = map[string]any{"id": id, "date": fmt.Sprintf("2026-12-%02d", 1+i%28), "meal_type": "dinner",
				"recipe_id": pick(k.recipes)}
		case "tasks":
			out[i] = map[string]any{"id": id, "title": fmt.Sprintf("buy item %d", i), "done": false,
				"recipe_id": pick(k.recipes), "meal_plan_id": pick(k.mealPlans)}
		}
	}
	return out
}

func generatedRecipe(turn int) map[string]any {
	return map[string]any{
		"name":         fmt.Sprintf("Coconut Rice %d", turn),
		"servings":     2,
		"prep time":    "10 minutes",
		"cook time":    "20 minutes",
		"ingredients":  []any{"jasmine rice", "coconut milk", "salt", "lime"},
		"instructions": "Rinse the rice, simmer it in coconut milk for 15 minutes, rest 5 minutes, finish with lime.",
	}
}

func assistantMessage(turn int, table string) string {
	return fmt.Sprintf("Turn %d: I read 20 %s records and suggested Coconut Rice %d.\n"+
		"Ingredients: jasmine rice, coconut milk, salt, lime.\n"+
		"Instructions: rinse the rice, simmer it in coconut milk for 15 minutes, then rest it.", turn, table, turn)
}

func executionSummary(turn int, table string) map[string]any {
	return map[string]any{
		"decision": "plan_direct", "goal": "Answer the kitchen question", "phase": "exploring",
		"steps": []any{
			map[string]any{"step": 1, "kind": "read", "description": "Read " + table, "outcome": "20 items"},
			map[string]any{"step": 3, "kind": "generate", "description": "Generate a recipe", "outcome": fmt.Sprintf("gen_recipe_%d", turn)},
		},
	}
}

// seedSession opens a session and runs a.turns short turns: begin, a read
// of 20 records, end.
func (a *agent) seedSession(ctx context.Context) error {
	a.n++
	var opened struct {
		OpenSession struct{ Session struct{ ID string } }
	}
	if _, err := a.c.do(ctx, opOpenSession, openSessionOp, map[string]any{"in": map[string]any{
		"tenant": loadTenant, "externalKey": fmt.Sprintf("%s-%d", a.key, a.n), "userID": a.key,
	}}, &opened); err != nil {
		return err
	}
	id := opened.OpenSession.Session.ID
	k := newKitchen()
	for turn := 1; turn <= a.turns; turn++ {
		table := readTables[(turn-1)%len(readTables)]
		for _, op := range []struct {
			name, query string
			vars        map[string]any
		}{
			{opBeginTurn, beginTurnOp, map[string]any{"id": id, "message": userMessages[(turn-1)%len(userMessages)]}},
			{opRecordRead, recordReadOp, map[string]any{"id": id, "table": table, "records": k.read(a.rng, table, 20), "step": 1}},
			{opEndTurn, endTurnOp, map[string]any{"id": id, "message": assistantMessage(turn, table), "summary": executionSummary(turn, table)}},
		} {
			if _, err := a.c.do(ctx, op.name, op.query, op.vars, nil); err != nil {
				return err
			}
		}
	}
	return nil
}

// chatPair records one user+assistant exchange as a chat-only client does:
// in one request (recordExchange), or in two (beginTurn, endTurn) as
// before recordExchange existed.
func (a *agent) chatPair(ctx context.Context, id string, turn int) error {
	user, assistant := userMessages[(turn-1)%len(userMessages)], assistantMessage(turn, "recipes")
	var took time.Duration
	step := func(op, query string, vars map[string]any) error {
		vars["id"] = id
		d, err := a.c.do(ctx, op, query, vars, nil)
		took += d
		return err
	}
	if a.chat == "exchange" {
		if err := step(opRecordExchange, recordExchangeOp, map[string]any{"user": user, "assistant": assistant}); err != nil {
			return err
		}
	} else {
		if err := step(opBeginTurn, beginTurnOp, map[string]any{"message": user}); err != nil {
			return err
		}
		if err := step(opEndTurn, endTurnOp, map[string]any{"message": assistant}); err != nil {
			return err
		}
	}
	a.c.rec.add(opChatPair, took)
	return nil
}

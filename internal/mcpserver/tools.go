package mcpserver

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/google/uuid"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"sessiongraph/ent"
	"sessiongraph/ent/schema/schematype"
	"sessiongraph/internal/apperr"
	"sessiongraph/internal/contextbuild"
	"sessiongraph/internal/engine"
	"sessiongraph/internal/tokenizer"
)

// tools are the agent loop's tools, each one engine call.
type tools struct {
	engine *engine.Engine
	// writes names the tools that write: admitted as mutations (a READER
	// key may not call them), the others as queries.
	writes map[string]bool
	// inputs is each tool's input schema, which checkArguments fits its
	// arguments to.
	inputs map[string]*jsonschema.Schema
	// names is the tool that runs each operation, as an error's hint names
	// it (name).
	names map[apperr.Operation]string
}

// add registers every tool on s.
func (t *tools) add(s *mcp.Server) {
	t.writes, t.inputs, t.names = map[string]bool{}, map[string]*jsonschema.Schema{}, map[apperr.Operation]string{}
	addTool(s, t, "open_session", apperr.OpOpenSession, "Open the conversation of your own externalKey in tenant, or get back its live session (created says which). Call once per conversation; keep the session's id.", write, t.openSession)
	addTool(s, t, "begin_turn", apperr.OpBeginTurn, "Open the session's next turn with the user's message. One turn is open at a time (TURN_IN_PROGRESS).", write, t.beginTurn)
	addTool(s, t, "end_turn", apperr.OpEndTurn, "Complete the open turn with the assistant's reply and, optionally, its execution summary.", write, t.endTurn)
	addTool(s, t, "fail_turn", apperr.OpFailTurn, "Close the open turn as failed, with the reason.", write, t.failTurn)
	addTool(s, t, "record_items", apperr.OpRecordItems, "Append items to the open turn, each as its JSON text in the Responses API's shape: messages of any role, function_call (name, call_id, arguments), function_call_output (call_id, output), reasoning. Kept byte for byte; MESSAGES shows them.", write, t.recordItems)
	addTool(s, t, "record_read", apperr.OpRecordRead, "Record the rows your database layer read (by entityType or table): each gets a ref (recipe_1, ...); the records come back with refs in place of ids, as the LLM should see them.", write, t.recordRead)
	addTool(s, t, "record_updated", apperr.OpRecordUpdated, "Record rows your database layer updated, as record_read records reads.", write, t.recordUpdated)
	addTool(s, t, "record_generated", apperr.OpRecordGenerated, "Record content the LLM generated: it waits, unsaved, as gen_{type}_{n} with a pending artifact.", write, t.recordGenerated)
	addTool(s, t, "record_created", apperr.OpRecordCreated, "Record an entity your database layer saved; name the gen ref it saves (genRef) to promote it.", write, t.recordCreated)
	addTool(s, t, "record_deleted", apperr.OpRecordDeleted, "Record entities your database layer deleted.", write, t.recordDeleted)
	addTool(s, t, "retain_ref", apperr.OpRetainRef, "Keep a ref in context past the active window, with the reason the LLM will see.", write, t.retainRef)
	addTool(s, t, "release_ref", apperr.OpReleaseRef, "Let a retained ref leave context again.", write, t.releaseRef)
	addTool(s, t, "resolve_refs", apperr.OpResolveRefs, "Translate refs back to entity ids for your code (a pending gen ref has none yet).", read, t.resolveRefs)
	addTool(s, t, "translate_payload", apperr.OpTranslatePayload, "Replace refs by ids in a record you are about to save; saves names the gen ref it saves.", read, t.translatePayload)
	addTool(s, t, "translate_filters", apperr.OpTranslateFilters, "Replace refs by ids in query filters; pendingRefs are gen refs to read with read_refs instead.", read, t.translateFilters)
	addTool(s, t, "read_refs", apperr.OpReadRefs, "Read generated refs from their pending artifacts, in the shape of a database read; fromDatabase lists the refs to read from your database.", read, t.readRefs)
	addTool(s, t, "build_context", apperr.OpContext, "Build a pipeline node's context (UNDERSTAND, THINK, ACT, REPLY or MESSAGES) within its token budget: the text for the prompt, its sections with token counts, the tiers of refs, what was cut.", read, t.buildContext)
	addTool(s, t, "record_model_call", apperr.OpRecordModelCall, "After calling the model with a build: record the call (model, tokens in and out, latency, cost, finish reason, error) on the build's receipt, so that slow, failed and expensive turns can be found.", write, t.recordModelCall)
	addTool(s, t, "working_memory", apperr.OpWorkingMemory, "The session's compact state: turn count, focus, the 20 most recently referenced entities, the history summary.", read, t.workingMemory)
}

// write and read say whether a tool changes the session: a READER key may
// call only those that read.
const (
	write = true
	read  = false
)

// addTool registers a typed tool that runs op, and in t whether it writes
// and its input schema.
func addTool[In, Out any](s *mcp.Server, t *tools, name string, op apperr.Operation, description string, writes bool, h func(context.Context, In) (Out, error)) {
	t.writes[name], t.names[op] = writes, name
	t.inputs[name] = inputSchemaOf[In]()
	closed := false
	mcp.AddTool(s, &mcp.Tool{
		Name: name, Description: description,
		Annotations:  &mcp.ToolAnnotations{ReadOnlyHint: !writes, OpenWorldHint: &closed, DestructiveHint: &closed},
		InputSchema:  t.inputs[name],
		OutputSchema: schemaOf[Out](),
	}, func(ctx context.Context, _ *mcp.CallToolRequest, in In) (*mcp.CallToolResult, Out, error) {
		out, err := h(ctx, in)
		return nil, out, err
	})
}

// name is how an error's hint names op over MCP: the tool that runs it, or,
// for an operation no tool runs (defining entity types), GraphQL's.
func (t *tools) name(op apperr.Operation) string {
	if name, ok := t.names[op]; ok {
		return name
	}
	return "GraphQL's " + string(op)
}

// parseID reads an id argument; a malformed one is INVALID_ID on field.
func parseID(field, s string) (uuid.UUID, error) {
	id, err := uuid.Parse(s)
	if err != nil {
		e := apperr.New(apperr.InvalidID, "%s %q is not a UUID (want 8-4-4-4-12 hex digits)", field, s)
		e.Field = field
		return uuid.Nil, e
	}
	return id, nil
}

// OpenSessionIn opens a session.
type OpenSessionIn struct {
	Tenant       string            `json:"tenant" jsonschema:"the tenant the conversation belongs to (a CLIENT key's own)"`
	ExternalKey  string            `json:"externalKey" jsonschema:"your own key for the conversation; opening it again returns the same live session"`
	Domain       *string           `json:"domain,omitempty" jsonschema:"the domain of its entity types; defaults to the server's"`
	UserID       *string           `json:"userID,omitempty"`
	SystemPrompt *string           `json:"systemPrompt,omitempty"`
	TTLSeconds   *int              `json:"ttlSeconds,omitempty" jsonschema:"inactivity after which the session expires"`
	Metadata     map[string]string `json:"metadata,omitempty"`
	Tokenizer    *tokenizer.Name   `json:"tokenizer,omitempty" jsonschema:"cl100k_base (default), o200k_base or chars4"`
}

// Session is a session as the tools answer it.
type Session struct {
	ID          string    `json:"id"`
	Tenant      string    `json:"tenant"`
	ExternalKey string    `json:"externalKey"`
	Domain      string    `json:"domain"`
	Status      string    `json:"status"`
	CurrentTurn int       `json:"currentTurn"`
	ExpiresAt   time.Time `json:"expiresAt"`
}

// OpenSessionOut is the session opened or found.
type OpenSessionOut struct {
	Session           Session `json:"session"`
	Created           bool    `json:"created"`
	ReplacedSessionID *string `json:"replacedSessionID,omitempty"`
}

func (t *tools) openSession(ctx context.Context, in OpenSessionIn) (*OpenSessionOut, error) {
	r, err := t.engine.Sessions.OpenSession(ctx, engine.OpenSessionInput{
		Tenant: in.Tenant, ExternalKey: in.ExternalKey, Domain: in.Domain, UserID: in.UserID,
		SystemPrompt: in.SystemPrompt, TTLSeconds: in.TTLSeconds, Metadata: in.Metadata, Tokenizer: (*string)(in.Tokenizer),
	})
	if err != nil {
		return nil, err
	}
	out := &OpenSessionOut{Session: sessionOf(r.Session), Created: r.Created}
	if r.ReplacedSessionID != nil {
		id := r.ReplacedSessionID.String()
		out.ReplacedSessionID = &id
	}
	return out, nil
}

func sessionOf(s *ent.Session) Session {
	return Session{ID: s.ID.String(), Tenant: s.Tenant, ExternalKey: s.ExternalKey, Domain: s.Domain,
		Status: string(s.Status), CurrentTurn: s.CurrentTurn, ExpiresAt: s.ExpiresAt}
}

// BeginTurnIn opens a turn.
type BeginTurnIn struct {
	SessionID   string `json:"sessionID"`
	UserMessage string `json:"userMessage"`
}

// EndTurnIn completes the open turn.
type EndTurnIn struct {
	SessionID        string                       `json:"sessionID"`
	AssistantMessage string                       `json:"assistantMessage"`
	Summary          *schematype.ExecutionSummary `json:"summary,omitempty" jsonschema:"what the turn decided and did, step by step"`
}

// FailTurnIn closes the open turn as failed.
type FailTurnIn struct {
	SessionID string `json:"sessionID"`
	Reason    string `json:"reason"`
}

// TurnOut is a turn as the tools answer it.
type TurnOut struct {
	Turn Turn `json:"turn"`
}

// Turn is one turn of a session.
type Turn struct {
	Number           int    `json:"number"`
	Status           string `json:"status"`
	UserMessage      string `json:"userMessage"`
	AssistantMessage string `json:"assistantMessage,omitempty"`
}

func (t *tools) beginTurn(ctx context.Context, in BeginTurnIn) (*TurnOut, error) {
	id, err := parseID("sessionID", in.SessionID)
	if err != nil {
		return nil, err
	}
	return turnOf(t.engine.Turns.BeginTurn(ctx, id, in.UserMessage))
}

func (t *tools) endTurn(ctx context.Context, in EndTurnIn) (*TurnOut, error) {
	id, err := parseID("sessionID", in.SessionID)
	if err != nil {
		return nil, err
	}
	return turnOf(t.engine.Turns.EndTurn(ctx, engine.EndTurnInput{SessionID: id, AssistantMessage: in.AssistantMessage, Summary: in.Summary}))
}

func (t *tools) failTurn(ctx context.Context, in FailTurnIn) (*TurnOut, error) {
	id, err := parseID("sessionID", in.SessionID)
	if err != nil {
		return nil, err
	}
	return turnOf(t.engine.Turns.FailTurn(ctx, id, in.Reason))
}

// RecordItemsIn appends items to the open turn.
type RecordItemsIn struct {
	SessionID string   `json:"sessionID"`
	TurnID    *string  `json:"turnID,omitempty" jsonschema:"the open turn's id, as a check; the open turn when left out"`
	Items     []string `json:"items" jsonschema:"the items in order (at most 100), each one JSON object as text, such as {\"type\":\"function_call\",\"name\":\"get_weather\",\"call_id\":\"c1\",\"arguments\":\"{}\"}"`
}

// RecordItemsOut is the turn and the items appended.
type RecordItemsOut struct {
	Turn  Turn      `json:"turn"`
	Items []ItemOut `json:"items"`
}

// ItemOut is an item as the tools answer it: its place and kind, and its
// JSON as sent.
type ItemOut struct {
	Position int    `json:"position"`
	Kind     string `json:"kind"`
	JSON     string `json:"json"`
}

func (t *tools) recordItems(ctx context.Context, in RecordItemsIn) (*RecordItemsOut, error) {
	id, err := parseID("sessionID", in.SessionID)
	if err != nil {
		return nil, err
	}
	input := engine.RecordItemsInput{SessionID: id, Items: in.Items}
	if in.TurnID != nil {
		turnID, err := parseID("turnID", *in.TurnID)
		if err != nil {
			return nil, err
		}
		input.TurnID = &turnID
	}
	r, err := t.engine.Turns.RecordItems(ctx, input)
	if err != nil {
		return nil, err
	}
	out := &RecordItemsOut{Items: make([]ItemOut, len(r.Items))}
	tn, _ := turnOf(r.Turn, nil)
	out.Turn = tn.Turn
	for i, it := range r.Items {
		out.Items[i] = ItemOut{Position: it.Position, Kind: string(it.Kind), JSON: it.JSON}
	}
	return out, nil
}

func turnOf(tn *ent.Turn, err error) (*TurnOut, error) {
	if err != nil {
		return nil, err
	}
	return &TurnOut{Turn: Turn{Number: tn.Number, Status: string(tn.Status), UserMessage: tn.UserMessage, AssistantMessage: tn.AssistantMessage}}, nil
}

// closedSets are the schemas of the arguments that take one of a few
// values, each listed from the type that defines them: an enum in the
// tool's schema, so a model picks among them.
var closedSets = &jsonschema.ForOptions{TypeSchemas: map[reflect.Type]*jsonschema.Schema{
	// any JSON value: {} rather than the inferred `true`, which clients (the
	// TypeScript SDK's) refuse in a tool's schema.
	reflect.TypeFor[any]():                   {Description: "any JSON value"},
	reflect.TypeFor[contextbuild.Node]():     enum(nodes...),
	reflect.TypeFor[contextbuild.Strategy](): enum(contextbuild.SlidingWindow, contextbuild.Summary),
	reflect.TypeFor[tokenizer.Name]():        enum(tokenizer.Known()...),
}}

// enum is the schema of a string that is one of values.
func enum[T ~string](values ...T) *jsonschema.Schema {
	s := &jsonschema.Schema{Type: "string"}
	for _, v := range values {
		s.Enum = append(s.Enum, string(v))
	}
	return s
}

// schemaOf is the JSON Schema of a tool's input or output type (of what a
// pointer points to).
func schemaOf[T any]() *jsonschema.Schema {
	t := reflect.TypeFor[T]()
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	s, err := jsonschema.ForType(t, closedSets)
	if err != nil {
		panic(fmt.Sprintf("the schema of %s: %v", t, err))
	}
	return s
}

// inputSchemaOf is the schema of a tool's arguments, where null is no
// value of any type: an optional argument may be null, which means absent,
// and a required one may not (checkArguments).
func inputSchemaOf[T any]() *jsonschema.Schema {
	s := schemaOf[T]()
	withoutNull(s)
	return s
}

// withoutNull takes "null" out of the types of s and of every schema in it.
func withoutNull(s *jsonschema.Schema) {
	if s == nil {
		return
	}
	if types := slices.DeleteFunc(slices.Clone(s.Types), func(t string) bool { return t == "null" }); len(s.Types) > 0 {
		if len(types) == 1 {
			s.Type, s.Types = types[0], nil
		} else {
			s.Types = types
		}
	}
	for _, p := range s.Properties {
		withoutNull(p)
	}
	withoutNull(s.Items)
	withoutNull(s.AdditionalProperties)
}

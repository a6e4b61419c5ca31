package mcpserver

import (
	"context"
	"fmt"
	"reflect"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/google/uuid"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"sessiongraph/ent"
	"sessiongraph/ent/schema/schematype"
	"sessiongraph/internal/apperr"
	"sessiongraph/internal/engine"
)

// tools are the agent loop's tools, each one engine call.
type tools struct {
	engine *engine.Engine
	// writes names the tools that write: admitted as mutations (a READER
	// key may not call them), the others as queries.
	writes map[string]bool
}

// add registers every tool on s.
func (t *tools) add(s *mcp.Server) {
	t.writes = map[string]bool{}
	addTool(s, t.writes, "open_session", "Open the conversation of your own externalKey in tenant, or get back its live session (created says which). Call once per conversation; keep the session's id.", write, t.openSession)
	addTool(s, t.writes, "begin_turn", "Open the session's next turn with the user's message. One turn is open at a time (TURN_IN_PROGRESS).", write, t.beginTurn)
	addTool(s, t.writes, "end_turn", "Complete the open turn with the assistant's reply and, optionally, its execution summary.", write, t.endTurn)
	addTool(s, t.writes, "fail_turn", "Close the open turn as failed, with the reason.", write, t.failTurn)
	addTool(s, t.writes, "record_read", "Record the rows your database layer read (by entityType or table): each gets a ref (recipe_1, ...); the records come back with refs in place of ids, as the LLM should see them.", write, t.recordRead)
	addTool(s, t.writes, "record_updated", "Record rows your database layer updated, as record_read records reads.", write, t.recordUpdated)
	addTool(s, t.writes, "record_generated", "Record content the LLM generated: it waits, unsaved, as gen_{type}_{n} with a pending artifact.", write, t.recordGenerated)
	addTool(s, t.writes, "record_created", "Record an entity your database layer saved; name the gen ref it saves (genRef) to promote it.", write, t.recordCreated)
	addTool(s, t.writes, "record_deleted", "Record entities your database layer deleted.", write, t.recordDeleted)
	addTool(s, t.writes, "retain_ref", "Keep a ref in context past the active window, with the reason the LLM will see.", write, t.retainRef)
	addTool(s, t.writes, "release_ref", "Let a retained ref leave context again.", write, t.releaseRef)
	addTool(s, t.writes, "resolve_refs", "Translate refs back to entity ids for your code (a pending gen ref has none yet).", read, t.resolveRefs)
	addTool(s, t.writes, "translate_payload", "Replace refs by ids in a record you are about to save; saves names the gen ref it saves.", read, t.translatePayload)
	addTool(s, t.writes, "translate_filters", "Replace refs by ids in query filters; pendingRefs are gen refs to read with read_refs instead.", read, t.translateFilters)
	addTool(s, t.writes, "read_refs", "Read generated refs from their pending artifacts, in the shape of a database read; fromDatabase lists the refs to read from your database.", read, t.readRefs)
	addTool(s, t.writes, "build_context", "Build a pipeline node's context (UNDERSTAND, THINK, ACT, REPLY or MESSAGES) within its token budget: the text for the prompt, its sections with token counts, the tiers of refs, what was cut.", read, t.buildContext)
	addTool(s, t.writes, "working_memory", "The session's compact state: turn count, focus, the 20 most recently referenced entities, the history summary.", read, t.workingMemory)
}

// write and read say whether a tool changes the session: a READER key may
// call only those that read.
const (
	write = true
	read  = false
)

// addTool registers a typed tool, and in writers whether it writes.
func addTool[In, Out any](s *mcp.Server, writers map[string]bool, name, description string, writes bool, h func(context.Context, In) (Out, error)) {
	writers[name] = writes
	closed := false
	mcp.AddTool(s, &mcp.Tool{
		Name: name, Description: description,
		Annotations:  &mcp.ToolAnnotations{ReadOnlyHint: !writes, OpenWorldHint: &closed, DestructiveHint: &closed},
		InputSchema:  schemaOf[In](),
		OutputSchema: schemaOf[Out](),
	}, func(ctx context.Context, _ *mcp.CallToolRequest, in In) (*mcp.CallToolResult, Out, error) {
		out, err := h(ctx, in)
		return nil, out, err
	})
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
	Tokenizer    *string           `json:"tokenizer,omitempty" jsonschema:"cl100k_base (default), o200k_base or chars4"`
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
	r, err := t.engine.OpenSession(ctx, engine.OpenSessionInput{
		Tenant: in.Tenant, ExternalKey: in.ExternalKey, Domain: in.Domain, UserID: in.UserID,
		SystemPrompt: in.SystemPrompt, TTLSeconds: in.TTLSeconds, Metadata: in.Metadata, Tokenizer: in.Tokenizer,
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
	return turnOf(t.engine.BeginTurn(ctx, id, in.UserMessage))
}

func (t *tools) endTurn(ctx context.Context, in EndTurnIn) (*TurnOut, error) {
	id, err := parseID("sessionID", in.SessionID)
	if err != nil {
		return nil, err
	}
	return turnOf(t.engine.EndTurn(ctx, engine.EndTurnInput{SessionID: id, AssistantMessage: in.AssistantMessage, Summary: in.Summary}))
}

func (t *tools) failTurn(ctx context.Context, in FailTurnIn) (*TurnOut, error) {
	id, err := parseID("sessionID", in.SessionID)
	if err != nil {
		return nil, err
	}
	return turnOf(t.engine.FailTurn(ctx, id, in.Reason))
}

func turnOf(tn *ent.Turn, err error) (*TurnOut, error) {
	if err != nil {
		return nil, err
	}
	return &TurnOut{Turn: Turn{Number: tn.Number, Status: string(tn.Status), UserMessage: tn.UserMessage, AssistantMessage: tn.AssistantMessage}}, nil
}

// anyValue is the schema of a field that holds any JSON value: {} rather
// than the inferred `true`, which clients (the TypeScript SDK's) refuse in a
// tool's schema.
var anyValue = &jsonschema.ForOptions{TypeSchemas: map[reflect.Type]*jsonschema.Schema{
	reflect.TypeFor[any](): {Description: "any JSON value"},
}}

// schemaOf is the JSON Schema of a tool's input or output type (of what a
// pointer points to).
func schemaOf[T any]() *jsonschema.Schema {
	t := reflect.TypeFor[T]()
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	s, err := jsonschema.ForType(t, anyValue)
	if err != nil {
		panic(fmt.Sprintf("the schema of %s: %v", t, err))
	}
	return s
}

// Package contextbuild formats the prompt context of each pipeline node
// (Understand's, Think's, Act's entity context and Reply's, and the chat
// messages of conversation sessions) from a bounded snapshot of a
// session, within a token budget. It is plain Go: the engine loads the
// snapshot, this package only formats and fits.
package contextbuild

import (
	"bytes"
	"encoding/json"
	"strings"

	"sessiongraph/ent/schema/schematype"
	"sessiongraph/ent/turnitem"
	"sessiongraph/internal/registry"
)

// Node names a pipeline node whose context is built; the type is the data
// model's, which stores it in a receipt.
type Node = schematype.Node

// The nodes.
const (
	Understand Node = "UNDERSTAND"
	Think      Node = "THINK"
	Act        Node = "ACT"
	Reply      Node = "REPLY"
	Messages   Node = "MESSAGES"
)

// The compression constants and budgets (docs/context-rules.md).
const (
	// FullDetailTurns is how many recent turns keep their full text.
	FullDetailTurns = 3
	// FullDetailSteps is how many recent step results keep their full data,
	// across turns.
	FullDetailSteps = 3
	// OlderStepSummaries is how many step results older than those Act
	// still lists, one line each, so a long session's build stays bounded.
	OlderStepSummaries = 20
	// CondensedBudget is the budget of Understand and Think (the
	// router's context threshold).
	CondensedBudget = 8000
	// FullBudget is the budget of Act and Reply (ACT_CONTEXT_THRESHOLD).
	FullBudget = 25000
	// UnderstandTurns is how many past turns Understand sees.
	UnderstandTurns = 5
	// ThinkDepth is how many past turns Think's conversation shows.
	ThinkDepth = 2
)

// Strategy is how MESSAGES fits a long conversation (docs/context-rules.md).
type Strategy string

// The strategies.
const (
	SlidingWindow Strategy = "SLIDING_WINDOW"
	Summary       Strategy = "SUMMARY"
)

// Turn is one past or current turn as the builds see it.
type Turn struct {
	Number           int
	UserMessage      string
	AssistantMessage string
	AssistantSummary string
	Open             bool
	// UserTokens and AssistantTokens were counted when the turn was written.
	UserTokens      int
	AssistantTokens int
	Summary         *schematype.ExecutionSummary
	// ItemCount is how many items the turn recorded: a build reads the
	// items of the turns that have some, and no statement for the others.
	ItemCount int
	// Items are the items recorded in the turn, in order, between its
	// user message and its assistant message (recordItems).
	Items []Item
}

// Item is an item recorded in a turn: a message of any role, a function
// call, its output, reasoning or another item of the Responses API.
type Item struct {
	Kind      turnitem.Kind
	Role      string
	Name      string
	CallID    string
	Arguments string
	Content   string
	JSON      string
	Tokens    int
}

// The item kinds a build treats apart.
const (
	ItemMessage            = turnitem.KindMessage
	ItemFunctionCall       = turnitem.KindFunctionCall
	ItemFunctionCallOutput = turnitem.KindFunctionCallOutput
)

// Snapshot is everything a build may show: bounded by the engine to the
// refs that matter now and the turns the node shows.
type Snapshot struct {
	Turn                 int // the session's current turn
	SystemPrompt         string
	SystemPromptTokens   int
	EngagementSummary    string
	HistorySummary       string
	ReasoningSummary     string
	PendingClarification map[string]any
	// Turns are the most recent turns, oldest first, ending with the current one.
	Turns []Turn
	// TotalTurnTokens is the token count of every turn's messages (stored).
	TotalTurnTokens int
	// TurnCount is how many turns the session has had.
	TurnCount int
	// Entries are the refs in the window, retained or generated (with their
	// artifacts); for Understand, every ref of the session, most recently
	// referenced first, up to the engine's bound.
	Entries []*registry.Entry
	// OlderEntries counts refs left out of the snapshot.
	OlderEntries int
	// Steps are the step results the node shows, newest first: for ACT the
	// newest FullDetailSteps with their data and up to OlderStepSummaries
	// more without (MoreSteps when there are older still); for REPLY those
	// of the turn it answers and the one before, without data.
	Steps     []StepResult
	MoreSteps bool
	Domain    *registry.Domain
}

// StepResult is what one step of a turn fetched or produced.
type StepResult struct {
	Turn        int
	Step        int
	Kind        string // READ, WRITE, GENERATE or ANALYZE
	Description string
	// Data is the step's items as the LLM sees them, when the build shows
	// them in full; nil otherwise.
	Data []any
	Refs []string
	// ItemCount may exceed len(Data): items past the size limit are counted only.
	ItemCount int
}

// Options tune a build.
type Options struct {
	TurnsWindow int
	Budget      int
	Strategy    Strategy
	ModelLimit  int
	KeepRecent  int
}

// Section is one titled part of a build.
type Section struct {
	Name       string
	Text       string
	TokenCount int
	Truncated  bool
}

// Message is one chat message of a MESSAGES build: a turn's message or
// one of its recorded items (Kind, and for a call its Name, CallID and
// Arguments, with JSON as recorded), or a message of the build's own.
type Message struct {
	Role       string
	Content    string
	TokenCount int
	Kind       turnitem.Kind
	Name       string
	CallID     string
	Arguments  string
	// Recorded is a recorded item's JSON as sent; empty for the turns' own
	// messages and the build's (see JSON).
	Recorded string
}

// JSON is the message as an item's JSON: a recorded item's as it was
// sent, or the message's own as the server writes it.
func (m Message) JSON() string {
	if m.Recorded != "" {
		return m.Recorded
	}
	return MessageJSON(m.Role, m.Content)
}

// MessageJSON is a plain message in the Responses API's item shape, its
// fields in the API's order and its text unescaped past what JSON needs.
func MessageJSON(role, content string) string {
	var b bytes.Buffer
	e := json.NewEncoder(&b)
	e.SetEscapeHTML(false)
	_ = e.Encode(struct {
		Type    string `json:"type"`
		Role    string `json:"role"`
		Content string `json:"content"`
	}{"message", role, content})
	return strings.TrimSuffix(b.String(), "\n")
}

// Tiers lists the refs of each tier that the build placed; the type is the
// data model's, which stores it in a receipt.
type Tiers = schematype.Tiers

// Build is a node's context.
type Build struct {
	Node           Node
	Text           string
	TokenCount     int
	Budget         int
	Sections       []Section
	Messages       []Message
	Tiers          Tiers
	TruncatedTurns int
	Notes          []string
}

// Counter counts tokens.
type Counter interface{ Count(string) int }

// DefaultBudget is a node's budget when the request names none.
func DefaultBudget(n Node) int {
	switch n {
	case Understand, Think:
		return CondensedBudget
	default:
		return FullBudget
	}
}

package mcpserver

import (
	"context"
	"encoding/json"
	"regexp"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"sessiongraph/ent/schema/schematype"
	"sessiongraph/internal/apperr"
	"sessiongraph/internal/contextbuild"
	"sessiongraph/internal/engine"
	"sessiongraph/internal/tokenizer"
)

// nodes are the pipeline nodes a context is built for.
var nodes = []contextbuild.Node{contextbuild.Understand, contextbuild.Think, contextbuild.Act, contextbuild.Reply, contextbuild.Messages}

// parseNode reads a node argument.
func parseNode(s string) (contextbuild.Node, error) {
	n := contextbuild.Node(strings.ToUpper(s))
	if !slices.Contains(nodes, n) {
		return "", apperr.Invalid("node", "node %q is not one of UNDERSTAND, THINK, ACT, REPLY, MESSAGES", s)
	}
	return n, nil
}

// BuildContextIn asks for a node's context.
type BuildContextIn struct {
	SessionID   string                 `json:"sessionID"`
	Node        contextbuild.Node      `json:"node" jsonschema:"the pipeline node whose context to build"`
	TurnsWindow *int                   `json:"turnsWindow,omitempty" jsonschema:"turns a ref stays active after it was last referenced (default 2)"`
	TokenBudget *int                   `json:"tokenBudget,omitempty" jsonschema:"defaults: 8,000 for UNDERSTAND and THINK, 25,000 for ACT and REPLY; MESSAGES uses 80% of modelLimit"`
	Tokenizer   *tokenizer.Name        `json:"tokenizer,omitempty" jsonschema:"defaults to the session's"`
	Strategy    *contextbuild.Strategy `json:"strategy,omitempty" jsonschema:"MESSAGES only: SLIDING_WINDOW (default) or SUMMARY"`
	ModelLimit  *int                   `json:"modelLimit,omitempty" jsonschema:"MESSAGES only: the model's context window in tokens (default 128,000)"`
	KeepRecent  *int                   `json:"keepRecent,omitempty" jsonschema:"MESSAGES only: at most this many recent messages survive a cut (default 10)"`
}

// Section is one section of a build.
type Section struct {
	Name       string `json:"name"`
	TokenCount int    `json:"tokenCount"`
	Truncated  bool   `json:"truncated"`
}

// Message is one chat message of a MESSAGES build.
type Message struct {
	Role       string `json:"role"`
	Content    string `json:"content"`
	TokenCount int    `json:"tokenCount"`
}

// ContextOut is a node's context: the text for the prompt and what it holds.
type ContextOut struct {
	Node           string             `json:"node"`
	Text           string             `json:"text"`
	TokenCount     int                `json:"tokenCount"`
	Budget         int                `json:"budget"`
	Tokenizer      string             `json:"tokenizer"`
	Sections       []Section          `json:"sections"`
	Messages       []Message          `json:"messages"`
	Tiers          contextbuild.Tiers `json:"tiers"`
	TruncatedTurns int                `json:"truncatedTurns"`
	Notes          []string           `json:"notes"`
}

func (t *tools) buildContext(ctx context.Context, in BuildContextIn) (*ContextOut, error) {
	s, err := t.session(ctx, in.SessionID)
	if err != nil {
		return nil, err
	}
	// The node, strategy and tokenizer are one of their schema's enum,
	// which checkArguments held them to; a resource's node is read from
	// its URI (parseNode).
	opts := &engine.ContextOptions{TurnsWindow: in.TurnsWindow, TokenBudget: in.TokenBudget, Tokenizer: (*string)(in.Tokenizer),
		Strategy: in.Strategy, ModelLimit: in.ModelLimit, KeepRecent: in.KeepRecent}
	b, err := t.engine.Builds.Context(ctx, s, in.Node, opts)
	if err != nil {
		return nil, err
	}
	return contextOf(b), nil
}

func contextOf(b *engine.ContextBuild) *ContextOut {
	out := &ContextOut{Node: string(b.Node), Text: b.Text, TokenCount: b.TokenCount, Budget: b.Budget, Tokenizer: b.Tokenizer,
		Sections: make([]Section, len(b.Sections)), Messages: make([]Message, len(b.Messages)),
		Tiers: b.Tiers, TruncatedTurns: b.TruncatedTurns, Notes: b.Notes}
	for i, s := range b.Sections {
		out.Sections[i] = Section{Name: s.Name, TokenCount: s.TokenCount, Truncated: s.Truncated}
	}
	for i, m := range b.Messages {
		out.Messages[i] = Message{Role: m.Role, Content: m.Content, TokenCount: m.TokenCount}
	}
	for _, l := range []*[]string{&out.Tiers.Active, &out.Tiers.Generated, &out.Tiers.Retained, &out.Notes} {
		if *l == nil {
			*l = []string{}
		}
	}
	return out
}

// WorkingMemoryIn asks for a session's compact state.
type WorkingMemoryIn struct {
	SessionID   string `json:"sessionID"`
	EveryNTurns *int   `json:"everyNTurns,omitempty" jsonschema:"shouldSummarize is true every this many turns (default 5)"`
}

// RecentEntity is one referenced entity of working memory.
type RecentEntity struct {
	EntityType string `json:"entityType"`
	Ref        string `json:"ref"`
	Label      string `json:"label"`
	Turn       int    `json:"turn"`
}

// WorkingMemoryOut is the session's compact state.
type WorkingMemoryOut struct {
	TurnCount       int               `json:"turnCount"`
	Focus           *schematype.Focus `json:"focus,omitempty"`
	RecentEntities  []RecentEntity    `json:"recentEntities"`
	Summary         string            `json:"summary"`
	ShouldSummarize bool              `json:"shouldSummarize"`
}

// defaultSummarizeEvery is working memory's everyNTurns when not given,
// as GraphQL's workingMemory field defaults it.
const defaultSummarizeEvery = 5

func (t *tools) workingMemory(ctx context.Context, in WorkingMemoryIn) (*WorkingMemoryOut, error) {
	s, err := t.session(ctx, in.SessionID)
	if err != nil {
		return nil, err
	}
	every := defaultSummarizeEvery
	if in.EveryNTurns != nil {
		every = *in.EveryNTurns
	}
	m, err := t.engine.Reads.WorkingMemory(ctx, s, every)
	if err != nil {
		return nil, err
	}
	out := &WorkingMemoryOut{TurnCount: m.TurnCount, Summary: m.Summary, ShouldSummarize: m.ShouldSummarize,
		RecentEntities: make([]RecentEntity, len(m.RecentEntities))}
	out.Focus = m.Focus
	for i, r := range m.RecentEntities {
		out.RecentEntities[i] = RecentEntity{EntityType: r.EntityType, Ref: r.Ref, Label: r.Label, Turn: r.Turn}
	}
	return out, nil
}

// The resource templates: a session's context of a node (its text, for a
// host to attach to a prompt) and its working memory (JSON).
const (
	contextTemplate = "sessiongraph://sessions/{sessionID}/context/{node}"
	memoryTemplate  = "sessiongraph://sessions/{sessionID}/working-memory"
)

var (
	contextURI = regexp.MustCompile(`^sessiongraph://sessions/([^/]+)/context/([^/]+)$`)
	memoryURI  = regexp.MustCompile(`^sessiongraph://sessions/([^/]+)/working-memory$`)
)

func addResources(s *mcp.Server, e *engine.Engine) {
	t := &tools{engine: e}
	s.AddResourceTemplate(&mcp.ResourceTemplate{
		Name: "context", Title: "A session's context for a pipeline node", URITemplate: contextTemplate, MIMEType: "text/markdown",
		Description: "The prompt text of node UNDERSTAND, THINK, ACT, REPLY or MESSAGES of the session, built within the node's default budget.",
	}, func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		m := contextURI.FindStringSubmatch(req.Params.URI)
		if m == nil {
			return nil, mcp.ResourceNotFoundError(req.Params.URI)
		}
		node, err := parseNode(m[2])
		if err != nil {
			return nil, err
		}
		b, err := t.buildContext(ctx, BuildContextIn{SessionID: m[1], Node: node})
		if err != nil {
			return nil, err
		}
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: "text/markdown", Text: b.Text}}}, nil
	})
	s.AddResourceTemplate(&mcp.ResourceTemplate{
		Name: "working-memory", Title: "A session's working memory", URITemplate: memoryTemplate, MIMEType: "application/json",
		Description: "The session's turn count, focus, the 20 most recently referenced entities and its history summary.",
	}, func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		m := memoryURI.FindStringSubmatch(req.Params.URI)
		if m == nil {
			return nil, mcp.ResourceNotFoundError(req.Params.URI)
		}
		w, err := t.workingMemory(ctx, WorkingMemoryIn{SessionID: m[1]})
		if err != nil {
			return nil, err
		}
		text, err := json.Marshal(w)
		if err != nil {
			return nil, err
		}
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: "application/json", Text: string(text)}}}, nil
	})
}

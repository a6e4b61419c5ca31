package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/google/uuid"

	"sessiongraph/ent"
	"sessiongraph/ent/turn"
	"sessiongraph/ent/turnitem"
	"sessiongraph/internal/apperr"
	"sessiongraph/internal/contextbuild"
	"sessiongraph/internal/store"
)

// A turn's items are what the agent produced, in order, as it sent them:
// messages of every role, function (tool) calls, their outputs, reasoning,
// in the Responses API's item shapes (docs/api.md, "Items"). Each is kept
// as its JSON text, byte for byte, and the fields a build reads are parsed
// from it once, when it is recorded. The turn's user message opens its
// items and its assistant message closes them: those two stay on the
// turn's row (beginTurn, endTurn), and the items between are rows of
// their own.

// Limits on recorded items.
const (
	// MaxItemsPerCall bounds the items one recordItems call appends.
	MaxItemsPerCall = 100
	// MaxTurnItems bounds the items recorded in one turn, so that a turn's
	// items and a build that shows them stay bounded.
	MaxTurnItems = 1000
)

// TurnItem is one item of a turn as Turn.items and the builds show it.
type TurnItem struct {
	// Position is the item's place in the turn, from 1.
	Position  int
	Kind      turnitem.Kind
	Role      string
	Name      string
	CallID    string
	Arguments string
	// Content is the item's text as a model reads it: a message's text
	// parts, a call's output, a reasoning item's summary.
	Content string
	// JSON is the item as it was sent (for the turn's own messages, as
	// the server writes them).
	JSON       string
	TokenCount int
}

// Call says whether the item is a function call or its output: the two a
// window keeps or cuts together.
func (it TurnItem) Call() bool {
	return it.Kind == turnitem.KindFunctionCall || it.Kind == turnitem.KindFunctionCallOutput
}

// messageRoles are the roles a message item may have.
var messageRoles = map[string]bool{"system": true, "developer": true, "user": true, "assistant": true, "tool": true}

// itemFields are the fields of an item the server reads; the rest stays in
// its JSON. Content, output and summary are text or a list of parts (an
// output may be one part). The TypeScript Agents SDK writes its own
// protocol's shapes: callId for call_id, a call's output as a
// function_call_result.
type itemFields struct {
	Type      *string         `json:"type"`
	Role      *string         `json:"role"`
	Content   json.RawMessage `json:"content"`
	Name      *string         `json:"name"`
	CallID    *string         `json:"call_id"`
	CallIDTS  *string         `json:"callId"`
	Arguments *string         `json:"arguments"`
	Output    json.RawMessage `json:"output"`
	Summary   json.RawMessage `json:"summary"`
}

// ParseItem reads one item's JSON text: one JSON object in UTF-8, of a
// known kind (message, function_call, function_call_output, reasoning) or
// another type kept as OTHER. field names the item in an error
// (items[2]). The item's token count is left to the caller, which knows
// the session's tokenizer.
func ParseItem(field, text string) (TurnItem, error) {
	if len(text) > MaxTextBytes {
		return TurnItem{}, apperr.TooLarge(field, "the item is %d bytes; at most %d are allowed", len(text), MaxTextBytes)
	}
	if !utf8.ValidString(text) {
		return TurnItem{}, apperr.Invalid(field, "%s is not valid UTF-8", field)
	}
	body := bytes.TrimSpace([]byte(text))
	if len(body) == 0 || body[0] != '{' || !json.Valid(body) {
		return TurnItem{}, apperr.Invalid(field, `%s must be one JSON object, such as {"type":"message","role":"user","content":"Hi"}`, field)
	}
	var f itemFields
	if err := json.Unmarshal(body, &f); err != nil {
		return TurnItem{}, apperr.Invalid(field, "%s: %v", field, err)
	}
	it := TurnItem{JSON: text}
	kind := ""
	switch {
	case f.Type != nil:
		kind = *f.Type
	case f.Role != nil: // an input message may leave its type out
		kind = "message"
	default:
		return TurnItem{}, apperr.Invalid(field, `%s has neither "type" nor "role": say what the item is`, field)
	}
	var err error
	str := func(p *string) string {
		if p == nil {
			return ""
		}
		return *p
	}
	if f.CallID == nil {
		f.CallID = f.CallIDTS
	}
	switch kind {
	case "message":
		it.Kind, it.Role = turnitem.KindMessage, str(f.Role)
		if !messageRoles[it.Role] {
			return TurnItem{}, apperr.Invalid(field+".role", "%s.role is %q: a message's role is system, developer, user, assistant or tool", field, it.Role)
		}
		it.Content, err = partsText(f.Content)
	case "function_call":
		it.Kind, it.Name, it.CallID, it.Arguments = turnitem.KindFunctionCall, str(f.Name), str(f.CallID), str(f.Arguments)
		if it.Name == "" || it.CallID == "" {
			return TurnItem{}, apperr.Invalid(field, "%s is a function_call without its name or call_id: give both", field)
		}
	case "function_call_output", "function_call_result":
		it.Kind, it.CallID = turnitem.KindFunctionCallOutput, str(f.CallID)
		if it.CallID == "" {
			return TurnItem{}, apperr.Invalid(field+".call_id", "%s is a function_call_output without a call_id: name the call it answers", field)
		}
		output := f.Output
		if len(output) > 0 && output[0] == '{' { // one part: the TypeScript SDK's {"type":"text","text":…}
			output = json.RawMessage("[" + string(output) + "]")
		}
		it.Content, err = partsText(output)
	case "reasoning":
		it.Kind = turnitem.KindReasoning
		it.Content, err = partsText(f.Summary)
	default:
		it.Kind, it.Name, it.CallID = turnitem.KindOther, str(f.Name), str(f.CallID)
	}
	if err != nil {
		return TurnItem{}, apperr.Invalid(field, "%s: %v", field, err)
	}
	for _, s := range []string{it.Role, it.Name, it.CallID, it.Arguments, it.Content} {
		if strings.ContainsRune(s, 0) {
			return TurnItem{}, apperr.Invalid(field, "%s contains a NUL character (\\u0000), which cannot be stored: remove it", field)
		}
	}
	return it, nil
}

// partsText is the text of a content field: a string, or the text of each
// part of a list ("text", or a refusal's "refusal"), one part a line.
// Parts without text (an image, a file, audio) stay only in the item's JSON.
func partsText(raw json.RawMessage) (string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	var s string
	if raw[0] == '"' {
		err := json.Unmarshal(raw, &s)
		return s, err
	}
	var parts []struct {
		Text    *string `json:"text"`
		Refusal *string `json:"refusal"`
	}
	if err := json.Unmarshal(raw, &parts); err != nil {
		return "", fmt.Errorf("content must be text or a list of parts: %v", err)
	}
	var lines []string
	for _, p := range parts {
		switch {
		case p.Text != nil:
			lines = append(lines, *p.Text)
		case p.Refusal != nil:
			lines = append(lines, *p.Refusal)
		}
	}
	return strings.Join(lines, "\n"), nil
}

// itemTokenText is what an item's token count counts: what a model reads
// of it.
func itemTokenText(it TurnItem) string {
	switch it.Kind {
	case turnitem.KindFunctionCall:
		return it.Name + " " + it.Arguments
	case turnitem.KindOther:
		return it.JSON
	}
	return it.Content
}

// messageItem is a turn's own user or assistant message as an item.
func messageItem(role, text string, tokens int) TurnItem {
	return TurnItem{Kind: turnitem.KindMessage, Role: role, Content: text,
		JSON: contextbuild.MessageJSON(role, text), TokenCount: tokens}
}

// RecordItemsInput appends items to the session's open turn.
type RecordItemsInput struct {
	SessionID uuid.UUID
	// TurnID, when given, must name the open turn: a check that the items
	// go where the caller thinks.
	TurnID *uuid.UUID
	// Items are the items' JSON texts, in order.
	Items []string
}

// RecordedItems is what recordItems answers: the turn, and the items it
// appended as Turn.items shows them.
type RecordedItems struct {
	Turn  *ent.Turn
	Items []TurnItem
}

// RecordItems appends items to the open turn, after those recorded
// before, each counted once by the session's tokenizer; the session's
// token count grows by theirs. A refused item refuses them all.
func (ts *Turns) RecordItems(ctx context.Context, in RecordItemsInput) (*RecordedItems, error) {
	if len(in.Items) == 0 {
		return nil, apperr.Invalid("items", "give at least one item")
	}
	if len(in.Items) > MaxItemsPerCall {
		return nil, apperr.TooLarge("items", "%d items; at most %d are recorded at once: send them in several calls", len(in.Items), MaxItemsPerCall)
	}
	items := make([]TurnItem, len(in.Items))
	for i, text := range in.Items {
		var err error
		if items[i], err = ParseItem(fmt.Sprintf("items[%d]", i), text); err != nil {
			return nil, err
		}
	}
	// Counted before the session's lock, which is then held for the writes
	// only (a call may carry 100 items of up to 1 MiB each to count), when
	// this replica has written to the session and so knows its tokenizer;
	// checked under the lock.
	counted, known := ts.tokenizers.known(in.SessionID)
	var total int
	if known {
		var err error
		if total, err = countItems(ctx, counted, items); err != nil {
			return nil, err
		}
	}
	tw, err := beginOpenTurn(ctx, ts.store, in.SessionID, keepsOpen)
	if err != nil {
		return nil, err
	}
	defer tw.Rollback()
	if !known || tw.Session.Tokenizer != counted {
		if total, err = countItems(ctx, tw.Session.Tokenizer, items); err != nil {
			return nil, err
		}
	}
	ts.tokenizers.saw(in.SessionID, tw.Session.Tokenizer)
	open := tw.done
	if in.TurnID != nil && *in.TurnID != open.ID {
		return nil, apperr.Invalid("turnID", "turn %s is not the session's open turn (turn %d, id %s): items are recorded while their turn runs", in.TurnID, open.Number, open.ID)
	}
	// Positions follow on from the items recorded before (the turn's
	// count, read under the session's lock, which keeps another write from
	// taking the same ones).
	recorded := open.ItemCount
	if recorded+len(items) > MaxTurnItems {
		return nil, apperr.TooLarge("items", "turn %d holds %d items; %d more would pass the %d a turn may hold", open.Number, recorded, len(items), MaxTurnItems)
	}
	for i := range items {
		it := &items[i]
		// Sent with the commit, in its one exchange (a bulk insert would
		// read its ids back, which a statement for the commit cannot).
		if _, err := tw.WithCommit.TurnItem.Create().SetSessionID(in.SessionID).SetTurn(open.Number).
			SetPosition(recorded + i + 1).SetKind(it.Kind).SetRole(it.Role).SetName(it.Name).SetCallID(it.CallID).
			SetArguments(it.Arguments).SetContent(it.Content).SetJSON(it.JSON).SetTokens(it.TokenCount).SetCreatedAt(tw.Now).Save(ctx); err != nil {
			return nil, err
		}
		// The turn's user message is its first item when it has one.
		it.Position = recorded + i + 1
		if open.UserMessage != "" {
			it.Position++
		}
	}
	tw.ExecWithCommit(`UPDATE turns SET item_count = item_count + $3 WHERE session_id = $1 AND id = $2`, in.SessionID, open.ID, len(items))
	open.ItemCount += len(items)
	tw.Update().AddTokenCount(total)
	ev := store.Event{Kind: KindTurnItemsRecorded, Payload: map[string]any{"turn": open.Number, "count": len(items)}}
	if _, err := tw.Commit(ctx, store.Record(ev)); err != nil {
		return nil, err
	}
	return &RecordedItems{Turn: ts.client.Turn.Adopt(open), Items: items}, nil
}

// countItems counts each item's tokens with the tokenizer named, setting
// its TokenCount, and returns their sum.
func countItems(ctx context.Context, tokenizerName string, items []TurnItem) (int, error) {
	total := 0
	for i := range items {
		n, err := countTokens(ctx, tokenizerName, itemTokenText(items[i]))
		if err != nil {
			return 0, err
		}
		items[i].TokenCount = n
		total += n
	}
	return total, nil
}

// TurnItems returns a turn's items in order: its user message, the items
// recorded in it, and its assistant message once it has ended.
func (rd *Reads) TurnItems(ctx context.Context, t *ent.Turn) ([]*TurnItem, error) {
	var rows []*ent.TurnItem
	if t.ItemCount > 0 {
		var err error
		if rows, err = rd.client.TurnItem.Query().
			Where(turnitem.SessionID(t.SessionID), turnitem.Turn(t.Number)).
			Order(ent.Asc(turnitem.FieldPosition)).Limit(MaxTurnItems).All(ctx); err != nil {
			return nil, err
		}
	}
	items := itemsOfTurn(t.UserMessage, t.UserTokens, t.AssistantMessage, t.AssistantTokens, t.Status != turn.StatusOpen, rows)
	out := make([]*TurnItem, len(items))
	for i := range items {
		out[i] = &items[i]
	}
	return out, nil
}

// itemsOfTurn puts a turn's own messages around its recorded items and
// numbers them. An empty message is no item: a client that records every
// item itself begins and ends its turns with none.
func itemsOfTurn(user string, userTokens int, assistant string, assistantTokens int, ended bool, rows []*ent.TurnItem) []TurnItem {
	out := make([]TurnItem, 0, len(rows)+2)
	if user != "" {
		out = append(out, messageItem("user", user, userTokens))
	}
	for _, r := range rows {
		out = append(out, TurnItem{Kind: r.Kind, Role: r.Role, Name: r.Name, CallID: r.CallID, Arguments: r.Arguments,
			Content: r.Content, JSON: r.JSON, TokenCount: r.Tokens})
	}
	if ended && assistant != "" {
		out = append(out, messageItem("assistant", assistant, assistantTokens))
	}
	for i := range out {
		out[i].Position = i + 1
	}
	return out
}

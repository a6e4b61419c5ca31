package graph_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sessiongraph/internal/apitest"
)

const (
	recordItems = `mutation($id: ID!, $turn: ID, $items: [String!]!) {
  recordItems(input: {sessionID: $id, turnID: $turn, items: $items}) { turn { number } items { position kind json } } }`
	turnItems = `query($id: ID!) { session(id: $id) { tokenCount
  turns(first: 10) { edges { node { number items { position kind role name callID arguments content json tokenCount } } } }
  events(first: 100) { edges { node { kind payload } } } } }`
	messagesBuild = `query($id: ID!, $limit: Int) { session(id: $id) {
  context(node: MESSAGES, options: {modelLimit: $limit}) { text tokenCount truncatedTurns
    messages { role content tokenCount kind name callID arguments json } } } }`
)

// agentsSDKItems are the items the OpenAI Agents SDK stores for a turn that
// calls a tool and answers with two messages, each as the SDK writes its
// JSON (whitespace, key order and escapes its own), with an image part.
var agentsSDKItems = []string{
	`{"id":"fc_1","type":"function_call","call_id":"call_wx1","name":"get_weather","arguments":"{\"city\":\"Paris\"}","status":"completed"}`,
	`{"type": "function_call_output", "call_id": "call_wx1", "output": "18\u00b0C and sunny <dry>"}`,
	`{"type":"reasoning","id":"rs_1","summary":[{"type":"summary_text","text":"The user wants the weather."}]}`,
	`{"id":"msg_1","type":"message","role":"assistant","status":"completed","content":[{"type":"output_text","text":"It is 18°C in Paris.","annotations":[]}]}`,
	`{"role":"user","content":[{"type":"input_text","text":"and this?"},{"type":"input_image","image_url":"data:image/png;base64,iVBORw0KGgo=","detail":"auto"}]}`,
	`{"type":"web_search_call","id":"ws_1","status":"completed"}`,
}

type turnItemOut struct {
	Position                                           int
	Kind, Role, Name, CallID, Arguments, Content, JSON string
	TokenCount                                         int
}

type itemsRecord struct {
	Session struct {
		TokenCount int
		Turns      struct {
			Edges []struct {
				Node struct {
					Number int
					Items  []turnItemOut
				}
			}
		}
		Events struct {
			Edges []struct {
				Node struct {
					Kind    string
					Payload map[string]any
				}
			}
		}
	}
}

func readItems(t *testing.T, a *agent) itemsRecord {
	t.Helper()
	return decode[itemsRecord](t, a.do(turnItems, nil))
}

func TestTurnItemsRoundTripByteEqualBetweenTheTurnsMessages(t *testing.T) {
	s := apitest.New(t)
	a := newAgent(t, s, "items-roundtrip")
	a.do(beginTurn, map[string]any{"m": "What's the weather in Paris?"})
	before := readItems(t, a).Session.TokenCount
	a.do(recordItems, map[string]any{"items": agentsSDKItems[:3]})
	a.do(recordItems, map[string]any{"items": agentsSDKItems[3:]})
	a.do(endTurn, map[string]any{"m": "Anything else?"})

	got := readItems(t, a)
	items := got.Session.Turns.Edges[0].Node.Items
	require.Len(t, items, len(agentsSDKItems)+2)
	assert.Equal(t, turnItemOut{Position: 1, Kind: "MESSAGE", Role: "user", Content: "What's the weather in Paris?",
		JSON: `{"type":"message","role":"user","content":"What's the weather in Paris?"}`, TokenCount: items[0].TokenCount}, items[0])
	for i, sent := range agentsSDKItems {
		assert.Equal(t, sent, items[i+1].JSON, "item %d comes back byte for byte", i+1)
		assert.Equal(t, i+2, items[i+1].Position)
	}
	call, output, reasoning, answer, image, other := items[1], items[2], items[3], items[4], items[5], items[6]
	assert.Equal(t, []string{"FUNCTION_CALL", "get_weather", "call_wx1", `{"city":"Paris"}`, ""},
		[]string{call.Kind, call.Name, call.CallID, call.Arguments, call.Role})
	assert.Equal(t, []string{"FUNCTION_CALL_OUTPUT", "call_wx1", "18°C and sunny <dry>"}, []string{output.Kind, output.CallID, output.Content})
	assert.Equal(t, []string{"REASONING", "The user wants the weather."}, []string{reasoning.Kind, reasoning.Content})
	assert.Equal(t, []string{"MESSAGE", "assistant", "It is 18°C in Paris."}, []string{answer.Kind, answer.Role, answer.Content})
	assert.Equal(t, []string{"MESSAGE", "user", "and this?"}, []string{image.Kind, image.Role, image.Content}, "the image part stays in the JSON only")
	assert.Equal(t, "OTHER", other.Kind)
	assert.Equal(t, turnItemOut{Position: 8, Kind: "MESSAGE", Role: "assistant", Content: "Anything else?",
		JSON: `{"type":"message","role":"assistant","content":"Anything else?"}`, TokenCount: items[7].TokenCount}, items[7])

	recorded := 0
	for _, it := range items[1:7] {
		require.Positive(t, it.TokenCount, "every item is counted: %s", it.JSON)
		recorded += it.TokenCount
	}
	assert.Equal(t, before+recorded+items[7].TokenCount, got.Session.TokenCount, "the session counts the items' tokens once")
	var events []map[string]any
	for _, e := range got.Session.Events.Edges {
		if e.Node.Kind == "turn.items_recorded" {
			events = append(events, e.Node.Payload)
		}
	}
	assert.Equal(t, []map[string]any{{"turn": 1.0, "count": 3.0}, {"turn": 1.0, "count": 3.0}}, events, "one event per write")
}

// typescriptSDKItems are the items the TypeScript Agents SDK (@openai/agents-core
// 0.20.0) gives a session for a turn that calls a tool, as JSON.stringify
// writes them: its own protocol's shapes, callId and function_call_result,
// with the output as one part.
var typescriptSDKItems = []string{
	`{"type":"message","role":"user","content":"What is on the top shelf?"}`,
	`{"type":"function_call","callId":"call_pantry","name":"pantry","arguments":"{\"shelf\":\"top\"}","status":"completed"}`,
	`{"type":"function_call_result","name":"pantry","callId":"call_pantry","status":"completed","output":{"type":"text","text":"red lentils"}}`,
	`{"type":"message","id":"msg_2","role":"assistant","status":"completed","content":[{"type":"output_text","text":"Dal."}]}`,
}

func TestTurnItemsReadTheTypeScriptAgentsSDKsShapes(t *testing.T) {
	s := apitest.New(t)
	a := newAgent(t, s, "items-typescript")
	a.do(beginTurn, map[string]any{"m": ""})
	a.do(recordItems, map[string]any{"items": typescriptSDKItems})
	items := readItems(t, a).Session.Turns.Edges[0].Node.Items
	require.Len(t, items, len(typescriptSDKItems))
	for i, sent := range typescriptSDKItems {
		assert.Equal(t, sent, items[i].JSON, "item %d comes back byte for byte", i+1)
	}
	call, output := items[1], items[2]
	assert.Equal(t, []string{"FUNCTION_CALL", "pantry", "call_pantry", `{"shelf":"top"}`},
		[]string{call.Kind, call.Name, call.CallID, call.Arguments})
	assert.Equal(t, []string{"FUNCTION_CALL_OUTPUT", "call_pantry", "red lentils"}, []string{output.Kind, output.CallID, output.Content})
	assert.Equal(t, "BAD_USER_INPUT", a.code(recordItems, map[string]any{"items": []string{`{"type":"function_call_result","output":"x"}`}}),
		"a function_call_result names its call too")
}

func TestRecordItemsRefusesBadItemsAndChangesNothing(t *testing.T) {
	s := apitest.New(t)
	a := newAgent(t, s, "items-refused")
	assert.Equal(t, "NO_OPEN_TURN", a.code(recordItems, map[string]any{"items": agentsSDKItems[:1]}), "no open turn")
	a.do(beginTurn, map[string]any{"m": "hi"})
	a.do(recordItems, map[string]any{"items": agentsSDKItems[:2]})
	before := readItems(t, a)

	many := make([]string, 101)
	for i := range many {
		many[i] = `{"role":"user","content":"x"}`
	}
	for _, c := range []struct {
		name  string
		items []string
		code  string
	}{
		{"not JSON", []string{`{"type":"message"`}, "BAD_USER_INPUT"},
		{"not an object", []string{`[{"type":"message","role":"user","content":"x"}]`}, "BAD_USER_INPUT"},
		{"two values", []string{`{"role":"user","content":"x"} {}`}, "BAD_USER_INPUT"},
		{"no type nor role", []string{`{"content":"x"}`}, "BAD_USER_INPUT"},
		{"unknown role", []string{`{"type":"message","role":"robot","content":"x"}`}, "BAD_USER_INPUT"},
		{"output without call id", []string{`{"type":"function_call_output","output":"18C"}`}, "BAD_USER_INPUT"},
		{"call without name", []string{`{"type":"function_call","call_id":"c9","arguments":"{}"}`}, "BAD_USER_INPUT"},
		{"name not a string", []string{`{"type":"function_call","call_id":"c9","name":7}`}, "BAD_USER_INPUT"},
		{"content not text", []string{`{"role":"user","content":{"text":"x"}}`}, "BAD_USER_INPUT"},
		{"an escaped NUL", []string{`{"role":"user","content":"a\u0000b"}`}, "BAD_USER_INPUT"},
		{"a good item then a bad one", []string{agentsSDKItems[3], `{"type":"function_call_output"}`}, "BAD_USER_INPUT"},
		{"no items", []string{}, "BAD_USER_INPUT"},
		{"too many", many, "INPUT_TOO_LARGE"},
	} {
		assert.Equal(t, c.code, a.code(recordItems, map[string]any{"items": c.items}), c.name)
	}
	other := newAgent(t, s, "items-other")
	other.do(beginTurn, map[string]any{"m": "elsewhere"})
	var opened struct {
		Session struct {
			Turns struct {
				Edges []struct{ Node struct{ ID string } }
			}
		}
	}
	s.MustDo(t, `query($id: ID!) { session(id: $id) { turns(first: 1) { edges { node { id } } } } }`, map[string]any{"id": other.id}, &opened)
	assert.Equal(t, "BAD_USER_INPUT", a.code(recordItems, map[string]any{"items": agentsSDKItems[:1], "turn": opened.Session.Turns.Edges[0].Node.ID}),
		"a turn that is not this session's open one")
	assert.Equal(t, before, readItems(t, a), "nothing changed: items, token count, events")
}

func TestFailingATurnTakesItsItemsOutOfTheCountAndResetDeletesThem(t *testing.T) {
	s := apitest.New(t)
	a := newAgent(t, s, "items-fail")
	a.do(recordExchange, map[string]any{"u": "hello", "a": "hi there"})
	before := readItems(t, a).Session.TokenCount
	a.do(beginTurn, map[string]any{"m": "weather?"})
	a.do(recordItems, map[string]any{"items": agentsSDKItems[:2]})
	require.Greater(t, readItems(t, a).Session.TokenCount, before)
	a.do(failTurn, nil)
	assert.Equal(t, before, readItems(t, a).Session.TokenCount, "the failed turn's message and items leave the count")

	a.do(beginTurn, map[string]any{"m": "again"})
	a.do(recordItems, map[string]any{"items": agentsSDKItems[:2]})
	a.do(`mutation($id: ID!) { resetConversation(input: {sessionID: $id}) { session { tokenCount } } }`, nil)
	var n int
	require.NoError(t, s.DB.QueryRow(`SELECT count(*) FROM turn_items WHERE session_id = $1`, a.id).Scan(&n))
	assert.Zero(t, n, "a reset deletes the turns' items with them")
}

// toolSession records three turns as an agent with tools does: the second
// calls two tools at once (their outputs after both calls), the third
// answers in two assistant messages. It returns every message MESSAGES
// shows when nothing is cut.
func toolSession(t *testing.T, s *apitest.Server) (*agent, []chatMessageOut) {
	t.Helper()
	// Long enough that windows starting at every message are within the
	// model limits a build accepts (at least 100).
	more := strings.Repeat(" Somewhere quiet, near the centre, not too expensive.", 4)
	a := newAgent(t, s, "items-window")
	a.do(recordExchange, map[string]any{"u": "Hello, I plan a trip to Paris and Rome next week.", "a": "Happy to help with your trip."})
	a.do(beginTurn, map[string]any{"m": "What is the weather in both cities?"})
	a.do(recordItems, map[string]any{"items": []string{
		`{"type":"function_call","call_id":"c_paris","name":"get_weather","arguments":"{\"city\":\"Paris\"}"}`,
		`{"type":"function_call","call_id":"c_rome","name":"get_weather","arguments":"{\"city\":\"Rome\"}"}`,
		`{"type":"function_call_output","call_id":"c_paris","output":"18°C and sunny"}`,
		`{"type":"function_call_output","call_id":"c_rome","output":"24°C, a light breeze from the sea` + more + `"}`,
	}})
	a.do(endTurn, map[string]any{"m": "Paris 18°C and sunny; Rome 24°C." + more})
	a.do(beginTurn, map[string]any{"m": "Book me a table in Rome." + more})
	a.do(recordItems, map[string]any{"items": []string{
		`{"type":"function_call","call_id":"c_book","name":"book_table","arguments":"{\"city\":\"Rome\",\"people\":2}"}`,
		`{"type":"function_call_output","call_id":"c_book","output":"Booked: Trattoria da Enzo, 20:00` + more + `"}`,
		`{"type":"message","role":"assistant","content":[{"type":"output_text","text":"Booked at Trattoria da Enzo."}]}`,
		`{"type":"message","role":"assistant","content":[{"type":"output_text","text":"It is at 20:00 for two.` + more + `"}]}`,
	}})
	a.do(endTurn, map[string]any{"m": ""})
	whole := a.messages(1 << 20)
	return a, whole.Messages
}

type chatMessageOut struct {
	Role, Content                       string
	TokenCount                          int
	Kind, Name, CallID, Arguments, JSON string
}

type messagesOut struct {
	Text           string
	TokenCount     int
	TruncatedTurns int
	Messages       []chatMessageOut
}

func (a *agent) messages(limit int) messagesOut {
	a.t.Helper()
	return decode[struct{ Session struct{ Context messagesOut } }](a.t, a.do(messagesBuild, map[string]any{"limit": limit})).Session.Context
}

func TestMessagesShowEveryItemInOrder(t *testing.T) {
	s := apitest.New(t)
	_, whole := toolSession(t, s)
	more := strings.Repeat(" Somewhere quiet, near the centre, not too expensive.", 4)
	var got []string
	for _, m := range whole {
		got = append(got, fmt.Sprintf("%s %s %s %s", m.Role, m.Kind, m.CallID, m.Content))
	}
	assert.Equal(t, []string{
		"user MESSAGE  Hello, I plan a trip to Paris and Rome next week.",
		"assistant MESSAGE  Happy to help with your trip.",
		"user MESSAGE  What is the weather in both cities?",
		"assistant FUNCTION_CALL c_paris ",
		"assistant FUNCTION_CALL c_rome ",
		"tool FUNCTION_CALL_OUTPUT c_paris 18°C and sunny",
		"tool FUNCTION_CALL_OUTPUT c_rome 24°C, a light breeze from the sea" + more,
		"assistant MESSAGE  Paris 18°C and sunny; Rome 24°C." + more,
		"user MESSAGE  Book me a table in Rome." + more,
		"assistant FUNCTION_CALL c_book ",
		"tool FUNCTION_CALL_OUTPUT c_book Booked: Trattoria da Enzo, 20:00" + more,
		"assistant MESSAGE  Booked at Trattoria da Enzo.",
		"assistant MESSAGE  It is at 20:00 for two." + more,
	}, got, "two assistant messages stay two; the empty end adds none")
	assert.Equal(t, `{"type":"function_call","call_id":"c_book","name":"book_table","arguments":"{\"city\":\"Rome\",\"people\":2}"}`, whole[9].JSON)
	assert.Equal(t, `{"type":"message","role":"user","content":"Book me a table in Rome.`+more+`"}`, whole[8].JSON)
}

// TestNoMessagesWindowSeparatesACallFromItsOutput sweeps every model limit
// from one that keeps nothing to one that keeps everything: each window is
// the newest messages (a suffix of the whole), holds every call with its
// output, fits, and is the longest suffix that does both.
func TestNoMessagesWindowSeparatesACallFromItsOutput(t *testing.T) {
	s := apitest.New(t)
	a, whole := toolSession(t, s)
	total := 0
	for _, m := range whole {
		total += m.TokenCount
	}
	// pairsWhole says whether whole[i:] holds each of its call ids' messages.
	pairsWhole := func(i int) bool {
		for _, m := range whole[:i] {
			if m.CallID == "" {
				continue
			}
			for _, later := range whole[i:] {
				if later.CallID == m.CallID {
					return false
				}
			}
		}
		return true
	}
	sizes := map[int]bool{}
	// 100 is the smallest model limit a build accepts: it keeps the last
	// two messages, and larger ones every start from there back.
	require.Less(t, 80, total)
	for limit := 100; float64(limit)*0.8 <= float64(total)+10; limit++ {
		room := int(float64(limit) * 0.8)
		b := a.messages(limit)
		kept := b.Messages
		if room < total {
			require.NotEmpty(t, kept, "limit %d", limit)
			require.True(t, strings.HasPrefix(kept[0].Content, "[Note: "), "limit %d: the notice leads", limit)
			kept = kept[1:] // the notice is not part of the room (as before items)
		}
		start := len(whole) - len(kept)
		require.GreaterOrEqual(t, start, 0, "limit %d", limit)
		require.Equal(t, whole[start:], kept, "limit %d: the newest messages", limit)
		require.True(t, pairsWhole(start), "limit %d: a call and its output are kept or cut together", limit)
		used := 0
		for _, m := range kept {
			used += m.TokenCount
		}
		require.LessOrEqual(t, used, max(room, 0), "limit %d: the window fits", limit)
		for longer := start - 1; longer >= 0; longer-- {
			extra := 0
			for _, m := range whole[longer:start] {
				extra += m.TokenCount
			}
			require.False(t, pairsWhole(longer) && used+extra <= room, "limit %d: messages from %d would fit whole too", limit, longer)
		}
		sizes[len(kept)] = true
	}
	// Every start the rule allows was seen, and none inside a call's span:
	// between c_paris's call (3) and c_rome's output (6), or c_book's call
	// (9) and its output (10).
	require.Len(t, whole, 13)
	for start := 0; start <= len(whole); start++ {
		if start == 4 || start == 5 || start == 6 || start == 10 {
			assert.False(t, sizes[len(whole)-start], "no window starts at message %d", start)
		} else if start >= 1 && start <= 11 {
			assert.True(t, sizes[len(whole)-start], "a window starts at message %d", start)
		}
	}
}

func TestThinkAndReplyShowATurnsToolCalls(t *testing.T) {
	s := apitest.New(t)
	a, _ := toolSession(t, s)
	a.do(beginTurn, map[string]any{"m": "Thanks!"})
	a.do(recordItems, map[string]any{"items": []string{
		`{"type":"function_call","call_id":"c_note","name":"save_note","arguments":"{\"text\":\"` + strings.Repeat("long ", 100) + `\"}"}`,
		`{"type":"function_call_output","call_id":"c_note","output":"saved"}`,
	}})
	want := []string{
		`Turn 2 — Tool get_weather({"city":"Paris"}) → 18°C and sunny`,
		`Turn 2 — Tool get_weather({"city":"Rome"}) → 24°C, a light breeze from the sea`,
		`Turn 3 — Tool book_table({"city":"Rome","people":2}) → Booked: Trattoria da Enzo, 20:00`,
		`Turn 3 — Assistant: Booked at Trattoria da Enzo.`,
		`Turn 3 — Assistant: It is at 20:00 for two.`,
		`Turn 4 — Tool save_note({"text":"` + strings.Repeat("long ", 78) + `l...) → saved`,
	}
	for _, node := range []string{"THINK", "REPLY"} {
		text := a.context(node, nil).Text
		for _, line := range want {
			assert.Contains(t, text, line, node)
		}
	}
}

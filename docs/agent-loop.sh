#!/usr/bin/env bash
# An agent loop in raw GraphQL over curl: read -> generate -> save ->
# context, two turns of a kitchen session. docs/agent-loop.md shows it with
# the responses it got; clients/python and clients/typescript write the same loop
# with their clients. graph/agent_loop_test.go runs it against a real server.
#
#   SG_URL=http://127.0.0.1:8080 SG_API_KEY=sg_... bash docs/agent-loop.sh
#
# SG_KEY, the name before 0.2, is still read when SG_API_KEY is unset.
set -euo pipefail
if [ -z "${SG_API_KEY:-}" ] && [ -n "${SG_KEY:-}" ]; then
  echo "agent-loop.sh: SG_KEY is deprecated: set SG_API_KEY" >&2
  SG_API_KEY=$SG_KEY
fi
: "${SG_URL:=http://127.0.0.1:8080}" "${SG_API_KEY:?set SG_API_KEY to an API key}"

# gql QUERY [jq-args...]: POST the query with the variables built by
# jq -n from the remaining arguments; print the response's data, or its
# errors on stderr and fail.
gql() {
  local query=$1 vars body
  shift
  vars=$(jq -nc "$@" '$ARGS.named')
  body=$(jq -nc --arg q "$query" --argjson v "$vars" '{query: $q, variables: $v}')
  local res
  res=$(curl -sS "$SG_URL/graphql" -H "authorization: Bearer $SG_API_KEY" \
    -H 'content-type: application/json' -d "$body")
  if jq -e '.errors' <<<"$res" >/dev/null; then
    jq -c '.errors' <<<"$res" >&2
    return 1
  fi
  jq -c '.data' <<<"$res"
}

# Open (or get back) the conversation by the runtime's own key.
S=$(gql 'mutation($key: String!) {
  openSession(input: {tenant: "acme", externalKey: $key, systemPrompt: "You are a kitchen assistant."}) {
    session { id } } }' --arg key "chat-$RANDOM$RANDOM" | jq -r '.openSession.session.id')
echo "session $S"

# Turn 1. Read: the runtime's CRUD layer ran SELECT ... FROM recipes; the
# server gives the rows refs, and the LLM only ever sees those.
gql 'mutation($s: ID!) { beginTurn(input: {sessionID: $s, userMessage: "Find me an Indian dinner and plan it for Monday"}) {
  turn { number } } }' --arg s "$S"
gql 'mutation($s: ID!, $records: [Map!]!) { recordRead(input: {sessionID: $s, table: "recipes", step: 1, records: $records}) {
  records refs { ref label } } }' --arg s "$S" --argjson records '[
  {"id": "0190a5b4-0000-7000-8000-000000000001", "name": "Dal Tadka", "cuisine": "Indian", "total_time": 40},
  {"id": "0190a5b4-0000-7000-8000-000000000002", "name": "Chana Masala", "cuisine": "Indian", "total_time": 35}]'

# Generate: the LLM wrote a meal plan that names recipe_1; it waits, unsaved,
# as gen_meal_plan_1. (The runtime translates refs in payloads it saves with
# translatePayload; the content may keep the ref.)
gql 'mutation($s: ID!) { recordGenerated(input: {sessionID: $s, entityType: "meal_plan", step: 2,
  content: {date: "2026-01-12", meal_type: "dinner", recipe_id: "recipe_1"}}) { ref { ref label } } }' --arg s "$S"

# Context: what Reply's prompt holds now (the plan as generated, not saved).
gql 'query($s: ID!) { session(id: $s) { context(node: REPLY) { tokenCount budget
  sections { name tokenCount } tiers { generated } } } }' --arg s "$S"
gql 'mutation($s: ID!) { endTurn(input: {sessionID: $s,
  assistantMessage: "I planned Dal Tadka for Monday dinner. Shall I save it?"}) { turn { number status } } }' --arg s "$S"

# Turn 2. Save: the user said yes. The runtime turns the content's refs
# back into UUIDs, inserts the row, and tells the server which gen ref it
# saved; the gen ref is promoted to meal_plan_1.
gql 'mutation($s: ID!) { beginTurn(input: {sessionID: $s, userMessage: "Yes, save it"}) { turn { number } } }' --arg s "$S"
gql 'query($s: ID!) { session(id: $s) { translatePayload(entityType: "meal_plan",
  data: {date: "2026-01-12", meal_type: "dinner", recipe_id: "recipe_1"}) { data saves } } }' --arg s "$S"
gql 'mutation($s: ID!) { recordCreated(input: {sessionID: $s, entityType: "meal_plan", step: 1,
  entityID: "0190a5b4-0000-7000-8000-0000000000aa", genRef: "gen_meal_plan_1"}) { promoted ref { ref label } } }' --arg s "$S"

# Context: Act's prompt names what was just saved, by ref.
gql 'query($s: ID!) { session(id: $s) { context(node: ACT) { tokenCount budget text } } }' --arg s "$S" |
  jq -r '.session.context.text' | sed -n '1,12p'
gql 'mutation($s: ID!) { endTurn(input: {sessionID: $s, assistantMessage: "Saved: Monday dinner is Dal Tadka."}) {
  turn { number status } } }' --arg s "$S"

// The agent loop (docs/agent-loop.sh's two turns: read, generate,
// context, save, context again) through sessiongraph's /mcp, with the
// official MCP TypeScript SDK's client. It prints what each step answered as
// one JSON object; internal/mcpserver/client_test.go checks it.
//
//   node agent-loop.mjs http://127.0.0.1:8080 sg_...
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [url, key] = process.argv.slice(2);
const transport = new StreamableHTTPClientTransport(new URL(url + "/mcp"), {
  requestInit: { headers: { Authorization: `Bearer ${key}` } },
});
const client = new Client({ name: "sessiongraph-mcp-test", version: "1.0.0" });
await client.connect(transport);

const out = {};
out.server = client.getServerVersion();
out.tools = (await client.listTools()).tools.map((t) => t.name).sort();

// call runs a tool and answers its structured content, or throws with the
// error's text when the tool failed.
async function call(name, args) {
  const res = await client.callTool({ name, arguments: args });
  if (res.isError) {
    throw new Error(`${name}: ${res.content.map((c) => c.text).join(" ")}`);
  }
  return res.structuredContent;
}

// refuse runs a tool that must fail and answers its error: the text and
// the code in _meta.
async function refuse(name, args) {
  const res = await client.callTool({ name, arguments: args });
  if (!res.isError) {
    throw new Error(`${name} succeeded: ${JSON.stringify(res.structuredContent)}`);
  }
  return { text: res.content[0].text, error: res._meta["sessiongraph/error"] };
}

// Open (or get back) the conversation by the runtime's own key.
const opened = await call("open_session", {
  tenant: "acme",
  externalKey: `mcp-chat-${Date.now()}-${Math.random()}`,
  systemPrompt: "You are a kitchen assistant.",
});
const s = opened.session.id;
out.opened = { created: opened.created, status: opened.session.status, currentTurn: opened.session.currentTurn };

// Turn 1: read, generate, REPLY's context.
out.begin1 = (await call("begin_turn", { sessionID: s, userMessage: "Find me an Indian dinner and plan it for Monday" })).turn;
const read = await call("record_read", {
  sessionID: s, table: "recipes", step: 1, records: [
    { id: "0190a5b4-0000-7000-8000-000000000001", name: "Dal Tadka", cuisine: "Indian", total_time: 40 },
    { id: "0190a5b4-0000-7000-8000-000000000002", name: "Chana Masala", cuisine: "Indian", total_time: 35 },
  ],
});
out.read = { records: read.records, refs: read.refs.map((r) => ({ ref: r.ref, label: r.label })) };
const generated = await call("record_generated", {
  sessionID: s, entityType: "meal_plan", step: 2,
  content: { date: "2026-01-12", meal_type: "dinner", recipe_id: "recipe_1" },
});
out.generated = generated.ref;
const reply = await call("build_context", { sessionID: s, node: "REPLY" });
out.reply = { node: reply.node, budget: reply.budget, fits: reply.tokenCount > 0 && reply.tokenCount <= reply.budget, tiers: reply.tiers,
  sections: reply.sections.map((x) => x.name) };
out.end1 = (await call("end_turn", { sessionID: s, assistantMessage: "I planned Dal Tadka for Monday dinner. Shall I save it?" })).turn;

// Turn 2: translate the content's refs, save, ACT's context.
out.begin2 = (await call("begin_turn", { sessionID: s, userMessage: "Yes, save it" })).turn;
out.translated = await call("translate_payload", {
  sessionID: s, entityType: "meal_plan",
  data: { date: "2026-01-12", meal_type: "dinner", recipe_id: "recipe_1" },
});
out.created = await call("record_created", {
  sessionID: s, entityType: "meal_plan", step: 1,
  entityID: "0190a5b4-0000-7000-8000-0000000000aa", genRef: "gen_meal_plan_1",
});
const act = await call("build_context", { sessionID: s, node: "ACT" });
out.act = { budget: act.budget, justSaved: act.text.includes("## Just saved (content kept for linked records)"),
  hasUUID: /[0-9a-f]{8}-[0-9a-f]{4}-/.test(act.text) };
out.resolved = (await call("resolve_refs", { sessionID: s, refs: ["recipe_1", out.created.ref.ref] })).refs;
out.retained = (await call("retain_ref", { sessionID: s, ref: "recipe_2", reason: "the user may want it next week" })).ref;
out.released = (await call("release_ref", { sessionID: s, ref: "recipe_2" })).ref;
out.end2 = (await call("end_turn", { sessionID: s, assistantMessage: "Saved: Monday dinner is Dal Tadka." })).turn;

// Each node's context with its budget, and MESSAGES as chat messages.
out.budgets = {};
for (const node of ["UNDERSTAND", "THINK", "ACT", "REPLY", "MESSAGES"]) {
  out.budgets[node] = (await call("build_context", { sessionID: s, node })).budget;
}
const messages = await call("build_context", { sessionID: s, node: "MESSAGES" });
out.messages = messages.messages.map((m) => [m.role, m.content]);

// The resources: the templates, a node's context text and working memory.
out.templates = (await client.listResourceTemplates()).resourceTemplates.map((t) => t.uriTemplate).sort();
const think = await client.readResource({ uri: `sessiongraph://sessions/${s}/context/THINK` });
out.thinkResource = { mimeType: think.contents[0].mimeType, hasRecipe: think.contents[0].text.includes("recipe_1") };
const memory = await client.readResource({ uri: `sessiongraph://sessions/${s}/working-memory` });
out.memory = JSON.parse(memory.contents[0].text);

// Errors carry the API's stable codes.
out.unknownRef = await refuse("resolve_refs", { sessionID: s, refs: ["recipe_9"] });
out.turnInProgress = await (async () => {
  await call("begin_turn", { sessionID: s, userMessage: "One more thing" });
  return refuse("begin_turn", { sessionID: s, userMessage: "And another" });
})();
try {
  await client.readResource({ uri: `sessiongraph://sessions/00000000-0000-4000-8000-000000000000/working-memory` });
  out.missingSession = "read";
} catch (e) {
  out.missingSession = { code: e.code, message: e.message };
}

await client.close();
console.log(JSON.stringify(out));

// The framework adapters against the real packages from npm and the real server: the OpenAI
// Agents SDK's Session (its items checked by the SDK's own protocol schemas) and @langchain/core's
// BaseListChatMessageHistory.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, test } from 'node:test';

import { Agent, protocol, run, setTracingDisabled, Usage, type Model, type ModelRequest, type ModelResponse, type Session } from '@openai/agents-core';
import { BaseListChatMessageHistory } from '@langchain/core/chat_history';
import { AIMessage, HumanMessage, SystemMessage, ToolMessage, type BaseMessage } from '@langchain/core/messages';

import { SessionGraphChatMessageHistory } from '../src/adapters/langchain.js';
import { SessionGraphSession } from '../src/adapters/openai-agents.js';
import { operations, type SessionGraphClient } from '../src/index.js';
import { client, openSession } from './helpers.js';

const sg = client();
after(() => sg.close());

/** The session's turns as the server keeps them: [number, status, user, assistant]. */
async function turns(c: SessionGraphClient, id: string) {
  const { session } = await c.request(operations.ChatTurnsDocument, { id, first: 50, after: null });
  return (session?.turns.edges ?? []).map((e) => [e?.node?.number, e?.node?.status, e?.node?.userMessage, e?.node?.assistantMessage]);
}

test('Agents SDK: an empty session (the rest side by side with MemorySession: items.test.ts)', async () => {
  const s: Session = await SessionGraphSession.open(sg, 'acme', `agents-${randomUUID()}`);
  assert.deepEqual(await s.getItems(), []);
  assert.equal(await s.popItem(), undefined);
});

/** Stands in for the LLM: answers the next scripted text and keeps the input it was given. */
class ScriptedModel implements Model {
  readonly inputs: unknown[] = [];
  constructor(private readonly answers: string[]) {}

  async getResponse(request: ModelRequest): Promise<ModelResponse> {
    this.inputs.push(request.input);
    const text = this.answers.shift() ?? '';
    return {
      usage: new Usage(),
      output: [{ type: 'message', id: `msg_${randomUUID()}`, role: 'assistant', status: 'completed', content: [{ type: 'output_text', text }] }],
    };
  }

  // eslint-disable-next-line require-yield
  async *getStreamedResponse(): AsyncIterable<never> {
    throw new Error('these tests do not stream');
  }
}

test("Agents SDK: run() keeps the agent's memory in sessiongraph", async () => {
  setTracingDisabled(true);
  const model = new ScriptedModel(['Dal Tadka.', 'Kheer.']);
  const agent = new Agent({ name: 'cook', instructions: 'You plan dinners.', model });
  const memory = await SessionGraphSession.open(sg, 'acme', `runner-${randomUUID()}`);
  const first = await run(agent, 'What can I cook?', { session: memory });
  const second = await run(agent, 'And dessert?', { session: memory });
  assert.deepEqual([first.finalOutput, second.finalOutput], ['Dal Tadka.', 'Kheer.']);
  // The second run's model saw the first turn, read back from sessiongraph.
  const seen = (model.inputs[1] as { role: string; content: string | { text: string }[] }[]).map((i) => [
    i.role,
    typeof i.content === 'string' ? i.content : i.content.map((c) => c.text).join(''),
  ]);
  assert.deepEqual(seen, [
    ['user', 'What can I cook?'],
    ['assistant', 'Dal Tadka.'],
    ['user', 'And dessert?'],
  ]);
  // A turn per user message, its items exactly what the SDK added; the newest stays open for more.
  assert.deepEqual(await turns(sg, memory.sessionID), [
    [1, 'COMPLETED', '', ''],
    [2, 'OPEN', '', ''],
  ]);
  const items = await sg.turnItems(memory.sessionID, 2);
  assert.deepEqual(items.map((i) => [i.role, i.content]), [['user', 'And dessert?'], ['assistant', 'Kheer.']]);
  protocol.UserMessageItem.parse(JSON.parse(items[0].json));
  protocol.AssistantMessageItem.parse(JSON.parse(items[1].json));
});

const pairs = (ms: BaseMessage[]) => ms.map((m) => [m.getType(), m.text]);

test("LangChain: the messages are turns' items; getContextMessages is the MESSAGES build; clear removes them all", async () => {
  const { session } = await sg.openSession({ tenant: 'acme', externalKey: `lc-${randomUUID()}`, systemPrompt: 'You plan dinners.' });
  const h = new SessionGraphChatMessageHistory(sg, session.id);
  assert.ok(h instanceof BaseListChatMessageHistory);
  assert.deepEqual(await h.getMessages(), []);
  const call = new AIMessage({ content: 'Let me look.', tool_calls: [{ id: 'call_1', name: 'pantry', args: { shelf: 'top' }, type: 'tool_call' }] });
  const added = [
    new SystemMessage('Vegetarian household.'),
    new HumanMessage('What can I cook?'),
    call,
    new ToolMessage({ content: 'red lentils', tool_call_id: 'call_1' }),
    new AIMessage('Dal Tadka.'),
  ];
  await h.addMessages(added);
  await h.addUserMessage('And dessert?');
  // A human message begins a turn; each message is an item the server reads, a tool call as a call.
  assert.deepEqual(await turns(sg, session.id), [
    [1, 'COMPLETED', '', ''],
    [2, 'COMPLETED', '', ''],
    [3, 'OPEN', '', ''],
  ]);
  const items = await sg.turnItems(session.id, 2);
  assert.deepEqual(
    items.map((i) => [i.kind, i.role, i.content, i.name, i.callID]),
    [
      ['MESSAGE', 'user', 'What can I cook?', '', ''],
      ['MESSAGE', 'assistant', 'Let me look.', '', ''],
      ['FUNCTION_CALL', '', '', 'pantry', 'call_1'],
      ['FUNCTION_CALL_OUTPUT', '', 'red lentils', '', 'call_1'],
      ['MESSAGE', 'assistant', 'Dal Tadka.', '', ''],
    ],
  );
  assert.deepStrictEqual(await h.getMessages(), [...added, new HumanMessage('And dessert?')]);

  // The context window: the session's system prompt, then the items, each message as it was added.
  assert.deepStrictEqual(await h.getContextMessages(), [new SystemMessage('You plan dinners.'), ...added, new HumanMessage('And dessert?')]);
  for (let i = 0; i < 3; i++) {
    await h.addMessages([new HumanMessage(`question ${i} ` + 'words '.repeat(40)), new AIMessage(`answer ${i} ` + 'more '.repeat(40))]);
  }
  const options = { modelLimit: 300, keepRecent: 2, strategy: 'SLIDING_WINDOW' as const, tokenizer: 'chars4' };
  const cut = await new SessionGraphChatMessageHistory(sg, session.id, options).getContextMessages();
  const build = await sg.context(session.id, 'MESSAGES', options);
  const types: Record<string, string> = { user: 'human', assistant: 'ai', system: 'system', tool: 'tool' };
  assert.deepEqual(pairs(cut), build.messages.map((m) => [types[m.role], m.content]));
  assert.deepEqual(pairs(cut)[0], ['system', 'You plan dinners.']);
  assert.equal(cut.at(-1)?.text, `answer 2 ${'more '.repeat(40)}`);
  assert.ok(cut.length < (await h.getMessages()).length);

  await h.clear();
  assert.deepEqual(await h.getMessages(), []);
  assert.deepEqual(await turns(sg, session.id), []);
});

test("LangChain: a window that cuts an AI message's text but keeps its tool call answers the message whole, then the call's output", async () => {
  const id = await openSession(sg);
  const h = new SessionGraphChatMessageHistory(sg, id, { modelLimit: 200, keepRecent: 1, strategy: 'SLIDING_WINDOW', tokenizer: 'chars4' });
  await h.addMessages([
    new HumanMessage('What is on the top shelf? ' + 'please '.repeat(60)),
    new AIMessage({ content: 'Looking. ' + 'hmm '.repeat(200), tool_calls: [{ id: 'call_9', name: 'pantry', args: { shelf: 'top' }, type: 'tool_call' }] }),
    new ToolMessage({ content: 'rice', tool_call_id: 'call_9' }),
    new AIMessage('Rice.'),
  ]);
  const cut = await h.getContextMessages();
  // The build cut the question and the message's text; its call (the message's last item) stays with its output.
  const { session } = await sg.request(operations.ContextMessagesDocument, { sessionID: id, options: h.options });
  assert.deepEqual(session?.context.messages.map((m) => [m.kind, m.role]), [
    ['MESSAGE', 'system'],
    ['FUNCTION_CALL', 'assistant'],
    ['FUNCTION_CALL_OUTPUT', 'tool'],
    ['MESSAGE', 'assistant'],
  ]);
  assert.deepEqual(
    cut.map((m) => [m.getType(), m.text.slice(0, 13), (m as AIMessage).tool_calls?.map((c) => [c.id, c.name, c.args])]),
    [
      ['system', '[Note: 2 olde', undefined],
      ['ai', 'Looking. hmm ', [['call_9', 'pantry', { shelf: 'top' }]]],
      ['tool', 'rice', undefined],
      ['ai', 'Rice.', []],
    ],
  );
});

// The framework adapters against the real packages from npm and the real server: the OpenAI
// Agents SDK's Session (its items checked by the SDK's own protocol schemas) and @langchain/core's
// BaseListChatMessageHistory.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, test } from 'node:test';

import { Agent, protocol, run, setTracingDisabled, Usage, type Model, type ModelRequest, type ModelResponse, type Session } from '@openai/agents-core';
import { BaseListChatMessageHistory } from '@langchain/core/chat_history';
import { AIMessage, HumanMessage, SystemMessage, type BaseMessage } from '@langchain/core/messages';

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

const pairs = (ms: BaseMessage[]) => ms.map((m) => [m.getType(), m.content]);

test('LangChain: the history is the MESSAGES build; messages write turns; clear resets', async () => {
  const id = await openSession(sg);
  const h = new SessionGraphChatMessageHistory(sg, id);
  assert.ok(h instanceof BaseListChatMessageHistory);
  assert.deepEqual(await h.getMessages(), []);
  await h.addMessages([new SystemMessage('You plan dinners.'), new HumanMessage('What can I cook?'), new AIMessage('Dal Tadka.')]);
  await h.addUserMessage('And dessert?');
  assert.deepEqual((await turns(sg, id)).at(-1), [2, 'OPEN', 'And dessert?', '']);
  await h.addAIMessage('Kheer.');
  assert.deepEqual(pairs(await h.getMessages()), [
    ['system', 'You plan dinners.'],
    ['human', 'What can I cook?'],
    ['ai', 'Dal Tadka.'],
    ['human', 'And dessert?'],
    ['ai', 'Kheer.'],
  ]);

  // Over the model limit, the history is the MESSAGES build's sliding window, as it is.
  for (let i = 0; i < 3; i++) {
    await h.addMessages([new HumanMessage(`question ${i} ` + 'words '.repeat(40)), new AIMessage(`answer ${i} ` + 'more '.repeat(40))]);
  }
  const options = { modelLimit: 300, keepRecent: 2, strategy: 'SLIDING_WINDOW' as const, tokenizer: 'chars4' };
  const cut = await new SessionGraphChatMessageHistory(sg, id, options).getMessages();
  const build = await sg.context(id, 'MESSAGES', options);
  const roles: Record<string, string> = { user: 'human', assistant: 'ai', system: 'system' };
  assert.deepEqual(pairs(cut), build.messages.map((m) => [roles[m.role], m.content]));
  assert.deepEqual(pairs(cut)[0], ['system', 'You plan dinners.']);
  assert.ok(String(cut.at(-1)?.content).startsWith('answer 2'));
  assert.ok(cut.length < (await h.getMessages()).length);

  await h.clear();
  assert.deepEqual(pairs(await h.getMessages()), [['system', 'You plan dinners.']]);
  assert.deepEqual(await turns(sg, id), []);
});

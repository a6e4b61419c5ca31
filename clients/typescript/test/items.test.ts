// A turn's items through the client, and the Agents SDK session adapter side by side with the
// SDK's own MemorySession: the same scripted runs (a tool call and its output, two assistant
// messages in one answer), system messages, getItems with a limit, popItem and clearSession; then
// runs through errors (a model and tools that fail), limits past the history and pops after a
// completed run; compared item by item and by what the model received.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, test } from 'node:test';

import {
  Agent,
  MemorySession,
  run,
  setTracingDisabled,
  tool,
  Usage,
  type AgentInputItem,
  type Model,
  type ModelRequest,
  type ModelResponse,
  type Session,
} from '@openai/agents-core';

import { SessionGraphSession } from '../src/adapters/openai-agents.js';
import { client, openSession } from './helpers.js';

const sg = client();
after(() => sg.close());
setTracingDisabled(true);

const message = (id: number, ...texts: string[]) => ({
  type: 'message' as const,
  id: `msg_${id}`,
  role: 'assistant' as const,
  status: 'completed' as const,
  content: texts.map((text) => ({ type: 'output_text' as const, text })),
});

/** Stands in for the LLM: each call answers the next scripted output (fixed ids, so two runs give equal items) and keeps its input. */
class ScriptedModel implements Model {
  readonly inputs: unknown[] = [];
  private readonly script: ModelResponse['output'][] = [
    // Run 1: a tool call, then the answer once the tool's output is in.
    [{ type: 'function_call', id: 'fc_1', callId: 'call_pantry', name: 'pantry', arguments: '{"shelf":"top"}', status: 'completed' }],
    [message(2, 'Dal Tadka, with the lentils.')],
    // Run 2: two assistant messages in one answer.
    [message(3, 'Kheer.'), message(4, 'Or fruit, if you’d rather "keep it light".')],
  ];

  async getResponse(request: ModelRequest): Promise<ModelResponse> {
    this.inputs.push(structuredClone(request.input));
    return { usage: new Usage(), output: this.script.shift() ?? [] };
  }

  // eslint-disable-next-line require-yield
  async *getStreamedResponse(): AsyncIterable<never> {
    throw new Error('these tests do not stream');
  }
}

const pantry = tool({
  name: 'pantry',
  description: 'What is on a pantry shelf.',
  parameters: { type: 'object', properties: { shelf: { type: 'string' } }, required: ['shelf'], additionalProperties: false },
  strict: true,
  execute: async (input) => `${(input as { shelf: string }).shelf}: red lentils, rice, cardamom`,
});

async function runs(session: Session): Promise<ScriptedModel> {
  const model = new ScriptedModel();
  const agent = new Agent({ name: 'cook', instructions: 'You plan dinners.', model, tools: [pantry] });
  await run(agent, 'What can I cook?', { session });
  await run(agent, 'And dessert?', { session });
  return model;
}

/** One conversation on a session: what it stores and answers at each step. */
async function scenario(session: Session): Promise<Record<string, unknown>> {
  const seen: Record<string, unknown> = {};
  await session.addItems([
    { role: 'system', content: 'Vegetarian household.' },
    { type: 'message', role: 'system', content: 'Answer in one line.' },
  ] as AgentInputItem[]);
  seen['model inputs'] = (await runs(session)).inputs;
  seen.items = await session.getItems();
  seen['limit 3'] = await session.getItems(3);
  seen['limit 0'] = await session.getItems(0);
  seen.popped = [await session.popItem(), await session.popItem()];
  seen['after pop'] = await session.getItems();
  await session.addItems([{ role: 'user', content: 'Then soup?' } as AgentInputItem]);
  seen['after add'] = await session.getItems();
  await session.clearSession();
  seen.cleared = await session.getItems();
  seen['pop when empty'] = await session.popItem();
  return seen;
}

test("the SDK's items round-trip byte-equal through recordItems and Turn.items", async () => {
  const sdk = new MemorySession();
  await runs(sdk);
  const texts = (await sdk.getItems()).map((i) => JSON.stringify(i));
  // and an item as a hand may write it: spacing, key order and escapes kept as they are.
  texts.push('{ "role":"assistant" ,"content":[{"type":"output_text","text":"caf\\u00e9 ☕"}], "type":"message"}');
  assert.ok(texts.some((t) => t.includes('"function_call"')) && texts.some((t) => t.includes('"function_call_result"')));
  const id = await openSession(sg);
  const turn = await sg.beginTurn({ sessionID: id, userMessage: '' });
  const recorded = await sg.recordItems({ sessionID: id, items: texts });
  assert.deepEqual(recorded.items.map((i) => i.json), texts);
  assert.deepEqual(recorded.items.map((i) => i.position), texts.map((_, n) => n + 1));
  await sg.endTurn({ sessionID: id, assistantMessage: '' });
  const items = await sg.turnItems(id, turn.number);
  assert.deepEqual(items.map((i) => i.json), texts);
  const call = items.find((i) => i.kind === 'FUNCTION_CALL');
  assert.deepEqual([call?.name, call?.callID, call?.arguments], ['pantry', 'call_pantry', '{"shelf":"top"}']);
  assert.equal(items.at(-1)?.content, 'café ☕');
  assert.deepEqual(await sg.turnItems(id, turn.number + 1), []);
});

test("Agents SDK: SessionGraphSession stores and answers what the SDK's MemorySession does", async () => {
  const want = await scenario(new MemorySession());
  const ours = await SessionGraphSession.open(sg, 'acme', `side-${randomUUID()}`);
  const got = await scenario(ours);
  // The scenario exercised what it says: both system messages, the tool's call and output, both answers.
  const shapes = (want.items as { type?: string; role?: string }[]).map((i) => `${i.type ?? 'message'}:${i.role ?? ''}`);
  assert.deepEqual(shapes, [
    'message:system',
    'message:system',
    'message:user',
    'function_call:',
    'function_call_result:',
    'message:assistant',
    'message:user',
    'message:assistant',
    'message:assistant',
  ]);
  assert.equal((want['model inputs'] as unknown[]).length, 3);
  for (const step of Object.keys(want)) assert.deepEqual(got[step], want[step], step);
});

test('Agents SDK: popItem stops at an ended turn', async () => {
  const s = await SessionGraphSession.open(sg, 'acme', `pop-${randomUUID()}`);
  await s.addItems([{ role: 'user', content: 'hi' }, { role: 'assistant', content: 'hello' }] as AgentInputItem[]);
  await s.addItems([{ role: 'user', content: 'bye' } as AgentInputItem]);
  assert.deepEqual(await s.popItem(), { role: 'user', content: 'bye' });
  await assert.rejects(s.popItem(), /ended turns/);
  assert.deepEqual(await s.getItems(), [{ role: 'user', content: 'hi' }, { role: 'assistant', content: 'hello' }]);
});

/** The scripted model with errors in its script: an Error is thrown in place of an answer. */
class FailingModel extends ScriptedModel {
  private readonly failing: (ModelResponse['output'] | Error)[] = [
    // Run 1: the model fails on its first call, after the user's message was saved.
    new Error('the model is down'),
    // Run 2: a tool call whose tool fails (the SDK hands its error to the model), then the answer.
    [{ type: 'function_call', id: 'fc_100', callId: 'call_broken', name: 'broken_pantry', arguments: '{"shelf":"top"}', status: 'completed' }],
    [message(101, 'The pantry is not answering.')],
    // Run 3: a tool call whose tool throws out of the run.
    [{ type: 'function_call', id: 'fc_102', callId: 'call_raising', name: 'raising_pantry', arguments: '{"shelf":"top"}', status: 'completed' }],
    // Run 4: a tool call answered, then the model fails on its second call.
    [{ type: 'function_call', id: 'fc_103', callId: 'call_ok', name: 'pantry', arguments: '{"shelf":"low"}', status: 'completed' }],
    new Error('the model timed out'),
    // Run 5: a plain answer.
    [message(104, 'Soup it is.')],
  ];

  override async getResponse(request: ModelRequest): Promise<ModelResponse> {
    this.inputs.push(structuredClone(request.input));
    const next = this.failing.shift() ?? [];
    if (next instanceof Error) throw next;
    return { usage: new Usage(), output: next };
  }
}

const brokenPantry = tool({
  name: 'broken_pantry',
  description: 'A pantry that fails; the SDK gives the model its error.',
  parameters: { type: 'object', properties: { shelf: { type: 'string' } }, required: ['shelf'], additionalProperties: false },
  strict: true,
  execute: async () => {
    throw new Error('the pantry door is stuck');
  },
});
const raisingPantry = tool({
  name: 'raising_pantry',
  description: 'A pantry whose failure ends the run.',
  parameters: { type: 'object', properties: { shelf: { type: 'string' } }, required: ['shelf'], additionalProperties: false },
  strict: true,
  errorFunction: null,
  execute: async () => {
    throw new Error('the pantry fell over');
  },
});

/** Errors mid-turn, limits, and pops after a completed run: what a session keeps at each step. */
async function failingScenario(session: Session): Promise<Record<string, unknown>> {
  const model = new FailingModel();
  const agent = new Agent({ name: 'cook', instructions: 'You plan dinners.', model, tools: [pantry, brokenPantry, raisingPantry] });
  const seen: Record<string, unknown> = {};
  const runOne = async (name: string, text: string) => {
    try {
      seen[name] = (await run(agent, text, { session })).finalOutput;
    } catch (err) {
      // What the application sees; the session keeps what the SDK saved before it.
      seen[name] = `${(err as Error).name}: ${(err as Error).message}`;
    }
    seen[`${name} items`] = await session.getItems();
  };
  await runOne('model fails', 'What can I cook?');
  await runOne('tool fails', 'Check the pantry.');
  await runOne('tool throws', 'Check it again.');
  await runOne('model fails mid-run', 'The low shelf?');
  await runOne('after the errors', 'Soup?');
  seen['model inputs'] = model.inputs;
  const n = (seen['after the errors items'] as unknown[]).length;
  for (const limit of [1, 2, n - 1, n, n + 1, 1000]) seen[`limit ${limit}`] = await session.getItems(limit);
  // Pop the last completed run back to its user message, and add a new question in its place.
  seen.popped = [await session.popItem(), await session.popItem()];
  seen['after pops'] = await session.getItems();
  await session.addItems([{ role: 'user', content: 'Salad?' } as AgentInputItem]);
  seen['after add'] = await session.getItems(3);
  seen['popped again'] = await session.popItem();
  seen['after the last pop'] = await session.getItems(3);
  return seen;
}

test("Agents SDK: errors mid-turn, limits and pops after a completed run keep what MemorySession keeps", async () => {
  const sdkSession = new MemorySession();
  const want = await failingScenario(sdkSession);
  const ours = await SessionGraphSession.open(sg, 'acme', `errors-${randomUUID()}`);
  const got = await failingScenario(ours);
  // A pop past the newest user message reaches an ended turn: the documented loss.
  await assert.rejects(ours.popItem(), /ended turns/);
  await assert.rejects(ours.popItem(), /ended turns/);
  const afterRefused = await ours.getItems(3);
  // The scenario did what it says: the errors reached the application; the TypeScript SDK saves a
  // run's items when it completes, so a failed run left nothing in either session (the Python SDK
  // saves the user's message first: docs/adapters.md).
  assert.equal(want['model fails'], 'Error: the model is down');
  assert.equal(want['tool fails'], 'The pantry is not answering.');
  assert.match(String(want['tool throws']), /the pantry fell over/);
  assert.equal(want['model fails mid-run'], 'Error: the model timed out');
  assert.deepEqual(want['model fails items'], []);
  assert.deepEqual(want['model fails mid-run items'], want['tool fails items']);
  const outputs = (want['after the errors items'] as { type?: string; callId?: string; output?: unknown }[]).filter(
    (i) => i.type === 'function_call_result',
  );
  assert.deepEqual(outputs.map((o) => o.callId), ['call_broken']);
  assert.match(JSON.stringify(outputs[0].output), /An error occurred while running the tool/);
  assert.deepEqual(want['limit 1000'], want['after the errors items']);
  assert.equal((want.popped as { content?: string }[])[1].content, 'Soup?');
  assert.equal((want['model inputs'] as unknown[]).length, 7);
  for (const step of Object.keys(want)) assert.deepEqual(got[step], want[step], step);
  // Where they part: MemorySession pops on into the earlier runs; sessiongraph keeps ended turns.
  assert.notEqual(await sdkSession.popItem(), undefined);
  assert.deepEqual(afterRefused, want['after the last pop']);
});

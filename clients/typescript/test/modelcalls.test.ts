// Model calls against the real server: a runtime records the call each recorded build fed,
// by receipt or by session and node, and reads the session's totals; the adapters record the calls
// their framework reports.
import assert from 'node:assert/strict';
import { after, test } from 'node:test';

import { randomUUID } from 'node:crypto';

import { Agent, run, setTracingDisabled, tool, Usage, type Model, type ModelResponse } from '@openai/agents-core';

import { BaseChatModel } from '@langchain/core/language_models/chat_models';
import { AIMessage } from '@langchain/core/messages';
import type { ChatResult } from '@langchain/core/outputs';
import { RunnableWithMessageHistory } from '@langchain/core/runnables';

import { SessionGraphChatMessageHistory } from '../src/adapters/langchain.js';
import { SessionGraphSession } from '../src/adapters/openai-agents.js';
import { operations, SessionGraphClient, SessionGraphError } from '../src/index.js';
import { client, openSession, url } from './helpers.js';

const sg = client();
after(() => sg.close());

test('a model call is kept with the build it fed, and the totals sum the calls', async () => {
  const id = await openSession(sg);
  await sg.beginTurn({ sessionID: id, userMessage: 'plan dinner' });
  const { receipt } = await sg.recordContext({ sessionID: id, node: 'THINK' });
  const ok = await sg.recordModelCall({
    receiptID: receipt.id,
    model: 'gpt-4o',
    inputTokens: 1200,
    outputTokens: 300,
    latencyMs: 800,
    cost: 0.1,
    finishReason: 'stop',
  });
  const { id: okID, ...recorded } = ok;
  assert.ok(okID);
  assert.deepEqual(recorded, {
    receiptID: receipt.id,
    turn: 1,
    node: 'THINK',
    model: 'gpt-4o',
    inputTokens: 1200,
    outputTokens: 300,
    latencyMs: 800,
    cost: 0.1,
    finishReason: 'stop',
    error: null,
  });
  const failed = await sg.recordModelCall({
    sessionID: id,
    node: 'THINK',
    model: 'gpt-4o',
    inputTokens: 1000,
    outputTokens: 0,
    latencyMs: 30000,
    cost: 0.2,
    error: 'timeout',
  });
  assert.equal(failed.receiptID, receipt.id);
  assert.deepEqual(await sg.modelCallTotals(id), {
    calls: 2,
    failedCalls: 1,
    inputTokens: 2200,
    outputTokens: 300,
    latencyMs: 30800,
    cost: 0.3,
  });

  await assert.rejects(
    sg.recordModelCall({ receiptID: receipt.id, model: 'gpt-4o', inputTokens: 1, outputTokens: 1, latencyMs: 1, cost: -1 }),
    (err: unknown) => err instanceof SessionGraphError && err.code === 'BAD_USER_INPUT' && err.field === 'cost',
  );
  const globexKey = (await sg.createAPIKey({ name: 'globex runtime', role: 'CLIENT', tenant: 'globex' })).key;
  const globex = new SessionGraphClient({ url, apiKey: globexKey });
  try {
    await assert.rejects(
      globex.recordModelCall({ receiptID: receipt.id, model: 'gpt-4o', inputTokens: 1, outputTokens: 1, latencyMs: 1, cost: 0 }),
      (err: unknown) => err instanceof SessionGraphError && err.code === 'NOT_FOUND',
    );
  } finally {
    await globex.close();
  }
  assert.equal((await sg.modelCallTotals(id)).calls, 2);
});

/** The calls each receipt of a session fed: [turn, node, [model, in, out, cost, finish, error]]. */
async function adapterCalls(id: string) {
  const { session } = await sg.request(operations.AdapterModelCallsDocument, { id, first: 50 });
  return (session?.contextReceipts.edges ?? []).map((e) => [
    e?.node?.turn,
    e?.node?.node,
    e?.node?.modelCalls.map((c) => [c.model, c.inputTokens, c.outputTokens, c.cost, c.finishReason, c.error]),
  ]);
}

/** Stands in for the LLM: each call answers the next scripted output with its usage, or throws. */
class ScriptedModel implements Model {
  constructor(private readonly script: (ModelResponse | Error)[]) {}

  async getResponse(): Promise<ModelResponse> {
    const next = this.script.shift()!;
    if (next instanceof Error) throw next;
    return next;
  }

  // eslint-disable-next-line require-yield
  async *getStreamedResponse(): AsyncIterable<never> {
    throw new Error('these tests do not stream');
  }
}

const answer = (id: string, text: string, inputTokens: number, outputTokens: number): ModelResponse => ({
  usage: new Usage({ requests: 1, inputTokens, outputTokens, totalTokens: inputTokens + outputTokens }),
  output: [{ type: 'message', id, role: 'assistant', status: 'completed', content: [{ type: 'output_text', text }] }],
});

test("Agents SDK: each model call is recorded with the run's turn, its usage and cost; a call that throws in a failed turn of its own", async () => {
  setTracingDisabled(true);
  const memory = await SessionGraphSession.open(sg, 'acme', `calls-${randomUUID()}`);
  const scripted = new ScriptedModel([
    {
      usage: new Usage({ requests: 1, inputTokens: 120, outputTokens: 12, totalTokens: 132 }),
      output: [{ type: 'function_call', id: 'fc_1', callId: 'call_1', name: 'pantry', arguments: '{}', status: 'completed' }],
    },
    answer('msg_1', 'Dal Tadka.', 150, 20),
    new Error('the model is down'),
    answer('msg_2', 'Kheer.', 90, 5),
  ]);
  // $1 per million input tokens, $4 per million output tokens.
  const price = (c: { inputTokens: number; outputTokens: number }) => (c.inputTokens + 4 * c.outputTokens) / 1e6;
  const model = memory.recordModelCalls(scripted, { name: 'gpt-4o-mini', price });
  const pantry = tool({ name: 'pantry', description: 'The pantry.', parameters: { type: 'object', properties: {}, required: [], additionalProperties: false }, strict: true, execute: async () => 'lentils' });
  const agent = new Agent({ name: 'cook', instructions: 'You plan dinners.', model, tools: [pantry] });

  assert.equal((await run(agent, 'What can I cook?', { session: memory })).finalOutput, 'Dal Tadka.');
  await assert.rejects(run(agent, 'And dessert?', { session: memory }), /the model is down/);
  assert.equal((await run(agent, 'Dessert, again?', { session: memory })).finalOutput, 'Kheer.');

  assert.deepEqual(await adapterCalls(memory.sessionID), [
    [1, 'MESSAGES', [
      ['gpt-4o-mini', 120, 12, 0.000168, 'tool_calls', null],
      ['gpt-4o-mini', 150, 20, 0.00023, 'stop', null],
    ]],
    [2, 'MESSAGES', [['gpt-4o-mini', 0, 0, 0, null, 'Error: the model is down']]],
    [3, 'MESSAGES', [['gpt-4o-mini', 90, 5, 0.00011, 'stop', null]]],
  ]);
  const totals = await sg.modelCallTotals(memory.sessionID);
  assert.deepEqual([totals.calls, totals.failedCalls, totals.inputTokens, totals.outputTokens], [4, 1, 360, 37]);
  // The failed run's turn failed and holds no item: the history is what the SDK saved.
  const { session } = await sg.request(operations.ChatTurnsDocument, { id: memory.sessionID, first: 10, after: null });
  assert.deepEqual(session?.turns.edges?.map((e) => e?.node?.status), ['COMPLETED', 'FAILED', 'OPEN']);
  assert.deepEqual(
    (await memory.getItems()).map((i) => (i as { role?: string; type?: string }).role ?? i.type),
    ['user', 'function_call', 'function_call_result', 'assistant', 'user', 'assistant'],
  );
});

/** Stands in for a chat model: answers the next scripted message (with its usage) or throws. */
class ScriptedChatModel extends BaseChatModel {
  constructor(private readonly script: (AIMessage | Error)[]) {
    super({});
  }

  _llmType(): string {
    return 'scripted';
  }

  override invocationParams(): Record<string, unknown> {
    return { model: 'scripted-1' };
  }

  async _generate(): Promise<ChatResult> {
    const next = this.script.shift()!;
    if (next instanceof Error) throw next;
    return { generations: [{ text: next.text, message: next }] };
  }
}

const aiAnswer = (text: string, input: number, output: number) =>
  new AIMessage({
    content: text,
    usage_metadata: { input_tokens: input, output_tokens: output, total_tokens: input + output },
    response_metadata: { model_name: 'scripted-1-2026', finish_reason: 'stop' },
  });

test("LangChain: a history's model-call handler records each chat model call with the turn of its messages; a call that throws in a failed turn", async () => {
  const history = new SessionGraphChatMessageHistory(sg, await openSession(sg));
  const handler = history.modelCallHandler({ price: (c) => (c.inputTokens + 4 * c.outputTokens) / 1e6 });
  const model = new ScriptedChatModel([aiAnswer('Dal Tadka.', 40, 8), new Error('the model is overloaded'), aiAnswer('Soup it is.', 60, 4)]);
  const chain = new RunnableWithMessageHistory({ runnable: model, getMessageHistory: async () => history });
  const config = { configurable: { sessionId: history.sessionID }, callbacks: [handler] };

  await chain.invoke('What can I cook?', config);
  await assert.rejects(chain.invoke('And dessert?', config), /overloaded/);
  // A direct call: the user's message first, then the model's answer.
  await history.addUserMessage('Soup?');
  await history.addMessage(await model.invoke(await history.getMessages(), { callbacks: [handler] }));

  assert.deepEqual(await adapterCalls(history.sessionID), [
    [1, 'MESSAGES', [['scripted-1-2026', 40, 8, 0.000072, 'stop', null]]],
    [2, 'MESSAGES', [['scripted-1', 0, 0, 0, null, 'Error: the model is overloaded']]],
    [3, 'MESSAGES', [['scripted-1-2026', 60, 4, 0.000076, 'stop', null]]],
  ]);
  const { session } = await sg.request(operations.ChatTurnsDocument, { id: history.sessionID, first: 10, after: null });
  assert.deepEqual(session?.turns.edges?.map((e) => e?.node?.status), ['COMPLETED', 'FAILED', 'OPEN']);
  assert.deepEqual(
    (await history.getMessages()).map((m) => [m.getType(), m.text]),
    [
      ['human', 'What can I cook?'],
      ['ai', 'Dal Tadka.'],
      ['human', 'Soup?'],
      ['ai', 'Soup it is.'],
    ],
  );
});

test('Agents SDK: a streamed run records its call from the response_done event', async () => {
  setTracingDisabled(true);
  const memory = await SessionGraphSession.open(sg, 'acme', `stream-${randomUUID()}`);
  const streaming: Model = {
    getResponse: async () => {
      throw new Error('this test streams');
    },
    async *getStreamedResponse() {
      const done = answer('msg_s', 'Dal Tadka.', 70, 6);
      yield { type: 'output_text_delta', delta: 'Dal Tadka.' };
      yield { type: 'response_done', response: { id: 'resp_1', usage: { requests: 1, inputTokens: 70, outputTokens: 6, totalTokens: 76 }, output: done.output } };
    },
  } as Model;
  const agent = new Agent({ name: 'cook', instructions: 'You plan dinners.', model: memory.recordModelCalls(streaming, { name: 'gpt-4o' }) });
  const result = await run(agent, 'What can I cook?', { session: memory, stream: true });
  for await (const _ of result.toTextStream()) void _;
  await result.completed;
  assert.equal(result.finalOutput, 'Dal Tadka.');
  assert.deepEqual(await adapterCalls(memory.sessionID), [[1, 'MESSAGES', [['gpt-4o', 70, 6, 0, 'stop', null]]]]);
  assert.deepEqual(
    (await memory.getItems()).map((i) => (i as { role?: string }).role),
    ['user', 'assistant'],
  );
});

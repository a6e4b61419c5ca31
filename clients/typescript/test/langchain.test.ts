// The LangChain history side by side with @langchain/core's own InMemoryChatMessageHistory: the
// same scenarios (several system messages, a developer message and a role of its own, a tool call and its ToolMessage, two AI messages in one
// answer, an error mid-turn, a long history, clear), compared after every step by what each
// history answers and what the model received through RunnableWithMessageHistory.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, test } from 'node:test';

import type { AgentInputItem } from '@openai/agents-core';
import { InMemoryChatMessageHistory, type BaseListChatMessageHistory } from '@langchain/core/chat_history';
import { AIMessage, ChatMessage, HumanMessage, SystemMessage, ToolMessage, type BaseMessage } from '@langchain/core/messages';
import { RunnableLambda, RunnableWithMessageHistory, type Runnable } from '@langchain/core/runnables';

import { SessionGraphChatMessageHistory } from '../src/adapters/langchain.js';
import { SessionGraphSession } from '../src/adapters/openai-agents.js';
import { client, openSession } from './helpers.js';

const sg = client();
after(() => sg.close());

/** What the model answers on each call, in order: a message, several, or an error it throws. */
function script(): (AIMessage | AIMessage[] | Error)[] {
  return [
    new AIMessage({
      content: '',
      id: 'run-1',
      tool_calls: [{ id: 'call_pantry', name: 'pantry', args: { shelf: 'top' }, type: 'tool_call' }],
      usage_metadata: { input_tokens: 31, output_tokens: 9, total_tokens: 40 },
      response_metadata: { model_name: 'scripted', finish_reason: 'tool_calls' },
    }),
    new AIMessage({ content: 'Dal Tadka, with the lentils.', id: 'run-2', additional_kwargs: { refusal: null } }),
    [new AIMessage({ content: 'Kheer.', id: 'run-3' }), new AIMessage({ content: [{ type: 'text', text: 'Or fruit, "light".' }], id: 'run-4' })],
    new Error('the model is overloaded'),
    new AIMessage('Soup, then.'),
  ];
}

/** One conversation on a history: what it answers after each step, and what the model received. */
async function scenario(history: BaseListChatMessageHistory): Promise<Record<string, unknown>> {
  const seen: Record<string, unknown> = {};
  const step = async (name: string) => {
    seen[name] = [...(await history.getMessages())];
  };
  const answers = script();
  const inputs: BaseMessage[][] = [];
  const model = RunnableLambda.from(async (messages: BaseMessage[]) => {
    inputs.push([...messages]);
    const answer = answers.shift()!;
    if (answer instanceof Error) throw answer;
    return answer;
  });
  // RunnableWithMessageHistory feeds the model the history then the input (text, a message or messages).
  type Input = string | BaseMessage | BaseMessage[];
  const chain = new RunnableWithMessageHistory<Input, unknown>({ runnable: model as Runnable<Input>, getMessageHistory: async () => history });
  const config = { configurable: { sessionId: 'side-by-side' } };

  await history.addMessages([new SystemMessage('Vegetarian household.'), new SystemMessage({ content: 'Answer in one line.', id: 'sys-2' })]);
  await step('two system messages');
  await history.addMessages([
    new SystemMessage({ content: 'Be brief.', additional_kwargs: { __openai_role__: 'developer' } }),
    new ChatMessage('Mind the salt.', 'critic'),
  ]);
  await step('a developer message and a role of its own');
  await chain.invoke('What can I cook?', config);
  await step('a tool call');
  await chain.invoke([new ToolMessage({ content: 'top: red lentils, rice', tool_call_id: 'call_pantry', name: 'pantry' })], config);
  await step('its tool message and the answer');
  const photo = { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } };
  await chain.invoke(new HumanMessage({ content: [{ type: 'text', text: 'And dessert?' }, photo], id: 'h-3', name: 'ann' }), config);
  await step('two AI messages in one answer');
  await assert.rejects(chain.invoke('And a drink?', config), /overloaded/);
  await step('the model failed mid-turn');
  // A direct chain adds the user's message before it calls the model, which fails.
  await history.addUserMessage('Soup?');
  await step('a question with no answer');
  await history.addMessage((await model.invoke(await history.getMessages())) as AIMessage);
  await step('answered');
  seen['model inputs'] = inputs;
  await history.clear();
  await step('cleared');
  await history.addMessages([new HumanMessage('Start over.'), new AIMessage('Gladly.')]);
  await step('after clear');
  const long: BaseMessage[] = [];
  for (let i = 0; i < 120; i++) long.push(new HumanMessage(`question ${i}`), new AIMessage({ content: `answer ${i}`, id: `long-${i}` }));
  await history.addMessages(long);
  await step('a long history');
  return seen;
}

test("LangChain: SessionGraphChatMessageHistory answers what InMemoryChatMessageHistory does, step by step", async () => {
  const want = await scenario(new InMemoryChatMessageHistory());
  const ours = new SessionGraphChatMessageHistory(sg, await openSession(sg));
  const got = await scenario(ours);
  // The scenario exercised what it says.
  const types = (want['two AI messages in one answer'] as BaseMessage[]).map((m) => m.getType());
  assert.deepEqual(types, ['system', 'system', 'system', 'generic', 'human', 'ai', 'tool', 'ai', 'human', 'ai', 'ai']);
  assert.equal((want['model inputs'] as unknown[]).length, 5);
  assert.equal((want['a long history'] as unknown[]).length, 242);
  for (const step of Object.keys(want)) assert.deepStrictEqual(got[step], want[step], step);
});

test('LangChain: the server reads each message by its role; one of a role it does not know is kept whole as OTHER', async () => {
  const ours = new SessionGraphChatMessageHistory(sg, await openSession(sg));
  await ours.addMessages([
    new SystemMessage('Vegetarian household.'),
    new SystemMessage('Answer in one line.'),
    new SystemMessage({ content: 'Be brief.', additional_kwargs: { __openai_role__: 'developer' } }),
    new ChatMessage('Mind the salt.', 'critic'),
  ]);
  const first = await sg.turnItems(ours.sessionID, 1);
  assert.deepEqual(first.map((i) => [i.kind, i.role, i.content]), [
    ['MESSAGE', 'system', 'Vegetarian household.'],
    ['MESSAGE', 'system', 'Answer in one line.'],
    ['MESSAGE', 'developer', 'Be brief.'],
    ['OTHER', '', ''],
  ]);
});

test('LangChain: a history the Python client wrote reads back with its texts, ids, tool calls and usage', async () => {
  const id = await openSession(sg);
  await sg.beginTurn({ sessionID: id, userMessage: '' });
  // Items as sessiongraph.langchain (Python) writes them: json.dumps of the server's shape, the last
  // item carrying langchain_core's messages_to_dict form.
  await sg.recordItems({
    sessionID: id,
    items: [
      '{"type": "message", "role": "user", "content": "hi", "langchain": {"type": "human", "data": {"content": "hi", "additional_kwargs": {}, "response_metadata": {}, "type": "human", "name": null, "id": "h1"}}}',
      '{"type": "function_call", "call_id": "call_1", "name": "pantry", "arguments": "{\\"shelf\\": \\"top\\"}", "langchain": {"type": "ai", "data": {"content": "", "additional_kwargs": {}, "response_metadata": {"finish_reason": "tool_calls"}, "type": "ai", "name": null, "id": "a1", "tool_calls": [{"name": "pantry", "args": {"shelf": "top"}, "id": "call_1", "type": "tool_call"}], "invalid_tool_calls": [], "usage_metadata": {"input_tokens": 3, "output_tokens": 2, "total_tokens": 5}}}}',
      '{"type": "function_call_output", "call_id": "call_1", "output": "rice", "langchain": {"type": "tool", "data": {"content": "rice", "additional_kwargs": {}, "response_metadata": {}, "type": "tool", "name": null, "id": null, "tool_call_id": "call_1", "artifact": null, "status": "success"}}}',
    ],
  });
  const read = await new SessionGraphChatMessageHistory(sg, id).getMessages();
  assert.deepEqual(
    read.map((m) => [m.getType(), m.text, m.id]),
    [
      ['human', 'hi', 'h1'],
      ['ai', '', 'a1'],
      ['tool', 'rice', null],
    ],
  );
  const ai = read[1] as AIMessage;
  assert.deepEqual([ai.tool_calls, ai.usage_metadata], [[{ name: 'pantry', args: { shelf: 'top' }, id: 'call_1', type: 'tool_call' }], { input_tokens: 3, output_tokens: 2, total_tokens: 5 }]);
  assert.equal((read[2] as ToolMessage).tool_call_id, 'call_1');
});

test("LangChain: a session another writer kept (a turn's own messages, the Agents SDK's items) reads back by role, call and output", async () => {
  const id = await openSession(sg);
  await sg.recordExchange({ sessionID: id, userMessage: 'What can I cook?', assistantMessage: 'Dal Tadka.' });
  const agents = await SessionGraphSession.open(sg, 'acme', `lc-agents-${randomUUID()}`);
  await agents.addItems([
    { role: 'user', content: 'What is on the top shelf?' },
    { type: 'function_call', callId: 'call_7', name: 'pantry', arguments: '{"shelf":"top"}', status: 'completed' },
    { type: 'function_call_result', callId: 'call_7', name: 'pantry', status: 'completed', output: { type: 'text', text: 'rice' } },
    { type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'Rice.' }] },
    { type: 'reasoning', content: [] },
  ] as AgentInputItem[]);
  const exchange = await new SessionGraphChatMessageHistory(sg, id).getMessages();
  assert.deepStrictEqual(exchange, [new HumanMessage('What can I cook?'), new AIMessage('Dal Tadka.')]);
  const items = await new SessionGraphChatMessageHistory(sg, agents.sessionID).getMessages();
  assert.deepStrictEqual(items, [
    new HumanMessage('What is on the top shelf?'),
    new AIMessage({ content: '', tool_calls: [{ id: 'call_7', name: 'pantry', args: { shelf: 'top' }, type: 'tool_call' }] }),
    new ToolMessage({ content: 'rice', tool_call_id: 'call_7' }),
    new AIMessage('Rice.'),
  ]);
});

// Model calls against the real server: a runtime records the call each recorded build fed,
// by receipt or by session and node, and reads the session's totals.
import assert from 'node:assert/strict';
import { after, test } from 'node:test';

import { SessionGraphClient, SessionGraphError } from '../src/index.js';
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

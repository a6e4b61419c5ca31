// The turn helper: begin, end on success, fail with the error's message on a throw.
import assert from 'node:assert/strict';
import { after, test } from 'node:test';

import { client, openSession } from './helpers.js';

const sg = client();
after(() => sg.close());

test('a turn that returns ends with its message and summary', async () => {
  const id = await openSession(sg);
  let inside = 0;
  const turn = await sg.turn(id, 'plan dinner', async (t) => {
    inside = t.number;
    assert.equal(t.turn.status, 'OPEN');
    return { assistantMessage: 'Dinner is planned.', summary: { decision: 'plan', goal: 'dinner' } };
  });
  assert.equal(inside, 1);
  assert.equal(turn.number, 1);
  assert.equal(turn.status, 'COMPLETED');
  assert.equal(turn.assistantMessage, 'Dinner is planned.');
  assert.equal(turn.executionSummary?.decision, 'plan');
  const page = await sg.sessionGraph({ id });
  assert.equal(page?.turns.edges?.[0]?.node?.status, 'COMPLETED');
});

test('a turn that throws fails with the message, and the error is thrown again', async () => {
  const id = await openSession(sg);
  const boom = new Error('the LLM timed out');
  await assert.rejects(
    sg.turn(id, 'plan dinner', async () => {
      throw boom;
    }),
    (err) => err === boom,
  );
  const page = await sg.sessionGraph({ id });
  const failed = page?.turns.edges?.[0]?.node;
  assert.equal(failed?.status, 'FAILED');
  assert.equal(failed?.executionSummary?.blockedReason, 'the LLM timed out');
  // The next turn can begin: the failed one is closed.
  const next = await sg.turn(id, 'again', async () => 'ok');
  assert.equal(next.number, 2);
  assert.equal(next.status, 'COMPLETED');
});

test('an exchange is one turn, begun and ended in one request', async () => {
  const id = await openSession(sg);
  const turn = await sg.recordExchange({ sessionID: id, userMessage: 'what can I cook with leeks?', assistantMessage: 'Leek soup.' });
  assert.equal(turn.number, 1);
  assert.equal(turn.status, 'COMPLETED');
  assert.equal(turn.userMessage, 'what can I cook with leeks?');
  assert.equal(turn.assistantMessage, 'Leek soup.');
});

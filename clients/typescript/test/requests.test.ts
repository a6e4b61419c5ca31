// Queries and mutations over HTTP: typed results, and errors that carry the
// server's extensions.code and field.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, test } from 'node:test';

import { SessionGraphClient, SessionGraphError, operations } from '../src/index.js';
import { client, openSession, url } from './helpers.js';

const sg = client();
after(() => sg.close());

test('openSession gets or creates the session of an external key', async () => {
  const externalKey = `ts-${randomUUID()}`;
  const first = await sg.openSession({ tenant: 'acme', externalKey, systemPrompt: 'You cook.' });
  const again = await sg.openSession({ tenant: 'acme', externalKey });
  assert.equal(first.created, true);
  assert.equal(again.created, false);
  assert.equal(again.session.id, first.session.id);
  assert.equal(first.session.systemPrompt, 'You cook.');
  assert.equal((await sg.sessionByKey('acme', externalKey))?.id, first.session.id);
});

test('an argument the server refuses is a SessionGraphError with its code and field', async () => {
  const id = await openSession(sg);
  const err = await sg
    .recordRead({ sessionID: id, entityType: 'recipe', table: 'inventory', records: [{ id: randomUUID(), name: 'x' }] })
    .then(() => assert.fail('recordRead with two different types succeeded'), (e: unknown) => e);
  assert.ok(err instanceof SessionGraphError);
  assert.ok(err instanceof Error);
  assert.equal(err.code, 'BAD_USER_INPUT');
  assert.equal(err.field, 'table');
  assert.equal(err.retryable, false);
});

test('another session, an unknown ref, a turn write without a turn: NOT_FOUND, REF_NOT_FOUND, NO_OPEN_TURN', async () => {
  const id = await openSession(sg);
  await assert.rejects(sg.resolveRefs(randomUUID(), ['recipe_1']), { name: 'SessionGraphError', code: 'NOT_FOUND' });
  await assert.rejects(sg.readRefs(id, ['recipe_9']), { code: 'REF_NOT_FOUND' });
  await assert.rejects(sg.endTurn({ sessionID: id, assistantMessage: 'hi' }), { code: 'NO_OPEN_TURN' });
});

test('a bad key is UNAUTHENTICATED with status 401', async () => {
  const bad = new SessionGraphClient({ url, apiKey: 'sg_not_a_key' });
  await assert.rejects(bad.viewer(), (err: unknown) => {
    assert.ok(err instanceof SessionGraphError);
    assert.equal(err.code, 'UNAUTHENTICATED');
    assert.equal(err.status, 401);
    return true;
  });
});

test('a server that cannot be reached is a retryable NETWORK_ERROR', async () => {
  const gone = new SessionGraphClient({ url: 'http://127.0.0.1:1/graphql', apiKey: 'x' });
  await assert.rejects(gone.viewer(), (err: unknown) => {
    assert.ok(err instanceof SessionGraphError);
    assert.equal(err.code, 'NETWORK_ERROR');
    assert.equal(err.retryable, true);
    return true;
  });
});

test('refs: resolveRefs, translateFilters by table or type, readRefs of a generated ref, translatePayload', async () => {
  const id = await openSession(sg);
  const dal = randomUUID();
  await sg.turn(id, 'find dal', async (turn) => {
    const read = await turn.recordRead({ table: 'recipes', records: [{ id: dal, name: 'Dal Tadka' }] });
    assert.deepEqual(read.records, [{ id: 'recipe_1', name: 'Dal Tadka' }]);
    assert.equal(read.refs[0]?.action, 'read');
    const gen = await turn.recordGenerated({ entityType: 'meal_plan', content: { date: '2026-01-12', meal_type: 'dinner', recipe_id: 'recipe_1' } });
    assert.equal(gen.ref.ref, 'gen_meal_plan_1');
    assert.equal(gen.ref.artifact?.status, 'PENDING');
    return 'planned';
  });
  assert.deepEqual(await sg.resolveRefs(id, ['recipe_1', 'gen_meal_plan_1']), [
    { ref: 'recipe_1', entityType: 'recipe', entityID: dal, pending: false },
    { ref: 'gen_meal_plan_1', entityType: 'meal_plan', entityID: null, pending: true },
  ]);
  const byTable = await sg.translateFilters(id, { table: 'recipes' }, [{ field: 'id', op: 'in', value: ['recipe_1'] }]);
  const byType = await sg.translateFilters(id, { entityType: 'meal_plan' }, [{ field: 'recipe_id', op: 'eq', value: 'recipe_1' }]);
  assert.deepEqual(byTable.filters, [{ field: 'id', op: 'in', value: [dal] }]);
  assert.deepEqual(byType.filters, [{ field: 'recipe_id', op: 'eq', value: dal }]);
  const read = await sg.readRefs(id, ['gen_meal_plan_1', 'recipe_1']);
  assert.deepEqual(read.fromDatabase, ['recipe_1']);
  assert.equal(read.records[0]?.id, 'gen_meal_plan_1');
  assert.equal(read.records[0]?.recipe_id, 'recipe_1');
  const payload = await sg.translatePayload(id, 'meal_plan', { id: 'gen_meal_plan_1', recipe_id: 'recipe_1' });
  assert.equal(payload.data.recipe_id, dal);
  assert.equal(payload.saves, 'gen_meal_plan_1');
});

test('a session-graph page and a typed document sent with request()', async () => {
  const id = await openSession(sg);
  await sg.turn(id, 'hello', async (turn) => {
    await turn.recordRead({ entityType: 'recipe', records: [{ id: randomUUID(), name: 'Chana Masala' }] });
    return 'hi';
  });
  const page = await sg.sessionGraph({ id, first: 5 });
  assert.ok(page);
  assert.equal(page.currentTurn, 1);
  assert.equal(page.turns.totalCount, 1);
  assert.equal(page.turns.edges?.[0]?.node?.status, 'COMPLETED');
  assert.deepEqual(page.refs.edges?.map((e) => e?.node?.ref), ['recipe_1']);
  assert.deepEqual(page.activeEntities.active.map((r) => r.label), ['Chana Masala']);
  assert.ok(page.events.totalCount >= 4, `events: ${page.events.totalCount}`);
  const data = await sg.request(operations.WorkingMemoryDocument, { sessionID: id });
  assert.equal(data.session?.workingMemory.turnCount, 1);
  const list = await sg.sessions({ first: 100, where: { tenant: 'acme' } });
  assert.ok(list.edges?.some((e) => e?.node?.id === id));
});

test('context builds: REPLY text and MESSAGES chat messages', async () => {
  const id = await openSession(sg);
  await sg.updateSession({ id, systemPrompt: 'You are a kitchen assistant.' });
  await sg.turn(id, 'What is in Dal Tadka?', async () => 'Lentils, ghee and cumin.');
  const reply = await sg.context(id, 'REPLY');
  assert.equal(reply.node, 'REPLY');
  assert.match(reply.text, /What is in Dal Tadka\?/);
  assert.ok(reply.tokenCount > 0 && reply.tokenCount <= reply.budget);
  const messages = await sg.context(id, 'MESSAGES');
  assert.deepEqual(messages.messages.map((m) => [m.role, m.content]), [
    ['system', 'You are a kitchen assistant.'],
    ['user', 'What is in Dal Tadka?'],
    ['assistant', 'Lentils, ghee and cumin.'],
  ]);
});

// How a client is set up: the URL and key from the environment (SG_URL, SG_API_KEY; SG_KEY
// still read, with a warning), a base URL with or without /graphql, a URL that answers a web
// page, and every ref-carrying payload with its ref the same Ref object.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';

import { SessionGraphClient, SessionGraphError } from '../src/index.js';
import { adminKey, openSession, url } from './helpers.js';

const base = url.replace(/\/graphql$/, '');

/** Runs fn with the environment variables set (undefined: removed), then puts them back. */
async function withEnv<T>(vars: Record<string, string | undefined>, fn: () => Promise<T>): Promise<T> {
  const saved = Object.fromEntries(Object.keys(vars).map((k) => [k, process.env[k]]));
  const set = (v: Record<string, string | undefined>) => {
    for (const [k, x] of Object.entries(v)) {
      if (x === undefined) delete process.env[k];
      else process.env[k] = x;
    }
  };
  set(vars);
  try {
    return await fn();
  } finally {
    set(saved);
  }
}

test('SG_URL and SG_API_KEY configure a client given no options', async () => {
  await withEnv({ SG_URL: base, SG_API_KEY: adminKey, SG_KEY: undefined }, async () => {
    const sg = new SessionGraphClient();
    assert.equal(sg.url, `${base}/graphql`);
    assert.equal((await sg.viewer()).role, 'ADMIN');
  });
});

test('SG_KEY, the old name, still works and warns once', async () => {
  const warnings: Error[] = [];
  const onWarning = (w: Error) => warnings.push(w);
  process.on('warning', onWarning);
  try {
    await withEnv({ SG_URL: base, SG_API_KEY: undefined, SG_KEY: adminKey }, async () => {
      const sg = new SessionGraphClient();
      assert.equal((await sg.viewer()).role, 'ADMIN');
      new SessionGraphClient();
    });
    await new Promise((resolve) => setImmediate(resolve)); // warnings are emitted on the next tick
  } finally {
    process.off('warning', onWarning);
  }
  const ours = warnings.filter((w) => w.name === 'DeprecationWarning' && /SG_KEY is deprecated: set SG_API_KEY/.test(w.message));
  assert.equal(ours.length, 1);
});

test('no key is a configuration error', async () => {
  await withEnv({ SG_API_KEY: undefined, SG_KEY: undefined }, async () => {
    assert.throws(() => new SessionGraphClient({ url: base }), { code: 'CONFIGURATION_ERROR', retryable: false });
  });
});

test('a base URL works with or without /graphql', async () => {
  for (const u of [base, `${base}/`, `${base}/graphql`, `${base}/graphql/`]) {
    const sg = new SessionGraphClient({ url: u, apiKey: adminKey });
    assert.equal(sg.url, `${base}/graphql`, u);
    assert.equal((await sg.viewer()).role, 'ADMIN', u);
  }
});

test('a URL that answers a web page is a CONFIGURATION_ERROR, not a retryable NETWORK_ERROR', async () => {
  const server = http.createServer((req, res) => {
    req.resume();
    res.writeHead(req.url?.endsWith('/graphql') ? 200 : 404, { 'content-type': 'text/html; charset=utf-8' });
    res.end('<!doctype html><title>Welcome</title><p>Our shop</p>');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const page = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    for (const u of [page, `${page}/shop`]) {
      const err = await new SessionGraphClient({ url: u, apiKey: adminKey })
        .viewer()
        .then(() => assert.fail('a web page answered as GraphQL'), (e: unknown) => e);
      assert.ok(err instanceof SessionGraphError);
      assert.equal(err.code, 'CONFIGURATION_ERROR', u);
      assert.equal(err.retryable, false, 'sending again to the same wrong URL cannot help');
      assert.match(err.message, /answered a web page \(HTTP (200|404), text\/html\)/);
    }
  } finally {
    await new Promise((resolve) => server.close(resolve));
  }
});

test('every payload carries its ref as the same Ref object', async () => {
  const sg = new SessionGraphClient({ url: base, apiKey: adminKey });
  const id = await openSession(sg);
  const recipe = randomUUID();
  await sg.turn(id, 'plan it', async (turn) => {
    const read = await turn.recordRead({ table: 'recipes', records: [{ id: recipe, name: 'Dal Tadka' }] });
    const generated = await turn.recordGenerated({ entityType: 'meal_plan', content: { date: '2026-01-12', meal_type: 'dinner', recipe_id: 'recipe_1' } });
    const created = await turn.recordCreated({ entityType: 'meal_plan', entityID: randomUUID(), genRef: 'gen_meal_plan_1' });
    const retained = await turn.retainRef('recipe_1', 'the user chose it');
    const released = await sg.releaseRef({ sessionID: id, ref: 'recipe_1' });
    const mentioned = await turn.mentionEntity(['recipe_1']);
    const action = await sg.recordUserAction({ sessionID: id, kind: 'MENTIONED', entityType: 'recipe', entityID: recipe });
    const refs = [read.refs[0], generated.ref, created.ref, retained.ref, released.ref, mentioned.refs[0], action.ref];
    for (const r of refs) {
      assert.equal(typeof r, 'object');
      assert.equal(typeof r?.ref, 'string');
      assert.equal(typeof r?.label, 'string');
    }
    assert.deepEqual(refs.map((r) => r?.ref), ['recipe_1', 'gen_meal_plan_1', 'gen_meal_plan_1', 'recipe_1', 'recipe_1', 'recipe_1', 'recipe_1']);
    assert.equal(created.promoted, true);
    return 'saved';
  });
  await sg.close();
});

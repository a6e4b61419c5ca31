// Subscriptions over graphql-ws and graphql-sse resume by cursor: through a TCP
// proxy that the test cuts while events are being written, every event arrives
// once, in order. A revoked or unknown key ends the subscription with an error.
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';

import { SessionGraphClient, SessionGraphError, type SessionEvent, type TransportKind } from '../src/index.js';
import { Proxy, client, openSession, sleep, until } from './helpers.js';

const sg = client();
after(() => sg.close());

const WRITES = 40;

for (const transport of ['ws', 'sse'] as TransportKind[]) {
  describe(`over ${transport}`, () => {
    test('every event arrives once, in order, across cuts made while events are written', { timeout: 30000 }, async () => {
      const proxy = await Proxy.start();
      const live = new SessionGraphClient({ url: proxy.url, apiKey: sg['apiKey' as never] as string, transport });
      try {
        const id = await openSession(sg);
        const resumes: string[] = [];
        const got: SessionEvent[] = [];
        let writing: Promise<void> | undefined;
        let cuts = 0;
        const events = live.sessionEvents(id, { after: 0, onResume: (err) => resumes.push(err.code) });
        for await (const ev of events) {
          got.push(ev);
          if (got.length === 1) {
            // Subscribed and replaying: write the rest while the proxy is cut three times.
            writing = (async () => {
              for (let i = 1; i <= WRITES; i++) {
                await sg.updateSession({ id, metadata: { n: String(i) } });
                if (i % 12 === 0 && proxy.cut() > 0) cuts++;
                await sleep(5); // spreads the writes, so that the cuts fall while events are in flight
              }
            })();
          }
          if (got.length === 1 + WRITES) break;
        }
        await writing;
        assert.ok(cuts >= 3, `the proxy was cut ${cuts} times with connections open`);
        assert.ok(resumes.length >= 3, `resumed ${resumes.length} times: ${resumes}`);
        assert.ok(resumes.every((code) => code === 'NETWORK_ERROR'), `${resumes}`);
        assert.deepEqual(
          got.map((ev) => ev.sequence),
          Array.from({ length: 1 + WRITES }, (_, i) => i + 1),
        );
        assert.equal(got[0]?.kind, 'session.opened');
        assert.ok(got.slice(1).every((ev) => ev.kind === 'session.updated' && ev.sessionID === id));
        assert.ok(got.every((ev) => ev.turn === null), 'no turn has begun: no event has one');
        if (transport === 'ws') {
          // Once the consumer stops, the socket closes (SSE leaves only idle keep-alive connections).
          await until(() => proxy.openSockets === 0, 'the socket closes once the consumer stops');
        }
      } finally {
        await live.close();
        await proxy.close();
      }
    });

    test('without after, only events written after subscribing', { timeout: 10000 }, async () => {
      const id = await openSession(sg);
      await sg.updateSession({ id, metadata: { before: '1' } }); // sequence 2
      const events = sg.sessionEvents(id, { transport });
      const first = events.next();
      // The subscription starts at the sequence it reads first: write until an event arrives.
      let written = 0;
      let ev: SessionEvent | undefined;
      while (!ev) {
        await sg.updateSession({ id, metadata: { after: String(++written) } });
        ev = await Promise.race([first.then((r) => r.value as SessionEvent), sleep(100).then(() => undefined)]);
      }
      await events.return(undefined);
      assert.ok(ev.sequence >= 3 && ev.sequence <= 2 + written, `first event ${ev.sequence} of ${2 + written}`);
      assert.equal(ev.kind, 'session.updated');
    });

    test('a revoked key ends the subscription with UNAUTHENTICATED, and it does not reconnect', { timeout: 10000 }, async () => {
      const proxy = await Proxy.start();
      const id = await openSession(sg);
      const { key, apiKey } = await sg.createAPIKey({ name: `revoked ${transport}`, role: 'CLIENT', tenant: 'acme' });
      const live = new SessionGraphClient({ url: proxy.url, apiKey: key, transport });
      try {
        let received = 0;
        const err = await (async () => {
          for await (const _ of live.sessionEvents(id, { after: 0 })) {
            received++;
            if (received === 1) await sg.revokeAPIKey(apiKey.id);
          }
        })().then(
          () => assert.fail('the subscription ended without an error'),
          (e: unknown) => e,
        );
        assert.ok(err instanceof SessionGraphError, String(err));
        assert.equal(err.code, 'UNAUTHENTICATED');
        assert.equal(received, 1);
        const connections = proxy.connections;
        // A reconnect would come after the client's retry delay: its absence is watched for a while.
        await sleep(300);
        assert.equal(proxy.connections, connections, 'the client kept connecting after the key was revoked');
      } finally {
        await live.close();
        await proxy.close();
      }
    });

    test('aborting the signal ends the iteration without an error', { timeout: 10000 }, async () => {
      const id = await openSession(sg);
      const stop = new AbortController();
      const got: number[] = [];
      for await (const ev of sg.sessionEvents(id, { after: 0, transport, signal: stop.signal })) {
        got.push(ev.sequence);
        setTimeout(() => stop.abort(), 10);
      }
      assert.deepEqual(got, [1]);
    });

    test('an unknown key fails at once with UNAUTHENTICATED', { timeout: 10000 }, async () => {
      const id = await openSession(sg);
      const live = new SessionGraphClient({ url: sg.url, apiKey: 'sg_unknown', transport });
      try {
        await assert.rejects(live.sessionEvents(id, { after: 0 }).next(), { code: 'UNAUTHENTICATED' });
      } finally {
        await live.close();
      }
    });
  });
}

test('sessionsChanged resumes after the last cursor; entityChanges and contextUpdated deliver', { timeout: 20000 }, async () => {
  const id = await openSession(sg);
  const cursor = (await sg.request((await import('../src/index.js')).operations.SessionsChangedCursorDocument))
    .sessionsChangedCursor;
  const proxy = await Proxy.start();
  const live = new SessionGraphClient({ url: proxy.url, apiKey: sg['apiKey' as never] as string });
  try {
    // The feed may replay changes committed just before the cursor was read: what
    // matters is that this session's arrive once each, in order, across the cut.
    const feed = live.sessionsChanged({ after: cursor });
    const ours: number[] = [];
    let written = 1;
    await sg.updateSession({ id, metadata: { i: String(written) } });
    while (ours.at(-1) !== 5) {
      const ev = (await feed.next()).value as SessionEvent;
      if (ev.sessionID !== id) continue;
      ours.push(ev.sequence);
      if (ev.sequence === written + 1 && written < 4) {
        if (written === 2) assert.ok(proxy.cut() > 0);
        written++;
        await sg.updateSession({ id, metadata: { i: String(written) } });
      }
    }
    await feed.return(undefined);
    assert.deepEqual(ours.filter((n) => n >= 2), [2, 3, 4, 5]);
    assert.deepEqual(ours, [...new Set(ours)].sort((a, b) => a - b));

    const changes = live.entityChanges(id, { after: 0, entityTypes: ['recipe'] });
    await sg.turn(id, 'read', async (turn) => {
      await turn.recordRead({ table: 'recipes', records: [{ id: crypto.randomUUID(), name: 'Dal' }] });
      return 'ok';
    });
    const change = (await changes.next()).value;
    await changes.return(undefined);
    assert.deepEqual({ ref: change?.ref, entityType: change?.entityType, action: change?.action }, {
      ref: 'recipe_1', entityType: 'recipe', action: 'read',
    });

    const builds = live.contextUpdated(id, 'THINK');
    const build = (await builds.next()).value;
    await builds.return(undefined);
    assert.equal(build?.node, 'THINK');
    assert.match(build?.text ?? '', /recipe_1/);
  } finally {
    await live.close();
    await proxy.close();
  }
});

// Subscribes to sessionEvents with a real client (graphql-ws over WebSocket,
// or graphql-sse over Server-Sent Events), prints "ready" once subscribed,
// then prints each received event as a JSON line until it has `count`.
// Usage: SG_API_KEY=<key> node subscribe.mjs <ws|sse> <graphql URL> <sessionID> <count>
import { createClient as createWSClient } from 'graphql-ws';
import { createClient as createSSEClient } from 'graphql-sse';
import WebSocket from 'ws';

const [kind, url, sessionID, countArg] = process.argv.slice(2);
const count = Number(countArg);
const query = 'subscription($id: ID!) { sessionEvents(sessionID: $id, after: 0) { sequence kind } }';

const authorization = `Bearer ${process.env.SG_API_KEY}`;

const client = kind === 'ws'
  ? createWSClient({
    url: url.replace(/^http/, 'ws'), webSocketImpl: WebSocket, retryAttempts: 0,
    connectionParams: { Authorization: authorization },
  })
  : createSSEClient({ url, retryAttempts: 0, headers: { Authorization: authorization } });

let received = 0;
const timer = setTimeout(() => { console.error('timed out'); process.exit(2); }, 20000);
const stop = client.subscribe({ query, variables: { id: sessionID } }, {
  next: (value) => {
    if (value.errors) { console.error(JSON.stringify(value.errors)); process.exit(1); }
    console.log(JSON.stringify(value.data.sessionEvents));
    received++;
    if (received === count) { clearTimeout(timer); stop(); client.dispose(); process.exit(0); }
  },
  error: (err) => { console.error('error', err?.message ?? JSON.stringify(err)); process.exit(1); },
  complete: () => {},
});
console.log('ready');

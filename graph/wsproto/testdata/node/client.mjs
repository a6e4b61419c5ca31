// Drives a graph/wsproto server with the real graphql-ws client and prints
// what it saw as one JSON line. Usage: node client.mjs <ws-url> <mode>
//   operations: a query, an invalid subscription, then a subscription until it completes
//   rejected:   connection_init is refused; prints the close code and reason
//   oversize:   twenty connections each send a 5 MB subscribe; prints each close code
import { createClient } from 'graphql-ws';
import WebSocket from 'ws'; // Node 20 has no global WebSocket

const [url, mode] = process.argv.slice(2);
const client = createClient({ url, webSocketImpl: WebSocket, retryAttempts: 0 });

// run resolves with the results of one operation once the server completes it.
function run(query) {
  return new Promise((resolve, reject) => {
    const results = [];
    client.subscribe({ query }, {
      next: (result) => results.push(result),
      error: reject,
      complete: () => resolve(results),
    });
  });
}

let out;
switch (mode) {
  case 'operations':
    out = {
      query: await run('{ name }'),
      invalid: await run('subscription { nope }').then(() => 'completed', (errors) => errors),
      subscription: await run('subscription { name }'),
    };
    break;
  case 'rejected':
    out = await run('{ name }').then(
      () => 'completed',
      (closeEvent) => ({ code: closeEvent.code, reason: closeEvent.reason }),
    );
    break;
  case 'oversize': {
    const huge = `{ name } # ${'x'.repeat(5 << 20)}`;
    const codes = [];
    for (let i = 0; i < 20; i++) {
      const big = createClient({ url, webSocketImpl: WebSocket, retryAttempts: 0 });
      codes.push(await new Promise((resolve) => {
        big.subscribe({ query: huge }, { next: () => {}, error: (e) => resolve(e.code), complete: () => resolve('completed') });
      }));
      await big.dispose();
    }
    out = codes;
    break;
  }
  default:
    console.error(`unknown mode ${mode}`);
    process.exit(2);
}
console.log(JSON.stringify(out));
await client.dispose();
process.exit(0);

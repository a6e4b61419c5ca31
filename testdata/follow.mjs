// Follows one session's events with the TypeScript client (clients/typescript,
// built) for deploy_test.go: each event as a JSON line on stdout, each resume
// (and why) on stderr, until stdin closes. SG_TRANSPORT is ws or sse.
const { SessionGraphClient } = await import(process.env.SG_CLIENT);

process.stdin.on('end', () => process.exit(0));
process.stdin.resume();

const client = new SessionGraphClient({
  url: process.env.SG_URL,
  apiKey: process.env.SG_API_KEY,
  transport: process.env.SG_TRANSPORT,
});
try {
  for await (const ev of client.sessionEvents(process.env.SG_SESSION, {
    after: 0,
    maxBackoffMs: 500,
    onResume: (err, attempt) => console.error(`resume ${attempt}: ${err.code}: ${err.message}`),
  })) {
    console.log(JSON.stringify({ sequence: ev.sequence, kind: ev.kind }));
  }
  console.error('the subscription ended');
  process.exit(3);
} catch (err) {
  console.error(`the subscription failed: ${err?.code ?? ''} ${err?.message ?? err}`);
  process.exit(2);
}

// PostGraphile 5.1.5 serving one database, as the comparison runs it: the
// Amber preset (the documented default), no GraphiQL, no watch mode, no
// explain, so that a request costs what it would in production.
//
// usage: node server.mjs DATABASE_URL PORT
// Prints "listening <port>" on stdout once it answers.
import { createServer } from "node:http";
import { postgraphile } from "postgraphile";
import { grafserv } from "postgraphile/grafserv/node";
import { PostGraphileAmberPreset } from "postgraphile/presets/amber";
import { makePgService } from "postgraphile/adaptors/pg";

const [connectionString, port] = process.argv.slice(2);
if (!connectionString || !port) {
  console.error("usage: node server.mjs DATABASE_URL PORT");
  process.exit(2);
}

const preset = {
  extends: [PostGraphileAmberPreset],
  pgServices: [
    makePgService({
      connectionString,
      schemas: ["public"],
      // Keep connections as sessiongraph's pool does (5 minutes idle), so
      // that no round of the comparison pays for new backends.
      poolConfig: { idleTimeoutMillis: 300_000 },
    }),
  ],
  grafserv: { graphiql: false, watch: false },
  grafast: { explain: false },
};

const pgl = postgraphile(preset);
const serv = pgl.createServ(grafserv);
const server = createServer();
server.keepAliveTimeout = 60_000;
server.on("error", (e) => {
  console.error(e);
  process.exit(1);
});
await serv.addTo(server);
// Build the schema before listening, so the first request is not the one
// that waits for introspection.
await pgl.getSchema();
server.listen(Number(port), "127.0.0.1", () => console.log(`listening ${port}`));
for (const signal of ["SIGINT", "SIGTERM"]) {
  process.on(signal, async () => {
    server.close();
    await pgl.release();
    process.exit(0);
  });
}

// Runs the GraphQL over HTTP spec's audit (graphql-http's auditServer)
// against the server at argv[2], authenticating every request with the API
// key argv[3], and prints each audit's id, name, status and reason as JSON.
import { auditServer } from 'graphql-http';

const [url, key] = process.argv.slice(2);
const results = await auditServer({
  url,
  fetchFn: (input, init = {}) =>
    fetch(input, { ...init, headers: { ...(init.headers ?? {}), authorization: `Bearer ${key}` } }),
});
console.log(JSON.stringify(results.map(({ id, name, status, reason }) => ({ id, name, status, reason }))));

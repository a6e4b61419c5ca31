// Who is signed in, as the server said at sign-in (query viewer), and what
// that key's role may do: the page shows only the actions it may perform.
// ADMIN does everything in every tenant; CLIENT reads and writes its
// tenant's sessions; READER only reads.

const viewerKey = 'sessiongraph.viewer';

/** viewer is { role, tenant, name } of the signed-in key, or null. */
export function viewer() {
  try { return JSON.parse(sessionStorage.getItem(viewerKey) || 'null'); } catch { return null; }
}

/** rememberViewer keeps who signed in for this tab; null forgets it. */
export function rememberViewer(v) {
  if (v) sessionStorage.setItem(viewerKey, JSON.stringify(v));
  else sessionStorage.removeItem(viewerKey);
}

/** mayAdminister: expire and delete sessions (@admin fields). */
export function mayAdminister() { return viewer()?.role === 'ADMIN'; }

/** mayWrite: change a session's registry (retain and release refs). */
export function mayWrite() { const r = viewer()?.role; return r === 'ADMIN' || r === 'CLIENT'; }

// The README's agent loop (examples/agent-loop.ts) runs against the real server.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

import { adminKey, url } from './helpers.js';

test('the agent loop: read, generate, save, context', async () => {
  const script = fileURLToPath(new URL('../examples/agent-loop.js', import.meta.url));
  const { stdout } = await promisify(execFile)(process.execPath, [script], {
    env: { ...process.env, SG_URL: url, SG_API_KEY: adminKey },
    timeout: 20000,
  });
  const lines = stdout.split('\n');
  assert.equal(
    lines[0],
    'read: [{"cuisine":"Indian","id":"recipe_1","name":"Dal Tadka","total_time":40},{"cuisine":"Indian","id":"recipe_2","name":"Chana Masala","total_time":35}]',
  );
  assert.equal(lines[1], 'generated: gen_meal_plan_1 2026-01-12 dinner');
  assert.match(lines[2] ?? '', /^saved: gen_meal_plan_1 promoted: true recipe_id: [0-9a-f-]{36}$/);
  assert.match(stdout, /`gen_meal_plan_1`: 2026-01-12 dinner \(meal_plan\) — SAVED in this turn/);
  assert.match(stdout, /`recipe_1`: Dal Tadka \(recipe\)/);
  assert.match(stdout, /Turn 2 — User \(now\): Save it/);
  assert.equal(lines.at(-2), 'turn 2 COMPLETED - Saved your Monday dinner plan.');
});

test('the README opens with the example, as it is', async () => {
  const { readFile } = await import('node:fs/promises');
  const root = new URL('../../', import.meta.url);
  const readme = await readFile(new URL('README.md', root), 'utf8');
  const example = await readFile(new URL('examples/agent-loop.ts', root), 'utf8');
  const block = /```ts\n([\s\S]*?)```/.exec(readme)?.[1];
  assert.equal(block, example);
  assert.ok(readme.indexOf('## The agent loop') < readme.indexOf('## What it has'));
  assert.match(readme.split('\n').slice(0, 6).join('\n'), /npm pack \S+\/clients\/typescript\s.*\nnpm install \.\/sessiongraph-client-0\.2\.0\.tgz /);
});

test("the repository README's quick start runs as written", async () => {
  const { readFile, writeFile, rm } = await import('node:fs/promises');
  const readme = await readFile(new URL('../../../../README.md', import.meta.url), 'utf8');
  const rest = readme.slice(readme.indexOf('**TypeScript**'));
  const block = /```ts\n([\s\S]*?)```/.exec(rest)?.[1];
  assert.ok(block, 'no ```ts block after **TypeScript** in README.md');
  // Inside the package, so that '@sessiongraph/client' resolves to it (a self-reference).
  const file = new URL('../quickstart.mjs', import.meta.url);
  await writeFile(file, block);
  try {
    const { stdout } = await promisify(execFile)(process.execPath, [fileURLToPath(file)], {
      env: { ...process.env, SG_URL: url.replace(/\/graphql$/, ''), SG_API_KEY: adminKey },
    });
    assert.deepEqual(stdout.trim().split('\n'), ["[ { id: 'recipe_1', name: 'Dal Tadka' } ]", "[ 'recipe_1' ]"]);
  } finally {
    await rm(file, { force: true });
  }
});

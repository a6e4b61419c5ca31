// The committed generated code is what GraphQL Code Generator makes now from
// graph/schema and src/operations: regenerated into a temporary file, compared.
import assert from 'node:assert/strict';
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';

import { generate } from '@graphql-codegen/cli';

const root = new URL('../../', import.meta.url);

test('src/generated/graphql.ts is up to date with the schema and the operations', async () => {
  const { codegenConfig, generatedFile } = await import(new URL('codegen.mjs', root).href);
  const dir = await mkdtemp(join(tmpdir(), 'sg-codegen-'));
  try {
    const out = join(dir, 'graphql.ts');
    await generate(codegenConfig(out), true);
    const fresh = await readFile(out, 'utf8');
    const committed = await readFile(generatedFile, 'utf8');
    assert.ok(fresh === committed, 'src/generated/graphql.ts is stale: run `npm run generate` in clients/typescript and commit it');
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('every operation in src/operations has its typed document', async () => {
  const generated = await readFile(new URL('src/generated/graphql.ts', root), 'utf8');
  const dir = new URL('src/operations/', root);
  const names: string[] = [];
  for (const file of await readdir(dir)) {
    const text = await readFile(new URL(file, dir), 'utf8');
    for (const m of text.matchAll(/^(?:query|mutation|subscription) (\w+)/gm)) names.push(m[1]!);
  }
  assert.ok(names.length >= 40, `${names.length} operations`);
  for (const name of names) {
    assert.match(generated, new RegExp(`export const ${name}Document = new TypedDocumentString`), name);
  }
});

// npm's prepack script (npm pack, npm publish) and the tests' build: builds dist/
// with the pinned tsc. On first use it installs the build tools from the committed
// lock file into this folder (npm ci, scripts off so it does not come back here).
// Some of them declare Node 22 (the code generator's fetch layer, the openai
// package @openai/agents-core brings) yet run on Node 20, which the tests use: that
// install prints errors only, so npm pack on Node 20 warns of nothing the packed
// client needs (its own dependencies admit Node 20).
import { spawnSync } from 'node:child_process';
import { existsSync, rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const dir = fileURLToPath(new URL('..', import.meta.url));
const tsc = fileURLToPath(new URL('../node_modules/typescript/bin/tsc', import.meta.url));

function run(cmd, args) {
  const r = spawnSync(cmd, args, { cwd: dir, stdio: 'inherit', shell: false });
  if (r.error) throw r.error;
  if (r.status !== 0) process.exit(r.status ?? 1);
}

if (!existsSync(tsc)) {
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  run(npm, ['ci', '--include=dev', '--ignore-scripts', '--no-audit', '--no-fund', '--loglevel=error']);
}
// A clean build: no compiled test of a deleted source lingers in dist/.
rmSync(fileURLToPath(new URL('../dist', import.meta.url)), { recursive: true, force: true });
run(process.execPath, [tsc, '-p', 'tsconfig.json']);

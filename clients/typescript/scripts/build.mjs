// npm's prepare script: builds dist/ with the pinned tsc. Installed from a folder
// (`npm install ./clients/typescript`), npm links the package and runs prepare
// without installing its devDependencies, so this installs them first, from the
// committed lock file (npm ci, scripts off so it does not come back here).
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
  run(npm, ['ci', '--include=dev', '--ignore-scripts', '--no-audit', '--no-fund']);
}
// A clean build: no compiled test of a deleted source lingers in dist/.
rmSync(fileURLToPath(new URL('../dist', import.meta.url)), { recursive: true, force: true });
run(process.execPath, [tsc, '-p', 'tsconfig.json']);

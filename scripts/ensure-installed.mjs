// Installs dependencies when node_modules is missing or older than package-lock.json, so a
// fresh clone needs nothing but `npm start` or `npm test`.
import { spawnSync } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';

export function ensureInstalled(root) {
  const lock = join(root, 'package-lock.json');
  const installed = join(root, 'node_modules/.package-lock.json');
  if (existsSync(installed) && statSync(installed).mtimeMs >= statSync(lock).mtimeMs) return;
  process.stdout.write('trellis: installing dependencies (the first time takes a few minutes)…\n');
  const result = spawnSync('npm', ['ci', '--no-audit', '--no-fund'], { cwd: root, stdio: 'inherit' });
  if (result.status !== 0) {
    process.stderr.write(`trellis: npm ci failed (exit ${result.status})\n`);
    process.exit(result.status ?? 1);
  }
}

// `npm start`: on a fresh clone installs dependencies, builds, then runs Trellis standalone.
// Later runs skip what is already done (install when node_modules is current, incremental build).
import { spawnSync, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { ensureInstalled } from './ensure-installed.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const step = (label, command, args) => {
  process.stdout.write(`trellis: ${label}…\n`);
  const result = spawnSync(command, args, { cwd: root, stdio: 'inherit' });
  if (result.status !== 0) {
    process.stderr.write(`trellis: ${label} failed (exit ${result.status})\n`);
    process.exit(result.status ?? 1);
  }
};

ensureInstalled(root);
step('building', 'npm', ['run', '--silent', 'build']);

const server = spawn(process.execPath, [join(root, 'services/standalone/dist/main.js')], { cwd: root, stdio: 'inherit' });
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => server.kill(signal));
server.on('exit', (code) => process.exit(code ?? 0));

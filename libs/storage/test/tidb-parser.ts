import { execFileSync, spawnSync } from 'node:child_process';
import { join, resolve } from 'node:path';

/** TiDB's parser on one statement: accepted, or its message (with line and column). */
export interface ParserVerdict {
  ok: boolean;
  error?: string;
}

const repoRoot = resolve(__dirname, '../../..');
let checker: string | undefined;

/**
 * The checker binary (tools/tidb-sql-check), built on first use and cached by source hash.
 * Throws when Go is missing or the build fails: the TiDB check must fail then, never skip.
 */
function checkerBinary(): string {
  if (checker !== undefined) return checker;
  const build = spawnSync(process.execPath, [join(repoRoot, 'tools/tidb-sql-check/ensure-built.mjs')], { encoding: 'utf8' });
  if (build.status !== 0) throw new Error(`no TiDB SQL checker: ${build.stderr.trim() || build.error?.message}`);
  checker = build.stdout.trim();
  return checker;
}

/** Runs TiDB's own SQL parser over the statements; one verdict each, in order. */
export function parseWithTidb(statements: readonly string[]): ParserVerdict[] {
  const output = execFileSync(checkerBinary(), { input: JSON.stringify(statements), encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 });
  const verdicts = JSON.parse(output) as ParserVerdict[];
  if (verdicts.length !== statements.length) throw new Error(`tidb-sql-check answered ${verdicts.length} verdicts for ${statements.length} statements`);
  return verdicts;
}

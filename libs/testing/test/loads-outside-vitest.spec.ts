import { spawnSync } from 'node:child_process';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = resolve(__dirname, '../../..');

/**
 * The benchmarks (scripts/*.ts, run by tsx outside vitest) import the fake LLM server and the
 * process helpers from @trellis/testing: its entry must not load vitest, which refuses to be
 * imported outside a test run. Only @trellis/testing/suites may.
 */
describe('@trellis/testing outside a test run', () => {
  it('loads in plain Node through tsx, as the benchmarks load it', () => {
    const script = join(__dirname, 'fixtures/import-as-a-bench.ts');
    const run = spawnSync(join(root, 'node_modules/.bin/tsx'), ['--tsconfig', 'tsconfig.lint.json', script], { cwd: root, encoding: 'utf8', timeout: 60_000 });
    expect(run.stderr).not.toMatch(/Vitest cannot be imported/);
    expect(run.status).toBe(0);
    expect(run.stdout.trim()).toBe('function function');
  });
});

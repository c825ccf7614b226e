import { spawnSync } from 'node:child_process';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = resolve(__dirname, '../../../..');

describe('WalCheckpointer', () => {
  it('keeps the process alive until it has stopped, though it never keeps it alive while running', () => {
    // A script that closes its store last (a bench, a CLI command) must see the close resolve,
    // not exit with the promise pending.
    const script = join(root, 'libs/storage/test/fixtures/stop-checkpointer-last.ts');
    const run = spawnSync(join(root, 'node_modules/.bin/tsx'), ['--tsconfig', 'tsconfig.lint.json', script], { cwd: root, encoding: 'utf8', timeout: 60_000 });
    expect(run.status).toBe(0);
    expect(run.stdout.trim()).toBe('stopped');
  });
});

import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { defineConfig } from 'vitest/config';

// Tests import workspace packages from source, not from their build output: each package's
// entry, and the subpaths its package.json exports (e.g. @trellis/testing/suites).
const alias: Array<{ find: RegExp; replacement: string }> = [];
for (const group of ['libs', 'services']) {
  for (const name of readdirSync(resolve(__dirname, group))) {
    const dir = resolve(__dirname, group, name);
    if (!existsSync(resolve(dir, 'src/index.ts'))) continue;
    const manifest = JSON.parse(readFileSync(resolve(dir, 'package.json'), 'utf8')) as { exports?: Record<string, string> };
    const entries = manifest.exports ?? { '.': './src/index.ts' };
    for (const [subpath, file] of Object.entries(entries)) {
      const specifier = `@trellis/${name}${subpath === '.' ? '' : subpath.slice(1)}`;
      alias.push({ find: new RegExp(`^${specifier.replace(/[/.]/g, '\\$&')}$`), replacement: resolve(dir, file) });
    }
  }
}

export default defineConfig({
  resolve: { alias },
  test: {
    include: ['{libs,services}/*/{src,test}/**/*.spec.ts', 'apps/*/test/**/*.spec.ts', 'deploy/test/**/*.spec.ts', 'tools/**/*.spec.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
    reporters: process.env.CI ? ['default'] : ['default'],
  },
});
